// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * acc-guest: the guest half of the accuracy suite. Built with gcc -static on
 * the host and run as root by the initramfs /init of a QEMU guest. It drives
 * <debugfs>/hwlat_detector/ and prints one tagged line per fact on stdout, so
 * that the host (tests/accuracy/accuracy.py) can match what the detector saw
 * against the faults it injected:
 *
 *   HWLAT-CONFIG <file>=<value read back> ...
 *   HWLAT-NMI <when> <NMI count of cpu0> <cpu1> ...       (/proc/interrupts)
 *   HWLAT-MSR <when> <MSR_SMI_COUNT of cpu0> <cpu1> ...   (if /dev/cpu/N/msr)
 *   HWLAT-MARK sampling <mode> <CLOCK_REALTIME ns>        (detector enabled)
 *   HWLAT-SAMPLE <stream line, verbatim>
 *   HWLAT-SMI <k> <CLOCK_REALTIME ns> <cpu> [frozen_before_us=<us> frozen_after_us=<us>
 *             cost_ns=<ns>]      (one raised SMI; gate=: see below; -1: LOC moved, cost: outb)
 *   HWLAT-SMI-COST <k> <ns>                               (smi-control: one outb's time)
 *   HWLAT-SMI-CONTROL raised=<n> cpu=<cpu>                (smi-control done)
 *   HWLAT-FREEZE <CLOCK_REALTIME ns from> <to>            (freeze=1: this CPU was held)
 *   HWLAT-IRQ <when> <tag> <count of cpu0> <cpu1> ...     (idle=S: CAL, RES lines)
 *   HWLAT-STATS count=<n> max=<us> dropped=<n>
 *   HWLAT-TRACE-CLOCK <trace_clock in use>               (sample ... trace)
 *   HWLAT-TRACE-CAL <k> <CLOCK_REALTIME ns before> <after> (marker "hwlat-cal <k>")
 *   HWLAT-TRACE <tracefs trace line, verbatim>
 *   HWLAT-TRACE-END lines=<n> overrun=<events lost>
 *   HWLAT-TRACER <trace_pipe line of the kernel's hwlat tracer, verbatim> (tracer ...)
 *   HWLAT-NOTE <why tracing is unavailable>
 *   HWLAT-MARK done <stream lines>
 *   HWLAT-ERROR <what failed and why>                     (then exit 1)
 *
 * Usage: acc-guest sample <mode> <seconds> [<smis to raise>] [trace] [OPTION=VALUE...]
 *        acc-guest tracer <mode> <seconds> [trace] (the kernel's hwlat tracer, see
 *                                        tracer_sample(); HWLAT-TRACER <trace_pipe line>)
 *        acc-guest selfcheck <seconds>   (user-space spinner, no module)
 *        acc-guest smi-control <n> <cpu> (n SMIs from cpu, detector disabled)
 *        acc-guest nmi                   (prints the NMI line only)
 *
 * Options of "sample" (the SMI and IPI tests):
 *   threshold=US   detector threshold (default 20000)
 *   cpus=LIST      the detector's cpus (default: untouched, all CPUs)
 *   gate=R,W,N     raise N SMIs from CPU R, each while CPU W is inside a width:
 *                  its local timer count (LOC) stood still for 20 ms before
 *                  the SMI (and, unless desync=, R saw it stop <= 300 ms
 *                  earlier), and is checked for 20 ms after it (guest booted
 *                  with nohz=off, so a CPU with interrupts on ticks every
 *                  1/HZ s, idle or not, and only a width holds them off)
 *   desync=C       run on CPU C; at its first chance 0.5 s or more after
 *                  enabling (hwlatd/C's first sleep), spin there at
 *                  SCHED_FIFO for 0.5 s: hwlatd/C (SCHED_OTHER) waits, and
 *                  per-cpu mode's samplers then run half a window out of phase
 *                  (else a raiser on C runs only while every sampler sleeps);
 *                  again whenever two free slots of C in a row raised no SMI
 *   freeze=C       run on CPU C and print a HWLAT-FREEZE line as soon as it
 *                  was held >= 400 ms (a stop-machine width): the host raises
 *                  SMIs inside the next width (no CPU of the guest can run then)
 *   idle=S         before enabling, count IPIs (CAL, RES lines) over S s with
 *                  the detector disabled, then over the sampling from 2 s after
 *                  enabling to the end (run on the last CPU)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

/* Quoted, it is found relative to this file: tests/accuracy/run needs no -I. */
#include "../kernel/guest/nmi-count.h"

#define DIR "/sys/kernel/debug/hwlat_detector/"
#define APM_CNT_PORT 0xb2
#define MSR_SMI_COUNT 0x34
#define MAX_CPUS 64

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;

	fputs("HWLAT-ERROR ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	exit(1);
}

static void closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

#define _cleanup_close_ __attribute__((cleanup(closep)))

static int64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Writes a setting; returns 0 or -errno (the detector's verdict). */
static int put(const char *file, const char *value)
{
	_cleanup_close_ int fd = open(file, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(value);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, value, len);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/* Writes value to <dir><name>; a failure ends the program. */
static void set_in(const char *dir, const char *name, const char *value)
{
	char path[256];
	int r;

	snprintf(path, sizeof(path), "%s%s", dir, name);
	r = put(path, value);
	if (r < 0)
		fail("writing '%s' to %s: %s", value, path, strerror(-r));
}

/* Reads the small file <dir><name> into buf without its trailing newline. */
static void get_in(const char *dir, const char *name, char *buf, size_t size)
{
	char path[256];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "%s%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fail("opening %s: %s", path, strerror(errno));
	n = read(fd, buf, size - 1);
	if (n < 0)
		fail("reading %s: %s", path, strerror(errno));
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* The module's debugfs files. */
static void set(const char *name, const char *value)
{
	set_in(DIR, name, value);
}

static void get(const char *name, char *buf, size_t size)
{
	get_in(DIR, name, buf, size);
}

/* The counts of a /proc/interrupts line (tag "NMI:", "LOC:" ...); fails if none. */
static int irq_counts(const char *tag, unsigned long long *v)
{
	int n = irq_line_counts(tag, v, MAX_CPUS);

	if (n == -ENODATA)
		fail("/proc/interrupts has no %s line", tag);
	if (n < 0)
		fail("reading the %s line of /proc/interrupts: %s", tag, strerror(-n));
	return n;
}

/* "<prefix> n0 n1 ...": the counts of one /proc/interrupts line. */
static void print_irq_line(const char *prefix, const char *tag)
{
	unsigned long long v[MAX_CPUS];
	int n = irq_counts(tag, v);

	printf("%s", prefix);
	for (int i = 0; i < n; i++)
		printf(" %llu", v[i]);
	putchar('\n');
}

/* "HWLAT-NMI <when> n0 n1 ...": the NMI line of /proc/interrupts. */
static void print_nmis(const char *when)
{
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "HWLAT-NMI %s", when);
	print_irq_line(prefix, "NMI:");
}

/* "HWLAT-IRQ <when> CAL ..." and "... RES ...": the IPIs each CPU took. */
static void print_ipis(const char *when)
{
	static const char *const tags[] = { "CAL", "RES" };
	char prefix[64], tag[8];

	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
		snprintf(prefix, sizeof(prefix), "HWLAT-IRQ %s %s", when, tags[i]);
		snprintf(tag, sizeof(tag), "%s:", tags[i]);
		print_irq_line(prefix, tag);
	}
	fflush(stdout);
}

/* "HWLAT-MSR <when> v0 v1 ...": MSR_SMI_COUNT per CPU, when readable. */
static void print_smi_msrs(const char *when)
{
	char path[64], out[MAX_CPUS * 24] = "";
	size_t len = 0;
	int cpu;

	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		_cleanup_close_ int fd = -1;
		uint64_t v;

		snprintf(path, sizeof(path), "/dev/cpu/%d/msr", cpu);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			break;
		if (pread(fd, &v, sizeof(v), MSR_SMI_COUNT) != sizeof(v))
			return; /* no such MSR (AMD model): no ground truth */
		len += snprintf(out + len, sizeof(out) - len, " %llu",
				(unsigned long long)(uint32_t)v);
	}
	if (cpu > 0)
		printf("HWLAT-MSR %s%s\n", when, out);
}

static void pin(long cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET((int)cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		fail("sched_setaffinity(cpu %ld): %s", cpu, strerror(errno));
}

/*
 * Ten "HWLAT-CLOCK <CLOCK_REALTIME ns>" lines 20 ms apart while the guest is
 * otherwise idle: the host takes the largest (guest - host arrival) as the
 * guest-host clock offset (a line can arrive late, never early).
 */
static void clock_marks(void)
{
	for (int i = 0; i < 10; i++) {
		printf("HWLAT-CLOCK %lld\n", (long long)now_ns(CLOCK_REALTIME));
		fflush(stdout);
		usleep(20000);
	}
}

/*
 * Harness self-check without the module: a user-space spinner that reports
 * windows in the stream line format (width 900 ms, window 1 s, threshold
 * 20 ms, cpu = where it ran, no NMI/SMI attribution). It proves the host
 * half (injection, clock offset, matching) on a real guest, so that a failing
 * module test cannot be blamed on the harness.
 */
static int selfcheck(long seconds)
{
	const int64_t width = 900000000, window = 1000000000, thresh = 20000000;
	int64_t end, seq = 0, printed = 0;

	clock_marks();
	printf("HWLAT-CONFIG threshold=20000 width=900000 window=1000000 mode=user-spinner\n");
	printf("HWLAT-MARK sampling user-spinner %lld\n", (long long)now_ns(CLOCK_REALTIME));
	end = now_ns(CLOCK_MONOTONIC) + seconds * 1000000000LL;
	while (now_ns(CLOCK_MONOTONIC) < end) {
		int64_t start = now_ns(CLOCK_MONOTONIC), last = start, inner = 0, outer = 0;
		int64_t first_ts = 0, count = 0, t1, t2;

		do {
			t1 = now_ns(CLOCK_MONOTONIC);
			t2 = now_ns(CLOCK_MONOTONIC);
			if (t1 - last > outer)
				outer = t1 - last;
			if (t2 - t1 > inner)
				inner = t2 - t1;
			if (t2 - t1 > thresh || t1 - last > thresh) {
				if (!count++)
					first_ts = now_ns(CLOCK_REALTIME);
			}
			last = t2;
		} while (t2 - start < width);
		seq++;
		if (count && ++printed)
			printf("HWLAT-SAMPLE %lld %d %lld.%09lld %lld %lld %lld 0 0 0\n",
			       (long long)seq, sched_getcpu(), (long long)(first_ts / 1000000000),
			       (long long)(first_ts % 1000000000), (long long)inner,
			       (long long)outer, (long long)count);
		fflush(stdout);
		usleep((useconds_t)((window - width) / 1000));
	}
	printf("HWLAT-STATS count=0 max=0 dropped=0 raised_smis=0\n");
	printf("HWLAT-MARK done %lld\n", (long long)printed);
	return 0;
}

/*
 * Where the sampler threads ran (stall and NMI tests, "sample ... trace"):
 * tracefs sched:sched_switch, filtered in the kernel to switches from or to the
 * sampler threads (hwlatd, hwlatd/N; in stop-machine mode the width runs in
 * the CPU stopper threads migration/N), so that the host can tell a stall or
 * NMI that began inside a width from one that began while the sampler slept.
 * The trace clock is tai when the kernel has it (the same as CLOCK_REALTIME
 * unless someone set a TAI offset, which nobody does in the guest), else
 * mono or global; either way "hwlat-cal <k>" markers written between two
 * CLOCK_REALTIME reads let the host measure the relation instead of
 * assuming it. Nothing else is traced: one event, a kernel-side filter.
 */
static char trace_dir[64];

/* Writes value to <trace_dir>/file; returns 0 or -errno. */
static int trace_put(const char *file, const char *value)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", trace_dir, file);
	return put(path, value);
}

static void trace_cal(int k)
{
	char path[128], text[32];
	_cleanup_close_ int fd = -1;
	int64_t before, after;
	ssize_t n;
	int len;

	snprintf(path, sizeof(path), "%s/trace_marker", trace_dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		printf("HWLAT-NOTE trace calibration: opening %s: %s\n", path, strerror(errno));
		return;
	}
	len = snprintf(text, sizeof(text), "hwlat-cal %d", k);
	before = now_ns(CLOCK_REALTIME);
	n = write(fd, text, (size_t)len);
	after = now_ns(CLOCK_REALTIME);
	if (n != len) {
		printf("HWLAT-NOTE trace calibration: writing %s: %s\n", path,
		       n < 0 ? strerror(errno) : "short write");
		return;
	}
	printf("HWLAT-TRACE-CAL %d %lld %lld\n", k, (long long)before, (long long)after);
}

/* Undoes trace_start() (whatever part of it was done). */
static void trace_off(void)
{
	trace_put("tracing_on", "0");
	trace_put("events/sched/sched_switch/enable", "0");
	trace_put("events/sched/sched_switch/filter", "0");
}

static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

/* Sets trace_dir to the first writable tracefs (mounting it); 0 if none. */
static int find_tracefs(void)
{
	char path[128];

	trace_dir[0] = '\0';
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && !trace_dir[0]; i++) {
		snprintf(path, sizeof(path), "%s/trace_clock", dirs[i]);
		if (access(path, W_OK) < 0 && i == 0)
			mount("tracefs", dirs[i], "tracefs", 0, NULL);
		if (access(path, W_OK) == 0)
			snprintf(trace_dir, sizeof(trace_dir), "%s", dirs[i]);
	}
	return trace_dir[0] != '\0';
}

/* Returns 1 when tracing runs, 0 (with a HWLAT-NOTE saying why) if not. */
static int trace_start(const char *mode)
{
	static const char *const clocks[] = { "tai", "mono", "global" };
	const char *clock = NULL;
	char path[128], filter[256];
	int r;

	if (!find_tracefs()) {
		printf("HWLAT-NOTE tracing unavailable: no tracefs at %s or %s\n", dirs[0],
		       dirs[1]);
		return 0;
	}
	if (strcmp(mode, "stop-machine") == 0)
		snprintf(filter, sizeof(filter),
			 "prev_comm ~ \"migration/*\" || next_comm ~ \"migration/*\"");
	else
		snprintf(filter, sizeof(filter),
			 "prev_comm ~ \"hwlatd*\" || next_comm ~ \"hwlatd*\"");
	r = trace_put("tracing_on", "0");
	if (r == 0)
		r = trace_put("buffer_size_kb", "1024");
	if (r < 0) {
		printf("HWLAT-NOTE tracing unavailable: %s/tracing_on or buffer_size_kb: %s\n",
		       trace_dir, strerror(-r));
		return 0;
	}
	for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]) && !clock; i++)
		if (trace_put("trace_clock", clocks[i]) == 0)
			clock = clocks[i];
	if (!clock) {
		printf("HWLAT-NOTE tracing unavailable: %s/trace_clock accepts none of tai, mono, "
		       "global\n", trace_dir);
		return 0;
	}
	/* O_TRUNC on "trace" empties the ring buffer. */
	snprintf(path, sizeof(path), "%s/trace", trace_dir);
	{
		_cleanup_close_ int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);

		r = fd < 0 ? -errno : 0;
	}
	if (r == 0)
		r = trace_put("events/sched/sched_switch/filter", filter);
	if (r == 0)
		r = trace_put("events/sched/sched_switch/enable", "1");
	if (r == 0)
		r = trace_put("tracing_on", "1");
	if (r < 0) {
		trace_off();
		printf("HWLAT-NOTE tracing unavailable: setting up sched_switch with filter '%s' "
		       "in %s: %s\n", filter, trace_dir, strerror(-r));
		return 0;
	}
	printf("HWLAT-TRACE-CLOCK %s\n", clock);
	for (int k = 0; k < 5; k++)
		trace_cal(k);
	fflush(stdout);
	return 1;
}

