// SPDX-License-Identifier: GPL-2.0
/*
 * sampler-test: proves that the samplers (src/sampler.c) and the width
 * (src/width.c) stay safe beside what runs on a real-time machine:
 *
 *   sampler-test held       a SCHED_FIFO busy loop holds CPU 1 with RT
 *                           throttling off: in every mode enable=0 returns
 *                           within one window, the windows the sampler
 *                           could not get onto CPU 1 are counted in
 *                           `skipped`, and CPU 0 is still sampled; a loop of
 *                           a lower priority than the samplers' is
 *                           preempted and its CPU sampled. First, with no
 *                           loop: round-robin's journey timeout never fires
 *                           for a thread that got there (a kprobe counts
 *                           it), so no window wakes a kworker elsewhere
 *   sampler-test hotplug    (3 CPUs, nohz_full=2) the same loop on CPU 2 while
 *                           round-robin (CPUs 0 and 2) visits it: CPU 1
 *                           goes offline and online again meanwhile, so no
 *                           sampler holds the hotplug lock for a CPU it
 *                           cannot reach
 *   sampler-test grace      times synchronize_rcu() (membarrier
 *                           MEMBARRIER_CMD_GLOBAL) on CPU 0 idle and while
 *                           each mode samples CPU 1 with 500 ms widths: no
 *                           grace period waits for a width (none takes half
 *                           a width); then, measured only, with every CPU
 *                           sampled
 *
 * The lab's dmesg check adds: no hung task (the hung-task timeout is set to
 * 3 s here, so a stop that waited for the loop would be reported).
 * Runs inside the QEMU guest only (tests/kernel/lab).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <linux/membarrier.h>

#include "lab.h"

/* A window long enough that "within one window" is not TCG noise. */
#define HELD_WIDTH 100000
#define HELD_WINDOW 500000

/* Up to 8 CPUs of `sampled` or `skipped`: "<cpu> <value>" lines. */
struct per_cpu {
	uint64_t v[8];
	char raw[256];
};

static void read_per_cpu(const char *file, struct per_cpu *pc)
{
	char *p, *end;
	unsigned long cpu;

	memset(pc, 0, sizeof(*pc));
	if (rd(file, pc->raw, sizeof(pc->raw)) < 0)
		return;
	for (p = pc->raw; *p; p = end) {
		cpu = strtoul(p, &end, 10);
		if (end == p)
			break;
		if (cpu < 8)
			pc->v[cpu] = strtoull(end, &end, 10);
		while (*end == '\n' || *end == ' ')
			end++;
	}
}

/* Writes @val to the file at @path: 0 or -errno. */
static int wr_path(const char *path, const char *val)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, val, strlen(val)) < 0)
		return -errno;
	return 0;
}

static void wr_proc(const char *path, const char *val)
{
	int r = wr_path(path, val);

	if (r)
		diag("cannot write %s to %s: %s", val, path, strerror(-r));
}

/*
 * A child that spins for @ms on @cpu at SCHED_FIFO @prio and exits: with RT
 * throttling off nothing of a lower priority runs there meanwhile. Returns
 * its pid, or -1.
 */
static pid_t hog(int cpu, int prio, unsigned int ms)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct sched_param sp = { .sched_priority = prio };
		cpu_set_t one;
		uint64_t t;

		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one) ||
		    sched_setscheduler(0, SCHED_FIFO, &sp))
			_exit(2);
		for (t = now_ns(); now_ns() - t < (uint64_t)ms * 1000000ull;)
			;
		_exit(0);
	}
	/* Let it take its CPU before anything is measured. */
	sleep_ms(100);
	return pid;
}

static bool hog_running(pid_t pid)
{
	return pid > 0 && waitpid(pid, NULL, WNOHANG) == 0;
}

