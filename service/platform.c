/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Facts about the machine for the scan's summary; see platform.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "hwlat-journal.h"
#include "parse.h"
#include "platform-notes.h"
#include "platform.h"
#include "log.h"
#include "macro.h"

#define CLOCKSOURCE_DIR "sys/devices/system/clocksource/clocksource0"

static const struct {
	const char id[HYPERVISOR_ID_LEN + 1];
	const char *name;
} hypervisors[] = {
	{ "KVMKVMKVM\0\0\0", "kvm" },
	{ "Microsoft Hv", "microsoft" },
	{ "VMwareVMware", "vmware" },
	{ "XenVMMXenVMM", "xen" },
	{ "TCGTCGTCGTCG", "tcg" },
};

const char *hypervisor_name(const char id[HYPERVISOR_ID_LEN], char *buf, size_t size)
{
	char raw[HYPERVISOR_ID_LEN + 1];
	size_t n = 0;

	for (size_t i = 0; i < sizeof(hypervisors) / sizeof(hypervisors[0]); i++)
		if (memcmp(id, hypervisors[i].id, HYPERVISOR_ID_LEN) == 0) {
			snprintf(buf, size, "%s", hypervisors[i].name);
			return buf;
		}
	for (size_t i = 0; i < HYPERVISOR_ID_LEN && id[i]; i++) {
		unsigned char c = (unsigned char)id[i];

		raw[n++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	while (n > 0 && raw[n - 1] == ' ')
		n--;
	raw[n] = '\0';
	snprintf(buf, size, "%s", n ? raw : "unknown");
	return buf;
}

int cpuid_hypervisor_id(char id[HYPERVISOR_ID_LEN])
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;

	if (!__get_cpuid(1, &a, &b, &c, &d))
		return -EOPNOTSUPP;
	if (!(c & (1U << 31)))
		return 0;
	/* Leaf 0x40000000 is above the basic range: no __get_cpuid check. */
	__cpuid(0x40000000, a, b, c, d);
	memcpy(id, &b, 4);
	memcpy(id + 4, &c, 4);
	memcpy(id + 8, &d, 4);
	return 1;
#else
	(void)id;
	return -EOPNOTSUPP;
#endif
}

/* Whether word is one of the blank-separated words of list. */
static bool has_word(const char *list, const char *word)
{
	size_t len = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += len) {
		bool start = p == list || p[-1] == ' ' || p[-1] == '\t';
		char end = p[len];

		if (start && (end == '\0' || end == ' ' || end == '\t' || end == '\n'))
			return true;
	}
	return false;
}

const char *tsc_stable(const char *available_clocksource, const char *cpuinfo_flags)
{
	if (!available_clocksource || !cpuinfo_flags)
		return "unknown";
	return has_word(available_clocksource, "tsc") &&
			       has_word(cpuinfo_flags, "constant_tsc") &&
			       has_word(cpuinfo_flags, "nonstop_tsc") ?
		       "yes" :
		       "no";
}

/* First line of root/path without its newline; false when unreadable. */
static bool read_line(const char *root, const char *path, char *buf, size_t size)
{
	char full[4096];
	_cleanup_fclose_ FILE *f = NULL;

	snprintf(full, sizeof(full), "%s/%s", root, path);
	f = fopen(full, "re");
	if (!f || !fgets(buf, (int)size, f))
		return false;
	strip(buf);
	return true;
}

/* "model name" and the first "flags" line of cpuinfo; false when unreadable. */
static bool read_cpuinfo(const char *root, char *model, size_t model_size, char *flags,
			 size_t flags_size)
{
	char path[4096], line[8192];
	_cleanup_fclose_ FILE *f = NULL;

	snprintf(path, sizeof(path), "%s/proc/cpuinfo", root);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!colon)
			continue;
		if (!model[0] && strncmp(line, "model name", 10) == 0)
			snprintf(model, model_size, "%s", strip(colon + 1));
		else if (!flags[0] && strncmp(line, "flags", 5) == 0)
			snprintf(flags, flags_size, "%s", strip(colon + 1));
	}
	return true;
}

const char *hypervisor_of(int r, const char id[HYPERVISOR_ID_LEN], char *buf, size_t size)
{
	if (r > 0)
		return hypervisor_name(id, buf, size);
	snprintf(buf, size, "%s", r == 0 ? HWLAT_HYPERVISOR_NONE : "unknown");
	return buf;
}

void platform_read(const char *root, platform *ret)
{
	char id[HYPERVISOR_ID_LEN], available[1024], flags[8192] = "";
	bool have_available, have_cpuinfo;
	int r;

	memset(ret, 0, sizeof(*ret));
	if (!root)
		root = PLATFORM_ROOT_DEFAULT;

	have_cpuinfo = read_cpuinfo(root, ret->cpu_model, sizeof(ret->cpu_model), flags,
				    sizeof(flags));
	if (!ret->cpu_model[0])
		snprintf(ret->cpu_model, sizeof(ret->cpu_model), "unknown");

	r = cpuid_hypervisor_id(id);
	hypervisor_of(r, id, ret->hypervisor, sizeof(ret->hypervisor));

	if (!read_line(root, CLOCKSOURCE_DIR "/current_clocksource", ret->clocksource,
		       sizeof(ret->clocksource)) ||
	    !ret->clocksource[0])
		snprintf(ret->clocksource, sizeof(ret->clocksource), "unknown");

	if (have_cpuinfo)
		ret->smi_scope = has_word(flags, "hypervisor") ? HWLAT_SMI_SCOPE_GUEST :
								 HWLAT_SMI_SCOPE_HOST;
	else
		ret->smi_scope = smi_scope_of(ret->hypervisor);
	have_available = read_line(root, CLOCKSOURCE_DIR "/available_clocksource", available,
				   sizeof(available));
	ret->tsc_stable = tsc_stable(have_available ? available : NULL,
				     have_cpuinfo ? flags : NULL);
}
