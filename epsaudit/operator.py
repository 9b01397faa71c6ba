"""The affine stochastic operator of a face swapper in embedding space (*Toward Interpretable
Privacy Guarantees in Face-Swapping Anonymization*, Sections VI-VIII).

A swap of donor ``d`` onto target ``t`` is modelled in the raw (unnormalised) embedding space as

    s = A d + B t + c + e,       e ~ (0, S_e),

fitted by ridge regression with the penalty chosen by cross-validation over identity-disjoint
folds. ``B`` carries target identity into the output: its spectral radius ``rho(B)`` sets the
asymptotic per-pass rate at which repeated swapping (a *cascade*, fresh donor each pass)

    s_k = A d_k + B s_{k-1} + c + e_k

dilutes the target, the mean Rayleigh gain ``b_u = mean(u^T B u)`` over unit target directions sets
the first pass, and the stationary law (mean ``(I - B)^-1 (A E[d] + c)``, covariance from the
discrete Lyapunov equation ``S = B S B^T + S_w``) sets the floor.

Folds (:func:`cv_folds`). Every triplet has two identities, its donor's and its target's. Folds
that group by the target identity alone (``roles="target"``, ``GroupKFold``) keep validation
*targets* out of training but not validation *donors*, and an identity that is a target in
validation may be a donor in training. ``roles="both"`` (the default of :func:`fit_affine_operator`
given both identities) assigns every identity to one of ``K`` folds (seeded ``KFold`` over the
identities); fold ``k`` validates on the triplets whose donor *and* target identity are in fold
``k`` and trains on those whose donor and target identity are both outside it, so no identity is on
both sides in either role. Triplets with one identity inside fold ``k`` and one outside are
excluded from fold ``k`` (counted in :attr:`CVFolds.table`); each triplet is validated at most once
and about ``1/K`` of them are validated at all. This is the fold-level analogue of the paper's
train/test rule (Section VI-A: a triplet is kept only if both its identities fall in one partition).

Penalty search (:func:`ridge_penalty_search`). The penalty maximises the mean held-out R^2 over the
folds on a log grid; while the best penalty, or any penalty within one standard error of the best
score, is the smallest or largest grid value, the grid is widened by :data:`WIDEN_DECADES` decades
on that side, at most :data:`MAX_WIDENINGS` times (a side whose scores have stopped changing is not
widened further). The result is a :class:`epsaudit.grids.GridSearchRecord`: a penalty still
at an edge is reported as *not determined*. Which fitted quantities depend on the penalty is measured by
:func:`penalty_sensitivity` and summarised by :func:`penalty_determination`: a quantity is
*determined by the data* if it moves by at most :data:`DETERMINED_REL_TOL` (relative) over the
penalties whose cross-validated R^2 is within one standard error of the best (the
one-standard-error rule: penalties the cross-validation cannot tell apart).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd
from scipy import linalg
from sklearn.linear_model import Ridge
from sklearn.metrics import r2_score
from sklearn.model_selection import GroupKFold, KFold
from sklearn.neighbors import KNeighborsRegressor

from .grids import GridSearchRecord, grid_record, widen_log_grid
from .validation import as_sample
from .seeds import generator, sklearn_seed

#: The initial penalty grid (half-decade steps, 1e-3 ... 1e4).
DEFAULT_ALPHAS = tuple(np.logspace(-3, 4, 15))
#: Decades added beyond an edge per widening (at the grid's own half-decade spacing: 4 penalties).
WIDEN_DECADES = 2.0
#: At most this many widenings per search (so at most 10 decades beyond each end of the grid).
MAX_WIDENINGS = 5
#: Widening stops early ("flat") when the mean CV scores of the outermost widening step differ by at
#: most this (absolute R^2): the fit no longer changes with the penalty there.
FLAT_TOL = 1e-9
#: A fitted quantity is "determined" when its range over the one-standard-error penalties is at most
#: this fraction of its value at the chosen penalty.
DETERMINED_REL_TOL = 0.10
#: An input direction is "weak" when its variance is below this fraction of the largest input variance
#: (:func:`weak_directions`): ridge leaves B's action on it to the penalty.
WEAK_DIRECTION_RATIO = 1e-6
#: The quantities :func:`penalty_sensitivity` tracks, and the ones :func:`penalty_determination` judges.
SENSITIVITY_QUANTITIES = ("rho_B", "sigma_max_B", "b_u", "rho_A", "r2", "mean_cosine")
CV_CRITERION = "mean held-out R^2 over the folds"
#: :func:`stationary_law` refuses a covariance whose Lyapunov residual (:func:`lyapunov_residual`)
#: exceeds this fraction of the forcing's largest entry.
LYAPUNOV_RESIDUAL_TOL = 0.05


@dataclass(frozen=True, eq=False)
class CVFolds:
    """The cross-validation folds of an operator fit (:func:`cv_folds`).

    Attributes
    ----------
    roles : str
        ``"both"`` (identity-disjoint in donor and target role), ``"target"`` (grouped by target
        identity) or ``"key"`` (grouped by one given key per triplet).
    held_out : str
        One sentence: exactly what fold ``k``'s validation part keeps out of its training part.
    splits : tuple of (train, validation) index arrays
    table : pandas.DataFrame
        One row per fold: ``fold``, ``train``, ``validation``, ``excluded`` (triplets in neither
        part), ``validation_identities`` and ``shared_identities`` (validation identities, in either
        role, that also occur in that fold's training triplets, in either role; ``<NA>`` for
        ``roles="key"``).
    n : int
        Triplets.
    seed : int or None
        Of the identity-to-fold assignment (``None``: ``GroupKFold`` is deterministic).
    """

    roles: str
    held_out: str
    splits: tuple
    table: pd.DataFrame
    n: int
    seed: int | None = None

    @property
    def folds(self) -> int:
        return len(self.splits)

    @property
    def validated(self) -> int:
        """Triplets validated in some fold."""
        return int(self.table["validation"].sum())


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
        """Noiseless prediction ``A d + B t + c`` for rows of donors and targets, shape (n, d)."""
        return np.asarray(donors) @ self.A.T + np.asarray(targets) @ self.B.T + self.c


def _check_triplets(donors, targets, swaps):
    d = as_sample(donors, "donors", min_rows=2)
    t = as_sample(targets, "targets", min_rows=2)
    s = as_sample(swaps, "swaps", min_rows=2)
    if not (d.shape == t.shape == s.shape):
        raise ValueError(f"donors, targets and swaps must share one shape; got {d.shape}, {t.shape}, {s.shape}")
    return d, t, s


# -------------------------------------------------------------------------------------------------
# folds


def _fold_table(splits: Sequence[tuple[np.ndarray, np.ndarray]], n: int, roles: np.ndarray | None) -> pd.DataFrame:
    rows = []
    for k, (train, val) in enumerate(splits):
        row: dict[str, Any] = {"fold": k, "train": len(train), "validation": len(val),
                               "excluded": n - len(train) - len(val)}
        if roles is None:
            row["validation_identities"], row["shared_identities"] = pd.NA, pd.NA
        else:
            v_ids, t_ids = set(roles[val].ravel()), set(roles[train].ravel())
            row["validation_identities"], row["shared_identities"] = len(v_ids), len(v_ids & t_ids)
        rows.append(row)
    return pd.DataFrame(rows).astype({"validation_identities": "Int64", "shared_identities": "Int64"})


def cv_folds(groups, *, roles: str = "both", folds: int = 5, seed: int = 0) -> CVFolds:
    """Identity-disjoint cross-validation folds for an operator fit.

    Parameters
    ----------
    groups : array_like, shape (n,) or (n, 2)
        One identity key per triplet (grouped with ``GroupKFold``: ``roles`` is ignored and reported
        as ``"key"``), or the donor identity and the target identity of each triplet (columns 0, 1).
    roles : ``"both"`` or ``"target"``
        For two columns: ``"both"`` assigns each identity to one fold (``KFold(shuffle=True,
        random_state=seed)`` over the sorted distinct identities of both columns) and validates fold
        ``k`` on the triplets with both identities in fold ``k``, training on those with neither
        identity in it (the others are excluded from fold ``k``); ``"target"`` groups by the target
        identity alone (``GroupKFold``; donors are shared across folds).
    folds : int >= 2
    seed : int
        Identity-to-fold assignment of ``roles="both"``.

    Returns
    -------
    CVFolds

    Raises
    ------
    ValueError
        A bad shape or ``roles``, fewer distinct identities (keys) than folds, or a fold whose
        validation part has fewer than 2 triplets or whose training part is empty (too few
        identities for identity-disjoint folds in both roles; the fold table is in the message).
    """
    g = np.asarray(groups)
    if folds < 2:
        raise ValueError(f"folds must be >= 2, got {folds}")
    if g.ndim == 1 or (g.ndim == 2 and g.shape[1] == 1):
        key = g.reshape(-1)
        if len(np.unique(key)) < folds:
            raise ValueError(f"need at least {folds} distinct identities for {folds}-fold identity-disjoint CV")
        splits = tuple(GroupKFold(n_splits=folds).split(key, groups=key))
        return CVFolds(roles="key", held_out="the validation fold's identity keys (one per triplet); other "
                       "identities of a triplet may occur on both sides", splits=splits,
                       table=_fold_table(splits, len(key), None), n=len(key), seed=None)
    if g.ndim != 2 or g.shape[1] != 2:
        raise ValueError(f"groups must have shape (n,) or (n, 2) (donor identity, target identity), got {g.shape}")
    g = g.astype(str)
    if roles == "target":
        if len(np.unique(g[:, 1])) < folds:
            raise ValueError(f"need at least {folds} distinct target identities for {folds}-fold CV")
        splits = tuple(GroupKFold(n_splits=folds).split(g, groups=g[:, 1]))
        held = ("the validation fold's target identities (as targets); their donors, and the validation "
                "targets themselves in the donor role, may occur in training")
        return CVFolds(roles="target", held_out=held, splits=splits, table=_fold_table(splits, len(g), g),
                       n=len(g), seed=None)
    if roles != "both":
        raise ValueError(f"roles must be 'both' or 'target', got {roles!r}")
    ids = np.unique(g)
    if len(ids) < folds:
        raise ValueError(f"need at least {folds} distinct identities for {folds}-fold identity-disjoint CV")
    assign = np.empty(len(ids), dtype=np.int64)
    for k, (_, members) in enumerate(KFold(n_splits=folds, shuffle=True, random_state=sklearn_seed("operator-folds", seed)).split(ids)):
        assign[members] = k
    fold_of = assign[np.searchsorted(ids, g)]  # (n, 2): fold of the donor and of the target identity
    splits = tuple((np.flatnonzero((fold_of[:, 0] != k) & (fold_of[:, 1] != k)),
                    np.flatnonzero((fold_of[:, 0] == k) & (fold_of[:, 1] == k))) for k in range(folds))
    table = _fold_table(splits, len(g), g)
    if (table["validation"] < 2).any() or (table["train"] < 1).any():
        raise ValueError("too few identities for identity-disjoint folds in both roles:\n" + table.to_string(index=False))
    held = ("every identity of the validation fold, in both roles: validation triplets have donor and target "
            "identity in the fold, training triplets have neither; triplets with one identity in the fold and "
            "one outside are excluded from that fold")
    return CVFolds(roles="both", held_out=held, splits=splits, table=table, n=len(g), seed=int(seed))


# -------------------------------------------------------------------------------------------------
# penalty search


def _fold_factors(x: np.ndarray, s: np.ndarray, splits: Sequence[tuple[np.ndarray, np.ndarray]]) -> list[tuple]:
    """Per fold: singular values, ``U^T (s - mean)`` and the validation inputs in the right singular
    basis (``scipy.linalg.svd`` of the centred training inputs, as ``Ridge(solver="svd")``)."""
    out = []
    for train, val in splits:
        xm, sm = x[train].mean(axis=0), s[train].mean(axis=0)
        u, sv, vt = linalg.svd(x[train] - xm, full_matrices=False)
        out.append((sv, u.T @ (s[train] - sm), (x[val] - xm) @ vt.T, sm, s[val]))
    return out


def _fold_scores(factors: list[tuple], alphas: Sequence[float]) -> np.ndarray:
    """Held-out R^2 (``r2_score``, uniform average over outputs), shape (folds, len(alphas))."""
    out = np.empty((len(factors), len(alphas)))
    for f, (sv, uty, x_val, sm, s_val) in enumerate(factors):
        for i, alpha in enumerate(alphas):
            out[f, i] = r2_score(s_val, x_val @ ((sv / (sv**2 + alpha))[:, None] * uty) + sm)
    return out


def _ridge_cv_r2(x: np.ndarray, s: np.ndarray, groups: np.ndarray, alphas: Sequence[float], folds: int) -> np.ndarray:
    """Mean held-out R^2 of ridge with intercept for every penalty over ``GroupKFold(folds)`` on
    ``groups``: the numbers ``GridSearchCV(Ridge(), scoring="r2")`` computes, from one SVD of the
    centred training inputs per fold instead of one solve per penalty and fold."""
    splits = list(GroupKFold(n_splits=folds).split(x, s, groups))
    return _fold_scores(_fold_factors(x, s, splits), alphas).mean(axis=0)


def ridge_penalty_search(x, s, splits: Sequence[tuple[np.ndarray, np.ndarray]], alphas: Sequence[float] = DEFAULT_ALPHAS,
                         *, widen: int = MAX_WIDENINGS, widen_decades: float = WIDEN_DECADES,
                         flat_tol: float = FLAT_TOL) -> tuple[GridSearchRecord, np.ndarray]:
    """Cross-validated ridge penalty on a log grid, widened while the choice is not bracketed.

    Each penalty is scored by the mean over folds of the held-out R^2 of ridge with intercept
    (``sklearn.metrics.r2_score``, uniform average over outputs; the scores of
    ``GridSearchCV(Ridge(), scoring="r2")``), computed from one SVD of each fold's centred training
    inputs. The grid is widened by ``widen_decades`` decades (at its own spacing,
    :func:`epsaudit.grids.widen_log_grid`) on every side where either the best penalty (first
    of equal scores) or a penalty within one standard error of the best score sits at the grid's
    edge: a best value at an edge could move, and a near-best value at an edge means the grid may
    hide a better region (the cross-validated R^2 of raw dlib embeddings has two local maxima). At
    most ``widen`` widenings are made. A side is not widened further (``stopped="flat"``) once the
    mean scores over its outermost ``widen_decades`` decades differ by at most ``flat_tol``: the fit
    no longer changes with the penalty there (ridge has become least squares, or the intercept-only
    model), so widening cannot move the choice.

    Parameters
    ----------
    x : array_like, shape (n, p)
        Inputs (donor and target embeddings side by side).
    s : array_like, shape (n, k)
        Outputs (swap embeddings).
    splits : sequence of (train, validation) index arrays
        E.g. ``cv_folds(...).splits``.
    alphas : sequence of float > 0
        Initial grid (log-spaced).
    widen : int >= 0
        Maximum number of widenings (0: score the given grid only).
    widen_decades : float > 0
    flat_tol : float >= 0

    Returns
    -------
    record : GridSearchRecord
        ``parameter="ridge penalty"``; ``edge`` the chosen penalty's position in the final grid;
        ``score_se`` the fold standard errors (``one_se_edge`` says whether the near-best penalties
        are bracketed); ``stopped`` is ``"interior"`` (chosen and near-best penalties inside the
        grid), ``"flat"``, ``"limit"`` or ``"not widened"``.
    fold_scores : ndarray, shape (folds, g)
        Held-out R^2 of every fold and grid value.

    Raises
    ------
    ValueError
        Non-positive penalties, fewer than two folds, or a negative ``widen``.
    """
    x, s = np.asarray(x, dtype=np.float64), np.asarray(s, dtype=np.float64)
    grid = np.sort(np.asarray([float(a) for a in alphas]))
    if grid.size == 0 or np.any(grid <= 0) or np.any(np.diff(grid) <= 0):
        raise ValueError(f"penalties must be positive and distinct, got {list(alphas)}")
    if len(splits) < 2:
        raise ValueError(f"need at least 2 folds, got {len(splits)}")
    if int(widen) < 0:
        raise ValueError(f"widen must be >= 0, got {widen}")
    factors = _fold_factors(x, s, splits)
    scores = _fold_scores(factors, grid)
    initial = grid.copy()
    widenings = 0

    def record_of(g: np.ndarray, sc: np.ndarray, stopped: str | None = None) -> GridSearchRecord:
        se = sc.std(axis=0, ddof=1) / np.sqrt(sc.shape[0])
        return grid_record("ridge penalty", g, sc.mean(axis=0), criterion=f"{CV_CRITERION} ({len(splits)} folds)",
                           score_se=se, initial_grid=initial, widenings=widenings, stopped=stopped)

    def flat(g: np.ndarray, mean: np.ndarray, side: str) -> bool:
        if g.size < 2:
            return False
        k = len(widen_log_grid(g, side, widen_decades))  # grid points per widening step at that edge
        outer = mean[:k + 1] if side == "lower" else mean[-(k + 1):]
        return bool(np.ptp(outer) <= flat_tol)

    while True:
        probe = record_of(grid, scores)
        if probe.edge == "fixed":
            return probe, scores
        sides = {probe.edge} - {"interior"}
        sides |= {"lower", "upper"} & {probe.one_se_edge, "lower" if probe.one_se_edge == "both" else None,
                                       "upper" if probe.one_se_edge == "both" else None}
        if not sides:
            return record_of(grid, scores, "interior"), scores
        open_sides = [side for side in ("lower", "upper") if side in sides and not flat(grid, scores.mean(axis=0), side)]
        if not open_sides:
            return record_of(grid, scores, "flat"), scores
        if widenings >= int(widen):
            return record_of(grid, scores, "limit" if widen else "not widened"), scores
        for side in open_sides:
            new = widen_log_grid(grid, side, widen_decades)
            new_scores = _fold_scores(factors, new)
            if side == "lower":
                grid, scores = np.r_[new, grid], np.hstack([new_scores, scores])
            else:
                grid, scores = np.r_[grid, new], np.hstack([scores, new_scores])
        widenings += 1


def fit_affine_operator(donors, targets, swaps, groups, *, alphas: Sequence[float] = DEFAULT_ALPHAS,
                        folds: int = 5, roles: str = "both", seed: int = 0, widen: int = MAX_WIDENINGS,
                        widen_decades: float = WIDEN_DECADES, flat_tol: float = FLAT_TOL) -> AffineOperator:
    """Ridge fit of ``s = A d + B t + c`` with the penalty chosen by identity-disjoint cross-validation
    (*Toward Interpretable Privacy Guarantees in Face-Swapping Anonymization*, Section VI-A).

    Parameters
    ----------
    donors, targets, swaps : array_like, shape (n, d)
        Raw embeddings of each triplet's donor image, target image and swap output.
    groups : array_like, shape (n, 2) or (n,)
        Donor identity and target identity of each triplet (folds per ``roles``), or one identity
        key per triplet (``GroupKFold`` on it). See :func:`cv_folds`.
    alphas : sequence of float
        Initial ridge penalty grid (widened by :func:`ridge_penalty_search`).
    folds : int
        Number of folds (paper: 5).
    roles : ``"both"`` or ``"target"``
        Fold design for two-column ``groups`` (:func:`cv_folds`).
    seed : int
        Identity-to-fold assignment (``roles="both"``).
    widen, widen_decades, flat_tol
        Grid widening (:func:`ridge_penalty_search`; ``widen=0`` scores ``alphas`` only).

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
        (:func:`cv_folds`), or bad search settings.
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
    """
    d, t = as_sample(donors, "donors", min_rows=2), as_sample(targets, "targets", min_rows=2)
    x = np.hstack([d, t])
    var = linalg.svdvals(x - x.mean(axis=0)) ** 2
    return int(np.sum(var < ratio * var.max()))


def penalty_sensitivity(op: AffineOperator, train: tuple, test: tuple) -> pd.DataFrame:
    """The fitted quantities at every penalty of the operator's (widened) search grid.

    For each penalty the operator is refitted on ``train`` (ridge through one SVD of the centred
    inputs, the computation of ``Ridge(solver="svd")``), its spectra are taken
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
    """
    if op.search is None or op.search.score_se is None:
        raise ValueError("the operator has no penalty search record (fit it with fit_affine_operator)")
    d, t, s = _check_triplets(*train)
    d_te, t_te, s_te = _check_triplets(*test)
    if len(d) != op.n_train:
        raise ValueError(f"train has {len(d)} triplets but the operator was fitted on {op.n_train}")
    x = np.hstack([d, t])
    xm, sm = x.mean(axis=0), s.mean(axis=0)
    u, sv, vt = linalg.svd(x - xm, full_matrices=False)
    uty = u.T @ (s - sm)
    dim = d.shape[1]
    rec = op.search
    within = rec.within_one_se()
    rows = []
    for i, alpha in enumerate(rec.grid):
        w = vt.T @ ((sv / (sv**2 + alpha))[:, None] * uty)  # (2 dim, dim)
        fit = AffineOperator(A=w[:dim].T, B=w[dim:].T, c=sm - xm @ w, residual_cov=op.residual_cov, alpha=alpha)
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
    """
    B, cov, forcing = (np.asarray(a, dtype=np.float64) for a in (B, cov, forcing))
    return float(np.abs(cov - B @ cov @ B.T - forcing).max() / np.abs(forcing).max())
