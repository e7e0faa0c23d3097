/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The module's per-CPU totals files for hwlat-scan (cpu-values.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu-values.h"
#include "log.h"
#include "macro.h"

const cpu_values_file cpu_values_sampled = {
	.name = "sampled", .unit = "ns", .verb = "sampled", .what = "the time sampled",
};

const cpu_values_file cpu_values_skipped = {
	.name = "skipped",
	.unit = "windows",
	.verb = "skipped",
	.what = "the windows skipped",
};

/* A bad line for a message: printable ASCII as is, the rest as '?', cut. */
static void log_bad_line(const cpu_values_file *f, const char *path, unsigned int nr,
			 const char *why, const char *s, size_t len)
{
	char shown[81];
	size_t i;

	for (i = 0; i < len && i + 1 < sizeof(shown); i++)
		shown[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	shown[i] = '\0';
	log_msg("%s line %u: %s, read '%s%s'; %s is unavailable", path, nr, why, shown,
		i < len ? "..." : "", f->what);
}

/* One line "<cpu> <value>" without its newline; false when it is not one. */
static bool parse_line(char *line, unsigned int *ret_cpu, uint64_t *ret_v, const char **why)
{
	char *sp = strchr(line, ' ');
	uint64_t cpu;
	int r = -EINVAL;

	if (sp) {
		*sp = '\0';
		r = parse_u64(line, &cpu);
		if (r >= 0)
			r = parse_u64(sp + 1, ret_v);
		*sp = ' ';
	}
	if (r < 0)
		return false;
	if (cpu >= HWLAT_MAX_CPUS) {
		*why = "CPU number out of range";
		return false;
	}
	*ret_cpu = (unsigned int)cpu;
	return true;
}

int cpu_values_parse(const cpu_values_file *f, const char *text, size_t len, const char *path,
		     cpu_values *ret)
{
	_cleanup_free_ cpu_values *t = calloc(1, sizeof(*t));
	_cleanup_free_ char *copy = malloc(len + 1);
	char expected[48];
	const char *why = NULL;
	unsigned int nr = 0, cpu = 0;
	size_t pos = 0;
	bool first = true;

	if (!t || !copy)
		return log_error_errno(-ENOMEM, "cannot read %s", path);
	snprintf(expected, sizeof(expected), "expected '<cpu> <%s>'", f->unit);
	memcpy(copy, text, len);
	copy[len] = '\0';
	while (pos < len) {
		char *line = copy + pos, *nl = memchr(line, '\n', len - pos);
		size_t llen = nl ? (size_t)(nl - line) : len - pos;
		unsigned int prev = cpu;
		uint64_t v;

		nr++;
		if (!nl)
			why = "the last line has no newline";
		else if (memchr(line, '\0', llen))
			why = "a NUL byte";
		if (why)
			goto bad;
		*nl = '\0';
		if (!parse_line(line, &cpu, &v, &why))
			why = why ? why : expected;
		else if (!first && cpu <= prev)
			why = "CPUs not in ascending order";
		else if (t->total > UINT64_MAX - v)
			why = "the sum exceeds 64 bits";
		if (why)
			goto bad;
		t->listed.bits[cpu / 64] |= UINT64_C(1) << (cpu % 64);
		t->v[cpu] = v;
		t->total += v;
		first = false;
		pos += llen + 1;
		continue;
bad:
		log_bad_line(f, path, nr, why, line, llen);
		return -EBADMSG;
	}
	*ret = *t;
	return 0;
}

int cpu_values_read(detector *d, const cpu_values_file *f, cpu_values *ret)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = malloc(CPU_VALUES_FILE_MAX);
	char path[sizeof(d->path) + 16];
	size_t len = 0;

	snprintf(path, sizeof(path), "%s/%s", d->path, f->name);
	if (!buf)
		return log_error_errno(-ENOMEM, "cannot read %s", path);
	fd = openat(d->dir_fd, f->name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 && errno == ENOENT)
		return -ENOENT;
	if (fd < 0)
		return log_error_errno(-errno, "cannot read %s; %s is unavailable", path, f->what);
	for (;;) {
		ssize_t n = read(fd, buf + len, CPU_VALUES_FILE_MAX - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return log_error_errno(-errno, "cannot read %s; %s is unavailable", path,
					       f->what);
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == CPU_VALUES_FILE_MAX) {
			log_msg("%s is longer than %d bytes; %s is unavailable", path,
				CPU_VALUES_FILE_MAX - 1, f->what);
			return -EBADMSG;
		}
	}
	return cpu_values_parse(f, buf, len, path, ret);
}

int cpu_values_since(const cpu_values_file *f, cpu_values *end, const cpu_values *start,
		     const char *path)
{
	uint64_t total = 0;

	for (unsigned int cpu = 0; cpu < HWLAT_MAX_CPUS; cpu++) {
		if (end->v[cpu] < start->v[cpu]) {
			log_msg("%s: CPU %u %s %" PRIu64 " %s at the start of the scan and %" PRIu64
				" %s at its end (was the module reloaded or restarted?); %s is "
				"unavailable",
				path, cpu, f->verb, start->v[cpu], f->unit, end->v[cpu], f->unit,
				f->what);
			return -ERANGE;
		}
	}
	for (unsigned int cpu = 0; cpu < HWLAT_MAX_CPUS; cpu++) {
		end->v[cpu] -= start->v[cpu];
		/* A CPU counts once it grew during the scan. */
		if (!end->v[cpu])
			end->listed.bits[cpu / 64] &= ~(UINT64_C(1) << (cpu % 64));
		total += end->v[cpu];
	}
	end->total = total;
	return 0;
}

char *cpu_values_format(const cpu_values *t)
{
	/* "1023:" and 20 digits and a space per CPU. */
	size_t size = (size_t)HWLAT_MAX_CPUS * 27 + 1, len = 0;
	char *buf = malloc(size);

	if (!buf)
		return NULL;
	buf[0] = '\0';
	for (unsigned int cpu = 0; cpu < HWLAT_MAX_CPUS; cpu++) {
		if (!cpu_set_has(&t->listed, cpu))
			continue;
		len += (size_t)snprintf(buf + len, size - len, "%s%u:%" PRIu64, len ? " " : "", cpu,
					t->v[cpu]);
	}
	return buf;
}