/* Calibrates again, stops tracing and prints the trace. */
static void trace_stop(void)
{
	char path[128], line[1024];
	unsigned long long overrun = 0, v;
	unsigned lines = 0;
	FILE *f;

	for (int k = 5; k < 10; k++)
		trace_cal(k);
	trace_off();
	for (int cpu = 0; cpu < MAX_CPUS; cpu++) {
		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/stats", trace_dir, cpu);
		f = fopen(path, "re");
		if (!f)
			break;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "overrun: %llu", &v) == 1)
				overrun += v;
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/trace", trace_dir);
	f = fopen(path, "re");
	if (!f) {
		printf("HWLAT-NOTE tracing lost: opening %s: %s\n", path, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		line[strcspn(line, "\n")] = '\0';
		printf("HWLAT-TRACE %s\n", line);
		lines++;
	}
	fclose(f);
	printf("HWLAT-TRACE-END lines=%u overrun=%llu\n", lines, overrun);
	/* Empty the buffer again: nothing traced stays behind. */
	{
		_cleanup_close_ int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	}
	fflush(stdout);
}

/* Raises one SMI through the APM control port; returns when SMM has left. */
static void apm_smi(void)
{
	outb(0, APM_CNT_PORT);
}

static void raise_smi(int k)
{
	apm_smi();
	printf("HWLAT-SMI %d %lld %d\n", k, (long long)now_ns(CLOCK_REALTIME), sched_getcpu());
}

