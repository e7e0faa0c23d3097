// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * journal-floor: the floor of any reader of hwlat entries, for
 * bench/report-bench. Not a tool, not installed.
 *
 *   journal-floor [--match FIELD=VALUE]... FILE...
 *
 * It visits the entries hwlat-report visits and reads the fields
 * hwlat-report reads, the way hwlat-report reads them, and does nothing
 * else with them. What it mirrors of report/select.c and report/files.c:
 *
 *  - one journal file at a time (sd_journal_open_files() on that file
 *    alone), in the order given (the benchmark passes the files in the
 *    report's order, oldest first);
 *  - sd_journal_set_data_threshold(256), as journal_open() does;
 *  - the matches of add_matches(): MESSAGE_ID of a sample OR of a summary,
 *    then each --match FIELD=VALUE (the report adds _BOOT_ID= and
 *    HWLAT_SCAN_ID= matches for --boot and --scan, and for the newest scan
 *    it picks without --all; the benchmark runs the report with --all or
 *    with --compare terms that read every scan, which add none);
 *  - sd_journal_seek_head(), then sd_journal_next() to the end;
 *  - for every entry, the same enumeration of its fields that the report
 *    makes (sd_journal_restart_data() and sd_journal_enumerate_data() to
 *    the last field). The value of each field is touched (its length is
 *    summed, its last byte read) so that nothing can be skipped, and that
 *    is all: no parsing, no checks, no statistics.
 *
 * What it does not mirror: the report's choice of the newest scan (a walk
 * backwards from the tail, to the first hwlat entry: next to nothing), its
 * check that a file was read whole (a second walk only when the first met
 * fewer entries than the file's header holds, which the benchmark's
 * journal, hwlat entries only, never makes), and its bound on resident
 * memory (see release_journal_pages()).
 *
 * Prints the number of entries, of fields and of bytes of field data met.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-journal.h>

#include "hwlat-journal.h"

#define DATA_THRESHOLD 256
#define MAX_MATCHES 16

struct counts {
	uint64_t entries, fields, bytes;
	unsigned sum; /* of the last byte of every field: read, not skipped */
};

static int walk_file(const char *path, char **matches, size_t n_matches, struct counts *c)
{
	const char *paths[2] = { path, NULL };
	sd_journal *j = NULL;
	int r;

	r = sd_journal_open_files(&j, paths, 0);
	if (r < 0) {
		fprintf(stderr, "journal-floor: cannot open %s: %s\n", path, strerror(-r));
		return r;
	}
	r = sd_journal_set_data_threshold(j, DATA_THRESHOLD);
	if (r >= 0)
		r = sd_journal_add_match(j, "MESSAGE_ID=" HWLAT_SAMPLE_MESSAGE_ID, 0);
	if (r >= 0)
		r = sd_journal_add_match(j, "MESSAGE_ID=" HWLAT_SUMMARY_MESSAGE_ID, 0);
	for (size_t i = 0; r >= 0 && i < n_matches; i++)
		r = sd_journal_add_match(j, matches[i], 0);
	if (r >= 0)
		r = sd_journal_seek_head(j);
	if (r < 0) {
		fprintf(stderr, "journal-floor: cannot set up %s: %s\n", path, strerror(-r));
		goto out;
	}
	while ((r = sd_journal_next(j)) > 0) {
		const void *d;
		size_t len;

		c->entries++;
		sd_journal_restart_data(j);
		while ((r = sd_journal_enumerate_data(j, &d, &len)) > 0) {
			c->fields++;
			c->bytes += len;
			c->sum += ((const unsigned char *)d)[len - 1];
		}
		if (r < 0)
			break;
	}
	if (r < 0)
		fprintf(stderr, "journal-floor: cannot read %s: %s\n", path, strerror(-r));
out:
	sd_journal_close(j);
	return r;
}

int main(int argc, char **argv)
{
	char *matches[MAX_MATCHES];
	size_t n_matches = 0, n_files = 0;
	struct counts c = { 0 };
	int r = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--match") == 0) {
			if (++i == argc || !strchr(argv[i], '=') || n_matches == MAX_MATCHES) {
				fprintf(stderr, "journal-floor: --match needs FIELD=VALUE "
						"(at most %d)\n", MAX_MATCHES);
				return 2;
			}
			matches[n_matches++] = argv[i];
		}
	}
	for (int i = 1; r >= 0 && i < argc; i++) {
		if (strcmp(argv[i], "--match") == 0) {
			i++;
			continue;
		}
		n_files++;
		r = walk_file(argv[i], matches, n_matches, &c);
	}
	if (n_files == 0) {
		fprintf(stderr, "usage: journal-floor [--match FIELD=VALUE]... FILE...\n");
		return 2;
	}
	if (r < 0)
		return 1;
	printf("%" PRIu64 " entries, %" PRIu64 " fields, %" PRIu64 " bytes (%u)\n",
	       c.entries, c.fields, c.bytes, c.sum & 0xff);
	return 0;
}
