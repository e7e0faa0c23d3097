// Measurement tool (2026-12-05): two threads, pinned to CPU 0 and 1 at
// SCHED_OTHER, spin on CLOCK_MONOTONIC for N s. At each gap over 1 ms
// each prints the wall time since its previous record, its own CPU time
// (CLOCK_THREAD_CPUTIME_ID, which excludes steal on a kernel with
// PARAVIRT_TIME_ACCOUNTING) and its run-queue wait (schedstat): "missing"
// = wall - CPU time - run-queue wait is the time the host lost under it.
//   gcc -O2 -pthread -o thread-steal thread-steal.c && ./thread-steal 40
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
static long long ns(clockid_t c){struct timespec t;clock_gettime(c,&t);return t.tv_sec*1000000000LL+t.tv_nsec;}
static long long delay_of(pid_t tid){char p[64];long long a,b,c;snprintf(p,64,"/proc/self/task/%d/schedstat",tid);FILE*f=fopen(p,"r");if(!f)return -1;if(fscanf(f,"%lld %lld %lld",&a,&b,&c)!=3)b=-1;fclose(f);return b;}
static int secs;
static void *spin(void *arg){long cpu=(long)arg;cpu_set_t s;CPU_ZERO(&s);CPU_SET(cpu,&s);pthread_setaffinity_np(pthread_self(),sizeof s,&s);
 pid_t tid=syscall(SYS_gettid);long long start=ns(CLOCK_MONOTONIC),prev=start,pcpu=ns(CLOCK_THREAD_CPUTIME_ID),pd=delay_of(tid);
 long long lastrec=start,wall_tot=0,cpu_tot=0;
 for(;;){long long now=ns(CLOCK_MONOTONIC);if(now-prev>1000000){long long c=ns(CLOCK_THREAD_CPUTIME_ID);long long d=delay_of(tid);
   printf("cpu%ld rt=%lld t=%.3f gap=%.3f missing=%.3f (wall %.3f cpu %.3f rqdelay %.3f)\n",cpu,ns(CLOCK_REALTIME),(now-start)/1e9,(now-prev)/1e6,(now-lastrec-(c-pcpu)-(d-pd))/1e6,(now-lastrec)/1e6,(c-pcpu)/1e6,(d-pd)/1e6);
   lastrec=ns(CLOCK_MONOTONIC);pcpu=ns(CLOCK_THREAD_CPUTIME_ID);pd=delay_of(tid);prev=ns(CLOCK_MONOTONIC);continue;}
  prev=now;if(now-start>secs*1000000000LL)break;}
 long long c=ns(CLOCK_THREAD_CPUTIME_ID);(void)wall_tot;(void)cpu_tot;
 printf("cpu%ld end\n",cpu);(void)c;return NULL;}
int main(int argc,char**argv){secs=atoi(argv[1]);setvbuf(stdout,NULL,_IOLBF,0);pthread_t a,b;pthread_create(&a,0,spin,(void*)0L);pthread_create(&b,0,spin,(void*)1L);pthread_join(a,0);pthread_join(b,0);return 0;}
