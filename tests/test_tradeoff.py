"""Trade-off certificate: closed-form numbers, bound directions, and validity on exactly known mechanisms.

Validity: a band *fails* when its certified statement is false -- some threshold of the family has
a true false-positive or false-negative rate above its upper limit. A 95% band may fail with
probability at most 5%; each count over >= 1,000 simulated bands is compared with the binomial
tolerance (the 0.999 quantile of Binomial(N, 0.05)). Scores are drawn directly from the exact
likelihood-ratio score distributions (vectorised), with development thresholds chosen per band by
the library. A harness check shows the same comparison catches invalid procedures.
"""

import dataclasses

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from epsaudit.audits.roc_reserved import reserved_test_certificate, reserved_test_pairs
from epsaudit.audits.tradeoff import (
    DEFAULT_THRESHOLDS,
    TradeoffCertificate,
    curves_frame,
    development_thresholds,
    epsilon_curve,
    mu_lower_bound,
    tradeoff_band,
    tradeoff_certificate,
    tradeoff_certificate_pairs,
)
from epsaudit.bounds import (
    clopper_pearson_lower,
    clopper_pearson_upper,
    dkw_margin,
    gaussian_epsilon,
    gaussian_tradeoff,
    tradeoff_delta,
    tradeoff_epsilon,
    tradeoff_mu,
)
from epsaudit.mechanisms import IsotropicGaussian, ProductLaplace, RandomizedResponse
from epsaudit.validation import ReusedRowsError

NOMINAL = 0.05
REPS = 1000
DELTAS = np.array([1e-6, 1e-5, 1e-3, 1e-1])


def tolerance(trials: int) -> int:
    """Largest failure count compatible with a rate <= 5% (one-sided binomial test at 0.001)."""
    return int(stats.binom.ppf(0.999, trials, NOMINAL))


# ---------------------------------------------------------------------------------------------
# Closed-form numbers
# ---------------------------------------------------------------------------------------------


def test_point_bounds_closed_form():
    assert tradeoff_epsilon(0.1, 0.2, 0.0) == pytest.approx(np.log(8.0), abs=1e-12)
    assert tradeoff_epsilon(0.2, 0.1, 0.05) == pytest.approx(np.log(0.75 / 0.1), abs=1e-12)  # mirrored form
    assert tradeoff_epsilon(0.6, 0.5, 0.0) == 0.0
    assert tradeoff_delta(0.1, 0.2, 1.0) == pytest.approx(0.8 - np.e * 0.1, abs=1e-12)
    assert tradeoff_mu(0.05, 0.25) == pytest.approx(stats.norm.ppf(0.95) + stats.norm.ppf(0.75), abs=1e-12)
    assert tradeoff_mu(0.5, 0.6) == 0.0
    assert tradeoff_mu(0.0, 0.5) == np.inf
    assert gaussian_tradeoff(0.05, 1.0) == pytest.approx(stats.norm.cdf(stats.norm.ppf(0.95) - 1.0), abs=1e-12)
    assert gaussian_tradeoff([0.0, 0.3, 1.0], 0.0).tolist() == pytest.approx([1.0, 0.7, 0.0])
    assert dkw_margin(100, 0.025) == pytest.approx(np.sqrt(np.log(80.0) / 200.0), abs=1e-15)


def test_mu_bound_is_exact_on_the_gaussian_curve():
    # a point exactly on G_mu certifies exactly mu; the epsilon at delta is that of the point
    mu = 1.7
    fpr = np.array([0.01, 0.1, 0.3, 0.5])
    fnr = gaussian_tradeoff(fpr, mu)
    assert tradeoff_mu(fpr, fnr) == pytest.approx(np.full(4, mu), abs=1e-9)
    assert mu_lower_bound(fpr, fnr) == pytest.approx(mu, abs=1e-9)
    # no point on the Gaussian curve certifies more than the Gaussian epsilon(delta)
    dense = np.r_[np.logspace(-14, -1, 20001), np.linspace(0.1, 0.999, 2001)]
    curve = epsilon_curve(dense, gaussian_tradeoff(dense, mu), DELTAS)
    exact = np.array([gaussian_epsilon(mu, d) for d in DELTAS])
    assert np.all(curve <= exact + 1e-9)
    assert curve == pytest.approx(exact, abs=2e-3)  # and the dense curve attains it


