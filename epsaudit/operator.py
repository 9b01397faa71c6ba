"""The affine stochastic operator of a face swapper in embedding space (*Toward Interpretable
Privacy Guarantees in Face-Swapping Anonymization*, Sections VI-VIII).

A swap of donor ``d`` onto target ``t`` is modelled in the raw (unnormalised) embedding space as

    s = A d + B t + c + e,       e ~ (0, S_e),

fitted by ridge regression with the penalty chosen by cross-validation over identity-disjoint
folds (:mod:`epsaudit.ridge`: the folds and the widening penalty search). ``B`` carries target
identity into the output: its spectral radius ``rho(B)`` sets the asymptotic per-pass rate at
which repeated swapping (a *cascade*, fresh donor each pass)

    s_k = A d_k + B s_{k-1} + c + e_k

dilutes the target, the mean Rayleigh gain ``b_u = mean(u^T B u)`` over unit target directions sets
the first pass, and the stationary law (mean ``(I - B)^-1 (A E[d] + c)``, covariance from the
discrete Lyapunov equation ``S = B S B^T + S_w``) sets the floor.

Which fitted quantities depend on the penalty is measured by :func:`penalty_sensitivity` and
summarised by :func:`penalty_determination`: a quantity is *determined by the data* if it moves by
at most :data:`DETERMINED_REL_TOL` (relative) over the penalties whose cross-validated R^2 is within
one standard error of the best (the one-standard-error rule: penalties the cross-validation cannot
tell apart).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd
from scipy import linalg
from sklearn.linear_model import Ridge
from sklearn.neighbors import KNeighborsRegressor

from .grids import GridSearchRecord
from .ridge import DEFAULT_ALPHAS, FLAT_TOL, MAX_WIDENINGS, WIDEN_DECADES, CVFolds, cv_folds, ridge_path, \
    ridge_penalty_search
from .seeds import generator
from .validation import as_sample, unit_rows

__all__ = ["DETERMINED_REL_TOL", "WEAK_DIRECTION_RATIO", "SENSITIVITY_QUANTITIES", "LYAPUNOV_RESIDUAL_TOL",
           "AffineOperator", "fit_affine_operator", "weak_directions", "penalty_sensitivity", "penalty_determination",
           "prediction_quality", "baseline_predictions", "spectral_summary", "rollout", "stationary_law",
           "lyapunov_residual"]

#: A fitted quantity is "determined" when its range over the one-standard-error penalties is at most
#: this fraction of its value at the chosen penalty.
DETERMINED_REL_TOL = 0.10
#: An input direction is "weak" when its variance is below this fraction of the largest input variance
#: (:func:`weak_directions`): ridge leaves B's action on it to the penalty.
WEAK_DIRECTION_RATIO = 1e-6
#: The quantities :func:`penalty_sensitivity` tracks, and the ones :func:`penalty_determination` judges.
SENSITIVITY_QUANTITIES = ("rho_B", "sigma_max_B", "b_u", "rho_A", "r2", "mean_cosine")
#: :func:`stationary_law` refuses a covariance whose Lyapunov residual (:func:`lyapunov_residual`)
#: exceeds this fraction of the forcing's largest entry.
LYAPUNOV_RESIDUAL_TOL = 0.05


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
        Mean cross-validated R^2 per penalty tried (the final, possibly widened, grid).
    n_train : int
    search : GridSearchRecord or None
        The penalty search: grid, scores, their fold standard errors, edge status and widenings
        (``None`` for an operator built by hand).
    cv : CVFolds or None
        The folds the penalty was chosen on.

    Examples
    --------
    >>> op = AffineOperator(A=0.5 * np.eye(2), B=0.25 * np.eye(2), c=np.ones(2), residual_cov=np.eye(2), alpha=0.0)
    >>> op.predict([[2.0, 0.0]], [[4.0, 4.0]])
    array([[3., 2.]])
    """

    A: np.ndarray
    B: np.ndarray
    c: np.ndarray
    residual_cov: np.ndarray
    alpha: float
    cv_r2: dict = field(default_factory=dict)
    n_train: int = 0
    search: GridSearchRecord | None = None
    cv: CVFolds | None = None

    def predict(self, donors, targets) -> np.ndarray:
        """Noiseless prediction ``A d + B t + c`` for rows of donors and targets (n, d), shape (n, d)."""
        return np.asarray(donors) @ self.A.T + np.asarray(targets) @ self.B.T + self.c


