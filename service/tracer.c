/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The kernel's hwlat tracer in tracefs (tracer.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracer.h"
#include "log.h"
#include "macro.h"

#define MODE_FILE "hwlat_detector/mode"
#define WIDTH_FILE "hwlat_detector/width"
#define WINDOW_FILE "hwlat_detector/window"

static int try_open(tracer *t, const char *path)
{
	char probe[4096 + 32];

	snprintf(probe, sizeof(probe), "%s/available_tracers", path);
	if (access(probe, F_OK) < 0)
		return -ENOENT;
	return detector_open(&t->dir, path);
}

int tracer_open(tracer *t, const char *dir)
{
	int r;

	t->dir.dir_fd = -1;
	if (dir) {
		r = try_open(t, dir);
		if (r == -ENOENT)
			log_msg("%s is no tracefs directory (it has no available_tracers)", dir);
		else if (r < 0)
			log_error_errno(r, "cannot open the tracefs directory %s", dir);
		return r;
	}
	r = try_open(t, TRACEFS_DEFAULT_MOUNT);
	if (r == -ENOENT)
		r = try_open(t, TRACEFS_DEBUGFS_MOUNT);
	if (r == -ENOENT)
		log_msg("tracefs is not mounted on %s nor %s (mount -t tracefs tracefs %s), "
			"or the kernel has no tracing (CONFIG_FTRACE)",
			TRACEFS_DEFAULT_MOUNT, TRACEFS_DEBUGFS_MOUNT, TRACEFS_DEFAULT_MOUNT);
	else if (r < 0)
		log_error_errno(r, "cannot open the tracefs directory");
	return r;
}

void tracer_close(tracer *t)
{
	detector_close(&t->dir);
}

