/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Choosing the hwlat entries (matches, newest boot and scan) and reading them. */
#pragma once

#include "files.h"
#include "report.h"

/*
 * Resolves --boot without an ID into the newest boot with hwlat entries
 * (o->boot_id), and, unless --scan, --all, --since or --until ask
 * otherwise, chooses the newest scan (o->scan_id). Returns 0, or -ENOENT
 * when there is nothing to choose from (no hwlat entry).
 */
int journal_select(const struct journal_set *set, struct options *o);

struct journal_handlers {
	int (*sample)(const struct hwlat_sample *x, void *userdata);
	int (*summary)(const struct scan *s, void *userdata);
};

/*
 * Reads every chosen entry (hwlat entries of the chosen boot and scan, from
 * --since if given), file after file, and hands it to the handlers. Entries
 * with a missing or malformed field are reported on stderr (naming the entry
 * and field) and skipped; *ret_malformed counts them.
 * A handler's negative return stops the walk and is returned.
 */
int journal_read(const struct journal_set *set, const struct options *o,
		 const struct journal_handlers *h, void *userdata,
		 uint64_t *ret_malformed);
