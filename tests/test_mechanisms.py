"""Known-epsilon mechanisms of the synthetic benchmark (``epsaudit.mechanisms``; *Picture the Epsilon*, Tables 4-6)."""

from __future__ import annotations

import time
from itertools import combinations

import numpy as np
import pytest
from scipy import stats
from scipy.spatial.distance import pdist
from sklearn.metrics import roc_auc_score

from epsaudit import bounds, mechanisms as M
from epsaudit.mechanisms.additive import _output_grid
from epsaudit.mechanisms.calibration import _anisotropic_variance_shape
from epsaudit.mechanisms.prototypes import _distance_spread
from epsaudit.mechanisms.textbook import _laplace_noise_at
from epsaudit.protocol import identity_pairs, stream

MECHS = ("laplace", "gaussian", "anisotropic_gaussian")


@pytest.fixture(scope="module")
def protos():
    return {g: M.prototype_set(g, n_identities=12, dim=512, seed=3) for g in M.GEOMETRIES}


def _all_pairs(k):
    return list(combinations(range(k), 2))


# ---------------------------------------------------------------------------------------------
# Prototype sets
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("geometry", M.GEOMETRIES)
def test_prototypes_unit_norm_shape_and_seeded(geometry):
    p = M.prototype_set(geometry, n_identities=20, dim=512, seed=0)
    assert p.shape == (20, 512)
    np.testing.assert_allclose(np.linalg.norm(p, axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(p, M.prototype_set(geometry, 20, 512, seed=0))
    assert not np.allclose(p, M.prototype_set(geometry, 20, 512, seed=1))
    # a Generator seed is accepted and used
    np.testing.assert_array_equal(
        M.prototype_set(geometry, 5, 16, seed=np.random.default_rng(7)),
        M.prototype_set(geometry, 5, 16, seed=np.random.default_rng(7)),
    )


def test_face_like_distances_vary_widely_dispersed_do_not():
    for seed in range(10):
        face = M.prototype_set("face_like", 20, 512, seed=seed)
        dist = pdist(face)
        ratio = dist.max() / np.median(dist)
        assert ratio >= 3.0, (seed, ratio)
        assert _distance_spread(face) == pytest.approx(ratio, rel=1e-12)
        disp = pdist(M.prototype_set("dispersed", 20, 512, seed=seed))
        assert disp.max() / np.median(disp) < 1.2
        assert np.median(disp) == pytest.approx(np.sqrt(2), abs=0.05)
    # the default set used in the book: ratio 4.82 (seed 0)
    assert _distance_spread(M.prototype_set("face_like")) == pytest.approx(4.8186, abs=1e-3)
    # the spread is set by the radius span: equal radii give a much narrower spread
    narrow = _distance_spread(M.prototype_set("face_like", 20, 512, seed=0, radius_span=1.0))
    assert narrow < 2.5
    assert _distance_spread(M.prototype_set("face_like", 20, 512, seed=0, radius_span=1000.0)) > 4.8186


def test_face_like_spread_lies_in_a_few_dominant_directions():
    for seed in range(10):
        face = M.prototype_set("face_like", 20, 512, seed=seed)
        centred = face - face.mean(axis=0)
        sv = np.linalg.svd(centred, compute_uv=False)
        # rank ~5 plus the curvature of normalising onto the sphere: the median tail share over
        # seeds 0-49 is 9e-4, the largest 3.6e-3 (a sixth direction would hold ~10%)
        assert np.sum(sv[5:] ** 2) / np.sum(sv**2) < 5e-3, seed
        assert sv[0] ** 2 / np.sum(sv**2) > 0.3, seed  # the first direction dominates


# ---------------------------------------------------------------------------------------------
# Exact epsilon
# ---------------------------------------------------------------------------------------------


def test_laplace_exact_epsilon_hand_made_pair():
    p = np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 0.5], [1.0, -2.0, 0.5]])
    mech = M.ProductLaplace(p, scale=0.5)
    assert mech.exact_epsilon(0, 1) == pytest.approx(7.0, abs=1e-15)  # (1 + 2 + 0.5) / 0.5
    assert mech.exact_epsilon(1, 0) == pytest.approx(7.0, abs=1e-15)
    assert mech.exact_epsilon(1, 2) == 0.0
    assert mech.exact_epsilon(0, 0) == 0.0
    assert mech.delta == 0.0 and mech.name == "laplace" and not mech.null
    np.testing.assert_allclose(mech.exact_epsilons([(0, 1), (1, 2), (2, 0)]), [7.0, 0.0, 7.0])
    # The bound is attained: the LR score equals +epsilon beyond both means in a's direction.
    score = mech.exact_score(1, 0)
    x = p[1] + 10.0 * np.sign(p[1] - p[0])
    assert score(x[None, :])[0] == pytest.approx(7.0, abs=1e-12)
    xs = mech.sample(0, 5000, seed=1)
    assert np.all(np.abs(score(xs)) <= 7.0 + 1e-12)


