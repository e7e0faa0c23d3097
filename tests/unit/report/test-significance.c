/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The statistics of --compare (report/significance.c) on small samples
 * whose results were worked out apart from the code: U by counting the
 * pairs by hand, z and p with Python's math module (math.erfc, math.comb)
 * from the textbook formulas, the binomial tails as exact fractions. TAP.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "significance.h"
#include "../tap.h"

static bool near(double got, double want, double rel)
{
	return fabs(got - want) <= rel * fabs(want) + 1e-300;
}

/* Groups of equal values in increasing order: a[i] of A and b[i] of B. */
static int ranks(const unsigned *a, const unsigned *b, size_t n, struct rank_result *r)
{
	struct rank_test t;

	rank_test_init(&t);
	for (size_t i = 0; i < n; i++)
		rank_test_add(&t, a[i], b[i]);
	return rank_test_result(&t, r);
}

static void test_ranks(void)
{
	struct rank_result r;
	int rc;

	/* A = 1 2 3, B = 4 5 6: no a above any b, U_a = 0, U_b = 9; no ties:
	 * var = 3*3/12 * 7 = 5.25, z = -(4.5 - 0.5)/sqrt(5.25) = -1.7457431218879391,
	 * p = erfc(1.7457431218879391/sqrt(2)) = 0.0808555983700523. */
	rc = ranks((const unsigned[]){ 1, 1, 1, 0, 0, 0 }, (const unsigned[]){ 0, 0, 0, 1, 1, 1 },
		   6, &r);
	ok(rc == 0 && r.u_a == 0 && r.u_b == 9 && r.a_above == 0,
	   "1 2 3 vs 4 5 6: U_a 0, U_b 9 (got %g %g)", r.u_a, r.u_b);
	ok(near(r.z, -1.7457431218879391, 1e-12) && near(r.p, 0.0808555983700523, 1e-12),
	   "1 2 3 vs 4 5 6: z -1.74574, p 0.0808556 (got %.17g %.17g)", r.z, r.p);

	/* A = 1 2 2 3, B = 2 3 3 4 5, the pairs counted by hand: a=1: 0; a=2 (twice): 0.5 each (tie with b=2) -> 1; a=3: 1 (b=2) + 0.5*2
	 * (b=3,3) -> 2; U_a = 3, U_b = 20 - 3 = 17. Ties: value 2 three times,
	 * value 3 three times: T = 2*(27-3) = 48; var = 20/12 * (10 - 48/72),
	 * z = -(7 - 0.5)/sqrt(var) = -1.6480507967206073, p = 0.09934224785346527. */
	rc = ranks((const unsigned[]){ 1, 2, 1, 0, 0 }, (const unsigned[]){ 0, 1, 2, 1, 1 }, 5,
		   &r);
	ok(rc == 0 && r.u_a == 3 && r.u_b == 17 && near(r.a_above, 0.15, 1e-15),
	   "with ties: U_a 3, U_b 17, A above in 15 %% of pairs (got %g %g %g)", r.u_a, r.u_b,
	   r.a_above);
	ok(near(r.z, -1.6480507967206073, 1e-12) && near(r.p, 0.09934224785346527, 1e-12),
	   "with ties: tie-corrected z -1.64805, p 0.0993422 (got %.17g %.17g)", r.z, r.p);

	/* A = 5..12, B = 1..6: U_a = 8*6 - 2 (a=5 ties b=5: 0.5, a=5<b=6, a=6
	 * ties b=6: 0.5) = 46; T = 6+6 = 12, z = (24 - 0.5)/sqrt(48/12*(15 - 12/182))
	 * = 2.7817585530622444, p = 0.005406524614097801. */
	rc = ranks((const unsigned[]){ 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1 },
		   (const unsigned[]){ 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0 }, 12, &r);
	ok(rc == 0 && r.u_a == 46 && near(r.z, 2.7817585530622444, 1e-12) &&
	   near(r.p, 0.005406524614097801, 1e-12),
	   "5..12 vs 1..6: U_a 46, z 2.78176, p 0.00540652 (got %g %.17g %.17g)", r.u_a, r.z,
	   r.p);

	/* Everything ties: the variance is 0, nothing tells the sides apart. */
	rc = ranks((const unsigned[]){ 2 }, (const unsigned[]){ 3 }, 1, &r);
	ok(rc == 0 && r.u_a == 3 && r.z == 0 && r.p == 1, "all tied: U_a 3, z 0, p 1 (got %g %g %g)",
	   r.u_a, r.z, r.p);
	/* U exactly at its mean: continuity correction leaves z at 0. */
	rc = ranks((const unsigned[]){ 1, 0, 1 }, (const unsigned[]){ 0, 2, 0 }, 3, &r);
	ok(rc == 0 && r.u_a == 2 && r.p == 1, "U at its mean: p 1 (got %g %g)", r.u_a, r.p);
	/* Empty groups are no values. */
	rc = ranks((const unsigned[]){ 0, 1, 0 }, (const unsigned[]){ 0, 0, 1 }, 3, &r);
	ok(rc == 0 && r.u_a == 0 && r.u_b == 1, "empty groups change nothing (got %g)", r.u_a);
	rc = ranks((const unsigned[]){ 0, 0 }, (const unsigned[]){ 4, 1 }, 2, &r);
	ok(rc == -EDOM, "A empty: -EDOM (got %d)", rc);
	r = (struct rank_result){ .u_a = 7, .u_b = 7, .a_above = 7, .z = 7, .p = 7 };
	rc = ranks((const unsigned[]){ 3 }, (const unsigned[]){ 0 }, 1, &r);
	ok(rc == -EDOM && r.u_a == 0 && r.u_b == 0 && r.a_above == 0 && r.z == 0 && r.p == 0,
	   "B empty: -EDOM, the result all 0 (got %d, p %g)", rc, r.p);

	/* Large groups stay exact: 10^6 a above 10^6 b, U_a = 10^12. */
	{
		struct rank_test t;

		rank_test_init(&t);
		rank_test_add(&t, 0, 1000000);
		rank_test_add(&t, 1000000, 0);
		rc = rank_test_result(&t, &r);
		ok(rc == 0 && r.u_a == 1e12 && r.a_above == 1 && r.p < 1e-300,
		   "10^6 vs 10^6 apart: U_a 1e12, p ~0 (got %g %g)", r.u_a, r.p);
	}
}

