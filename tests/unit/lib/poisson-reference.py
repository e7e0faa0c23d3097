#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Prints the reference values pinned in tests/unit/lib/test-poisson.c, by
# mpmath at 40 digits (python3-mpmath): nothing here shares code with
# lib/poisson.c. Not run by the tests (it takes seconds and needs mpmath).
import mpmath as mp
mp.mp.dps = 40
def P(a, x):
    a = mp.mpf(a); x = mp.mpf(x)
    if a < 1e5:
        return mp.gammainc(a, 0, x, regularized=True)
    # x^a e^-x / Gamma(a+1) * 1F1(1; a+1; x)
    return mp.exp(a*mp.log(x) - x - mp.loggamma(a+1)) * mp.hyp1f1(1, a+1, x, maxterms=10**8)
def gq(a, p):
    a = mp.mpf(a); p = mp.mpf(p)
    z = mp.sqrt(2)*mp.erfinv(2*p-1)
    if a >= 1:
        x0 = a*(1-1/(9*a)+z/(3*mp.sqrt(a)))**3
    else:  # P ~ x^a / Gamma(a+1) near 0
        x0 = mp.exp((mp.log(p) + mp.loggamma(a+1))/a)
    return mp.findroot(lambda x: P(a, x) - p, x0, tol=mp.mpf(10)**-30)
import sys
print("gamma_quantile(0.5, 0.05)", mp.nstr(gq(mp.mpf("0.5"), "0.05"), 17))
for k in [0,1,2,10,100,1000,10**4,10**6,10**7,10**9]:
    print("upper95 k=%d %s" % (k, mp.nstr(gq(k+1, '0.95'), 17))); sys.stdout.flush()
for k in [1,2,10,1000,10**6,10**9]:
    print("two-sided k=%d lo %s hi %s" % (k, mp.nstr(gq(k,'0.025'),17), mp.nstr(gq(k+1,'0.975'),17))); sys.stdout.flush()
print("upper975 k=0", mp.nstr(gq(1,'0.975'),17))
for a,x in [(1,'2.995732273553991'),(0.5,'0.01'),(0.5,'30'),(3,'0.001'),(10,'25'),(1000001,'1000000'),(1000001,'1003000'), (1000001,'998000'), (1000001, '1006000')]:
    p = P(a, x)
    print("P(%s,%s) = %s  Q = %s" % (a, x, mp.nstr(p,17), mp.nstr(1-p,17)))
for p in ['0.025','0.05','0.95','0.975','1e-10']:
    print("z(%s) = %s" % (p, mp.nstr(mp.sqrt(2)*mp.erfinv(2*mp.mpf(p)-1),17)))