def _check_triplets(donors, targets, swaps):
    d = as_sample(donors, "donors", min_rows=2)
    t = as_sample(targets, "targets", min_rows=2)
    s = as_sample(swaps, "swaps", min_rows=2)
    if not (d.shape == t.shape == s.shape):
        raise ValueError(f"donors, targets and swaps must share one shape; got {d.shape}, {t.shape}, {s.shape}")
    return d, t, s


def fit_affine_operator(donors, targets, swaps, groups, *, alphas: Sequence[float] = DEFAULT_ALPHAS,
                        folds: int = 5, roles: str = "both", seed: Any = 0, widen: int = MAX_WIDENINGS,
                        widen_decades: float = WIDEN_DECADES, flat_tol: float = FLAT_TOL) -> AffineOperator:
    """Ridge fit of ``s = A d + B t + c`` with the penalty chosen by identity-disjoint cross-validation
    (*Toward Interpretable Privacy Guarantees in Face-Swapping Anonymization*, Section VI-A).

    Parameters
    ----------
    donors, targets, swaps : array_like, shape (n, d)
        Raw embeddings of each triplet's donor image, target image and swap output.
    groups : array_like, shape (n, 2) or (n,)
        Donor identity and target identity of each triplet (folds per ``roles``), or one identity
        key per triplet (``GroupKFold`` on it). See :func:`epsaudit.ridge.cv_folds`.
    alphas : sequence of float
        Initial ridge penalty grid (widened by :func:`epsaudit.ridge.ridge_penalty_search`).
    folds : int
        Number of folds (paper: 5).
    roles : ``"both"`` or ``"target"``
        Fold design for two-column ``groups`` (:func:`epsaudit.ridge.cv_folds`).
    seed : int or tuple
        Identity-to-fold assignment (``roles="both"``): a base seed or a stream key.
    widen, widen_decades, flat_tol
        Grid widening (:func:`epsaudit.ridge.ridge_penalty_search`; ``widen=0`` scores ``alphas`` only).

    Returns
    -------
    AffineOperator
        Fitted on all ``n`` triplets at the chosen penalty (``sklearn.linear_model.Ridge``,
        ``solver="svd"``: accurate at the tiny penalties a widened search can reach); ``search``
        records the penalty's edge status, ``cv`` the folds.

    Raises
    ------
    ValueError
        Mismatched shapes, NaN/inf, too few distinct identities for the folds
        (:func:`epsaudit.ridge.cv_folds`), or bad search settings.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> d, t = rng.normal(size=(300, 2)), rng.normal(size=(300, 2))
    >>> s = 0.3 * d + 0.6 * t + 1.0 + 0.01 * rng.normal(size=(300, 2))
    >>> op = fit_affine_operator(d, t, s, np.arange(300) % 30)
    >>> np.abs(np.round(op.B, 2)).tolist()
    [[0.6, 0.0], [0.0, 0.6]]
    """
    d, t, s = _check_triplets(donors, targets, swaps)
    groups = np.asarray(groups)
    if groups.shape[0] != d.shape[0]:
        raise ValueError(f"groups has {groups.shape[0]} entries for {d.shape[0]} triplets")
    cv = cv_folds(groups, roles=roles, folds=folds, seed=seed)
    x = np.hstack([d, t])
    record, _ = ridge_penalty_search(x, s, cv.splits, alphas, widen=widen, widen_decades=widen_decades,
                                     flat_tol=flat_tol)
    model = Ridge(alpha=record.chosen, solver="svd").fit(x, s)
    dim = d.shape[1]
    coef = model.coef_  # (dim, 2 dim)
    residuals = s - model.predict(x)
    return AffineOperator(
        A=coef[:, :dim].copy(), B=coef[:, dim:].copy(), c=np.asarray(model.intercept_, dtype=np.float64),
        residual_cov=np.cov(residuals, rowvar=False), alpha=float(record.chosen),
        cv_r2=dict(zip(record.grid, record.scores)), n_train=int(d.shape[0]), search=record, cv=cv,
    )


