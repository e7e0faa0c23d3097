/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The printers of report/print.c: durations at each unit's edge (1 s,
 * 1 min, 1 h, 1 day), and the JSON they write (commas, nesting, keys,
 * integers up to 2^53 - 1 as numbers and beyond as strings, escaped
 * strings, null) next to the text form of the same calls; print_end()'s
 * error when the output cannot be written (the write's errno, or -EIO
 * when it set none). TAP output.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "print.h"
#include "../tap.h"

#define S UINT64_C(1000000000)

static void duration_is(uint64_t ns, const char *want)
{
	char buf[64];

	format_duration(ns, buf, sizeof(buf));
	ok(strcmp(buf, want) == 0, "duration %" PRIu64 " ns is '%s' (got '%s')", ns, want, buf);
}

static void test_durations(void)
{
	duration_is(S - 1, "1000.00 ms");
	duration_is(S, "1.000 s");
	duration_is(59 * S + 999999999, "59.999 s");
	duration_is(60 * S, "1min 0s");
	duration_is(3599 * S, "59min 59s");
	duration_is(3600 * S, "1h 0min 0s");
	duration_is(86399 * S, "23h 59min 59s");
	duration_is(86400 * S, "1d 0h 0min");
	duration_is(90061 * S, "1d 1h 1min");
}

/* Everything the calls of one document write, in JSON (json) or text. */
static char *document(bool json)
{
	char *out = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&out, &size);

	if (!f)
		abort();
	print_start(f, json);
	print_u64("small", "small %" PRIu64 "\n", 9007199254740991ULL);
	print_u64("big", "big %" PRIu64 "\n", 9007199254740992ULL);
	print_u64(NULL, "keyless %" PRIu64 "\n", 7);
	print_open_object("obj");
	print_string("s", "s %s\n", "a\"b\\c\n\x1b");
	print_null("n", "n %s\n");
	print_bool("t", "t %s\n", true);
	print_close_object();
	print_open_array("arr");
	print_u64(NULL, NULL, 1); /* no key: no place in JSON, no fmt: none in text */
	print_open_object(NULL);
	print_latency("lat", "lat %s\n", 1500);
	print_close_object();
	print_open_object(NULL);
	print_u64("k", NULL, 2);
	print_close_object();
	print_close_array();
	print_text("text only %d\n", 1);
	print_duration("d", "d %s\n", 86400 * S);
	if (print_end() != 0)
		abort();
	fclose(f);
	return out;
}

static void test_documents(void)
{
	char *json = document(true), *text = document(false);
	const char *want_json =
		"{\"small\":9007199254740991,\"big\":\"9007199254740992\","
		"\"obj\":{\"s\":\"a\\\"b\\\\c\\n\\u001b\",\"n\":null,\"t\":true},"
		"\"arr\":[{\"lat\":\"1500\"},{\"k\":2}],\"d\":\"86400000000000\"}\n";
	const char *want_text =
		"small 9007199254740991\nbig 9007199254740992\nkeyless 7\n"
		"s a\"b\\\\c\\n\\x1b\nn -\nt yes\nlat 1.5 us\ntext only 1\nd 1d 0h 0min\n";

	ok(strcmp(json, want_json) == 0, "the JSON document");
	if (strcmp(json, want_json) != 0)
		printf("# want %s# got  %s", want_json, json);
	ok(strcmp(text, want_text) == 0, "the text document");
	if (strcmp(text, want_text) != 0)
		printf("# want:\n%s# got:\n%s", want_text, text);
	free(json);
	free(text);
}

/* A stream whose every write fails with *cookie as errno (0: none set). */
static ssize_t failing_write(void *cookie, const char *buf, size_t size)
{
	(void)buf;
	(void)size;
	errno = *(int *)cookie;
	return -1;
}

/*
 * print_end() says why the report could not be written: the errno of the
 * failed write (ENOSPC), or -EIO when the write left errno at 0, never 0
 * (success) for a report that was not written.
 */
static void end_fails_with(int write_errno, int want)
{
	FILE *f = fopencookie(&write_errno, "w", (cookie_io_functions_t){ .write = failing_write });
	int r;

	if (!f)
		abort();
	print_start(f, true);
	print_u64("k", NULL, 1);
	r = print_end();
	ok(r == want, "print_end() after a write failing with errno %d: %d (got %d)", write_errno,
	   want, r);
	fclose(f);
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	test_durations();
	test_documents();
	end_fails_with(ENOSPC, -ENOSPC);
	end_fails_with(0, -EIO);
	return tap_finish();
}
