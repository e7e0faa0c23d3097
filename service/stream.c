/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Parsing the module's stream lines. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "parse.h"
#include "stream.h"

/* Copies the next space-separated field of *p into buf. */
static int next_field(const char **p, char *buf, size_t size, bool last)
{
	const char *s = *p, *end = strchr(s, ' ');
	size_t len;

	if (last) {
		if (end)
			return -EINVAL;
		len = strlen(s);
	} else {
		if (!end)
			return -EINVAL;
		len = (size_t)(end - s);
	}
	if (len == 0 || len >= size)
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	*p = s + len + (last ? 0 : 1);
	return 0;
}

int stream_parse_line(const char *line, hwlat_sample *ret)
{
	hwlat_sample s = {};
	uint64_t *ints[] = { &s.seq, NULL, NULL, &s.inner_ns, &s.outer_ns,
			     &s.count, &s.nmi_count, &s.nmi_ns, &s.smi_count };
	const char *p = line;
	char field[32];
	size_t i;
	int r;

	if (!line || !ret)
		return -EINVAL;

	for (i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		r = next_field(&p, field, sizeof(field),
			       i == sizeof(ints) / sizeof(ints[0]) - 1);
		if (r < 0)
			return r;

		if (i == 1) {
			uint64_t cpu;

			r = parse_u64(field, &cpu);
			if (r < 0)
				return r;
			if (cpu >= HWLAT_MAX_CPUS)
				return -ERANGE;
			s.cpu = (unsigned)cpu;
		} else if (i == 2) {
			char *dot = strchr(field, '.');
			uint64_t sec, nsec;

			if (!dot || strlen(dot + 1) != 9)
				return -EINVAL;
			*dot = '\0';
			r = parse_u64(field, &sec);
			if (r < 0)
				return r;
			r = parse_u64(dot + 1, &nsec);
			if (r < 0)
				return r;
			if (sec > (UINT64_MAX - nsec) / NSEC_PER_SEC)
				return -ERANGE;
			s.timestamp_ns = sec * NSEC_PER_SEC + nsec;
		} else {
			r = parse_u64(field, ints[i]);
			if (r < 0)
				return r;
		}
	}
	if (s.seq == 0)
		return -EINVAL;

	*ret = s;
	return 0;
}

long line_reader_read(line_reader *lr, int fd, line_cb cb, void *userdata)
{
	size_t start = 0, i;
	ssize_t n;
	int r;

	n = read(fd, lr->buf + lr->len, sizeof(lr->buf) - lr->len);
	if (n < 0)
		return -errno;
	if (n == 0)
		return lr->len ? -EBADMSG : 0;

	lr->len += (size_t)n;
	for (i = 0; i < lr->len; i++) {
		if (lr->buf[i] != '\n')
			continue;
		lr->buf[i] = '\0';
		if (i - start > STREAM_LINE_MAX ||
		    memchr(lr->buf + start, '\0', i - start)) {
			lr->len = 0;
			return -EBADMSG;
		}
		r = cb(lr->buf + start, userdata);
		if (r < 0) {
			lr->len = 0;
			return r;
		}
		start = i + 1;
	}
	memmove(lr->buf, lr->buf + start, lr->len - start);
	lr->len -= start;
	if (lr->len > STREAM_LINE_MAX) {
		lr->len = 0;
		return -EBADMSG;
	}
	return n;
}
