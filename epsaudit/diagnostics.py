"""Diagnostics of the face-data audits (paper 000, Section 4 "Diagnostics"; SPEC section 5).

They probe the assumptions behind each route rather than produce an epsilon: Gaussianity of the
within-identity residuals (GaussMech), KDE-LR's sensitivity to its smoothing weight, MMD-TV's
sensitivity to the kernel bandwidth and its gap to a classifier witness, ROC-HT's sensitivity to
the classifier, and same-identity split-half controls (where no signal should be found).

Grid searches and sweeps. Every hyperparameter that is chosen over a grid (the operator's ridge
penalty, :func:`epsaudit.operator.fit_affine_operator`) or whose effect is swept (MMD-TV's bandwidth,
:func:`bandwidth_sweep`) carries a :class:`GridSearchRecord`: the grid, the score of every grid
value, the chosen (best-scoring) value and whether it is *interior* or sits at the *lower* or
*upper* edge of the grid, and whether and how often the grid was widened. A choice at an edge is
not determined by the data: a wider grid could move it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.ensemble import RandomForestClassifier

from .audits import mmd_tv_pairs, roc_oof_pairs
from .results import results_frame
from .validation import as_groups

SHAPIRO_MAX_ROWS = 5000  # scipy's Shapiro-Wilk p-value is accurate up to N = 5000
BANDWIDTH_SCALES = (0.5, 0.75, 1.0, 1.5, 2.0)
#: :func:`bandwidth_sweep` widens its scale grid by this factor per step (halve below, double above).
BANDWIDTH_WIDEN_FACTOR = 2.0
#: Where a grid's best value sits: strictly inside, at the smallest or largest grid value, or a
#: grid of one value (nothing was searched).
EDGES = ("interior", "lower", "upper", "fixed")


# -------------------------------------------------------------------------------------------------
# grid-search records


@dataclass(frozen=True)
class GridSearchRecord:
    """Where the best value of a searched (or swept) hyperparameter sits in its grid.

    Build one with :func:`grid_record`, which computes ``chosen`` and ``edge``.

    Attributes
    ----------
    parameter : str
        What was searched, e.g. ``"ridge penalty"`` or ``"bandwidth scale"``.
    criterion : str
        What ``scores`` are, e.g. ``"mean held-out R^2 over 5 folds"``.
    grid : tuple of float, shape (g,)
        The final grid, strictly increasing (after any widening).
    scores : tuple of float, shape (g,)
        The criterion at every grid value.
    chosen : float
        The best grid value (first of equal scores, i.e. the smallest, as ``GridSearchCV``).
    edge : str
        One of :data:`EDGES`: ``"interior"``, ``"lower"``/``"upper"`` (the chosen value is the
        smallest/largest of the final grid) or ``"fixed"`` (a one-value grid).
    initial_grid : tuple of float
        The grid before widening.
    widenings : int
        How many times the grid was extended beyond an edge (0: not widened).
    stopped : str
        Why the search ended: ``"interior"`` (best value inside the grid), ``"limit"`` (the
        allowed widenings were used up with the best value still at an edge), ``"flat"`` (the
        scores at the edge no longer changed, so widening further cannot move the choice),
        ``"not widened"`` (widening disabled) or ``"fixed"``.
    score_se : tuple of float or None, shape (g,)
        Standard error of each score over the folds (``std(ddof=1) / sqrt(folds)``), if the
        criterion is a cross-validation mean.
    maximise : bool
        Higher scores are better.
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
        if self.edge not in EDGES:
            raise ValueError(f"edge must be one of {EDGES}, got {self.edge!r}")
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
        return float(self.scores[self.index])

    def within_one_se(self) -> np.ndarray:
        """Boolean mask over ``grid``: scores within one standard error of the best score (the
        one-standard-error rule: values the criterion cannot tell apart from the chosen one).

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
        """Smallest and largest grid value within one standard error of the best (``None``
        without standard errors). The set need not be contiguous (see :meth:`within_one_se`)."""
        if self.score_se is None:
            return None
        values = np.asarray(self.grid)[self.within_one_se()]
        return float(values.min()), float(values.max())

    @property
    def one_se_edge(self) -> str | None:
        """Whether the one-standard-error set reaches a grid edge: ``"interior"``, ``"lower"``,
        ``"upper"`` or ``"both"`` (``None`` without standard errors). At an edge, values beyond
        the grid might be as good: a spread measured over the set is then a lower bound."""
        if self.score_se is None:
            return None
        mask = self.within_one_se()
        lo, hi = bool(mask[0]), bool(mask[-1])
        return "both" if lo and hi else "lower" if lo else "upper" if hi else "interior"

    def as_row(self) -> dict[str, Any]:
        """One table row: ``parameter``, ``chosen``, ``edge``, ``determined``, ``widenings``,
        ``stopped``, ``grid_low``/``grid_high``/``grid_points``, ``initial_low``/``initial_high``,
        ``best_score``, ``one_se_low``/``one_se_high``/``one_se_edge`` (``<NA>`` without standard
        errors) and ``criterion``."""
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


def grid_record(parameter: str, grid: Sequence[float], scores: Sequence[float], *, criterion: str,
                maximise: bool = True, score_se: Sequence[float] | None = None,
                initial_grid: Sequence[float] | None = None, widenings: int = 0,
                stopped: str | None = None) -> GridSearchRecord:
    """A :class:`GridSearchRecord` from a grid and its scores: the best value and its edge status.

    Parameters
    ----------
    parameter, criterion : str
    grid : sequence of float, shape (g,)
        Strictly increasing.
    scores : sequence of float, shape (g,)
        Finite.
    maximise : bool
        Higher is better (else lower is).
    score_se : sequence of float, shape (g,), optional
    initial_grid : sequence of float, optional
        The grid before widening (default: ``grid``).
    widenings : int
    stopped : str, optional
        Default: ``"fixed"`` for a one-value grid, ``"interior"`` for an interior choice, else
        ``"not widened"``.

    Returns
    -------
    GridSearchRecord
        ``chosen`` is the first best value (the smallest of equal scores, as ``GridSearchCV``).

    Raises
    ------
    ValueError
        An empty grid, lengths that differ, a grid that is not strictly increasing, or NaN/inf
        scores (named by grid value).
    """
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


def widen_log_grid(grid: Sequence[float], side: str, decades: float) -> np.ndarray:
    """Values extending a positive, log-spaced grid by ``decades`` decades beyond one edge, at the
    grid's own spacing at that edge.

    Parameters
    ----------
    grid : sequence of float
        Positive, strictly increasing.
    side : ``"lower"`` or ``"upper"``
    decades : float > 0

    Returns
    -------
    ndarray
        The new values only, increasing (e.g. ``[1e-5, 3.16e-5, 1e-4, 3.16e-4]`` below
        ``[1e-3, 3.16e-3, ...]`` for two decades).

    Raises
    ------
    ValueError
        A non-positive grid or ``decades``, or an unknown side.
    """
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


def pooled_residuals(groups: Mapping[Hashable, np.ndarray]) -> np.ndarray:
    """Within-identity residuals ``x - mean(identity)`` of every row, pooled: shape (N, d)."""
    groups = as_groups(groups)
    return np.vstack([x - x.mean(axis=0) for x in groups.values()])


def shapiro_wilk(groups: Mapping[Hashable, np.ndarray], *, max_rows: int = SHAPIRO_MAX_ROWS, seed: int = 0) -> pd.DataFrame:
    """Shapiro-Wilk test of Gaussianity per coordinate of the pooled within-identity residuals.

    Parameters
    ----------
    groups : mapping identity -> (n_i, d) array
    max_rows : int
        A seeded subsample of this many pooled rows is tested (the paper uses 5,000 for its Q-Q plots).
    seed : int

    Returns
    -------
    pandas.DataFrame
        One row per coordinate: ``coordinate``, ``W``, ``p_value``, sorted by ``W`` ascending
        (least Gaussian first). Count rejections with ``(frame.p_value < 1e-3).sum()``.
    """
    residuals = pooled_residuals(groups)
    if len(residuals) > max_rows:
        residuals = residuals[np.random.default_rng(seed).choice(len(residuals), max_rows, replace=False)]
    rows = [(j, *stats.shapiro(residuals[:, j])) for j in range(residuals.shape[1])]
    return pd.DataFrame(rows, columns=["coordinate", "W", "p_value"]).sort_values("W").reset_index(drop=True)


def bandwidth_sweep(groups, pairs, *, scales: Sequence[float] = BANDWIDTH_SCALES, widen: int = 0,
                    statistic: str = "max", n_jobs: int | None = None) -> pd.DataFrame:
    """MMD-TV sample value under bandwidths ``scale x`` the median heuristic (*Picture the Epsilon*,
    Section 4 "Diagnostics": 0.5 ... 2), with where its peak over the scales sits.

    The sweep is a sensitivity check, not a choice: the audits use the median heuristic (scale 1).
    What it can show is at which bandwidth the largest value sits; if that is an edge of the scales,
    a wider sweep could find larger values (:func:`bandwidth_sweep_record`).

    Parameters
    ----------
    groups : mapping identity -> (n_i, d) array
    pairs : sequence of (identity, identity)
    scales : sequence of float > 0
        Multipliers of the median-heuristic bandwidth (sorted here).
    widen : int
        While ``statistic`` peaks at an edge scale, add one scale beyond it (half the smallest or
        twice the largest, :data:`BANDWIDTH_WIDEN_FACTOR`), at most this many times (0: the given
        scales only).
    statistic : ``"max"`` or ``"median"``
        The column whose peak decides the widening.
    n_jobs : int, optional

    Returns
    -------
    pandas.DataFrame
        One row per scale, increasing: ``bandwidth_scale``, ``max`` and ``median`` of the MMD-TV
        value over the computed pairs, ``pairs`` (computed), ``not_computed`` (pairs the route
        could not compute at that scale, counted, never dropped silently: their values are NaN)
        and ``added`` (True for scales added by widening). The peak's position is
        ``bandwidth_sweep_record(frame)``.

    Raises
    ------
    ValueError
        Non-positive or repeated scales, a negative ``widen``, an unknown ``statistic``, or no pair
        computed at some scale.
    """
    if statistic not in ("max", "median"):
        raise ValueError(f"statistic must be 'max' or 'median', got {statistic!r}")
    if int(widen) < 0:
        raise ValueError(f"widen must be >= 0, got {widen}")
    initial = np.sort(np.asarray(list(scales), dtype=np.float64))
    if initial.size == 0 or np.any(initial <= 0) or np.any(np.diff(initial) <= 0):
        raise ValueError(f"scales must be positive and distinct, got {list(scales)}")

    def row(scale: float, added: bool) -> dict[str, Any]:
        values = np.array([r.value for r in mmd_tv_pairs(groups, pairs, bandwidth_scale=float(scale), n_jobs=n_jobs)],
                          dtype=np.float64)
        ok = np.isfinite(values)
        if not ok.any():
            raise ValueError(f"MMD-TV computed no pair at bandwidth scale {scale:g}")
        return {"bandwidth_scale": float(scale), "max": float(values[ok].max()), "median": float(np.median(values[ok])),
                "pairs": int(ok.sum()), "not_computed": int((~ok).sum()), "added": added}

    rows = [row(s, False) for s in initial]
    for _ in range(int(widen)):
        frame = pd.DataFrame(rows).sort_values("bandwidth_scale")
        record = grid_record("bandwidth scale", frame["bandwidth_scale"], frame[statistic], criterion=statistic)
        if record.edge == "lower":
            rows.append(row(frame["bandwidth_scale"].iloc[0] / BANDWIDTH_WIDEN_FACTOR, True))
        elif record.edge == "upper":
            rows.append(row(frame["bandwidth_scale"].iloc[-1] * BANDWIDTH_WIDEN_FACTOR, True))
        else:
            break
    return pd.DataFrame(rows).sort_values("bandwidth_scale").reset_index(drop=True)


def bandwidth_sweep_record(sweep: pd.DataFrame, statistic: str = "max") -> GridSearchRecord:
    """Where the :func:`bandwidth_sweep` statistic peaks over the bandwidth scales.

    Parameters
    ----------
    sweep : pandas.DataFrame
        :func:`bandwidth_sweep` output (``bandwidth_scale``, ``statistic`` and, if widened,
        ``added``).
    statistic : ``"max"`` or ``"median"``

    Returns
    -------
    GridSearchRecord
        ``parameter="bandwidth scale"``, ``criterion`` the statistic; ``chosen`` the peak scale
        (the smallest of equal values); ``edge`` whether it is interior to the swept scales;
        ``initial_grid`` the scales not added by widening; ``stopped`` ``"interior"``,
        ``"not widened"`` (peak at an edge of the given scales) or ``"limit"`` (still at an edge
        after the sweep's widenings; :func:`bandwidth_sweep` only stops widening at an interior
        peak or at its limit).

    Raises
    ------
    ValueError
        Missing columns or NaN values (:func:`grid_record`).
    """
    missing = [c for c in ("bandwidth_scale", statistic) if c not in sweep.columns]
    if missing:
        raise ValueError(f"sweep lacks column(s) {missing}; expected bandwidth_sweep output")
    frame = sweep.sort_values("bandwidth_scale")
    added = frame["added"].to_numpy(dtype=bool) if "added" in frame.columns else np.zeros(len(frame), dtype=bool)
    criterion = f"{statistic} of MMD-TV over the pairs"
    probe = grid_record("bandwidth scale", frame["bandwidth_scale"], frame[statistic], criterion=criterion)
    stopped = probe.stopped if probe.edge in ("interior", "fixed") else "limit" if added.any() else "not widened"
    return grid_record("bandwidth scale", frame["bandwidth_scale"], frame[statistic], criterion=criterion,
                       initial_grid=frame.loc[~added, "bandwidth_scale"].to_numpy(), widenings=int(added.sum()),
                       stopped=stopped)


def witness_gap(per_pair: pd.DataFrame) -> dict[str, float]:
    """Classifier-witness TV ``max(TPR - FPR)`` against ``MMD / 2`` on the pairs both routes audited.

    Parameters
    ----------
    per_pair : DataFrame
        :func:`epsaudit.results.results_frame` rows holding ``roc_oof`` (detail ``tv_witness``)
        and ``mmd_tv`` (detail ``mmd``) results.

    Returns
    -------
    dict
        ``mean_ratio`` (mean of TV_witness / (MMD/2) over pairs with MMD > 0), ``mean_tv_witness``,
        ``mean_half_mmd``, ``pairs``, ``pairs_with_zero_mmd`` (excluded from the ratio).
    """
    keys = ["identity_a", "identity_b"]
    roc = per_pair[per_pair["route"] == "roc_oof"].set_index(keys)["tv_witness"]
    mmd = per_pair[per_pair["route"] == "mmd_tv"].set_index(keys)["mmd"]
    joined = pd.concat({"tv": roc, "mmd": mmd}, axis=1, join="inner").astype(float)
    positive = joined[joined["mmd"] > 0]
    return {
        "mean_ratio": float(np.mean(positive["tv"] / (positive["mmd"] / 2))) if len(positive) else float("nan"),
        "mean_tv_witness": float(joined["tv"].mean()),
        "mean_half_mmd": float((joined["mmd"] / 2).mean()),
        "pairs": int(len(joined)),
        "pairs_with_zero_mmd": int(len(joined) - len(positive)),
    }


def random_forest() -> RandomForestClassifier:
    """The paper's sensitivity scorer: a random forest of 100 trees, otherwise scikit-learn defaults (seeded)."""
    return RandomForestClassifier(n_estimators=100, random_state=0)


