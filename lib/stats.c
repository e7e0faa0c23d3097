// SPDX-License-Identifier: GPL-2.0-or-later
/* Streaming latency statistics; see stats.h for the method. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

void stats_init(struct stats *s, uint64_t bucket_ns, size_t entries)
{
	memset(s, 0, sizeof(*s));
	s->min_ns = UINT64_MAX;
	s->bucket_ns = bucket_ns;
	s->linear_max = entries > 0 && entries <= STATS_LINEAR_MAX ? entries : STATS_LINEAR_DEFAULT;
}

void stats_done(struct stats *s)
{
	for (size_t r = 0; r < STATS_ROWS; r++)
		free(s->rows[r]);
	free(s->linear);
	memset(s, 0, sizeof(*s));
}

int stats_add_size(struct stats *s, uint64_t size_ns)
{
	uint64_t n;

	if (stats_windows_above(s, size_ns, &n))
		return 0;
	if (s->n_sizes == STATS_SIZES_MAX)
		return -E2BIG;
	s->size_ns[s->n_sizes] = size_ns;
	s->above[s->n_sizes++] = 0;
	return 0;
}

bool stats_windows_above(const struct stats *s, uint64_t size_ns, uint64_t *ret)
{
	for (size_t i = 0; i < s->n_sizes; i++)
		if (s->size_ns[i] == size_ns) {
			*ret = s->above[i];
			return true;
		}
	return false;
}

static unsigned row_of(uint64_t v, unsigned *ret_sub)
{
	unsigned e;

	if (v < STATS_SUB) {
		*ret_sub = (unsigned)v;
		return 0;
	}
	e = 63U - (unsigned)__builtin_clzll(v);
	*ret_sub = (unsigned)(v >> (e - STATS_SUB_BITS)) & (STATS_SUB - 1);
	return e - STATS_SUB_BITS + 1;
}

/* Lower bound and width of bucket (row, sub). */
static void bucket_bounds(unsigned row, unsigned sub, uint64_t *low,
			  uint64_t *width)
{
	unsigned shift;

	if (row == 0) {
		*low = sub;
		*width = 1;
		return;
	}
	shift = row - 1;
	*low = ((uint64_t)STATS_SUB + sub) << shift;
	*width = 1ULL << shift;
}

