/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Which machine a scan ran on; see identity.h. */
#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwlat-journal.h"
#include "identity.h"
#include "parse.h"
#include "log.h"
#include "macro.h"

#define DMI_DIR "sys/class/dmi/id"
#define CPU_ONLINE "sys/devices/system/cpu/online"
/* /proc/cpuinfo of a few hundred CPUs fits; the rest is not needed. */
#define CPUINFO_MAX (4U << 20)

/* The first line of root/path, stripped, into buf; "unavailable" when the
 * file cannot be read or the line is empty. */
static void read_value(const char *root, const char *path, char *buf, size_t size)
{
	char full[4096];
	_cleanup_fclose_ FILE *f = NULL;

	snprintf(full, sizeof(full), "%s/%s", root, path);
	f = fopen(full, "re");
	if (!f || !fgets(buf, (int)size, f) || !strip(buf)[0])
		snprintf(buf, size, "%s", HWLAT_UNAVAILABLE);
}

/* Whether item is one of the ','-separated items of list. */
static bool has_item(const char *list, const char *item)
{
	size_t len = strlen(item);

	for (const char *p = list; *p; p++) {
		if ((p == list || p[-1] == ',') && strncmp(p, item, len) == 0 &&
		    (p[len] == ',' || p[len] == '\0'))
			return true;
	}
	return false;
}

int cpulist_count(const char *list, uint64_t *ret)
{
	const char *p = list;
	uint64_t n = 0;

	for (;;) {
		char *end;
		unsigned long long a, b;

		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		a = b = strtoull(p, &end, 10);
		p = end;
		if (*p == '-') {
			if (!isdigit((unsigned char)p[1]))
				return -EINVAL;
			b = strtoull(p + 1, &end, 10);
			p = end;
			if (b < a)
				return -EINVAL;
		}
		n += b - a + 1;
		if (*p != ',')
			break;
		p++;
	}
	if (*p)
		return -EINVAL;
	*ret = n;
	return 0;
}

char *cpuinfo_microcode(const char *cpuinfo, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = '\0';
	for (const char *line = cpuinfo; line && *line;) {
		const char *nl = strchr(line, '\n'), *colon, *v, *e;
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char value[64];

		colon = memchr(line, ':', len);
		if (colon && strncmp(line, "microcode", 9) == 0 &&
		    (line[9] == ' ' || line[9] == '\t' || line[9] == ':')) {
			for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
				;
			for (e = line + len; e > v && isspace((unsigned char)e[-1]); e--)
				;
			snprintf(value, sizeof(value), "%.*s", (int)(e - v), v);
			/* Only new values: a revision is a whole item of the list. */
			if (value[0] && !has_item(buf, value) && used + strlen(value) + 2 <= size)
				used += (size_t)snprintf(buf + used, size - used, "%s%s",
							 used ? "," : "", value);
		}
		line = nl ? nl + 1 : NULL;
	}
	if (!buf[0])
		snprintf(buf, size, "%s", HWLAT_UNAVAILABLE);
	return buf;
}

/* The whole of root/proc/cpuinfo (up to CPUINFO_MAX), malloc'ed; NULL when
 * it cannot be read. */
static char *read_cpuinfo(const char *root)
{
	char path[4096];
	_cleanup_fclose_ FILE *f = NULL;
	char *text;
	size_t n;

	snprintf(path, sizeof(path), "%s/proc/cpuinfo", root);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	text = malloc(CPUINFO_MAX + 1);
	if (!text)
		return NULL;
	n = fread(text, 1, CPUINFO_MAX, f);
	text[n] = '\0';
	return text;
}

/* The DMI strings: file name and member. */
static const struct {
	const char *file;
	size_t offset;
} dmi[] = {
	{ "sys_vendor", offsetof(machine_identity, sys_vendor) },
	{ "product_name", offsetof(machine_identity, product_name) },
	{ "board_vendor", offsetof(machine_identity, board_vendor) },
	{ "board_name", offsetof(machine_identity, board_name) },
	{ "bios_vendor", offsetof(machine_identity, bios_vendor) },
	{ "bios_version", offsetof(machine_identity, bios_version) },
	{ "bios_date", offsetof(machine_identity, bios_date) },
};

void identity_unavailable(machine_identity *ret)
{
	memset(ret, 0, sizeof(*ret));
	for (size_t i = 0; i < ELEMENTSOF(dmi); i++)
		snprintf((char *)ret + dmi[i].offset, IDENTITY_STR_MAX, "%s", HWLAT_UNAVAILABLE);
	snprintf(ret->microcode, sizeof(ret->microcode), "%s", HWLAT_UNAVAILABLE);
}

void identity_read(const char *root, machine_identity *ret)
{
	_cleanup_free_ char *cpuinfo = NULL;
	char path[64], online[8192];

	memset(ret, 0, sizeof(*ret));
	if (!root)
		root = "/";
	for (size_t i = 0; i < ELEMENTSOF(dmi); i++) {
		snprintf(path, sizeof(path), DMI_DIR "/%s", dmi[i].file);
		read_value(root, path, (char *)ret + dmi[i].offset, IDENTITY_STR_MAX);
	}
	cpuinfo = read_cpuinfo(root);
	cpuinfo_microcode(cpuinfo, ret->microcode, sizeof(ret->microcode));
	read_value(root, CPU_ONLINE, online, sizeof(online));
	ret->cpu_count_known = cpulist_count(online, &ret->cpu_count) == 0;
}