def test_gaussian_exact_epsilon_hand_made_pair():
    p = np.array([[0.0, 0.0], [3.0, 4.0]])  # L2 distance 5
    mech = M.IsotropicGaussian(p, sigma=5.0, delta=1e-5)  # D = 1
    assert mech.separation(0, 1) == pytest.approx(1.0, abs=1e-15)
    assert mech.exact_epsilon(0, 1) == pytest.approx(4.3772, abs=1e-4)
    aniso = M.AnisotropicGaussian(p, variances=[9.0, 16.0], delta=1e-5)  # Mahalanobis sqrt(1 + 1)
    assert aniso.separation(0, 1) == pytest.approx(np.sqrt(2.0), abs=1e-15)
    assert aniso.exact_epsilon(0, 1) == pytest.approx(bounds.gaussian_epsilon(np.sqrt(2.0), 1e-5), rel=1e-12)
    np.testing.assert_allclose(aniso._whitening_direction(1, 0), [3.0 / 9.0, 4.0 / 16.0])


@pytest.mark.parametrize("geometry", M.GEOMETRIES)
@pytest.mark.parametrize("eps", [0.5, 2.0, 8.0, 32.0])
@pytest.mark.parametrize("name", MECHS)
def test_calibration_hits_requested_epsilon_at_worst_pair(protos, geometry, eps, name):
    p = protos[geometry]
    mech = M.calibrate(name, p, eps, delta=1e-5, seed=0)
    assert mech.name == name and mech.requested_epsilon == eps and not mech.null
    pairs = _all_pairs(len(p))
    e = mech.exact_epsilons(pairs)
    assert e.shape == (len(pairs),)
    assert e.max() == pytest.approx(eps, rel=1e-9)
    assert mech.exact_epsilon(*mech.worst_pair) == pytest.approx(eps, rel=1e-9)
    assert np.all(e <= eps * (1 + 1e-9))
    assert np.all(e > 0)
    # The noise scale, recomputed independently from the prototypes.
    diffs = np.array([p[a] - p[b] for a, b in pairs])
    if name == "laplace":
        assert mech.delta == 0.0
        assert mech.scale == pytest.approx(np.abs(diffs).sum(axis=1).max() / eps, rel=1e-12)
        np.testing.assert_allclose(e, np.abs(diffs).sum(axis=1) / mech.scale, rtol=1e-12)
    elif name == "gaussian":
        mu = bounds.gaussian_mu_for_epsilon(eps, 1e-5)
        assert mech.delta == 1e-5
        assert mech.sigma == pytest.approx(np.linalg.norm(diffs, axis=1).max() / mu, rel=1e-12)
    else:
        v = mech.variances
        assert v.max() / v.min() == pytest.approx(1e4, rel=1e-9)  # four orders of magnitude
        np.testing.assert_allclose(v / v.mean(), _anisotropic_variance_shape(p.shape[1]), rtol=1e-12)
        maha = np.sqrt(np.sum(diffs**2 / v, axis=1))
        assert maha.max() == pytest.approx(bounds.gaussian_mu_for_epsilon(eps, 1e-5), rel=1e-9)
    if name != "laplace":
        d_std = np.array([mech.separation(a, b) for a, b in pairs])
        np.testing.assert_allclose(e, bounds.gaussian_epsilon(d_std, 1e-5), rtol=1e-12)


