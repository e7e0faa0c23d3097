/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Sample and summary journal entries of hwlat-scan. */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include <systemd/sd-id128.h>
#include <systemd/sd-journal.h>

#include "hwlat-journal.h"
#include "journal-entry.h"
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

#define ADD(e, ...)                                          \
	do {                                                 \
		int _r = journal_entry_add((e), __VA_ARGS__); \
		if (_r < 0)                                  \
			return _r;                           \
	} while (0)

#define ADD_U64(e, field, v) ADD(e, field "=%llu", (unsigned long long)(v))

/* " (SMI)", " (NMI)", " (SMI, NMI)" or "". */
static const char *attribution(const hwlat_sample *s)
{
	if (s->smi_count && s->nmi_count)
		return " (SMI, NMI)";
	if (s->smi_count)
		return " (SMI)";
	if (s->nmi_count)
		return " (NMI)";
	return "";
}

int journal_entry_sample(journal_entry *e, const char *scan_id,
			 uint64_t threshold_ns, const hwlat_sample *s)
{
	uint64_t latency = hwlat_sample_latency_ns(s);
	char lat[32];

	journal_entry_init(e);
	ADD(e, "MESSAGE_ID=%s", HWLAT_SAMPLE_MESSAGE_ID);
	ADD(e, "MESSAGE=hardware latency %s on CPU %u%s",
	    format_latency(latency, lat, sizeof(lat)), s->cpu, attribution(s));
	/* A gap over the threshold is a warning; an NMI/SMI alone a notice. */
	ADD(e, "PRIORITY=%d", latency > threshold_ns ? 4 : 5);
	ADD(e, "SYSLOG_IDENTIFIER=hwlat-scan");
	ADD(e, HWLAT_F_SCAN_ID "=%s", scan_id);
	ADD_U64(e, HWLAT_F_SEQ, s->seq);
	ADD(e, HWLAT_F_CPU "=%u", s->cpu);
	ADD_U64(e, HWLAT_F_INNER_NS, s->inner_ns);
	ADD_U64(e, HWLAT_F_OUTER_NS, s->outer_ns);
	ADD_U64(e, HWLAT_F_LATENCY_NS, latency);
	ADD_U64(e, HWLAT_F_COUNT, s->count);
	ADD_U64(e, HWLAT_F_NMI_COUNT, s->nmi_count);
	ADD_U64(e, HWLAT_F_NMI_NS, s->nmi_ns);
	ADD_U64(e, HWLAT_F_SMI_COUNT, s->smi_count);
	ADD_U64(e, HWLAT_F_TIMESTAMP_NS, s->timestamp_ns);
	ADD_U64(e, HWLAT_F_THRESHOLD_NS, threshold_ns);
	return 0;
}

int journal_entry_summary(journal_entry *e, const scan_summary *s)
{
	bool over = s->hardlimit_ns && s->max_ns > s->hardlimit_ns;
	char max[32], limit[32];
	int prio;

	if (strcmp(s->status, HWLAT_STATUS_FAILED) == 0)
		prio = 3;
	else if (over)
		prio = 4;
	else if (strcmp(s->status, HWLAT_STATUS_INTERRUPTED) == 0)
		prio = 5;
	else
		prio = 6;

	journal_entry_init(e);
	ADD(e, "MESSAGE_ID=%s", HWLAT_SUMMARY_MESSAGE_ID);
	ADD(e, "MESSAGE=hardware latency scan %s: %llu samples, max %s, %llu dropped, %llu.%03llu s scanned%s%s",
	    s->status, (unsigned long long)s->samples,
	    s->samples ? format_latency(s->max_ns, max, sizeof(max)) : "-",
	    (unsigned long long)s->dropped,
	    (unsigned long long)(s->duration_ns / NSEC_PER_SEC),
	    (unsigned long long)(s->duration_ns % NSEC_PER_SEC / NSEC_PER_MSEC),
	    over ? ", exceeds hard limit " : "",
	    over ? format_latency(s->hardlimit_ns, limit, sizeof(limit)) : "");
	ADD(e, "PRIORITY=%d", prio);
	ADD(e, "SYSLOG_IDENTIFIER=hwlat-scan");
	ADD(e, HWLAT_F_SCAN_ID "=%s", s->scan_id);
	ADD(e, HWLAT_F_STATUS "=%s", s->status);
	ADD_U64(e, HWLAT_F_THRESHOLD_NS, s->threshold_ns);
	ADD_U64(e, HWLAT_F_WIDTH_NS, s->width_ns);
	ADD_U64(e, HWLAT_F_WINDOW_NS, s->window_ns);
	ADD_U64(e, HWLAT_F_HARDLIMIT_NS, s->hardlimit_ns);
	ADD(e, HWLAT_F_MODE "=%s", s->mode);
	ADD(e, HWLAT_F_CPUS "=%s", s->cpus);
	ADD(e, HWLAT_F_KERNEL "=%s", s->kernel);
	ADD(e, HWLAT_F_CPU_MODEL "=%s", s->cpu_model);
	ADD(e, HWLAT_F_CLOCK "=%s", s->clock);
	ADD_U64(e, HWLAT_F_START_NS, s->start_ns);
	ADD_U64(e, HWLAT_F_DURATION_NS, s->duration_ns);
	ADD_U64(e, HWLAT_F_SAMPLES, s->samples);
	ADD_U64(e, HWLAT_F_MAX_NS, s->max_ns);
	ADD_U64(e, HWLAT_F_DROPPED, s->dropped);
	ADD_U64(e, HWLAT_F_SMI_TOTAL, s->smi_total);
	ADD_U64(e, HWLAT_F_NMI_TOTAL, s->nmi_total);
	ADD_U64(e, HWLAT_F_FLOOR_NS, s->floor_ns);
	return 0;
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
