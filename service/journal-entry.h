/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Journal entries written by hwlat-scan (docs/interfaces.md section 2): a
 * pure mapping from a sample or a summary to an iovec array, and sending
 * that array to journald or, for tests, appending it to a file in journal
 * export format.
 */
#pragma once

#include <stdio.h>
#include <sys/uio.h>

#include "identity.h"
#include "sampled.h"
#include "stream.h"

#define ENTRY_MAX_FIELDS 64
/* HWLAT_SAMPLED_CPU_NS alone may take 27 KB (1024 CPUs). */
#define ENTRY_POOL_SIZE 65536

/* The iovecs point into pool: never copy a built entry. */
typedef struct journal_entry {
	struct iovec iov[ENTRY_MAX_FIELDS];
	size_t n;
	char pool[ENTRY_POOL_SIZE];
	size_t used;
} journal_entry;

typedef struct scan_summary {
	const char *scan_id; /* 32 hex digits */
	const char *status;  /* HWLAT_STATUS_* */
	uint64_t threshold_ns;
	uint64_t width_ns;
	uint64_t window_ns;
	uint64_t hardlimit_ns; /* 0: none */
	const char *mode;
	const char *cpus;
	const char *kernel;
	const char *cpu_model;
	const char *clock;
	uint64_t start_ns;
	uint64_t duration_ns;
	uint64_t samples;
	uint64_t max_ns;
	uint64_t dropped;
	bool smi_total_known;
	uint64_t smi_total;
	const char *smi_method;      /* HWLAT_SMI_METHOD_* */
	const char *smi_unavailable; /* the reason, when !smi_total_known */
	uint64_t nmi_total;
	uint64_t floor_ns;
	bool floor_unavailable; /* the kernel tracer measures none */
	const char *hypervisor;
	const char *smi_scope; /* HWLAT_SMI_SCOPE_* */
	const char *clocksource;
	const char *tsc_stable;
	const char *cpus_excluded; /* NULL: no HWLAT_CPUS_EXCLUDED field */
	uint64_t skipped_lines; /* stream lines that could not be read */
	/* Which machine; NULL writes every field "unavailable". */
	const machine_identity *identity;
	/* Under lockdown: where the settings came from, what was not applied. */
	const char *settings_source;	  /* HWLAT_SETTINGS_SOURCE_* */
	const char *settings_not_applied; /* NULL: every requested setting in force */
	const char *backend; /* HWLAT_BACKEND_*; NULL: module */
	/* The time sampled; NULL writes "unavailable". */
	const sampled_time *sampled;
	/* The windows skipped per CPU; NULL writes "unavailable" (the tracer). */
	const cpu_values *skipped;
} scan_summary;

/* Resets e and adds one "NAME=value" field; -E2BIG when e is full. */
void journal_entry_init(journal_entry *e);
int journal_entry_add(journal_entry *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* One NAME=value field: str, or the number num when str is NULL. */
struct entry_field {
	const char *name; /* NULL: the field is left out */
	const char *str;
	uint64_t num;
};

/* Adds the named fields of f[0..n). */
int journal_entry_add_fields(journal_entry *e, const struct entry_field *f, size_t n);

/* A number that may be unknown: NULL (take num) or HWLAT_UNAVAILABLE. */
const char *unless_known(bool known);

/*
 * A per-CPU totals file as two fields: total_field=<total> and
 * cpu_field=<cpu>:<value> ...; both "unavailable" when t is NULL.
 */
int journal_entry_add_cpu_values(journal_entry *e, const char *total_field,
				 const char *cpu_field, const cpu_values *t);

/*
 * Builds the sample entry (MESSAGE_ID, MESSAGE, PRIORITY, HWLAT_*) of a
 * sample of backend (HWLAT_BACKEND_*).
 */
int journal_entry_sample_of(journal_entry *e, const char *scan_id, uint64_t threshold_ns,
			    const char *backend, const hwlat_sample *s);
/* The entry of a skip record (HWLAT_SKIP_MESSAGE_ID) of backend. */
int journal_entry_skip(journal_entry *e, const char *scan_id, const char *backend,
		       const hwlat_sample *s);
/* The same for a sample of the module. */
int journal_entry_sample(journal_entry *e, const char *scan_id,
			 uint64_t threshold_ns, const hwlat_sample *s);

/* Builds the summary entry. */
int journal_entry_summary(journal_entry *e, const scan_summary *s);

/* The journal socket journal_entry_send() writes to without an export file. */
#define JOURNAL_SOCKET "/run/systemd/journal/socket"

/*
 * Checks that journald listens on JOURNAL_SOCKET (sd_journal_sendv() drops
 * entries silently when it does not). Returns 0 or a negative errno
 * (-ENOENT: no socket, -ECONNREFUSED: nobody listening).
 */
int journal_check_socket(void);

/*
 * Sends e to journald, or appends it to export (journal export format, with
 * __REALTIME_TIMESTAMP, __MONOTONIC_TIMESTAMP and _BOOT_ID) when export is
 * not NULL. Returns 0 or a negative errno.
 */
int journal_entry_send(const journal_entry *e, FILE *export);

/*
 * journal_entry_send(), and when journald refuses the entry (restarting:
 * its socket gone or nobody listening), tries again every
 * JOURNAL_RETRY_MS for up to patience_ns, saying so once on standard
 * error and again when it went through. patience_ns 0: one try.
 */
#define JOURNAL_RETRY_MS 100
int journal_entry_send_patient(const journal_entry *e, FILE *export, uint64_t patience_ns);