def test_zero_error_certificate_is_the_closed_form_cap():
    # perfectly separated scores, k thresholds all with zero test errors at the best point
    dev_a, dev_b = np.arange(10.0, 40.0)[:, None], -np.arange(10.0, 40.0)[:, None]
    test_a, test_b = np.arange(40.5, 70.5)[:, None], -np.arange(40.5, 70.5)[:, None]
    cert = tradeoff_certificate(dev_a, dev_b, test_a, test_b, score_function=lambda x: x[:, 0])
    k = cert.n_points  # the single-threshold choice is the middle of the gap, also the median quantile
    assert DEFAULT_THRESHOLDS == 4 and k == 3
    assert np.all(cert.fp[cert.thresholds <= 0] <= 30) and cert.fp[cert.thresholds == 0.0] == 0
    alpha = 0.05 / (2 * k)
    assert cert.alpha_per_bound == pytest.approx(alpha)
    f = 1.0 - alpha ** (1.0 / 30)  # Clopper-Pearson upper limit at zero errors
    assert cert.best_epsilon == pytest.approx(np.log((1 - 1e-5 - f) / f), abs=1e-9)
    assert cert.best_epsilon == pytest.approx(1.7543, abs=1e-4)
    assert cert.mu_lower == pytest.approx(2 * stats.norm.isf(f), abs=1e-9)
    # the single-threshold certificate alone, the joint test at 0.05: logit(0.05 ** (1 / 60)) less a
    # little for delta = 1e-5 (the split bound at 0.025 each would give 2.0338)
    g = 0.05 ** (1.0 / 60)
    assert cert.single_threshold_epsilon == pytest.approx(np.log(g / (1 - g)), abs=2e-3)
    assert cert.correction_cost == pytest.approx(cert.single_threshold_epsilon - cert.best_epsilon, abs=1e-12)
    assert cert.best_epsilon >= cert.single_threshold_epsilon - cert.correction_cost - 1e-12
    # the best point by joint tests at the band's per-threshold level 0.05 / 3: logit((0.05 / 3) ** (1 / 60))
    h = (0.05 / 3) ** (1.0 / 60)
    assert cert.joint_best_epsilon == pytest.approx(np.log(h / (1 - h)), abs=2e-3)
    assert cert.best_epsilon < cert.joint_best_epsilon < cert.single_threshold_epsilon


def test_one_threshold_reproduces_the_reserved_test_certificate():
    mech = IsotropicGaussian(np.r_[[np.eye(5)[0] * 1.5], [np.zeros(5)]], sigma=1.0)
    rows = [mech.sample(i, 60, seed=s) for i, s in ((0, 11), (1, 12), (0, 13), (1, 14))]
    for fn in (None, mech.exact_score(0, 1)):
        single = reserved_test_certificate(*rows, score_function=fn, n_certificates=3, bound="clopper-pearson")
        joint = reserved_test_certificate(*rows, score_function=fn, n_certificates=3)
        cert = tradeoff_certificate(*rows, score_function=fn, n_certificates=3, n_thresholds=1)
        # one threshold: the paper's split reserved test (the same bound by two paths: equal to rounding)
        assert cert.best_epsilon == pytest.approx(single.value, rel=1e-12, abs=1e-15)
        assert cert.single_threshold == single.details["threshold"]
        assert cert.alpha_per_bound == single.alpha_per_bound == pytest.approx(0.05 / 6)
        assert cert.single_threshold_epsilon == cert.joint_best_epsilon == joint.value  # and its joint test
        assert cert.correction_cost == pytest.approx(joint.value - single.value, rel=1e-12, abs=1e-15)
        assert cert.correction_cost >= 0
        many = tradeoff_certificate(*rows, score_function=fn, n_certificates=3)
        assert many.single_threshold_epsilon == joint.value
        assert many.best_epsilon >= single.value - many.correction_cost - 1e-12
        assert many.correction_cost > 0


