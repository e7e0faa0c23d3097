/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the guest test programs (abi-test, torture, nmi-probe):
 * TAP output, debugfs file access that reports -errno, strict parsers for
 * the `sample` and `stream` line formats of docs/interfaces.md and a parser
 * of the trace event's text, draining
 * `stream` after an overflow, and a reader thread that blocks in read().
 *
 * These programs run inside the QEMU guest only (tests/kernel/lab), as root,
 * with debugfs mounted and hwlat_detector loaded.
 */
#ifndef HWLAT_LAB_H
#define HWLAT_LAB_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define HWLAT_DIR "/sys/kernel/debug/hwlat_detector"
#define HWLAT_KO "/hwlat_detector.ko"

static int tap_n;
static int tap_failed;

static inline void closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

static inline void freep(void *p)
{
	free(*(void **)p);
}

#define _cleanup_close_ __attribute__((cleanup(closep)))
#define _cleanup_free_ __attribute__((cleanup(freep)))

__attribute__((format(printf, 1, 2)))
static inline void diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

/* One TAP line; returns cond so callers can print what they saw on failure. */
__attribute__((format(printf, 2, 3)))
static inline bool ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
	return cond;
}

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	diag("%d passed, %d failed", tap_n - tap_failed, tap_failed);
	return tap_failed ? 1 : 0;
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static inline void path_of(char *buf, size_t len, const char *file)
{
	snprintf(buf, len, "%s/%s", HWLAT_DIR, file);
}