/* Prints every complete line of buf as HWLAT-SAMPLE; keeps the rest. */
static size_t emit_lines(char *buf, size_t len, unsigned *nlines)
{
	char *start = buf, *nl;

	while ((nl = memchr(start, '\n', len - (size_t)(start - buf)))) {
		*nl = '\0';
		printf("HWLAT-SAMPLE %s\n", start);
		(*nlines)++;
		start = nl + 1;
	}
	len -= (size_t)(start - buf);
	memmove(buf, start, len);
	return len;
}

/* What "sample" does besides reading the stream (see the usage above). */
struct sample_opts {
	const char *mode;
	long seconds;
	long smis;		/* raised from CPU 0 at fixed times (SeaBIOS test) */
	int trace;
	const char *threshold;	/* us, as text */
	const char *cpus;	/* NULL: untouched */
	long gate_raise, gate_watch, gate_n;	/* gate_n 0: no gate */
	long desync;		/* -1: none */
	long freeze;		/* -1: none */
	long idle;		/* 0: no IPI count */
};

#define GATE_HOLD_NS 20000000LL	/* LOC still this long before and after an SMI */
#define GATE_FRESH_NS 10000000LL	/* a look this recent dates a width's start */
#define GATE_LATEST_NS 300000000LL	/* raise this soon after it, at the latest */
#define FREEZE_NS 400000000LL	/* a pause this long is a stop-machine width */

