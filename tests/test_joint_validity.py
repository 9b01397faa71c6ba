"""Validity of the exact joint certificate (issue 17) at the least favourable points of its null region.

A test of a pair makes ``FP ~ Bin(n_neg, FPR)`` false positives and ``FN ~ Bin(n_pos, FNR)`` false
negatives. An (epsilon, delta)-DP pair has its (FPR, FNR) in the null region
``{1 - FNR <= e^eps FPR + delta, 1 - FPR <= e^eps FNR + delta}``; the points where a certificate is
most likely to exceed epsilon lie on its lower boundary, two segments meeting at the
randomized-response corner ``FPR = FNR = (1 - delta) / (1 + e^eps)``. Counts are drawn there
directly (binomial sampling: cheap), and through a real mechanism with discrete scores and ties
(randomized response through ``reserved_test_certificate``). A certificate at level ``alpha``
*violates* when it exceeds the true epsilon; its violation count over ``RUNS`` runs must not exceed
the binomial tolerance ``binom.ppf(0.999, RUNS, alpha)`` (a one-sided binomial test at 0.001 of the
rate <= alpha). A family of K certificates, each one joint test at ``alpha / K``, violates when any
member does. The same holds for the mu-GDP joint bound at its corner ``Phi(-mu / 2)``.

The joint bound is also checked against the split Clopper-Pearson bound (never below it) on an
exhaustive grid of counts and a random sample of larger tests, and its exact p-value against a
brute-force enumeration of all outcomes (it is the largest epsilon the exact test allows).
Seeded throughout; about 30 s on 2 cores at a load average of 5 (mostly the 100 + 100 corner).
The full 60 + 60 grid (32,761 outcomes) is in ``benchmarks/bench_certificates.py``.
"""

import math

import numpy as np
import pytest
from scipy import stats

from epsaudit.bounds import certified_epsilon, joint_epsilon, joint_mu
from epsaudit.protocol import generator

ALPHA = 0.05
RUNS = 2000  # per setting; counts drawn directly (binomial), so cheap
RR_RUNS = 600  # randomized response through the whole reserved test (~10 ms a run)
SEED = 17


def tolerance(runs: int, level: float) -> int:
    """Largest violation count compatible with a violation rate <= level (binomial test at 0.001)."""
    return int(stats.binom.ppf(0.999, runs, level))


def corner(epsilon: float, delta: float) -> float:
    return (1 - delta) / (1 + math.exp(epsilon))


def dp_boundary(fpr: float, epsilon: float, delta: float) -> float:
    """Lowest FNR of an (epsilon, delta)-DP pair at this FPR: the null region's lower boundary."""
    return max(1 - delta - math.exp(epsilon) * fpr, (1 - delta - fpr) * math.exp(-epsilon), 0.0)


def draw(label: str, runs: int, n_neg: int, fpr: float, n_pos: int, fnr: float):
    rng = generator(SEED, "joint-validity", label)
    return rng.binomial(n_neg, fpr, runs), rng.binomial(n_pos, fnr, runs)


def split(fp, n_neg, fn, n_pos, alpha, delta):
    return np.asarray(certified_epsilon(fp, n_neg, fn, n_pos, alpha, delta,
                                        bound="clopper-pearson"))


def count_violations(bounds, truth) -> int:
    return int(np.sum(np.asarray(bounds) > truth + 1e-9))


# (label, epsilon, delta, n_neg, n_pos, FPR as a function of the corner); FNR on the lower boundary.
POINTS = [
    ("corner, 100 + 100, pure DP", 1.0, 0.0, 100, 100, lambda c: c),
    ("corner, 25 + 60, delta 1e-5", 1.5, 1e-5, 25, 60, lambda c: c),
    ("corner, 30 + 30, epsilon 2.5 (zero errors likely)", 2.5, 0.0, 30, 30, lambda c: c),
    ("steep segment, 40 + 40, delta 0.01", 1.0, 0.01, 40, 40, lambda c: c / 3),
    ("flat segment, 30 + 50", 1.0, 1e-5, 30, 50, lambda c: 0.6),
    ("flat segment, 45 + 20, delta 0.01", 0.5, 0.01, 45, 20, lambda c: (1 + c) / 2),
]


