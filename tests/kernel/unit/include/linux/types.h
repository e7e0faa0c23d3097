/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel types src/'s pure-logic headers use, for compiling them on the
 * host (tests/kernel/unit): only what those headers need.
 */
#ifndef _HWLAT_UNIT_LINUX_TYPES_H
#define _HWLAT_UNIT_LINUX_TYPES_H

#include <stdbool.h>
#include <stdint.h>

typedef uint64_t u64;
typedef uint32_t u32;

#endif
