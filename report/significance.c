// SPDX-License-Identifier: GPL-2.0-or-later
/* Rank test and Poisson rate test; see significance.h. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "significance.h"

void rank_test_init(struct rank_test *t)
{
	memset(t, 0, sizeof(*t));
}

void rank_test_add(struct rank_test *t, uint64_t a, uint64_t b)
{
	unsigned __int128 n = (unsigned __int128)a + b;

	/* Each a is above every b so far and ties with the b of its group. */
	t->u2_a += (unsigned __int128)a * (2 * (unsigned __int128)t->n_b + b);
	t->ties += n * n * n - n;
	t->n_a += a;
	t->n_b += b;
}

int rank_test_result(const struct rank_test *t, struct rank_result *ret)
{
	double na = (double)t->n_a, nb = (double)t->n_b, n = na + nb;
	double mean, var, d;

	memset(ret, 0, sizeof(*ret));
	if (t->n_a == 0 || t->n_b == 0)
		return -EDOM;
	ret->u_a = (double)t->u2_a / 2;
	ret->u_b = na * nb - ret->u_a;
	ret->a_above = ret->u_a / (na * nb);
	mean = na * nb / 2;
	/* n >= 2 here: both sides hold a value. */
	var = na * nb / 12 * ((n + 1) - (double)t->ties / (n * (n - 1)));
	d = fabs(ret->u_a - mean);
	/* When every value ties (the variance is 0), U is at its mean. */
	if (d <= 0.5) {
		/* U within the continuity correction of its mean: no evidence. */
		ret->z = 0;
		ret->p = 1;
		return 0;
	}
	ret->z = (d - 0.5) / sqrt(var);
	if (ret->u_a < mean)
		ret->z = -ret->z;
	ret->p = erfc(fabs(ret->z) / sqrt(2)); /* at most 1: |z| > 0 */
	return 0;
}

/* The continued fraction of the incomplete beta function (modified Lentz). */
static double beta_fraction(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= 10000; m++) {
		double m2 = 2.0 * m, num, delta;

		num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
		d = 1 + num * d;
		d = fabs(d) < tiny ? tiny : d;
		c = 1 + num / c;
		c = fabs(c) < tiny ? tiny : c;
		d = 1 / d;
		h *= d * c;
		num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
		d = 1 + num * d;
		d = fabs(d) < tiny ? tiny : d;
		c = 1 + num / c;
		c = fabs(c) < tiny ? tiny : c;
		d = 1 / d;
		delta = d * c;
		h *= delta;
		if (fabs(delta - 1) < 4 * DBL_EPSILON)
			break;
	}
	return h;
}

/* The regularised incomplete beta function I_x(a, b), a, b > 0, 0 < x < 1. */
static double beta_inc(double a, double b, double x)
{
	double front;

	/* 0 < x < 1 here: poisson_rates_test() keeps p off both ends. */
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	/* The fraction converges fast on this side of the mean; else use symmetry. */
	if (x < (a + 1) / (a + b + 2))
		return front * beta_fraction(a, b, x) / a;
	return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

double binomial_cdf(uint64_t x, uint64_t n, double p)
{
	if (x >= n)
		return 1;
	return beta_inc((double)(n - x), (double)x + 1, 1 - p);
}

double binomial_sf(uint64_t x, uint64_t n, double p)
{
	if (x == 0)
		return 1;
	if (x > n)
		return 0;
	return beta_inc((double)x, (double)(n - x) + 1, p);
}

static double binomial_log_pmf(uint64_t i, uint64_t n, double p)
{
	double k = (double)i, m = (double)n;

	return lgamma(m + 1) - lgamma(k + 1) - lgamma(m - k + 1) + k * log(p) +
	       (m - k) * log1p(-p);
}

int poisson_rates_test(uint64_t k_a, double t_a, uint64_t k_b, double t_b, double *ret_p)
{
	uint64_t n = k_a + k_b, mode, lo, hi;
	double p, limit, r;

	if (!(t_a > 0) || !(t_b > 0) || n < k_a)
		return -EDOM;
	/* A share of time that rounds to 0 or 1 (one side scanned 2^53 times
	 * longer) would make log(p) or log(1 - p) infinite. */
	p = fmin(fmax(t_a / (t_a + t_b), DBL_MIN), 1 - DBL_EPSILON);
	/* n = 0 needs no case of its own: k_a = 0 is the mode, p is 1. */
	/* As R's binom.test: outcomes within a relative 1e-7 of k_a's count as likely. */
	limit = binomial_log_pmf(k_a, n, p) + log1p(1e-7);
	mode = (uint64_t)floor(((double)n + 1) * p);
	if (mode > n)
		mode = n;
	/* k_a at the mode: the search below the mode finds every outcome no
	 * more likely, and p is 1. */
	if (k_a < mode) {
		/* The first outcome above the mode no more likely than k_a. */
		lo = mode;
		hi = n + 1;
		while (lo < hi) {
			uint64_t mid = lo + (hi - lo) / 2;

			if (binomial_log_pmf(mid, n, p) <= limit)
				hi = mid;
			else
				lo = mid + 1;
		}
		r = binomial_cdf(k_a, n, p) + (lo <= n ? binomial_sf(lo, n, p) : 0);
	} else {
		/* The last outcome below the mode (or k_a) no more likely than k_a. */
		uint64_t y;
		bool found = false;

		lo = 0;
		hi = mode; /* search [lo, hi): pmf rises up to the mode */
		while (lo < hi) {
			uint64_t mid = lo + (hi - lo) / 2;

			if (binomial_log_pmf(mid, n, p) <= limit)
				lo = mid + 1;
			else
				hi = mid;
		}
		found = lo > 0;
		y = found ? lo - 1 : 0;
		r = (found ? binomial_cdf(y, n, p) : 0) + binomial_sf(k_a, n, p);
	}
	*ret_p = r > 1 ? 1 : r;
	return 0;
}
