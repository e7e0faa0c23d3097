/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hwlat-report's command line into struct report_options. */
#pragma once

#include <stdint.h>

#include "report.h"

/*
 * Parses argv into o and, with --compare, each side's options into sides
 * (side_bufs keep their values: the caller frees them). now is the time
 * "now" and relative times mean. Returns 1 to go on, 0 to exit
 * successfully (--help and --version printed), -EINVAL on misuse (said,
 * with "Try 'hwlat-report --help'."), or -ENOMEM.
 */
int report_options_parse(int argc, char **argv, uint64_t now, struct report_options *o,
			 struct report_options sides[2], char *side_bufs[2]);
