// SPDX-License-Identifier: GPL-2.0-or-later
/* One journal entry's fields into a sample or a summary; see entry.h. */
#include <errno.h>
#include <string.h>

#include "entry.h"
#include "files.h"
#include "hwlat-journal.h"

/* Strict unsigned decimal from a non-terminated buffer. */
static int parse_num(const char *p, size_t len, uint64_t *ret)
{
	uint64_t v = 0;

	if (len == 0 || len > 20)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned)(p[i] - '0');

		if (d > 9)
			return -EINVAL;
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*ret = v;
	return 0;
}

static int copy_str(const char *p, size_t len, char *buf, size_t size)
{
	if (len >= size)
		len = size - 1; /* display only: truncating is harmless */
	memcpy(buf, p, len);
	buf[len] = '\0';
	return 0;
}

static int copy_id(const char *p, size_t len, char ret[ID128_LEN + 1])
{
	char buf[40];

	if (len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, p, len);
	buf[len] = '\0';
	return normalize_id128(buf, ret);
}

/* Bits of the fields a sample must carry. */
enum {
	HAVE_SCAN = 1 << 0,
	HAVE_CPU = 1 << 1,
	HAVE_LATENCY = 1 << 2,
	HAVE_TIMESTAMP = 1 << 3,
	HAVE_INNER = 1 << 4,
	HAVE_OUTER = 1 << 5,
};

#define IS(name) (nlen == sizeof(name) - 1 && memcmp(d, name, nlen) == 0)
#define NUM(name, dst, bit)                                          \
	else if (IS(name))                                           \
	{                                                            \
		if (parse_num(v, vlen, &(dst)) < 0 && !e->bad_field) \
			e->bad_field = name;                         \
		e->have |= (bit);                                    \
	}

