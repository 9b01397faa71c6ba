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
    """The one-SVD-per-fold path gives GridSearchCV(Ridge(), scoring="r2")'s mean fold scores."""
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import GridSearchCV, GroupKFold

    from epsaudit.operator import fit_affine_operator
    from epsaudit.operator import DEFAULT_ALPHAS

    rng = np.random.default_rng(0)
    n, dim = 600, 12
    d, t = rng.normal(size=(n, dim)), rng.normal(size=(n, dim))
    s = d @ rng.normal(size=(dim, dim)) * 0.3 + 0.5 * t + rng.normal(size=(n, dim))
    groups = rng.integers(0, 30, n)
    op = fit_affine_operator(d, t, s, groups)
    assert op.search.initial_grid == DEFAULT_ALPHAS and op.search.widened  # near-best penalties at 1e-3: widened
    search = GridSearchCV(Ridge(), {"alpha": list(op.search.grid)}, cv=GroupKFold(5), scoring="r2")
    search.fit(np.hstack([d, t]), s, groups=groups)
    np.testing.assert_allclose(list(op.cv_r2.values()), search.cv_results_["mean_test_score"], atol=1e-10)
    assert op.alpha == search.best_params_["alpha"]
    np.testing.assert_allclose(op.B, search.best_estimator_.coef_[:, dim:], atol=1e-10)


# -------------------------------------------------------------------------------------------------
# penalty search: edges, widening, folds


def noisy_triplets(n=300, dim=20, noise=1.0, seed=0, pool=40):
    """An affine swap with known A, B and heavy noise, so that ridge shrinkage pays: an interior
    cross-validated penalty. Donor and target identities are drawn from one pool, as in the corpus."""
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.normal(size=(dim, dim)))
    B = q @ np.diag(np.linspace(0.8, 0.1, dim)) @ q.T
    A = 0.3 * rng.normal(size=(dim, dim)) / np.sqrt(dim)
    c = rng.normal(size=dim)
    d, t = rng.normal(size=(n, dim)), rng.normal(size=(n, dim))
    s = d @ A.T + t @ B.T + c + noise * rng.normal(size=(n, dim))
    roles = np.c_[[f"I{i}" for i in rng.integers(0, pool, n)], [f"I{i}" for i in rng.integers(0, pool, n)]]
    return d, t, s, roles, A, B


def test_interior_penalty_is_found_and_flagged():
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import GridSearchCV

    d, t, s, roles, A, B = noisy_triplets()
    op = fit_affine_operator(d, t, s, roles)
    rec = op.search
    assert rec.chosen == pytest.approx(10**2.5) and op.alpha == rec.chosen
    assert (rec.edge, rec.determined, rec.widenings, rec.stopped) == ("interior", True, 0, "interior")
    assert rec.one_se_range == (100.0, pytest.approx(10**2.5)) and rec.one_se_edge == "interior"
    assert op.cv_r2[rec.chosen] == rec.best_score == max(rec.scores)
    assert op.cv.roles == "both" and op.cv.validated == 61
    # the same choice as GridSearchCV(Ridge) on the same folds, and the same scores
    search = GridSearchCV(Ridge(), {"alpha": list(rec.grid)}, cv=list(op.cv.splits), scoring="r2")
    search.fit(np.hstack([d, t]), s)
    assert search.best_params_["alpha"] == rec.chosen
    np.testing.assert_allclose(rec.scores, search.cv_results_["mean_test_score"], atol=1e-10)
    # shrinkage at the chosen penalty, not at the penalty -> 0 end: the fit is better than least squares
    ols = fit_affine_operator(d, t, s, roles, alphas=[1e-6], widen=0)
    assert np.abs(op.B - B).mean() < np.abs(ols.B - B).mean()
    assert ols.search.edge == "fixed" and not ols.search.determined


def test_widening_moves_an_edge_choice_inside_exactly():
    """Ridge is equivariant: inputs scaled by 100 want a penalty 100^2 = 1e4 times larger, beyond the
    initial grid's upper edge (1e4). The search widens upwards and lands exactly on 1e4 x the
    unscaled choice, flagged interior."""
    d, t, s, roles, _, _ = noisy_triplets()
    base = fit_affine_operator(d, t, s, roles)
    scaled = fit_affine_operator(100 * d, 100 * t, s, roles)
    rec = scaled.search
    assert rec.chosen == pytest.approx(1e4 * base.alpha, rel=1e-9) and rec.chosen > max(rec.initial_grid)
    assert (rec.edge, rec.widenings, rec.stopped) == ("interior", 2, "interior")
    assert rec.grid[-1] == pytest.approx(1e8)
    np.testing.assert_allclose(scaled.B * 100, base.B, atol=1e-8)  # the same fit in other units
    unwidened = fit_affine_operator(100 * d, 100 * t, s, roles, widen=0)
    assert (unwidened.alpha, unwidened.search.edge, unwidened.search.determined) == (1e4, "upper", False)
    assert unwidened.search.stopped == "not widened"


def test_noiseless_data_leave_the_penalty_not_determined():
    rng = np.random.default_rng(0)
    n, dim = 400, 8
    A, B, c = 0.3 * rng.normal(size=(dim, dim)), 0.5 * np.eye(dim), rng.normal(size=dim)
    d, t = rng.normal(size=(n, dim)), rng.normal(size=(n, dim))
    roles = np.c_[[f"I{i}" for i in rng.integers(0, 30, n)], [f"I{i}" for i in rng.integers(0, 30, n)]]
    # tiny input variance: even 1e-13 shrinks visibly, so the smallest penalty wins at every widening
    dd, tt = 1 + 1e-5 * d, 1 + 1e-5 * t
    rec = fit_affine_operator(dd, tt, dd @ A.T + tt @ B.T + c, roles).search
    assert (rec.edge, rec.determined, rec.widenings, rec.stopped) == ("lower", False, 5, "limit")
    assert rec.chosen == rec.grid[0] == pytest.approx(1e-13)
    assert np.all(np.diff(rec.scores) < 0)  # monotone: no optimum anywhere on the grid
    # ordinary input scale: the scores stop changing below ~1e-3 (ridge is least squares): "flat"
    rec = fit_affine_operator(d, t, d @ A.T + t @ B.T + c, roles).search
    assert (rec.edge, rec.determined, rec.stopped) == ("lower", False, "flat")
    assert rec.widenings == 1 and rec.chosen == pytest.approx(1e-5)
    assert "not determined" in rec.describe()


