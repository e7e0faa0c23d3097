/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Sample and summary journal entries of hwlat-scan. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-id128.h>
#include <systemd/sd-journal.h>

#include "hwlat-journal.h"
#include "deadline.h"
#include "journal-entry.h"
#include "log.h"
#include "parse.h"

void journal_entry_init(journal_entry *e)
{
	e->n = 0;
	e->used = 0;
}

int journal_entry_add(journal_entry *e, const char *fmt, ...)
{
	size_t room = sizeof(e->pool) - e->used;
	va_list ap;
	int len;

	if (e->n >= ENTRY_MAX_FIELDS)
		return -E2BIG;
	va_start(ap, fmt);
	len = vsnprintf(e->pool + e->used, room, fmt, ap);
	va_end(ap);
	if (len < 0)
		return -EINVAL;
	if ((size_t)len >= room)
		return -E2BIG;

	e->iov[e->n].iov_base = e->pool + e->used;
	e->iov[e->n].iov_len = (size_t)len;
	e->n++;
	e->used += (size_t)len + 1;
	return 0;
}

const char *unless_known(bool known)
{
	return known ? NULL : HWLAT_UNAVAILABLE;
}

/* A text field whose value was not found. */
static const char *or_unknown(const char *s)
{
	return s ? s : "unknown";
}

int journal_entry_add_fields(journal_entry *e, const struct entry_field *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int r = !f[i].name ? 0 :
			f[i].str   ? journal_entry_add(e, "%s=%s", f[i].name, f[i].str) :
				     journal_entry_add(e, "%s=%" PRIu64, f[i].name, f[i].num);

		if (r < 0)
			return r;
	}
	return 0;
}

/* " (SMI)", " (NMI)", " (SMI, NMI)" or "". */
static const char *attribution(const hwlat_sample *s)
{
	bool smi = s->smi_count_known && s->smi_count;

	if (smi && s->nmi_count)
		return " (SMI, NMI)";
	if (smi)
		return " (SMI)";
	if (s->nmi_count)
		return " (NMI)";
	return "";
}

int journal_entry_sample(journal_entry *e, const char *scan_id,
			 uint64_t threshold_ns, const hwlat_sample *s)
{
	return journal_entry_sample_of(e, scan_id, threshold_ns, HWLAT_BACKEND_MODULE, s);
}

int journal_entry_sample_of(journal_entry *e, const char *scan_id, uint64_t threshold_ns,
			    const char *backend, const hwlat_sample *s)
{
	uint64_t latency = hwlat_sample_latency_ns(s);
	const struct entry_field fields[] = {
		/* A gap over the threshold is a warning; an NMI/SMI alone a notice. */
		{ "PRIORITY", .num = latency > threshold_ns ? 4 : 5 },
		{ "SYSLOG_IDENTIFIER", .str = "hwlat-scan" },
		{ HWLAT_F_SCAN_ID, .str = scan_id },
		{ HWLAT_F_SEQ, .num = s->seq },
		{ HWLAT_F_CPU, .num = s->cpu },
		{ HWLAT_F_INNER_NS, .num = s->inner_ns },
		{ HWLAT_F_OUTER_NS, .num = s->outer_ns },
		{ HWLAT_F_LATENCY_NS, .num = latency },
		{ HWLAT_F_COUNT, .num = s->count },
		{ HWLAT_F_NMI_COUNT, .num = s->nmi_count },
		{ HWLAT_F_NMI_NS, unless_known(!s->nmi_ns_unavailable), s->nmi_ns },
		{ HWLAT_F_SMI_COUNT, unless_known(s->smi_count_known), s->smi_count },
		{ HWLAT_F_SMI_NS, unless_known(s->smi_ns_known), s->smi_ns },
		{ HWLAT_F_TIMESTAMP_NS, .num = s->timestamp_ns },
		{ HWLAT_F_THRESHOLD_NS, .num = threshold_ns },
		{ HWLAT_F_BACKEND, .str = backend },
	};
	char lat[32];
	int r;

	journal_entry_init(e);
	r = journal_entry_add(e, "MESSAGE_ID=%s", HWLAT_SAMPLE_MESSAGE_ID);
	if (r >= 0)
		r = journal_entry_add(e, "MESSAGE=hardware latency %s on CPU %u%s",
				      format_latency(latency, lat, sizeof(lat)), s->cpu,
				      attribution(s));
	if (r >= 0)
		r = journal_entry_add_fields(e, fields, sizeof(fields) / sizeof(fields[0]));
	return r < 0 ? r : 0;
}

