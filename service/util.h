/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Small helpers for hwlat-scan: scope-based cleanup and logging to stderr
 * (which is the journal when systemd runs the scan).
 */
#pragma once

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;

		close(*fd);
		errno = saved;
	}
}

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

/*
 * A status line on stderr (a terminal): replaced by the next one, cleared
 * before any message is logged so that messages never mix with it.
 */
void status_line_show(const char *text);
void status_line_clear(void);

/* Logs "hwlat-scan: <message>" on stderr. */
void log_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Logs with ": <strerror(-r)>" appended and returns r (a negative errno). */
int log_errno(int r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