def classifier_sensitivity(groups, pairs, *, alternative: Any = None, seed: int = 0, n_jobs: int | None = None) -> pd.DataFrame:
    """Out-of-fold AUC of logistic regression and of ``alternative`` (default random forest) on the
    same pairs and identical folds (paper 000, "ROC-HT: classifier sensitivity").

    Returns
    -------
    pandas.DataFrame
        Per pair: ``identity_a``, ``identity_b``, ``auc_logistic``, ``auc_alternative``, ``difference``
        (logistic minus alternative).
    """
    alternative = random_forest() if alternative is None else alternative
    base = results_frame(roc_oof_pairs(groups, pairs, seed=seed, n_jobs=n_jobs))
    alt = results_frame(roc_oof_pairs(groups, pairs, classifier=alternative, seed=seed, n_jobs=n_jobs))
    out = base[["identity_a", "identity_b"]].copy()
    out["auc_logistic"] = base["auc"].to_numpy()
    out["auc_alternative"] = alt["auc"].to_numpy()
    out["difference"] = out["auc_logistic"] - out["auc_alternative"]
    return out


def split_half_groups(groups: Mapping[Hashable, np.ndarray], *, seed: int = 0, min_rows: int = 10) -> tuple[dict, list]:
    """Split each identity's rows at random into two halves labelled ``(identity, 0)`` and ``(identity, 1)``.

    Identities with fewer than ``min_rows`` rows are skipped (halves need >= 5 rows for 5-fold CV).

    Returns
    -------
    tuple
        ``(halves, pairs)``: a groups mapping and the same-identity pairs ``((id, 0), (id, 1))``.
    """
    groups = as_groups(groups)
    rng = np.random.default_rng(seed)
    halves, pairs = {}, []
    for label, x in groups.items():
        if len(x) < min_rows:
            continue
        order = rng.permutation(len(x))
        half = len(x) // 2
        halves[(label, 0)], halves[(label, 1)] = x[order[:half]], x[order[half:]]
        pairs.append(((label, 0), (label, 1)))
    if not pairs:
        raise ValueError(f"no identity has >= {min_rows} rows for a split-half control")
    return halves, pairs