@pytest.mark.parametrize("name", MECHS)
def test_exact_null(protos, name):
    p = protos["dispersed"]
    mech = M.calibrate(name, p, 0.0)
    assert mech.null and mech.requested_epsilon == 0.0 and mech.worst_pair is None
    np.testing.assert_array_equal(mech.prototypes, np.repeat(p[:1], len(p), axis=0))
    assert np.all(mech.exact_epsilons(_all_pairs(len(p))) == 0.0)
    assert mech.optimal_auc(0, 5, n_mc=500) == 0.5
    # unit variance per coordinate on average
    if name == "laplace":
        assert mech.scale == pytest.approx(1 / np.sqrt(2))
    elif name == "gaussian":
        assert mech.sigma == 1.0
    else:
        assert mech.variances.mean() == pytest.approx(1.0, rel=1e-12)
    # identical distributions: the same random stream gives the same output for any identity
    np.testing.assert_array_equal(mech.sample(0, 50, seed=stream("null", 4)), mech.sample(7, 50, seed=stream("null", 4)))
    # and different identities' samples are not told apart by the exact score (it is 0)
    assert np.all(mech.exact_score(0, 7)(mech.sample(3, 20, seed=1)) == 0.0)
    # non-null mechanisms are not flagged null
    assert not M.calibrate(name, p, 2.0).null


# ---------------------------------------------------------------------------------------------
# Sampling
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", MECHS)
def test_sample_moments_match_theory(protos, name):
    p = protos["face_like"]
    mech = M.calibrate(name, p, 8.0)
    n = 4000
    x = mech.sample(2, n, seed=11)
    assert x.shape == (n, 512) and x.dtype == np.float64
    if name == "laplace":
        var = np.full(512, 2 * mech.scale**2)
        kurt = 6.0  # excess kurtosis of the Laplace law
    elif name == "gaussian":
        var = np.full(512, mech.sigma**2)
        kurt = 0.0
    else:
        var = mech.variances
        kurt = 0.0
    # Means: every coordinate within 5 standard errors (512 coordinates, seeded).
    z_mean = (x.mean(axis=0) - p[2]) / np.sqrt(var / n)
    assert np.max(np.abs(z_mean)) < 5.0
    assert abs(z_mean.mean()) * np.sqrt(512) < 5.0  # average deviation is itself ~N(0, 1)
    # Variances: se of the sample variance is var * sqrt((2 + kurt) / n).
    s2 = x.var(axis=0, ddof=1)
    z_var = (s2 - var) / (var * np.sqrt((2 + kurt) / n))
    assert np.max(np.abs(z_var)) < 5.0
    assert abs(z_var.mean()) * np.sqrt(512) < 5.0


def test_laplace_noise_has_laplace_law():
    mech = M.ProductLaplace(np.zeros((2, 8)), scale=0.3)
    x = mech.sample(0, 3000, seed=5).ravel()
    assert stats.kstest(x, stats.laplace(scale=0.3).cdf).pvalue > 1e-3
    assert stats.kstest(x, stats.norm(scale=0.3 * np.sqrt(2)).cdf).pvalue < 1e-6