/*
 * Raises SMIs from one CPU while another is inside a width. A width is the
 * only thing that keeps a CPU's interrupts off for long: with nohz=off the
 * local timer ticks every 1/HZ s on a CPU with interrupts on, busy or idle,
 * so a LOC count that stands still for 20 ms on the watched CPU means it has
 * been inside one width the whole time (the sampler sleeps 100 ms with
 * interrupts on between widths, far more than a tick). The SMI is raised
 * then, and the count must stand still 20 ms more: the SMI lies 20 ms or
 * more from both ends of that width. One SMI per width.
 */
struct gate {
	long raised;
	int posting;			/* an SMI was raised; checking the 20 ms after */
	unsigned long long loc;		/* watched CPU's LOC count ... */
	int64_t since;			/* ... unchanged since then (CLOCK_MONOTONIC) */
	unsigned long long used;	/* the LOC count of the last width used */
	int64_t seen;			/* the previous look (CLOCK_MONOTONIC) */
	int fresh;			/* the look before `since` was <= 10 ms earlier */
	int64_t raised_mono, raised_real, cost;
};

static void gate_step(struct gate *g, const struct sample_opts *o)
{
	unsigned long long v[MAX_CPUS];
	int64_t now;
	int n;

	if (g->raised >= o->gate_n && !g->posting)
		return;
	n = irq_counts("LOC:", v);
	now = now_ns(CLOCK_MONOTONIC);
	if (o->gate_watch >= n)
		fail("gate: no CPU %ld in the LOC line (%d CPUs)", o->gate_watch, n);
	if (g->posting) {
		if (v[o->gate_watch] != g->loc || now - g->raised_mono >= GATE_HOLD_NS) {
			int held = v[o->gate_watch] == g->loc;

			printf("HWLAT-SMI %ld %lld %d frozen_before_us=%lld frozen_after_us=%lld "
			       "cost_ns=%lld\n", g->raised - 1, (long long)g->raised_real,
			       sched_getcpu(), (long long)(g->raised_mono - g->since) / 1000,
			       held ? (long long)(now - g->raised_mono) / 1000 : -1LL,
			       (long long)g->cost);
			fflush(stdout);
			g->posting = 0;
			g->used = g->loc;
		}
		return;
	}
	if (v[o->gate_watch] != g->loc) {
		g->loc = v[o->gate_watch];
		g->fresh = now - g->seen <= GATE_FRESH_NS;
		g->since = now;
		g->seen = now;
		return;
	}
	g->seen = now;
	if (g->loc == g->used || now - g->since < GATE_HOLD_NS)
		return;
	/*
	 * Where this CPU saw the width begin (it looked 10 ms or less before),
	 * the width has >= 500 ms left: raise only in its first 300 ms. Where
	 * it could not (desync: it runs only while its own sampler sleeps,
	 * mid-way through the watched CPU's width), the check after the SMI
	 * stands alone.
	 */
	if (o->desync < 0 && (!g->fresh || now - g->since > GATE_LATEST_NS))
		return;
	g->raised_mono = now_ns(CLOCK_MONOTONIC);
	g->raised_real = now_ns(CLOCK_REALTIME);
	apm_smi();
	g->cost = now_ns(CLOCK_MONOTONIC) - g->raised_mono;
	g->raised++;
	g->posting = 1;
}

