/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Strings from the journal (host names, kernel, CPU model) are whatever a
 * local user or a collected machine wrote: control characters, terminal
 * escape sequences, bytes that are not UTF-8. Every output format gets them
 * escaped for it, so that nothing reaches a terminal raw and JSON, SVG and
 * CSV stay valid UTF-8 (and valid XML):
 *   text: C-style escapes as journalctl's (\n, \t, \\, \a \b \f \r \v, \xNN
 *         for other control characters such as ESC, for C1 controls and for
 *         bytes that are not UTF-8); valid printable UTF-8 is kept.
 *   JSON: \" \\ \n \t, \u00NN for other control characters; U+FFFD for bytes
 *         that are not UTF-8 (without the surrounding quotes).
 *   XML:  &lt; &gt; &amp; &quot;; U+FFFD for control characters (XML 1.0
 *         cannot hold them) and for bytes that are not UTF-8.
 *   CSV:  "" for a quote; U+FFFD for control characters and bytes that are
 *         not UTF-8 (without the surrounding quotes).
 */
#pragma once

#include <stddef.h>
#include <stdio.h>

enum escape_kind { ESCAPE_TEXT, ESCAPE_JSON, ESCAPE_XML, ESCAPE_CSV };

void escape_write(FILE *f, const char *s, enum escape_kind kind);

/* The text form of s into buf, cut before an escape or character that does
 * not fit; returns buf. */
char *escape_text(const char *s, char *buf, size_t size);

/* Length (1-4) of the valid UTF-8 character at s (at most n bytes), or 0 for
 * an invalid, overlong, surrogate or cut sequence. */
size_t utf8_char_len(const char *s, size_t n);

/* The largest length <= len of a prefix of s (full_len bytes) that does not
 * cut a valid UTF-8 character in two. */
size_t utf8_cut(const char *s, size_t full_len, size_t len);
