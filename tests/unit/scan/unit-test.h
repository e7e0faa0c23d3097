/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the C unit tests of hwlat-scan share: TAP output (../tap.h), a
 * journal entry's field by name, a scratch file written in one call, and
 * messages that start "hwlat-scan: " as the tool's do.
 * Header-only: each test program is one translation unit.
 */
#pragma once

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "journal-entry.h"
#include "log.h"
#include "../tap.h"

/* The messages the tests read start as hwlat-scan's do. */
__attribute__((constructor)) static void unit_test_name_program(void)
{
	log_set_program("hwlat-scan");
}

/* The value of field NAME in E copied into buf, or NULL when E has none. */
static inline const char *entry_field(const journal_entry *e, const char *name,
				      char *buf, size_t size)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < e->n; i++) {
		const char *d = e->iov[i].iov_base;

		if (e->iov[i].iov_len > len && memcmp(d, name, len) == 0 && d[len] == '=') {
			snprintf(buf, size, "%.*s", (int)(e->iov[i].iov_len - len - 1), d + len + 1);
			return buf;
		}
	}
	return NULL;
}

/* Writes LEN bytes of TEXT to PATH (created or truncated); 0 or -errno. */
static inline int write_file_len(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -errno;
	if (fwrite(text, 1, len, f) != len) {
		fclose(f);
		return -EIO;
	}
	return fclose(f) == 0 ? 0 : -errno;
}