def split_half_controls(groups, *, permutations: int = 1000, seed: int = 0, level: float = 0.05,
                        n_jobs: int | None = None) -> dict[str, float]:
    """Same-identity split-half controls: MMD permutation tests and out-of-fold ROC on two halves of
    one identity, where the null holds by construction.

    Returns
    -------
    dict
        ``controls``, ``mmd_rejections`` (p <= ``level``), ``mmd_rejection_rate``, ``mean_mmd2_u``,
        ``mean_auc``, ``exact_corners``, ``infinite_roc``.
    """
    halves, pairs = split_half_groups(groups, seed=seed)
    mmd = mmd_tv_pairs(halves, pairs, permutations=permutations, seed=seed, n_jobs=n_jobs)
    roc = roc_oof_pairs(halves, pairs, seed=seed, n_jobs=n_jobs)
    rejections = sum(r.details["p_value"] <= level for r in mmd)
    return {
        "controls": len(pairs),
        "mmd_rejections": int(rejections),
        "mmd_rejection_rate": rejections / len(pairs),
        "mean_mmd2_u": float(np.mean([r.details["mmd2_u"] for r in mmd])),
        "mean_auc": float(np.mean([r.details["auc"] for r in roc])),
        "exact_corners": int(sum(r.details["exact_corner"] for r in roc)),
        "infinite_roc": int(sum(np.isinf(r.value) for r in roc)),
    }