# ---------------------------------------------------------------------------------------------
# Direction of every bound
# ---------------------------------------------------------------------------------------------


def test_bounds_decrease_in_each_error_rate():
    grid = np.linspace(0.001, 0.999, 41)
    fpr, fnr = np.meshgrid(grid, grid, indexing="ij")
    mu = tradeoff_mu(fpr, fnr)
    eps = tradeoff_epsilon(fpr, fnr, 1e-5)
    for values in (mu, eps):
        assert np.all(np.diff(values, axis=0) <= 1e-12)
        assert np.all(np.diff(values, axis=1) <= 1e-12)


def test_band_uses_upper_limits_of_both_error_rates():
    sa = np.array([0.1, 0.5, 0.9, 1.3, 2.0, 2.2, 3.0, 3.5])
    sb = np.array([-1.0, -0.5, 0.0, 0.2, 0.6, 1.1, -2.0, 0.3])
    thr = np.array([0.25, 1.0])
    band = tradeoff_band(sa, sb, alpha=0.01, thresholds=thr)
    fn, fp = np.array([1, 3]), np.array([3, 1])
    assert band["fn"].tolist() == fn.tolist() and band["fp"].tolist() == fp.tolist()
    assert band["fpr_upper"] == pytest.approx(clopper_pearson_upper(fp, 8, 0.01))
    assert band["fnr_upper"] == pytest.approx(clopper_pearson_upper(fn, 8, 0.01))
    assert np.all(band["fpr_upper"] > fp / 8) and np.all(band["fnr_upper"] > fn / 8)
    mu = mu_lower_bound(band["fpr_upper"], band["fnr_upper"])
    # the plug-in value and a bound (wrongly) built on lower limits are both larger
    assert mu < mu_lower_bound(fp / 8, fn / 8)
    assert mu < mu_lower_bound(clopper_pearson_lower(fp, 8, 0.01), clopper_pearson_lower(fn, 8, 0.01))
    dkw = tradeoff_band(sa, sb, alpha=0.01, method="dkw")
    assert dkw["fpr_upper"][dkw["valid"]] == pytest.approx(np.minimum(dkw["fp"] / 8 + dkw_margin(8, 0.01), 1.0)[dkw["valid"]])


# ---------------------------------------------------------------------------------------------
# Validity by simulation (vectorised)
# ---------------------------------------------------------------------------------------------


def dev_thresholds(dev_a, dev_b, k):
    """Library thresholds per band, padded to a common width by repeating the last (same counts)."""
    chosen = [development_thresholds(a, b, k, alpha=0.025) for a, b in zip(dev_a, dev_b)]
    width = max(len(t) for t in chosen)
    ks = np.array([len(t) for t in chosen])
    return np.array([np.r_[t, np.full(width - len(t), t[-1])] for t in chosen]), ks


def bonferroni_bands(dev_a, dev_b, test_a, test_b, k):
    thr, ks = dev_thresholds(dev_a, dev_b, k)  # ks: each band's own family size (duplicates dropped)
    return tradeoff_band(test_a, test_b, alpha=(1 - 0.95) / (2 * ks), thresholds=thr)


def failures(band, true_fpr, true_fnr, curve):
    """Per band: the simultaneous statement fails; some certified point lies below the true curve."""
    t = band["thresholds"]
    statement = np.any((true_fpr(t) > band["fpr_upper"] + 1e-12) | (true_fnr(t) > band["fnr_upper"] + 1e-12), axis=-1)
    below = np.any(curve(band["fpr_upper"]) > band["fnr_upper"] + 1e-12, axis=-1)
    return statement, below


def check_counts(name, counts, trials):
    tol = tolerance(trials)
    print(f"{name}: " + ", ".join(f"{k} {v}" for k, v in counts.items()) + f" failures of {trials}; tolerance {tol}")
    for key, value in counts.items():
        assert value <= tol, f"{name}: {key} failed {value} times in {trials} > {tol}"


