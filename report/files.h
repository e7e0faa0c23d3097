/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The journal to read: the local one, or the files of --file or
 * --directory (with its machine-ID subdirectories), oldest first, each file
 * once, each opened on its own.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-journal.h>

#include "report.h"

struct journal_path {
	char *path;
	dev_t dev;
	ino_t ino;
	uint64_t mtime_ns;
};

struct journal_set {
	bool local;
	struct journal_path *files;
	size_t n;
};

/* Lists the files; logs the cause of a failure (missing file, directory). */
int journal_set_make(const struct options *o, struct journal_set *ret);
void journal_set_done(struct journal_set *set);
/* The local journal counts as one. */
size_t journal_set_size(const struct journal_set *set);
/* Opens member i (with a low data threshold). Logs the cause. */
int journal_open(const struct journal_set *set, size_t i, sd_journal **ret);

/* "0123...": 32 lower-case hex digits, dashes removed; -EINVAL otherwise. */
int normalize_id128(const char *s, char ret[ID128_LEN + 1]);
