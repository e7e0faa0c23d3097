// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Proves lib/poisson.c, the exact Poisson bounds behind every rate's
 * interval and every rate gate: the incomplete gamma function, the normal
 * and gamma quantiles, and the one- and two-sided Garwood bounds, from 0
 * events to 10^9, against values worked out elsewhere:
 * - mpmath at 40 digits (tests/unit/lib/poisson-reference.py prints them:
 *   findroot on mpmath's own regularized incomplete gamma, or on its 1F1
 *   series above a = 10^5);
 * - published tables: Garwood's 95 % limits for 0, 1 and 10 events
 *   (0 to 3.689, 0.0253 to 5.572, 4.795 to 18.39) and the chi-square
 *   quantile 5.991 for 2 degrees of freedom at 0.95 (the one-sided bound
 *   for no event, -ln 0.05);
 * - the definition: for up to 40 events the Poisson probability of k or
 *   fewer (summed term by term) at the upper bound is 1 - confidence.
 * Prints TAP.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "poisson.h"
#include "../tap.h"

static void near(double got, double want, double rel, const char *what)
{
	bool good = fabs(got - want) <= rel * fabs(want);

	ok(good, "%s = %.17g (within %g)", what, want, rel);
	if (!good)
		printf("#   got %.17g, relative error %.3g\n", got, fabs(got - want) / fabs(want));
}

static void test_normal_quantile(void)
{
	near(normal_quantile(0.975), 1.9599639845400542, 1e-14, "normal_quantile(0.975)");
	near(normal_quantile(0.025), -1.9599639845400542, 1e-14, "normal_quantile(0.025)");
	near(normal_quantile(0.05), -1.6448536269514727, 1e-14, "normal_quantile(0.05)");
	near(normal_quantile(1e-10), -6.3613409024040562, 1e-13, "normal_quantile(1e-10), far tail");
	ok(isnan(normal_quantile(0)) && isnan(normal_quantile(1)), "normal_quantile of 0 or 1 is NaN");
}

static void test_gamma_p_q(void)
{
	near(gamma_p(1, 2.995732273553991), 0.95, 1e-14, "gamma_p(1, -ln 0.05)");
	near(gamma_p(0.5, 0.01), 0.11246291601828489, 1e-13, "gamma_p(0.5, 0.01), a < 1");
	near(gamma_q(0.5, 30), 9.4857375710738484e-15, 1e-10, "gamma_q(0.5, 30), upper tail");
	near(gamma_p(3, 0.001), 1.6654171665278075e-10, 1e-12, "gamma_p(3, 0.001), lower tail");
	near(gamma_q(10, 25), 0.00022147663824878358, 1e-12, "gamma_q(10, 25)");
	near(gamma_p(1000001, 1000000), 0.49973403851371635, 1e-10,
	     "gamma_p(1000001, 1000000), a million: the series near x = a");
	near(gamma_p(1000001, 998000), 0.022642267044557702, 1e-10, "gamma_p(1000001, 998000)");
	near(gamma_p(1000001, 1003000), 0.99863378752941645, 1e-12,
	     "gamma_p(1000001, 1003000), the continued fraction");
	near(gamma_q(1000001, 1006000), 1.0662671096069407e-9, 1e-8,
	     "gamma_q(1000001, 1006000), its far tail without 1 - P's cancellation");
	ok(gamma_p(2, 0) == 0 && gamma_q(2, 0) == 1, "gamma_p(a, 0) = 0, gamma_q(a, 0) = 1");
	ok(isnan(gamma_p(0, 1)) && isnan(gamma_q(-1, 1)) && isnan(gamma_p(1, -1)),
	   "gamma_p/gamma_q: a <= 0 or x < 0 is NaN");
}

static void test_gamma_quantile(void)
{
	ok(isnan(gamma_quantile(1, 0)) && isnan(gamma_quantile(1, 1)) &&
	   isnan(gamma_quantile(0, 0.5)), "gamma_quantile: p of 0 or 1, a of 0 are NaN");
	/* mpmath; the chi-square table's 0.00393 (1 df, 0.05), halved. */
	near(gamma_quantile(0.5, 0.05), 0.00196607000000976, 1e-12,
	     "gamma_quantile(0.5, 0.05), a < 1 from the series' first term");
}

/* One-sided: the upper bound at 95 %, mpmath's value. */
static void test_poisson_upper_bound(void)
{
	static const struct {
		uint64_t k;
		double want, rel;
	} v[] = {
		{ 0, 2.995732273553991, 1e-14 },
		{ 1, 4.7438645183905784, 1e-12 },
		{ 2, 6.2957936218719897, 1e-12 },
		{ 10, 16.962219235721901, 1e-12 },
		{ 100, 118.07927278209706, 1e-12 },
		{ 1000, 1053.6031221333008, 1e-12 },
		{ 10000, 10166.06013612707, 1e-12 },
		{ 1000000, 1001646.4227676168, 1e-12 },
		{ 10000000, 10005203.052591263, 1e-12 },   /* Wilson-Hilferty alone */
		{ 1000000000, 1000052016.4073218, 1e-14 },
	};
	char what[96];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		snprintf(what, sizeof(what), "poisson_upper_bound(%llu, 0.95)",
			 (unsigned long long)v[i].k);
		near(poisson_upper_bound(v[i].k, 0.95), v[i].want, v[i].rel, what);
	}
	/* Published: chi-square 2 df at 0.95 is 5.991 (halved: 2.996 = -ln 0.05). */
	near(poisson_upper_bound(0, 0.95), -log(0.05), 1e-15, "no event: -ln(0.05), exactly");
	near(2 * poisson_upper_bound(0, 0.95), 5.991, 1e-4, "chi-square table: 5.991 (2 df, 0.95)");
}

