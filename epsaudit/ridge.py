"""Ridge regression with a cross-validated penalty: identity-disjoint folds and a widening grid.

The operator fit (:func:`epsaudit.operator.fit_affine_operator`; *Toward Interpretable Privacy
Guarantees in Face-Swapping Anonymization*, Section VI-A) regresses a swap's embedding on its
donor's and its target's. This module holds the two parts of that fit that are not about swaps:

Folds (:func:`cv_folds`). Every triplet has two identities, its donor's and its target's. Folds
that group by the target identity alone (``roles="target"``, ``GroupKFold``) keep validation
*targets* out of training but not validation *donors*, and an identity that is a target in
validation may be a donor in training. ``roles="both"`` assigns every identity to one of ``K``
folds (seeded ``KFold`` over the identities); fold ``k`` validates on the triplets whose donor
*and* target identity are in fold ``k`` and trains on those whose donor and target identity are
both outside it, so no identity is on both sides in either role. Triplets with one identity inside
fold ``k`` and one outside are excluded from fold ``k`` (counted in :attr:`CVFolds.table`); each
triplet is validated at most once and about ``1/K`` of them are validated at all. This is the
fold-level analogue of the paper's train/test rule (Section VI-A: a triplet is kept only if both
its identities fall in one partition).

Penalty search (:func:`ridge_penalty_search`). The penalty maximises the mean held-out R^2 over the
folds on a log grid; while the best penalty, or any penalty within one standard error of the best
score, is the smallest or largest grid value, the grid is widened by :data:`WIDEN_DECADES` decades
on that side, at most :data:`MAX_WIDENINGS` times (a side whose scores have stopped changing is not
widened further). The result is a :class:`epsaudit.grids.GridSearchRecord`: a penalty still at an
edge is reported as *not determined*.

Every ridge solution here comes from one SVD of the centred inputs (:class:`RidgePath`), the
computation of ``sklearn.linear_model.Ridge(solver="svd")``: accurate at the tiny penalties a
widened search reaches (an eigendecomposition of the Gram matrix would square the condition
number).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd
from scipy import linalg
from sklearn.metrics import r2_score
from sklearn.model_selection import GroupKFold, KFold

from .grids import GridSearchRecord, grid_record, widen_log_grid
from .seeds import seed_key, sklearn_seed

__all__ = ["DEFAULT_ALPHAS", "WIDEN_DECADES", "MAX_WIDENINGS", "FLAT_TOL", "CV_CRITERION", "CVFolds", "RidgePath",
           "cv_folds", "ridge_cv_r2", "ridge_path", "ridge_penalty_search"]

#: The initial penalty grid (half-decade steps, 1e-3 ... 1e4).
DEFAULT_ALPHAS = tuple(np.logspace(-3, 4, 15))
#: Decades added beyond an edge per widening (at the grid's own half-decade spacing: 4 penalties).
WIDEN_DECADES = 2.0
#: At most this many widenings per search (so at most 10 decades beyond each end of the grid).
MAX_WIDENINGS = 5
#: Widening stops early ("flat") when the mean CV scores of the outermost widening step differ by at
#: most this (absolute R^2): the fit no longer changes with the penalty there.
FLAT_TOL = 1e-9
CV_CRITERION = "mean held-out R^2 over the folds"


# -------------------------------------------------------------------------------------------------
# folds


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
    seed : int, tuple or None
        Of the identity-to-fold assignment (``None``: ``GroupKFold`` is deterministic).

    Examples
    --------
    >>> cv = cv_folds(["a", "b", "c", "a", "b", "c"], folds=3)
    >>> cv.roles, cv.folds, cv.validated
    ('key', 3, 6)
    """

    roles: str
    held_out: str
    splits: tuple
    table: pd.DataFrame
    n: int
    seed: Any = None

    @property
    def folds(self) -> int:
        """Number of folds."""
        return len(self.splits)

    @property
    def validated(self) -> int:
        """Triplets validated in some fold."""
        return int(self.table["validation"].sum())


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