def gaussian_scores(mu, n, rng):
    """Exact likelihood-ratio scores of the Gaussian pair, standardised: A ~ N(mu/2, 1), B ~ N(-mu/2, 1)."""
    return rng.normal(mu / 2, 1.0, (REPS, n)), rng.normal(-mu / 2, 1.0, (REPS, n))


@pytest.mark.parametrize("mu", [0.0, 1.0, 3.0])
def test_gaussian_bands_cover_the_true_curve(mu):
    rng = np.random.default_rng(int(10 * mu) + 1)
    n = 50
    dev_a, dev_b = gaussian_scores(mu, n, rng)
    test_a, test_b = gaussian_scores(mu, n, rng)
    true_fpr = lambda t: stats.norm.sf(t + mu / 2)  # noqa: E731
    true_fnr = lambda t: stats.norm.cdf(t - mu / 2)  # noqa: E731
    curve = lambda a: gaussian_tradeoff(a, mu)  # noqa: E731
    band = bonferroni_bands(dev_a, dev_b, test_a, test_b, DEFAULT_THRESHOLDS)
    statement, below = failures(band, true_fpr, true_fnr, curve)
    mu_lo = mu_lower_bound(band["fpr_upper"], band["fnr_upper"])
    eps_lo = epsilon_curve(band["fpr_upper"], band["fnr_upper"], DELTAS)
    exact_eps = np.array([gaussian_epsilon(mu, d) if mu > 0 else 0.0 for d in DELTAS])
    counts = {"statement": int(statement.sum()), "below curve": int(below.sum()),
              "mu": int(np.sum(mu_lo > mu + 1e-9)), "epsilon(delta)": int(np.any(eps_lo > exact_eps + 1e-9, axis=1).sum())}
    check_counts(f"gaussian mu={mu} bonferroni", counts, REPS)
    assert counts["below curve"] <= counts["statement"]  # the curve statement follows from the band
    if mu == 3.0:
        assert np.median(mu_lo) > 1.0  # and the band has power


def test_gaussian_dkw_band_holds_for_every_threshold():
    mu, n = 1.0, 50
    rng = np.random.default_rng(7)
    test_a, test_b = gaussian_scores(mu, n, rng)
    alpha = (1 - 0.95) / 2
    band = tradeoff_band(test_a, test_b, alpha=alpha, method="dkw")
    # exact suprema over all real thresholds of the one-sided deviations the band needs
    sb, sa = np.sort(test_b, axis=1), np.sort(test_a, axis=1)
    i = np.arange(1, n + 1)
    sup_b = np.max(stats.norm.sf(sb + mu / 2) - (n - i) / n, axis=1)  # FPR(t) - FPR_n(t)
    sup_a = np.max(stats.norm.cdf(sa - mu / 2) - (i - 1) / n, axis=1)  # FNR(t) - FNR_n(t)
    margin = dkw_margin(n, alpha)
    statement, below = failures(band, lambda t: stats.norm.sf(t + mu / 2), lambda t: stats.norm.cdf(t - mu / 2),
                                lambda a: gaussian_tradeoff(a, mu))
    mu_lo = mu_lower_bound(band["fpr_upper"], band["fnr_upper"])
    counts = {"all thresholds": int(np.sum((sup_b > margin) | (sup_a > margin))), "points": int(statement.sum()),
              "below curve": int(below.sum()), "mu": int(np.sum(mu_lo > mu))}
    check_counts("gaussian mu=1 dkw", counts, REPS)
    assert band["thresholds"].shape == (REPS, 2 * n + 1)


def laplace_truth(eps):
    """1-D Laplace pair (scale 1, means eps and 0), exact score |x| - |x - eps| in [-eps, eps]."""
    def fpr(t):
        return np.where(t < -eps, 1.0, np.where(t >= eps, 0.0, 0.5 * np.exp(-(np.clip(t, -eps, eps) + eps) / 2)))

    def fnr(t):
        return np.where(t < -eps, 0.0, np.where(t >= eps, 1.0, 0.5 * np.exp(-(eps - np.clip(t, -eps, eps)) / 2)))

    def curve(a):  # Dong, Roth & Su 2022: the Laplace trade-off function
        a = np.asarray(a, dtype=float)
        lo, hi = np.exp(-eps) / 2, 0.5
        mid = np.exp(-eps) / (4 * np.maximum(a, 1e-300))
        return np.where(a < lo, 1 - np.exp(eps) * a, np.where(a <= hi, mid, np.exp(-eps) * (1 - a)))

    return fpr, fnr, curve


