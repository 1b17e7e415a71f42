"""The polynomial coefficients of the inline math functions (`vmath/*.rs`), refitted.

Each polynomial is a weighted least-squares fit on Chebyshev nodes (near-minimax), made in
40-digit arithmetic with mpmath; its coefficients are then rounded to f32 one at a time, lowest
degree first, refitting the rest after each rounding so that later coefficients absorb the
rounding error of earlier ones. Prints, per polynomial, the f32 coefficients (lowest degree
first, as the Rust tables list them, each the shortest decimal of its f32) and the largest relative error of the rounded polynomial
against the exact function (the approximation error alone: f32 evaluation adds its own).

Run: python3 adapters/llvm/src/emit/vmath/fit.py   (needs mpmath and numpy)
"""

import mpmath as mp
import numpy as np

mp.mp.dps = 40
NODES = 400


def f32(v):
    return float(np.float32(float(v)))


def fit(g, lo, hi, deg, weight):
    """Coefficients c[0..deg] of sum c[j] x^j ~ g(x) on [lo, hi], minimising the error times
    weight(x), rounded to f32 one by one."""
    xs = [(lo + hi) / 2 + (hi - lo) / 2 * mp.cos(mp.pi * (k + 0.5) / NODES) for k in range(NODES)]
    fixed = []
    while len(fixed) <= deg:
        free = deg + 1 - len(fixed)
        a = mp.matrix(NODES, free)
        b = mp.matrix(NODES, 1)
        for i, x in enumerate(xs):
            w = weight(x)
            known = sum(c * x**j for j, c in enumerate(fixed))
            for j in range(free):
                a[i, j] = x ** (len(fixed) + j) * w
            b[i] = (g(x) - known) * w
        c = mp.lu_solve(a.T * a, a.T * b)
        fixed.append(f32(c[0]))
    return fixed


def horner(c, x):
    r = mp.mpf(0)
    for v in reversed(c):
        r = r * x + v
    return r


def max_rel(approx, exact, lo, hi, n=4000):
    worst = 0
    for k in range(n + 1):
        x = lo + (hi - lo) * k / n
        e = exact(x)
        if e != 0:
            worst = max(worst, abs((approx(x) - e) / e))
    return float(worst)


def show(name, c, err):
    print(f"{name}: max relative error {err:.2e}")
    print("  [" + ", ".join(repr(np.float32(v)).removeprefix("np.float32(").removesuffix(")") for v in c) + "]")


LN2 = mp.log(2)
TANH_SMALL = mp.mpf(0.625)
ERF_SPLIT, ERF_MAX, ERF_MID = 1, 4, 1


def exp_p(r):
    return (mp.exp(r) - 1 - r) / r**2 if r != 0 else mp.mpf(1) / 2


c = fit(exp_p, -LN2 / 2, LN2 / 2, 4, lambda r: max(r * r, mp.mpf(10) ** -30) / mp.exp(r))
show("exp: e^r = 1 + r + r^2 P(r), |r| <= ln2/2", c,
     max_rel(lambda r: 1 + r + r * r * horner(c, r), mp.exp, -LN2 / 2, LN2 / 2))


def log_q(f):
    return (mp.log1p(f) - f + f * f / 2) / f**3 if f != 0 else mp.mpf(1) / 3


lo, hi = mp.sqrt(0.5) - 1, mp.sqrt(2) - 1
c = fit(log_q, lo, hi, 7, lambda f: abs(f**3 / mp.log1p(f)) if f != 0 else 1)
show("log: log(1+f) = f - f^2/2 + f^3 Q(f), sqrt(1/2)-1 <= f < sqrt(2)-1", c,
     max_rel(lambda f: f - f * f / 2 + f**3 * horner(c, f), mp.log1p, lo, hi))


def tanh_p(u):
    s = mp.sqrt(u)
    return (mp.tanh(s) - s) / u**1.5 if u != 0 else -mp.mpf(1) / 3


c = fit(tanh_p, 0, TANH_SMALL**2, 5, lambda u: u**1.5 / mp.tanh(mp.sqrt(u)) if u != 0 else 1)
show("tanh: x + x^3 P(x^2), |x| < 0.625", c,
     max_rel(lambda x: x + x**3 * horner(c, x * x), mp.tanh, 0, TANH_SMALL))


def erf_p(u):
    s = mp.sqrt(u)
    return mp.erf(s) / s if u != 0 else 2 / mp.sqrt(mp.pi)


# x + x R(x^2) rather than x P(x^2): P's constant 2/sqrt(pi) would lose half an ulp to f32.
c = fit(lambda u: erf_p(u) - 1, 0, ERF_SPLIT**2, 6, lambda u: 1 / erf_p(u))
show("erf: x + x R(x^2), |x| < 1", c, max_rel(lambda x: x + x * horner(c, x * x), mp.erf, 0, ERF_SPLIT))

# Weighted by erfc/erf: an error in Q moves erf by erfc times as much, relative to erf.
c = fit(lambda t: mp.log(mp.erfc(t + ERF_MID)), ERF_SPLIT - ERF_MID, ERF_MAX - ERF_MID, 10,
        lambda t: mp.erfc(t + ERF_MID) / mp.erf(t + ERF_MID))
show("erf: 1 - exp(Q(x - 1)), 1 <= x <= 4", c,
     max_rel(lambda x: 1 - mp.exp(horner(c, x - ERF_MID)), mp.erf, ERF_SPLIT, ERF_MAX))