@pytest.mark.parametrize("name", MECHS)
def test_sample_groups_reproducible_and_independent(protos, name):
    mech = M.calibrate(name, protos["dispersed"], 2.0)
    g1 = mech.sample_groups(30, seed=42)
    g2 = mech.sample_groups(30, seed=42)
    g3 = mech.sample_groups(30, seed=43)
    assert list(g1) == list(range(12))
    for i in g1:
        assert g1[i].shape == (30, 512)
        np.testing.assert_array_equal(g1[i], g2[i])
        assert not np.allclose(g1[i], g3[i])
    # identities draw on separate streams: noise differs between identities
    assert not np.allclose(g1[0] - mech.prototypes[0], g1[1] - mech.prototypes[1])
    # a subset gets the same draws as the full set, in the requested order
    sub = mech.sample_groups(30, seed=42, identities=[5, 2])
    assert list(sub) == [5, 2]
    np.testing.assert_array_equal(sub[5], g1[5])
    # documented stream: stream("mechanism-draws", seed, i), the same draw as sample(i, n, seed)
    from epsaudit.protocol import stream

    np.testing.assert_array_equal(mech.sample(5, 30, seed=stream("mechanism-draws", 42, 5)), g1[5])
    np.testing.assert_array_equal(mech.sample(5, 30, seed=42), g1[5])
    # Generator seeds are accepted; sample is reproducible for an int seed
    gen = mech.sample_groups(10, seed=np.random.default_rng(0))
    assert len(gen) == 12
    np.testing.assert_array_equal(mech.sample(3, 10, seed=9), mech.sample(3, 10, seed=9))
    assert not np.allclose(mech.sample(3, 10, seed=9), mech.sample(3, 10, seed=10))


def test_sampling_is_fast():
    mech = M.calibrate("anisotropic_gaussian", M.prototype_set("dispersed"), 8.0)
    lap = M.calibrate("laplace", M.prototype_set("dispersed"), 8.0)
    t0 = time.perf_counter()
    mech.sample_groups(300, seed=0)
    lap.sample_groups(300, seed=0)
    assert time.perf_counter() - t0 < 1.0


# ---------------------------------------------------------------------------------------------
# Exact likelihood-ratio score and optimal AUC
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", MECHS)
def test_exact_score_equals_scipy_logpdf_difference(protos, name):
    p = protos["face_like"]
    mech = M.calibrate(name, p, 8.0)
    a, b = mech.worst_pair
    rng = np.random.default_rng(0)
    x = np.r_[mech.sample(a, 20, seed=1), mech.sample(b, 20, seed=2), p[a] + rng.normal(0, 3, (10, 512))]
    if name == "laplace":
        ref = stats.laplace.logpdf(x, loc=p[a], scale=mech.scale).sum(1) - stats.laplace.logpdf(
            x, loc=p[b], scale=mech.scale
        ).sum(1)
    else:
        sd = mech.sigma if name == "gaussian" else np.sqrt(mech.variances)
        ref = stats.norm.logpdf(x, loc=p[a], scale=sd).sum(1) - stats.norm.logpdf(x, loc=p[b], scale=sd).sum(1)
    got = mech.exact_score(a, b)(x)
    assert got.shape == (50,)
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-8)
    # antisymmetric in the pair
    np.testing.assert_allclose(mech.exact_score(b, a)(x), -got, rtol=1e-12, atol=1e-10)


def test_anisotropic_exact_score_is_along_whitening_direction(protos):
    mech = M.calibrate("anisotropic_gaussian", protos["dispersed"], 8.0)
    w = mech._whitening_direction(0, 1)
    np.testing.assert_allclose(w, (mech.prototypes[0] - mech.prototypes[1]) / mech.variances)
    score = mech.exact_score(0, 1)
    x = mech.sample(0, 10, seed=0)
    # moving orthogonally (in the standard inner product) to w leaves the score unchanged
    u = np.random.default_rng(1).standard_normal(512)
    u -= (u @ w) / (w @ w) * w
    np.testing.assert_allclose(score(x + u), score(x), atol=1e-8)


@pytest.mark.parametrize("name", ["gaussian", "anisotropic_gaussian"])
def test_gaussian_optimal_auc_closed_form(protos, name):
    p = protos["dispersed"]
    mech = M.calibrate(name, p, 8.0)
    var = np.full(512, mech.sigma**2) if name == "gaussian" else mech.variances
    for a, b in [(0, 1), (3, 7), mech.worst_pair]:
        d = np.sqrt(np.sum((p[a] - p[b]) ** 2 / var))
        assert mech.optimal_auc(a, b) == pytest.approx(stats.norm.cdf(d / np.sqrt(2)), abs=1e-14)
    # the closed form is the AUC of the exact score on a large sample (within 0.01)
    a, b = mech.worst_pair
    s = mech.exact_score(a, b)
    n = 20000
    emp = roc_auc_score(np.r_[np.ones(n), np.zeros(n)], np.r_[s(mech.sample(a, n, 1)), s(mech.sample(b, n, 2))])
    assert emp == pytest.approx(mech.optimal_auc(a, b), abs=0.01)
    assert mech.optimal_auc(a, a) == 0.5