def rr_truth(mech):
    pt, po, e = mech.p_true, mech.p_other, mech.epsilon

    def fpr(t):
        return np.where(t < -e, 1.0, np.where(t < 0, 1 - pt, np.where(t < e, po, 0.0)))

    def fnr(t):
        return np.where(t < -e, 0.0, np.where(t < 0, po, np.where(t < e, 1 - pt, 1.0)))

    def curve(a):
        return np.interp(a, [0.0, po, 1 - pt, 1.0], [1.0, 1 - pt, po, 0.0])

    return fpr, fnr, curve


@pytest.mark.parametrize("method", ["bonferroni", "dkw"])
def test_laplace_and_randomized_response_epsilon_curves_are_valid(method):
    n, eps = 50, 1.5
    lap = ProductLaplace(np.array([[eps], [0.0]]), scale=1.0)
    rr = RandomizedResponse(4, eps)
    cases = {
        "laplace": (lap, laplace_truth(eps), np.maximum(eps + 2 * np.log1p(-DELTAS), 0.0)),
        "randomized response": (rr, rr_truth(rr), np.log(np.maximum(rr.p_true - DELTAS, rr.p_other) / rr.p_other)),
    }
    for name, (mech, (fpr, fnr, curve), exact) in cases.items():
        assert mech.exact_epsilon(0, 1) == pytest.approx(eps)
        score = mech.exact_score(0, 1)
        draw = lambda i, seed: score(mech.sample(i, REPS * n, seed=seed)).reshape(REPS, n)  # noqa: E731
        test_a, test_b = draw(0, 3), draw(1, 4)
        if method == "bonferroni":
            band = bonferroni_bands(draw(0, 1), draw(1, 2), test_a, test_b, DEFAULT_THRESHOLDS)
        else:
            band = tradeoff_band(test_a, test_b, alpha=0.025, method="dkw")
        statement, below = failures(band, fpr, fnr, curve)
        eps_lo = epsilon_curve(band["fpr_upper"], band["fnr_upper"], np.r_[0.0, DELTAS])
        counts = {"statement": int(statement.sum()), "below curve": int(below.sum()),
                  "pure epsilon": int(np.sum(eps_lo[:, 0] > eps + 1e-9)),
                  "epsilon(delta)": int(np.any(eps_lo[:, 1:] > exact + 1e-9, axis=1).sum())}
        check_counts(f"{name} eps={eps} {method}", counts, REPS)
        assert np.median(eps_lo[:, 0]) > (0.3 if method == "bonferroni" else 0.15)  # the bands have power


def test_harness_catches_invalid_procedures():
    mu, n = 1.0, 50
    rng = np.random.default_rng(5)
    dev_a, dev_b = gaussian_scores(mu, n, rng)
    test_a, test_b = gaussian_scores(mu, n, rng)
    thr, ks = dev_thresholds(dev_a, dev_b, DEFAULT_THRESHOLDS)
    tol = tolerance(REPS)
    # (1) no correction at all: limits at level 0.5 (about the point estimates)
    loose = tradeoff_band(test_a, test_b, alpha=0.5, thresholds=thr)
    statement, _ = failures(loose, lambda t: stats.norm.sf(t + mu / 2), lambda t: stats.norm.cdf(t - mu / 2),
                            lambda a: gaussian_tradeoff(a, mu))
    assert statement.sum() > tol
    # (2) a mu "bound" built on lower limits of the error rates (the wrong direction)
    fn = np.sum(test_a[:, :, None] <= thr[:, None, :], axis=1)
    fp = np.sum(test_b[:, :, None] > thr[:, None, :], axis=1)
    alpha = (0.05 / (2 * ks))[:, None]
    wrong = mu_lower_bound(clopper_pearson_lower(fp, n, alpha), clopper_pearson_lower(fn, n, alpha))
    right = mu_lower_bound(clopper_pearson_upper(fp, n, alpha), clopper_pearson_upper(fn, n, alpha))
    print(f"harness: uncorrected {int(statement.sum())}, wrong-direction mu {int(np.sum(wrong > mu))}, "
          f"right {int(np.sum(right > mu))} of {REPS}; tolerance {tol}")
    assert np.sum(wrong > mu) > tol
    assert np.sum(right > mu) <= tol


