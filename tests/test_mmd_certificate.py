"""MMD certificate: closed-form constants, the TV link, and validity at the null and at known epsilon.

A certificate *fails* when its lower bound exceeds the truth: the exact population MMD^2 of the
pair under the kernel it fixed (closed form for Gaussian pairs), or the exact epsilon(delta). Counts
over 1,000 simulated certificates are compared with the binomial tolerance (0.999 quantile of
Binomial(N, 0.05)); a harness check shows the uncorrected sample value fails that comparison.
"""

import dataclasses

import numpy as np
import pytest
from scipy import stats
from scipy.spatial.distance import cdist

from epsaudit.audits.mmd import (
    MMDCertificate,
    _development_bandwidth,
    _mmd_lower_bound as mmd_lower_bound,
    _mmd2,
    _mmd_statistics as mmd_statistics,
    mmd_certificate,
    mmd_certificate_pairs,
)
from epsaudit.bounds import epsilon_from_tv_delta, gaussian_epsilon, mmd2_deviation, tv_lower_from_mmd
from epsaudit.bounds.conversions import _epsilon_from_tv as epsilon_from_tv
from epsaudit.validation import ReusedRowsError

NOMINAL = 0.05
REPS = 1000


def tolerance(trials: int) -> int:
    return int(stats.binom.ppf(0.999, trials, NOMINAL))


# ---------------------------------------------------------------------------------------------
# Constants and links
# ---------------------------------------------------------------------------------------------