def test_laplace_monte_carlo_auc_matches_brute_force():
    p = np.array([[0.0, 0.0, 0.0, 0.0], [0.6, -0.3, 0.2, 0.1], [2.0, 0.0, 0.0, 1.0]])
    mech = M.ProductLaplace(p, scale=0.5)
    a, b = 1, 0
    mc = mech.optimal_auc(a, b, n_mc=20000, seed=0)
    assert mc == mech.optimal_auc(a, b, n_mc=20000, seed=0)  # seeded
    # brute force: P(S(X_a) > S(X_b)) + P(tie) / 2 over 10^6 independent pairs, hand-coded score
    rng = np.random.default_rng(123)
    n = 1_000_000
    xa = p[a] + rng.laplace(0, 0.5, (n, 4))
    xb = p[b] + rng.laplace(0, 0.5, (n, 4))

    def lr(x):
        return (np.abs(x - p[b]).sum(1) - np.abs(x - p[a]).sum(1)) / 0.5

    sa, sb = lr(xa), lr(xb)
    brute = np.mean(sa > sb) + 0.5 * np.mean(sa == sb)
    assert 0.6 < brute < 0.9
    assert mc == pytest.approx(brute, abs=0.01)
    # far-apart pair: near-perfect separation, ties at the clipped ends still count half
    assert mech.optimal_auc(2, 0, n_mc=5000) > 0.95
    assert mech.optimal_auc(0, 0, n_mc=100) == 0.5


# ---------------------------------------------------------------------------------------------
# Float safety: grid outputs, cancellation-free scores, the textbook mechanism and its attack
# ---------------------------------------------------------------------------------------------


def test_output_grid_closed_form_and_errors():
    # floor(log2 1) = 0 -> 2**-20; floor(log2 0.75) = -1 -> 2**-21; floor(log2 5) = 2 -> 2**-18
    np.testing.assert_array_equal(_output_grid([1.0, 0.75, 5.0], [65.0, 65.0, 400.0]),
                                  [2.0**-20, 2.0**-21, 2.0**-18])
    # a large magnitude coarsens the grid to 2**22 ulps of it: ceil(log2 1e6) = 20 -> 2**(20 - 52 + 22)
    assert _output_grid([1e-3], [1e6])[0] == 2.0**-10
    with pytest.raises(ValueError, match="finite and > 0"):
        _output_grid([0.0], [1.0])
    with pytest.raises(ValueError, match="equal shape"):
        _output_grid([1.0, 2.0], [1.0])


@pytest.mark.parametrize("name", MECHS)
def test_outputs_are_the_unrounded_draws_rounded_to_the_grid(protos, name):
    mech = M.calibrate(name, protos["dispersed"], 8.0)
    scales = (np.full(512, mech.scale) if name == "laplace"
              else np.full(512, mech.sigma) if name == "gaussian" else np.sqrt(mech.variances))
    expected_grid = 2.0 ** (np.floor(np.log2(scales)) - M.GRID_BITS)
    np.testing.assert_array_equal(mech.grid, expected_grid)
    x = mech.sample(3, 200, seed=4)
    raw = mech.prototypes[3] + mech._noise(stream("mechanism-draws", 4, 3), 200)  # the same draws, unrounded
    np.testing.assert_array_equal(x, np.rint(raw / mech.grid) * mech.grid)
    assert np.all(np.abs(x - raw) <= mech.grid / 2)
    assert np.all(np.abs(x - raw) / scales <= 2.0**-21)  # ~5e-7 of the noise scale: numbers barely move
    assert not mech.repeated_outputs  # d = 512: two draws never coincide


