/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Logging for hwlat-scan: one line per message on stderr. */
#include <stdarg.h>
#include <string.h>

#include "util.h"

void log_msg(const char *fmt, ...)
{
	va_list ap;

	fputs("hwlat-scan: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int log_errno(int r, const char *fmt, ...)
{
	va_list ap;

	fputs("hwlat-scan: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(r < 0 ? -r : r));
	return r < 0 ? r : -r;
}
