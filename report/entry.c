// SPDX-License-Identifier: GPL-2.0-or-later
/* One journal entry's fields into a sample or a summary; see entry.h. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "coverage.h"
#include "entry.h"
#include "escape.h"
#include "files.h"
#include "hwlat-journal.h"

/* Strict unsigned decimal from a non-terminated buffer. */
static int parse_num(const char *p, size_t len, uint64_t *ret)
{
	uint64_t v = 0;
	size_t i, safe = len < 19 ? len : 19;
	unsigned d;

	if (len == 0 || len > 20)
		return -EINVAL;
	/* Nineteen digits cannot overflow: only a twentieth is checked (a
	 * million samples are ten million numbers). */
	for (i = 0; i < safe; i++) {
		d = (unsigned)(p[i] - '0');
		if (d > 9)
			return -EINVAL;
		v = v * 10 + d;
	}
	if (i < len) {
		d = (unsigned)(p[i] - '0');
		if (d > 9)
			return -EINVAL;
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*ret = v;
	return 0;
}

/* Display only: a value longer than the buffer is cut, harmlessly, and never
 * in the middle of a UTF-8 character. */
static void copy_str(const char *p, size_t len, char *buf, size_t size)
{
	if (len >= size)
		len = utf8_cut(p, len, size - 1);
	memcpy(buf, p, len);
	buf[len] = '\0';
}

/* 32 lowercase hex digits? All are looked at, with no branch per digit:
 * the compiler may then check many at once. */
static bool is_normal_id(const char *p)
{
	unsigned bad = 0;

	for (size_t i = 0; i < ID128_LEN; i++) {
		unsigned char c = (unsigned char)p[i];

		bad |= (unsigned char)(c - '0') > 9 && (unsigned char)(c - 'a') > 5;
	}
	return bad == 0;
}

static int copy_id(const char *p, size_t len, char ret[ID128_LEN + 1])
{
	char buf[40];

	/* The form the journal writes (32 lowercase hex digits) is already
	 * normal: copy it. Anything else goes through sd-id128. */
	if (len == ID128_LEN && is_normal_id(p)) {
		memcpy(ret, p, len);
		ret[len] = '\0';
		return 0;
	}
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

enum field_type {
	FIELD_NUM, /* strict decimal into a uint64_t; malformed: bad_field */
	FIELD_MAYBE, /* FIELD_NUM, or "unavailable": the flag says which */
	FIELD_ID,  /* 128-bit id into char[ID128_LEN + 1]; malformed: bad_field */
	FIELD_STR, /* text, cut to its buffer */
};

/* One field the report reads: where its value goes in struct entry. */
struct field {
	const char *name;
	size_t name_len;
	enum field_type type;
	size_t offset, size; /* of the member of struct entry */
	unsigned have;       /* HAVE_* bit it sets, even when malformed */
	size_t flag;         /* 0 or a bool of struct entry: a FIELD_MAYBE was a
				number, another field was present */
	const char *repeated; /* "NAME (repeated)" */
};

#define FIELD(name, type, member, have)                                         \
	{ name, sizeof(name) - 1, type, offsetof(struct entry, member),          \
	  sizeof(((struct entry *)0)->member), have, 0, name " (repeated)" }
#define FIELD_FLAG(name, type, member, flag_member)                             \
	{ name, sizeof(name) - 1, type, offsetof(struct entry, member),          \
	  sizeof(((struct entry *)0)->member), 0, offsetof(struct entry, flag_member), \
	  name " (repeated)" }

/* Sample and summary fields share names (HWLAT_THRESHOLD_NS). */
static const struct field fields[] = {
	FIELD("_BOOT_ID", FIELD_ID, x.boot_id, 0),
	FIELD("_MACHINE_ID", FIELD_ID, x.machine_id, 0),
	FIELD("_HOSTNAME", FIELD_STR, x.hostname, 0),
	FIELD(HWLAT_F_SCAN_ID, FIELD_ID, x.scan_id, HAVE_SCAN),
	FIELD(HWLAT_F_SEQ, FIELD_NUM, x.seq, 0),
	FIELD(HWLAT_F_CPU, FIELD_NUM, x.cpu, HAVE_CPU),
	FIELD(HWLAT_F_INNER_NS, FIELD_NUM, x.inner_ns, HAVE_INNER),
	FIELD(HWLAT_F_OUTER_NS, FIELD_NUM, x.outer_ns, HAVE_OUTER),
	FIELD(HWLAT_F_LATENCY_NS, FIELD_NUM, x.latency_ns, HAVE_LATENCY),
	FIELD(HWLAT_F_COUNT, FIELD_NUM, x.count, 0),
	FIELD(HWLAT_F_NMI_COUNT, FIELD_NUM, x.nmi_count, 0),
	FIELD_FLAG(HWLAT_F_NMI_NS, FIELD_MAYBE, x.nmi_ns, x.nmi_ns_known),
	FIELD_FLAG(HWLAT_F_SMI_COUNT, FIELD_MAYBE, x.smi_count, x.smi_count_known),
	FIELD_FLAG(HWLAT_F_SMI_NS, FIELD_MAYBE, x.smi_ns, x.smi_ns_known),
	FIELD(HWLAT_F_TIMESTAMP_NS, FIELD_NUM, x.timestamp_ns, HAVE_TIMESTAMP),
	FIELD(HWLAT_F_THRESHOLD_NS, FIELD_NUM, x.threshold_ns, 0),
	FIELD(HWLAT_F_WIDTH_NS, FIELD_NUM, s.width_ns, 0),
	FIELD(HWLAT_F_WINDOW_NS, FIELD_NUM, s.window_ns, 0),
	FIELD(HWLAT_F_HARDLIMIT_NS, FIELD_NUM, s.hardlimit_ns, 0),
	FIELD(HWLAT_F_START_NS, FIELD_NUM, s.start_ns, 0),
	FIELD(HWLAT_F_DURATION_NS, FIELD_NUM, s.duration_ns, 0),
	FIELD(HWLAT_F_SAMPLES, FIELD_NUM, s.samples, 0),
	FIELD(HWLAT_F_MAX_NS, FIELD_NUM, s.max_ns, 0),
	FIELD(HWLAT_F_DROPPED, FIELD_NUM, s.dropped, 0),
	FIELD_FLAG(HWLAT_F_SMI_TOTAL, FIELD_MAYBE, s.smi_total, s.smi_total_known),
	FIELD(HWLAT_F_SMI_METHOD, FIELD_STR, s.smi_method, 0),
	FIELD(HWLAT_F_SMI_UNAVAILABLE, FIELD_STR, s.smi_unavailable, 0),
	FIELD(HWLAT_F_HYPERVISOR, FIELD_STR, s.hypervisor, 0),
	FIELD(HWLAT_F_CLOCKSOURCE, FIELD_STR, s.clocksource, 0),
	FIELD(HWLAT_F_TSC_STABLE, FIELD_STR, s.tsc_stable, 0),
	FIELD_FLAG(HWLAT_F_CPUS_EXCLUDED, FIELD_STR, s.cpus_excluded, s.has_cpus_excluded),
	FIELD(HWLAT_F_NMI_TOTAL, FIELD_NUM, s.nmi_total, 0),
	FIELD_FLAG(HWLAT_F_FLOOR_NS, FIELD_MAYBE, s.floor_ns, s.floor_known),
	FIELD(HWLAT_F_BACKEND, FIELD_STR, s.backend, 0),
	FIELD(HWLAT_F_STATUS, FIELD_STR, s.status, 0),
	FIELD(HWLAT_F_MODE, FIELD_STR, s.mode, 0),
	FIELD(HWLAT_F_CPUS, FIELD_STR, s.cpus, 0),
	FIELD(HWLAT_F_KERNEL, FIELD_STR, s.kernel, 0),
	FIELD(HWLAT_F_CPU_MODEL, FIELD_STR, s.cpu_model, 0),
	FIELD(HWLAT_F_CLOCK, FIELD_STR, s.clock, 0),
	/* Machine identity. */
	FIELD(HWLAT_F_SYS_VENDOR, FIELD_STR, s.sys_vendor, 0),
	FIELD(HWLAT_F_PRODUCT_NAME, FIELD_STR, s.product_name, 0),
	FIELD(HWLAT_F_BOARD_VENDOR, FIELD_STR, s.board_vendor, 0),
	FIELD(HWLAT_F_BOARD_NAME, FIELD_STR, s.board_name, 0),
	FIELD(HWLAT_F_BIOS_VENDOR, FIELD_STR, s.bios_vendor, 0),
	FIELD(HWLAT_F_BIOS_VERSION, FIELD_STR, s.bios_version, 0),
	FIELD(HWLAT_F_BIOS_DATE, FIELD_STR, s.bios_date, 0),
	FIELD(HWLAT_F_MICROCODE, FIELD_STR, s.microcode, 0),
	FIELD(HWLAT_F_CPU_COUNT, FIELD_STR, s.cpu_count_text, 0),
	/* Time sampled; checked in entry_problem(). */
	FIELD(HWLAT_F_SAMPLED_NS, FIELD_STR, s.sampled_text, 0),
	FIELD_FLAG(HWLAT_F_SAMPLED_CPU_NS, FIELD_STR, sampled_cpu, s.has_sampled_cpu),
	FIELD(HWLAT_F_SKIPPED_WINDOWS, FIELD_STR, s.skipped_text, 0),
	FIELD_FLAG(HWLAT_F_SKIPPED_CPU_WINDOWS, FIELD_STR, skipped_cpu, s.has_skipped_cpu),
	FIELD(HWLAT_F_SMI_SCOPE, FIELD_STR, s.smi_scope, 0),
};

_Static_assert(ELEMENTSOF(fields) <= 64, "struct entry's seen has 64 bits");

/*
 * The table by name: an open-addressing hash table of indexes into fields[]
 * (+1; 0 is an empty slot), filled at the first lookup, so that a field is
 * found with one comparison of its name, not one per row of the table (a
 * million samples have twenty million fields).
 */
#define N_FIELDS (ELEMENTSOF(fields))
#define LOOKUP_SIZE 256 /* a power of two, well above N_FIELDS */
_Static_assert(N_FIELDS < LOOKUP_SIZE / 2, "the lookup table must stay sparse");

static unsigned name_hash(const char *d, size_t n)
{
	unsigned h = (unsigned)n;

	h = h * 131 + (unsigned char)d[n - 1];
	h = h * 131 + (unsigned char)d[n / 2];
	h = h * 131 + (unsigned char)d[n > 7 ? 7 : 0];
	return h;
}

/* Two names of n bytes, a word at a time (the last word overlapping the
 * one before), without a call to memcmp() for every field. */
static bool same_name(const char *a, const char *b, size_t n)
{
	uint64_t x, y;

	if (n < sizeof(x))
		return memcmp(a, b, n) == 0;
	for (size_t i = 0; i + sizeof(x) < n; i += sizeof(x)) {
		memcpy(&x, a + i, sizeof(x));
		memcpy(&y, b + i, sizeof(y));
		if (x != y)
			return false;
	}
	memcpy(&x, a + n - sizeof(x), sizeof(x));
	memcpy(&y, b + n - sizeof(y), sizeof(y));
	return x == y;
}

static int field_index(const char *d, size_t nlen)
{
	static unsigned char slots[LOOKUP_SIZE];
	static bool filled;
	unsigned h;

	if (!filled) {
		for (size_t i = 0; i < N_FIELDS; i++) {
			h = name_hash(fields[i].name, fields[i].name_len);
			while (slots[h % LOOKUP_SIZE])
				h++;
			slots[h % LOOKUP_SIZE] = (unsigned char)(i + 1);
		}
		filled = true;
	}
	for (h = name_hash(d, nlen); slots[h % LOOKUP_SIZE]; h++) {
		const struct field *f = &fields[slots[h % LOOKUP_SIZE] - 1];

		if (f->name_len == nlen && same_name(d, f->name, nlen))
			return slots[h % LOOKUP_SIZE] - 1;
	}
	return -1;
}

void entry_reset(struct entry *e)
{
	memset(e, 0, offsetof(struct entry, s));
}

/* The summary part, cleared once per entry before its first field. */
static void need_summary(struct entry *e)
{
	if (!e->s_zeroed) {
		memset(&e->s, 0, sizeof(e->s));
		e->s_zeroed = true;
	}
}

static void take_value(struct entry *e, size_t index, const char *v, size_t vlen)
{
	static const char unavailable[] = HWLAT_UNAVAILABLE;
	const struct field *f = &fields[index];
	char *dst = (char *)e + f->offset;
	bool *flag = f->flag ? (bool *)((char *)e + f->flag) : NULL;
	int r = 0;

	/* A field given twice: which value is meant is unknowable (a 5 us
	 * sample and a 900 ms one, two scan IDs), so the entry is malformed. */
	if (e->seen & (UINT64_C(1) << index)) {
		if (!e->bad_field)
			e->bad_field = f->repeated;
		return;
	}
	e->seen |= UINT64_C(1) << index;
	if (f->offset >= offsetof(struct entry, s))
		need_summary(e);

	switch (f->type) {
	case FIELD_NUM:
		r = parse_num(v, vlen, (uint64_t *)(void *)dst);
		break;
	case FIELD_MAYBE:
		if (vlen == sizeof(unavailable) - 1 && memcmp(v, unavailable, vlen) == 0) {
			*flag = false;
			*(uint64_t *)(void *)dst = 0;
			break;
		}
		r = parse_num(v, vlen, (uint64_t *)(void *)dst);
		*flag = r >= 0;
		break;
	case FIELD_ID:
		r = copy_id(v, vlen, dst);
		break;
	case FIELD_STR:
		copy_str(v, vlen, dst, f->size);
		if (flag)
			*flag = true;
		break;
	}
	if (r < 0 && !e->bad_field)
		e->bad_field = f->name;
	e->have |= f->have;
}

/* Sorts one FIELD=value into e. */
void take_field(struct entry *e, const char *d, size_t len)
{
	static const char message_id[] = "MESSAGE_ID";
	const char *eq = memchr(d, '=', len);
	const char *v;
	size_t nlen, vlen;
	int i;

	if (!eq)
		return;
	nlen = (size_t)(eq - d);
	v = eq + 1;
	vlen = len - nlen - 1;

	if (nlen == sizeof(message_id) - 1 && memcmp(d, message_id, nlen) == 0) {
		e->message_ids++;
		if (vlen == ID128_LEN && memcmp(v, HWLAT_SAMPLE_MESSAGE_ID, vlen) == 0)
			e->kind = KIND_SAMPLE;
		else if (vlen == ID128_LEN && memcmp(v, HWLAT_SUMMARY_MESSAGE_ID, vlen) == 0)
			e->kind = KIND_SUMMARY;
		return;
	}
	/* The table holds trusted (_) and HWLAT_ fields only: skip others fast. */
	if (d[0] != '_' && (nlen < 6 || memcmp(d, "HWLAT_", 6) != 0))
		return;
	i = field_index(d, nlen);
	if (i >= 0)
		take_value(e, (size_t)i, v, vlen);
}

/* Checks a parsed entry; returns the name of what is wrong, or NULL. */
const char *entry_problem(struct entry *e)
{
	if (e->message_ids > 1)
		return "MESSAGE_ID (repeated)";
	if (e->bad_field)
		return e->bad_field;
	if (!(e->have & HAVE_SCAN))
		return HWLAT_F_SCAN_ID " (missing)";
	if (e->kind == KIND_SUMMARY) {
		need_summary(e);
		if (strcmp(e->s.status, HWLAT_STATUS_COMPLETED) != 0 &&
		    strcmp(e->s.status, HWLAT_STATUS_INTERRUPTED) != 0 &&
		    strcmp(e->s.status, HWLAT_STATUS_FAILED) != 0)
			return HWLAT_F_STATUS " (not completed, interrupted or failed)";
		/* Not recorded (empty), unavailable, or a number. */
		e->s.cpu_count_known = parse_u64(e->s.cpu_count_text, &e->s.cpu_count) == 0;
		if (e->s.cpu_count_text[0] && !e->s.cpu_count_known &&
		    strcmp(e->s.cpu_count_text, HWLAT_UNAVAILABLE) != 0)
			return HWLAT_F_CPU_COUNT " (neither a number nor unavailable)";
		if (e->s.has_sampled_cpu && strlen(e->sampled_cpu) == sizeof(e->sampled_cpu) - 1)
			return HWLAT_F_SAMPLED_CPU_NS " (too long)";
		if (e->s.has_skipped_cpu && strlen(e->skipped_cpu) == sizeof(e->skipped_cpu) - 1)
			return HWLAT_F_SKIPPED_CPU_WINDOWS " (too long)";
		e->s.sampled_cpu_text = e->s.has_sampled_cpu ? e->sampled_cpu : NULL;
		e->s.skipped_cpu_text = e->s.has_skipped_cpu ? e->skipped_cpu : NULL;
		return sampled_problem(&e->s);
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
