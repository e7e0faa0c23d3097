/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Exact confidence bounds for the mean of a Poisson count (Garwood 1936):
 * with k events seen, the one-sided upper bound at confidence c is the
 * mean under which k or fewer events have probability 1 - c, which is the
 * c quantile of Gamma(k + 1, 1) (chi-square with 2k + 2 degrees of freedom,
 * halved); the lower bound is the 1 - c quantile of Gamma(k, 1) (0 for
 * k = 0). The two-sided interval at confidence c takes the one-sided
 * bounds at (1 + c) / 2 on each side.
 *
 * The regularized incomplete gamma function is computed by its power
 * series below x = a + 1 and by its continued fraction above, with the
 * factor x^a e^-x / Gamma(a + 1) taken in logarithms (Stirling's series
 * for a >= 10, so that counts of millions lose no digits to cancellation).
 * Quantiles start from the Wilson-Hilferty cube-root approximation and
 * are refined by safeguarded Newton steps; above GAMMA_EXACT_MAX the
 * approximation alone is returned: its relative error there is below
 * 1e-12 (tests/unit/lib/test-poisson.c pins it at a = 10^9).
 */
#pragma once

#include <stdint.h>

#define GAMMA_EXACT_MAX 1e7

/* P(a, x), the regularized lower incomplete gamma function; a > 0, x >= 0. */
double gamma_p(double a, double x);
/* Q(a, x) = 1 - P(a, x), computed without the cancellation of 1 - P. */
double gamma_q(double a, double x);
/* The x with P(a, x) = p, for a > 0 and 0 < p < 1; NaN otherwise. */
double gamma_quantile(double a, double p);
/* The z with Phi(z) = p, the standard normal quantile; 0 < p < 1. */
double normal_quantile(double p);

/* One-sided bounds on a Poisson mean, in expected events, for k seen. */
double poisson_upper_bound(uint64_t k, double confidence);
double poisson_lower_bound(uint64_t k, double confidence);
