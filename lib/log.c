/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Messages on stderr; see log.h. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

static const char *program = "hwlat";
static bool status_line_shown;

void log_set_program(const char *name)
{
	program = name;
}

void status_line_show(const char *text)
{
	/* Carriage return, the text, erase to the end of the line. */
	fprintf(stderr, "\r%s\033[K", text);
	fflush(stderr);
	status_line_shown = true;
}

void status_line_clear(void)
{
	if (!status_line_shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	status_line_shown = false;
}

/* One line; with_errno appends ": <strerror(|r|)>". */
static void log_line(bool with_errno, int r, const char *fmt, va_list ap)
{
	status_line_clear();
	fprintf(stderr, "%s: ", program);
	vfprintf(stderr, fmt, ap);
	if (with_errno)
		fprintf(stderr, ": %s", strerror(r < 0 ? -r : r));
	fputc('\n', stderr);
}

void log_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line(false, 0, fmt, ap);
	va_end(ap);
}

int log_error_errno(int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line(true, r, fmt, ap);
	va_end(ap);
	return r < 0 ? r : -r;
}