int journal_entry_skip(journal_entry *e, const char *scan_id, const char *backend,
		       const hwlat_sample *s)
{
	const struct entry_field fields[] = {
		/* Time the user meant to sample was not: a warning. */
		{ "PRIORITY", .num = 4 },
		{ "SYSLOG_IDENTIFIER", .str = "hwlat-scan" },
		{ HWLAT_F_SCAN_ID, .str = scan_id },
		{ HWLAT_F_SEQ, .num = s->seq },
		{ HWLAT_F_CPU, .num = s->cpu },
		{ HWLAT_F_SKIPPED_WINDOWS, .num = s->skipped_windows },
		{ HWLAT_F_TIMESTAMP_NS, .num = s->timestamp_ns },
		{ HWLAT_F_BACKEND, .str = backend },
	};
	int r;

	journal_entry_init(e);
	r = journal_entry_add(e, "MESSAGE_ID=%s", HWLAT_SKIP_MESSAGE_ID);
	if (r >= 0)
		r = journal_entry_add(e, "MESSAGE=CPU %u not sampled for %llu window%s: "
				      "the sampler could not get onto it (a task of its "
				      "priority or above held it)",
				      s->cpu, (unsigned long long)s->skipped_windows,
				      s->skipped_windows == 1 ? "" : "s");
	if (r >= 0)
		r = journal_entry_add_fields(e, fields, sizeof(fields) / sizeof(fields[0]));
	return r < 0 ? r : 0;
}

/* A failed scan is an error, one over the hard limit a warning, an
 * interrupted one a notice. */
static int summary_priority(const char *status, bool over)
{
	if (strcmp(status, HWLAT_STATUS_FAILED) == 0)
		return 3;
	if (over)
		return 4;
	if (strcmp(status, HWLAT_STATUS_INTERRUPTED) == 0)
		return 5;
	return 6;
}

/* The machine identity fields, all "unavailable" without one. */
static int add_identity(journal_entry *e, const machine_identity *known)
{
	machine_identity none;
	const machine_identity *id = known;

	if (!id) {
		identity_unavailable(&none);
		id = &none;
	}
	const struct entry_field fields[] = {
		{ HWLAT_F_SYS_VENDOR, .str = id->sys_vendor },
		{ HWLAT_F_PRODUCT_NAME, .str = id->product_name },
		{ HWLAT_F_BOARD_VENDOR, .str = id->board_vendor },
		{ HWLAT_F_BOARD_NAME, .str = id->board_name },
		{ HWLAT_F_BIOS_VENDOR, .str = id->bios_vendor },
		{ HWLAT_F_BIOS_VERSION, .str = id->bios_version },
		{ HWLAT_F_BIOS_DATE, .str = id->bios_date },
		{ HWLAT_F_MICROCODE, .str = id->microcode },
		{ HWLAT_F_CPU_COUNT, unless_known(id->cpu_count_known), id->cpu_count },
	};

	return journal_entry_add_fields(e, fields, sizeof(fields) / sizeof(fields[0]));
}

/*
 * A per-CPU totals pair: HWLAT_SAMPLED_NS and HWLAT_SAMPLED_CPU_NS, or
 * HWLAT_SKIPPED_WINDOWS and HWLAT_SKIPPED_CPU_WINDOWS.
 */
int journal_entry_add_cpu_values(journal_entry *e, const char *total_field,
				  const char *cpu_field, const cpu_values *t)
{
	char *cpus;
	int r;

	if (!t) {
		r = journal_entry_add(e, "%s=%s", total_field, HWLAT_UNAVAILABLE);
		return r < 0 ? r : journal_entry_add(e, "%s=%s", cpu_field, HWLAT_UNAVAILABLE);
	}
	cpus = cpu_values_format(t);
	if (!cpus)
		return -ENOMEM;
	r = journal_entry_add(e, "%s=%" PRIu64, total_field, t->total);
	if (r >= 0)
		r = journal_entry_add(e, "%s=%s", cpu_field, cpus);
	free(cpus);
	return r;
}

