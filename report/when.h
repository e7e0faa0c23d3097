/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Points in time for --since/--until, in the syntax of systemd.time(7)
 * where it matters: "YYYY-MM-DD[ HH:MM[:SS]]" (local time, or UTC with a
 * trailing " UTC"; a day that does not exist, such as 2023-02-31, is
 * refused), "today", "yesterday", "tomorrow", "now", times relative to now
 * ("-1h", "+30min", "1h 30min ago", "2 days left", "-1.5h"), and
 * "@1700000000[.5]" seconds since the epoch. Relative spans take the units
 * of systemd.time(7): ns, us, ms, s, min (m), h, d, w, M (30.44 d) and
 * y (365.25 d), in any of their spellings; a bare number is in seconds.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * now_ns is the reference for relative times. Returns 0, or -EINVAL /
 * -ERANGE with why set to a sentence saying what is wrong (empty when the
 * generic "expected ..." applies).
 */
int parse_when(const char *s, uint64_t now_ns, uint64_t *ret_ns, char *why, size_t why_size);
