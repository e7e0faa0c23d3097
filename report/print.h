/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One printer for text and JSON (the iproute2 json_print model): every field
 * of the report is printed once, with a JSON key and a text format, and the
 * printer emits whichever the user asked for. Text and JSON therefore show
 * the same numbers. A NULL format prints nothing in text mode; a NULL key
 * prints nothing in JSON mode.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

void print_start(FILE *f, bool json);
/* Finishes the document; returns -EIO when the output could not be written. */
int print_end(void);
bool print_is_json(void);

void print_open_object(const char *key);
void print_close_object(void);
void print_open_array(const char *key);
void print_close_array(void);

/* Text only (headings, separators, bars). printf-like. */
void print_text(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void print_string(const char *key, const char *fmt, const char *value);
void print_u64(const char *key, const char *fmt, uint64_t value);
void print_bool(const char *key, const char *fmt, bool value);
/* A finite number, "%.6g" in JSON and as fmt's %s in text. */
void print_double(const char *key, const char *fmt, double value);
void print_null(const char *key, const char *fmt);
/* JSON: the exact number of nanoseconds (the key ends in "_ns"); text: fmt
 * gets the value for a human ("212.4 us") as its %s. */
void print_latency(const char *key, const char *fmt, uint64_t ns);
/* JSON: ns since the epoch; text: fmt gets "YYYY-MM-DD HH:MM:SS.mmm TZ". */
void print_time(const char *key, const char *fmt, uint64_t ns);
/* JSON: ns; text: fmt gets a duration for a human ("1h 2min 3.5s"). */
void print_duration(const char *key, const char *fmt, uint64_t ns);

/* Human forms, also used by the histogram and SVG. */
char *format_time(uint64_t ns, char *buf, size_t size);
char *format_duration(uint64_t ns, char *buf, size_t size);