# ---------------------------------------------------------------------------------------------
# API: result object, many pairs, errors
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gaussian_groups():
    mech = IsotropicGaussian(np.array([[2.0, 0.0], [0.0, 0.0], [0.0, 1.0]]), sigma=1.0)
    return mech, mech.sample_groups(40, seed=0), mech.sample_groups(40, seed=1)


def test_result_object_frame_and_envelope(gaussian_groups):
    mech, dev, test = gaussian_groups
    cert = tradeoff_certificate(dev[0], dev[1], test[0], test[1], pair=(0, 1))
    assert isinstance(cert, TradeoffCertificate) and cert.kind == "certificate"
    frame = cert.frame()
    assert list(frame.columns) == ["identity_a", "identity_b", "method", "threshold", "fp", "fn", "n_a", "n_b",
                                   "fpr_hat", "fnr_hat", "fpr_upper", "fnr_upper", "epsilon", "mu"]
    assert len(frame) == cert.n_points and frame["epsilon"].max() == pytest.approx(cert.best_epsilon)
    assert frame["mu"].max() == pytest.approx(cert.mu_lower)
    assert cert.epsilon(1e-5) == pytest.approx(cert.best_epsilon)
    assert np.all(np.diff(cert.epsilon_at_delta) <= 1e-12)  # non-increasing in delta
    assert list(cert.epsilon_frame()["delta"]) == pytest.approx([0.0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1])
    # the envelope is convex, runs from (0, 1) to (1, 0) and passes on or below every point
    assert cert.envelope(0.0) == 1.0 and cert.envelope(1.0) == 0.0
    assert np.all(cert.envelope(cert.fpr_upper) <= cert.fnr_upper + 1e-12)
    grid = np.linspace(0, 1, 101)
    assert np.all(np.diff(cert.envelope(grid), 2) >= -1e-12)
    assert cert.delta_lower(cert.best_epsilon) <= 1e-5 + 1e-12
    result = cert.to_result()
    assert result.is_certificate and result.value == cert.best_epsilon and result.pair == (0, 1)
    assert result.details["mu_lower"] == cert.mu_lower and result.details["correction_cost"] == cert.correction_cost
    with pytest.raises(dataclasses.FrozenInstanceError):
        cert.best_epsilon = 9.0
    with pytest.raises(ValueError, match="read-only"):
        cert.fpr_upper[0] = 0.0


def test_pairs_share_the_family_correction(gaussian_groups):
    mech, dev, test = gaussian_groups
    pairs = [(0, 1), (0, 2), (1, 2)]
    certs = tradeoff_certificate_pairs(dev, pairs, test_groups=test, score_functions=mech.exact_score)
    for cert in certs:
        assert cert.correction == f"bonferroni: 2 one-sided Clopper-Pearson bounds x {cert.n_points} threshold(s) x 3 certificate(s)"
        assert cert.alpha_per_bound == pytest.approx(0.05 / (2 * cert.n_points * 3))
    one = tradeoff_certificate(dev[0], dev[2], test[0], test[2], score_function=mech.exact_score(0, 2), n_certificates=3)
    assert certs[1].best_epsilon == one.best_epsilon and certs[1].mu_lower == one.mu_lower
    single = reserved_test_pairs(dev, pairs, test_groups=test, score_functions=mech.exact_score)
    assert [c.single_threshold_epsilon for c in certs] == [r.value for r in single]
    table = curves_frame(certs)
    assert isinstance(table, pd.DataFrame) and len(table) == sum(c.n_points for c in certs)
    dkw = tradeoff_certificate_pairs(dev, pairs, test_groups=test, method="dkw")
    assert dkw[0].correction == "DKW band (Massart constant) per identity: 2 bands x 3 certificate(s)"
    assert dkw[0].n_points == 82  # -inf, the 80 distinct test scores and the development threshold


