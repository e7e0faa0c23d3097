/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The escaping of journal strings for each output format (report/escape.c):
 * the exact bytes each format gets for quotes, backslashes, markup, control
 * characters, C1 controls, bytes that are not UTF-8 and the UTF-8 edges
 * (overlong forms, surrogates, U+10FFFF, U+FFFE/U+FFFF in XML), and where
 * escape_text() and utf8_cut() cut. TAP output.
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

static void len_is(const char *s, size_t n, size_t want)
{
	size_t got = utf8_char_len(s, n);

	ok(got == want, "utf8_char_len('%s', %zu) is %zu (got %zu)", show(s), n, want, got);
}

static void test_char_len(void)
{
	len_is("", 0, 0);
	len_is("a", 0, 0);
	len_is("a", 1, 1);
	len_is("\x7f", 1, 1);
	len_is("\x80", 1, 0);           /* a continuation byte alone */
	len_is("\xc1\xbf", 2, 0);       /* overlong */
	len_is("\xc2\x80", 2, 2);       /* U+0080 */
	len_is("\xdf\xbf", 2, 2);       /* U+07FF */
	len_is("\xc2\x41", 2, 0);       /* no continuation */
	len_is("\xc2\xc0", 2, 0);
	len_is("\xc2\x80", 1, 0);       /* cut */
	len_is("\xe0\x9f\xbf", 3, 0);   /* overlong U+07FF */
	len_is("\xe0\xa0\x80", 3, 3);   /* U+0800 */
	len_is("\xed\x9f\xbf", 3, 3);   /* U+D7FF */
	len_is("\xed\xa0\x80", 3, 0);   /* U+D800, a surrogate */
	len_is("\xed\xbf\xbf", 3, 0);   /* U+DFFF */
	len_is("\xee\x80\x80", 3, 3);   /* U+E000 */
	len_is("\xef\xbf\xbf", 3, 3);   /* U+FFFF */
	len_is("\xe2\x82\xac", 2, 0);   /* cut */
	len_is("\xf0\x8f\xbf\xbf", 4, 0); /* overlong U+FFFF */
	len_is("\xf0\x90\x80\x80", 4, 4); /* U+10000 */
	len_is("\xf4\x8f\xbf\xbf", 4, 4); /* U+10FFFF */
	len_is("\xf4\x90\x80\x80", 4, 0); /* U+110000 */
	len_is("\xf5\x80\x80\x80", 4, 0);
	len_is("\xff", 1, 0);
}

static void cut_is(const char *s, size_t len, size_t want)
{
	size_t got = utf8_cut(s, strlen(s), len);

	ok(got == want, "utf8_cut('%s', %zu) is %zu (got %zu)", show(s), len, want, got);
}

static void test_cut(void)
{
	cut_is("a\xc3\xa9z", 0, 0);
	cut_is("a\xc3\xa9z", 1, 1);
	cut_is("a\xc3\xa9z", 2, 1);
	cut_is("a\xc3\xa9z", 3, 3);
	cut_is("a\xc3\xa9z", 4, 4);
	cut_is("\xff\xfe", 1, 1);       /* stray bytes stand alone */
	cut_is("\xf0\x90\x80\x80", 3, 0);
}

static void test_text(void)
{
	esc(ESCAPE_TEXT, NULL, "");
	esc(ESCAPE_TEXT, "plain caf\xc3\xa9 <&\"'>", "plain caf\xc3\xa9 <&\"'>");
	esc(ESCAPE_TEXT, "a\nb\tc\\d", "a\\nb\\tc\\\\d");
	esc(ESCAPE_TEXT, "\a\b\f\r\v", "\\a\\b\\f\\r\\v");
	esc(ESCAPE_TEXT, "\x1b[31m\x7f\x01", "\\x1b[31m\\x7f\\x01");
	esc(ESCAPE_TEXT, "\xc2\x9b" "2J", "\\xc2\\x9b2J");  /* C1 CSI */
	esc(ESCAPE_TEXT, "\xc2\xa0", "\xc2\xa0");            /* U+00A0 is no C1 */
	esc(ESCAPE_TEXT, "x\xffy\xc3", "x\\xffy\\xc3");
	esc(ESCAPE_TEXT, "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80");
	esc(ESCAPE_TEXT, "\xf0\x90\x80\x80", "\xf0\x90\x80\x80");
	esc(ESCAPE_TEXT, "\xef\xbf\xbe", "\xef\xbf\xbe");
}

