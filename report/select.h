/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Choosing the hwlat entries (matches, newest boot and scan) and reading them. */
#pragma once

#include "files.h"
#include "report.h"

/*
 * Resolves --boot without an ID into the newest boot with hwlat entries
 * (o->boot_id), and, unless --scan, --all, --since or --until ask
 * otherwise, chooses the newest scan (o->scan_id). Returns 0, or -ENOENT
 * when there is nothing to choose from (no hwlat entry), -EIO when no
 * journal file could be read (each failure was named on stderr).
 */
int journal_select(struct journal_set *set, struct report_options *o);

struct journal_handlers {
	int (*sample)(const struct sample_entry *x, void *userdata);
	int (*summary)(const struct scan_record *s, void *userdata);
};

/* A journal file that could not be read whole. */
struct file_problem {
	const char *path;   /* "(local)" for the local journal */
	int error;          /* negative errno: why */
	bool opened;        /* false: nothing of it was read */
	uint64_t entries;   /* hwlat entries read from it */
};

/* What the walk met besides the entries it handed over. */
struct read_result {
	uint64_t malformed;   /* entries skipped: missing, malformed or repeated field */
	uint64_t corrupt;     /* entries sd-journal could not read */
	size_t files, files_read;
	struct file_problem *problems;
	size_t n_problems;
};

void read_result_done(struct read_result *res);

/*
 * Reads every chosen entry (hwlat entries of the chosen boot and scan, from
 * --since if given), file after file, and hands it to the handlers. Entries
 * with a missing, malformed or repeated field are reported on stderr
 * (naming the entry and field) and skipped, and counted. A file that
 * cannot be opened or that sd-journal finds corrupt (an unreadable entry,
 * or fewer entries than its header holds) is named with the cause and how
 * many hwlat entries were read from it, and the walk goes on with the next.
 * Returns -EIO when no file could be read at all.
 * A handler's negative return stops the walk and is returned.
 */
int journal_read(struct journal_set *set, const struct report_options *o,
		 const struct journal_handlers *h, void *userdata,
		 struct read_result *res);
