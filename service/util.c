/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Logging for hwlat-scan: one line per message on stderr. */
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

#include "util.h"

static bool status_line_shown;

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

void log_msg(const char *fmt, ...)
{
	va_list ap;

	status_line_clear();
	fputs("hwlat-scan: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int log_errno(int r, const char *fmt, ...)
{
	va_list ap;

	status_line_clear();
	fputs("hwlat-scan: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(r < 0 ? -r : r));
	return r < 0 ? r : -r;
}
