"""The affine stochastic operator of a face swapper in embedding space (paper 002, Sections VI-VIII;
SPEC section 6).

A swap of donor ``d`` onto target ``t`` is modelled in the raw (unnormalised) embedding space as

    s = A d + B t + c + e,       e ~ (0, S_e),

fitted by ridge regression with the penalty chosen by cross-validation over identity-disjoint
folds. ``B`` carries target identity into the output: its spectral radius ``rho(B)`` sets the
asymptotic per-pass rate at which repeated swapping (a *cascade*, fresh donor each pass)

    s_k = A d_k + B s_{k-1} + c + e_k

dilutes the target, the mean Rayleigh gain ``b_u = mean(u^T B u)`` over unit target directions sets
the first pass, and the stationary law (mean ``(I - B)^-1 (A E[d] + c)``, covariance from the
discrete Lyapunov equation ``S = B S B^T + S_w``) sets the floor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from scipy import linalg
from sklearn.linear_model import Ridge
from sklearn.metrics import r2_score
from sklearn.model_selection import GroupKFold
from sklearn.neighbors import KNeighborsRegressor

from .validation import as_sample

DEFAULT_ALPHAS = tuple(np.logspace(-3, 4, 15))


@dataclass(frozen=True)
class AffineOperator:
    """A fitted ``s = A d + B t + c + e``.

    Attributes
    ----------
    A, B : ndarray, shape (d, d)
        Donor and target transfer matrices.
    c : ndarray, shape (d,)
        Offset.
    residual_cov : ndarray, shape (d, d)
        Covariance ``S_e`` of the training residuals.
    alpha : float
        Ridge penalty chosen by identity-disjoint cross-validation.
    cv_r2 : dict
        Mean cross-validated R^2 per penalty tried.
    n_train : int
    """

    A: np.ndarray
    B: np.ndarray
    c: np.ndarray
    residual_cov: np.ndarray
    alpha: float
    cv_r2: dict = field(default_factory=dict)
    n_train: int = 0

    def predict(self, donors, targets) -> np.ndarray:
        """Noiseless prediction ``A d + B t + c`` for rows of donors and targets, shape (n, d)."""
        return np.asarray(donors) @ self.A.T + np.asarray(targets) @ self.B.T + self.c


def _check_triplets(donors, targets, swaps):
    d = as_sample(donors, "donors", min_rows=2)
    t = as_sample(targets, "targets", min_rows=2)
    s = as_sample(swaps, "swaps", min_rows=2)
    if not (d.shape == t.shape == s.shape):
        raise ValueError(f"donors, targets and swaps must share one shape; got {d.shape}, {t.shape}, {s.shape}")
    return d, t, s


def _ridge_cv_r2(x: np.ndarray, s: np.ndarray, groups: np.ndarray, alphas: Sequence[float], folds: int) -> np.ndarray:
    """Mean held-out R^2 (``sklearn.metrics.r2_score``, uniform average over outputs) of ridge with
    intercept for every penalty, over ``GroupKFold`` folds: the numbers ``GridSearchCV(Ridge(),
    scoring="r2")`` computes, from one eigendecomposition of the centred Gram matrix per fold
    instead of one Cholesky solve per penalty and fold."""
    scores = np.zeros(len(alphas))
    for train, test in GroupKFold(n_splits=folds).split(x, s, groups):
        xm, sm = x[train].mean(axis=0), s[train].mean(axis=0)
        xc = x[train] - xm
        evals, evecs = np.linalg.eigh(xc.T @ xc)
        rhs = evecs.T @ (xc.T @ (s[train] - sm))  # (p, k) in the eigenbasis
        x_test = (x[test] - xm) @ evecs
        for i, alpha in enumerate(alphas):
            scores[i] += r2_score(s[test], x_test @ (rhs / (evals + alpha)[:, None]) + sm)
    return scores / folds


def fit_affine_operator(donors, targets, swaps, groups, *, alphas: Sequence[float] = DEFAULT_ALPHAS,
                        folds: int = 5) -> AffineOperator:
    """Ridge fit of ``s = A d + B t + c`` with identity-disjoint cross-validation of the penalty.

    Parameters
    ----------
    donors, targets, swaps : array_like, shape (n, d)
        Raw embeddings of each triplet's donor image, target image and swap output.
    groups : array_like, shape (n,)
        Identity key of each triplet for ``GroupKFold`` (e.g. the target identity, or a
        donor-target identity pair key): no identity is in two folds.
    alphas : sequence of float
        Ridge penalties tried.
    folds : int
        Number of identity-disjoint folds (paper: 5).

    Returns
    -------
    AffineOperator

    Raises
    ------
    ValueError
        Mismatched shapes, NaN/inf, or fewer distinct groups than folds.
    """
    d, t, s = _check_triplets(donors, targets, swaps)
    groups = np.asarray(groups)
    if groups.shape[0] != d.shape[0]:
        raise ValueError(f"groups has {groups.shape[0]} entries for {d.shape[0]} triplets")
    if len(np.unique(groups)) < folds:
        raise ValueError(f"need at least {folds} distinct identities for {folds}-fold identity-disjoint CV")
    x = np.hstack([d, t])
    alphas = [float(a) for a in alphas]
    cv_r2 = _ridge_cv_r2(x, s, groups, alphas, folds)
    best = alphas[int(np.argmax(cv_r2))]  # first of equal scores, as GridSearchCV
    model = Ridge(alpha=best).fit(x, s)
    dim = d.shape[1]
    coef = model.coef_  # (dim, 2 dim)
    residuals = s - model.predict(x)
    return AffineOperator(
        A=coef[:, :dim].copy(), B=coef[:, dim:].copy(), c=np.asarray(model.intercept_, dtype=np.float64),
        residual_cov=np.cov(residuals, rowvar=False), alpha=float(model.alpha),
        cv_r2={a: float(r) for a, r in zip(alphas, cv_r2)},
        n_train=int(d.shape[0]),
    )


def _row_cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", a, b) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def prediction_quality(predicted, swaps) -> dict[str, float]:
    """Mean cosine(predicted, actual), R^2 (variance explained, pooled over coordinates) and the
    residual fraction ``||s - s_hat||^2 / ||s - mean(s)||^2`` of held-out swaps."""
    p, s = np.asarray(predicted, dtype=np.float64), np.asarray(swaps, dtype=np.float64)
    residual = np.sum((s - p) ** 2)
    total = np.sum((s - s.mean(axis=0)) ** 2)
    return {"mean_cosine": float(np.mean(_row_cosine(p, s))), "r2": float(1 - residual / total),
            "residual_fraction": float(residual / total)}


def baseline_predictions(train: tuple, test: tuple, *, k: int = 10) -> dict[str, np.ndarray]:
    """Held-out predictions of the simple baselines: copy the donor; kNN regression on (d, t).

    Parameters
    ----------
    train, test : tuple of (donors, targets, swaps) arrays
    k : int
        Neighbours of the kNN baseline.
    """
    d_tr, t_tr, s_tr = _check_triplets(*train)
    d_te, t_te, _ = _check_triplets(*test)
    knn = KNeighborsRegressor(n_neighbors=k).fit(np.hstack([d_tr, t_tr]), s_tr)
    return {"copy_donor": d_te.copy(), "knn": knn.predict(np.hstack([d_te, t_te]))}


def spectral_summary(op: AffineOperator, unit_targets) -> dict[str, float]:
    """``rho(B)``, ``sigma_max(B)``, ``b_u`` (mean ``u^T B u`` over unit-normalised targets) and ``rho(A)``.

    Parameters
    ----------
    op : AffineOperator
    unit_targets : array_like, shape (m, d)
        Held-out target embeddings; normalised to unit length here.
    """
    u = as_sample(unit_targets, "unit_targets", min_rows=1)
    u = u / np.linalg.norm(u, axis=1, keepdims=True)
    return {
        "rho_B": float(np.max(np.abs(linalg.eigvals(op.B)))),
        "sigma_max_B": float(linalg.norm(op.B, 2)),
        "b_u": float(np.mean(np.einsum("ij,jk,ik->i", u, op.B, u))),
        "rho_A": float(np.max(np.abs(linalg.eigvals(op.A)))),
    }


def rollout(op: AffineOperator, start, donors_per_pass, *, noise: bool = False, seed: Any = 0) -> np.ndarray:
    """Cascade ``s_k = A d_k + B s_{k-1} + c (+ e_k)`` from ``s_0 = start``.

    Parameters
    ----------
    op : AffineOperator
    start : array_like, shape (m, d)
        Pass-0 embeddings (the original targets).
    donors_per_pass : array_like, shape (K, m, d) or (K, d)
        Donor embedding of each pass (per chain, or shared, e.g. the donor mean for the noiseless
        expectation).
    noise : bool
        Add ``e_k ~ N(0, residual_cov)`` (Monte Carlo rollout).
    seed : int or Generator

    Returns
    -------
    ndarray, shape (K + 1, m, d)
    """
    s = as_sample(start, "start", min_rows=1)
    donors = np.asarray(donors_per_pass, dtype=np.float64)
    if donors.ndim == 2:
        donors = np.broadcast_to(donors[:, None, :], (donors.shape[0], s.shape[0], s.shape[1]))
    if donors.ndim != 3 or donors.shape[1:] != s.shape:
        raise ValueError(f"donors_per_pass must be (K, m, d) or (K, d) matching start {s.shape}; got {donors.shape}")
    rng = np.random.default_rng(seed)
    out = [s]
    for k in range(donors.shape[0]):
        nxt = donors[k] @ op.A.T + out[-1] @ op.B.T + op.c
        if noise:
            nxt = nxt + rng.multivariate_normal(np.zeros(len(op.c)), op.residual_cov, size=s.shape[0], method="eigh")
        out.append(nxt)
    return np.stack(out)


def stationary_law(op: AffineOperator, donor_mean, donor_cov) -> tuple[np.ndarray, np.ndarray]:
    """Stationary mean ``(I - B)^-1 (A E[d] + c)`` and covariance ``S = B S B^T + A S_d A^T + S_e``.

    The covariance solves the discrete Lyapunov equation (``scipy.linalg.solve_discrete_lyapunov``).

    Raises
    ------
    ValueError
        If ``rho(B) >= 1`` (no stationary law: the cascade does not forget the target).
    """
    rho = float(np.max(np.abs(linalg.eigvals(op.B))))
    if rho >= 1.0:
        raise ValueError(f"rho(B) = {rho:.3f} >= 1: the cascade has no stationary law")
    dim = len(op.c)
    mean = np.linalg.solve(np.eye(dim) - op.B, op.A @ np.asarray(donor_mean) + op.c)
    forcing = op.A @ np.asarray(donor_cov) @ op.A.T + op.residual_cov
    cov = linalg.solve_discrete_lyapunov(op.B, forcing)
    return mean, cov
