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
	struct sample_entry x;   /* sample fields, and the trusted fields */
	const char *bad_field;   /* first malformed field */
	bool s_zeroed;           /* s was cleared for this entry */
	struct scan_record s;           /* summary fields: cleared at the first one */
	/* HWLAT_SAMPLED_CPU_NS (s.has_sampled_cpu says whether it was given):
	 * up to 1024 CPUs of 20 digits; a value that fills it is too long. */
	char sampled_cpu[1024 * 27];
	char skipped_cpu[1024 * 27];
};

/*
 * Clears e for the next entry: all but s, which is large (the machine
 * identity strings) and cleared only when the entry has a summary field,
 * so that a million samples do not each clear it.
 */
void entry_reset(struct entry *e);
/* Sorts one FIELD=value into e (entry_reset() before the first field). */
void take_field(struct entry *e, const char *d, size_t len);
/* Checks a complete entry; returns the name of what is wrong, or NULL. */
const char *entry_problem(struct entry *e);
