/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The histogram through the text/JSON printer: in text, one row per bucket
 * with its range, count and a bar scaled to the largest bucket (75 columns);
 * in JSON, an object with the bucket kind and {low_ns, high_ns, count} rows.
 */
#pragma once

#include "report.h"
#include "stats.h"

int print_histogram(const char *key, const char *title, const struct stats *st,
		    const struct report_options *o);
