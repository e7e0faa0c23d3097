/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The per-line accounting of a scan; see tally.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hwlat-journal.h"
#include "log.h"
#include "macro.h"
#include "tally.h"

void tally_init(scan_tally *t, const char *scan_id, bool per_cpu, FILE *export)
{
	snprintf(t->scan_id, sizeof(t->scan_id), "%s", scan_id);
	stats_init(&t->stats, 0, 0);
	t->per_cpu = per_cpu;
	t->export = export;
}

void tally_done(scan_tally *t)
{
	stats_done(&t->stats);
	for (size_t c = 0; c < HWLAT_MAX_CPUS; c++)
		if (t->cpu_stats[c]) {
			stats_done(t->cpu_stats[c]);
			free(t->cpu_stats[c]);
			t->cpu_stats[c] = NULL;
		}
}

char *escape_text(const char *text, size_t len, char *buf, size_t size)
{
	size_t i, o = 0;

	for (i = 0; i < len && o + 8 < size && o < 120; i++) {
		unsigned char ch = (unsigned char)text[i];

		if (ch >= 0x20 && ch < 0x7f && ch != '\\')
			buf[o++] = (char)ch;
		else
			o += (size_t)snprintf(buf + o, size - o, "\\x%02x", ch);
	}
	if (i < len)
		o += (size_t)snprintf(buf + o, size - o, "...");
	buf[o] = '\0';
	return buf;
}

void tally_skip(scan_tally *t, const char *what, const char *text, size_t len)
{
	char esc[160];

	t->skipped_lines++;
	if (t->skipped_lines <= BAD_LINE_MESSAGES_MAX)
		log_msg("skipping %s in the detector's stream: '%s'", what,
			escape_text(text, len, esc, sizeof(esc)));
	if (t->skipped_lines == BAD_LINE_MESSAGES_MAX)
		log_msg("further unreadable stream lines are counted, not shown");
}

void tally_bad_line(scan_tally *t, line_problem why, const char *text, size_t len)
{
	/* Before the scan: whatever it was, it is no part of it. */
	if (t->discard) {
		t->discarded++;
		return;
	}
	switch (why) {
	case LINE_TOO_LONG:
		tally_skip(t, "a line longer than " STRINGIFY(STREAM_LINE_MAX) " bytes", text, len);
		break;
	case LINE_HAS_NUL:
		tally_skip(t, "a line with a NUL byte", text, len);
		break;
	case LINE_CUT_AT_EOF:
		tally_skip(t, "a partial last line (the stream ended in the middle of it)", text,
			   len);
		break;
	}
}

/* The statistics of the scan, and per CPU when metrics are written. */
static int count_window(scan_tally *t, const hwlat_sample *smp, uint64_t lat)
{
	const struct stats_window w = {
		.latency_ns = lat,
		.count = smp->count,
		.nmi_count = smp->nmi_count,
		.smi_count_known = smp->smi_count_known,
		.smi_count = smp->smi_count,
		.smi_ns_known = smp->smi_ns_known,
		.smi_ns = smp->smi_ns,
	};
	struct stats **cpu = &t->cpu_stats[smp->cpu];
	int r = stats_add_window(&t->stats, &w, 0);

	if (r < 0 || !t->per_cpu)
		return r;
	if (!*cpu) {
		*cpu = malloc(sizeof(**cpu));
		if (!*cpu)
			return -ENOMEM;
		stats_init(*cpu, 0, 0);
	}
	return stats_add_window(*cpu, &w, 0);
}

/* A sequence number that is not the one after the last is a gap, or went back. */
static void count_seq(scan_tally *t, uint64_t seq)
{
	if (!t->seq_known)
		t->seq_known = true;
	else if (seq <= t->last_seq)
		log_msg("stream sequence went back from %llu to %llu",
			(unsigned long long)t->last_seq, (unsigned long long)seq);
	else
		t->seq_gaps += seq - t->last_seq - 1;
	t->last_seq = seq;
}

/*
 * Sends the entry built for smp: 0 once sent, or folded by the hooks when
 * journald did not take it in time (the monitor goes on); else the errno.
 */
static int tally_send(scan_tally *t, const hwlat_sample *smp)
{
	int r = 0;

	/*
	 * The monitor's entries say so: a report asked for "the newest scan"
	 * must not take a monitor that never ends for one.
	 */
	if (t->hooks)
		r = journal_entry_add(&t->entry, HWLAT_F_MONITOR "=1");
	if (r >= 0)
		r = journal_entry_send_patient(&t->entry, t->export, t->journal_patience_ns);
	if (r < 0 && t->hooks) {
		log_error_errno(r, "journald did not take entry %llu; counted in the interval's "
				"summary instead", (unsigned long long)smp->seq);
		t->hooks->unsent(t->hooks->data, smp);
		return 0;
	}
	return r;
}

/* Whether the hooks let smp be journaled (always without hooks). */
static bool tally_keep(scan_tally *t, const hwlat_sample *smp)
{
	return !t->hooks || t->hooks->keep(t->hooks->data, smp);
}

/* A skip record: its seq counts, its windows add up, and it is journaled. */
static int tally_skip_record(scan_tally *t, const hwlat_sample *smp)
{
	int r;

	t->skipped_windows += smp->skipped_windows;
	if (!tally_keep(t, smp))
		return 0;
	r = journal_entry_skip(&t->entry, t->scan_id, t->backend, smp);
	if (r >= 0)
		r = tally_send(t, smp);
	if (r < 0) {
		t->broken = true;
		return log_error_errno(r, "cannot write skip record %llu to the journal",
				       (unsigned long long)smp->seq);
	}
	return 0;
}

int tally_line(scan_tally *t, const char *line, line_parser parse, void *backend)
{
	hwlat_sample smp;
	uint64_t lat;
	int r;

	if (t->broken)
		return 0;
	if (t->discard) {
		t->discarded++;
		return 0;
	}
	r = parse(backend, line, &smp);
	if (r > 0)
		return 0;
	if (r < 0) {
		tally_skip(t, "a malformed line", line, strlen(line));
		return 0;
	}
	count_seq(t, smp.seq);
	if (smp.skipped_windows)
		return tally_skip_record(t, &smp);
	lat = hwlat_sample_latency_ns(&smp);
	t->samples++;
	if (lat > t->max_ns)
		t->max_ns = lat;
	smi_source_apply(&t->smi_src, &smp);
	smi_tally_add(&t->smi, &smp);
	t->nmi_total += smp.nmi_count;
	r = count_window(t, &smp, lat);
	if (r < 0) {
		t->broken = true;
		return log_error_errno(r, "cannot count sample %llu", (unsigned long long)smp.seq);
	}
	if (!tally_keep(t, &smp))
		return 0;
	r = journal_entry_sample_of(&t->entry, t->scan_id, t->threshold_ns, t->backend, &smp);
	if (r >= 0)
		r = tally_send(t, &smp);
	if (r < 0) {
		t->broken = true;
		return log_error_errno(r, "cannot write sample %llu to the journal",
				       (unsigned long long)smp.seq);
	}
	return 0;
}
