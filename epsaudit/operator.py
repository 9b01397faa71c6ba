"""The affine stochastic operator of a face swapper in embedding space (*Toward Interpretable Privacy Guarantees
in Face-Swapping Anonymization*, Sections VI-VIII).

A swap of donor ``d`` onto target ``t`` is modelled as ``s = A d + B t + c + e``, ``e ~ (0, S_e)``, fitted by ridge
regression with the penalty cross-validated over identity-disjoint folds (:func:`fit_affine_operator`); a cascade
``s_k = A d_k + B s_{k-1} + c + e_k`` is governed by ``rho(B)``, the mean Rayleigh gain ``b_u`` and the stationary law
(:func:`spectral_summary`, :func:`rollout`, :func:`stationary_law`); :func:`penalty_determination` says which fitted
quantities the data determine (the one-standard-error rule). Definitions, fold design and grid widening: the book's
methods chapter, sections 'Membership inference and the affine operator' and 'Hyperparameters chosen or swept over
a grid'.
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

from .protocol import generator, seed_key, sklearn_seed
from .validation import as_sample, unit_rows

__all__ = ["AffineOperator", "fit_affine_operator", "weak_directions", "penalty_sensitivity", "penalty_determination",
           "prediction_quality", "baseline_predictions", "spectral_summary", "rollout", "stationary_law",
           "lyapunov_residual", "DEFAULT_ALPHAS", "CVFolds", "ridge_cv_r2", "ridge_penalty_search", "GridSearchRecord"]


#: Where a grid's best value sits (``"fixed"``: a one-value grid).
_EDGES = ("interior", "lower", "upper", "fixed")


# --- grid-search records ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GridSearchRecord:
    """Where the best value of a searched (or swept) hyperparameter sits in its grid.

    Attributes
    ----------
    parameter, criterion : str
        What was searched (``"ridge penalty"``) and what ``scores`` are (``"mean held-out R^2 over 5 folds"``).
    grid, scores : tuple of float, shape (g,)
        The final grid, strictly increasing (after any widening), and the criterion at every value.
    chosen : float
        The best grid value (first of equal scores, i.e. the smallest, as ``GridSearchCV``).
    edge : str
        ``"interior"``, ``"lower"``/``"upper"`` (the smallest/largest value of the final grid) or ``"fixed"``.
    initial_grid, widenings : tuple of float, int
        The grid before widening; how many times it was extended beyond an edge (0: not widened).
    stopped : str
        Why the search ended: ``"interior"``, ``"limit"`` (widenings used up, best value still at an edge),
        ``"flat"`` (the scores at the edge no longer change), ``"not widened"`` or ``"fixed"``.
    score_se : tuple of float or None, shape (g,)
        Standard error of each score over the folds (``std(ddof=1) / sqrt(folds)``).
    maximise : bool
        Higher scores are better.

    Raises
    ------
    ValueError
        Grid and scores of different lengths, an unknown ``edge``, or ``chosen`` not in the grid.

    See Also
    --------
    ridge_penalty_search : the search it records.

    Examples
    --------
    >>> rec = _grid_record("ridge penalty", [0.1, 1.0, 10.0], [0.5, 0.7, 0.68], criterion="held-out R^2",
    ...                    score_se=[0.05, 0.05, 0.05])
    >>> rec.chosen, rec.edge, rec.determined, rec.one_se_range
    (1.0, 'interior', True, (1.0, 10.0))
    >>> rec.describe()
    'ridge penalty 1: interior of [0.1, 10] (not widened)'
    """

    parameter: str
    criterion: str
    grid: tuple
    scores: tuple
    chosen: float
    edge: str
    initial_grid: tuple
    widenings: int = 0
    stopped: str = "not widened"
    score_se: tuple | None = None
    maximise: bool = True

    def __post_init__(self) -> None:
        if len(self.grid) != len(self.scores) or not self.grid:
            raise ValueError(f"{self.parameter}: grid ({len(self.grid)}) and scores ({len(self.scores)}) must be "
                             "non-empty and of one length")
        if self.score_se is not None and len(self.score_se) != len(self.grid):
            raise ValueError(f"{self.parameter}: score_se has {len(self.score_se)} entries for {len(self.grid)} "
                             "grid values")
        if self.edge not in _EDGES:
            raise ValueError(f"edge must be one of {_EDGES}, got {self.edge!r}")
        if self.chosen not in self.grid:
            raise ValueError(f"{self.parameter}: chosen value {self.chosen} is not in the grid")

    @property
    def index(self) -> int:
        """Position of ``chosen`` in ``grid``."""
        return self.grid.index(self.chosen)

    @property
    def widened(self) -> bool:
        """True if the grid was extended beyond its initial range."""
        return self.widenings > 0

    @property
    def determined(self) -> bool:
        """True only for an interior choice: an edge (or one-value) choice could move with the grid."""
        return self.edge == "interior"

    @property
    def best_score(self) -> float:
        """The criterion at the chosen value."""
        return float(self.scores[self.index])

    def within_one_se(self) -> np.ndarray:
        """Boolean mask over ``grid``: scores within one standard error of the best.

        Raises
        ------
        ValueError
            If the record has no ``score_se``.
        """
        if self.score_se is None:
            raise ValueError(f"{self.parameter}: no standard errors recorded, so no one-standard-error set")
        s, se = np.asarray(self.scores, dtype=np.float64), float(self.score_se[self.index])
        return s >= self.best_score - se if self.maximise else s <= self.best_score + se

    @property
    def one_se_range(self) -> tuple[float, float] | None:
        """Smallest and largest grid value within one standard error of the best (``None`` without them)."""
        if self.score_se is None:
            return None
        values = np.asarray(self.grid)[self.within_one_se()]
        return float(values.min()), float(values.max())

    @property
    def one_se_edge(self) -> str | None:
        """Whether the one-standard-error set reaches a grid edge: ``"interior"``, ``"lower"``, ``"upper"`` or
        ``"both"`` (``None`` without standard errors)."""
        if self.score_se is None:
            return None
        mask = self.within_one_se()
        lo, hi = bool(mask[0]), bool(mask[-1])
        return "both" if lo and hi else "lower" if lo else "upper" if hi else "interior"

    def as_row(self) -> dict[str, Any]:
        """One table row: the fields, ``determined``, the grid's and initial grid's ends, ``best_score`` and the
        one-standard-error range and edge (``<NA>`` without standard errors)."""
        import pandas as pd  # <NA> cells; loaded only when a table row is made

        rng = self.one_se_range
        return {"parameter": self.parameter, "chosen": float(self.chosen), "edge": self.edge,
                "determined": self.determined, "widenings": int(self.widenings), "stopped": self.stopped,
                "grid_low": float(self.grid[0]), "grid_high": float(self.grid[-1]), "grid_points": len(self.grid),
                "initial_low": float(self.initial_grid[0]), "initial_high": float(self.initial_grid[-1]),
                "best_score": self.best_score,
                "one_se_low": pd.NA if rng is None else rng[0], "one_se_high": pd.NA if rng is None else rng[1],
                "one_se_edge": pd.NA if rng is None else self.one_se_edge, "criterion": self.criterion}

    def describe(self) -> str:
        """One sentence, e.g. ``"ridge penalty 3.16e-11: interior of [1e-13, 1e+04] (widened 5 times)"``."""
        where = {"interior": "interior of", "lower": "at the lower edge of", "upper": "at the upper edge of",
                 "fixed": "the only value of"}[self.edge]
        text = f"{self.parameter} {self.chosen:.3g}: {where} [{self.grid[0]:.3g}, {self.grid[-1]:.3g}]"
        text += f" (widened {self.widenings} time{'s' if self.widenings != 1 else ''})" if self.widened else " (not widened)"
        if not self.determined:
            text += f"; not determined: a wider grid could move it (search stopped: {self.stopped})"
        return text


def _grid_record(parameter: str, grid: Sequence[float], scores: Sequence[float], *, criterion: str,
                 maximise: bool = True, score_se: Sequence[float] | None = None,
                 initial_grid: Sequence[float] | None = None, widenings: int = 0,
                 stopped: str | None = None) -> GridSearchRecord:
    """A :class:`GridSearchRecord` from a strictly increasing grid and its finite scores (else ``ValueError``): the
    first best value and its edge; ``stopped`` defaults to ``"fixed"``, ``"interior"`` or ``"not widened"``."""
    g = np.asarray(grid, dtype=np.float64)
    s = np.asarray(scores, dtype=np.float64)
    if g.ndim != 1 or g.size == 0 or s.shape != g.shape:
        raise ValueError(f"{parameter}: grid and scores must be non-empty 1-D of one length, got {g.shape}, {s.shape}")
    if np.any(np.diff(g) <= 0):
        raise ValueError(f"{parameter}: the grid must be strictly increasing, got {g.tolist()}")
    bad = ~np.isfinite(s)
    if bad.any():
        raise ValueError(f"{parameter}: {criterion} is NaN/inf at {g[bad].tolist()}; no choice can be recorded")
    i = int(np.argmax(s) if maximise else np.argmin(s))
    edge = "fixed" if g.size == 1 else "lower" if i == 0 else "upper" if i == g.size - 1 else "interior"
    if stopped is None:
        stopped = "fixed" if edge == "fixed" else "interior" if edge == "interior" else "not widened"
    return GridSearchRecord(parameter=parameter, criterion=criterion, grid=tuple(float(x) for x in g),
                            scores=tuple(float(x) for x in s), chosen=float(g[i]), edge=edge,
                            initial_grid=tuple(float(x) for x in (g if initial_grid is None else initial_grid)),
                            widenings=int(widenings), stopped=stopped,
                            score_se=None if score_se is None else tuple(float(x) for x in score_se),
                            maximise=maximise)


def _widen_log_grid(grid: Sequence[float], side: str, decades: float) -> np.ndarray:
    """The new values extending a positive, increasing log grid by ``decades`` decades beyond ``side``
    (``"lower"``/``"upper"``), at the grid's own spacing there, increasing (``ValueError`` for bad input)."""
    g = np.asarray(grid, dtype=np.float64)
    if g.size == 0 or np.any(g <= 0) or np.any(np.diff(g) <= 0):
        raise ValueError(f"a log grid must be positive and strictly increasing, got {g.tolist()}")
    if not decades > 0:
        raise ValueError(f"decades must be positive, got {decades}")
    if side not in ("lower", "upper"):
        raise ValueError(f"side must be 'lower' or 'upper', got {side!r}")
    step = np.log10(g[1] / g[0] if side == "lower" else g[-1] / g[-2]) if g.size > 1 else 0.5
    k = np.arange(1, max(int(round(decades / step)), 1) + 1)
    return np.sort(g[0] * 10.0 ** (-step * k)) if side == "lower" else g[-1] * 10.0 ** (step * k)