static inline int open_file(const char *file, int flags)
{
	char p[256];
	int fd;

	path_of(p, sizeof(p), file);
	fd = open(p, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Reads a file with one read() into buf (NUL-terminated): bytes or -errno. */
static inline ssize_t rd(const char *file, char *buf, size_t len)
{
	_cleanup_close_ int fd = open_file(file, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return fd;
	n = read(fd, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

/* Writes len bytes of s with one write(): 0 when all were taken, else -errno. */
static inline int wrn(const char *file, const char *s, size_t len)
{
	_cleanup_close_ int fd = open_file(file, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return fd;
	n = write(fd, s, len);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

static inline int wr(const char *file, const char *s)
{
	return wrn(file, s, strlen(s));
}

static inline int wrnum(const char *file, long long v)
{
	char b[32];

	snprintf(b, sizeof(b), "%lld", v);
	return wr(file, b);
}

/* A number file ("N\n"): its value, or -1 when unreadable or malformed. */
static inline long long rdnum(const char *file)
{
	char b[64], *end;
	long long v;

	if (rd(file, b, sizeof(b)) <= 0)
		return -1;
	errno = 0;
	v = strtoll(b, &end, 10);
	if (errno || end == b || strcmp(end, "\n") != 0)
		return -1;
	return v;
}

/* Escapes a buffer for diagnostics (control characters as \xNN). */
static inline const char *esc(const char *s, size_t len)
{
	static char out[4][512];
	static int which;
	char *o = out[which++ & 3];
	size_t j = 0;

	for (size_t i = 0; i < len && j + 5 < sizeof(out[0]); i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\n') {
			o[j++] = '\\';
			o[j++] = 'n';
		} else if (c == '\t') {
			o[j++] = '\\';
			o[j++] = 't';
		} else if (c < 0x20 || c >= 0x7f) {
			j += (size_t)snprintf(o + j, sizeof(out[0]) - j, "\\x%02x", c);
		} else {
			o[j++] = (char)c;
		}
	}
	o[j] = '\0';
	return o;
}

static inline const char *escs(const char *s)
{
	return esc(s, strlen(s));
}

/* Parses one run of decimal digits (at least one, at most 20) at *p. */
static inline bool digits(const char **p, const char *end, uint64_t *v, int *ndig)
{
	uint64_t x = 0;
	int n = 0;

	while (*p < end && **p >= '0' && **p <= '9') {
		if (x > (UINT64_MAX - 9) / 10)
			return false;
		x = x * 10 + (uint64_t)(**p - '0');
		(*p)++;
		n++;
	}
	if (v)
		*v = x;
	if (ndig)
		*ndig = n;
	return n > 0;
}

/* The guest CPU's vendor is Intel (only Intel CPUs count SMIs). */
static inline bool intel_cpu(void)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[256];
	bool intel = false;

	if (!f)
		return false;
	while (!intel && fgets(line, sizeof(line), f))
		intel = strncmp(line, "vendor_id", 9) == 0 && strstr(line, "GenuineIntel");
	fclose(f);
	return intel;
}

/* Reads a whole small file by path, NUL-terminated; length or -errno. */
static inline ssize_t rd_path(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	buf[0] = '\0';
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return n;
}

#define PARAMS "/sys/module/hwlat_detector/parameters/"

/* A number in the file at @path, or -1. */
static inline long long rdnum_path(const char *path)
{
	char buf[32];

	if (rd_path(path, buf, sizeof(buf)) <= 0)
		return -1;
	return atoll(buf);
}

struct sample_line {
	uint64_t sec, nsec, inner_us, outer_us;
};

/*
 * `<sec>.<nsec>\t<inner us>\t<outer us>\n`, exactly, with the 2009 module's
 * "%010lu.%010lu" time (docs/interfaces.md: the legacy ABI "kept exactly"):
 * sec zero-padded to at least 10 digits, nsec exactly 10 digits (< 10^9).
 */
static inline bool parse_sample(const char *s, size_t len, struct sample_line *o)
{
	const char *p = s, *end = s + len;
	int nd;

	if (!digits(&p, end, &o->sec, &nd) || nd < 10 || p >= end || *p++ != '.')
		return false;
	if (!digits(&p, end, &o->nsec, &nd) || nd != 10 || o->nsec >= 1000000000ull ||
	    p >= end || *p++ != '\t')
		return false;
	if (!digits(&p, end, &o->inner_us, NULL) || p >= end || *p++ != '\t')
		return false;
	if (!digits(&p, end, &o->outer_us, NULL) || p >= end || *p++ != '\n')
		return false;
	return p == end;
}

struct stream_line {
	uint64_t seq, cpu, sec, nsec, inner_ns, outer_ns, count, nmi_count, nmi_ns, smi_count,
		smi_ns;
	bool smi_known; /* false: smi_count and smi_ns were "-" */
};

/*
 * `<seq> <cpu> <sec>.<nsec 9 digits> <inner_ns> <outer_ns> <count> <nmi_count>
 * <nmi_ns> <smi_count> <smi_ns>\n`, exactly (11 fields, single spaces); the
 * last two are both numbers or both "-" (SMIs cannot be counted).
 */
static inline bool parse_stream(const char *s, size_t len, struct stream_line *o)
{
	const char *p = s, *end = s + len;
	uint64_t *rest[] = { &o->inner_ns, &o->outer_ns, &o->count, &o->nmi_count, &o->nmi_ns };
	int nd;

	if (!digits(&p, end, &o->seq, NULL) || p >= end || *p++ != ' ')
		return false;
	if (!digits(&p, end, &o->cpu, NULL) || p >= end || *p++ != ' ')
		return false;
	if (!digits(&p, end, &o->sec, NULL) || p >= end || *p++ != '.')
		return false;
	if (!digits(&p, end, &o->nsec, &nd) || nd != 9)
		return false;
	for (size_t i = 0; i < sizeof(rest) / sizeof(rest[0]); i++) {
		if (p >= end || *p++ != ' ' || !digits(&p, end, rest[i], NULL))
			return false;
	}
	if (end - p >= 5 && memcmp(p, " - -\n", 5) == 0) {
		o->smi_known = false;
		o->smi_count = o->smi_ns = 0;
		p += 4;
	} else {
		o->smi_known = true;
		if (p >= end || *p++ != ' ' || !digits(&p, end, &o->smi_count, NULL))
			return false;
		if (p >= end || *p++ != ' ' || !digits(&p, end, &o->smi_ns, NULL))
			return false;
	}
	if (p >= end || *p++ != '\n')
		return false;
	return p == end;
}

/*
 * `<seq> <cpu> <sec>.<nsec 9 digits> skipped <windows>\n`: the record of
 * windows the samplers could not get onto a CPU in.
 */
static inline bool parse_skip(const char *s, size_t len, uint64_t *seq, uint64_t *cpu,
			      uint64_t *windows)
{
	const char *p = s, *end = s + len;
	uint64_t sec, nsec;
	int nd;

	if (!digits(&p, end, seq, NULL) || p >= end || *p++ != ' ')
		return false;
	if (!digits(&p, end, cpu, NULL) || p >= end || *p++ != ' ')
		return false;
	if (!digits(&p, end, &sec, NULL) || p >= end || *p++ != '.')
		return false;
	if (!digits(&p, end, &nsec, &nd) || nd != 9)
		return false;
	if (end - p < 9 || memcmp(p, " skipped ", 9) != 0)
		return false;
	p += 9;
	if (!digits(&p, end, windows, NULL) || *windows == 0 || p >= end || *p++ != '\n')
		return false;
	return p == end;
}

/* The windows of a stream drained to EOF, in order: 0 or -errno. */
static inline int stream_windows(int fd, struct stream_line *w, size_t max, size_t *n)
{
	char buf[65536], part[512];
	size_t plen = 0;
	ssize_t r;

	*n = 0;
	while ((r = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < r; i++) {
			if (plen < sizeof(part))
				part[plen++] = buf[i];
			if (buf[i] != '\n')
				continue;
			if (*n < max && parse_stream(part, plen, &w[*n]))
				(*n)++;
			plen = 0;
		}
	}
	return r < 0 ? -errno : 0;
}

/*
 * One line of text of the trace event hwlat_detector:sample (tracefs's
 * `trace`, `perf script`): its fields, or false when it is not one.
 */
static inline bool trace_window(const char *line, struct stream_line *t)
{
	const char *p = strstr(line, "sample: seq=");
	long long smi_count, smi_ns;

	if (!p)
		return false;
	if (sscanf(p, "sample: seq=%" SCNu64 " cpu=%" SCNu64 " ts=%" SCNu64 ".%" SCNu64
		   " inner_ns=%" SCNu64 " outer_ns=%" SCNu64 " count=%" SCNu64 " nmi_count=%" SCNu64
		   " nmi_ns=%" SCNu64 " smi_count=%lld smi_ns=%lld",
		   &t->seq, &t->cpu, &t->sec, &t->nsec, &t->inner_ns, &t->outer_ns, &t->count,
		   &t->nmi_count, &t->nmi_ns, &smi_count, &smi_ns) != 11)
		return false;
	t->smi_known = smi_count >= 0;
	t->smi_count = t->smi_known ? (uint64_t)smi_count : 0;
	t->smi_ns = t->smi_known ? (uint64_t)smi_ns : 0;
	return true;
}

/* Every field of two windows agrees. */
static inline bool same_window(const struct stream_line *a, const struct stream_line *b)
{
	return a->seq == b->seq && a->cpu == b->cpu && a->sec == b->sec && a->nsec == b->nsec &&
	       a->inner_ns == b->inner_ns && a->outer_ns == b->outer_ns &&
	       a->count == b->count && a->nmi_count == b->nmi_count && a->nmi_ns == b->nmi_ns &&
	       a->smi_known == b->smi_known && a->smi_count == b->smi_count &&
	       a->smi_ns == b->smi_ns;
}

/*
 * A growable buffer of stream text that splits into whole lines. Readers
 * append whatever read() returned; complete lines are parsed and counted.
 */
#define STREAM_TS_MAX 32

struct stream_acc {
	char part[512];
	size_t plen;
	uint64_t lines, bad, last_seq, missing, out_of_order;
	uint64_t smi_unknown; /* lines with "-" for smi_count and smi_ns */
	uint64_t smi_total;
	uint64_t cpus_seen; /* bit mask of CPUs */
	uint64_t lines_of[64]; /* lines per CPU, CPUs 0-63 */
	uint64_t max_cpu;
	uint64_t gaps_of[64]; /* per CPU, the sum of each line's inner + outer */
	uint64_t max_gap; /* the largest inner or outer gap of any line */
	uint64_t skip_records, skipped_of[64]; /* skip records; windows per CPU */
	uint64_t ts[2][STREAM_TS_MAX]; /* window times (ns) of CPUs 0 and 1, the first ones */
	unsigned int nts[2];
	char first_bad[160];
	bool have_seq;
};

/* Sequence numbers: every record takes one, in order. */
static inline void acc_seq(struct stream_acc *a, uint64_t seq)
{
	if (a->have_seq) {
		if (seq <= a->last_seq)
			a->out_of_order++;
		else
			a->missing += seq - a->last_seq - 1;
	} else {
		a->missing += seq - 1;
	}
	a->have_seq = true;
	a->last_seq = seq;
}

static inline void acc_line(struct stream_acc *a, const char *l, size_t len)
{
	uint64_t seq, cpu, windows;
	struct stream_line s;

	if (parse_skip(l, len, &seq, &cpu, &windows)) {
		a->skip_records++;
		if (cpu < 64)
			a->skipped_of[cpu] += windows;
		acc_seq(a, seq);
		return;
	}
	if (!parse_stream(l, len, &s)) {
		if (!a->bad++)
			snprintf(a->first_bad, sizeof(a->first_bad), "%s", esc(l, len));
		return;
	}
	a->lines++;
	if (s.inner_ns > a->max_gap)
		a->max_gap = s.inner_ns;
	if (s.outer_ns > a->max_gap)
		a->max_gap = s.outer_ns;
	if (!s.smi_known)
		a->smi_unknown++;
	a->smi_total += s.smi_count;
	if (s.cpu < 64) {
		a->cpus_seen |= 1ull << s.cpu;
		a->lines_of[s.cpu]++;
		a->gaps_of[s.cpu] += s.inner_ns + s.outer_ns;
	}
	if (s.cpu > a->max_cpu)
		a->max_cpu = s.cpu;
	if (s.cpu < 2 && a->nts[s.cpu] < STREAM_TS_MAX)
		a->ts[s.cpu][a->nts[s.cpu]++] = s.sec * 1000000000ull + s.nsec;
	acc_seq(a, s.seq);
}

static inline void acc_feed(struct stream_acc *a, const char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (a->plen < sizeof(a->part))
			a->part[a->plen] = buf[i];
		a->plen++;
		if (buf[i] == '\n') {
			acc_line(a, a->part, a->plen < sizeof(a->part) ? a->plen : sizeof(a->part));
			a->plen = 0;
		}
	}
}

/*
 * The end of an overflow test: reads what fd (`stream`, opened O_NONBLOCK)
 * holds (for at most 60 s), then what arrives for one more second while the
 * detector runs, then writes enable=0 and reads to EOF, all into a. Returns
 * the last read(): 0 when the stream reached EOF, else -errno.
 */
static inline ssize_t stream_drain(int fd, struct stream_acc *a)
{
	char b[65536];
	uint64_t deadline = now_ns() + 60000000000ull;
	ssize_t n;

	while (now_ns() < deadline && (n = read(fd, b, sizeof(b))) > 0)
		acc_feed(a, b, (size_t)n);
	deadline = now_ns() + 1000000000ull;
	while (now_ns() < deadline) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		poll(&p, 1, 50);
		n = read(fd, b, sizeof(b));
		if (n > 0)
			acc_feed(a, b, (size_t)n);
	}
	wr("enable", "0");
	while ((n = read(fd, b, sizeof(b))) > 0)
		acc_feed(a, b, (size_t)n);
	return n < 0 ? -errno : 0;
}

/* A thread that reads fd until read() returns 0 (EOF) or fails. */
struct blocked_read {
	const char *file;
	int fd;
	atomic_int done;	/* set when the thread is about to return */
	ssize_t ret;		/* the last read()'s result */
	int err;		/* and its errno */
};

static inline void *blocked_reader(void *arg)
{
	struct blocked_read *br = arg;
	char b[4096];

	do {
		br->ret = read(br->fd, b, sizeof(b));
		br->err = br->ret < 0 ? errno : 0;
	} while (br->ret > 0);
	atomic_store(&br->done, 1);
	return NULL;
}

static inline int cpus_online(void)
{
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

static inline int delete_module(const char *name, unsigned int flags)
{
	return (int)syscall(SYS_delete_module, name, flags);
}

/* Loads HWLAT_KO with params: 0 or -errno. */
static inline int load_module(const char *params)
{
	_cleanup_close_ int fd = open(HWLAT_KO, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (syscall(SYS_finit_module, fd, params, 0) < 0)
		return -errno;
	return 0;
}

static inline bool module_loaded(void)
{
	char line[256];
	bool found = false;
	FILE *f = fopen("/proc/modules", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "hwlat_detector ", 15) == 0)
			found = true;
	fclose(f);
	return found;
}

/* Sets width and window in an order that keeps width < window throughout. */
static inline int set_ww(long long width, long long window)
{
	int r;

	if (width < rdnum("window")) {
		r = wrnum("width", width);
		return r ? r : wrnum("window", window);
	}
	r = wrnum("window", window);
	return r ? r : wrnum("width", width);
}

/*
 * Disables the detector, then applies a configuration; 0 or -errno. Width
 * and window change in round-robin mode (the widest bounds), so that the
 * target mode's bounds apply only to the final pair.
 */
static inline int configure(const char *mode, long long thr, long long width, long long window)
{
	int r;

	r = wr("enable", "0");
	if (!r)
		r = wr("mode", "round-robin");
	if (!r)
		r = wr("cpus", "");
	if (!r)
		r = set_ww(width, window);
	if (!r)
		r = wr("mode", mode);
	if (!r)
		r = wrnum("threshold", thr);
	if (r)
		diag("configure(%s, %lld, %lld, %lld) failed: %s", mode, thr, width, window,
		     strerror(-r));
	return r;
}

/*
 * Reads `stream` for ms milliseconds (or until want lines) into a, with
 * reads of bufsz bytes; returns the number of read() calls that returned
 * data, or -errno on an unexpected error.
 */
static inline long read_stream(struct stream_acc *a, unsigned int ms, uint64_t want, size_t bufsz,
			uint64_t *max_lines_per_read)
{
	_cleanup_close_ int fd = open_file("stream", O_RDONLY | O_NONBLOCK);
	_cleanup_free_ char *buf = malloc(bufsz);
	uint64_t deadline = now_ns() + (uint64_t)ms * 1000000ull;
	long reads = 0;

	if (fd < 0)
		return fd;
	if (!buf)
		return -ENOMEM;
	while (now_ns() < deadline && (!want || a->lines < want)) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t before = a->lines;
		ssize_t n;

		if (poll(&p, 1, 100) < 0)
			return -errno;
		n = read(fd, buf, bufsz);
		if (n < 0) {
			if (errno == EAGAIN)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		reads++;
		acc_feed(a, buf, (size_t)n);
		if (max_lines_per_read && a->lines - before > *max_lines_per_read)
			*max_lines_per_read = a->lines - before;
	}
	return reads;
}

#endif
