/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The module's `sampled` file for hwlat-scan (sampled.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwlat-journal.h"
#include "sampled.h"
#include "log.h"
#include "macro.h"

/* A bad line for a message: printable ASCII as is, the rest as '?', cut. */
static void log_bad_line(const char *path, unsigned int nr, const char *why, const char *s,
			 size_t len)
{
	char shown[81];
	size_t i;

	for (i = 0; i < len && i + 1 < sizeof(shown); i++)
		shown[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	shown[i] = '\0';
	log_msg("%s line %u: %s, read '%s%s'; the time sampled is unavailable", path, nr, why,
		shown, i < len ? "..." : "");
}

/* One line "<cpu> <ns>" without its newline, NUL-terminated in place. */
static const char *parse_line(char *line, unsigned int *ret_cpu, uint64_t *ret_ns)
{
	char *sp = strchr(line, ' ');
	uint64_t cpu;

	if (!sp)
		return "expected '<cpu> <ns>'";
	*sp = '\0';
	if (parse_u64(line, &cpu) < 0 || parse_u64(sp + 1, ret_ns) < 0) {
		*sp = ' ';
		return "expected '<cpu> <ns>'";
	}
	*sp = ' ';
	if (cpu >= HWLAT_MAX_CPUS)
		return "CPU number out of range";
	*ret_cpu = (unsigned int)cpu;
	return NULL;
}

int sampled_parse(const char *text, size_t len, const char *path, sampled_time *ret)
{
	_cleanup_free_ sampled_time *t = calloc(1, sizeof(*t));
	_cleanup_free_ char *copy = malloc(len + 1);
	const char *why = NULL;
	unsigned int nr = 0, cpu = 0;
	size_t pos = 0;
	bool first = true;

	if (!t || !copy)
		return log_error_errno(-ENOMEM, "cannot read %s", path);
	memcpy(copy, text, len);
	copy[len] = '\0';
	while (pos < len) {
		char *line = copy + pos, *nl = memchr(line, '\n', len - pos);
		size_t llen = nl ? (size_t)(nl - line) : len - pos;
		unsigned int prev = cpu;
		uint64_t ns;

		nr++;
		if (!nl)
			why = "the last line has no newline";
		else if (memchr(line, '\0', llen))
			why = "a NUL byte";
		if (why)
			goto bad;
		*nl = '\0';
		why = parse_line(line, &cpu, &ns);
		if (!why && !first && cpu <= prev)
			why = "CPUs not in ascending order";
		if (!why && t->total_ns > UINT64_MAX - ns)
			why = "the sum exceeds 64 bits";
		if (why)
			goto bad;
		t->listed.bits[cpu / 64] |= UINT64_C(1) << (cpu % 64);
		t->ns[cpu] = ns;
		t->total_ns += ns;
		first = false;
		pos += llen + 1;
		continue;
bad:
		log_bad_line(path, nr, why, line, llen);
		return -EBADMSG;
	}
	*ret = *t;
	return 0;
}

int sampled_read(detector *d, sampled_time *ret)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = malloc(SAMPLED_FILE_MAX);
	char path[sizeof(d->path) + sizeof(SAMPLED_FILE) + 1];
	size_t len = 0;

	snprintf(path, sizeof(path), "%s/%s", d->path, SAMPLED_FILE);
	if (!buf)
		return log_error_errno(-ENOMEM, "cannot read %s", path);
	fd = openat(d->dir_fd, SAMPLED_FILE, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 && errno == ENOENT)
		return -ENOENT;
	if (fd < 0)
		return log_error_errno(-errno, "cannot read %s; the time sampled is unavailable", path);
	for (;;) {
		ssize_t n = read(fd, buf + len, SAMPLED_FILE_MAX - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return log_error_errno(-errno, "cannot read %s; the time sampled is unavailable",
					 path);
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == SAMPLED_FILE_MAX) {
			log_msg("%s is longer than %d bytes; the time sampled is unavailable", path,
				SAMPLED_FILE_MAX - 1);
			return -EBADMSG;
		}
	}
	return sampled_parse(buf, len, path, ret);
}

int sampled_since(sampled_time *end, const sampled_time *start, const char *path)
{
	uint64_t total = 0;

	for (unsigned int cpu = 0; cpu < HWLAT_MAX_CPUS; cpu++) {
		if (end->ns[cpu] < start->ns[cpu]) {
			log_msg("%s: CPU %u sampled %" PRIu64 " ns at the start of the scan and %" PRIu64
				" ns at its end (was the module reloaded or restarted?); the time "
				"sampled is unavailable",
				path, cpu, start->ns[cpu], end->ns[cpu]);
			return -ERANGE;
		}
	}
	for (unsigned int cpu = 0; cpu < HWLAT_MAX_CPUS; cpu++) {
		end->ns[cpu] -= start->ns[cpu];
		/* A CPU counts once it sampled during the scan. */
		if (!end->ns[cpu])
			end->listed.bits[cpu / 64] &= ~(UINT64_C(1) << (cpu % 64));
		total += end->ns[cpu];
	}
	end->total_ns = total;
	return 0;
}

uint64_t sampled_smi_ns(const sampled_time *t, const char *method)
{
	uint64_t max = 0;

	if (strcmp(method, HWLAT_SMI_METHOD_MAX_PER_CPU) != 0)
		return t->total_ns;
	for (unsigned int cpu = 0; cpu < HWLAT_MAX_CPUS; cpu++)
		if (t->ns[cpu] > max)
			max = t->ns[cpu];
	return max;
}

char *sampled_format_cpus(const sampled_time *t)
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
					t->ns[cpu]);
	}
	return buf;
}