#: The initial penalty grid (half-decade steps, 1e-3 ... 1e4).
DEFAULT_ALPHAS = tuple(np.logspace(-3, 4, 15))
_WIDEN_DECADES = 2.0  # decades added beyond an edge per widening
_MAX_WIDENINGS = 5  # widenings per search at most
_FLAT_TOL = 1e-9  # a side stops widening ("flat") when its outermost mean CV scores differ by at most this
_CV_CRITERION = "mean held-out R^2 over the folds"


# --- folds --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class CVFolds:
    """The identity-disjoint cross-validation folds of an operator fit (``AffineOperator.cv``).

    Attributes
    ----------
    roles, held_out : str
        ``"both"`` (identity-disjoint in both roles), ``"target"`` (grouped by target identity) or ``"key"`` (by one
        key per triplet); one sentence saying exactly what fold ``k``'s validation part keeps out of its training.
    splits : tuple of (train, validation) index arrays
    table : pandas.DataFrame
        One row per fold: ``fold``, ``train``, ``validation``, ``excluded`` (in neither part),
        ``validation_identities`` and ``shared_identities`` (validation identities also in that fold's training
        triplets, in either role; ``<NA>`` for ``roles="key"``).
    n : int
        Triplets.
    seed : int, tuple or None
        Of the identity-to-fold assignment (``None``: ``GroupKFold``, deterministic).

    See Also
    --------
    fit_affine_operator : the fit that builds them.
    ridge_cv_r2 : the held-out R^2 over them.

    Examples
    --------
    >>> cv = _cv_folds(["a", "b", "c", "a", "b", "c"], folds=3)
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


def _cv_folds(groups, *, roles: str = "both", folds: int = 5, seed: Any = 0) -> CVFolds:
    """Identity-disjoint folds: ``groups`` (n,) are keys (``GroupKFold``, roles ``"key"``); (n, 2) donor and target
    identities, folded by ``roles`` (``"both"``: each identity to one fold by a ``KFold`` seeded with stream key
    ``("operator-folds", seed)``; ``"target"``: ``GroupKFold`` on the target). ``ValueError`` for bad input or too few
    identities (the fold table is in the message)."""
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


# --- ridge solutions from one SVD ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _RidgePath:
    """Ridge regression with intercept at any penalty, from one SVD ``U diag(singular) vt`` of the centred inputs
    (``uty = U^T (s - s_mean)``)."""

    x_mean: np.ndarray
    s_mean: np.ndarray
    singular: np.ndarray
    uty: np.ndarray
    vt: np.ndarray

    def shrunk(self, alpha: float) -> np.ndarray:
        """``diag(sv / (sv^2 + alpha)) U^T (s - s_mean)`` (r, k): the solution in the right singular basis."""
        sv = self.singular
        return (sv / (sv**2 + alpha))[:, None] * self.uty

    def weights(self, alpha: float) -> tuple[np.ndarray, np.ndarray]:
        """Coefficients ``W`` (p, k) and intercept (k,) at penalty ``alpha``: ``s ~ x W + c``."""
        w = self.vt.T @ self.shrunk(alpha)
        return w, self.s_mean - self.x_mean @ w


def _ridge_path(x, s) -> _RidgePath:
    """The :class:`_RidgePath` of inputs ``x`` (n, p) and outputs ``s`` (n, k) (``scipy.linalg.svd``)."""
    x, s = np.asarray(x, dtype=np.float64), np.asarray(s, dtype=np.float64)
    xm, sm = x.mean(axis=0), s.mean(axis=0)
    u, sv, vt = linalg.svd(x - xm, full_matrices=False)
    return _RidgePath(x_mean=xm, s_mean=sm, singular=sv, uty=u.T @ (s - sm), vt=vt)


# --- penalty search -----------------------------------------------------------------------------------------


def _fold_factors(x: np.ndarray, s: np.ndarray, splits: Sequence[tuple[np.ndarray, np.ndarray]]) -> list[tuple]:
    """Per fold: the training part's :class:`_RidgePath`, the validation inputs in its basis, the validation outputs."""
    out = []
    for train, val in splits:
        path = _ridge_path(x[train], s[train])
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
    """Mean held-out R^2 of ridge with intercept for every penalty over ``GroupKFold(folds)`` on ``groups``: the
    numbers of ``GridSearchCV(Ridge(), scoring="r2")``, from one SVD per fold instead of one solve per penalty.

    Parameters
    ----------
    x, s : array_like, shapes (n, p) and (n, k)
    groups : array_like, shape (n,)
        One group key per row.
    alphas : sequence of float, shape (g,)
    folds : int

    Returns
    -------
    ndarray, shape (g,)

    See Also
    --------
    ridge_penalty_search : the search that scores its grid the same way.

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
    return _grid_record("ridge penalty", grid, scores.mean(axis=0), criterion=f"{_CV_CRITERION} ({folds} folds)",
                        score_se=se, initial_grid=initial, widenings=widenings, stopped=stopped)


def _is_flat(grid: np.ndarray, mean: np.ndarray, side: str, decades: float, tol: float) -> bool:
    """Whether the mean scores over the outermost widening step at ``side`` differ by at most ``tol``."""
    if grid.size < 2:
        return False
    k = len(_widen_log_grid(grid, side, decades))  # grid points per widening step at that edge
    outer = mean[:k + 1] if side == "lower" else mean[-(k + 1):]
    return bool(np.ptp(outer) <= tol)


def _sides_to_widen(probe: GridSearchRecord) -> set[str]:
    """Edges at which the best penalty or a penalty within one SE of it sits."""
    sides = {probe.edge} - {"interior"}
    one_se = probe.one_se_edge
    return sides | ({"lower", "upper"} & {one_se, "lower" if one_se == "both" else None,
                                          "upper" if one_se == "both" else None})


def ridge_penalty_search(x, s, splits: Sequence[tuple[np.ndarray, np.ndarray]], alphas: Sequence[float] = DEFAULT_ALPHAS,
                         *, widen: int = _MAX_WIDENINGS, widen_decades: float = _WIDEN_DECADES,
                         flat_tol: float = _FLAT_TOL) -> tuple[GridSearchRecord, np.ndarray]:
    """Cross-validated ridge penalty on a log grid, widened while the choice is not bracketed.

    Each penalty is scored by the mean held-out R^2 over the folds (as ``GridSearchCV(Ridge(), scoring="r2")``).
    The grid is widened by ``widen_decades`` decades at its own spacing on every side where the best penalty or one
    within one standard error of it sits at the edge (the CV R^2 of raw dlib embeddings has two local maxima), at
    most ``widen`` times; a side stops (``"flat"``) once its outermost mean scores differ by at most ``flat_tol``.

    Parameters
    ----------
    x, s : array_like, shapes (n, p) and (n, k)
        Inputs (donor and target embeddings side by side) and outputs (swap embeddings).
    splits : sequence of (train, validation) index arrays
        E.g. ``AffineOperator.cv.splits``.
    alphas : sequence of float > 0, default=DEFAULT_ALPHAS
        Initial grid (log-spaced).
    widen : int >= 0, default=5
        Maximum number of widenings (0: score the given grid only).
    widen_decades : float > 0, default=2.0
    flat_tol : float >= 0, default=1e-9

    Returns
    -------
    record : GridSearchRecord
        ``parameter="ridge penalty"``, with the fold standard errors; ``stopped`` is ``"interior"`` (chosen and
        near-best penalties inside the grid), ``"flat"``, ``"limit"`` or ``"not widened"``.
    fold_scores : ndarray, shape (folds, g)
        Held-out R^2 of every fold and grid value.

    Raises
    ------
    ValueError
        Non-positive penalties, fewer than two folds, or a negative ``widen``.

    See Also
    --------
    ridge_cv_r2 : the scores of its grid.
    fit_affine_operator : the fit that runs it.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(80, 3))
    >>> s = x @ rng.normal(size=(3, 2)) + 3.0 * rng.normal(size=(80, 2))
    >>> record, fold_scores = ridge_penalty_search(x, s, _cv_folds(np.arange(80) % 8, folds=4).splits)
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
            new = _widen_log_grid(grid, side, widen_decades)
            new_scores = _fold_scores(factors, new)
            if side == "lower":
                grid, scores = np.r_[new, grid], np.hstack([new_scores, scores])
            else:
                grid, scores = np.r_[grid, new], np.hstack([scores, new_scores])
        widenings += 1


