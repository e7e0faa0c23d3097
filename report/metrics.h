/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hwlat-report --openmetrics: the selection's figures as the Prometheus
 * text file hwlat-scan writes (lib/openmetrics.h, docs/interfaces.md
 * section 5).
 */
#pragma once

#include <stdio.h>

#include "collect.h"

/* Writes them to f; returns 0 or a negative errno. */
int metrics_write(const struct report_data *d, FILE *f);
