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
	int error; /* why it could not be opened or read (reported once), or 0 */
};

struct journal_set {
	bool local;
	struct journal_path *files;
	size_t n;
	size_t n_failed;          /* files with an error */
	bool permission_problem;  /* one failed with EACCES or EPERM */
};

/* Lists the files; logs the cause of a failure (missing directory). A
 * --file that cannot be used is named and marked failed (error), not fatal. */
int journal_set_make(const struct report_options *o, struct journal_set *ret);
void journal_set_done(struct journal_set *set);
/* The local journal counts as one. */
size_t journal_set_size(const struct journal_set *set);
/* Opens member i (with a low data threshold). Logs the cause the first time
 * and marks the file failed; a failed file is not opened again. */
int journal_open(struct journal_set *set, size_t i, sd_journal **ret);
/* Marks file i failed with error (negative errno); logs it once. */
void journal_file_failed(struct journal_set *set, size_t i, int error);
/* True when every member failed (nothing can be read). */
bool journal_set_all_failed(const struct journal_set *set);
/* Entries the header of journal file i says it holds; -errno when it cannot
 * be read or is not a journal file header, -EBUSY while a writer has it
 * open (online). */
int journal_file_entries(const struct journal_set *set, size_t i, uint64_t *ret);
/*
 * The local journal: files in /var/log/journal and /run/log/journal this
 * user cannot read. Counts them and keeps one path as an example. 0 when
 * none (or when the directories cannot be listed).
 */
size_t journal_unreadable_local(char *example, size_t size);
/* Says how to get read access to the journal (once per run). */
void journal_permission_hint(void);

/* "0123...": 32 lower-case hex digits, dashes removed; -EINVAL otherwise. */
int normalize_id128(const char *s, char ret[ID128_LEN + 1]);