def _key_folds(key: np.ndarray, folds: int) -> CVFolds:
    if len(np.unique(key)) < folds:
        raise ValueError(f"need at least {folds} distinct identities for {folds}-fold identity-disjoint CV")
    splits = tuple(GroupKFold(n_splits=folds).split(key, groups=key))
    return CVFolds(roles="key", held_out="the validation fold's identity keys (one per triplet); other "
                   "identities of a triplet may occur on both sides", splits=splits,
                   table=_fold_table(splits, len(key), None), n=len(key), seed=None)


def _target_folds(g: np.ndarray, folds: int) -> CVFolds:
    if len(np.unique(g[:, 1])) < folds:
        raise ValueError(f"need at least {folds} distinct target identities for {folds}-fold CV")
    splits = tuple(GroupKFold(n_splits=folds).split(g, groups=g[:, 1]))
    held = ("the validation fold's target identities (as targets); their donors, and the validation "
            "targets themselves in the donor role, may occur in training")
    return CVFolds(roles="target", held_out=held, splits=splits, table=_fold_table(splits, len(g), g),
                   n=len(g), seed=None)


def _both_role_folds(g: np.ndarray, folds: int, seed: Any) -> CVFolds:
    ids = np.unique(g)
    if len(ids) < folds:
        raise ValueError(f"need at least {folds} distinct identities for {folds}-fold identity-disjoint CV")
    assign = np.empty(len(ids), dtype=np.int64)
    kfold = KFold(n_splits=folds, shuffle=True, random_state=sklearn_seed(*seed_key(seed, "operator-folds")))
    for k, (_, members) in enumerate(kfold.split(ids)):
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
    return CVFolds(roles="both", held_out=held, splits=splits, table=table, n=len(g),
                   seed=int(seed) if isinstance(seed, (int, np.integer)) else seed)


def cv_folds(groups, *, roles: str = "both", folds: int = 5, seed: Any = 0) -> CVFolds:
    """Identity-disjoint cross-validation folds for an operator fit (module docstring).

    Parameters
    ----------
    groups : array_like, shape (n,) or (n, 2)
        One identity key per triplet (grouped with ``GroupKFold``: ``roles`` is ignored and reported
        as ``"key"``), or the donor identity and the target identity of each triplet (columns 0, 1).
    roles : ``"both"`` or ``"target"``
        For two columns: ``"both"`` assigns each identity to one fold (``KFold(shuffle=True)`` over
        the sorted distinct identities of both columns, seeded by the stream key
        ``("operator-folds", seed)``) and validates fold ``k`` on the triplets with both identities
        in fold ``k``, training on those with neither identity in it (the others are excluded from
        fold ``k``); ``"target"`` groups by the target identity alone (``GroupKFold``; donors are
        shared across folds).
    folds : int >= 2
    seed : int or tuple
        Identity-to-fold assignment of ``roles="both"``: a base seed or a stream key
        (:func:`epsaudit.seeds.seed_key`).

    Returns
    -------
    CVFolds

    Raises
    ------
    ValueError
        A bad shape or ``roles``, fewer distinct identities (keys) than folds, or a fold whose
        validation part has fewer than 2 triplets or whose training part is empty (too few
        identities for identity-disjoint folds in both roles; the fold table is in the message).

    Examples
    --------
    >>> pairs = [[f"I{i % 20}", f"I{(i * 7 + 3) % 20}"] for i in range(200)]
    >>> cv = cv_folds(pairs, folds=2, seed=0)
    >>> cv.roles, int(cv.table["shared_identities"].sum())
    ('both', 0)
    """
    g = np.asarray(groups)
    if folds < 2:
        raise ValueError(f"folds must be >= 2, got {folds}")
    if g.ndim == 1 or (g.ndim == 2 and g.shape[1] == 1):
        return _key_folds(g.reshape(-1), folds)
    if g.ndim != 2 or g.shape[1] != 2:
        raise ValueError(f"groups must have shape (n,) or (n, 2) (donor identity, target identity), got {g.shape}")
    g = g.astype(str)
    if roles == "target":
        return _target_folds(g, folds)
    if roles != "both":
        raise ValueError(f"roles must be 'both' or 'target', got {roles!r}")
    return _both_role_folds(g, folds, seed)


