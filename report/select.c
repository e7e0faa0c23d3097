// SPDX-License-Identifier: GPL-2.0-or-later
/* Choosing the hwlat entries and reading them; see select.h. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "coverage.h"
#include "entry.h"
#include "hwlat-journal.h"
#include "log.h"
#include "select.h"

/* Samples reach the journal a little after they happen. */
#define SINCE_SLACK_USEC (600ULL * 1000000ULL)
#define MAX_MALFORMED_SHOWN 10
/* Every this many entries, check the resident size against the budget. */
#define RSS_CHECK_ENTRIES 256
/*
 * The walk's bound on its resident size. It counts everything resident, so
 * it must leave sd-journal's windows room beside what the walk keeps: the
 * program itself (about 4 MiB) and the window times of the period (8 bytes
 * each, at most COVERAGE_MAX_TIMES). With less room the walk drops its
 * pages every few hundred entries and faults the values that entries
 * share back in each time, a cost in the kernel that a busy machine makes
 * dearer (docs/design.md, "The report's memory bound"). 32 MiB leaves the
 * journal 20 MiB at the least and stays below what a bare sd-journal walk
 * holds of a 32 MB journal file (44 MB: its windows overlap).
 */
#define RSS_BUDGET (32U << 20)
#define RSS_JOURNAL_ROOM_MIN (20U << 20)
static_assert(RSS_BUDGET >=
		      (4U << 20) + COVERAGE_MAX_TIMES * sizeof(uint64_t) + RSS_JOURNAL_ROOM_MIN,
	      "the walk's budget must leave the journal's pages room beside the window times");

static int add_match(sd_journal *j, const char *field, const char *value)
{
	char buf[128];
	int r;

	snprintf(buf, sizeof(buf), "%s=%s", field, value);
	r = sd_journal_add_match(j, buf, 0);
	if (r < 0)
		log_error_errno(r, "cannot add journal match %s", buf);
	return r;
}

/* hwlat entries, of the --boot and --scan chosen so far. */
static int add_matches(sd_journal *j, const struct report_options *o, bool boot, bool scan)
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

/* The monitor runs for weeks and is no scan: its entries say so. */
static bool is_monitor_entry(sd_journal *j)
{
	char buf[8];

	return get_field(j, HWLAT_F_MONITOR, buf, sizeof(buf)) >= 0;
}

/*
 * The ID in FIELD of the newest hwlat entry (restricted to the --boot chosen
 * when boot is true) over every journal file of the set; for the newest scan,
 * the monitor's entries are passed by.
 */
static int newest_value(struct journal_set *set, const struct report_options *o,
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
		if (r < 0 && !set->local)
			continue; /* named; the others may still be read */
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
			if (strcmp(field, HWLAT_F_SCAN_ID) == 0 && is_monitor_entry(j))
				continue;
			r = sd_journal_get_realtime_usec(j, &usec);
			if (r >= 0 && (!found || usec > best)) {
				best = usec;
				found = true;
				memcpy(ret, id, sizeof(id));
			}
			break;
		}
		sd_journal_close(j);
		if (r < 0 && !set->local) {
			journal_file_failed(set, i, r);
			continue;
		}
		if (r < 0) {
			log_error_errno(r, "cannot find the newest %s", field);
			return r;
		}
	}
	if (journal_set_all_failed(set))
		return -EIO;
	return found ? 0 : -ENOENT;
}

int journal_select(struct journal_set *set, struct report_options *o)
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
	log_msg("skipping malformed hwlat entry %s: bad field %s", cursor ? cursor : "(no cursor)",
		what);
	if (n == MAX_MALFORMED_SHOWN)
		log_msg("(further malformed entries are only counted)");
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

/* A read-only mapping of a journal file: nobody can have written to it. */
static bool is_journal_mapping(const char *line, unsigned long *start, unsigned long *end)
{
	/* The file name: no field before the path holds a '/'. */
	const char *base = strrchr(line, '/'), *perms;
	char *p;

	if (!base || !strstr(base, ".journal"))
		return false;
	*start = strtoul(line, &p, 16);
	if (*p != '-')
		return false;
	*end = strtoul(p + 1, &p, 16);
	perms = p + strspn(p, " ");
	return *p == ' ' && perms[0] == 'r' && perms[1] == '-' && *end > *start;
}

static void release_journal_pages(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/maps", "re");
	char line[4096 + 128];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;

		line[strcspn(line, "\n")] = '\0';
		if (is_journal_mapping(line, &start, &end))
			(void)madvise((void *)start, end - start, MADV_DONTNEED);
	}
}