int journal_entry_summary(journal_entry *e, const scan_summary *s)
{
	bool over = s->hardlimit_ns && s->max_ns > s->hardlimit_ns;
	const struct entry_field fields[] = {
		{ "PRIORITY", .num = summary_priority(s->status, over) },
		{ "SYSLOG_IDENTIFIER", .str = "hwlat-scan" },
		{ HWLAT_F_SCAN_ID, .str = s->scan_id },
		{ HWLAT_F_STATUS, .str = s->status },
		{ HWLAT_F_THRESHOLD_NS, .num = s->threshold_ns },
		{ HWLAT_F_WIDTH_NS, .num = s->width_ns },
		{ HWLAT_F_WINDOW_NS, .num = s->window_ns },
		{ HWLAT_F_HARDLIMIT_NS, .num = s->hardlimit_ns },
		{ HWLAT_F_MODE, .str = s->mode },
		{ HWLAT_F_CPUS, .str = s->cpus },
		{ HWLAT_F_KERNEL, .str = s->kernel },
		{ HWLAT_F_CPU_MODEL, .str = s->cpu_model },
		{ HWLAT_F_CLOCK, .str = s->clock },
		{ HWLAT_F_HYPERVISOR, .str = or_unknown(s->hypervisor) },
		{ HWLAT_F_SMI_SCOPE, .str = or_unknown(s->smi_scope) },
		{ HWLAT_F_CLOCKSOURCE, .str = or_unknown(s->clocksource) },
		{ HWLAT_F_TSC_STABLE, .str = or_unknown(s->tsc_stable) },
		{ s->cpus_excluded ? HWLAT_F_CPUS_EXCLUDED : NULL, .str = s->cpus_excluded },
		{ HWLAT_F_START_NS, .num = s->start_ns },
		{ HWLAT_F_DURATION_NS, .num = s->duration_ns },
		{ HWLAT_F_SAMPLES, .num = s->samples },
		{ HWLAT_F_MAX_NS, .num = s->max_ns },
		{ HWLAT_F_DROPPED, .num = s->dropped },
		{ HWLAT_F_SMI_TOTAL, unless_known(s->smi_total_known), s->smi_total },
		{ HWLAT_F_SMI_METHOD, .str = or_unknown(s->smi_method) },
		{ s->smi_total_known ? NULL : HWLAT_F_SMI_UNAVAILABLE, .str = or_unknown(s->smi_unavailable) },
		{ HWLAT_F_NMI_TOTAL, .num = s->nmi_total },
		{ HWLAT_F_FLOOR_NS, unless_known(!s->floor_unavailable), s->floor_ns },
		{ HWLAT_F_SKIPPED_LINES, .num = s->skipped_lines },
		/* Where the settings came from (lockdown refuses debugfs writes). */
		{ HWLAT_F_SETTINGS_SOURCE, .str = or_unknown(s->settings_source) },
		{ s->settings_not_applied ? HWLAT_F_SETTINGS_NOT_APPLIED : NULL,
		  .str = s->settings_not_applied },
		/* Who sampled. */
		{ HWLAT_F_BACKEND, .str = s->backend ? s->backend : HWLAT_BACKEND_MODULE },
	};
	char max[32], limit[32], skipped[64] = "";
	int r;

	if (s->skipped_lines)
		snprintf(skipped, sizeof(skipped), ", %llu unreadable stream lines skipped",
			 (unsigned long long)s->skipped_lines);
	journal_entry_init(e);
	r = journal_entry_add(e, "MESSAGE_ID=%s", HWLAT_SUMMARY_MESSAGE_ID);
	if (r >= 0)
		r = journal_entry_add(e, "MESSAGE=hardware latency scan %s: %llu samples, max %s, %llu dropped, %llu.%03llu s scanned%s%s%s",
				      s->status, (unsigned long long)s->samples,
				      s->samples ? format_latency(s->max_ns, max, sizeof(max)) : "-",
				      (unsigned long long)s->dropped,
				      (unsigned long long)(s->duration_ns / NSEC_PER_SEC),
				      (unsigned long long)(s->duration_ns % NSEC_PER_SEC / NSEC_PER_MSEC),
				      skipped,
				      over ? ", exceeds hard limit " : "",
				      over ? format_latency(s->hardlimit_ns, limit, sizeof(limit)) : "");
	if (r >= 0)
		r = journal_entry_add_fields(e, fields, sizeof(fields) / sizeof(fields[0]));
	if (r >= 0)
		r = journal_entry_add_cpu_values(e, HWLAT_F_SAMPLED_NS, HWLAT_F_SAMPLED_CPU_NS,
						 s->sampled);
	if (r >= 0)
		r = journal_entry_add_cpu_values(e, HWLAT_F_SKIPPED_WINDOWS,
						 HWLAT_F_SKIPPED_CPU_WINDOWS, s->skipped);
	if (r >= 0)
		r = add_identity(e, s->identity);
	return r < 0 ? r : 0;
}