# -------------------------------------------------------------------------------------------------
# ridge solutions from one SVD


@dataclass(frozen=True, eq=False)
class RidgePath:
    """Ridge regression with intercept at any penalty, from one SVD of the centred inputs.

    Attributes
    ----------
    x_mean : ndarray, shape (p,)
    s_mean : ndarray, shape (k,)
    singular : ndarray, shape (r,)
        Singular values of the centred inputs.
    uty : ndarray, shape (r, k)
        ``U^T (s - s_mean)``.
    vt : ndarray, shape (r, p)
        Right singular vectors.

    Examples
    --------
    >>> x = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> w, c = ridge_path(x, 2 * x + 1).weights(0.0)
    >>> round(float(w[0, 0]), 6), round(float(c[0]), 6)
    (2.0, 1.0)
    """

    x_mean: np.ndarray
    s_mean: np.ndarray
    singular: np.ndarray
    uty: np.ndarray
    vt: np.ndarray

    def shrunk(self, alpha: float) -> np.ndarray:
        """``diag(sv / (sv^2 + alpha)) U^T (s - s_mean)``, shape (r, k): the solution in the right
        singular basis."""
        sv = self.singular
        return (sv / (sv**2 + alpha))[:, None] * self.uty

    def weights(self, alpha: float) -> tuple[np.ndarray, np.ndarray]:
        """Coefficients ``W`` (p, k) and intercept (k,) at penalty ``alpha``: ``s ~ x W + c``."""
        w = self.vt.T @ self.shrunk(alpha)
        return w, self.s_mean - self.x_mean @ w


def ridge_path(x, s) -> RidgePath:
    """The :class:`RidgePath` of inputs ``x`` (n, p) and outputs ``s`` (n, k) (``scipy.linalg.svd``
    of the centred inputs, as ``Ridge(solver="svd")``).

    Examples
    --------
    >>> ridge_path(np.eye(3), np.eye(3)).singular.shape
    (3,)
    """
    x, s = np.asarray(x, dtype=np.float64), np.asarray(s, dtype=np.float64)
    xm, sm = x.mean(axis=0), s.mean(axis=0)
    u, sv, vt = linalg.svd(x - xm, full_matrices=False)
    return RidgePath(x_mean=xm, s_mean=sm, singular=sv, uty=u.T @ (s - sm), vt=vt)


# -------------------------------------------------------------------------------------------------
# penalty search


def _fold_factors(x: np.ndarray, s: np.ndarray, splits: Sequence[tuple[np.ndarray, np.ndarray]]) -> list[tuple]:
    """Per fold: the training part's :class:`RidgePath`, the validation inputs in its right singular
    basis and the validation outputs."""
    out = []
    for train, val in splits:
        path = ridge_path(x[train], s[train])
        out.append((path, (x[val] - path.x_mean) @ path.vt.T, s[val]))
    return out


def _fold_scores(factors: list[tuple], alphas: Sequence[float]) -> np.ndarray:
    """Held-out R^2 (``r2_score``, uniform average over outputs), shape (folds, len(alphas))."""
    out = np.empty((len(factors), len(alphas)))
    for f, (path, x_val, s_val) in enumerate(factors):
        for i, alpha in enumerate(alphas):
            out[f, i] = r2_score(s_val, x_val @ path.shrunk(alpha) + path.s_mean)
    return out