/* Holds the current CPU for @ns at SCHED_FIFO 1, then returns to SCHED_OTHER. */
static void hold_cpu(int64_t ns)
{
	struct sched_param fifo = { .sched_priority = 1 }, other = { .sched_priority = 0 };
	int64_t end;

	if (sched_setscheduler(0, SCHED_FIFO, &fifo) < 0)
		fail("sched_setscheduler(SCHED_FIFO): %s", strerror(errno));
	end = now_ns(CLOCK_MONOTONIC) + ns;
	while (now_ns(CLOCK_MONOTONIC) < end)
		;
	if (sched_setscheduler(0, SCHED_OTHER, &other) < 0)
		fail("sched_setscheduler(SCHED_OTHER): %s", strerror(errno));
}

static void configure(const struct sample_opts *o)
{
	char val[256], msg[1024];

	set("enable", "0");
	set("window", "1000000");
	set("width", "900000");
	set("threshold", o->threshold);
	set("mode", o->mode);
	if (o->cpus)
		set("cpus", o->cpus);
	msg[0] = '\0';
	for (const char *const *f = (const char *const[]){ "threshold", "width", "window",
							  "cpus", "clock", NULL };
	     *f; f++) {
		get(*f, val, sizeof(val));
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), " %s=%s", *f, val);
	}
	/* "none [round-robin] per-cpu stop-machine": the bracketed one is in force. */
	get("mode", val, sizeof(val));
	{
		char *open_br = strchr(val, '['), *close_br = open_br ? strchr(open_br, ']') : NULL;

		if (!close_br)
			fail("mode file does not bracket the current mode: '%s'", val);
		*close_br = '\0';
		if (strcmp(open_br + 1, o->mode) != 0)
			fail("mode file says '%s' after writing '%s'", open_br + 1, o->mode);
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), " mode=%s", open_br + 1);
	}
	printf("HWLAT-CONFIG%s\n", msg);
}

/* The CPU the IPI count runs on: the last one (the detector samples others). */
static long last_cpu(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 1 ? n - 1 : 0;
}

/*
 * When the SeaBIOS test raises SMI k of n from CPU 0 (round-robin over CPUs
 * 0 and 1, 1 s windows). The widths begin on a grid from enable, CPU 0's at
 * even seconds: at 1.45 s + 2 s * m an SMI falls mid-way through CPU 1's
 * width, 0.55 s from CPU 0's widths. Times spread evenly over the run (every
 * 3 s) fell on CPU 0's width starts every other time, at an edge, where
 * whether a window counts the SMI is not knowable.
 */
static int64_t smi_time(int64_t start, int64_t deadline, long k, long n)
{
	const int64_t slot = 2000000000LL;

	return start + 1450000000LL + (deadline - start) * (k + 1) / (n + 1) / slot * slot;
}

