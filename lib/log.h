/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Messages of both tools: one line each on stderr (the journal when systemd
 * runs the scan), "<program>: <message>", where <program> is what
 * log_set_program() named ("hwlat-scan", "hwlat-report").
 */
#pragma once

/* Names the program every message starts with; main() calls it first. */
void log_set_program(const char *name);

/*
 * A status line on stderr (a terminal): replaced by the next one, cleared
 * before any message is logged so that messages never mix with it.
 */
void status_line_show(const char *text);
void status_line_clear(void);

/* Logs "<program>: <message>". */
void log_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Logs "<program>: <message>: <strerror(|r|)>" and returns -|r|, so that
 * "return log_error_errno(r, ...);" passes the cause on.
 */
int log_error_errno(int r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
