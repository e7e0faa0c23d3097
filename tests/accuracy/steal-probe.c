// SPDX-License-Identifier: GPL-2.0
/*
 * steal-probe: measures, per host CPU, the time the host lost to whatever
 * runs below it (the project machine is itself a KVM guest: its hypervisor
 * takes 2.6-10 ms from a CPU every few seconds, and /proc/stat's steal
 * column counts that only in 10 ms ticks, and late).
 *
 * One thread per CPU of its affinity mask, pinned there at SCHED_FIFO 50
 * (above QEMU's threads and the injector), wakes every PERIOD_US on an
 * absolute CLOCK_MONOTONIC deadline. A wake-up later than MIN_LATE_US means
 * that CPU ran nothing of this machine's between the previous wake-up and
 * this one for at least the lateness: the timer interrupt could not be
 * taken. Such a loss lies inside [previous wake-up, this wake-up], so that
 * interval is an upper bound of it, good to one period.
 *
 *   steal-probe PERIOD_US MIN_LATE_US
 *
 * Prints "steal-probe ready CPUS PERIOD_NS" once every thread runs, then a
 * line "late CPU PREV_WAKE WAKE LATE_NS" (CLOCK_REALTIME ns) per late
 * wake-up, and "steal-probe end WAKES LATE" on SIGTERM or SIGINT.
 * Exits 2 with a message naming the cause when it cannot run as described.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>

#define NSEC_PER_SEC 1000000000LL
#define PROBE_PRIO 50

struct probe {
	pthread_t thread;
	int cpu;
	int err;		/* positive errno of the set-up, or 0 */
	const char *what;	/* the set-up step that failed */
};

static long long period_ns, min_late_ns;
static atomic_int started;
static atomic_llong wakes, late_wakes;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static long long clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static int pin_and_raise(int cpu, const char **what)
{
	struct sched_param sp = { .sched_priority = PROBE_PRIO };
	cpu_set_t set;
	int err;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (err) {
		*what = "pthread_setaffinity_np";
		return err;
	}
	err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (err)
		*what = "pthread_setschedparam(SCHED_FIFO)";
	return err;
}

static void report_late(int cpu, long long prev_wake, long long wake, long long late)
{
	pthread_mutex_lock(&out_lock);
	printf("late %d %lld %lld %lld\n", cpu, prev_wake, wake, late);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

static void *probe_cpu(void *arg)
{
	struct probe *p = arg;
	long long due, prev_wake;

	p->err = pin_and_raise(p->cpu, &p->what);
	atomic_fetch_add(&started, 1);
	if (p->err)
		return NULL;
	due = clock_ns(CLOCK_MONOTONIC);
	prev_wake = clock_ns(CLOCK_REALTIME);
	for (;;) {
		struct timespec ts;
		long long late, wake;

		due += period_ns;
		ts.tv_sec = due / NSEC_PER_SEC;
		ts.tv_nsec = due % NSEC_PER_SEC;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		late = clock_ns(CLOCK_MONOTONIC) - due;
		wake = clock_ns(CLOCK_REALTIME);
		atomic_fetch_add(&wakes, 1);
		if (late >= min_late_ns) {
			atomic_fetch_add(&late_wakes, 1);
			report_late(p->cpu, prev_wake, wake, late);
		}
		/* After a long loss, the next deadline counts from now. */
		if (late > period_ns)
			due += late - late % period_ns;
		prev_wake = wake;
	}
	return NULL;
}

static int parse_us(const char *text, const char *name, long long *ns)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < 10 || v > 1000000) {
		fprintf(stderr, "steal-probe: %s '%s' is not a number of microseconds in 10..1000000\n",
			name, text);
		return -EINVAL;
	}
	*ns = v * 1000LL;
	return 0;
}

int main(int argc, char **argv)
{
	struct probe probes[CPU_SETSIZE];
	cpu_set_t mask;
	sigset_t stop;
	int n = 0, sig, i;

	if (argc != 3) {
		fprintf(stderr, "usage: steal-probe PERIOD_US MIN_LATE_US\n");
		return 2;
	}
	if (parse_us(argv[1], "PERIOD_US", &period_ns) ||
	    parse_us(argv[2], "MIN_LATE_US", &min_late_ns))
		return 2;
	/* A harness that dies must not leave a CPU hog at SCHED_FIFO 50. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		fprintf(stderr, "steal-probe: mlockall: %s (page faults may show as lateness)\n",
			strerror(errno));
	/* Threads inherit this: only the main thread takes the signals. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	if (sched_getaffinity(0, sizeof(mask), &mask)) {
		fprintf(stderr, "steal-probe: sched_getaffinity: %s\n", strerror(errno));
		return 2;
	}
	for (i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET(i, &mask))
			continue;
		probes[n] = (struct probe){ .cpu = i };
		if (pthread_create(&probes[n].thread, NULL, probe_cpu, &probes[n])) {
			fprintf(stderr, "steal-probe: cannot start the thread of cpu %d\n", i);
			return 2;
		}
		n++;
	}
	while (atomic_load(&started) < n)
		sched_yield();
	for (i = 0; i < n; i++) {
		if (probes[i].err) {
			fprintf(stderr, "steal-probe: cpu %d: %s: %s\n", probes[i].cpu,
				probes[i].what, strerror(probes[i].err));
			return 2;
		}
	}
	pthread_mutex_lock(&out_lock);
	printf("steal-probe ready %d %lld\n", n, period_ns);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
	sigwait(&stop, &sig);
	pthread_mutex_lock(&out_lock);
	printf("steal-probe end %lld %lld\n", (long long)atomic_load(&wakes),
	       (long long)atomic_load(&late_wakes));
	fflush(stdout);
	return 0;
}