static void test_binomial(void)
{
	double p;
	int rc;

	/* P(X <= 2), X ~ B(12, 1/2): (1 + 12 + 66) / 4096 = 79/4096. */
	p = binomial_cdf(2, 12, 0.5);
	ok(near(p, 79.0 / 4096, 1e-12), "B(12,.5): P(X<=2) = 79/4096 (got %.17g)", p);
	p = binomial_sf(10, 12, 0.5);
	ok(near(p, 79.0 / 4096, 1e-12), "B(12,.5): P(X>=10) = 79/4096 (got %.17g)", p);
	/* sum(comb(100, i) for i <= 40) / 2^100 = 0.028443966820490395. */
	p = binomial_cdf(40, 100, 0.5);
	ok(near(p, 0.028443966820490395, 1e-10), "B(100,.5): P(X<=40) (got %.17g)", p);
	/* sum(comb(30,i) .2^i .8^(30-i) for i >= 12) = 0.009493122174722495. */
	p = binomial_sf(12, 30, 0.2);
	ok(near(p, 0.009493122174722495, 1e-10), "B(30,.2): P(X>=12) (got %.17g)", p);
	ok(binomial_cdf(30, 30, 0.2) == 1 && binomial_sf(0, 30, 0.2) == 1 &&
	   binomial_sf(31, 30, 0.2) == 0, "B(30,.2): the whole range is 1, beyond it 0");
	ok(binomial_sf(0, 30, 0.01) == 1 && binomial_cdf(30, 30, 0.99) == 1 &&
	   binomial_cdf(40, 30, 0.99) == 1,
	   "B(30,.01): P(X>=0) = 1; B(30,.99): P(X<=30) = P(X<=40) = 1");
	/* 1 - 0.8^30 = 0.9987620599607147 (the complement of no success). */
	p = binomial_sf(1, 30, 0.2);
	ok(near(p, 0.9987620599607147, 1e-12), "B(30,.2): P(X>=1) = 1 - .8^30 (got %.17g)", p);

	/* 10 vs 2 SMIs in equal times: both tails of B(12, .5) = 158/4096. */
	rc = poisson_rates_test(10, 1, 2, 1, &p);
	ok(rc == 0 && near(p, 158.0 / 4096, 1e-12), "10 vs 2 in equal time: p = 158/4096 "
	   "(got %.17g)", p);
	rc = poisson_rates_test(2, 3600, 10, 3600, &p);
	ok(rc == 0 && near(p, 158.0 / 4096, 1e-12), "2 vs 10: the same p (got %.17g)", p);
	/* 0 in 1 h vs 5 in 3 h: B(5, 1/4); pmf(0) = .2373, outcomes no more
	 * likely: 0, 3, 4, 5: (243 + 90 + 15 + 1) / 1024 = 0.3408203125. */
	rc = poisson_rates_test(0, 1, 5, 3, &p);
	ok(rc == 0 && near(p, 0.3408203125, 1e-12), "0 in 1 vs 5 in 3: p = 349/1024 (got %.17g)",
	   p);
	/* 7 in 2 vs 1 in 6: B(8, 1/4): pmf(7) + pmf(8) = (24 + 1) / 65536. */
	rc = poisson_rates_test(7, 2, 1, 6, &p);
	ok(rc == 0 && near(p, 25.0 / 65536, 1e-12), "7 in 2 vs 1 in 6: p = 25/65536 (got %.17g)",
	   p);
	/* 30 in 1 vs 10 in 3: B(40, 1/4), p = 4.630880897739289e-11 (math.comb). */
	rc = poisson_rates_test(30, 1, 10, 3, &p);
	ok(rc == 0 && near(p, 4.630880897739289e-11, 1e-8), "30 in 1 vs 10 in 3: p 4.63e-11 "
	   "(got %.17g)", p);
	rc = poisson_rates_test(3, 1, 3, 1, &p);
	ok(rc == 0 && near(p, 1, 1e-12), "3 vs 3 in equal time: p 1 (got %.17g)", p);
	/* At the mode of B(6, 1/2) from the other side: 1 in 1 vs 5 in 5 is B(6,
	 * 1/6), mode floor(7/6) = 1: every other outcome is less likely, p 1. */
	rc = poisson_rates_test(1, 1, 5, 5, &p);
	ok(rc == 0 && near(p, 1, 1e-12), "1 in 1 vs 5 in 5: k_a at the mode, p 1 (got %.17g)", p);
	/* 0 vs 4 in equal time: both tails of B(4, .5), 2/16. */
	rc = poisson_rates_test(0, 1, 4, 1, &p);
	ok(rc == 0 && near(p, 0.125, 1e-12), "0 vs 4: p = 2/16 (got %.17g)", p);
	rc = poisson_rates_test(0, 5, 0, 1, &p);
	ok(rc == 0 && p == 1, "no SMI on either side: p 1 (got %.17g)", p);
	/* Big counts cost nothing more: 10^9 + 10^5 vs 10^9 in equal time is
	 * z = 10^5 / sqrt(2e9 + 1e5) = 2.236 sigma, two-sided p ~ 0.0253. */
	rc = poisson_rates_test(1000100000, 1, 1000000000, 1, &p);
	ok(rc == 0 && p > 0.024 && p < 0.027, "10^9-sized counts: p ~0.0253 (got %.17g)", p);
	rc = poisson_rates_test(1, 0, 1, 1, &p);
	ok(rc == -EDOM, "no time scanned by A: -EDOM (got %d)", rc);
	rc = poisson_rates_test(1, 1, 1, 0, &p);
	ok(rc == -EDOM, "no time scanned by B: -EDOM (got %d)", rc);
	rc = poisson_rates_test(UINT64_MAX, 1, 1, 1, &p);
	ok(rc == -EDOM, "counts whose sum overflows: -EDOM (got %d)", rc);
	/* A's share of the time rounds to 1: A's 1 SMI is what one rate
	 * expects (p 1); B's 1 SMI in 1 ns against A's 10^18 ns is as unlikely
	 * as 1 - p = 10^-18 (within the 2^-52 the share is kept off 1). */
	rc = poisson_rates_test(1, 1e18, 0, 1, &p);
	ok(rc == 0 && near(p, 1, 1e-12), "1 in 10^18 ns vs 0 in 1 ns: p 1 (got %.17g)", p);
	rc = poisson_rates_test(0, 1e18, 1, 1, &p);
	ok(rc == 0 && p > 0 && p < 1e-15, "0 in 10^18 ns vs 1 in 1 ns: p < 10^-15 (got %.17g)",
	   p);
}

int main(void)
{
	test_ranks();
	test_binomial();
	return tap_finish();
}
