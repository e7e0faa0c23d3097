/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Which machine a scan ran on, for the summary (docs/interfaces.md section
 * 2, "Machine identity"): the DMI strings of system, board and
 * BIOS, the CPU microcode revision and the online CPU count. The files are
 * read below a root directory ("/" normally, a fake tree in tests).
 * Whatever cannot be read is HWLAT_UNAVAILABLE, never empty.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* SMBIOS strings are at most 255 bytes; more is cut. */
#define IDENTITY_STR_MAX 256

typedef struct machine_identity {
	char sys_vendor[IDENTITY_STR_MAX];
	char product_name[IDENTITY_STR_MAX];
	char board_vendor[IDENTITY_STR_MAX];
	char board_name[IDENTITY_STR_MAX];
	char bios_vendor[IDENTITY_STR_MAX];
	char bios_version[IDENTITY_STR_MAX];
	char bios_date[IDENTITY_STR_MAX];
	char microcode[IDENTITY_STR_MAX];
	bool cpu_count_known;
	uint64_t cpu_count;
} machine_identity;

/*
 * The number of CPUs in a cpulist ("0-3,8"): 0 and the count, or -EINVAL
 * when it is not one (empty, reversed range, junk). No upper CPU bound.
 */
int cpulist_count(const char *list, uint64_t *ret);

/*
 * The distinct "microcode" values of a cpuinfo text, in order of first
 * appearance, joined by ','; HWLAT_UNAVAILABLE when there is none. Returns
 * buf.
 */
char *cpuinfo_microcode(const char *cpuinfo, char *buf, size_t size);

/* Every field HWLAT_UNAVAILABLE (nothing known). */
void identity_unavailable(machine_identity *ret);

/* Fills every field from the files below root (NULL: "/"). */
void identity_read(const char *root, machine_identity *ret);