_DETERMINED_REL_TOL = 0.10  # largest relative range over the one-SE penalties of a "determined" quantity
_WEAK_DIRECTION_RATIO = 1e-6  # input variance, relative to the largest, below which a direction is "weak"
_SENSITIVITY_QUANTITIES = ("rho_B", "sigma_max_B", "b_u", "rho_A", "r2", "mean_cosine")
_LYAPUNOV_RESIDUAL_TOL = 0.05  # largest Lyapunov residual (relative to the forcing) stationary_law accepts


@dataclass(frozen=True)
class AffineOperator:
    """A fitted ``s = A d + B t + c + e``.

    Attributes
    ----------
    A, B : ndarray, shape (d, d)
        Donor and target transfer matrices.
    c, residual_cov : ndarray, shapes (d,) and (d, d)
        Offset; covariance ``S_e`` of the training residuals.
    alpha : float
        Ridge penalty chosen by identity-disjoint cross-validation.
    cv_r2 : dict
        Mean cross-validated R^2 per penalty of the final (possibly widened) grid.
    n_train : int
    search : GridSearchRecord or None
        The penalty search (``None`` for an operator built by hand).
    cv : CVFolds or None
        The folds the penalty was chosen on.

    See Also
    --------
    fit_affine_operator : fits it.
    spectral_summary, rollout, stationary_law : its spectra, the cascade it models and its stationary law.

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
                        folds: int = 5, roles: str = "both", seed: Any = 0, widen: int = _MAX_WIDENINGS,
                        widen_decades: float = _WIDEN_DECADES, flat_tol: float = _FLAT_TOL) -> AffineOperator:
    """Ridge fit of ``s = A d + B t + c`` with the penalty chosen by identity-disjoint cross-validation
    (*Toward Interpretable Privacy Guarantees in Face-Swapping Anonymization*, Section VI-A).

    Parameters
    ----------
    donors, targets, swaps : array_like, shape (n, d)
        Raw embeddings of each triplet's donor image, target image and swap output.
    groups : array_like, shape (n, 2) or (n,)
        Donor identity and target identity of each triplet (folds per ``roles``), or one identity key per triplet
        (``GroupKFold`` on it).
    alphas : sequence of float, default=DEFAULT_ALPHAS
        Initial ridge penalty grid (widened by :func:`epsaudit.operator.ridge_penalty_search`).
    folds : int, default=5
        Number of folds (paper: 5).
    roles : ``"both"`` or ``"target"``, default="both"
        For two-column ``groups``: ``"both"`` assigns each identity to one fold (seeded) and validates fold ``k`` on
        the triplets with both identities in it, training on those with neither; ``"target"`` groups by the
        target identity alone (``GroupKFold``).
    seed : int or tuple, default=0
        Identity-to-fold assignment (``roles="both"``): a base seed or a stream key.
    widen, widen_decades, flat_tol
        Grid widening (:func:`epsaudit.operator.ridge_penalty_search`; ``widen=0`` scores ``alphas`` only).

    Returns
    -------
    AffineOperator
        Fitted on all ``n`` triplets at the chosen penalty (``Ridge(solver="svd")``); ``search`` records the
        penalty's edge status, ``cv`` the folds.

    Raises
    ------
    ValueError
        Mismatched shapes, NaN/inf, too few distinct identities for the folds (the fold table is in the message),
        or bad search settings.

    See Also
    --------
    AffineOperator : what it returns.
    ridge_penalty_search : the penalty search it runs.
    prediction_quality, baseline_predictions : the fit's held-out quality and the baselines.
    spectral_summary, rollout, stationary_law : what the fitted operator implies.

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
    cv = _cv_folds(groups, roles=roles, folds=folds, seed=seed)
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