@pytest.mark.parametrize("label, epsilon, delta, n_neg, n_pos, where", POINTS, ids=[p[0] for p in POINTS])
def test_joint_certificate_holds_its_level_on_the_null_boundary(label, epsilon, delta, n_neg, n_pos, where):
    fpr = where(corner(epsilon, delta))
    fnr = dp_boundary(fpr, epsilon, delta)
    # the point is on the boundary of the (epsilon, delta) region: one of the two inequalities is tight
    gaps = (fpr * math.exp(epsilon) + delta - (1 - fnr), fnr * math.exp(epsilon) + delta - (1 - fpr))
    assert min(gaps) == pytest.approx(0.0, abs=1e-12) and min(gaps) >= -1e-12
    fp, fn = draw(label, RUNS, n_neg, fpr, n_pos, fnr)
    joint = joint_epsilon(fp, n_neg, fn, n_pos, ALPHA, delta)
    joint_v, split_v = count_violations(joint, epsilon), count_violations(split(fp, n_neg, fn, n_pos, ALPHA, delta),
                                                                          epsilon)
    tol = tolerance(RUNS, ALPHA)
    print(f"{label}: FPR {fpr:.4f}, FNR {fnr:.4f}; violations joint {joint_v}, split {split_v} "
          f"of {RUNS}, tolerance {tol}")
    assert joint_v <= tol
    assert split_v <= tol


def test_joint_certificate_uses_its_level_at_the_corner():
    """At the corner the joint test exceeds the truth more often than the split one (which wastes
    half its level on each side) and about as often as its level allows."""
    fp, fn = draw(POINTS[0][0], RUNS, 100, corner(1.0, 0.0), 100, corner(1.0, 0.0))
    joint_v = count_violations(joint_epsilon(fp, 100, fn, 100, ALPHA, 0.0), 1.0)
    split_v = count_violations(split(fp, 100, fn, 100, ALPHA, 0.0), 1.0)
    assert split_v < joint_v
    assert joint_v >= stats.binom.ppf(0.001, RUNS, 0.02)  # not far below its level


def test_family_of_joint_certificates_holds_together():
    """K pairs, each at its own corner, one joint test per pair at alpha / K: any violation counts."""
    pairs = [(0.0, 20, 20), (0.5, 30, 30), (1.0, 30, 30), (1.5, 20, 40), (2.0, 25, 25)]
    level, delta = ALPHA / len(pairs), 1e-5
    any_violation = np.zeros(RUNS, dtype=bool)
    for j, (epsilon, n_neg, n_pos) in enumerate(pairs):
        rate = corner(epsilon, delta)
        fp, fn = draw(f"family pair {j}", RUNS, n_neg, rate, n_pos, rate)
        bounds = np.asarray(joint_epsilon(fp, n_neg, fn, n_pos, level, delta))
        member = bounds > epsilon + 1e-9
        assert int(member.sum()) <= tolerance(RUNS, level), f"pair {j}"
        any_violation |= member
    families = int(any_violation.sum())
    print(f"families of {len(pairs)}: {families} of {RUNS} violate, tolerance {tolerance(RUNS, ALPHA)}")
    assert families <= tolerance(RUNS, ALPHA)


def test_randomized_response_with_ties_through_the_reserved_test():
    """A real mechanism with discrete scores: 3-ary randomized response scored by its exact
    likelihood ratio (three values, many ties); the reserved test picks its threshold on development
    draws and certifies on fresh test draws with the joint bound (the default)."""
    from epsaudit.audits import reserved_test_certificate
    from epsaudit.mechanisms import RandomizedResponse

    rr, runs, n = RandomizedResponse(3, 1.0), RR_RUNS, 40
    score = rr.exact_score(0, 1)
    values = np.empty(runs)
    for r in range(runs):
        rng = generator(SEED, "joint-validity", "randomized response", r)
        dev_a, dev_b, test_a, test_b = (rr.sample(i, n, seed=rng) for i in (0, 1, 0, 1))
        result = reserved_test_certificate(dev_a, dev_b, test_a, test_b, score_function=score, check_reuse=False,
                                           delta=0.0, bound="joint")
        values[r] = result.value
    assert result.bound == "joint"
    violations = count_violations(values, rr.exact_epsilon(0, 1))
    print(f"randomized response: {violations} of {runs} violate, tolerance {tolerance(runs, ALPHA)}; "
          f"median certificate {np.median(values):.3f}")
    assert violations <= tolerance(runs, ALPHA)
    assert np.median(values) > 0  # the test has power: it is not valid by certifying nothing


def gdp_boundary(fpr: float, mu: float) -> float:
    return float(stats.norm.cdf(stats.norm.isf(fpr) - mu))


@pytest.mark.parametrize("label, mu, n_neg, n_pos, fpr", [
    ("GDP corner, 16 + 16", 1.0, 16, 16, None),
    ("GDP corner, 12 + 30, mu 2", 2.0, 12, 30, None),
    ("GDP off the corner, 15 + 25", 1.0, 15, 25, 0.1),
])
def test_joint_mu_holds_its_level(label, mu, n_neg, n_pos, fpr):
    fpr = float(stats.norm.cdf(-mu / 2)) if fpr is None else fpr
    fnr = gdp_boundary(fpr, mu)
    fp, fn = draw(label, RUNS, n_neg, fpr, n_pos, fnr)
    violations = count_violations(joint_mu(fp, n_neg, fn, n_pos, ALPHA), mu)
    print(f"{label}: FPR {fpr:.4f}, FNR {fnr:.4f}; {violations} of {RUNS} violate, tolerance {tolerance(RUNS, ALPHA)}")
    assert violations <= tolerance(RUNS, ALPHA)


