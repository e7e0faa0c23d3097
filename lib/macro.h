/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Scope-based cleanup and small macros of both tools (systemd's style): a
 * variable declared _cleanup_free_ is freed, _cleanup_close_ closed,
 * _cleanup_fclose_ closed, whichever way its scope is left.
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

/* Closes *fd unless it is negative; errno is kept for the caller's message. */
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

/* Exchanges two lvalues of the same type. */
#define SWAP(a, b)                      \
	do {                            \
		__typeof__(a) swap_ = (a); \
		(a) = (b);              \
		(b) = swap_;            \
	} while (0)

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)
