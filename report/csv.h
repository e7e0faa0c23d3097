/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --csv: one row per sample, exact values, RFC 4180, header first. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "report.h"

int csv_row(FILE *f, const struct sample_entry *x, bool header);
int csv_header(FILE *f);
