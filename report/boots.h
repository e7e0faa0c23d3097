/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Relative boots (--boot -1) as journalctl counts them: the boots that have
 * hwlat entries, ordered by the time of their first entry in the journal;
 * 0 is the newest, -1 the one before, 1 the oldest.
 */
#pragma once

#include <stdint.h>

#include "files.h"
#include "report.h"

/*
 * Writes the boot ID at offset into ret. Returns 0, -ENOENT (no boot has
 * hwlat entries), -ERANGE (no boot that far; both said on stderr) or
 * another negative errno (logged).
 */
int boot_resolve(struct journal_set *set, int64_t offset, char ret[ID128_LEN + 1]);