static void hog_end(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/*
 * Reads the stream for @ms while the detector runs, then disables it
 * (*@took: how long `enable`=0 took, *@r its result) and reads to EOF.
 */
static void run_and_disable(struct stream_acc *a, unsigned int ms, uint64_t *took, int *r)
{
	_cleanup_close_ int fd = open_file("stream", O_RDONLY | O_NONBLOCK);
	uint64_t end;
	char b[65536];
	ssize_t n;

	wr("enable", "1");
	for (end = now_ns() + ms * 1000000ull; fd >= 0 && now_ns() < end;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		poll(&p, 1, 50);
		n = read(fd, b, sizeof(b));
		if (n > 0)
			acc_feed(a, b, (size_t)n);
	}
	end = now_ns();
	*r = wr("enable", "0");
	*took = now_ns() - end;
	while (fd >= 0 && (n = read(fd, b, sizeof(b))) != 0)
		if (n > 0)
			acc_feed(a, b, (size_t)n);
}

/*
 * @mode samples CPUs @cpus for 2 s while a FIFO @prio loop holds CPU 1.
 * @reached: the samplers preempt the loop (and sample CPU 1); else they
 * cannot, and CPU 1's windows are skipped.
 */
static void held_case(const char *mode, const char *cpus, int prio, bool reached)
{
	struct per_cpu sampled, skipped;
	struct stream_acc a = { 0 };
	uint64_t took;
	pid_t pid;
	int r;

	configure(mode, 1, mode[0] == 's' ? 10000 : HELD_WIDTH,
		  mode[0] == 's' ? 100000 : HELD_WINDOW);
	wr("cpus", cpus);
	pid = hog(1, prio, 8000);
	run_and_disable(&a, 2000, &took, &r);
	if (!ok(r == 0 && hog_running(pid) && took < HELD_WINDOW * 1000ull,
		"%s on CPUs %s, FIFO %d loop on CPU 1: enable=0 returns within one window (%" PRIu64 " ms)",
		mode, cpus, prio, took / 1000000))
		diag("write: %s; loop still running: %d", strerror(-r), hog_running(pid));
	hog_end(pid);
	read_per_cpu("sampled", &sampled);
	read_per_cpu("skipped", &skipped);
	/*
	 * stop-machine's stoppers preempt any loop, but its thread, which
	 * calls stop_machine(), can itself be kept waiting behind the loop:
	 * a window it then misses is skipped, and rightly counted.
	 */
	if (reached && strcmp(mode, "stop-machine") == 0) {
		if (!ok(sampled.v[1] > 0, "%s: a FIFO %d loop does not keep CPU 1 from being sampled",
			mode, prio))
			diag("sampled \"%s\", skipped \"%s\"", escs(sampled.raw), escs(skipped.raw));
		return;
	}
	if (reached) {
		if (!ok(sampled.v[1] > 0 && skipped.v[1] == 0,
			"%s: the samplers preempt a FIFO %d loop: CPU 1 sampled, nothing skipped",
			mode, prio))
			diag("sampled \"%s\", skipped \"%s\"", escs(sampled.raw), escs(skipped.raw));
		return;
	}
	if (!ok(skipped.v[1] >= 1 && sampled.v[1] == 0,
		"%s: CPU 1, held by a FIFO %d loop, is skipped and counted, never sampled", mode,
		prio))
		diag("sampled \"%s\", skipped \"%s\"", escs(sampled.raw), escs(skipped.raw));
	if (!ok(a.skip_records >= 1 && a.skipped_of[1] == skipped.v[1] && a.bad == 0 &&
		a.missing == 0,
		"%s: the stream's skip records add up to skipped (%" PRIu64 " windows of CPU 1)",
		mode, skipped.v[1]))
		diag("%" PRIu64 " skip records, %" PRIu64 " windows of CPU 1; %" PRIu64
		     " bad lines (\"%s\"), %" PRIu64 " seq missing",
		     a.skip_records, a.skipped_of[1], a.bad, a.first_bad, a.missing);
	if (strchr(cpus, '0') && !ok(sampled.v[0] > 0 && skipped.v[0] == 0,
				     "%s: CPU 0 is still sampled, with nothing skipped", mode))
		diag("sampled \"%s\", skipped \"%s\"", escs(sampled.raw), escs(skipped.raw));
}

#define TRACING "/sys/kernel/debug/tracing/"
#define REACH_PROBE "hwlat_lab_reach_timeout"

/*
 * Round-robin with 100 ms widths, twice the journey's bound (HWLAT_REACH_MS,
 * 50 ms), on CPUs no task holds, for 3 s: the journey's timeout
 * (hwlat_reach_timeout(), counted by a kprobe) must not run, unless a
 * window was skipped (a journey that really took too long). A timeout left
 * pending through the width fires as it ends and wakes a kworker on
 * another CPU: an IPI there in every window.
 */
static void test_reach_timeout(void)
{
	struct per_cpu sampled, skipped;
	struct stream_acc a = { 0 };
	unsigned long long hits = ~0ull;
	char prof[4096], *line;
	uint64_t took;
	int r;

	r = wr_path(TRACING "kprobe_events",
		    "p:" REACH_PROBE " hwlat_detector:hwlat_reach_timeout\n");
	if (!r)
		r = wr_path(TRACING "events/kprobes/" REACH_PROBE "/enable", "1");
	if (!ok(r == 0, "a kprobe on the module's hwlat_reach_timeout()")) {
		diag("kprobe_events: %s", strerror(-r));
		return;
	}
	configure("round-robin", 1, HELD_WIDTH, HELD_WINDOW);
	wr("cpus", "0-1");
	run_and_disable(&a, 3000, &took, &r);
	wr_path(TRACING "events/kprobes/" REACH_PROBE "/enable", "0");
	read_per_cpu("sampled", &sampled);
	read_per_cpu("skipped", &skipped);
	if (rd_path(TRACING "kprobe_profile", prof, sizeof(prof)) > 0) {
		line = strstr(prof, REACH_PROBE);
		if (line)
			hits = strtoull(line + strlen(REACH_PROBE), NULL, 10);
	}
	if (!ok(r == 0 && sampled.v[0] > 0 && sampled.v[1] > 0 &&
		(hits == 0 || (hits != ~0ull && skipped.v[0] + skipped.v[1] > 0)),
		"round-robin, 100 ms widths on free CPUs: the journey's timeout ran %llu times "
		"(0 unless a window was skipped)", hits))
		diag("sampled \"%s\", skipped \"%s\", kprobe_profile \"%s\"", escs(sampled.raw),
		     escs(skipped.raw), escs(prof));
	wr_path(TRACING "kprobe_events", "-:" REACH_PROBE "\n");
}

static void test_held(void)
{
	int below;

	if (cpus_online() < 2) {
		diag("one CPU only: a held CPU not tested");
		return;
	}
	test_reach_timeout();
	held_case("round-robin", "0-1", 99, false);
	held_case("per-cpu", "0-1", 99, false);
	held_case("none", "1", 99, false);
	/*
	 * A loop one below the samplers' priority (the module's parameter:
	 * 99, or 50 where the kernel lets modules choose no other) is
	 * preempted.
	 */
	below = (int)rdnum_path(PARAMS "priority") - 1;
	if (!ok(below >= 1, "the samplers run SCHED_FIFO (priority parameter %d)", below + 1))
		return;
	held_case("round-robin", "0-1", below, true);
	held_case("per-cpu", "0-1", below, true);
	/* The CPU stoppers run the width, whatever holds the CPU. */
	held_case("stop-machine", "0-1", 99, true);
}

/* Offlining and onlining @cpu: 0 or -errno, the time in *ns. */
static int cpu_cycle(int cpu, uint64_t *ns)
{
	char path[64];
	uint64_t t = now_ns();
	int r;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	r = wr_path(path, "0");
	if (!r)
		r = wr_path(path, "1");
	*ns = now_ns() - t;
	return r;
}

/*
 * Round-robin over CPUs 0 and 2 while a FIFO 99 loop holds CPU 2: every
 * other window the sampler, sent to CPU 2, cannot get there and gives up
 * (after 50 ms). CPU 1 goes offline and online in those windows, which
 * takes the hotplug lock for writing: a sampler that held it for reading
 * from its move to the end of its width (the module before) never let go,
 * and blocked that and every cpus_read_lock() of the machine until the
 * loop ended.
 */
static void test_hotplug(void)
{
	struct per_cpu skipped;
	uint64_t took = 0, t0;
	int r = 0, i;
	pid_t pid;

	if (cpus_online() < 3) {
		ok(false, "hotplug: the guest has 3 CPUs (it has %d)", cpus_online());
		return;
	}
	configure("round-robin", 1, HELD_WIDTH, HELD_WINDOW);
	wr("cpus", "0,2");
	pid = hog(2, 99, 8000);
	r = cpu_cycle(1, &took);
	diag("CPU 1 offline and online, the loop on CPU 2, detector off: %s, %" PRIu64 " ms",
	     r ? strerror(-r) : "ok", took / 1000000);
	took = 0;
	wr("enable", "1");
	t0 = now_ns();
	for (i = 0; i < 3 && !r; i++) {
		uint64_t at = t0 + (600 + 1000ull * i) * 1000000ull, ns;

		if (now_ns() < at)
			sleep_ms((unsigned int)((at - now_ns()) / 1000000));
		r = cpu_cycle(1, &ns);
		diag("cycle %d at %" PRIu64 " ms after enable=1: %" PRIu64 " ms", i,
		     (now_ns() - t0 - ns) / 1000000, ns / 1000000);
		if (ns > took)
			took = ns;
	}
	/*
	 * Held up, a cycle would end with the loop, 5 s later; unheld, it
	 * takes what it takes with the detector off (a few hundred ms here).
	 */
	if (!ok(r == 0 && hog_running(pid) && took < 2000000000ull,
		"round-robin, FIFO 99 loop on CPU 2: CPU 1 goes offline and online 3 times while the sampler visits CPU 2, each within 2 s (slowest %" PRIu64 " ms)",
		took / 1000000))
		diag("cycle: %s; loop still running: %d", strerror(-r), hog_running(pid));
	wr("enable", "0");
	hog_end(pid);
	read_per_cpu("skipped", &skipped);
	if (!ok(skipped.v[2] >= 2, "round-robin: CPU 2's windows are skipped and counted"))
		diag("skipped \"%s\"", escs(skipped.raw));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#define GRACE_CALLS 40

/* @n membarrier(GLOBAL) calls: their median and largest time, ns. */
/*
 * GRACE_CALLS membarrier(GLOBAL) calls, 37 ms apart: their median and
 * largest time, ns, and how many took @long_ns or more.
 */
static int grace_times(uint64_t long_ns, uint64_t *median, uint64_t *max, int *n_long)
{
	uint64_t t[GRACE_CALLS];

	for (int i = 0; i < GRACE_CALLS; i++) {
		uint64_t t0 = now_ns();

		if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) < 0)
			return -errno;
		t[i] = now_ns() - t0;
		sleep_ms(37);
	}
	qsort(t, GRACE_CALLS, sizeof(t[0]), cmp_u64);
	*median = t[GRACE_CALLS / 2];
	*max = t[GRACE_CALLS - 1];
	*n_long = 0;
	for (int i = 0; i < GRACE_CALLS; i++)
		*n_long += t[i] >= long_ns;
	return 0;
}

