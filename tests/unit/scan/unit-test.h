/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the C unit tests of hwlat-scan share: TAP output (../tap.h), a
 * journal entry's field by name, files written in one call, a scratch
 * directory for the test's files, what a call wrote on stderr, and
 * messages that start "hwlat-scan: " as the tool's do. Header-only: each
 * test program is one translation unit, and what it does not use costs
 * nothing.
 */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal-entry.h"
#include "log.h"
#include "../tap.h"

/* The messages the tests read start as hwlat-scan's do. */
__attribute__((constructor)) static void unit_test_name_program(void)
{
	log_set_program("hwlat-scan");
}

/* Ends the test program: its setup failed, so no check could mean anything. */
static inline void bail(const char *what)
{
	printf("Bail out! %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The value of field NAME in E copied into buf, or NULL when E has none. */
static inline const char *entry_field(const journal_entry *e, const char *name,
				      char *buf, size_t size)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < e->n; i++) {
		const char *d = e->iov[i].iov_base;

		if (e->iov[i].iov_len > len && memcmp(d, name, len) == 0 && d[len] == '=') {
			snprintf(buf, size, "%.*s", (int)(e->iov[i].iov_len - len - 1), d + len + 1);
			return buf;
		}
	}
	return NULL;
}

/* Whether field NAME of E is want; want NULL: E has no such field. */
static inline bool field_is(const journal_entry *e, const char *name, const char *want)
{
	static char buf[32768];
	const char *v = entry_field(e, name, buf, sizeof(buf));

	if (!want)
		return v == NULL;
	return v && strcmp(v, want) == 0;
}

/* Writes LEN bytes of TEXT to PATH (created or truncated); 0 or -errno. */
static inline int write_file_len(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -errno;
	if (fwrite(text, 1, len, f) != len) {
		fclose(f);
		return -EIO;
	}
	return fclose(f) == 0 ? 0 : -errno;
}

/*
 * root/path with text, the directories on the way made; a file that
 * cannot be written is a failed check.
 */
static inline void put_below(const char *root, const char *path, const char *text)
{
	char full[1024];

	snprintf(full, sizeof(full), "%s/%s", root, path);
	for (char *p = full + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(full, 0755);
		*p = '/';
	}
	if (write_file_len(full, text, strlen(text)) < 0)
		ok(false, "cannot write %s", full);
}

/* The test's scratch directory, once scratch_init() made it. */
static char scratch[] = "/tmp/hwlat-test-XXXXXX";

static inline void scratch_init(void)
{
	if (!mkdtemp(scratch))
		bail("mkdtemp");
}

/* Removes the scratch directory and all below it. */
static inline void scratch_done(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
	if (system(cmd) != 0)
		printf("# cannot remove %s\n", scratch);
}

/* scratch/name (one of four buffers, so that a call may take several). */
static inline const char *at(const char *name)
{
	static char path[4][1024];
	static unsigned next;
	char *p = path[next++ % 4];

	snprintf(p, sizeof(path[0]), "%s/%s", scratch, name);
	return p;
}

/* Writes text to scratch/name, the directories on the way made; NULL removes it. */
static inline void put(const char *name, const char *text)
{
	if (!text) {
		unlink(at(name));
		return;
	}
	put_below(scratch, name, text);
}

/* Runs f(arg) with stderr going to a file; returns what it wrote (static). */
static inline const char *stderr_of(void (*f)(void *), void *arg)
{
	static char text[8192];
	int saved = dup(STDERR_FILENO), fd;
	ssize_t n;

	fflush(stderr);
	fd = open(at(".stderr"), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || saved < 0)
		bail("stderr file");
	dup2(fd, STDERR_FILENO);
	f(arg);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = pread(fd, text, sizeof(text) - 1, 0);
	text[n > 0 ? n : 0] = '\0';
	close(fd);
	return text;
}