static int sample(const struct sample_opts *o)
{
	char buf[65536];
	_cleanup_close_ int fd = -1;
	size_t have = 0;
	unsigned nlines = 0;
	int64_t start, deadline, next_smi = INT64_MAX, last = 0, ipi_at = INT64_MAX;
	long raised = 0;
	int r, tracing = 0, desynced = o->desync < 0, idle_slots = 0;
	long slot_raised = 0;
	struct gate gate = { .used = ~0ULL };

	configure(o);

	/*
	 * SMIs are raised from CPU 0 only: under QEMU 7.2 TCG with SeaBIOS, an
	 * SMI raised from CPU 1 never leaves SMM (the guest hangs with the
	 * detector disabled, even unloaded; see tests/accuracy/README.md).
	 */
	if (o->smis > 0)
		pin(0);
	if ((o->smis > 0 || o->gate_n > 0) && ioperm(APM_CNT_PORT, 1, 1) < 0)
		fail("ioperm(0x%x): %s", APM_CNT_PORT, strerror(errno));
	if (o->gate_n > 0)
		pin(o->gate_raise);
	if (o->desync >= 0)
		pin(o->desync);
	if (o->freeze >= 0)
		pin(o->freeze);
	if (o->idle > 0) {
		pin(last_cpu());
		print_ipis("idle-before");
		sleep((unsigned)o->idle);
		print_ipis("idle-after");
	}

	print_nmis("before");
	print_smi_msrs("before");

	clock_marks();
	fd = open(DIR "stream", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		fail("opening " DIR "stream: %s", strerror(errno));
	if (o->trace)
		tracing = trace_start(o->mode);
	/*
	 * The windows start at the write: take the time before it. The write
	 * itself may return a width later, when the first width runs on this
	 * CPU and preempts us inside it; a start taken after it would shift
	 * every SMI by that width, into this CPU's widths.
	 */
	start = now_ns(CLOCK_MONOTONIC);
	set("enable", "1");
	deadline = start + o->seconds * 1000000000LL;
	if (o->smis > 0)
		next_smi = smi_time(start, deadline, 0, o->smis);
	if (o->idle > 0)
		ipi_at = start + 2000000000LL;
	printf("HWLAT-MARK sampling %s %lld\n", o->mode, (long long)now_ns(CLOCK_REALTIME));
	fflush(stdout);

	for (;;) {
		int64_t now = now_ns(CLOCK_MONOTONIC), until = deadline;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int timeout;
		ssize_t n;

		int held = last && now - last >= FREEZE_NS;

		if (o->freeze >= 0 && held) {
			int64_t real = now_ns(CLOCK_REALTIME);

			printf("HWLAT-FREEZE %lld %lld\n", (long long)(real - (now - last)),
			       (long long)real);
			fflush(stdout);
		}
		last = now;
		/*
		 * desync: a new free slot of this CPU begins after each width of
		 * its own sampler. Two slots in a row without an SMI mean the
		 * phases drifted together again: hold the CPU once more.
		 */
		if (held && o->desync >= 0 && o->gate_n > 0 && gate.raised < o->gate_n) {
			idle_slots = gate.raised == slot_raised ? idle_slots + 1 : 0;
			slot_raised = gate.raised;
			if (idle_slots >= 2) {
				idle_slots = 0;
				desynced = 0;
			}
		}
		if (!desynced && now >= start + 500000000LL) {
			hold_cpu(500000000LL);
			printf("HWLAT-NOTE cpu %ld held at SCHED_FIFO for 500 ms from %lld ms after "
			       "enabling\n", o->desync, (long long)(now - start) / 1000000);
			desynced = 1;
			/* The hold is no freeze, and the slots count anew. */
			last = now_ns(CLOCK_MONOTONIC);
			idle_slots = 0;
			slot_raised = gate.raised;
			continue;
		}
		if (desynced && o->gate_n > 0)
			gate_step(&gate, o);
		if (now >= ipi_at) {
			print_ipis("sampling-before");
			ipi_at = INT64_MAX;
		}
		if (now >= next_smi) {
			raise_smi((int)raised);
			raised++;
			next_smi = raised < o->smis ?
				smi_time(start, deadline, raised, o->smis) : INT64_MAX;
			continue;
		}
		if (now >= deadline)
			break;
		if (next_smi < until)
			until = next_smi;
		timeout = (int)((until - now) / 1000000 + 1);
		/* The gate and the freeze watch look every 2 ms. */
		if ((o->gate_n > 0 || o->freeze >= 0 || !desynced) && timeout > 2)
			timeout = 2;
		r = poll(&p, 1, timeout);
		if (r < 0 && errno != EINTR)
			fail("poll(stream): %s", strerror(errno));
		if (r <= 0)
			continue;
		n = read(fd, buf + have, sizeof(buf) - have - 1);
		if (n < 0 && errno == EAGAIN)
			continue;
		if (n < 0)
			fail("read(stream): %s", strerror(errno));
		if (n == 0)
			fail("stream returned EOF while the detector was enabled");
		have = emit_lines(buf, have + (size_t)n, &nlines);
		fflush(stdout);
	}
	if (o->idle > 0)
		print_ipis("sampling-after");

	/* Drain: disable, then read to EOF (bounded, so a hang is reported). */
	set("enable", "0");
	deadline = now_ns(CLOCK_MONOTONIC) + 10 * 1000000000LL;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (now_ns(CLOCK_MONOTONIC) > deadline)
			fail("stream did not reach EOF within 10 s of enable=0");
		n = read(fd, buf + have, sizeof(buf) - have - 1);
		if (n < 0 && errno == EAGAIN) {
			poll(&p, 1, 100);
			continue;
		}
		if (n < 0)
			fail("read(stream) while draining: %s", strerror(errno));
		if (n == 0)
			break;
		have = emit_lines(buf, have + (size_t)n, &nlines);
	}
	if (have)
		fail("stream ended inside a line: '%.*s'", (int)have, buf);
	if (tracing)
		trace_stop();

	print_nmis("after");
	print_smi_msrs("after");
	{
		char count[64], max[64], dropped[64];

		get("count", count, sizeof(count));
		get("max", max, sizeof(max));
		get("dropped", dropped, sizeof(dropped));
		printf("HWLAT-STATS count=%s max=%s dropped=%s raised_smis=%ld\n", count, max,
		       dropped, raised + gate.raised);
	}
	printf("HWLAT-MARK done %u\n", nlines);
	fflush(stdout);
	return 0;
}

/*
 * The kernel's own hwlat tracer instead of the module (bench/accuracy-vs-tracer):
 * "tracer <mode> <seconds> [trace]". Sets the tracer up with the
 * module's settings (tracing_thresh 20000 us, hwlat_detector/width 900000,
 * window 1000000, hwlat_detector/mode), starts it with tracing_on and reads
 * trace_pipe as a user of the tracer does, while sampling. The tracer's
 * samples are printed verbatim as "HWLAT-TRACER <line>" (the host parses them:
 * analysis.parse_tracer_line); with "trace", the sched_switch events of its
 * hwlatd threads and the calibration markers share the ring buffer (the
 * tracer cannot run in an instance) and come out of the same trace_pipe as
 * "HWLAT-TRACE <line>", so that the host places stalls against the tracer's
 * widths exactly as against the module's. The module, when loaded, is
 * disabled first (both would sample at once otherwise). Ends with
 * "HWLAT-MARK done <tracer samples>"; current_tracer is nop again afterwards.
 */
