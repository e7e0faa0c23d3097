// SPDX-License-Identifier: GPL-2.0-or-later
/* Choosing the hwlat entries and reading them; see select.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "entry.h"
#include "hwlat-journal.h"
#include "select.h"

/* Samples reach the journal a little after they happen. */
#define SINCE_SLACK_USEC (600ULL * 1000000ULL)
#define MAX_MALFORMED_SHOWN 10
/* Every this many entries, check the resident size against the budget. */
#define RSS_CHECK_ENTRIES 256
#define RSS_BUDGET (12U << 20)

static int add_match(sd_journal *j, const char *field, const char *value)
{
	char buf[128];
	int r;

	snprintf(buf, sizeof(buf), "%s=%s", field, value);
	r = sd_journal_add_match(j, buf, 0);
	if (r < 0)
		fprintf(stderr, "hwlat-report: cannot add journal match %s: %s\n",
			buf, strerror(-r));
	return r;
}

/* hwlat entries, of the --boot and --scan chosen so far. */
static int add_matches(sd_journal *j, const struct options *o, bool boot, bool scan)
{
	int r;

	r = add_match(j, "MESSAGE_ID", HWLAT_SAMPLE_MESSAGE_ID);
	if (r >= 0)
		r = add_match(j, "MESSAGE_ID", HWLAT_SUMMARY_MESSAGE_ID);
	if (r >= 0 && boot && o->have_boot)
		r = add_match(j, "_BOOT_ID", o->boot_id);
	if (r >= 0 && scan && o->have_scan)
		r = add_match(j, HWLAT_F_SCAN_ID, o->scan_id);
	return r;
}

/* Copies the value of FIELD of the current entry into buf (NUL-terminated). */
static int get_field(sd_journal *j, const char *field, char *buf, size_t size)
{
	const void *data;
	size_t len, flen = strlen(field);
	int r;

	r = sd_journal_get_data(j, field, &data, &len);
	if (r < 0)
		return r;
	if (len <= flen + 1)
		return -ENODATA;
	len -= flen + 1;
	if (len >= size)
		return -E2BIG;
	memcpy(buf, (const char *)data + flen + 1, len);
	buf[len] = '\0';
	return 0;
}

/*
 * The ID in FIELD of the newest hwlat entry (restricted to the --boot chosen
 * when boot is true) over every journal file of the set.
 */
static int newest_value(const struct journal_set *set, const struct options *o,
			const char *field, bool boot, char ret[ID128_LEN + 1])
{
	uint64_t best = 0;
	bool found = false;
	int r;

	for (size_t i = 0; i < journal_set_size(set); i++) {
		sd_journal *j = NULL;
		char buf[ID128_LEN + 8], id[ID128_LEN + 1];
		uint64_t usec;

		r = journal_open(set, i, &j);
		if (r < 0)
			return r;
		r = add_matches(j, o, boot, false);
		if (r >= 0)
			r = sd_journal_seek_tail(j);
		while (r >= 0) {
			r = sd_journal_previous(j);
			if (r <= 0)
				break;
			r = get_field(j, field, buf, sizeof(buf));
			if (r == -ENOENT || r == -ENODATA || r == -E2BIG ||
			    (r >= 0 && normalize_id128(buf, id) < 0)) {
				r = 0; /* malformed entry; the walk reports it later */
				continue;
			}
			if (r < 0)
				break;
			r = sd_journal_get_realtime_usec(j, &usec);
			if (r >= 0 && (!found || usec > best)) {
				best = usec;
				found = true;
				memcpy(ret, id, sizeof(id));
			}
			break;
		}
		sd_journal_close(j);
		if (r < 0) {
			fprintf(stderr, "hwlat-report: cannot find the newest %s: %s\n",
				field, strerror(-r));
			return r;
		}
	}
	return found ? 0 : -ENOENT;
}

int journal_select(const struct journal_set *set, struct options *o)
{
	int r;

	if (o->have_boot && o->boot_id[0] == '\0') {
		r = newest_value(set, o, "_BOOT_ID", false, o->boot_id);
		if (r < 0)
			return r;
	}
	if (!o->have_scan && !o->all && !o->have_since && !o->have_until) {
		r = newest_value(set, o, HWLAT_F_SCAN_ID, true, o->scan_id);
		if (r < 0)
			return r;
		o->have_scan = true;
	}
	return 0;
}

static void report_malformed(sd_journal *j, const char *what, uint64_t n)
{
	char *cursor = NULL;

	if (n > MAX_MALFORMED_SHOWN)
		return;
	if (sd_journal_get_cursor(j, &cursor) < 0)
		cursor = NULL;
	fprintf(stderr, "hwlat-report: skipping malformed hwlat entry %s: bad field %s\n",
		cursor ? cursor : "(no cursor)", what);
	if (n == MAX_MALFORMED_SHOWN)
		fprintf(stderr, "hwlat-report: (further malformed entries are only counted)\n");
	free(cursor);
}

