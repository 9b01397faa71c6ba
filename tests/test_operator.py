"""The affine operator: recovery of known matrices, spectra, rollouts and the Lyapunov floor."""

import numpy as np
import pytest

from epsaudit.operator import (
    AffineOperator,
    baseline_predictions,
    fit_affine_operator,
    prediction_quality,
    rollout,
    spectral_summary,
    stationary_law,
)


def known_operator(dim=8, seed=0):
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.normal(size=(dim, dim)))
    B = q @ np.diag(np.linspace(0.9, 0.1, dim)) @ q.T  # symmetric, rho(B) = 0.9
    A = 0.5 * rng.normal(size=(dim, dim)) / np.sqrt(dim)
    c = rng.normal(size=dim)
    return A, B, c


def triplets(A, B, c, n, noise, seed):
    rng = np.random.default_rng(seed)
    dim = len(c)
    d, t = rng.normal(size=(n, dim)), rng.normal(size=(n, dim))
    return d, t, d @ A.T + t @ B.T + c + noise * rng.normal(size=(n, dim))


def test_fit_recovers_known_matrices():
    A, B, c = known_operator()
    d, t, s = triplets(A, B, c, 4000, 0.05, seed=1)
    op = fit_affine_operator(d, t, s, groups=np.arange(4000) % 200)
    assert np.abs(op.A - A).max() < 0.01 and np.abs(op.B - B).max() < 0.01
    assert np.abs(op.c - c).max() < 0.01
    assert op.alpha <= 1.0  # little noise: little shrinkage chosen
    assert np.allclose(np.diag(op.residual_cov), 0.05**2, rtol=0.1)
    summary = spectral_summary(op, t)
    assert summary["rho_B"] == pytest.approx(0.9, abs=0.01)
    assert summary["sigma_max_B"] == pytest.approx(0.9, abs=0.01)
    assert summary["b_u"] == pytest.approx(np.mean(np.einsum("ij,jk,ik->i", t / np.linalg.norm(t, axis=1, keepdims=True), B,
                                                             t / np.linalg.norm(t, axis=1, keepdims=True))), abs=0.01)


def test_quality_and_baselines():
    A, B, c = known_operator(seed=2)
    train, test = triplets(A, B, c, 2000, 0.3, 3), triplets(A, B, c, 500, 0.3, 4)
    op = fit_affine_operator(*train, groups=np.arange(2000) % 50)
    model = prediction_quality(op.predict(test[0], test[1]), test[2])
    base = {k: prediction_quality(v, test[2]) for k, v in baseline_predictions(train, test).items()}
    assert model["r2"] > base["knn"]["r2"] > base["copy_donor"]["r2"]
    assert model["r2"] == pytest.approx(1 - model["residual_fraction"])


def test_rollout_and_lyapunov_floor():
    A, B, c = known_operator(seed=5)
    op = AffineOperator(A=A, B=B, c=c, residual_cov=0.01 * np.eye(8), alpha=0.0)
    donor_mean, donor_cov = np.zeros(8), np.eye(8)
    mean, cov = stationary_law(op, donor_mean, donor_cov)
    assert np.allclose(cov, B @ cov @ B.T + A @ donor_cov @ A.T + op.residual_cov)  # the equation
    assert np.allclose(mean, B @ mean + A @ donor_mean + c)
    start = np.random.default_rng(0).normal(size=(3, 8))
    path = rollout(op, start, np.zeros((200, 8)))
    assert path.shape == (201, 3, 8)
    assert np.allclose(path[-1], mean, atol=1e-6)  # noiseless rollout converges to the stationary mean
    # excess over the stationary mean contracts at rate rho(B) asymptotically
    gaps = np.linalg.norm(path[:, 0] - mean, axis=1)
    assert gaps[41] / gaps[40] == pytest.approx(0.9, abs=0.01)
    noisy = rollout(op, np.repeat(start[:1], 4000, axis=0), np.random.default_rng(1).normal(size=(80, 4000, 8)),
                    noise=True, seed=2)
    assert np.allclose(np.cov(noisy[-1], rowvar=False), cov, atol=0.15 * np.abs(cov).max())


def test_operator_errors():
    A, B, c = known_operator()
    d, t, s = triplets(A, B, c, 50, 0.1, 0)
    with pytest.raises(ValueError, match="share one shape"):
        fit_affine_operator(d, t[:, :4], s, groups=np.arange(50))
    with pytest.raises(ValueError, match="distinct identities"):
        fit_affine_operator(d, t, s, groups=np.zeros(50))
    with pytest.raises(ValueError, match="no stationary law"):
        stationary_law(AffineOperator(A=A, B=1.1 * np.eye(8), c=c, residual_cov=np.eye(8), alpha=0.0), np.zeros(8), np.eye(8))


def test_ridge_cv_scores_equal_gridsearchcv():
    """The eigendecomposition path gives GridSearchCV(Ridge(), scoring="r2")'s mean fold scores."""
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import GridSearchCV, GroupKFold

    from epsaudit.operator import DEFAULT_ALPHAS, fit_affine_operator

    rng = np.random.default_rng(0)
    n, dim = 600, 12
    d, t = rng.normal(size=(n, dim)), rng.normal(size=(n, dim))
    s = d @ rng.normal(size=(dim, dim)) * 0.3 + 0.5 * t + rng.normal(size=(n, dim))
    groups = rng.integers(0, 30, n)
    op = fit_affine_operator(d, t, s, groups)
    search = GridSearchCV(Ridge(), {"alpha": list(DEFAULT_ALPHAS)}, cv=GroupKFold(5), scoring="r2")
    search.fit(np.hstack([d, t]), s, groups=groups)
    np.testing.assert_allclose(list(op.cv_r2.values()), search.cv_results_["mean_test_score"], atol=1e-10)
    assert op.alpha == search.best_params_["alpha"]
    np.testing.assert_allclose(op.B, search.best_estimator_.coef_[:, dim:], atol=1e-10)
