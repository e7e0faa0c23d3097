/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The monitor's SMI count; see smi-msr.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"
#include "smi-msr.h"

static bool parse_set(const char *list, cpu_set_bits *ret)
{
	memset(ret, 0, sizeof(*ret));
	return list && list[0] && parse_cpulist(list, ret) == 0;
}

int smi_msr_pick_cpu(const cpu_set_bits *allowed, const char *online, const char *isolated,
		     const char *nohz_full)
{
	cpu_set_bits on, iso, nohz;

	if (!parse_set(online, &on))
		return -1;
	parse_set(isolated, &iso);
	parse_set(nohz_full, &nohz);
	for (unsigned c = 0; c < HWLAT_MAX_CPUS; c++)
		if (cpu_set_has(allowed, c) && cpu_set_has(&on, c) && !cpu_set_has(&iso, c) &&
		    !cpu_set_has(&nohz, c))
			return (int)c;
	return -1;
}

/* A sysfs cpulist file's first line, "" when missing or empty. */
static char *read_list(const char *root, const char *name, char *buf, size_t size)
{
	char path[PATH_MAX];
	_cleanup_fclose_ FILE *f = NULL;

	snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/%s", root ? root : "", name);
	buf[0] = '\0';
	f = fopen(path, "re");
	if (f && !fgets(buf, (int)size, f))
		buf[0] = '\0';
	return strip(buf);
}

static void allowed_cpus(cpu_set_bits *ret)
{
	cpu_set_t set;

	memset(ret, 0, sizeof(*ret));
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return;
	for (unsigned c = 0; c < CPU_SETSIZE && c < HWLAT_MAX_CPUS; c++)
		if (CPU_ISSET(c, &set))
			ret->bits[c / 64] |= UINT64_C(1) << (c % 64);
}

/* Binds the process to cpu: its reads of that CPU's MSR stay local. */
static int bind_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) < 0 ? -errno : 0;
}

void smi_msr_open(smi_msr *m, const char *root, const char *dir)
{
	char online[4096], iso[4096], nohz[4096], path[2048];
	cpu_set_bits allowed;
	int r;

	memset(m, 0, sizeof(*m));
	m->fd = -1;
	allowed_cpus(&allowed);
	m->cpu = smi_msr_pick_cpu(&allowed, read_list(root, "online", online, sizeof(online)),
				  read_list(root, "isolated", iso, sizeof(iso)),
				  read_list(root, "nohz_full", nohz, sizeof(nohz)));
	if (m->cpu < 0) {
		snprintf(m->reason, sizeof(m->reason),
			 "no housekeeping CPU (online, not isolated, not nohz_full) to read "
			 "MSR_SMI_COUNT on");
		return;
	}
	r = bind_to(m->cpu);
	if (r < 0) {
		snprintf(m->reason, sizeof(m->reason), "cannot bind to CPU %d to read its "
			 "MSR_SMI_COUNT: %s", m->cpu, strerror(-r));
		return;
	}
	snprintf(path, sizeof(path), "%s/%d/msr", dir ? dir : SMI_MSR_DIR, m->cpu);
	m->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (m->fd >= 0)
		return;
	if (errno == ENOENT)
		snprintf(m->reason, sizeof(m->reason), "%s does not exist (the msr module is not "
			 "loaded: modprobe msr)", path);
	else
		snprintf(m->reason, sizeof(m->reason), "cannot open %s: %s%s", path,
			 strerror(errno), errno == EPERM || errno == EACCES ?
			 " (reading MSRs needs CAP_SYS_RAWIO)" : "");
}

void smi_msr_close(smi_msr *m)
{
	closep(&m->fd);
	m->fd = -1;
}

uint64_t smi_msr_wrap_delta(uint64_t last, uint64_t now)
{
	return (now - last) & UINT32_MAX;
}

bool smi_msr_delta(smi_msr *m, uint64_t *ret)
{
	uint64_t v;
	ssize_t n;
	bool had = m->have_last;

	m->have_last = false;
	if (m->fd < 0)
		return false;
	n = pread(m->fd, &v, sizeof(v), MSR_SMI_COUNT);
	if (n != (ssize_t)sizeof(v)) {
		snprintf(m->reason, sizeof(m->reason),
			 "MSR_SMI_COUNT cannot be read on CPU %d (%s): not an Intel CPU, or a "
			 "hypervisor hides it", m->cpu, n < 0 ? strerror(errno) : "short read");
		return false;
	}
	v &= UINT32_MAX;
	*ret = had ? smi_msr_wrap_delta(m->last, v) : 0;
	m->last = v;
	m->have_last = true;
	return had;
}