def test_both_role_folds_are_identity_disjoint_in_either_role():
    from sklearn.model_selection import KFold

    from epsaudit.operator import _cv_folds as cv_folds
    from epsaudit.protocol import sklearn_seed

    _, _, _, roles, _, _ = noisy_triplets(n=600, pool=50)
    cv = cv_folds(roles, roles="both", folds=5, seed=3)
    ids = np.unique(roles)
    fold_of = {}
    for k, (_, members) in enumerate(KFold(5, shuffle=True, random_state=sklearn_seed("operator-folds", 3)).split(ids)):
        fold_of.update({i: k for i in ids[members]})
    same_fold = np.array([fold_of[a] == fold_of[b] for a, b in roles])
    for k, (train, val) in enumerate(cv.splits):
        train_ids, val_ids = set(roles[train].ravel()), set(roles[val].ravel())
        assert not train_ids & val_ids  # no identity on both sides, as donor or as target
        assert all(fold_of[i] == k for i in val_ids) and all(fold_of[i] != k for i in train_ids)
        assert len(train) + len(val) + cv.table.loc[k, "excluded"] == 600
    val_all = np.concatenate([v for _, v in cv.splits])
    assert len(val_all) == len(set(val_all)) == same_fold.sum() == cv.validated  # each at most once
    assert (cv.table["shared_identities"] == 0).all()
    # grouping by target identity alone shares identities across the split (the earlier design)
    target = cv_folds(roles, roles="target", folds=5)
    assert target.validated == 600 and (target.table["shared_identities"] > 30).all()
    for train, val in target.splits:
        assert not set(roles[train, 1]) & set(roles[val, 1])
    with pytest.raises(ValueError, match="too few identities"):
        cv_folds(np.array([["a", "b"], ["b", "c"], ["c", "d"], ["d", "e"], ["e", "a"]]), folds=5)
    with pytest.raises(ValueError, match="roles"):
        cv_folds(roles, roles="donor")


def test_penalty_sensitivity_matches_the_fit_and_determination_rules():
    import pandas as pd

    from epsaudit.operator import penalty_determination, penalty_sensitivity

    d, t, s, roles, _, _ = noisy_triplets(n=400)
    test = (d[300:], t[300:], s[300:])
    d, t, s, roles = d[:300], t[:300], s[:300], roles[:300]
    op = fit_affine_operator(d, t, s, roles)
    sens = penalty_sensitivity(op, (d, t, s), test)
    assert list(sens["alpha"]) == list(op.search.grid) and sens["chosen"].sum() == 1
    row = sens[sens["chosen"]].iloc[0]
    summary = spectral_summary(op, test[1])
    for k in ("rho_B", "sigma_max_B", "b_u", "rho_A"):
        assert row[k] == pytest.approx(summary[k], rel=1e-9)
    assert row["r2"] == pytest.approx(prediction_quality(op.predict(test[0], test[1]), test[2])["r2"], rel=1e-9)
    np.testing.assert_allclose(sens["cv_r2"], op.search.scores)
    assert list(sens["within_one_se"]) == list(op.search.within_one_se())
    # the rules on a constructed table: rho moves 3%, sigma_max 100-fold, the one-SE set reaches the
    # lower edge where sigma_max still changes
    table = pd.DataFrame({"alpha": [1e-3, 1e-2, 1e-1, 1.0], "within_one_se": [True, True, True, False],
                          "chosen": [False, True, False, False], "rho_B": [0.97, 0.99, 1.0, 0.8],
                          "sigma_max_B": [100.0, 10.0, 1.0, 0.9], "b_u": [0.5, 0.5, 0.5, 0.4],
                          "rho_A": [0.5, 0.5, 0.5, 0.5], "r2": [0.5, 0.5, 0.5, 0.4],
                          "mean_cosine": [0.9, 0.9, 0.9, 0.9]})
    det = penalty_determination(table)
    assert det.loc["rho_B", "relative_range"] == pytest.approx(0.03 / 0.99)
    assert det.loc["rho_B", "determined"] and not det.loc["sigma_max_B", "determined"]
    assert (det.loc["sigma_max_B", "low"], det.loc["sigma_max_B", "high"]) == (1.0, 100.0)
    assert "straddles 1" in det.loc["rho_B", "note"] and "lower bound" in det.loc["sigma_max_B", "note"]
    assert "range complete" in det.loc["b_u", "note"]  # b_u no longer changes at the edge


def test_stationary_covariance_is_symmetric_and_checked():
    from epsaudit.operator import lyapunov_residual

    A, B, c = known_operator(seed=5)
    op = AffineOperator(A=A, B=B, c=c, residual_cov=0.01 * np.eye(8), alpha=0.0)
    _, cov = stationary_law(op, np.zeros(8), np.eye(8))
    assert np.array_equal(cov, cov.T)
    assert lyapunov_residual(B, cov, A @ A.T + op.residual_cov) < 1e-12
    assert lyapunov_residual(B, np.eye(8), A @ A.T + op.residual_cov) > 0.1
