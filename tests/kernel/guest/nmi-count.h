/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-CPU counts of one line of /proc/interrupts ("NMI:", "LOC:",
 * "CAL:", ...), for the guest programs that check interrupts: nmi-probe
 * (tests/kernel/lab) and tests/accuracy/acc-guest.c. Header only, because
 * both are built as one file each with gcc -static; it needs nothing but
 * the C library.
 */
#ifndef HWLAT_NMI_COUNT_H
#define HWLAT_NMI_COUNT_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Stores the count of CPU 0, 1, ... of the line tagged @tag (e.g. "LOC:") in
 * v[0..max): returns the number of CPUs, -ENODATA when /proc/interrupts has
 * no such line, -E2BIG when it lists more than max CPUs, or -errno when it
 * cannot be opened.
 */
static inline int irq_line_counts(const char *tag, unsigned long long *v, int max)
{
	char line[4096];
	size_t len = strlen(tag);
	int n = -ENODATA;
	FILE *f = fopen("/proc/interrupts", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;

		while (*p == ' ')
			p++;
		if (strncmp(p, tag, len) != 0)
			continue;
		p += len;
		for (n = 0;; p = end) {
			unsigned long long count;

			errno = 0;
			count = strtoull(p, &end, 10);
			if (end == p || errno)
				break;
			if (n == max) {
				n = -E2BIG;
				break;
			}
			v[n++] = count;
		}
		break;
	}
	fclose(f);
	return n;
}

/* The NMI line; see irq_line_counts(). */
static inline int nmi_counts(unsigned long long *v, int max)
{
	return irq_line_counts("NMI:", v, max);
}

#endif