static int linear_add(struct stats *s, uint64_t v)
{
	uint64_t idx = v / s->bucket_ns;

	if (idx >= s->linear_max) {
		s->linear_overflow++;
		return 0;
	}
	if (idx >= s->n_linear) {
		size_t n = s->n_linear ? s->n_linear : 64;
		uint64_t *p;

		while (n <= idx)
			n *= 2;
		if (n > s->linear_max)
			n = s->linear_max;
		p = realloc(s->linear, n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		memset(p + s->n_linear, 0, (n - s->n_linear) * sizeof(*p));
		s->linear = p;
		s->n_linear = n;
	}
	s->linear[idx]++;
	return 0;
}

int stats_add_window(struct stats *s, const struct stats_window *x,
		     uint64_t hardlimit_ns)
{
	uint64_t v = x->latency_ns;
	unsigned sub, row = row_of(v, &sub);

	if (!s->rows[row]) {
		s->rows[row] = calloc(STATS_SUB, sizeof(uint64_t));
		if (!s->rows[row])
			return -ENOMEM;
	}
	if (s->bucket_ns > 0) {
		int r = linear_add(s, v);

		if (r < 0)
			return r;
	}
	s->rows[row][sub]++;
	s->n++;
	s->sum_ns += v;
	if (v < s->min_ns)
		s->min_ns = v;
	if (v > s->max_ns)
		s->max_ns = v;
	if (x->count > 0)
		s->over_threshold++;
	if (hardlimit_ns > 0 && v > hardlimit_ns)
		s->over_hardlimit++;
	/* A window that took an SMI: only a known, non-zero count says so. */
	if (x->smi_count_known && x->smi_count > 0)
		s->smi_windows++;
	else if (x->nmi_count > 0)
		s->nmi_windows++;
	else
		s->unexplained_windows++;
	/* Unknown is never added as 0: it is counted apart. */
	if (x->smi_count_known)
		s->smi_total += x->smi_count;
	else
		s->smi_unknown_windows++;
	if (x->smi_ns_known)
		s->smi_ns += x->smi_ns;
	else
		s->smi_ns_unknown_windows++;
	s->nmi_total += x->nmi_count;
	for (size_t i = 0; i < s->n_sizes; i++)
		if (v > s->size_ns[i])
			s->above[i]++;
	return 0;
}

int stats_merge(struct stats *dst, const struct stats *src)
{
	for (size_t r = 0; r < STATS_ROWS; r++) {
		if (!src->rows[r])
			continue;
		if (!dst->rows[r]) {
			dst->rows[r] = calloc(STATS_SUB, sizeof(uint64_t));
			if (!dst->rows[r])
				return -ENOMEM;
		}
		for (size_t i = 0; i < STATS_SUB; i++)
			dst->rows[r][i] += src->rows[r][i];
	}
	if (src->n_linear > dst->n_linear) {
		uint64_t *p = realloc(dst->linear, src->n_linear * sizeof(*p));

		if (!p)
			return -ENOMEM;
		memset(p + dst->n_linear, 0, (src->n_linear - dst->n_linear) * sizeof(*p));
		dst->linear = p;
		dst->n_linear = src->n_linear;
	}
	for (size_t i = 0; i < src->n_linear; i++)
		dst->linear[i] += src->linear[i];
	dst->linear_overflow += src->linear_overflow;
	dst->n += src->n;
	dst->sum_ns += src->sum_ns;
	if (src->min_ns < dst->min_ns)
		dst->min_ns = src->min_ns;
	if (src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
	dst->over_threshold += src->over_threshold;
	dst->over_hardlimit += src->over_hardlimit;
	dst->smi_windows += src->smi_windows;
	dst->nmi_windows += src->nmi_windows;
	dst->unexplained_windows += src->unexplained_windows;
	dst->smi_total += src->smi_total;
	dst->nmi_total += src->nmi_total;
	dst->smi_unknown_windows += src->smi_unknown_windows;
	dst->smi_ns += src->smi_ns;
	dst->smi_ns_unknown_windows += src->smi_ns_unknown_windows;
	for (size_t i = 0; i < dst->n_sizes; i++) {
		uint64_t n;

		if (stats_windows_above(src, dst->size_ns[i], &n))
			dst->above[i] += n;
	}
	return 0;
}

uint64_t stats_mean(const struct stats *s)
{
	if (s->n == 0)
		return 0;
	return (uint64_t)((s->sum_ns + s->n / 2) / s->n);
}

uint64_t stats_percentile(const struct stats *s, double p)
{
	uint64_t rank, seen = 0;

	if (s->n == 0)
		return 0;
	if (p <= 0)
		return s->min_ns;
	if (p >= 100)
		return s->max_ns;
	/* Nearest rank: the smallest value with at least p % at or below it. */
	rank = (uint64_t)((long double)p / 100.0L * (long double)s->n);
	if ((long double)rank < (long double)p / 100.0L * (long double)s->n)
		rank++;
	if (rank == 0)
		rank = 1;

	for (unsigned r = 0; r < STATS_ROWS; r++) {
		if (!s->rows[r])
			continue;
		for (unsigned i = 0; i < STATS_SUB; i++) {
			uint64_t low, width, mid;

			seen += s->rows[r][i];
			if (seen < rank)
				continue;
			bucket_bounds(r, i, &low, &width);
			mid = low + (width - 1) / 2;
			if (mid < s->min_ns)
				mid = s->min_ns;
			if (mid > s->max_ns)
				mid = s->max_ns;
			return mid;
		}
	}
	return s->max_ns;
}

/* Count of values in [lo, hi) read from the log-linear rows (exact for
 * power-of-two bounds, which fall on row or sub-bucket edges). */
static uint64_t log2_count(const struct stats *s, unsigned b)
{
	uint64_t c = 0;

	if (b < STATS_SUB_BITS) {
		/* [2^b, 2^(b+1)) lies in the exact row 0; b == 0 is [0, 2). */
		uint64_t lo = b == 0 ? 0 : 1ULL << b, hi = 2ULL << b;

		if (!s->rows[0])
			return 0;
		for (uint64_t v = lo; v < hi; v++)
			c += s->rows[0][v];
		return c;
	}
	/* Row b - STATS_SUB_BITS + 1 is exactly [2^b, 2^(b+1)). */
	{
		unsigned r = b - STATS_SUB_BITS + 1;

		if (!s->rows[r])
			return 0;
		for (unsigned i = 0; i < STATS_SUB; i++)
			c += s->rows[r][i];
	}
	return c;
}

int stats_buckets(const struct stats *s, struct bucket **ret)
{
	struct bucket *b;
	size_t n = 0, first, last;

	*ret = NULL;
	if (s->n == 0)
		return 0;

	if (s->bucket_ns == 0) {
		unsigned lo = 64, hi = 0;

		for (unsigned i = 0; i < 64; i++)
			if (log2_count(s, i) > 0) {
				if (lo == 64)
					lo = i;
				hi = i;
			}
		b = calloc(hi - lo + 1, sizeof(*b));
		if (!b)
			return -ENOMEM;
		for (unsigned i = lo; i <= hi; i++, n++) {
			b[n].low_ns = i == 0 ? 0 : 1ULL << i;
			b[n].high_ns = i == 63 ? UINT64_MAX : 2ULL << i;
			b[n].count = log2_count(s, i);
		}
		*ret = b;
		return (int)n;
	}

	for (first = 0; first < s->n_linear && s->linear[first] == 0; first++)
		;
	for (last = s->n_linear; last > first && s->linear[last - 1] == 0; last--)
		;
	b = calloc(last - first + 1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (size_t i = first; i < last; i++, n++) {
		b[n].low_ns = i * s->bucket_ns;
		b[n].high_ns = (i + 1) * s->bucket_ns;
		b[n].count = s->linear[i];
	}
	if (s->linear_overflow > 0) {
		b[n].low_ns = (uint64_t)s->linear_max * s->bucket_ns;
		b[n].high_ns = UINT64_MAX;
		b[n].count = s->linear_overflow;
		b[n].overflow = true;
		n++;
	}
	*ret = b;
	return (int)n;
}
