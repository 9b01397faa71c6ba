"""Diagnostics of the face-data audits (paper 000, Section 4 "Diagnostics"; SPEC section 5).

They probe the assumptions behind each route rather than produce an epsilon: Gaussianity of the
within-identity residuals (GaussMech), KDE-LR's sensitivity to its smoothing weight, MMD-TV's
sensitivity to the kernel bandwidth and its gap to a classifier witness, ROC-HT's sensitivity to
the classifier, and same-identity split-half controls (where no signal should be found).

The bandwidth sweep records where its peak sits (:class:`epsaudit.grids.GridSearchRecord`): a
peak at an edge of the swept scales is not determined by the data.
"""

from __future__ import annotations

from typing import Any, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.ensemble import RandomForestClassifier

from .audits import mmd_tv_pairs, roc_oof_pairs
from .grids import GridSearchRecord, grid_record
from .results import results_frame
from .validation import as_groups
from .seeds import stream

SHAPIRO_MAX_ROWS = 5000  # scipy's Shapiro-Wilk p-value is accurate up to N = 5000
BANDWIDTH_SCALES = (0.5, 0.75, 1.0, 1.5, 2.0)
#: :func:`bandwidth_sweep` widens its scale grid by this factor per step (halve below, double above).
BANDWIDTH_WIDEN_FACTOR = 2.0


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
        residuals = residuals[stream("shapiro-subsample", seed).choice(len(residuals), max_rows, replace=False)]
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
    halves, pairs = {}, []
    for label, x in groups.items():
        if len(x) < min_rows:
            continue
        order = stream("split-half", seed, label).permutation(len(x))
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