/* The tracer's files, relative to trace_dir. */
static void tracer_set(const char *file, const char *value)
{
	char dir[80];

	snprintf(dir, sizeof(dir), "%s/", trace_dir);
	set_in(dir, file, value);
}

static void tracer_get(const char *file, char *buf, size_t size)
{
	char dir[80];

	snprintf(dir, sizeof(dir), "%s/", trace_dir);
	get_in(dir, file, buf, size);
}

/* Prints the complete lines of buf (tracer samples apart); keeps the rest. */
static size_t emit_pipe_lines(char *buf, size_t len, unsigned *samples, unsigned *traced)
{
	char *start = buf, *nl;

	while ((nl = memchr(start, '\n', len - (size_t)(start - buf)))) {
		*nl = '\0';
		if (strstr(start, " inner/outer(us): ")) {
			printf("HWLAT-TRACER %s\n", start);
			(*samples)++;
		} else if (start[0] != '\0' && start[0] != '#') {
			printf("HWLAT-TRACE %s\n", start);
			(*traced)++;
		}
		start = nl + 1;
	}
	len -= (size_t)(start - buf);
	memmove(buf, start, len);
	return len;
}

/* Reads what trace_pipe holds now (non-blocking); fails on a read error. */
static size_t read_pipe(int fd, char *buf, size_t have, size_t size, unsigned *samples,
			unsigned *traced)
{
	for (;;) {
		ssize_t n = read(fd, buf + have, size - have - 1);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return have;
		if (n < 0)
			fail("read(trace_pipe): %s", strerror(errno));
		if (n == 0)
			return have;
		have = emit_pipe_lines(buf, have + (size_t)n, samples, traced);
		if (have == size - 1)
			fail("trace_pipe line longer than %zu bytes", size - 1);
	}
}

static int tracer_sample(const char *mode, long seconds, int trace)
{
	char buf[65536], val[256], msg[1024] = "";
	char path[160];
	_cleanup_close_ int fd = -1;
	unsigned samples = 0, traced = 0;
	unsigned long long overrun = 0, v;
	size_t have = 0;
	int64_t deadline;
	int tracing = 0;

	if (access(DIR "enable", W_OK) == 0)
		set("enable", "0");
	if (!find_tracefs())
		fail("no tracefs at %s or %s", dirs[0], dirs[1]);
	tracer_set("tracing_on", "0");
	tracer_set("current_tracer", "nop");
	tracer_set("hwlat_detector/window", "1000000");
	tracer_set("hwlat_detector/width", "900000");
	tracer_set("tracing_thresh", "20000");
	tracer_set("hwlat_detector/mode", mode);
	/* With tracing_on 0 the tracer starts no thread yet. */
	tracer_set("current_tracer", "hwlat");
	for (const char *const *f = (const char *const[]){ "tracing_thresh",
							  "hwlat_detector/width",
							  "hwlat_detector/window",
							  "current_tracer", NULL };
	     *f; f++) {
		tracer_get(*f, val, sizeof(val));
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), " %s=%s",
			 strchr(*f, '/') ? strchr(*f, '/') + 1 : *f, val);
	}
	tracer_get("hwlat_detector/mode", val, sizeof(val));
	{
		char *open_br = strchr(val, '['), *close_br = open_br ? strchr(open_br, ']') : NULL;

		if (!close_br)
			fail("hwlat_detector/mode does not bracket the current mode: '%s'", val);
		*close_br = '\0';
		if (strcmp(open_br + 1, mode) != 0)
			fail("hwlat_detector/mode says '%s' after writing '%s'", open_br + 1, mode);
	}
	printf("HWLAT-CONFIG backend=tracer%s mode=%s\n", msg, mode);

	print_nmis("before");
	clock_marks();
	snprintf(path, sizeof(path), "%s/trace_pipe", trace_dir);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		fail("opening %s: %s", path, strerror(errno));
	/* trace_start() empties the buffer and sets tracing_on: the tracer starts. */
	if (trace)
		tracing = trace_start(mode);
	if (!tracing) {
		snprintf(path, sizeof(path), "%s/trace", trace_dir);
		{
			_cleanup_close_ int t = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
		}
		tracer_set("tracing_on", "1");
	}
	deadline = now_ns(CLOCK_MONOTONIC) + seconds * 1000000000LL;
	printf("HWLAT-MARK sampling %s %lld\n", mode, (long long)now_ns(CLOCK_REALTIME));
	fflush(stdout);

	while (now_ns(CLOCK_MONOTONIC) < deadline) {
		/* trace_pipe's poll may wait for a fuller buffer: read every 20 ms. */
		usleep(20000);
		have = read_pipe(fd, buf, have, sizeof(buf), &samples, &traced);
		fflush(stdout);
	}
	if (tracing)
		for (int k = 5; k < 10; k++)
			trace_cal(k);
	/* Stops the tracer's threads (each ends its width first). */
	tracer_set("tracing_on", "0");
	if (tracing) {
		trace_put("events/sched/sched_switch/enable", "0");
		trace_put("events/sched/sched_switch/filter", "0");
	}
	have = read_pipe(fd, buf, have, sizeof(buf), &samples, &traced);
	if (have)
		fail("trace_pipe ended inside a line: '%.*s'", (int)have, buf);
	for (int cpu = 0; cpu < MAX_CPUS; cpu++) {
		char line[256];
		FILE *f;

		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/stats", trace_dir, cpu);
		f = fopen(path, "re");
		if (!f)
			break;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "overrun: %llu", &v) == 1)
				overrun += v;
		fclose(f);
	}
	if (tracing)
		printf("HWLAT-TRACE-END lines=%u overrun=%llu\n", traced, overrun);
	/* The tracer cannot be changed while trace_pipe is open (-EBUSY). */
	close(fd);
	fd = -1;
	tracer_set("current_tracer", "nop");
	print_nmis("after");
	printf("HWLAT-STATS count=%u dropped=%llu\n", samples, overrun);
	printf("HWLAT-MARK done %u\n", samples);
	fflush(stdout);
	return 0;
}