/*
 * sd-journal reads the files through mmap() windows that it keeps while the
 * journal is open, and the kernel maps pages around every fault, so walking
 * a big journal would make most of it resident. Pages of our read-only
 * mappings of journal files can be dropped at any time (they stay in the
 * page cache and fault back in from the file when touched again), which
 * keeps the resident size of the walk constant however big the journal is.
 */
static size_t resident_bytes(void)
{
	unsigned long size, resident;
	FILE *f = fopen("/proc/self/statm", "re");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "%lu %lu", &size, &resident);
	fclose(f);
	return n == 2 ? resident * (size_t)sysconf(_SC_PAGESIZE) : 0;
}

static bool is_journal_path(const char *path)
{
	const char *base = strrchr(path, '/');

	return base && (strstr(base, ".journal") != NULL);
}

static void release_journal_pages(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/maps", "re");
	char line[4096 + 128];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;
		char perms[8];
		int pos = 0;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &start, &end, perms, &pos) < 3 ||
		    pos == 0)
			continue;
		/* Only mappings nobody can have written to. */
		if (perms[0] != 'r' || perms[1] != '-' || !is_journal_path(line + pos))
			continue;
		(void)madvise((void *)start, end - start, MADV_DONTNEED);
	}
}

/* Reads the chosen entries of one journal (file). */
static int read_one(sd_journal *j, const struct options *o, const struct journal_handlers *h,
		    void *userdata, uint64_t *malformed, uint64_t *entries)
{
	int r;

	r = add_matches(j, o, true, true);
	if (r < 0)
		return r;
	if (o->have_since) {
		uint64_t usec = o->since_ns / 1000;

		usec = usec > SINCE_SLACK_USEC ? usec - SINCE_SLACK_USEC : 0;
		r = sd_journal_seek_realtime_usec(j, usec);
	} else {
		r = sd_journal_seek_head(j);
	}
	if (r < 0) {
		fprintf(stderr, "hwlat-report: cannot seek in the journal: %s\n", strerror(-r));
		return r;
	}

	for (;;) {
		struct entry e;
		const void *d;
		size_t len;
		const char *problem;

		r = sd_journal_next(j);
		if (r < 0) {
			fprintf(stderr, "hwlat-report: cannot read the journal: %s\n",
				strerror(-r));
			return r;
		}
		if (r == 0)
			return 0;
		if (++*entries % RSS_CHECK_ENTRIES == 0 && resident_bytes() > RSS_BUDGET)
			release_journal_pages();

		memset(&e, 0, sizeof(e));
		SD_JOURNAL_FOREACH_DATA(j, d, len)
			take_field(&e, d, len);
		if (e.kind == KIND_NONE)
			continue;
		problem = entry_problem(&e);
		if (problem) {
			report_malformed(j, problem, ++*malformed);
			continue;
		}
		if (e.kind == KIND_SAMPLE) {
			r = h->sample(&e.x, userdata);
		} else {
			memcpy(e.s.id, e.x.scan_id, sizeof(e.s.id));
			memcpy(e.s.boot_id, e.x.boot_id, sizeof(e.s.boot_id));
			memcpy(e.s.machine_id, e.x.machine_id, sizeof(e.s.machine_id));
			memcpy(e.s.hostname, e.x.hostname, sizeof(e.s.hostname));
			e.s.threshold_ns = e.x.threshold_ns;
			e.s.has_summary = true;
			r = h->summary(&e.s, userdata);
		}
		if (r < 0)
			return r;
	}
}

int journal_read(const struct journal_set *set, const struct options *o,
		 const struct journal_handlers *h, void *userdata,
		 uint64_t *ret_malformed)
{
	uint64_t malformed = 0, entries = 0;
	int r = 0;

	/*
	 * One file at a time: sd-journal merges open files entry by entry,
	 * which costs time and memory for every file at every step, while the
	 * statistics do not depend on the order of the entries.
	 */
	for (size_t i = 0; r >= 0 && i < journal_set_size(set); i++) {
		sd_journal *j = NULL;

		r = journal_open(set, i, &j);
		if (r < 0)
			break;
		r = read_one(j, o, h, userdata, &malformed, &entries);
		sd_journal_close(j);
	}
	if (malformed > 0)
		fprintf(stderr, "hwlat-report: %" PRIu64 " malformed hwlat entr%s skipped\n",
			malformed, malformed == 1 ? "y" : "ies");
	*ret_malformed = malformed;
	return r;
}
