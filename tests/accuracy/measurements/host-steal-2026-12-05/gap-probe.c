/*
 * Host-side gap probe (2026-12-05): spins on one host CPU
 * for N seconds reading CLOCK_MONOTONIC, and for every gap over 0.1 ms reads
 * its own /proc/thread-self/schedstat. A gap the run-queue wait did not grow
 * by at least half of is time the scheduler did not take: steal by the
 * hypervisor this machine runs on. Build: gcc -O2 -o gap-probe gap-probe.c;
 * run: ./gap-probe CPU SECONDS (both CPUs at once, nice -5, nothing else).
 * This is the exact program that produced spin-cpu0.txt and spin-cpu1.txt.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sched.h>
#include <fcntl.h>
#include <unistd.h>
static long long ns(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000LL+t.tv_nsec;}
static int fd;
static void ss(long long *ex,long long *rq){char b[128];int n=pread(fd,b,127,0);b[n>0?n:0]=0;sscanf(b,"%lld %lld",ex,rq);}
int main(int c,char**v){int cpu=atoi(v[1]);double secs=atof(v[2]);cpu_set_t s;CPU_ZERO(&s);CPU_SET(cpu,&s);sched_setaffinity(0,sizeof s,&s);
 fd=open("/proc/thread-self/schedstat",O_RDONLY);
 long long t0=ns(),prev=t0,end=t0+(long long)(secs*1e9),ex,rq,pex,prq;ss(&pex,&prq);
 int hist[8]={0};double steal=0;
 while(1){long long t=ns();long long g=t-prev;if(g>100000){ss(&ex,&rq);long long drq=rq-prq;
   if(drq<g/2){steal+=g; int b=g<250000?0:g<500000?1:g<1000000?2:g<2000000?3:g<5000000?4:g<10000000?5:g<50000000?6:7;hist[b]++;
     if(g>2000000)printf("unexplained gap %.3f ms at %.3f s (rq +%.3f)\n",g/1e6,(t-t0)/1e9,drq/1e6);}
   prq=rq;pex=ex;t=ns();} prev=t; if(t>end)break;}
 printf("cpu %d: gaps>0.1ms without rq wait: <.25ms %d, <.5 %d, <1 %d, <2 %d, <5 %d, <10 %d, <50 %d, more %d; total %.1f ms in %.0f s\n",cpu,hist[0],hist[1],hist[2],hist[3],hist[4],hist[5],hist[6],hist[7],steal/1e6,secs);}