# -------------------------------------------------------------------------------------------------
# which numbers the penalty decides


def weak_directions(donors, targets, *, ratio: float = WEAK_DIRECTION_RATIO) -> int:
    """Number of directions of the centred inputs ``[d, t]`` (of ``2 dim``) whose variance is below
    ``ratio`` times the largest (singular values of the centred inputs, ``scipy.linalg.svdvals``).

    Ridge fixes the coefficients on such directions by the penalty rather than by the data, so the
    norm of ``B`` (``sigma_max(B)``) can be set by them while predictions, which see almost no
    variance there, barely change. Raw dlib embeddings have dozens; SFace's none.

    Parameters
    ----------
    donors, targets : array_like, shape (n, d)
    ratio : float
        Variance threshold relative to the largest input variance.

    Returns
    -------
    int
        In ``0 .. 2 d``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> d = rng.normal(size=(50, 2))
    >>> weak_directions(d, np.c_[rng.normal(size=50), 1e-9 * rng.normal(size=50)])
    1
    """
    d, t = as_sample(donors, "donors", min_rows=2), as_sample(targets, "targets", min_rows=2)
    x = np.hstack([d, t])
    var = linalg.svdvals(x - x.mean(axis=0)) ** 2
    return int(np.sum(var < ratio * var.max()))


def penalty_sensitivity(op: AffineOperator, train: tuple, test: tuple) -> pd.DataFrame:
    """The fitted quantities at every penalty of the operator's (widened) search grid.

    For each penalty the operator is refitted on ``train`` (:func:`epsaudit.ridge.ridge_path`: one
    SVD of the centred inputs, the computation of ``Ridge(solver="svd")``), its spectra are taken
    (:func:`spectral_summary` over the unit ``test`` targets) and its predictions scored on
    ``test`` (:func:`prediction_quality`).

    Parameters
    ----------
    op : AffineOperator
        From :func:`fit_affine_operator` (needs ``op.search``).
    train, test : tuple of (donors, targets, swaps) arrays, shapes (n, d) and (m, d)
        ``train`` must be the triplets ``op`` was fitted on.

    Returns
    -------
    pandas.DataFrame
        One row per penalty, increasing: ``alpha``, ``cv_r2``, ``cv_se``, ``within_one_se`` (the
        mean CV R^2 is within one standard error of the best), ``chosen``, and
        :data:`SENSITIVITY_QUANTITIES` (``r2`` and ``mean_cosine`` on ``test``).

    Raises
    ------
    ValueError
        ``op`` without a search record, or ``train`` of another size than ``op.n_train``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> d, t = rng.normal(size=(200, 2)), rng.normal(size=(200, 2))
    >>> s = 0.3 * d + 0.6 * t + rng.normal(size=(200, 2))
    >>> op = fit_affine_operator(d[:150], t[:150], s[:150], np.arange(150) % 15)
    >>> sens = penalty_sensitivity(op, (d[:150], t[:150], s[:150]), (d[150:], t[150:], s[150:]))
    >>> len(sens) == len(op.search.grid), int(sens["chosen"].sum())
    (True, 1)
    """
    if op.search is None or op.search.score_se is None:
        raise ValueError("the operator has no penalty search record (fit it with fit_affine_operator)")
    d, t, s = _check_triplets(*train)
    d_te, t_te, s_te = _check_triplets(*test)
    if len(d) != op.n_train:
        raise ValueError(f"train has {len(d)} triplets but the operator was fitted on {op.n_train}")
    path = ridge_path(np.hstack([d, t]), s)
    dim = d.shape[1]
    rec = op.search
    within = rec.within_one_se()
    rows = []
    for i, alpha in enumerate(rec.grid):
        w, c = path.weights(alpha)  # (2 dim, dim), (dim,)
        fit = AffineOperator(A=w[:dim].T, B=w[dim:].T, c=c, residual_cov=op.residual_cov, alpha=alpha)
        sp, q = spectral_summary(fit, t_te), prediction_quality(fit.predict(d_te, t_te), s_te)
        rows.append({"alpha": alpha, "cv_r2": rec.scores[i], "cv_se": rec.score_se[i],
                     "within_one_se": bool(within[i]), "chosen": alpha == rec.chosen,
                     **{k: sp[k] for k in ("rho_B", "sigma_max_B", "b_u", "rho_A")},
                     "r2": q["r2"], "mean_cosine": q["mean_cosine"]})
    return pd.DataFrame(rows)


