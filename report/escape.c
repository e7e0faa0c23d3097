// SPDX-License-Identifier: GPL-2.0-or-later
/* Escaping strings from the journal for each output format; see escape.h. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "escape.h"

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

size_t utf8_char_len(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	uint32_t cp;
	size_t len;

	if (n == 0)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0; /* continuation byte, overlong 0xc0/0xc1, or above U+10FFFF */
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

size_t utf8_cut(const char *s, size_t full_len, size_t len)
{
	size_t i = 0;

	while (i < len) {
		size_t c = utf8_char_len(s + i, full_len - i);

		if (c == 0)
			c = 1; /* a stray byte stands alone; the printers escape it */
		if (i + c > len)
			break;
		i += c;
	}
	return i;
}

/* U+0080..U+009F (C1 controls: some terminals act on them) as UTF-8. */
static bool is_c1(const unsigned char *s, size_t c)
{
	return c == 2 && s[0] == 0xc2 && s[1] < 0xa0;
}

static void text_escape_byte(FILE *f, unsigned char b)
{
	static const char names[] = "\aa\bb\ff\nn\rr\tt\vv\\\\";
	const char *p = b ? memchr(names, b, sizeof(names) - 1) : NULL;

	/* Pairs of (byte, letter): only even positions are bytes. */
	if (p && (p - names) % 2 == 0)
		fprintf(f, "\\%c", p[1]);
	else
		fprintf(f, "\\x%02x", b);
}

/* One character (c bytes at s, c == 0: one invalid byte) in kind's form. */
static void escape_char(FILE *f, const unsigned char *s, size_t c, enum escape_kind kind)
{
	bool control = c == 1 && (s[0] < 0x20 || s[0] == 0x7f);

	if (c == 0 || is_c1(s, c) || control) {
		switch (kind) {
		case ESCAPE_TEXT:
			for (size_t i = 0; i < (c ? c : 1); i++)
				text_escape_byte(f, s[i]);
			return;
		case ESCAPE_JSON:
			if (c == 0)
				fputs(REPLACEMENT, f);
			else if (s[0] == '\n')
				fputs("\\n", f);
			else if (s[0] == '\t')
				fputs("\\t", f);
			else
				fprintf(f, "\\u%04x", c == 1 ? s[0] : 0x80 | (s[1] & 0x3f));
			return;
		default:
			fputs(REPLACEMENT, f);
			return;
		}
	}
	if (c == 1) {
		const char *rep = NULL;

		if (kind == ESCAPE_TEXT && s[0] == '\\')
			rep = "\\\\";
		else if (kind == ESCAPE_JSON && s[0] == '"')
			rep = "\\\"";
		else if (kind == ESCAPE_JSON && s[0] == '\\')
			rep = "\\\\";
		else if (kind == ESCAPE_CSV && s[0] == '"')
			rep = "\"\"";
		else if (kind == ESCAPE_XML)
			rep = s[0] == '<' ? "&lt;" : s[0] == '>' ? "&gt;" : s[0] == '&' ? "&amp;" :
			      s[0] == '"' ? "&quot;" : NULL;
		if (rep) {
			fputs(rep, f);
			return;
		}
	}
	/* XML 1.0 excludes U+FFFE and U+FFFF. */
	if (kind == ESCAPE_XML && c == 3 && s[0] == 0xef && s[1] == 0xbf && s[2] >= 0xbe) {
		fputs(REPLACEMENT, f);
		return;
	}
	fwrite(s, 1, c, f);
}

void escape_write(FILE *f, const char *str, enum escape_kind kind)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	size_t n = strlen((const char *)s);

	for (size_t i = 0; i < n;) {
		size_t c = utf8_char_len((const char *)s + i, n - i);

		escape_char(f, s + i, c, kind);
		i += c ? c : 1;
	}
}

char *escape_text(const char *s, char *buf, size_t size)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p), out = 0;

	if (size == 0)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < n;) {
		char one[64];
		size_t c = utf8_char_len((const char *)p + i, n - i), len;
		FILE *m = fmemopen(one, sizeof(one), "w");

		if (!m)
			break;
		escape_char(m, p + i, c, ESCAPE_TEXT);
		len = (size_t)ftell(m);
		fclose(m);
		if (out + len + 1 > size)
			break;
		memcpy(buf + out, one, len);
		out += len;
		buf[out] = '\0';
		i += c ? c : 1;
	}
	return buf;
}