def test_repeated_outputs_flags_low_dimensional_grid_and_one_hot_outputs():
    assert M.ProductLaplace(np.zeros((2, 1)), 1.0).repeated_outputs  # a cell has probability <= 2**-21
    assert M.ProductLaplace(np.zeros((2, 2)), 1.0).repeated_outputs  # (2**-22)**2 > 1e-15
    assert not M.ProductLaplace(np.zeros((2, 3)), 1.0).repeated_outputs
    assert M.IsotropicGaussian(np.zeros((2, 1)), 1.0).repeated_outputs
    assert not M.TextbookLaplace(np.zeros((2, 1)), 1.0).repeated_outputs
    assert M.RandomizedResponse(16, 2.0).repeated_outputs
    # 1-D grid outputs do repeat: 20000 draws of a cell probability ~2**-22 give collisions
    x = M.ProductLaplace(np.zeros((2, 1)), 1.0).sample(0, 20_000, seed=0).ravel()
    assert len(np.unique(x)) < len(x)


def test_laplace_exact_score_has_no_cancellation_on_the_tails():
    # means 0.3 and 0 are not exactly representable apart: the textbook |x| - |x - 0.3| takes
    # several values on the tails, the safe score exactly one (+-0.3 / b)
    p = np.array([[0.3], [0.0]])
    safe, textbook = M.ProductLaplace(p, 1.0), M.TextbookLaplace(p, 1.0)
    x = textbook.sample(0, 20_000, seed=1)
    tail = (x[:, 0] >= 0.3) | (x[:, 0] <= 0.0)
    naive = textbook.exact_score(0, 1)(x)
    clean = safe.exact_score(0, 1)(x)
    assert len(np.unique(np.abs(naive[tail]))) > 1
    assert set(np.unique(clean[tail])) == {-0.3, 0.3}
    np.testing.assert_allclose(clean, naive, atol=1e-15)  # the same function up to rounding
    # in between it is (2x - 0.3) / b; and antisymmetric
    mid = safe.exact_score(0, 1)(np.array([[0.1], [0.2]]))
    np.testing.assert_array_equal(mid, [2 * 0.1 - 0.3, 2 * 0.2 - 0.3])
    np.testing.assert_array_equal(safe.exact_score(1, 0)(x), -clean)


def test_gaussian_discretisation_slack_closed_form():
    p = np.array([[0.0, 0.0], [3.0, 4.0]])
    mech = M.IsotropicGaussian(p, sigma=5.0)  # grid 2**(floor(log2 5) - 20) = 2**-18
    np.testing.assert_array_equal(mech.grid, [2.0**-18, 2.0**-18])
    assert mech.discretisation_slack(0, 1) == pytest.approx((3 + 4) * 2.0**-18 / 25, rel=1e-15)
    aniso = M.AnisotropicGaussian(p, variances=[9.0, 16.0])  # sd 3 -> 2**-19, sd 4 -> 2**-18
    assert aniso.discretisation_slack(1, 0) == pytest.approx(3 * 2.0**-19 / 9 + 4 * 2.0**-18 / 16, rel=1e-15)
    assert M.ProductLaplace(p, 1.0).discretisation_slack(0, 1) == 0.0
    with pytest.raises(ValueError, match="not an identity"):
        mech.discretisation_slack(0, 2)


def test_textbook_laplace_is_mu_plus_numpy_noise_with_infinite_epsilon():
    p = np.array([[0.3], [0.0]])
    mech = M.TextbookLaplace(p, 1.0)
    assert mech.grid is None and mech.name == "textbook_laplace"
    np.testing.assert_array_equal(mech.sample(0, 100, seed=3),
                                  0.3 + stream("mechanism-draws", 3, 0).laplace(0.0, 1.0, (100, 1)))
    assert mech.nominal_epsilon(0, 1) == pytest.approx(0.3, abs=1e-16)
    assert mech.exact_epsilon(0, 1) == np.inf and mech.exact_epsilon(1, 1) == 0.0