/* Notes that file i (or the local journal) could not be read whole. */
static int add_problem(struct read_result *res, const struct journal_set *set, size_t i,
		       int error, bool opened, uint64_t entries)
{
	struct file_problem *p = realloc(res->problems, (res->n_problems + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	res->problems = p;
	p[res->n_problems++] = (struct file_problem){
		.path = set->local ? "(local)" : set->files[i].path,
		.error = error,
		.opened = opened,
		.entries = entries,
	};
	if (opened)
		log_msg("journal %s is corrupt (%s): read %" PRIu64 " hwlat entr%s of it; the rest "
			"cannot be read", p[res->n_problems - 1].path, strerror(-error), entries,
			entries == 1 ? "y" : "ies");
	return 0;
}

void read_result_done(struct read_result *res)
{
	free(res->problems);
	memset(res, 0, sizeof(*res));
}

/*
 * sd-journal drops a file it finds corrupt in the middle of a walk, or
 * skips what it cannot follow, without telling: the walk just ends early.
 * Two checks find that out: the file still belongs to the journal (its
 * usage is not 0), and a walk over all its entries meets as many as its
 * header holds; that second walk is saved when the walk of the hwlat
 * entries (walked) already met them all. Returns 0 or -EBADMSG.
 */
static int check_whole(sd_journal *j, const struct journal_set *set, size_t i, uint64_t walked)
{
	uint64_t usage = 0, header_entries, n = 0;
	int r;

	r = sd_journal_get_usage(j, &usage);
	if (r >= 0 && usage == 0)
		return -EBADMSG;
	if (set->local || journal_file_entries(set, i, &header_entries) < 0)
		return 0;
	if (walked >= header_entries)
		return 0;
	sd_journal_flush_matches(j);
	r = sd_journal_seek_head(j);
	while (r >= 0 && (r = sd_journal_next(j)) > 0)
		if (++n % RSS_CHECK_ENTRIES == 0 && resident_bytes() > RSS_BUDGET)
			release_journal_pages();
	if (r < 0)
		return r;
	return n < header_entries ? -EBADMSG : 0;
}

/* Reads the chosen entries of one journal (file); *ret_error tells why it
 * could not be read whole, *entries counts its hwlat entries, *ret_walked
 * the entries the walk met. */
static int read_one(sd_journal *j, const struct report_options *o, const struct journal_handlers *h,
		    void *userdata, struct read_result *res, uint64_t *entries, int *ret_error,
		    uint64_t *ret_walked)
{
	uint64_t walked = 0;
	int r;

	*ret_error = 0;
	*ret_walked = 0;
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
		log_error_errno(r, "cannot seek in the journal");
		return r;
	}

	for (;;) {
		struct entry e;
		const void *d;
		size_t len;
		const char *problem;

		r = sd_journal_next(j);
		if (r < 0) {
			*ret_error = r;
			return 0;
		}
		if (r == 0)
			return 0;
		*ret_walked = ++walked;
		if (walked % RSS_CHECK_ENTRIES == 0 && resident_bytes() > RSS_BUDGET)
			release_journal_pages();

		entry_reset(&e);
		sd_journal_restart_data(j);
		while ((r = sd_journal_enumerate_data(j, &d, &len)) > 0)
			take_field(&e, d, len);
		if (r < 0) {
			/* A damaged object: the entry cannot be trusted. */
			res->corrupt++;
			*ret_error = r;
			continue;
		}
		if (e.kind == KIND_NONE)
			continue;
		(*entries)++;
		problem = entry_problem(&e);
		if (problem) {
			report_malformed(j, problem, ++res->malformed);
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

int journal_read(struct journal_set *set, const struct report_options *o,
		 const struct journal_handlers *h, void *userdata,
		 struct read_result *res)
{
	int r = 0;

	memset(res, 0, sizeof(*res));
	res->files = journal_set_size(set);
	/*
	 * One file at a time: sd-journal merges open files entry by entry,
	 * which costs time and memory for every file at every step, while the
	 * statistics do not depend on the order of the entries.
	 */
	for (size_t i = 0; r >= 0 && i < journal_set_size(set); i++) {
		sd_journal *j = NULL;
		uint64_t entries = 0, walked = 0;
		int error = 0;

		r = journal_open(set, i, &j);
		if (r < 0 && !set->local) {
			r = add_problem(res, set, i, r, false, 0);
			continue;
		}
		if (r < 0)
			break;
		r = read_one(j, o, h, userdata, res, &entries, &error, &walked);
		if (r >= 0 && error == 0)
			error = check_whole(j, set, i, walked);
		sd_journal_close(j);
		if (r >= 0)
			res->files_read++;
		if (r >= 0 && error < 0)
			r = add_problem(res, set, i, error, true, entries);
	}
	if (res->malformed > 0)
		log_msg("%" PRIu64 " malformed hwlat entr%s skipped", res->malformed,
			res->malformed == 1 ? "y" : "ies");
	if (r >= 0 && res->files_read == 0 && res->files > 0)
		r = -EIO;
	return r;
}