int tracer_available(tracer *t)
{
	char buf[4096], *save = NULL, *w;
	int r = detector_read(&t->dir, "available_tracers", buf, sizeof(buf));

	if (r < 0)
		return log_error_errno(r, "cannot read %s/available_tracers", t->dir.path);
	for (w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
		if (strcmp(w, TRACER_NAME) == 0)
			return 1;
	return 0;
}

int tracer_lock(tracer *t)
{
	return detector_lock(&t->dir);
}

static int read_text(tracer *t, const char *name, char *buf, size_t size)
{
	int r = detector_read(&t->dir, name, buf, size);

	if (r < 0)
		return log_error_errno(r, "cannot read %s/%s", t->dir.path, name);
	strip(buf);
	return 0;
}

static int read_u64(tracer *t, const char *name, uint64_t *ret)
{
	char buf[64];
	int r = read_text(t, name, buf, sizeof(buf));

	if (r < 0)
		return r;
	if (parse_u64(buf, ret) < 0) {
		log_msg("%s/%s: expected a number, read '%s'", t->dir.path, name, buf);
		return -EBADMSG;
	}
	return 0;
}

int tracer_read_state(tracer *t, tracer_state *ret)
{
	tracer_state s = {};
	char buf[4096];
	int r;

	r = read_text(t, "current_tracer", s.current, sizeof(s.current));
	if (r >= 0)
		r = read_u64(t, "tracing_thresh", &s.threshold_us);
	if (r >= 0)
		r = read_u64(t, WIDTH_FILE, &s.width_us);
	if (r >= 0)
		r = read_u64(t, WINDOW_FILE, &s.window_us);
	if (r >= 0)
		r = read_text(t, "tracing_cpumask", s.cpumask, sizeof(s.cpumask));
	if (r >= 0)
		r = read_text(t, "tracing_on", buf, sizeof(buf));
	if (r < 0)
		return r;
	if (strcmp(buf, "0") != 0 && strcmp(buf, "1") != 0) {
		log_msg("%s/tracing_on: expected 0 or 1, read '%s'", t->dir.path, buf);
		return -EBADMSG;
	}
	s.tracing_on = buf[0] == '1';

	r = detector_read(&t->dir, MODE_FILE, buf, sizeof(buf));
	if (r >= 0) {
		s.has_mode = true;
		if (detector_parse_mode(strip(buf), s.mode, sizeof(s.mode)) < 0) {
			log_msg("%s/%s: cannot tell the mode from '%s'", t->dir.path, MODE_FILE,
				buf);
			return -EBADMSG;
		}
	} else if (r != -ENOENT) {
		return log_error_errno(r, "cannot read %s/%s", t->dir.path, MODE_FILE);
	}
	*ret = s;
	return 0;
}

static int write_text(tracer *t, const char *name, const char *value)
{
	int r = detector_write(&t->dir, name, value);

	if (r < 0)
		return log_error_errno(r, "cannot write '%s' to %s/%s", value, t->dir.path, name);
	return 0;
}

static int write_u64(tracer *t, const char *name, uint64_t v, uint64_t *state)
{
	char buf[32];
	int r;

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	r = write_text(t, name, buf);
	if (r >= 0)
		*state = v;
	return r;
}

int tracer_set_on(tracer *t, tracer_state *state, bool on)
{
	int r = write_text(t, "tracing_on", on ? "1" : "0");

	if (r >= 0)
		state->tracing_on = on;
	return r;
}

static int write_current(tracer *t, tracer_state *state, const char *name)
{
	int r;

	if (strcmp(state->current, name) == 0)
		return 0;
	r = write_text(t, "current_tracer", name);
	if (r >= 0)
		snprintf(state->current, sizeof(state->current), "%s", name);
	return r;
}

int tracer_change(tracer *t, tracer_state *state, const tracer_state *to)
{
	bool to_hwlat = strcmp(to->current, TRACER_NAME) == 0;
	int r;

	/* Leaving hwlat: stop it first (trace_pipe must be closed by now). */
	if (!to_hwlat) {
		r = write_current(t, state, to->current);
		if (r < 0)
			return r;
	}
	if (state->threshold_us != to->threshold_us) {
		r = write_u64(t, "tracing_thresh", to->threshold_us, &state->threshold_us);
		if (r < 0)
			return r;
	}
	/* The kernel refuses a width above the window, and a window below it. */
	if (to->width_us > state->window_us) {
		if (state->window_us != to->window_us) {
			r = write_u64(t, WINDOW_FILE, to->window_us, &state->window_us);
			if (r < 0)
				return r;
		}
		if (state->width_us != to->width_us) {
			r = write_u64(t, WIDTH_FILE, to->width_us, &state->width_us);
			if (r < 0)
				return r;
		}
	} else {
		if (state->width_us != to->width_us) {
			r = write_u64(t, WIDTH_FILE, to->width_us, &state->width_us);
			if (r < 0)
				return r;
		}
		if (state->window_us != to->window_us) {
			r = write_u64(t, WINDOW_FILE, to->window_us, &state->window_us);
			if (r < 0)
				return r;
		}
	}
	if (strcmp(state->cpumask, to->cpumask) != 0) {
		r = write_text(t, "tracing_cpumask", to->cpumask);
		if (r < 0)
			return r;
		snprintf(state->cpumask, sizeof(state->cpumask), "%s", to->cpumask);
	}
	if (state->has_mode && to->has_mode && strcmp(state->mode, to->mode) != 0) {
		r = write_text(t, MODE_FILE, to->mode);
		if (r < 0)
			return r;
		snprintf(state->mode, sizeof(state->mode), "%s", to->mode);
	}
	if (to_hwlat) {
		r = write_current(t, state, TRACER_NAME);
		if (r < 0)
			return r;
	}
	if (state->tracing_on != to->tracing_on)
		return tracer_set_on(t, state, to->tracing_on);
	return 0;
}

int cpumask_from_cpulist(const char *cpulist, char *buf, size_t size)
{
	cpu_set_bits set;
	size_t o = 0;
	int top = -1, r;

	r = parse_cpulist(cpulist, &set);
	if (r < 0)
		return r;
	for (int g = HWLAT_MAX_CPUS / 32 - 1; g >= 0 && top < 0; g--)
		if ((set.bits[g / 2] >> (32 * (g % 2))) & UINT32_MAX)
			top = g;
	if (top < 0)
		return -EINVAL;
	for (int g = top; g >= 0; g--) {
		uint32_t word = (uint32_t)(set.bits[g / 2] >> (32 * (g % 2)));
		int n = snprintf(buf + o, size - o, g == top ? "%x" : ",%08x", word);

		if (n < 0 || (size_t)n >= size - o)
			return -ENOBUFS;
		o += (size_t)n;
	}
	return 0;
}

int cpulist_from_cpumask(const char *mask, char *buf, size_t size)
{
	cpu_set_bits set = {};
	const char *p;
	unsigned bit = 0;
	size_t len = strlen(mask);
	char out[4096];

	if (len == 0)
		return -EINVAL;
	/* From the least significant digit, skipping the group commas. */
	for (p = mask + len; p > mask; p--) {
		char c = p[-1];
		unsigned v;

		if (c == ',')
			continue;
		if (c >= '0' && c <= '9')
			v = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v = (unsigned)(c - 'A' + 10);
		else
			return -EINVAL;
		for (unsigned i = 0; i < 4; i++, bit++)
			if (v & (1u << i)) {
				if (bit >= HWLAT_MAX_CPUS)
					return -ERANGE;
				set.bits[bit / 64] |= UINT64_C(1) << (bit % 64);
			}
	}
	format_cpulist(&set, out, sizeof(out));
	if (!out[0])
		return -EINVAL;
	if (strlen(out) >= size)
		return -ENOBUFS;
	strcpy(buf, out);
	return 0;
}

/* The literal word at *p (after spaces when spaces), then past it. */
static bool take_word(const char **p, const char *word, bool spaces)
{
	const char *s = *p;
	size_t len = strlen(word);

	if (spaces)
		while (*s == ' ')
			s++;
	if (strncmp(s, word, len) != 0)
		return false;
	*p = s + len;
	return true;
}

static int us_to_ns(uint64_t us, uint64_t *ns)
{
	if (us > UINT64_MAX / 1000)
		return -ERANGE;
	*ns = us * 1000;
	return 0;
}

static int parse_lost(const char *line, uint64_t *ret_lost)
{
	const char *p = line;
	uint64_t cpu, lost;

	if (!take_word(&p, "CPU:", false) || parse_digits(&p, &cpu) < 0 ||
	    !take_word(&p, " [LOST ", false) || parse_digits(&p, &lost) < 0 ||
	    !take_word(&p, " EVENTS]", false))
		return TRACER_LINE_OTHER;
	while (*p == ' ')
		p++;
	if (*p)
		return TRACER_LINE_OTHER;
	*ret_lost = lost;
	return TRACER_LINE_LOST;
}

/*
 * The sequence number right before the marker m ("#<seq>", padded) and the
 * CPU in the brackets before it ("[<cpu>]").
 */
static int parse_seq_cpu(const char *line, const char *m, uint64_t *seq, uint64_t *cpu)
{
	const char *p, *hash = NULL, *lb = NULL;
	int r;

	for (p = m; p > line; p--)
		if (p[-1] == '#') {
			hash = p - 1;
			break;
		}
	if (!hash)
		return -EINVAL;
	for (p = hash; p > line; p--)
		if (p[-1] == '[') {
			lb = p;
			break;
		}
	p = hash + 1;
	if (parse_digits(&p, seq) < 0)
		return -EINVAL;
	while (*p == ' ')
		p++;
	if (p != m + 1)
		return -EINVAL;
	if (!lb)
		return -EINVAL;
	p = lb;
	r = parse_digits(&p, cpu);
	if (r < 0 || *p != ']' || *cpu >= HWLAT_MAX_CPUS)
		return r < 0 ? r : -EINVAL;
	return 0;
}

/* The nanoseconds of a timestamp: exactly 9 digits. */
static int parse_nsec(const char **p, uint64_t *ret)
{
	const char *n0 = *p;
	int r = parse_digits(p, ret);

	if (r < 0)
		return r;
	return *p - n0 != 9 ? -EINVAL : 0;
}

/* The NMI fields, where the line has them: " nmi-total:<us> nmi-count:<n>". */
static int parse_nmi(const char **p, hwlat_sample *s)
{
	uint64_t v;
	int r;

	if (take_word(p, " nmi-total:", false)) {
		if ((r = parse_digits(p, &v)) < 0 || (r = us_to_ns(v, &s->nmi_ns)) < 0)
			return r;
		if (!take_word(p, " nmi-count:", false))
			return -EINVAL;
		return parse_digits(p, &s->nmi_count);
	}
	if (take_word(p, " nmi-count:", false)) {
		/* A kernel with a generic sched_clock gives no NMI time. */
		s->nmi_ns_unavailable = true;
		return parse_digits(p, &s->nmi_count);
	}
	return 0;
}

int tracer_parse_line(const char *line, hwlat_sample *ret, uint64_t *ret_lost)
{
	static const char marker[] = " inner/outer(us):";
	const char *m = strstr(line, marker), *p;
	uint64_t seq, cpu, inner, outer, sec, nsec, count;
	hwlat_sample s = {};
	int r;

	if (!m)
		return parse_lost(line, ret_lost);
	r = parse_seq_cpu(line, m, &seq, &cpu);
	if (r < 0)
		return r;
	p = m + sizeof(marker) - 1;
	while (*p == ' ')
		p++;
	if ((r = parse_digits(&p, &inner)) < 0)
		return r;
	if (!take_word(&p, "/", false) || (r = parse_digits(&p, &outer)) < 0)
		return r < 0 ? r : -EINVAL;
	if (!take_word(&p, "ts:", true) || (r = parse_digits(&p, &sec)) < 0)
		return r < 0 ? r : -EINVAL;
	if (!take_word(&p, ".", false))
		return -EINVAL;
	if ((r = parse_nsec(&p, &nsec)) < 0)
		return r;
	/*
	 * Kernels before 5.7 write no count: a line means that at least one
	 * gap exceeded the threshold, which is all that is known.
	 */
	count = 1;
	if (take_word(&p, " count:", false) && (r = parse_digits(&p, &count)) < 0)
		return r;
	if (sec > (UINT64_MAX - nsec) / 1000000000)
		return -ERANGE;

	s.seq = seq;
	s.cpu = (unsigned)cpu;
	s.timestamp_ns = sec * 1000000000 + nsec;
	s.count = count;
	if ((r = us_to_ns(inner, &s.inner_ns)) < 0 || (r = us_to_ns(outer, &s.outer_ns)) < 0)
		return r;
	if ((r = parse_nmi(&p, &s)) < 0)
		return r;
	while (*p == ' ')
		p++;
	if (*p || seq == 0)
		return -EINVAL;
	/* The tracer does not read the SMI counter. */
	s.smi_count_known = false;
	s.smi_ns_known = false;
	*ret = s;
	return TRACER_LINE_SAMPLE;
}