static void test_json(void)
{
	esc(ESCAPE_JSON, NULL, "");
	esc(ESCAPE_JSON, "say \"hi\"", "say \\\"hi\\\"");
	esc(ESCAPE_JSON, "C:\\dir", "C:\\\\dir");
	esc(ESCAPE_JSON, "a\nb\tc", "a\\nb\\tc");
	esc(ESCAPE_JSON, "\x01\x1f\x7f\r", "\\u0001\\u001f\\u007f\\u000d");
	esc(ESCAPE_JSON, "\xc2\x85", "\\u0085");
	esc(ESCAPE_JSON, "\xc2\x9f", "\\u009f");
	esc(ESCAPE_JSON, "x\xffy", "x" REPL "y");
	esc(ESCAPE_JSON, "\xed\xa0\x80", REPL REPL REPL);
	esc(ESCAPE_JSON, "<&>'caf\xc3\xa9", "<&>'caf\xc3\xa9");
	esc(ESCAPE_JSON, "\xef\xbf\xbf", "\xef\xbf\xbf");
}

static void test_xml(void)
{
	esc(ESCAPE_XML, NULL, "");
	esc(ESCAPE_XML, "<a href=\"x\">&'</a>", "&lt;a href=&quot;x&quot;&gt;&amp;'&lt;/a&gt;");
	esc(ESCAPE_XML, "a\nb\x01\x7f", "a" REPL "b" REPL REPL);
	esc(ESCAPE_XML, "\xc2\x85", REPL);
	esc(ESCAPE_XML, "\xff", REPL);
	esc(ESCAPE_XML, "\\", "\\");
	/* XML 1.0 has no U+FFFE and U+FFFF; their neighbours stay. */
	esc(ESCAPE_XML, "\xef\xbf\xbe", REPL);
	esc(ESCAPE_XML, "\xef\xbf\xbf", REPL);
	esc(ESCAPE_XML, "\xef\xbf\xbd", REPL);
	esc(ESCAPE_XML, "\xef\xbf\xbc", "\xef\xbf\xbc");
	esc(ESCAPE_XML, "\xef\xbe\xbf", "\xef\xbe\xbf");
	esc(ESCAPE_XML, "\xe0\xbf\xbf", "\xe0\xbf\xbf");
	esc(ESCAPE_XML, "\xee\xbf\xbe", "\xee\xbf\xbe");
	esc(ESCAPE_XML, "\xf0\x9f\xbf\xbe", "\xf0\x9f\xbf\xbe");
}

static void test_csv(void)
{
	esc(ESCAPE_CSV, NULL, "");
	esc(ESCAPE_CSV, "a \"b\" c", "a \"\"b\"\" c");
	esc(ESCAPE_CSV, "x,y\\z<&>", "x,y\\z<&>");
	esc(ESCAPE_CSV, "a\nb\r\x1b", "a" REPL "b" REPL REPL);
	esc(ESCAPE_CSV, "\xc2\x80\xfe", REPL REPL);
	esc(ESCAPE_CSV, "caf\xc3\xa9", "caf\xc3\xa9");
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

static void test_escape_text(void)
{
	char buf[4] = "xyz";

	ok(escape_text("a", buf, 0) == buf && strcmp(buf, "xyz") == 0,
	   "escape_text() with size 0 writes nothing");
	text_is(NULL, 8, "");
	text_is("a\nb", 8, "a\\nb");
	text_is("a\nb", 5, "a\\nb");
	text_is("a\nb", 4, "a\\n");
	text_is("a\nb", 3, "a");
	text_is("a\nb", 1, "");
	text_is("\xc3\xa9\xc3\xa9", 4, "\xc3\xa9");
	text_is("\xc3\xa9\xc3\xa9", 5, "\xc3\xa9\xc3\xa9");
	text_is("\x1b" "x", 5, "\\x1b");
	text_is("\x1b" "x", 4, "");
	text_is("z\xff", 8, "z\\xff");
}

int main(void)
{
	test_char_len();
	test_cut();
	test_text();
	test_json();
	test_xml();
	test_csv();
	test_escape_text();
	return tap_finish();
}