static uint64_t now_us(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* One field; values with a newline use the binary-safe form. */
static void export_field(FILE *f, const struct iovec *iov)
{
	const char *data = iov->iov_base, *eq;
	size_t name_len;
	uint64_t len;
	unsigned char le[8];
	int i;

	eq = memchr(data, '=', iov->iov_len);
	if (!eq)
		return;
	name_len = (size_t)(eq - data);
	if (!memchr(eq + 1, '\n', iov->iov_len - name_len - 1)) {
		fwrite(data, 1, iov->iov_len, f);
		fputc('\n', f);
		return;
	}
	len = iov->iov_len - name_len - 1;
	for (i = 0; i < 8; i++)
		le[i] = (unsigned char)(len >> (8 * i));
	fwrite(data, 1, name_len, f);
	fputc('\n', f);
	fwrite(le, 1, sizeof(le), f);
	fwrite(eq + 1, 1, len, f);
	fputc('\n', f);
}

int journal_check_socket(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = JOURNAL_SOCKET };
	int fd, r = 0;

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A datagram connect() fails unless a socket is bound there. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		r = -errno;
	close(fd);
	return r;
}

int journal_entry_send(const journal_entry *e, FILE *export)
{
	sd_id128_t boot;
	size_t i;
	int r;

	if (!export) {
		r = sd_journal_sendv(e->iov, (int)e->n);
		return r < 0 ? r : 0;
	}

	r = sd_id128_get_boot(&boot);
	if (r < 0)
		return r;
	fprintf(export, "__REALTIME_TIMESTAMP=%llu\n__MONOTONIC_TIMESTAMP=%llu\n_BOOT_ID=" SD_ID128_FORMAT_STR "\n",
		(unsigned long long)now_us(CLOCK_REALTIME),
		(unsigned long long)now_us(CLOCK_MONOTONIC),
		SD_ID128_FORMAT_VAL(boot));
	for (i = 0; i < e->n; i++)
		export_field(export, &e->iov[i]);
	fputc('\n', export);
	/* As it arrives: an entry is on disk before the next sample is read. */
	if (fflush(export) != 0)
		return -errno;
	return 0;
}

int journal_entry_send_patient(const journal_entry *e, FILE *export, uint64_t patience_ns)
{
	uint64_t start, waited;
	int r = journal_entry_send(e, export);

	if (r >= 0 || !patience_ns || export)
		return r;
	log_error_errno(r, "journald did not take an entry; trying again for up to %llu s",
			(unsigned long long)(patience_ns / NSEC_PER_SEC));
	start = now_ns(CLOCK_MONOTONIC);
	do {
		usleep(JOURNAL_RETRY_MS * 1000);
		r = journal_entry_send(e, export);
		waited = now_ns(CLOCK_MONOTONIC) - start;
	} while (r < 0 && waited < patience_ns);
	if (r >= 0)
		log_msg("journald took the entry after %llu ms",
			(unsigned long long)(waited / NSEC_PER_MSEC));
	return r;
}