/* Sorts one FIELD=value into e; sample and summary fields share names. */
void take_field(struct entry *e, const char *d, size_t len)
{
	const char *eq = memchr(d, '=', len);
	const char *v;
	size_t nlen, vlen;

	if (!eq)
		return;
	nlen = (size_t)(eq - d);
	v = eq + 1;
	vlen = len - nlen - 1;

	if (d[0] == '_') {
		if (IS("_BOOT_ID")) {
			if (copy_id(v, vlen, e->x.boot_id) < 0 && !e->bad_field)
				e->bad_field = "_BOOT_ID";
		} else if (IS("_MACHINE_ID")) {
			if (copy_id(v, vlen, e->x.machine_id) < 0 && !e->bad_field)
				e->bad_field = "_MACHINE_ID";
		} else if (IS("_HOSTNAME")) {
			copy_str(v, vlen, e->x.hostname, sizeof(e->x.hostname));
		}
		return;
	}
	if (IS("MESSAGE_ID")) {
		if (vlen == ID128_LEN && memcmp(v, HWLAT_SAMPLE_MESSAGE_ID, vlen) == 0)
			e->kind = KIND_SAMPLE;
		else if (vlen == ID128_LEN && memcmp(v, HWLAT_SUMMARY_MESSAGE_ID, vlen) == 0)
			e->kind = KIND_SUMMARY;
		return;
	}
	if (nlen < 6 || memcmp(d, "HWLAT_", 6) != 0)
		return;

	if (IS(HWLAT_F_SCAN_ID)) {
		if (copy_id(v, vlen, e->x.scan_id) < 0 && !e->bad_field)
			e->bad_field = HWLAT_F_SCAN_ID;
		e->have |= HAVE_SCAN;
	}
	NUM(HWLAT_F_SEQ, e->x.seq, 0)
	NUM(HWLAT_F_CPU, e->x.cpu, HAVE_CPU)
	NUM(HWLAT_F_INNER_NS, e->x.inner_ns, HAVE_INNER)
	NUM(HWLAT_F_OUTER_NS, e->x.outer_ns, HAVE_OUTER)
	NUM(HWLAT_F_LATENCY_NS, e->x.latency_ns, HAVE_LATENCY)
	NUM(HWLAT_F_COUNT, e->x.count, 0)
	NUM(HWLAT_F_NMI_COUNT, e->x.nmi_count, 0)
	NUM(HWLAT_F_NMI_NS, e->x.nmi_ns, 0)
	NUM(HWLAT_F_SMI_COUNT, e->x.smi_count, 0)
	NUM(HWLAT_F_TIMESTAMP_NS, e->x.timestamp_ns, HAVE_TIMESTAMP)
	NUM(HWLAT_F_THRESHOLD_NS, e->x.threshold_ns, 0)
	NUM(HWLAT_F_WIDTH_NS, e->s.width_ns, 0)
	NUM(HWLAT_F_WINDOW_NS, e->s.window_ns, 0)
	NUM(HWLAT_F_HARDLIMIT_NS, e->s.hardlimit_ns, 0)
	NUM(HWLAT_F_START_NS, e->s.start_ns, 0)
	NUM(HWLAT_F_DURATION_NS, e->s.duration_ns, 0)
	NUM(HWLAT_F_SAMPLES, e->s.samples, 0)
	NUM(HWLAT_F_MAX_NS, e->s.max_ns, 0)
	NUM(HWLAT_F_DROPPED, e->s.dropped, 0)
	NUM(HWLAT_F_SMI_TOTAL, e->s.smi_total, 0)
	NUM(HWLAT_F_NMI_TOTAL, e->s.nmi_total, 0)
	NUM(HWLAT_F_FLOOR_NS, e->s.floor_ns, 0)
	else if (IS(HWLAT_F_STATUS))
		copy_str(v, vlen, e->s.status, sizeof(e->s.status));
	else if (IS(HWLAT_F_MODE))
		copy_str(v, vlen, e->s.mode, sizeof(e->s.mode));
	else if (IS(HWLAT_F_CPUS))
		copy_str(v, vlen, e->s.cpus, sizeof(e->s.cpus));
	else if (IS(HWLAT_F_KERNEL))
		copy_str(v, vlen, e->s.kernel, sizeof(e->s.kernel));
	else if (IS(HWLAT_F_CPU_MODEL))
		copy_str(v, vlen, e->s.cpu_model, sizeof(e->s.cpu_model));
	else if (IS(HWLAT_F_CLOCK))
		copy_str(v, vlen, e->s.clock, sizeof(e->s.clock));
}

/* Checks a parsed entry; returns the name of what is wrong, or NULL. */
const char *entry_problem(struct entry *e)
{
	if (e->bad_field)
		return e->bad_field;
	if (!(e->have & HAVE_SCAN))
		return HWLAT_F_SCAN_ID " (missing)";
	if (e->kind == KIND_SUMMARY) {
		if (strcmp(e->s.status, HWLAT_STATUS_COMPLETED) != 0 &&
		    strcmp(e->s.status, HWLAT_STATUS_INTERRUPTED) != 0 &&
		    strcmp(e->s.status, HWLAT_STATUS_FAILED) != 0)
			return HWLAT_F_STATUS " (not completed, interrupted or failed)";
		return NULL;
	}
	if (!(e->have & HAVE_CPU))
		return HWLAT_F_CPU " (missing)";
	if (e->x.cpu >= HWLAT_MAX_CPUS)
		return HWLAT_F_CPU " (not below 1024)";
	if (!(e->have & HAVE_TIMESTAMP))
		return HWLAT_F_TIMESTAMP_NS " (missing)";
	if (!(e->have & HAVE_LATENCY)) {
		if (!(e->have & (HAVE_INNER | HAVE_OUTER)))
			return HWLAT_F_LATENCY_NS " (missing)";
		e->x.latency_ns = e->x.inner_ns > e->x.outer_ns ? e->x.inner_ns :
								  e->x.outer_ns;
	}
	return NULL;
}