/*
 * Prints "grace <mode> <cpus> median <us> max <us>" (bench/grace-periods
 * reads these lines; "-pinned" after the mode: RCU's kthread kept on CPU 0).
 * The caller runs on CPU 0. With @check only CPU 1 is sampled and RCU's
 * kthread is on CPU 0: a grace period then waits for nothing but CPU 1's
 * quiescent states, and none may wait for a width. With every CPU sampled
 * the caller's own CPU freezes in its widths too, and with it the callbacks
 * that end its wait: that is measured, not checked.
 */
static void grace_case(const char *mode, const char *cpus, long long width, long long window,
		       bool check)
{
	bool idle = !mode || strcmp(mode, "idle-pinned") == 0;
	uint64_t median = 0, max = 0;
	int r, n_long = 0;

	if (!idle) {
		configure(mode, 10, width, window);
		wr("cpus", cpus);
		wr("enable", "1");
		sleep_ms(300);
	}
	/*
	 * A call that waits for a width waits for most of it: the first call
	 * after a width began starts within one call and sleep of its start.
	 * Four fifths of a width leaves room for a host that is not quiet.
	 */
	r = grace_times((uint64_t)width * 800ull, &median, &max, &n_long);
	if (!idle)
		wr("enable", "0");
	diag("grace %s%s %s median %" PRIu64 " max %" PRIu64, mode ? mode : "idle",
	     check ? "-pinned" : "", cpus ? cpus : "-", median / 1000, max / 1000);
	if (idle) {
		if (r)
			ok(false, "membarrier(MEMBARRIER_CMD_GLOBAL) works idle (%s)", strerror(-r));
		return;
	}
	/*
	 * The module before made a grace period wait for every width of CPU
	 * 1: the 40 calls span two or more widths, so two or more calls
	 * waited. One such call is what a host that is not quiet, or RCU's
	 * own work landing on CPU 1, can still do (seen once on 7.2 beside
	 * another guest).
	 */
	if (check)
		ok(r == 0 && n_long <= 1,
		   "%s on CPU %s, %lld us widths: grace periods do not wait for the widths "
		   "(%d of %d calls took 4/5 of a width; slowest %" PRIu64 " ms, median %" PRIu64
		   " ms)",
		   mode, cpus, width, n_long, GRACE_CALLS, max / 1000000, median / 1000000);
}