def penalty_determination(sensitivity: pd.DataFrame, *, rel_tol: float = DETERMINED_REL_TOL) -> pd.DataFrame:
    """Which fitted quantities the data determine: their range over the one-standard-error penalties.

    Parameters
    ----------
    sensitivity : pandas.DataFrame
        :func:`penalty_sensitivity` (rows in increasing penalty).
    rel_tol : float
        A quantity is determined if ``(high - low) <= rel_tol * |value|``.

    Returns
    -------
    pandas.DataFrame
        Index :data:`SENSITIVITY_QUANTITIES`; ``value`` (at the chosen penalty), ``low``,
        ``high`` (over the one-SE penalties), ``relative_range`` (``(high - low) / |value|``),
        ``determined`` and ``note``: whether the one-SE penalties reach a grid edge and, if so,
        whether the quantity has stopped changing there (its two outermost values agree to 1e-6,
        relative: the range is complete) or not (penalties beyond the grid might move it further:
        the range is a lower bound); for ``rho_B``, whether the range straddles 1 (then whether
        the cascade forgets the target at all is not determined).

    Raises
    ------
    ValueError
        Not exactly one chosen penalty.

    Examples
    --------
    >>> sens = pd.DataFrame({"alpha": [0.1, 1.0, 10.0], "within_one_se": [False, True, True],
    ...                      "chosen": [False, True, False], "rho_B": [0.9, 0.8, 0.79], "sigma_max_B": [9.0, 3.0, 1.0],
    ...                      "b_u": 0.2, "rho_A": 0.5, "r2": 0.5, "mean_cosine": 0.9})
    >>> penalty_determination(sens)["determined"].to_dict()
    {'rho_B': True, 'sigma_max_B': False, 'b_u': True, 'rho_A': True, 'r2': True, 'mean_cosine': True}
    """
    chosen = sensitivity[sensitivity["chosen"]]
    if len(chosen) != 1:
        raise ValueError(f"sensitivity must mark exactly one chosen penalty, found {len(chosen)}")
    frame = sensitivity.sort_values("alpha").reset_index(drop=True)
    near = frame[frame["within_one_se"]]
    edges = [side for side, row in (("lower", 0), ("upper", len(frame) - 1))
             if len(frame) > 1 and bool(frame["within_one_se"].iloc[row])]
    rows = {}
    for q in SENSITIVITY_QUANTITIES:
        value, low, high = float(chosen[q].iloc[0]), float(near[q].min()), float(near[q].max())
        rel = (high - low) / abs(value) if value != 0 else float("inf") if high > low else 0.0
        notes = []
        for side in edges:
            pair = frame[q].iloc[[0, 1]] if side == "lower" else frame[q].iloc[[-1, -2]]
            settled = abs(pair.iloc[0] - pair.iloc[1]) <= 1e-6 * max(abs(pair.iloc[0]), 1e-300)
            notes.append(f"one-SE penalties reach the {side} grid edge, " + (
                "where it has stopped changing (range complete)" if settled else
                "where it still changes (range is a lower bound)"))
        if q == "rho_B" and low < 1.0 <= high:
            notes.append("straddles 1: whether the cascade forgets the target is not determined")
        rows[q] = {"value": value, "low": low, "high": high, "relative_range": rel,
                   "determined": bool(rel <= rel_tol), "note": "; ".join(notes)}
    return pd.DataFrame(rows).T.astype({"value": float, "low": float, "high": float, "relative_range": float,
                                        "determined": bool}).rename_axis("quantity")


