/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The escaping of journal strings for each output format (report/escape.c):
 * the exact bytes each format gets for quotes, backslashes, markup, control
 * characters, C1 controls, bytes that are not UTF-8 and the UTF-8 edges
 * (overlong forms, surrogates, U+10FFFF, U+FFFE/U+FFFF in XML), and where
 * escape_text() and utf8_cut() cut: one table of cases per function. TAP
 * output.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "../tap.h"

#define REPL "\xef\xbf\xbd" /* U+FFFD */

static const char *kind_name(enum escape_kind kind)
{
	static const char *const names[] = { "text", "json", "xml", "csv" };

	return names[kind];
}

/* Printable form of s for the test names. */
static const char *show(const char *s)
{
	static char buf[4][256];
	static int next;
	char *b = buf[next++ % 4];
	size_t o = 0;

	for (; *s && o + 5 < sizeof(buf[0]); s++) {
		unsigned char c = (unsigned char)*s;

		o += (size_t)snprintf(b + o, sizeof(buf[0]) - o,
				      c >= 0x20 && c < 0x7f && c != '\\' ? "%c" : "\\x%02x", c);
	}
	b[o] = '\0';
	return b;
}

/* utf8_char_len(s, n): the length of the character s starts with, 0 for none. */
static const struct {
	const char *s;
	size_t n, want;
} char_lens[] = {
	{ "", 0, 0 },
	{ "a", 0, 0 },
	{ "a", 1, 1 },
	{ "\x7f", 1, 1 },
	{ "\x80", 1, 0 }, /* a continuation byte alone */
	{ "\xc1\xbf", 2, 0 }, /* overlong */
	{ "\xc2\x80", 2, 2 }, /* U+0080 */
	{ "\xdf\xbf", 2, 2 }, /* U+07FF */
	{ "\xc2\x41", 2, 0 }, /* no continuation */
	{ "\xc2\xc0", 2, 0 },
	{ "\xc2\x80", 1, 0 }, /* cut */
	{ "\xe0\x9f\xbf", 3, 0 }, /* overlong U+07FF */
	{ "\xe0\xa0\x80", 3, 3 }, /* U+0800 */
	{ "\xed\x9f\xbf", 3, 3 }, /* U+D7FF */
	{ "\xed\xa0\x80", 3, 0 }, /* U+D800, a surrogate */
	{ "\xed\xbf\xbf", 3, 0 }, /* U+DFFF */
	{ "\xee\x80\x80", 3, 3 }, /* U+E000 */
	{ "\xef\xbf\xbf", 3, 3 }, /* U+FFFF */
	{ "\xe2\x82\xac", 2, 0 }, /* cut */
	{ "\xf0\x8f\xbf\xbf", 4, 0 }, /* overlong U+FFFF */
	{ "\xf0\x90\x80\x80", 4, 4 }, /* U+10000 */
	{ "\xf4\x8f\xbf\xbf", 4, 4 }, /* U+10FFFF */
	{ "\xf4\x90\x80\x80", 4, 0 }, /* U+110000 */
	{ "\xf5\x80\x80\x80", 4, 0 },
	{ "\xff", 1, 0 },
};

/* utf8_cut(s, strlen(s), len): where a cut at len bytes ends a whole character. */
static const struct {
	const char *s;
	size_t len, want;
} cuts[] = {
	{ "a\xc3\xa9z", 0, 0 },
	{ "a\xc3\xa9z", 1, 1 },
	{ "a\xc3\xa9z", 2, 1 },
	{ "a\xc3\xa9z", 3, 3 },
	{ "a\xc3\xa9z", 4, 4 },
	{ "\xff\xfe", 1, 1 }, /* stray bytes stand alone */
	{ "\xf0\x90\x80\x80", 3, 0 },
};

