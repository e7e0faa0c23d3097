/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The monitor's SMI count: MSR_SMI_COUNT (0x34) of one housekeeping CPU,
 * read through the msr driver's /dev/cpu/N/msr by a process bound to CPU N.
 * The driver reads another CPU's MSR with an IPI, which a CPU inside a
 * width serves only when the width ends and which an isolated CPU must
 * never get; bound to N, the read is a local rdmsr. The counter counts
 * every SMI the CPU took, sampled or not, and firmware broadcasts SMIs to
 * every CPU, so one CPU's delta is the machine's SMI count
 * (docs/design.md, "SMIs in the monitor").
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "parse.h"

#define MSR_SMI_COUNT 0x34
#define SMI_MSR_DIR "/dev/cpu"

typedef struct smi_msr {
	int cpu;	 /* the CPU read; -1 when none could be chosen */
	int fd;		 /* <dir>/<cpu>/msr; -1 */
	bool have_last;	 /* last holds a reading */
	uint64_t last;	 /* the counter at the last reading (32 bits) */
	char reason[4096 + 512]; /* why the last reading failed */
} smi_msr;

/*
 * The housekeeping CPU to read: the lowest CPU of allowed (the process's
 * affinity) that online lists and neither isolated nor nohz_full does
 * (the sysfs files' cpulists; NULL or "" for none). -1 when there is none.
 */
int smi_msr_pick_cpu(const cpu_set_bits *allowed, const char *online, const char *isolated,
		     const char *nohz_full);

/*
 * Chooses the CPU from <root>/sys/devices/system/cpu (root NULL: /), binds
 * the process to it and opens <dir>/<cpu>/msr (dir NULL: SMI_MSR_DIR). A
 * failure is no error: the readings say "unavailable" and why.
 */
void smi_msr_open(smi_msr *m, const char *root, const char *dir);
void smi_msr_close(smi_msr *m);

/*
 * Reads the counter; with a reading before it, true and the SMIs since
 * (modulo 2^32) in *ret. false when either reading is missing (m->reason
 * says why); the next one then starts afresh.
 */
bool smi_msr_delta(smi_msr *m, uint64_t *ret);

/* The SMIs from counter value last to now, as the 32-bit counter wraps. */
uint64_t smi_msr_wrap_delta(uint64_t last, uint64_t now);
