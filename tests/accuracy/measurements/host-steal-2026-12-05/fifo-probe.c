/*
 * FIFO gap probe (2026-12-05): as gap-probe.c, at SCHED_FIFO (run with
 * chrt -f 50 on both CPUs at once): every gap over 2 ms with the run-queue
 * wait and the run time lag so far. Produced fifo-spin-cpu0/1.txt.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sched.h>
#include <fcntl.h>
#include <unistd.h>
static long long ns(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000LL+t.tv_nsec;}
static void ss(long long *ex,long long *rq){char b[128];int fd=open("/proc/thread-self/schedstat",O_RDONLY);int n=read(fd,b,127);b[n>0?n:0]=0;close(fd);sscanf(b,"%lld %lld",ex,rq);}
int main(int c,char**v){int cpu=atoi(v[1]);double secs=atof(v[2]);cpu_set_t s;CPU_ZERO(&s);CPU_SET(cpu,&s);sched_setaffinity(0,sizeof s,&s);
 long long t0=ns(),prev=t0,end=t0+(long long)(secs*1e9),ex0,rq0,ex,rq;ss(&ex0,&rq0);
 long long gaps=0,gapsum=0,big=0;
 while(1){long long t=ns();long long g=t-prev;if(g>200000){gaps++;gapsum+=g;long long e1,r1;ss(&e1,&r1);
   if(g>2000000){printf("gap %.3f ms at %.3f s (rq now %.3f ms total, exec lag %.3f)\n",g/1e6,(t-t0)/1e9,(r1-rq0)/1e6,((t-t0)-(e1-ex0))/1e6);big++;}
   t=ns();} prev=t; if(t>end)break;}
 ss(&ex,&rq);printf("cpu %d: %.1f s, gaps>0.2ms %lld sum %.1f ms, >2ms %lld; rq wait %.1f ms; wall-exec %.1f ms\n",cpu,(prev-t0)/1e9,gaps,gapsum/1e6,big,(rq-rq0)/1e6,((prev-t0)-(ex-ex0))/1e6);}