/* escape_write(f, in, kind): the exact bytes each format gets. */
static const struct {
	enum escape_kind kind;
	const char *in, *want;
} escapes[] = {
	{ ESCAPE_TEXT, NULL, "" },
	{ ESCAPE_TEXT, "plain caf\xc3\xa9 <&\"'>", "plain caf\xc3\xa9 <&\"'>" },
	{ ESCAPE_TEXT, "a\nb\tc\\d", "a\\nb\\tc\\\\d" },
	{ ESCAPE_TEXT, "\a\b\f\r\v", "\\a\\b\\f\\r\\v" },
	{ ESCAPE_TEXT, "\x1b[31m\x7f\x01", "\\x1b[31m\\x7f\\x01" },
	{ ESCAPE_TEXT, "\xc2\x9b" "2J", "\\xc2\\x9b2J" }, /* C1 CSI */
	{ ESCAPE_TEXT, "\xc2\xa0", "\xc2\xa0" }, /* U+00A0 is no C1 */
	{ ESCAPE_TEXT, "x\xffy\xc3", "x\\xffy\\xc3" },
	{ ESCAPE_TEXT, "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80" },
	{ ESCAPE_TEXT, "\xf0\x90\x80\x80", "\xf0\x90\x80\x80" },
	{ ESCAPE_TEXT, "\xef\xbf\xbe", "\xef\xbf\xbe" },
	{ ESCAPE_JSON, NULL, "" },
	{ ESCAPE_JSON, "say \"hi\"", "say \\\"hi\\\"" },
	{ ESCAPE_JSON, "C:\\dir", "C:\\\\dir" },
	{ ESCAPE_JSON, "a\nb\tc", "a\\nb\\tc" },
	{ ESCAPE_JSON, "\x01\x1f\x7f\r", "\\u0001\\u001f\\u007f\\u000d" },
	{ ESCAPE_JSON, "\xc2\x85", "\\u0085" },
	{ ESCAPE_JSON, "\xc2\x9f", "\\u009f" },
	{ ESCAPE_JSON, "x\xffy", "x" REPL "y" },
	{ ESCAPE_JSON, "\xed\xa0\x80", REPL REPL REPL },
	{ ESCAPE_JSON, "<&>'caf\xc3\xa9", "<&>'caf\xc3\xa9" },
	{ ESCAPE_JSON, "\xef\xbf\xbf", "\xef\xbf\xbf" },
	{ ESCAPE_XML, NULL, "" },
	{ ESCAPE_XML, "<a href=\"x\">&'</a>", "&lt;a href=&quot;x&quot;&gt;&amp;'&lt;/a&gt;" },
	{ ESCAPE_XML, "a\nb\x01\x7f", "a" REPL "b" REPL REPL },
	{ ESCAPE_XML, "\xc2\x85", REPL },
	{ ESCAPE_XML, "\xff", REPL },
	{ ESCAPE_XML, "\\", "\\" },
	/* XML 1.0 has no U+FFFE and U+FFFF; their neighbours stay. */
	{ ESCAPE_XML, "\xef\xbf\xbe", REPL },
	{ ESCAPE_XML, "\xef\xbf\xbf", REPL },
	{ ESCAPE_XML, "\xef\xbf\xbd", REPL },
	{ ESCAPE_XML, "\xef\xbf\xbc", "\xef\xbf\xbc" },
	{ ESCAPE_XML, "\xef\xbe\xbf", "\xef\xbe\xbf" },
	{ ESCAPE_XML, "\xe0\xbf\xbf", "\xe0\xbf\xbf" },
	{ ESCAPE_XML, "\xee\xbf\xbe", "\xee\xbf\xbe" },
	{ ESCAPE_XML, "\xf0\x9f\xbf\xbe", "\xf0\x9f\xbf\xbe" },
	{ ESCAPE_CSV, NULL, "" },
	{ ESCAPE_CSV, "a \"b\" c", "a \"\"b\"\" c" },
	{ ESCAPE_CSV, "x,y\\z<&>", "x,y\\z<&>" },
	{ ESCAPE_CSV, "a\nb\r\x1b", "a" REPL "b" REPL REPL },
	{ ESCAPE_CSV, "\xc2\x80\xfe", REPL REPL },
	{ ESCAPE_CSV, "caf\xc3\xa9", "caf\xc3\xa9" },
};

/* escape_text(in, buf, size): text escaped into size bytes, cut between characters. */
static const struct {
	const char *in;
	size_t size;
	const char *want;
} texts[] = {
	{ NULL, 8, "" },
	{ "a\nb", 8, "a\\nb" },
	{ "a\nb", 5, "a\\nb" },
	{ "a\nb", 4, "a\\n" },
	{ "a\nb", 3, "a" },
	{ "a\nb", 1, "" },
	{ "\xc3\xa9\xc3\xa9", 4, "\xc3\xa9" },
	{ "\xc3\xa9\xc3\xa9", 5, "\xc3\xa9\xc3\xa9" },
	{ "\x1b" "x", 5, "\\x1b" },
	{ "\x1b" "x", 4, "" },
	{ "z\xff", 8, "z\\xff" },
};

static void esc(enum escape_kind kind, const char *in, const char *want)
{
	char *got = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&got, &size);

	if (!f) {
		ok(false, "open_memstream");
		return;
	}
	escape_write(f, in, kind);
	fclose(f);
	ok(strcmp(got, want) == 0, "%s of '%s' is '%s' (got '%s')", kind_name(kind),
	   in ? show(in) : "(null)", show(want), show(got));
	free(got);
}

static void text_is(const char *in, size_t size, const char *want)
{
	char buf[32];

	memset(buf, '#', sizeof(buf));
	buf[sizeof(buf) - 1] = '\0';
	escape_text(in, buf, size);
	ok(strcmp(buf, want) == 0, "escape_text('%s', %zu) is '%s' (got '%s')", in ? show(in) : "(null)",
	   size, show(want), show(buf));
}

int main(void)
{
	char buf[4] = "xyz";

	for (size_t i = 0; i < sizeof(char_lens) / sizeof(char_lens[0]); i++) {
		size_t got = utf8_char_len(char_lens[i].s, char_lens[i].n);

		ok(got == char_lens[i].want, "utf8_char_len('%s', %zu) is %zu (got %zu)",
		   show(char_lens[i].s), char_lens[i].n, char_lens[i].want, got);
	}
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		size_t got = utf8_cut(cuts[i].s, strlen(cuts[i].s), cuts[i].len);

		ok(got == cuts[i].want, "utf8_cut('%s', %zu) is %zu (got %zu)", show(cuts[i].s),
		   cuts[i].len, cuts[i].want, got);
	}
	for (size_t i = 0; i < sizeof(escapes) / sizeof(escapes[0]); i++)
		esc(escapes[i].kind, escapes[i].in, escapes[i].want);
	ok(escape_text("a", buf, 0) == buf && strcmp(buf, "xyz") == 0,
	   "escape_text() with size 0 writes nothing");
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		text_is(texts[i].in, texts[i].size, texts[i].want);
	return tap_finish();
}