/*
 * Control experiment for the SMI tests, detector disabled: raises n SMIs
 * 200 ms apart between two MSR_SMI_COUNT readings, so the platform's own
 * ground truth (QEMU + the firmware's SMM, the msr driver) is checked before
 * the detector is judged against it. Each outb is timed: the time the
 * raising CPU spent in SMM, which every CPU spends there when the firmware
 * broadcasts (the tests' threshold must be below it).
 */
static int smi_control(long n, long cpu)
{
	pin(cpu);
	if (ioperm(APM_CNT_PORT, 1, 1) < 0)
		fail("ioperm(0x%x): %s", APM_CNT_PORT, strerror(errno));
	print_smi_msrs("control-before");
	for (long k = 0; k < n; k++) {
		int64_t t0 = now_ns(CLOCK_MONOTONIC);

		apm_smi();
		printf("HWLAT-SMI-COST %ld %lld\n", k, (long long)(now_ns(CLOCK_MONOTONIC) - t0));
		usleep(200000);
	}
	print_smi_msrs("control-after");
	printf("HWLAT-SMI-CONTROL raised=%ld cpu=%ld\n", n, cpu);
	return 0;
}

static long number(const char *s, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > 100000)
		fail("%s must be an integer 0-100000, got '%s'", what, s);
	return v;
}

/* "R,W,N" of gate=. */
static void parse_gate(const char *s, struct sample_opts *o)
{
	char copy[64], *w, *n;

	snprintf(copy, sizeof(copy), "%s", s);
	w = strchr(copy, ',');
	n = w ? strchr(w + 1, ',') : NULL;
	if (!n)
		fail("gate=%s: want gate=<raising cpu>,<watched cpu>,<smis>", s);
	*w++ = '\0';
	*n++ = '\0';
	o->gate_raise = number(copy, "gate's raising cpu");
	o->gate_watch = number(w, "gate's watched cpu");
	o->gate_n = number(n, "gate's smis");
	if (o->gate_raise == o->gate_watch)
		fail("gate=%s: the raising CPU must not be the watched one", s);
}

/* sample <mode> <seconds> [<smis>] [trace] [OPTION=VALUE...] */
static int sample_cmd(int argc, char **argv)
{
	struct sample_opts o = { .mode = argv[2], .threshold = "20000", .desync = -1,
				 .freeze = -1 };
	int i = 4;

	o.seconds = number(argv[3], "seconds");
	if (i < argc && strchr(argv[i], '=') == NULL && strcmp(argv[i], "trace") != 0)
		o.smis = number(argv[i++], "smis");
	for (; i < argc; i++) {
		const char *a = argv[i], *v = strchr(a, '=') ? strchr(a, '=') + 1 : NULL;

		if (strcmp(a, "trace") == 0)
			o.trace = 1;
		else if (v && strncmp(a, "threshold=", 10) == 0 && number(v, "threshold") >= 0)
			o.threshold = v;
		else if (v && strncmp(a, "cpus=", 5) == 0)
			o.cpus = v;
		else if (v && strncmp(a, "gate=", 5) == 0)
			parse_gate(v, &o);
		else if (v && strncmp(a, "desync=", 7) == 0)
			o.desync = number(v, "desync cpu");
		else if (v && strncmp(a, "freeze=", 7) == 0)
			o.freeze = number(v, "freeze cpu");
		else if (v && strncmp(a, "idle=", 5) == 0)
			o.idle = number(v, "idle seconds");
		else
			fail("sample: unknown argument '%s'", a);
	}
	return sample(&o);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && strcmp(argv[1], "nmi") == 0) {
		print_nmis("now");
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "smi-control") == 0)
		return smi_control(number(argv[2], "smis"), number(argv[3], "cpu"));
	if (argc == 3 && strcmp(argv[1], "selfcheck") == 0)
		return selfcheck(number(argv[2], "seconds"));
	if (argc >= 4 && strcmp(argv[1], "sample") == 0)
		return sample_cmd(argc, argv);
	if ((argc == 4 || (argc == 5 && strcmp(argv[4], "trace") == 0)) &&
	    strcmp(argv[1], "tracer") == 0)
		return tracer_sample(argv[2], number(argv[3], "seconds"), argc == 5);
	fail("usage: acc-guest sample <mode> <seconds> [<smis>] [trace] [OPTION=VALUE...] | "
	     "tracer <mode> <seconds> [trace] | selfcheck <seconds> | smi-control <n> <cpu> | nmi");
}
