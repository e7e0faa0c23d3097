/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The progress line of an interactive hwlat-scan. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "parse.h"
#include "progress.h"
#include "log.h"
#include "macro.h"

bool progress_wanted(bool quiet, bool unit)
{
	const char *inv = getenv("INVOCATION_ID");

	if (quiet || unit || (inv && *inv))
		return false;
	return isatty(STDERR_FILENO) == 1;
}

char *format_seconds(uint64_t s, char *buf, size_t size)
{
	unsigned long long d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60, sec = s % 60;

	if (d)
		snprintf(buf, size, "%llud %02lluh %02llum %02llus", d, h, m, sec);
	else if (h)
		snprintf(buf, size, "%lluh %02llum %02llus", h, m, sec);
	else if (m)
		snprintf(buf, size, "%llum %02llus", m, sec);
	else
		snprintf(buf, size, "%llus", sec);
	return buf;
}

void progress_start(progress *p, bool on, uint64_t start_ns, uint64_t duration_ns)
{
	p->on = on;
	p->start_ns = start_ns;
	p->duration_ns = duration_ns;
	p->next_ns = start_ns;
}

void progress_update(progress *p, uint64_t now, uint64_t samples, uint64_t max_ns)
{
	uint64_t elapsed, left;
	char line[256], e[48], l[48], m[32];

	if (!p->on || now < p->next_ns)
		return;
	elapsed = now > p->start_ns ? now - p->start_ns : 0;
	left = elapsed < p->duration_ns ? p->duration_ns - elapsed : 0;
	/* Elapsed rounds down, left up: together they make the duration. */
	snprintf(line, sizeof(line), "hwlat-scan: %s elapsed, %s left, %llu sample%s, max %s",
		 format_seconds(elapsed / NSEC_PER_SEC, e, sizeof(e)),
		 format_seconds((left + NSEC_PER_SEC - 1) / NSEC_PER_SEC, l, sizeof(l)),
		 (unsigned long long)samples, samples == 1 ? "" : "s",
		 samples ? format_latency(max_ns, m, sizeof(m)) : "-");
	status_line_show(line);
	/* On the next whole second of the scan, not a second after a late wakeup. */
	p->next_ns = p->start_ns + (elapsed / NSEC_PER_SEC + 1) * NSEC_PER_SEC;
}

void progress_stop(progress *p)
{
	if (p->on)
		status_line_clear();
	p->on = false;
}
