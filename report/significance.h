/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Whether two selections differ by more than chance (--compare).
 *
 * Latencies: the Mann-Whitney U rank test, two-sided, by its normal
 * approximation with the tie correction of the variance and a continuity
 * correction of 0.5 (the defaults of R's wilcox.test and SciPy's
 * mannwhitneyu). The values come in groups of equal values, in increasing
 * order, each with how many of A and of B it holds; U of A counts the
 * pairs (a, b) with a > b, plus half the ties.
 *
 * SMI counts: the exact conditional test of two Poisson rates. Given the
 * total k = k_a + k_b, equal rates make k_a binomial(k, t_a / (t_a + t_b))
 * where t is the time each side was scanned; the two-sided p-value adds
 * the probabilities of every outcome no more likely than k_a (the method
 * of R's binom.test and poisson.test), through the regularised incomplete
 * beta function, so it costs the same for any count.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct rank_test {
	uint64_t n_a, n_b;
	unsigned __int128 u2_a;  /* 2 * U of A: exact */
	unsigned __int128 ties;  /* sum of t^3 - t over the groups of equal values */
};

struct rank_result {
	double u_a, u_b;         /* U of A and of B (u_a + u_b = n_a * n_b) */
	double a_above;          /* u_a / (n_a * n_b): P(a > b) + P(a = b) / 2 */
	double z;                /* with continuity correction; 0 when all tie */
	double p;                /* two-sided */
};

void rank_test_init(struct rank_test *t);
/* The next group of equal values (larger than every group before): a of A, b of B. */
void rank_test_add(struct rank_test *t, uint64_t a, uint64_t b);
/* Returns 0, or -EDOM when a side has no value (nothing to rank; *ret is
 * then all 0). */
int rank_test_result(const struct rank_test *t, struct rank_result *ret);

/*
 * The two-sided p-value of k_a events in time t_a against k_b in t_b under
 * one rate (t_a, t_b > 0). Returns 0, or -EDOM when a time is not positive.
 */
int poisson_rates_test(uint64_t k_a, double t_a, uint64_t k_b, double t_b, double *ret_p);

/* P(X <= x) and P(X >= x) for X binomial(n, p), 0 < p < 1 (exposed for the tests). */
double binomial_cdf(uint64_t x, uint64_t n, double p);
double binomial_sf(uint64_t x, uint64_t n, double p);