def test_laplace_noise_replay_is_bit_exact():
    words = np.random.default_rng(5).integers(0, 2**64, 50_000, dtype=np.uint64)
    k = (words >> np.uint64(11)).astype(np.int64)
    assert np.all(k > 0)  # (numpy rejects U = 0; the probability is 2**-53)
    np.testing.assert_array_equal(_laplace_noise_at(k, 0.7), np.random.default_rng(5).laplace(0.0, 0.7, 50_000))
    with pytest.raises(ValueError, match=r"\[1, 2\*\*53\)"):
        _laplace_noise_at([0], 1.0)


def test_reachability_score_breaks_the_textbook_mechanism_not_the_grid_one():
    p = np.array([[0.3], [0.0]])
    n = 20_000
    textbook = M.TextbookLaplace(p, 1.0)
    score = M.reachability_score(textbook, 0, 1)
    sa, sb = score(textbook.sample(0, n, seed=1)), score(textbook.sample(1, n, seed=2))
    # an output of b is reachable from b by construction: never +1 (likewise a's never -1)
    assert np.sum(sb == 1.0) == 0 and np.sum(sa == -1.0) == 0
    # about 81% of a's outputs cannot come from b (binomial 5-sigma band around 0.813)
    assert abs(np.mean(sa == 1.0) - 0.813) < 5 * np.sqrt(0.813 * 0.187 / n)
    grid = M.ProductLaplace(p, 1.0)
    gscore = M.reachability_score(grid, 0, 1)
    assert np.all(gscore(grid.sample(0, n, seed=1)) == 0.0) and np.all(gscore(grid.sample(1, n, seed=2)) == 0.0)
    with pytest.raises(ValueError, match="ProductLaplace or TextbookLaplace"):
        M.reachability_score(M.IsotropicGaussian(p, 1.0), 0, 1)


def test_randomized_response_sampled_epsilon():
    assert M.RandomizedResponse(16, 2.0)._sampled_epsilon == pytest.approx(2.0, abs=1e-14)
    rr32 = M.RandomizedResponse(16, 32.0)
    keep = np.ceil(rr32.p_true * 2.0**53)
    assert rr32._sampled_epsilon == pytest.approx(np.log(keep * 15 / (2.0**53 - keep)), rel=1e-15)
    assert rr32._sampled_epsilon == pytest.approx(31.99943, abs=1e-5)
    assert M.RandomizedResponse(4, 0.0)._sampled_epsilon == 0.0


# ---------------------------------------------------------------------------------------------
# Benchmark protocol
# ---------------------------------------------------------------------------------------------


def test_benchmark_constants_and_pairs():
    assert M.BENCHMARK_EPSILONS == (0.0, 0.5, 2.0, 8.0, 16.0, 32.0)
    assert M.BENCHMARK_SAMPLE_SIZES == (30, 100, 300)
    assert M.N_AUDITED_PAIRS == 40
    pairs = M.benchmark_pairs(20, seed=0)
    assert len(pairs) == 40 and len(set(pairs)) == 40
    assert pairs == [tuple(q) for q in identity_pairs(range(20), 0)[:40]]
    assert pairs != M.benchmark_pairs(20, seed=1)
    assert len(M.benchmark_pairs(5, seed=0)) == 10  # fewer than 40 pairs exist


def test_reference_epsilon_is_median_over_pairs():
    p = M.prototype_set("face_like", 20, 512, seed=0)
    pairs = M.benchmark_pairs(20, seed=0)
    for name in MECHS:
        mech = M.calibrate(name, p, 8.0)
        e = mech.exact_epsilons(pairs)
        assert M.reference_epsilon(mech, pairs) == pytest.approx(np.median(e), rel=1e-15)
        # face-like: the median pair is far below the calibrated worst pair
        assert M.reference_epsilon(mech, pairs) < 8.0 / 3
        assert M.reference_epsilon(M.calibrate(name, p, 0.0), pairs) == 0.0
    assert M.reference_epsilon(M.ProductLaplace([[0.0], [1.0], [3.0]], 1.0), [(0, 1), (0, 2), (1, 2)]) == 2.0


