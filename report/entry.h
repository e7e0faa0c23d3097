/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One journal entry, field by field (FIELD=value as sd-journal returns it,
 * not NUL-terminated), into a sample or a summary.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "report.h"

enum kind { KIND_NONE, KIND_SAMPLE, KIND_SUMMARY };

struct entry {
	enum kind kind;
	unsigned have;           /* which required fields were seen */
	uint64_t seen;           /* which fields of the table were seen */
	unsigned message_ids;    /* MESSAGE_ID fields seen */
	struct hwlat_sample x;   /* sample fields, and the trusted fields */
	struct scan s;           /* summary fields */
	const char *bad_field;   /* first malformed field */
};

/* Sorts one FIELD=value into e (e zeroed before the first field). */
void take_field(struct entry *e, const char *d, size_t len);
/* Checks a complete entry; returns the name of what is wrong, or NULL. */
const char *entry_problem(struct entry *e);