/*
 * Moves RCU's grace-period kthread (rcu_preempt, or rcu_sched without
 * preemptible RCU) to CPU 0, as real-time setups keep kthreads on their
 * housekeeping CPUs. Woken onto a CPU in a width, it would wait there for
 * the width like any task (a wake-up across caches is an IPI that CPU takes
 * only when its interrupts are back on): that is measured first, unpinned.
 * Returns how many it moved.
 */
static int rcu_gp_kthread_to_cpu0(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	cpu_set_t zero;
	int moved = 0;

	CPU_ZERO(&zero);
	CPU_SET(0, &zero);
	while (d && (e = readdir(d))) {
		char p[300], comm[64];

		snprintf(p, sizeof(p), "/proc/%s/comm", e->d_name);
		if (rd_path(p, comm, sizeof(comm)) <= 0)
			continue;
		if ((strcmp(comm, "rcu_preempt\n") == 0 || strcmp(comm, "rcu_sched\n") == 0) &&
		    sched_setaffinity(atoi(e->d_name), sizeof(zero), &zero) == 0)
			moved++;
	}
	if (d)
		closedir(d);
	return moved;
}

static void test_grace(void)
{
	const char *const modes[] = { "round-robin", "per-cpu", "none" };

	if (cpus_online() < 2) {
		ok(false, "grace: the guest has 2 CPUs");
		return;
	}
	grace_case(NULL, NULL, 0, 0, false);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		grace_case(modes[i], "1", 500000, 1000000, false);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		grace_case(modes[i], "0-1", 500000, 1000000, false);
	/* At its bounds: 10 ms widths, 10 % of the window. */
	grace_case("stop-machine", "0-1", 10000, 100000, false);
	if (!ok(rcu_gp_kthread_to_cpu0() == 1, "RCU's grace-period kthread moves to CPU 0"))
		return;
	grace_case("idle-pinned", NULL, 0, 0, false);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		grace_case(modes[i], "1", 500000, 1000000, true);
}

int main(int argc, char **argv)
{
	cpu_set_t zero;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/*
	 * The test itself stays off the CPUs its loops hold: preempted there
	 * while it takes a CPU offline, it would hold up the hotplug itself.
	 */
	CPU_ZERO(&zero);
	CPU_SET(0, &zero);
	if (sched_setaffinity(0, sizeof(zero), &zero))
		diag("cannot pin the test to CPU 0: %s", strerror(errno));
	if (argc != 2) {
		fprintf(stderr, "usage: sampler-test held|hotplug|grace\n");
		return 2;
	}
	wr_proc("/proc/sys/kernel/sched_rt_runtime_us", "-1");
	wr_proc("/proc/sys/kernel/hung_task_timeout_secs", "3");
	diag("sampler-test %s on %d CPUs", argv[1], cpus_online());
	if (strcmp(argv[1], "held") == 0) {
		test_held();
	} else if (strcmp(argv[1], "hotplug") == 0) {
		test_hotplug();
	} else if (strcmp(argv[1], "grace") == 0) {
		test_grace();
	} else {
		fprintf(stderr, "sampler-test: unknown test '%s' (held, hotplug or grace)\n",
			argv[1]);
		return 2;
	}
	return tap_done();
}