# --- which numbers the penalty decides ----------------------------------------------------------------------


def weak_directions(donors, targets, *, ratio: float = _WEAK_DIRECTION_RATIO) -> int:
    """Number of directions of the centred inputs ``[d, t]`` (of ``2 dim``) whose variance is below ``ratio`` times
    the largest. Ridge fixes ``B`` on them by the penalty, not the data, so they can set ``sigma_max(B)`` while
    predictions barely change. Raw dlib embeddings have dozens; SFace's none.

    Parameters
    ----------
    donors, targets : array_like, shape (n, d)
    ratio : float, default=1e-6
        Variance threshold relative to the largest input variance.

    Returns
    -------
    int
        In ``0 .. 2 d``.

    See Also
    --------
    penalty_sensitivity : the fitted quantities across penalties (what such directions can move).
    fit_affine_operator : the fit on these inputs.

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
    """The fitted quantities at every penalty of the operator's (widened) search grid: the operator refitted on
    ``train`` (one SVD, as ``Ridge(solver="svd")``), its :func:`spectral_summary` over the ``test`` targets and its
    :func:`prediction_quality` on ``test``.

    Parameters
    ----------
    op : AffineOperator
        From :func:`fit_affine_operator` (needs ``op.search``).
    train, test : tuple of (donors, targets, swaps) arrays, shapes (n, d) and (m, d)
        ``train`` must be the triplets ``op`` was fitted on.

    Returns
    -------
    pandas.DataFrame
        One row per penalty, increasing: ``alpha``, ``cv_r2``, ``cv_se``, ``within_one_se`` (mean CV R^2 within one
        standard error of the best), ``chosen``, ``rho_B``, ``sigma_max_B``, ``b_u``, ``rho_A``, ``r2`` and
        ``mean_cosine`` (the last two on ``test``).

    Raises
    ------
    ValueError
        ``op`` without a search record, or ``train`` of another size than ``op.n_train``.

    See Also
    --------
    penalty_determination : which quantities the data determine.
    ridge_penalty_search : the search grid.
    weak_directions : input directions that the penalty, not the data, fixes.

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
    path = _ridge_path(np.hstack([d, t]), s)
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