def test_a_failing_pair_is_not_computed_and_stays_in_the_family(gaussian_groups):
    mech, dev, test = gaussian_groups
    test = dict(test)
    test[2] = np.r_[test[2][:-1], dev[1][:1]]  # a development row of identity 1 reused as a test row of 2
    certs = tradeoff_certificate_pairs(dev, [(0, 1), (1, 2)], test_groups=test)
    assert certs[0].computed and not certs[1].computed
    assert "1 of 80 test row(s) repeat a development row" in certs[1].not_computed
    assert certs[1].correction == "bonferroni: 2 one-sided Clopper-Pearson bounds x 4 threshold(s) x 2 certificate(s)"
    result = certs[1].to_result()
    assert not result.computed and np.isnan(result.value) and result.details["error"] == "ReusedRowsError"
    assert certs[1].frame().empty and "not computed" in str(certs[1])
    with pytest.raises(ValueError, match="was not computed"):
        certs[1].envelope(0.5)
    # a split that leaves too few test rows is contained the same way
    small = {**dev, 1: dev[1][:3]}
    split = tradeoff_certificate_pairs(small, [(0, 1), (0, 2)])
    assert not split[0].computed and "identity 1 has 3 row(s); a development/test split needs >= 4" in split[0].not_computed and split[1].computed


def test_randomized_response_needs_repeated_rows_allowed():
    rr = RandomizedResponse(4, 2.0)
    rows = [rr.sample(i, 200, seed=s) for i, s in ((0, 1), (1, 2), (0, 3), (1, 4))]
    with pytest.raises(ReusedRowsError, match="repeat a development row"):
        tradeoff_certificate(*rows, score_function=rr.exact_score(0, 1))
    cert = tradeoff_certificate(*rows, score_function=rr.exact_score(0, 1), check_reuse=False)
    assert cert.n_points == 2  # three score levels: two thresholds carry all the information
    assert 0 < cert.epsilon(0.0) <= 2.0


@pytest.mark.parametrize("kwargs, message", [
    ({"method": "kolmogorov"}, "method must be one of"),
    ({"n_thresholds": 0}, "n_thresholds must be an integer >= 1"),
    ({"confidence": 1.0}, r"confidence must be in \(0, 1\)"),
    ({"deltas": [0.1, 1.5]}, "deltas must be a non-empty 1-D sequence"),
    ({"delta": -0.1}, r"delta must be in \[0, 1\)"),
])
def test_bad_options_are_refused(gaussian_groups, kwargs, message):
    _, dev, test = gaussian_groups
    with pytest.raises(ValueError, match=message):
        tradeoff_certificate(dev[0], dev[1], test[0], test[1], **kwargs)


def test_bad_inputs_are_refused(gaussian_groups):
    _, dev, test = gaussian_groups
    with pytest.raises(ReusedRowsError, match="2 of 80 test row"):
        tradeoff_certificate(dev[0], dev[1], np.r_[test[0][:-1], dev[0][:1]], np.r_[test[1][:-1], dev[1][:1]])
    with pytest.raises(ValueError, match="different dimensions"):
        tradeoff_certificate(dev[0], dev[1], test[0][:, :1], test[1][:, :1])
    with pytest.raises(ValueError, match="smaller than the 2 certificates"):
        tradeoff_certificate_pairs(dev, [(0, 1), (0, 2)], test_groups=test, n_certificates=1)
    with pytest.raises(ValueError, match="needs thresholds fixed on development data"):
        tradeoff_band([1.0, 2.0], [0.0, 1.0], alpha=0.01)
    with pytest.raises(ValueError, match="different leading shapes"):
        tradeoff_band(np.zeros((3, 4)), np.zeros((2, 4)), alpha=0.01, method="dkw")
    with pytest.raises(ValueError, match="error rates fpr and fnr must lie in"):
        tradeoff_mu(1.2, 0.1)