def _row_cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine of each row of ``a`` with the same row of ``b`` (n,)."""
    return np.einsum("ij,ij->i", a, b) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def prediction_quality(predicted, swaps) -> dict[str, float]:
    """Mean cosine(predicted, actual), R^2 (variance explained, pooled over coordinates) and the
    residual fraction ``||s - s_hat||^2 / ||s - mean(s)||^2`` of held-out swaps (the quality
    measures of the paper's Table II).

    Parameters
    ----------
    predicted, swaps : array_like, shape (n, d)

    Returns
    -------
    dict
        ``mean_cosine``, ``r2`` and ``residual_fraction`` (``r2 = 1 - residual_fraction``).

    Examples
    --------
    >>> prediction_quality([[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]])
    {'mean_cosine': 1.0, 'r2': 1.0, 'residual_fraction': 0.0}
    """
    p, s = np.asarray(predicted, dtype=np.float64), np.asarray(swaps, dtype=np.float64)
    residual = np.sum((s - p) ** 2)
    total = np.sum((s - s.mean(axis=0)) ** 2)
    return {"mean_cosine": float(np.mean(_row_cosine(p, s))), "r2": float(1 - residual / total),
            "residual_fraction": float(residual / total)}


def baseline_predictions(train: tuple, test: tuple, *, k: int = 10) -> dict[str, np.ndarray]:
    """Held-out predictions of the simple baselines: copy the donor; kNN regression on (d, t).

    Parameters
    ----------
    train, test : tuple of (donors, targets, swaps) arrays, shapes (n, d) and (m, d)
    k : int
        Neighbours of the kNN baseline (``sklearn.neighbors.KNeighborsRegressor``).

    Returns
    -------
    dict
        ``copy_donor`` and ``knn``, each of shape (m, d).

    Raises
    ------
    ValueError
        Mismatched shapes or NaN/inf.

    Examples
    --------
    >>> x = np.arange(12.0).reshape(6, 2)
    >>> base = baseline_predictions((x, x, x), (x[:2], x[:2], x[:2]), k=1)
    >>> base["knn"].tolist()
    [[0.0, 1.0], [2.0, 3.0]]
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

    Returns
    -------
    dict
        ``rho_B``, ``sigma_max_B``, ``b_u``, ``rho_A`` (paper, Section VII and Table II).

    Examples
    --------
    >>> op = AffineOperator(A=0.5 * np.eye(2), B=np.diag([0.9, 0.1]), c=np.zeros(2), residual_cov=np.eye(2), alpha=0.0)
    >>> {k: round(v, 3) for k, v in spectral_summary(op, [[1.0, 0.0], [0.0, 2.0]]).items()}
    {'rho_B': 0.9, 'sigma_max_B': 0.9, 'b_u': 0.5, 'rho_A': 0.5}
    """
    u = unit_rows(as_sample(unit_targets, "unit_targets", min_rows=1))
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
    seed : int, tuple or Generator
        Of the noise (stream key ``("rollout", seed)`` for an int; a Generator is used as it is).

    Returns
    -------
    ndarray, shape (K + 1, m, d)

    Raises
    ------
    ValueError
        ``donors_per_pass`` of a shape that does not match ``start``.

    Examples
    --------
    >>> op = AffineOperator(A=np.eye(1), B=0.5 * np.eye(1), c=np.zeros(1), residual_cov=np.eye(1), alpha=0.0)
    >>> rollout(op, [[8.0]], np.zeros((3, 1)))[:, 0, 0].tolist()
    [8.0, 4.0, 2.0, 1.0]
    """
    s = as_sample(start, "start", min_rows=1)
    donors = np.asarray(donors_per_pass, dtype=np.float64)
    if donors.ndim == 2:
        donors = np.broadcast_to(donors[:, None, :], (donors.shape[0], s.shape[0], s.shape[1]))
    if donors.ndim != 3 or donors.shape[1:] != s.shape:
        raise ValueError(f"donors_per_pass must be (K, m, d) or (K, d) matching start {s.shape}; got {donors.shape}")
    rng = generator(seed, "rollout")
    out = [s]
    for k in range(donors.shape[0]):
        nxt = donors[k] @ op.A.T + out[-1] @ op.B.T + op.c
        if noise:
            nxt = nxt + rng.multivariate_normal(np.zeros(len(op.c)), op.residual_cov, size=s.shape[0], method="eigh")
        out.append(nxt)
    return np.stack(out)


def stationary_law(op: AffineOperator, donor_mean, donor_cov) -> tuple[np.ndarray, np.ndarray]:
    """Stationary mean ``(I - B)^-1 (A E[d] + c)`` and covariance ``S = B S B^T + A S_d A^T + S_e``.

    The covariance solves the discrete Lyapunov equation (``scipy.linalg.solve_discrete_lyapunov``)
    and is returned symmetrised, ``(S + S^T) / 2``: the exact solution is symmetric, but with the
    large, non-normal ``B`` of a barely penalised fit the solver's rounding is not (asymmetry up to
    ~1e-2 of the largest entry, which ``Generator.multivariate_normal`` warns about). Its accuracy
    is checked by :func:`lyapunov_residual`.

    Returns
    -------
    mean : ndarray, shape (d,)
    cov : ndarray, shape (d, d), symmetric

    Raises
    ------
    ValueError
        If ``rho(B) >= 1`` (no stationary law: the cascade does not forget the target), or if the
        symmetrised solution's :func:`lyapunov_residual` exceeds :data:`LYAPUNOV_RESIDUAL_TOL`
        (the solve is numerically unreliable).

    Examples
    --------
    >>> op = AffineOperator(A=np.eye(1), B=0.5 * np.eye(1), c=np.ones(1), residual_cov=np.eye(1), alpha=0.0)
    >>> mean, cov = stationary_law(op, [1.0], [[1.0]])
    >>> float(mean[0]), round(float(cov[0, 0]), 6)
    (4.0, 2.666667)
    """
    rho = float(np.max(np.abs(linalg.eigvals(op.B))))
    if rho >= 1.0:
        raise ValueError(f"rho(B) = {rho:.3f} >= 1: the cascade has no stationary law")
    dim = len(op.c)
    mean = np.linalg.solve(np.eye(dim) - op.B, op.A @ np.asarray(donor_mean) + op.c)
    forcing = op.A @ np.asarray(donor_cov) @ op.A.T + op.residual_cov
    cov = linalg.solve_discrete_lyapunov(op.B, forcing)
    cov = (cov + cov.T) / 2
    residual = lyapunov_residual(op.B, cov, forcing)
    if residual > LYAPUNOV_RESIDUAL_TOL:
        raise ValueError(f"the stationary covariance solves S = B S B^T + F only to {residual:.2%} of F's largest "
                         f"entry (tolerance {LYAPUNOV_RESIDUAL_TOL:.0%}): B is too ill-conditioned for a reliable "
                         "stationary law")
    return mean, cov


def lyapunov_residual(B, cov, forcing) -> float:
    """Relative residual ``max|S - B S B^T - F| / max|F|`` of a discrete Lyapunov solution.

    Near 1e-15 for a well-conditioned ``B``; with the large, non-normal ``B`` of a barely
    penalised fit (``sigma_max(B)`` ~ 1e5) it reaches ~1e-3.

    Parameters
    ----------
    B, cov, forcing : array_like, shape (d, d)

    Returns
    -------
    float

    Examples
    --------
    >>> lyapunov_residual(0.5 * np.eye(1), [[4 / 3]], [[1.0]]) < 1e-12
    True
    """
    B, cov, forcing = (np.asarray(a, dtype=np.float64) for a in (B, cov, forcing))
    return float(np.abs(cov - B @ cov @ B.T - forcing).max() / np.abs(forcing).max())
