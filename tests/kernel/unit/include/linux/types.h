/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel types src/'s pure-logic headers use, for compiling them on the
 * host (tests/kernel/unit): only what those headers need, on top of the
 * host's own <linux/types.h> (the __u64 family), which the C library's
 * headers include (sys/stat.h through linux/stat.h) and must still find.
 */
#ifndef _HWLAT_UNIT_LINUX_TYPES_H
#define _HWLAT_UNIT_LINUX_TYPES_H

#include_next <linux/types.h>
#include <stdbool.h>
#include <stdint.h>

typedef uint64_t u64;
typedef uint32_t u32;

#endif