def ridge_cv_r2(x, s, groups, alphas: Sequence[float], folds: int) -> np.ndarray:
    """Mean held-out R^2 of ridge with intercept for every penalty over ``GroupKFold(folds)`` on
    ``groups``: the numbers ``GridSearchCV(Ridge(), scoring="r2")`` computes, from one SVD of the
    centred training inputs per fold instead of one solve per penalty and fold.

    Parameters
    ----------
    x : array_like, shape (n, p)
    s : array_like, shape (n, k)
    groups : array_like, shape (n,)
        One group key per row.
    alphas : sequence of float, shape (g,)
    folds : int

    Returns
    -------
    ndarray, shape (g,)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(60, 2))
    >>> scores = ridge_cv_r2(x, x @ [[1.0], [2.0]], np.arange(60) % 6, [1e-3, 1e3], 3)
    >>> bool(scores[0] > 0.99 > scores[1])
    True
    """
    x, s = np.asarray(x, dtype=np.float64), np.asarray(s, dtype=np.float64)
    splits = list(GroupKFold(n_splits=folds).split(x, s, groups))
    return _fold_scores(_fold_factors(x, s, splits), alphas).mean(axis=0)


def _search_record(grid: np.ndarray, scores: np.ndarray, initial: np.ndarray, widenings: int, folds: int,
                   stopped: str | None = None) -> GridSearchRecord:
    se = scores.std(axis=0, ddof=1) / np.sqrt(scores.shape[0])
    return grid_record("ridge penalty", grid, scores.mean(axis=0), criterion=f"{CV_CRITERION} ({folds} folds)",
                       score_se=se, initial_grid=initial, widenings=widenings, stopped=stopped)


def _is_flat(grid: np.ndarray, mean: np.ndarray, side: str, decades: float, tol: float) -> bool:
    """Whether the mean scores over the outermost widening step at ``side`` differ by at most ``tol``."""
    if grid.size < 2:
        return False
    k = len(widen_log_grid(grid, side, decades))  # grid points per widening step at that edge
    outer = mean[:k + 1] if side == "lower" else mean[-(k + 1):]
    return bool(np.ptp(outer) <= tol)


def _sides_to_widen(probe: GridSearchRecord) -> set[str]:
    """Edges at which the best penalty or a penalty within one SE of it sits."""
    sides = {probe.edge} - {"interior"}
    one_se = probe.one_se_edge
    return sides | ({"lower", "upper"} & {one_se, "lower" if one_se == "both" else None,
                                          "upper" if one_se == "both" else None})


# long only by its docstring, which states the widening rule in full; the body is ~35 lines
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

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(80, 3))
    >>> s = x @ rng.normal(size=(3, 2)) + 3.0 * rng.normal(size=(80, 2))
    >>> record, fold_scores = ridge_penalty_search(x, s, cv_folds(np.arange(80) % 8, folds=4).splits)
    >>> fold_scores.shape[0], record.parameter
    (4, 'ridge penalty')
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
    initial, widenings, folds = grid.copy(), 0, len(splits)
    while True:
        probe = _search_record(grid, scores, initial, widenings, folds)
        if probe.edge == "fixed":
            return probe, scores
        sides = _sides_to_widen(probe)
        if not sides:
            return _search_record(grid, scores, initial, widenings, folds, "interior"), scores
        open_sides = [side for side in ("lower", "upper")
                      if side in sides and not _is_flat(grid, scores.mean(axis=0), side, widen_decades, flat_tol)]
        if not open_sides:
            return _search_record(grid, scores, initial, widenings, folds, "flat"), scores
        if widenings >= int(widen):
            return _search_record(grid, scores, initial, widenings, folds, "limit" if widen else "not widened"), scores
        for side in open_sides:
            new = widen_log_grid(grid, side, widen_decades)
            new_scores = _fold_scores(factors, new)
            if side == "lower":
                grid, scores = np.r_[new, grid], np.hstack([new_scores, scores])
            else:
                grid, scores = np.r_[grid, new], np.hstack([scores, new_scores])
        widenings += 1
