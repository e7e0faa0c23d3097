/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Points in time for --since/--until, in journalctl's syntax where it
 * matters: "YYYY-MM-DD[ HH:MM[:SS]]" (local time, or UTC with a trailing
 * " UTC"), "today", "yesterday", "tomorrow", "now", "-1h"/"+30min" relative
 * to now, "@1700000000[.5]" seconds since the epoch.
 */
#pragma once

#include <stdint.h>

/* now_ns is the reference for relative times. 0 or -EINVAL/-ERANGE. */
int parse_when(const char *s, uint64_t now_ns, uint64_t *ret_ns);