# ---------------------------------------------------------------------------------------------
# Bad arguments
# ---------------------------------------------------------------------------------------------


def test_bad_arguments_raise_value_error():
    p = M.prototype_set("dispersed", 4, 8, seed=0)
    with pytest.raises(ValueError, match="unknown geometry 'cube'"):
        M.prototype_set("cube")
    with pytest.raises(ValueError, match="n_identities must be >= 2"):
        M.prototype_set("dispersed", n_identities=1)
    with pytest.raises(ValueError, match="dim must be >= 1"):
        M.prototype_set("dispersed", dim=0)
    with pytest.raises(ValueError, match="face_like geometry needs dim >= 2"):
        M.prototype_set("face_like", dim=1)
    with pytest.raises(ValueError, match="seed must be"):
        M.prototype_set("dispersed", seed=None)
    with pytest.raises(ValueError, match="radius_span must be a finite number >= 1"):
        M.prototype_set("face_like", radius_span=0.5)
    with pytest.raises(ValueError, match="unknown mechanism 'uniform'"):
        M.calibrate("uniform", p, 1.0)
    for bad in (-0.1, float("nan"), float("inf"), "1"):
        with pytest.raises(ValueError, match="epsilon must be a finite number >= 0"):
            M.calibrate("laplace", p, bad)
    with pytest.raises(ValueError, match="delta must be in"):
        M.calibrate("gaussian", p, 1.0, delta=0.0)
    with pytest.raises(ValueError, match="at least 2 identities"):
        M.calibrate("gaussian", p[:1], 1.0)
    with pytest.raises(ValueError, match="all prototypes coincide"):
        M.calibrate("gaussian", np.ones((3, 4)), 1.0)
    with pytest.raises(ValueError, match="scale must be a finite number > 0"):
        M.ProductLaplace(p, scale=0.0)
    with pytest.raises(ValueError, match="sigma must be a finite number > 0"):
        M.IsotropicGaussian(p, sigma=-1.0)
    with pytest.raises(ValueError, match="delta must be in"):
        M.IsotropicGaussian(p, sigma=1.0, delta=0.0)
    with pytest.raises(ValueError, match=r"variances must have shape \(8,\)"):
        M.AnisotropicGaussian(p, variances=np.ones(7))
    with pytest.raises(ValueError, match="variances must all be finite and > 0"):
        M.AnisotropicGaussian(p, variances=np.r_[np.ones(7), 0.0])
    with pytest.raises(ValueError, match="NaN or infinite"):
        M.IsotropicGaussian(np.full((2, 3), np.nan), 1.0)
    with pytest.raises(ValueError, match="two-dimensional"):
        M.IsotropicGaussian(np.ones(3), 1.0)
    mech = M.IsotropicGaussian(p, 1.0)
    with pytest.raises(ValueError, match="identity = 4 is not an identity"):
        mech.sample(4, 10)
    with pytest.raises(ValueError, match="n must be >= 1"):
        mech.sample(0, 0)
    with pytest.raises(ValueError, match="n must be an integer"):
        mech.sample(0, 2.5)
    with pytest.raises(ValueError, match="seed must be"):
        mech.sample(0, 5, seed=None)
    with pytest.raises(ValueError, match="repeated"):
        mech.sample_groups(5, identities=[1, 1])
    with pytest.raises(ValueError, match="b = -1 is not an identity"):
        mech.exact_epsilon(0, -1)
    with pytest.raises(ValueError, match="pairs is empty"):
        mech.exact_epsilons([])
    with pytest.raises(ValueError, match=r"x must have shape \(n, 8\)"):
        mech.exact_score(0, 1)(np.ones((3, 7)))
    with pytest.raises(ValueError, match="n_mc must be >= 1"):
        M.ProductLaplace(p, 1.0).optimal_auc(0, 1, n_mc=0)
    with pytest.raises(ValueError, match="mechanism must be a Mechanism"):
        M.reference_epsilon("gaussian", [(0, 1)])