def penalty_determination(sensitivity: pd.DataFrame, *, rel_tol: float = _DETERMINED_REL_TOL) -> pd.DataFrame:
    """Which fitted quantities the data determine: their range over the one-standard-error penalties.

    Parameters
    ----------
    sensitivity : pandas.DataFrame
        :func:`penalty_sensitivity` (rows in increasing penalty).
    rel_tol : float, default=0.1
        A quantity is determined if ``(high - low) <= rel_tol * |value|``.

    Returns
    -------
    pandas.DataFrame
        One row per quantity of :func:`penalty_sensitivity`: ``value`` (at the chosen penalty), ``low``, ``high``
        (over the one-SE penalties), ``relative_range`` (``(high - low) / |value|``), ``determined`` and ``note``:
        whether the one-SE penalties reach a grid edge and the quantity has stopped changing there (its two
        outermost values agree to 1e-6, relative: range complete) or not (the range is a lower bound); for
        ``rho_B``, whether the range straddles 1 (whether the cascade forgets the target is then not determined).

    Raises
    ------
    ValueError
        Not exactly one chosen penalty.

    See Also
    --------
    penalty_sensitivity : the quantities at every penalty, which it ranges over.
    ridge_penalty_search : the cross-validated search that defines the one-standard-error penalties.

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
    for q in _SENSITIVITY_QUANTITIES:
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
    """Mean cosine(predicted, actual), R^2 (pooled over coordinates) and the residual fraction
    ``||s - s_hat||^2 / ||s - mean(s)||^2`` of held-out swaps (the quality measures of the paper's Table II).

    Parameters
    ----------
    predicted, swaps : array_like, shape (n, d)

    Returns
    -------
    dict
        ``mean_cosine``, ``r2`` and ``residual_fraction`` (``r2 = 1 - residual_fraction``).

    See Also
    --------
    baseline_predictions : the baselines to compare with.
    fit_affine_operator : the fit whose predictions are measured.

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
    k : int, default=10
        Neighbours of the kNN baseline (``sklearn.neighbors.KNeighborsRegressor``).

    Returns
    -------
    dict
        ``copy_donor`` and ``knn``, each of shape (m, d).

    Raises
    ------
    ValueError
        Mismatched shapes or NaN/inf.

    See Also
    --------
    prediction_quality : the quality of these predictions.
    fit_affine_operator : the operator they are compared with.

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

    See Also
    --------
    stationary_law : the stationary law, which exists when ``rho(B) < 1``.
    rollout : the cascade ``B`` drives.
    AffineOperator : the operator summarised.

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
        Donor embedding of each pass, per chain or shared (e.g. the donor mean for the noiseless expectation).
    noise : bool, default=False
        Add ``e_k ~ N(0, residual_cov)`` (Monte Carlo rollout).
    seed : int, tuple or Generator, default=0
        Of the noise (stream key ``("rollout", seed)`` for an int; a Generator is used as it is).

    Returns
    -------
    ndarray, shape (K + 1, m, d)

    Raises
    ------
    ValueError
        ``donors_per_pass`` of a shape that does not match ``start``.

    See Also
    --------
    stationary_law : the law the cascade settles to.
    spectral_summary : the spectra that govern it (``rho(B)``).

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

    The covariance solves the discrete Lyapunov equation and is returned symmetrised, ``(S + S^T) / 2``: with the
    large, non-normal ``B`` of a barely penalised fit the solver's rounding is asymmetric up to ~1e-2 of the
    largest entry (which ``Generator.multivariate_normal`` warns about).

    Returns
    -------
    mean : ndarray, shape (d,)
    cov : ndarray, shape (d, d), symmetric

    Raises
    ------
    ValueError
        If ``rho(B) >= 1`` (no stationary law: the cascade does not forget the target), or if the symmetrised
        solution's :func:`lyapunov_residual` exceeds 5% (the solve is numerically unreliable).

    See Also
    --------
    rollout : the cascade it is the limit of.
    lyapunov_residual : the check of its covariance.
    spectral_summary : whether the law exists (``rho(B) < 1``).

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
    if residual > _LYAPUNOV_RESIDUAL_TOL:
        raise ValueError(f"the stationary covariance solves S = B S B^T + F only to {residual:.2%} of F's largest "
                         f"entry (tolerance {_LYAPUNOV_RESIDUAL_TOL:.0%}): B is too ill-conditioned for a reliable "
                         "stationary law")
    return mean, cov


def lyapunov_residual(B, cov, forcing) -> float:
    """Relative residual ``max|S - B S B^T - F| / max|F|`` of a discrete Lyapunov solution: near 1e-15 for a
    well-conditioned ``B``, ~1e-3 for the non-normal ``B`` of a barely penalised fit (``sigma_max(B)`` ~ 1e5).

    Parameters
    ----------
    B, cov, forcing : array_like, shape (d, d)

    Returns
    -------
    float

    See Also
    --------
    stationary_law : the covariance it checks.

    Examples
    --------
    >>> lyapunov_residual(0.5 * np.eye(1), [[4 / 3]], [[1.0]]) < 1e-12
    True
    """
    B, cov, forcing = (np.asarray(a, dtype=np.float64) for a in (B, cov, forcing))
    return float(np.abs(cov - B @ cov @ B.T - forcing).max() / np.abs(forcing).max())