# -- joint >= split -------------------------------------------------------------------------------

#: (delta, sizes): every outcome of every pair of sizes (the full 60 + 60 grid: the benchmark).
GRIDS = ((1e-5, (2, 7, 20)), (0.0, (3, 11)))


def test_joint_never_below_split_on_an_exhaustive_grid():
    for delta, sizes in GRIDS:
        for n_neg in sizes:
            for n_pos in sizes:
                fp, fn = (a.ravel() for a in np.meshgrid(np.arange(n_neg + 1), np.arange(n_pos + 1), indexing="ij"))
                joint = np.asarray(joint_epsilon(fp, n_neg, fn, n_pos, ALPHA, delta))
                below = joint < split(fp, n_neg, fn, n_pos, ALPHA, delta) - 1e-12
                assert not below.any(), (n_neg, n_pos, delta, fp[below], fn[below])


def test_joint_never_below_split_on_larger_tests():
    rng = generator(SEED, "joint-validity", "random outcomes")
    for _ in range(20):
        n_neg, n_pos = (int(v) for v in rng.integers(61, 300, size=2))
        fp, fn = int(rng.integers(0, n_neg // 5 + 1)), int(rng.integers(0, n_pos // 5 + 1))
        alpha, delta = float(rng.choice([0.05, 0.01, 1e-3])), float(rng.choice([0.0, 1e-5, 0.01]))
        joint = float(joint_epsilon(fp, n_neg, fn, n_pos, alpha, delta))
        assert joint >= float(split(fp, n_neg, fn, n_pos, alpha, delta)) - 1e-12, (fp, n_neg, fn, n_pos, alpha, delta)


# -- the exact test, by brute force ---------------------------------------------------------------


def brute_force_pvalue(fp, n_neg, fn, n_pos, epsilon, alpha, delta, points=4001):
    """sup over a fine grid of the null boundary of P(split statistic >= observed), every outcome enumerated."""
    x, y = np.meshgrid(np.arange(n_neg + 1), np.arange(n_pos + 1), indexing="ij")
    t = split(x, n_neg, y, n_pos, alpha, delta)
    observed = t[fp, fn]
    tail = t >= observed * (1 - 1e-9) - 1e-12  # ties count as at least as extreme
    p = np.linspace(0.0, 1.0 - delta, points)
    q = np.array([dp_boundary(v, epsilon, delta) for v in p])
    pmf_x = stats.binom.pmf(np.arange(n_neg + 1)[None, :], n_neg, p[:, None])
    pmf_y = stats.binom.pmf(np.arange(n_pos + 1)[None, :], n_pos, q[:, None])
    return float(np.max(np.einsum("kx,xy,ky->k", pmf_x, tail.astype(float), pmf_y)))


@pytest.mark.parametrize("fp, n_neg, fn, n_pos, delta", [
    (0, 20, 0, 20, 0.0), (1, 20, 0, 20, 0.0), (2, 15, 3, 25, 1e-5), (0, 8, 2, 30, 0.01), (4, 30, 4, 30, 0.0),
])
def test_joint_bound_is_the_largest_epsilon_the_exact_test_allows(fp, n_neg, fn, n_pos, delta):
    bound = float(joint_epsilon(fp, n_neg, fn, n_pos, ALPHA, delta))
    assert bound > 0
    # valid: just below the bound the null region's p-value is at most alpha ...
    assert brute_force_pvalue(fp, n_neg, fn, n_pos, bound - 1e-4, ALPHA, delta) <= ALPHA * (1 + 1e-6)
    # ... and exact: a little above it the exact test no longer rejects
    assert brute_force_pvalue(fp, n_neg, fn, n_pos, bound + 0.02, ALPHA, delta) > ALPHA


def test_zero_errors_reach_the_corner_limit():
    """No valid level-alpha procedure certifies more than logit(alpha^(1/2n)) from zero errors."""
    for n in (10, 30, 100, 1000):
        s = ALPHA ** (1 / (2 * n))
        limit_eps, limit_mu = math.log(s / (1 - s)), 2 * stats.norm.ppf(s)
        eps, mu = float(joint_epsilon(0, n, 0, n, ALPHA, 0.0)), float(joint_mu(0, n, 0, n, ALPHA))
        # never above the limit; below it only by the proven upper limit's slack on the p-value
        assert limit_eps - 1e-3 <= eps <= limit_eps + 1e-9
        assert limit_mu - 1e-3 <= mu <= limit_mu + 1e-9