/* Two-sided 95 %: each side at 97.5 %. */
static void test_poisson_interval(void)
{
	static const struct {
		uint64_t k;
		double lo, hi;
	} v[] = {
		{ 1, 0.025317807984289875, 5.5716433909388986 },
		{ 2, 0.2422092785439649, 7.2246876677239608 },
		{ 10, 4.7953886961324336, 18.390356042017779 },
		{ 1000, 938.97301840769522, 1063.952136016302 },
		{ 1000000, 998040.9833402939, 1001961.9119454322 },
		{ 1000000000, 999938021.44392792, 1000061981.4504089 },
	};
	char what[96];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		snprintf(what, sizeof(what), "interval of %llu events: low",
			 (unsigned long long)v[i].k);
		near(poisson_lower_bound(v[i].k, 0.975), v[i].lo, 1e-12, what);
		snprintf(what, sizeof(what), "interval of %llu events: high",
			 (unsigned long long)v[i].k);
		near(poisson_upper_bound(v[i].k, 0.975), v[i].hi, 1e-12, what);
	}
	ok(poisson_lower_bound(0, 0.975) == 0, "no event: the lower bound is 0");
	/* Garwood's published table, to its 4 digits. */
	near(poisson_upper_bound(0, 0.975), 3.689, 1e-4, "Garwood table: 0 events, 3.689");
	near(poisson_lower_bound(1, 0.975), 0.0253, 2e-3, "Garwood table: 1 event, 0.0253");
	near(poisson_upper_bound(1, 0.975), 5.572, 1e-4, "Garwood table: 1 event, 5.572");
	near(poisson_lower_bound(10, 0.975), 4.795, 1e-4, "Garwood table: 10 events, 4.795");
	near(poisson_upper_bound(10, 0.975), 18.39, 1e-3, "Garwood table: 10 events, 18.39");
}

/* The definition: P(X <= k; upper) = 1 - c and P(X >= k; lower) = 1 - c. */
static void test_poisson_definition(void)
{
	bool upper_good = true, lower_good = true;

	for (uint64_t k = 0; k <= 40; k++) {
		double mu = poisson_upper_bound(k, 0.95), term = exp(-mu), cdf = term;
		double lo = poisson_lower_bound(k, 0.95), tlo = exp(-lo), below = 0;

		for (uint64_t i = 1; i <= k; i++) {
			term *= mu / (double)i;
			cdf += term;
		}
		if (fabs(cdf - 0.05) > 1e-12) {
			upper_good = false;
			printf("#   k %llu: P(X <= k) at the upper bound is %.17g\n",
			       (unsigned long long)k, cdf);
		}
		/* P(X >= k; lo) = 1 - P(X <= k - 1; lo). */
		for (uint64_t i = 0; i < k; i++) {
			below += tlo;
			tlo *= lo / (double)(i + 1);
		}
		if (k > 0 && fabs((1 - below) - 0.05) > 1e-12) {
			lower_good = false;
			printf("#   k %llu: P(X >= k) at the lower bound is %.17g\n",
			       (unsigned long long)k, 1 - below);
		}
	}
	ok(upper_good, "0 to 40 events: k or fewer have probability 0.05 at the 95 %% upper bound");
	ok(lower_good, "1 to 40 events: k or more have probability 0.05 at the 95 %% lower bound");
}

/* The bounds grow with k, also across the switch to Wilson-Hilferty. */
static void test_poisson_monotonic(void)
{
	bool good = true;
	double last = 0;

	for (uint64_t k = 0; k < 3000; k++) {
		double u = poisson_upper_bound(k, 0.95);

		if (!(u > last))
			good = false;
		last = u;
	}
	ok(good, "upper bound strictly grows from 0 to 2999 events");
	last = poisson_upper_bound(9999997, 0.95);
	for (uint64_t k = 9999998; k <= 10000002; k++) {
		double u = poisson_upper_bound(k, 0.95);

		if (!(u - last > 0.999 && u - last < 1.001)) {
			good = false;
			printf("#   k %llu: step %.17g\n", (unsigned long long)k, u - last);
		}
		last = u;
	}
	ok(good, "across GAMMA_EXACT_MAX the bound steps by 1 per event (no jump)");
}

int main(void)
{
	test_normal_quantile();
	test_gamma_p_q();
	test_gamma_quantile();
	test_poisson_upper_bound();
	test_poisson_interval();
	test_poisson_definition();
	test_poisson_monotonic();
	return tap_finish();
}
