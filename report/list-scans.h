/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * --list-scans: one line (or JSON object) per scan, oldest first, like
 * journalctl --list-boots: id, host, boot, start, duration, status, max.
 */
#pragma once

#include "files.h"
#include "report.h"

/* Returns 0, -ENOENT when no scan matches (said on stderr), or a negative
 * errno (logged). */
int list_scans(struct journal_set *set, struct report_options *o);
