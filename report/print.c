// SPDX-License-Identifier: GPL-2.0-or-later
/* The text/JSON printer; see print.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "escape.h"
#include "parse.h"
#include "print.h"

#define MAX_DEPTH 16
/* 2^53 - 1, the largest integer a double (JavaScript, jq) holds exactly. */
#define JSON_SAFE_MAX 9007199254740991ULL

static struct {
	FILE *f;
	bool json;
	unsigned depth;
	bool first[MAX_DEPTH]; /* nothing printed yet at this level */
} P;

void print_start(FILE *f, bool json)
{
	memset(&P, 0, sizeof(P));
	P.f = f;
	P.json = json;
	P.first[0] = true;
	if (json) {
		fputc('{', f);
		P.depth = 1;
		P.first[1] = true;
	}
}

int print_end(void)
{
	if (P.json)
		fputs("}\n", P.f);
	/* The cause (ENOSPC, EPIPE...) from the last write; ferror() alone
	 * would only say that one failed. */
	if (fflush(P.f) != 0)
		return errno > 0 ? -errno : -EIO;
	if (ferror(P.f))
		return -EIO;
	return 0;
}

bool print_is_json(void)
{
	return P.json;
}

static void json_string(const char *s)
{
	fputc('"', P.f);
	escape_write(P.f, s, ESCAPE_JSON);
	fputc('"', P.f);
}

/* Comma and key before a JSON value; key is NULL inside arrays. */
static void json_member(const char *key)
{
	if (!P.first[P.depth])
		fputc(',', P.f);
	P.first[P.depth] = false;
	if (key) {
		json_string(key);
		fputc(':', P.f);
	}
}

static void open_container(const char *key, char c)
{
	if (!P.json)
		return;
	json_member(key);
	fputc(c, P.f);
	if (P.depth + 1 < MAX_DEPTH)
		P.depth++;
	P.first[P.depth] = true;
}

static void close_container(char c)
{
	if (!P.json)
		return;
	fputc(c, P.f);
	if (P.depth > 0)
		P.depth--;
}

void print_open_object(const char *key)
{
	open_container(key, '{');
}

void print_close_object(void)
{
	close_container('}');
}

void print_open_array(const char *key)
{
	open_container(key, '[');
}

void print_close_array(void)
{
	close_container(']');
}

void print_text(const char *fmt, ...)
{
	va_list ap;

	if (P.json)
		return;
	va_start(ap, fmt);
	vfprintf(P.f, fmt, ap);
	va_end(ap);
}

/* The formats come from the report code, never from input. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"

/*
 * One value: in JSON its key, then json (a JSON token) or, when json is
 * NULL, text as a JSON string; as text, text through fmt. Nothing when
 * the output has no place for it (no key in JSON, no fmt in text).
 */
static void print_value(const char *key, const char *fmt, const char *json, const char *text)
{
	if (P.json) {
		if (!key)
			return;
		json_member(key);
		if (json)
			fputs(json, P.f);
		else
			json_string(text);
	} else if (fmt) {
		fprintf(P.f, fmt, text);
	}
}

/* Text from the journal never reaches the terminal raw (escape.h). */
static void print_text_value(const char *fmt, const char *value)
{
	char *escaped = NULL;
	size_t size = 0;
	FILE *m = open_memstream(&escaped, &size);

	if (!m) {
		fprintf(P.f, fmt, "?");
		return;
	}
	escape_write(m, value, ESCAPE_TEXT);
	if (fclose(m) == 0 && escaped)
		fprintf(P.f, fmt, escaped);
	else
		fprintf(P.f, fmt, "?");
	free(escaped);
}

void print_string(const char *key, const char *fmt, const char *value)
{
	if (!P.json && fmt)
		print_text_value(fmt, value ? value : "");
	else
		print_value(key, fmt, NULL, value ? value : "");
}

void print_u64(const char *key, const char *fmt, uint64_t value)
{
	char num[24];

	if (P.json) {
		/* Every JSON parser reads integers up to 2^53 exactly; beyond, only
		 * a string survives (possible only from forged journal entries). */
		snprintf(num, sizeof(num), value > JSON_SAFE_MAX ? "\"%" PRIu64 "\"" : "%" PRIu64,
			 value);
		print_value(key, NULL, num, NULL);
	} else if (fmt) {
		fprintf(P.f, fmt, value);
	}
}

void print_bool(const char *key, const char *fmt, bool value)
{
	print_value(key, fmt, value ? "true" : "false", value ? "yes" : "no");
}

void print_double(const char *key, const char *fmt, double value)
{
	char num[32];

	snprintf(num, sizeof(num), "%.6g", value);
	print_value(key, fmt, num, num);
}

void print_null(const char *key, const char *fmt)
{
	print_value(key, fmt, "null", "-");
}

/* A number of ns: as it is in JSON, through format (into 64 bytes) as text. */
static void print_ns(const char *key, const char *fmt, uint64_t ns,
		     char *(*format)(uint64_t ns, char *buf, size_t size))
{
	char buf[64];

	if (P.json) {
		/* A string: ns since the epoch exceed 2^53, beyond which JSON
		 * parsers such as JavaScript's and jq's round numbers. */
		snprintf(buf, sizeof(buf), "%" PRIu64, ns);
		print_value(key, NULL, NULL, buf);
	} else if (fmt) {
		fprintf(P.f, fmt, format(ns, buf, sizeof(buf)));
	}
}

void print_latency(const char *key, const char *fmt, uint64_t ns)
{
	print_ns(key, fmt, ns, format_latency);
}

void print_time(const char *key, const char *fmt, uint64_t ns)
{
	print_ns(key, fmt, ns, format_time);
}

void print_duration(const char *key, const char *fmt, uint64_t ns)
{
	print_ns(key, fmt, ns, format_duration);
}

#pragma GCC diagnostic pop

char *format_time(uint64_t ns, char *buf, size_t size)
{
	time_t sec = (time_t)(ns / NSEC_PER_SEC);
	struct tm tm;
	char date[48];

	if (!localtime_r(&sec, &tm) ||
	    strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", &tm) == 0) {
		snprintf(buf, size, "@%" PRIu64, (uint64_t)(ns / NSEC_PER_SEC));
		return buf;
	}
	snprintf(buf, size, "%s.%03" PRIu64 " %s", date,
		 (uint64_t)((ns % NSEC_PER_SEC) / NSEC_PER_MSEC), tm.tm_zone ? tm.tm_zone : "");
	return buf;
}

char *format_duration(uint64_t ns, char *buf, size_t size)
{
	uint64_t s = ns / NSEC_PER_SEC, ms = (ns % NSEC_PER_SEC) / NSEC_PER_MSEC;

	if (ns < NSEC_PER_SEC)
		return format_latency(ns, buf, size);
	if (s < 60)
		snprintf(buf, size, "%" PRIu64 ".%03" PRIu64 " s", s, ms);
	else if (s < 3600)
		snprintf(buf, size, "%" PRIu64 "min %" PRIu64 "s", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, size, "%" PRIu64 "h %" PRIu64 "min %" PRIu64 "s",
			 s / 3600, s % 3600 / 60, s % 60);
	else
		snprintf(buf, size, "%" PRIu64 "d %" PRIu64 "h %" PRIu64 "min",
			 s / 86400, s % 86400 / 3600, s % 3600 / 60);
	return buf;
}