def test_deviation_constant_matches_the_u_statistic_bound():
    # McDiarmid with c_i = 4K/m, 4K/n; for m = n even it equals Gretton et al. (2012), Theorem 10
    assert mmd2_deviation(100, 100, 0.05) == pytest.approx(np.sqrt(8 * 0.02 * np.log(20)), abs=1e-15)
    for m in (30, 100, 300):
        theorem_10 = np.sqrt(8 * np.log(1 / 0.05) / (m // 2))  # solves exp(-t^2 floor(m/2) / 8) = alpha
        assert mmd2_deviation(m, m, 0.05) == pytest.approx(theorem_10, rel=1e-12)
    assert mmd2_deviation(31, 31, 0.05) < np.sqrt(8 * np.log(20) / 15)  # odd m: slightly better
    assert mmd2_deviation(30, 30, 0.05) == pytest.approx(1.2640, abs=1e-4)
    assert mmd2_deviation(300, 300, 0.05) == pytest.approx(0.3997, abs=1e-4)
    assert mmd2_deviation(50, 200, 0.05, kernel_bound=2.0) == pytest.approx(2 * np.sqrt(8 * 0.025 * np.log(20)))
    low2, low = mmd_lower_bound(1.0, 100, 100, 0.05)
    assert low2 == pytest.approx(1.0 - np.sqrt(8 * 0.02 * np.log(20))) and low == pytest.approx(np.sqrt(low2))
    assert mmd_lower_bound(0.3, 100, 100, 0.05) == (0.0, 0.0)


def test_tv_and_epsilon_links_closed_form():
    assert tv_lower_from_mmd(0.5) == pytest.approx(0.5 / np.sqrt(2))
    assert tv_lower_from_mmd(0.5, link="2") == 0.25
    tv = np.array([0.0, 0.3, 0.9])
    assert epsilon_from_tv_delta(tv, 0.0) == pytest.approx(epsilon_from_tv(tv))  # 2 artanh(TV)
    assert epsilon_from_tv_delta(0.5, 0.1) == pytest.approx(np.log(1.3 / 0.5))
    assert epsilon_from_tv_delta(0.05, 0.05) == pytest.approx(0.0, abs=1e-12)  # TV <= delta allows epsilon = 0
    # an (eps, delta)-DP pair at the TV limit (e^eps - 1 + 2 delta) / (e^eps + 1) gives back eps
    eps, delta = 1.3, 1e-3
    assert epsilon_from_tv_delta((np.exp(eps) - 1 + 2 * delta) / (np.exp(eps) + 1), delta) == pytest.approx(eps)


def test_mmd_is_at_most_sqrt2_tv_for_a_kernel_in_0_1():
    # exact population MMD and TV of random discrete distributions under an RBF kernel
    rng = np.random.default_rng(3)
    ratios = []
    for _ in range(500):
        support = rng.normal(size=(6, 2)) * rng.uniform(0.1, 5)
        kernel = np.exp(-cdist(support, support, "sqeuclidean") / 2)
        p, q = rng.dirichlet(np.full(6, 0.3)), rng.dirichlet(np.full(6, 0.3))
        mmd = np.sqrt(max((p - q) @ kernel @ (p - q), 0.0))
        ratios.append(mmd / (0.5 * np.abs(p - q).sum()))
    assert max(ratios) <= np.sqrt(2) + 1e-12
    assert max(ratios) > 1.2  # close to sqrt(2) for far-apart point masses: MMD <= TV would be false
    # two far-apart point masses attain the bound
    assert np.sqrt(2 - 2 * np.exp(-50.0)) == pytest.approx(np.sqrt(2) * 1.0)


def test_statistic_matches_the_estimate_route():
    rng = np.random.default_rng(0)
    a, b = rng.normal(0, 1, (30, 3)), rng.normal(0.5, 1, (25, 3))
    stats_ = mmd_statistics(a, b)
    assert _mmd2(a, b, stats_["bandwidth"]) == pytest.approx(stats_["mmd2_u"], abs=1e-12)
    assert _mmd2(np.array([[0.0], [0.0]]), np.array([[1.0], [1.0]]), 1.0) == pytest.approx(2 - 2 * np.exp(-0.5))
    kernel = _development_bandwidth(a, b, bandwidth_scales=(1.0,))
    assert kernel["bandwidth"] == pytest.approx(stats_["bandwidth"])  # same median heuristic on the same rows


# ---------------------------------------------------------------------------------------------
# Validity
# ---------------------------------------------------------------------------------------------


def gaussian_mmd2(s, sigma, d, dist):
    """Population MMD^2 of N(a, sigma^2 I) and N(b, sigma^2 I), ||a - b|| = dist, RBF bandwidth s."""
    c = (s**2 / (s**2 + 2 * sigma**2)) ** (d / 2)
    return 2 * c * (1 - np.exp(-dist**2 / (2 * (s**2 + 2 * sigma**2))))


def simulate(dist, n, d, seed, **kwargs):
    rng = np.random.default_rng(seed)
    shift = np.zeros(d)
    shift[0] = dist
    out = []
    for _ in range(REPS):
        rows = [rng.normal(size=(n, d)) + shift, rng.normal(size=(n, d)), rng.normal(size=(n, d)) + shift,
                rng.normal(size=(n, d))]
        out.append(mmd_certificate(*rows, check_reuse=False, **kwargs))  # fresh continuous draws
    return out


def test_valid_at_the_null_and_the_sample_value_is_not():
    certs = simulate(0.0, 40, 3, seed=1)
    tol = tolerance(REPS)
    positive = sum(c.epsilon > 0 for c in certs)
    above = sum(c.mmd2_lower > 0 for c in certs)
    # harness: the uncorrected sample value (no deviation subtracted) "certifies" about half the time
    plug_in = sum(c.mmd2_u > 0 for c in certs)
    print(f"null: {positive} positive certificates, {above} MMD^2 bounds > 0, sample value > 0 in {plug_in} "
          f"of {REPS}; tolerance {tol}")
    assert positive <= tol and above <= tol
    assert plug_in > tol
    assert all(c.deviation == pytest.approx(mmd2_deviation(40, 40, 0.05)) for c in certs)


def test_valid_at_known_separation_and_epsilon():
    d, n, dist = 3, 100, 5.0
    certs = simulate(dist, n, d, seed=2)
    truth = np.array([gaussian_mmd2(c.bandwidth, 1.0, d, dist) for c in certs])
    lower = np.array([c.mmd2_lower for c in certs])
    exact = np.array([gaussian_epsilon(dist, delta) for delta in certs[0].deltas[1:]])
    eps = np.array([c.epsilon_at_delta[1:] for c in certs])
    tol = tolerance(REPS)
    counts = {"mmd^2": int(np.sum(lower > truth)), "epsilon(delta)": int(np.any(eps > exact, axis=1).sum()),
              "uncorrected mmd^2": int(np.sum(np.array([c.mmd2_u for c in certs]) > truth))}
    print(f"gaussian, separation {dist}: {counts} of {REPS}; tolerance {tol}; median epsilon(1e-5) "
          f"{np.median([c.epsilon for c in certs]):.3f} vs exact {gaussian_epsilon(dist, 1e-5):.3f}")
    assert counts["mmd^2"] <= tol and counts["epsilon(delta)"] <= tol
    assert counts["uncorrected mmd^2"] > tol  # the harness catches the sample value
    assert np.median([c.epsilon for c in certs]) > 0.3  # it certifies something at this separation


def test_valid_for_laplace_at_known_pure_epsilon():
    eps, n = 6.0, 100
    rng = np.random.default_rng(4)
    certs = []
    for _ in range(REPS):
        rows = [rng.laplace(eps, 1.0, (n, 1)), rng.laplace(0, 1.0, (n, 1)), rng.laplace(eps, 1.0, (n, 1)),
                rng.laplace(0, 1.0, (n, 1))]
        certs.append(mmd_certificate(*rows, check_reuse=False))  # 1-D fresh draws
    pure = np.array([c.epsilon_at_delta[0] for c in certs])
    at_delta = np.array([c.epsilon for c in certs])
    tv = 1 - np.exp(-eps / 2)  # exact TV of the pair
    tol = tolerance(len(certs))
    print(f"laplace eps={eps}: pure {int(np.sum(pure > eps))}, delta=1e-5 {int(np.sum(at_delta > eps + 2 * np.log1p(-1e-5)))}, "
          f"TV {int(np.sum(np.array([c.tv_lower for c in certs]) > tv))} failures of {len(certs)}; median certificate "
          f"{np.median(pure):.3f}")
    assert np.sum(pure > eps) <= tol and np.sum(at_delta > eps + 2 * np.log1p(-1e-5)) <= tol
    assert np.sum(np.array([c.tv_lower for c in certs]) > tv) <= tol
    assert np.median(pure) > 0.3


# ---------------------------------------------------------------------------------------------
# API
# ---------------------------------------------------------------------------------------------


def test_result_object_and_pairs():
    rng = np.random.default_rng(0)
    groups = {c: rng.normal(2.0 * c, 0.3, size=(60, 2)) for c in range(3)}
    certs = mmd_certificate_pairs(groups, [(0, 1), (0, 2), (1, 2)], bandwidth_scales=(1.0,))
    cert = certs[0]
    assert isinstance(cert, MMDCertificate) and cert.kind == "certificate" and cert.n == (18, 18)
    assert cert.alpha_per_bound == pytest.approx(0.05 / 3)
    assert cert.correction == "bonferroni: 1 one-sided MMD deviation bound x 3 certificate(s)"
    assert cert.deviation == pytest.approx(np.sqrt(8 * (2 / 18) * np.log(60)))
    assert cert.mmd2_lower == pytest.approx(max(cert.mmd2_u - cert.deviation, 0.0))
    assert cert.tv_lower == pytest.approx(cert.mmd_lower / np.sqrt(2))
    frame = cert.frame()
    assert list(frame.columns) == ["identity_a", "identity_b", "delta", "epsilon", "tv_lower", "mmd_lower"]
    assert np.all(np.diff(frame["epsilon"]) <= 0)
    result = cert.to_result()
    assert result.is_certificate and result.value == cert.epsilon and result.delta == 1e-5 and result.pair == (0, 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cert.epsilon = 3.0


def test_a_failing_pair_is_not_computed_and_stays_in_the_family():
    rng = np.random.default_rng(2)
    dev = {c: rng.normal(c, 1.0, size=(20, 3)) for c in range(3)}
    test = {c: rng.normal(c, 1.0, size=(20, 3)) for c in range(3)}
    test[2] = np.r_[test[2][:-1], dev[0][:1]]  # one test row of identity 2 is a development row of 0
    certs = mmd_certificate_pairs(dev, [(0, 1), (0, 2)], test_groups=test)
    assert certs[0].computed and not certs[1].computed
    assert "1 of 40 test row(s) repeat a development row" in certs[1].not_computed
    assert certs[1].alpha_per_bound == certs[0].alpha_per_bound == pytest.approx(0.025)
    result = certs[1].to_result()
    assert not result.computed and np.isnan(result.value) and result.details["error"] == "ReusedRowsError"
    assert "not computed" in str(certs[1])


@pytest.mark.parametrize("kwargs, message", [
    ({"tv_link": "1"}, "tv_link must be one of"),
    ({"bandwidth_scales": (1.0, -1.0)}, "bandwidth_scales must be a non-empty sequence"),
    ({"n_certificates": 0}, "n_certificates must be an integer >= 1"),
    ({"confidence": 0.0}, r"confidence must be in \(0, 1\)"),
    ({"deltas": []}, "deltas must be a non-empty"),
])
def test_bad_options_are_refused(kwargs, message):
    rng = np.random.default_rng(1)
    rows = [rng.normal(size=(10, 2)) for _ in range(4)]
    with pytest.raises(ValueError, match=message):
        mmd_certificate(*rows, **kwargs)


def test_bad_inputs_are_refused():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(10, 2)), rng.normal(size=(10, 2))
    with pytest.raises(ReusedRowsError, match="repeat a development row"):
        mmd_certificate(a, b, a[:5], b[:5])
    with pytest.raises(ValueError, match="median pairwise distance of the development rows is zero"):
        mmd_certificate(np.zeros((6, 2)), np.zeros((6, 2)), a, b)
    with pytest.raises(ValueError, match="smaller than the 2 certificates"):
        mmd_certificate_pairs({0: a, 1: b, 2: a + 1}, [(0, 1), (0, 2)], n_certificates=1)
