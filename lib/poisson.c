// SPDX-License-Identifier: GPL-2.0-or-later
/* Exact Poisson confidence bounds through the incomplete gamma function; see poisson.h. */
#include <float.h>
#include <math.h>
#include <stdbool.h>

#include "poisson.h"

#define EPS (DBL_EPSILON / 2)
#define TINY 1e-300

/*
 * log(x^a e^-x / Gamma(a + 1)), the factor both expansions share. For
 * large a, a log x and log Gamma(a + 1) are both near a log a and their
 * difference would lose as many digits as a has; written around x = a
 * with Stirling's series the large terms cancel exactly.
 */
static double log_factor(double a, double x)
{
	double t, s;

	if (a < 10)
		return a * log(x) - x - lgamma(a + 1);
	t = (x - a) / a;
	/* log Gamma(a + 1) - (a log a - a + log(2 pi a) / 2), to 1/a^7. */
	s = 1 / (12 * a) - 1 / (360 * a * a * a) + 1 / (1260 * pow(a, 5)) - 1 / (1680 * pow(a, 7));
	return a * (log1p(t) - t) - 0.5 * log(2 * M_PI * a) - s;
}

/* Enough terms for the sum or the fraction near x = a, where they converge slowest. */
static double iterations_for(double a)
{
	return 200 + 60 * sqrt(a);
}

/* P(a, x) by the series sum x^n / ((a + 1) ... (a + n)); for x < a + 1. */
static double p_series(double a, double x)
{
	double term = 1, sum = 1, max = iterations_for(a);

	for (double n = 1; n < max; n++) {
		term *= x / (a + n);
		sum += term;
		if (term < sum * EPS)
			break;
	}
	return exp(log_factor(a, x)) * sum;
}

/*
 * Q(a, x) by the continued fraction 1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a
 * - 2 (2 - a) / (x + 5 - a - ...))), evaluated forwards (Lentz); for
 * x >= a + 1.
 */
static double q_fraction(double a, double x)
{
	double b = x + 1 - a, c = 1 / TINY, d = 1 / b, h = d, max = iterations_for(a);

	for (double i = 1; i < max; i++) {
		double an = -i * (i - a), delta;

		b += 2;
		d = an * d + b;
		if (fabs(d) < TINY)
			d = TINY;
		c = b + an / c;
		if (fabs(c) < TINY)
			c = TINY;
		d = 1 / d;
		delta = d * c;
		h *= delta;
		if (fabs(delta - 1) < EPS)
			break;
	}
	/* x^a e^-x / Gamma(a) is a times the shared factor. */
	return exp(log_factor(a, x)) * a * h;
}

/* P(a, x), or Q(a, x) when upper, each from the expansion that converges
 * there and the other as its complement. */
static double gamma_tail(double a, double x, bool upper)
{
	double v;

	if (!(a > 0) || !(x >= 0))
		return NAN;
	if (x == 0)
		return upper ? 1 : 0;
	if (x < a + 1) {
		v = p_series(a, x);
		return upper ? 1 - v : v;
	}
	v = q_fraction(a, x);
	return upper ? v : 1 - v;
}

double gamma_p(double a, double x)
{
	return gamma_tail(a, x, false);
}

double gamma_q(double a, double x)
{
	return gamma_tail(a, x, true);
}

double normal_quantile(double p)
{
	double z = 0;

	if (!(p > 0 && p < 1))
		return NAN;
	/*
	 * Newton from 0: the normal distribution function is convex below 0
	 * and concave above, so the steps approach the root from one side
	 * and never overshoot it.
	 */
	for (int i = 0; i < 1000; i++) {
		double f = 0.5 * erfc(-z / M_SQRT2) - p;
		double density = exp(-z * z / 2) / sqrt(2 * M_PI);
		double step = f / density;

		z -= step;
		if (fabs(step) <= 4 * EPS * fmax(1, fabs(z)))
			break;
	}
	return z;
}

/* Where Newton starts: Wilson-Hilferty, or for small a and p, where it
 * falls below 0, the first term of the series, P ~ x^a / Gamma(a + 1). */
static double quantile_start(double a, double p)
{
	double z = normal_quantile(p), c = 1 - 1 / (9 * a) + z / (3 * sqrt(a));

	if (c > 0)
		return a * c * c * c;
	return exp((log(p) + lgamma(a + 1)) / a);
}

double gamma_quantile(double a, double p)
{
	double x, lo = 0, hi = INFINITY;

	if (!(a > 0) || !(p > 0 && p < 1))
		return NAN;
	x = quantile_start(a, p);
	if (a > GAMMA_EXACT_MAX)
		return x;
	for (int i = 0; i < 200; i++) {
		/* P - p through the smaller tail: 1 - P loses digits near 1. */
		double f = p <= 0.5 ? gamma_p(a, x) - p : (1 - p) - gamma_q(a, x);
		double density = exp(log_factor(a, x)) * a / x;
		double next;

		if (f == 0)
			break;
		if (f < 0)
			lo = x;
		else
			hi = x;
		next = x - f / density;
		/* A step out of the bracket (or a vanishing density) bisects. */
		if (!(next > lo && next < hi))
			next = isinf(hi) ? 2 * x : (lo + hi) / 2;
		if (fabs(next - x) <= 4 * EPS * x) {
			x = next;
			break;
		}
		x = next;
	}
	return x;
}

double poisson_upper_bound(uint64_t k, double confidence)
{
	return gamma_quantile((double)k + 1, confidence);
}

double poisson_lower_bound(uint64_t k, double confidence)
{
	if (k == 0)
		return 0;
	return gamma_quantile((double)k, 1 - confidence);
}
