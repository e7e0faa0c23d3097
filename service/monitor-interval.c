/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The monitor's accounting; see monitor-interval.h. */
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "monitor-interval.h"

/*
 * The labels as Prometheus's own clients print these floats (Go's 'g'
 * format): the alert rules name them (le="0.0001"), so they are fixed text.
 */
static const struct {
	uint64_t ns;
	const char *label;
} buckets[GAP_BUCKETS] = {
	{ 1000, "1e-06" },	    { 2000, "2e-06" },	       { 5000, "5e-06" },
	{ 10000, "1e-05" },	    { 20000, "2e-05" },	       { 50000, "5e-05" },
	{ 100000, "0.0001" },	    { 200000, "0.0002" },      { 500000, "0.0005" },
	{ 1000000, "0.001" },	    { 2000000, "0.002" },      { 5000000, "0.005" },
	{ 10000000, "0.01" },	    { 20000000, "0.02" },      { 50000000, "0.05" },
	{ 100000000, "0.1" },	    { 200000000, "0.2" },      { 500000000, "0.5" },
	{ 1000000000, "1" },
};

uint64_t gap_bucket_ns(unsigned i)
{
	return i < GAP_BUCKETS ? buckets[i].ns : UINT64_MAX;
}

const char *gap_bucket_label(unsigned i)
{
	return i < GAP_BUCKETS ? buckets[i].label : "+Inf";
}

void gap_histogram_add(gap_histogram *h, uint64_t ns)
{
	unsigned i = 0;

	/* le is inclusive: 100 us goes into le="0.0001". */
	while (i < GAP_BUCKETS && ns > buckets[i].ns)
		i++;
	h->count[i]++;
	h->n++;
	h->sum_ns += ns;
}

void gap_histogram_merge(gap_histogram *dst, const gap_histogram *src)
{
	for (unsigned i = 0; i <= GAP_BUCKETS; i++)
		dst->count[i] += src->count[i];
	dst->n += src->n;
	dst->sum_ns += src->sum_ns;
}

char *gap_histogram_format(const gap_histogram *h, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i <= GAP_BUCKETS && len < size; i++)
		if (h->count[i])
			len += (size_t)snprintf(buf + len, size - len, "%s%s:%llu", len ? " " : "",
						gap_bucket_label(i),
						(unsigned long long)h->count[i]);
	return buf;
}

const char *pause_reason_name(pause_reason r)
{
	static const char *const names[_PAUSE_REASON_MAX] = {
		[PAUSE_SCAN] = "scan",
		[PAUSE_DETECTOR] = "detector",
	};

	return (unsigned)r < _PAUSE_REASON_MAX ? names[r] : "unknown";
}

void monitor_interval_start(monitor_interval *iv, uint64_t number, uint64_t start_ns,
			    uint64_t threshold_ns, uint64_t budget)
{
	memset(iv, 0, sizeof(*iv));
	iv->number = number;
	iv->start_ns = start_ns;
	iv->threshold_ns = threshold_ns;
	iv->budget = budget;
}

/* Counted in the summary instead of an entry of its own. */
static void fold(monitor_interval *iv, const hwlat_sample *s)
{
	if (s->skipped_windows) {
		iv->folded_skip_records++;
		return;
	}
	iv->folded++;
	if (s->count > 0)
		gap_histogram_add(&iv->folded_hist, hwlat_sample_latency_ns(s));
}

bool monitor_interval_sample(monitor_interval *iv, const hwlat_sample *s)
{
	uint64_t lat = hwlat_sample_latency_ns(s);
	bool gap = s->count > 0;

	if (!s->skipped_windows) {
		iv->windows++;
		iv->nmis += s->nmi_count;
		iv->gaps += s->count;
		if (gap) {
			iv->gap_windows++;
			gap_histogram_add(&iv->hist, lat);
			if (lat > iv->max_ns)
				iv->max_ns = lat;
			if (!s->nmi_count && !(s->smi_count_known && s->smi_count))
				iv->unexplained++;
		}
	}
	if (iv->journaled < iv->budget) {
		iv->journaled++;
		return true;
	}
	fold(iv, s);
	return false;
}

void monitor_interval_unjournal(monitor_interval *iv, const hwlat_sample *s)
{
	if (iv->journaled)
		iv->journaled--;
	fold(iv, s);
}

unsigned cpu_values_accumulate(cpu_values *into, cpu_values *last, const cpu_values *now)
{
	unsigned reset = 0;

	for (unsigned c = 0; c < HWLAT_MAX_CPUS; c++) {
		uint64_t d;

		if (now->v[c] >= last->v[c]) {
			d = now->v[c] - last->v[c];
		} else {
			d = now->v[c];
			reset++;
		}
		if (!d)
			continue;
		into->v[c] += d;
		into->total += d;
		into->listed.bits[c / 64] |= UINT64_C(1) << (c % 64);
	}
	*last = *now;
	return reset;
}

void monitor_totals_init(monitor_totals *t, uint64_t start_ns)
{
	memset(t, 0, sizeof(*t));
	t->start_ns = start_ns;
}

void monitor_totals_add(monitor_totals *t, const monitor_interval *iv)
{
	cpu_values zero = {};

	/* The growth from 0 is the interval's time: never a reset. */
	cpu_values_accumulate(&t->sampled, &zero, &iv->sampled);
	t->gaps += iv->gaps;
	gap_histogram_merge(&t->hist, &iv->hist);
	t->smi_available = iv->smi_known;
	if (iv->smi_known) {
		t->smi_ever_known = true;
		t->smis += iv->smis;
	}
	t->nmis += iv->nmis;
	t->unexplained += iv->unexplained;
	t->dropped += iv->dropped;
	t->skipped += iv->skipped.total;
}

void monitor_totals_close(monitor_totals *t, const monitor_interval *iv)
{
	monitor_totals_add(t, iv);
	t->intervals++;
	t->last_end_ns = iv->start_ns + iv->duration_ns;
	t->last_max_ns = iv->max_ns;
}
