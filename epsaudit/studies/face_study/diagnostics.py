"""Chapter 3's diagnostics of the face audits (*Picture the Epsilon*, Section IV-D).

They probe the assumptions behind each route rather than produce an epsilon: Gaussianity of the
within-identity residuals (GaussMech), KDE-LR's sensitivity to its smoothing weight, MMD-TV's
sensitivity to the kernel bandwidth and its gap to a classifier witness, ROC-HT's sensitivity to
the classifier, and same-identity split-half controls (where no signal should be found).

The first part holds the diagnostics themselves (they take any ``groups`` mapping identity ->
rows); the second part runs them on the chapter's conditions and shapes the chapter's tables and
the numbers its prose quotes. :mod:`epsaudit.studies.face_study` re-exports every public name.

The bandwidth sweep records where its peak sits (:class:`epsaudit.grids.GridSearchRecord`): a
peak at an edge of the swept scales is not determined by the data.

Random streams: every function that draws takes ``seed`` as a base seed (int) or a stream key
(tuple; :func:`epsaudit.seeds.generator`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.ensemble import RandomForestClassifier

from ...audits import mmd_tv_pairs, roc_oof_pairs
from ...condition import ConditionAudit
from ...grids import GridSearchRecord, grid_record
from ...results import results_frame
from ...seeds import generator
from ...settings import AuditSettings
from ...validation import as_groups
from . import DIAGNOSTICS, LEVELS, Stopwatch, condition_label, labelled, present
from .pages import condition_text

SHAPIRO_MAX_ROWS = 5000  # scipy's Shapiro-Wilk p-value is accurate up to N = 5000
BANDWIDTH_SCALES = (0.5, 0.75, 1.0, 1.5, 2.0)
#: :func:`bandwidth_sweep` widens its scale grid by this factor per step (halve below, double above).
BANDWIDTH_WIDEN_FACTOR = 2.0
#: Shapiro-Wilk rejection level of the chapter (and of the paper).
SHAPIRO_LEVEL = 1e-3


def pooled_residuals(groups: Mapping[Hashable, np.ndarray]) -> np.ndarray:
    """Within-identity residuals ``x - mean(identity)`` of every row, pooled.

    Returns
    -------
    numpy.ndarray, shape (N, d)
        In the units of the rows (unit-norm embedding units for the face tables).
    """
    groups = as_groups(groups)
    return np.vstack([x - x.mean(axis=0) for x in groups.values()])


def shapiro_wilk(groups: Mapping[Hashable, np.ndarray], *, max_rows: int = SHAPIRO_MAX_ROWS,
                 seed: int | tuple = 0) -> pd.DataFrame:
    """Shapiro-Wilk test of Gaussianity per coordinate of the pooled within-identity residuals.

    Parameters
    ----------
    groups : mapping identity -> (n_i, d) array
    max_rows : int
        A seeded subsample of this many pooled rows is tested (the paper uses 5,000 for its Q-Q plots).
    seed : int or tuple
        Base seed or stream key of the subsample (purpose ``"shapiro-subsample"``).

    Returns
    -------
    pandas.DataFrame
        One row per coordinate: ``coordinate``, ``W``, ``p_value``, sorted by ``W`` ascending
        (least Gaussian first). Count rejections with ``(frame.p_value < 1e-3).sum()``.
    """
    residuals = pooled_residuals(groups)
    if len(residuals) > max_rows:
        residuals = residuals[generator(seed, "shapiro-subsample").choice(len(residuals), max_rows, replace=False)]
    rows = [(j, *stats.shapiro(residuals[:, j])) for j in range(residuals.shape[1])]
    return pd.DataFrame(rows, columns=["coordinate", "W", "p_value"]).sort_values("W").reset_index(drop=True)


def bandwidth_sweep(groups, pairs, *, scales: Sequence[float] = BANDWIDTH_SCALES, widen: int = 0,
                    statistic: str = "max", n_jobs: int | None = None) -> pd.DataFrame:
    """MMD-TV sample value under bandwidths ``scale x`` the median heuristic (*Picture the Epsilon*,
    Section IV-D: 0.5 ... 2), with where its peak over the scales sits.

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
        Missing columns or NaN values (:func:`epsaudit.grids.grid_record`).
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
    """The paper's sensitivity scorer (*Picture the Epsilon*, Section IV-D).

    Returns
    -------
    sklearn.ensemble.RandomForestClassifier
        100 trees, otherwise scikit-learn's defaults, ``random_state=0``.
    """
    return RandomForestClassifier(n_estimators=100, random_state=0)


def classifier_sensitivity(groups, pairs, *, alternative: Any = None, seed: int | tuple = 0,
                           n_jobs: int | None = None) -> pd.DataFrame:
    """Out-of-fold AUC of logistic regression and of ``alternative`` (default random forest) on the
    same pairs and identical folds (*Picture the Epsilon*, Section IV-D, "ROC-HT: classifier
    sensitivity").

    Parameters
    ----------
    groups : mapping identity -> (n_i, d) array
    pairs : sequence of (identity, identity)
    alternative : scikit-learn classifier, optional
        Default :func:`random_forest`.
    seed : int or tuple
        Seed of the folds (the same for both classifiers).
    n_jobs : int, optional

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


def split_half_groups(groups: Mapping[Hashable, np.ndarray], *, seed: int | tuple = 0,
                      min_rows: int = 10) -> tuple[dict, list]:
    """Split each identity's rows at random into two halves labelled ``(identity, 0)`` and ``(identity, 1)``.

    Identities with fewer than ``min_rows`` rows are skipped (halves need >= 5 rows for 5-fold CV).
    One stream per identity (purpose ``"split-half"``, then the identity).

    Returns
    -------
    tuple
        ``(halves, pairs)``: a groups mapping and the same-identity pairs ``((id, 0), (id, 1))``.

    Raises
    ------
    ValueError
        If no identity has ``min_rows`` rows.
    """
    groups = as_groups(groups)
    halves, pairs = {}, []
    for label, x in groups.items():
        if len(x) < min_rows:
            continue
        order = generator(seed, "split-half", label).permutation(len(x))
        half = len(x) // 2
        halves[(label, 0)], halves[(label, 1)] = x[order[:half]], x[order[half:]]
        pairs.append(((label, 0), (label, 1)))
    if not pairs:
        raise ValueError(f"no identity has >= {min_rows} rows for a split-half control")
    return halves, pairs


def split_half_controls(groups, *, permutations: int = 1000, seed: int | tuple = 0, level: float = 0.05,
                        n_jobs: int | None = None) -> dict[str, float]:
    """Same-identity split-half controls: MMD permutation tests and out-of-fold ROC on two halves of
    one identity, where the null holds by construction (*Picture the Epsilon*, Section IV-D).

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


# -------------------------------------------------------------------------------------------------
# the chapter's diagnostics tables


def shapiro_study(groups: Mapping[str, Mapping[Hashable, np.ndarray]], dim: int, *,
                  seed: int | tuple = 0) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """:func:`shapiro_wilk` of every condition, and the chapter's Gaussianity table.

    Parameters
    ----------
    groups : mapping condition name -> groups
    dim : int
        Coordinates of the embeddings.
    seed : int or tuple

    Returns
    -------
    tuple
        ``(table, tests)``: one row per condition (index (encoder, data, generator); ``residual
        rows``, ``rejections (p<1e-3)``, ``coordinates``, ``min W``, ``fraction`` of the
        coordinates rejected), and condition name -> the per-coordinate :func:`shapiro_wilk` table.
    """
    shapiro = {n: shapiro_wilk(groups[n], seed=seed) for n in present(groups)}
    sw = labelled({n: {"residual rows": sum(len(g) for g in groups[n].values()),
                       "rejections (p<1e-3)": int((shapiro[n].p_value < SHAPIRO_LEVEL).sum()),
                       "coordinates": dim,
                       "min W": float(shapiro[n].W.min())} for n in present(groups)})
    sw["fraction"] = sw["rejections (p<1e-3)"] / sw["coordinates"]
    return sw, shapiro


def least_gaussian(shapiro: Mapping[str, pd.DataFrame]) -> str:
    """The condition with the most coordinates rejected at p < 1e-3 (the first of equals)."""
    return max(present(shapiro), key=lambda n: (shapiro[n].p_value < SHAPIRO_LEVEL).sum())


def qq_data(groups: Mapping[str, Mapping[Hashable, np.ndarray]], shapiro: Mapping[str, pd.DataFrame],
            panels: int = 4) -> dict[str, Any]:
    """The Q-Q figure's data (*Picture the Epsilon*, Figure 4 analog).

    Parameters
    ----------
    groups : mapping condition name -> groups
    shapiro : mapping condition name -> :func:`shapiro_wilk` table
    panels : int
        Coordinates to plot.

    Returns
    -------
    dict
        Keyword arguments of :func:`epsaudit.plotting.faces.qq_panels`: the pooled residuals
        (N, d) of the :func:`least_gaussian` condition, its ``panels`` least Gaussian coordinates
        and the title.
    """
    worst = least_gaussian(shapiro)
    return {"residuals": pooled_residuals(groups[worst]), "coordinates": shapiro[worst]["coordinate"].head(panels),
            "title": f"Least Gaussian residual coordinates: {condition_text(worst)}"}


def qq_points(qq: Mapping[str, Any], *, max_rows: int = SHAPIRO_MAX_ROWS, seed: int | tuple = 0) -> pd.DataFrame:
    """The points of the Q-Q figure: normal quantiles against the sorted residuals of each coordinate.

    Parameters
    ----------
    qq : mapping
        :func:`qq_data` output (``residuals``, ``coordinates``).
    max_rows : int
        A seeded subsample of this many pooled rows is plotted (the paper: 5,000).
    seed : int or tuple
        Base seed or stream key of the subsample (purpose ``"qq-subsample"``).

    Returns
    -------
    pandas.DataFrame
        One row per plotted point: ``coordinate``, ``normal_quantile``, ``residual_quantile``
        (embedding units), and the Gaussian reference line's ``slope`` and ``intercept``
        (:func:`scipy.stats.probplot`).
    """
    x = np.asarray(qq["residuals"])
    if len(x) > max_rows:
        x = x[generator(seed, "qq-subsample").choice(len(x), max_rows, replace=False)]
    frames = []
    for j in qq["coordinates"]:
        (osm, osr), (slope, intercept, _) = stats.probplot(x[:, int(j)], dist="norm")
        frames.append(pd.DataFrame({"coordinate": int(j), "normal_quantile": osm, "residual_quantile": osr,
                                    "slope": slope, "intercept": intercept}))
    return pd.concat(frames, ignore_index=True)


def shapiro_numbers(sw: pd.DataFrame, shapiro: Mapping[str, pd.DataFrame]) -> dict[str, Any]:
    """The numbers the Gaussianity prose quotes (glue key -> value): range of rejections, the largest
    fraction (and the paper's smallest), the least Gaussian condition, the most residual rows."""
    return {
        "sw_min": int(sw["rejections (p<1e-3)"].min()),
        "sw_max": int(sw["rejections (p<1e-3)"].max()),
        "sw_frac_max": float(sw["fraction"].max()),
        "sw_paper_frac_min": DIAGNOSTICS["shapiro_rejections_min"] / DIAGNOSTICS["shapiro_dimensions"],
        "sw_worst": " / ".join(condition_label(least_gaussian(shapiro))),
        "sw_rows_max": int(sw["residual rows"].max()),
    }


@dataclass(frozen=True)
class BandwidthStudy:
    """:func:`bandwidth_sweep` of every condition, widened past edge peaks.

    Attributes
    ----------
    sweeps : dict
        Condition name -> the sweep frame (with the scales ``added`` by widening).
    """

    sweeps: dict[str, pd.DataFrame]

    def paper_scales(self) -> dict[str, pd.DataFrame]:
        """Each sweep on the paper's scales only (no added scale)."""
        return {n: s[~s["added"]] for n, s in self.sweeps.items()}

    def maxima(self) -> pd.DataFrame:
        """MMD-TV maximum over the pairs, one row per condition, one column per paper scale."""
        paper = self.paper_scales()
        sweep_max = labelled({n: paper[n].set_index("bandwidth_scale")["max"] for n in present(paper)})
        sweep_max.columns = [f"{s:g} x median" for s in sweep_max.columns]
        return sweep_max

    def comparison(self) -> pd.DataFrame:
        """:meth:`maxima` above the paper's two ArcFace + VGGFace2 sweeps, rounded to 3 decimals."""
        ours = self.maxima()
        index = pd.MultiIndex.from_tuples([("ArcFace", "VGGFace2", "FF"), ("ArcFace", "VGGFace2", "ID")])
        paper = pd.DataFrame([DIAGNOSTICS["bandwidth_max_facefusion"], DIAGNOSTICS["bandwidth_max_instantid"]],
                             columns=ours.columns, index=index)
        return pd.concat({"ours": ours, "Picture the Epsilon": paper}, names=["source", *LEVELS]).round(3)

    def edges(self) -> pd.DataFrame:
        """Per condition: the peak scale and its edge status on the paper's scales, the scales added
        by widening, and the peak, its status and value after widening."""
        paper = self.paper_scales()
        rows = {}
        for n in present(paper):
            a, b = bandwidth_sweep_record(paper[n]), bandwidth_sweep_record(self.sweeps[n])
            rows[n] = {"peak (paper's scales)": a.chosen, "edge (paper's scales)": a.edge,
                       "scales added": ", ".join(f"{s:g}" for s in b.grid if s not in a.grid) or "none",
                       "peak after widening": b.chosen, "edge after widening": b.edge,
                       "max at peak": round(b.best_score, 3)}
        return labelled(rows)

    def numbers(self) -> dict[str, Any]:
        """The numbers the bandwidth prose quotes (glue key -> value)."""
        sweep_max, edges = self.maxima(), self.edges()
        best_scale = sweep_max.idxmax(axis=1)
        edge_before = edges[edges["edge (paper's scales)"] != "interior"]
        still = edges[edges["edge after widening"] != "interior"]
        return {
            "sweep_best_075": int((best_scale == "0.75 x median").sum()),
            "sweep_best_05": int((best_scale == "0.5 x median").sum()),
            "sweep_min_positive": float(sweep_max.min().min()),
            "sweep_n_edge": len(edge_before),
            "sweep_n_edge_fixed": int((edge_before["edge after widening"] == "interior").sum()),
            "sweep_still_phrase": "in none of them" if still.empty else "in " + "; ".join(
                f"{' / '.join(map(str, idx))} (peak at {r['peak after widening']:g}, "
                f"the {r['edge after widening']} edge)" for idx, r in still.iterrows()),
            "n_conditions": len(self.sweeps),
        }


def bandwidth_study(groups: Mapping[str, Mapping[Hashable, np.ndarray]], pair_lists: Mapping[str, Sequence],
                    n_pairs: int, *, widen: int = 2, n_jobs: int | None = None) -> BandwidthStudy:
    """The bandwidth sweep of every condition (*Picture the Epsilon*, Section IV-D).

    Parameters
    ----------
    groups : mapping condition name -> groups
    pair_lists : mapping condition name -> shuffled pairs
    n_pairs : int
        The prefix of each pair list that is swept (the audits' MMD-TV pairs).
    widen : int
        Scales that may be added beyond an edge peak (:func:`bandwidth_sweep`).
    n_jobs : int, optional

    Returns
    -------
    BandwidthStudy
    """
    return BandwidthStudy({n: bandwidth_sweep(groups[n], pair_lists[n][:n_pairs], widen=widen, n_jobs=n_jobs)
                           for n in present(groups)})


def witness_table(audits: Mapping[str, ConditionAudit], t2: pd.DataFrame) -> pd.DataFrame:
    """The classifier witness against MMD/2, and KDE-LR's sensitivity to its smoothing weight.

    Parameters
    ----------
    audits : mapping condition name -> ConditionAudit
    t2 : pandas.DataFrame
        The Table 2 analog (:func:`epsaudit.studies.face_study.audit.table2`).

    Returns
    -------
    pandas.DataFrame
        Index (encoder, data, generator); ``pairs``, ``mean_tv_witness``, ``mean_half_mmd``,
        ``mean_ratio`` (:func:`witness_gap`; NaN where MMD is zero on every pair, so the ratio is
        undefined) and ``KDE-LR ratio a=0 / a=.01`` (ratio of the two KDE-LR medians).
    """
    witness = labelled({n: witness_gap(audits[n].per_pair) for n in present(audits)})
    witness["KDE-LR ratio a=0 / a=.01"] = t2["KDE-LR a=0"] / t2["KDE-LR a=.01"]
    return witness[["pairs", "mean_tv_witness", "mean_half_mmd", "mean_ratio", "KDE-LR ratio a=0 / a=.01"]]


def witness_numbers(witness: pd.DataFrame) -> dict[str, float]:
    """The KDE-LR and classifier-witness numbers the prose quotes (glue key -> value): ranges over
    the conditions of the KDE-LR ratio, the witness ratio and the mean witness."""
    kde_ratio = witness["KDE-LR ratio a=0 / a=.01"]
    return {
        "kde_ratio_min": float(kde_ratio.min()), "kde_ratio_max": float(kde_ratio.max()),
        "witness_ratio_min": float(witness["mean_ratio"].min()),
        "witness_ratio_max": float(witness["mean_ratio"].max()),
        "witness_tv_min": float(witness["mean_tv_witness"].min()),
        "witness_tv_max": float(witness["mean_tv_witness"].max()),
    }


def robustness_checks(groups: Mapping[str, Mapping[Hashable, np.ndarray]], pair_lists: Mapping[str, Sequence],
                      profile: Mapping[str, Any], *, seed: int | tuple = 0, n_jobs: int | None = None,
                      clock: Stopwatch | None = None) -> pd.DataFrame:
    """Classifier sensitivity, split-half controls and inter-identity MMD permutation tests of every
    condition, at the profile's sizes (``rf_pairs``, ``split_permutations``, ``perm_pairs``,
    ``permutations``).

    Parameters
    ----------
    groups, pair_lists : mappings condition name -> groups / the shuffled identity pairs
    profile : mapping
        A :data:`epsaudit.studies.face_study.PROFILES` entry.
    seed : int or tuple
    n_jobs : int, optional
    clock : Stopwatch, optional
        Records ``"random forest"``, ``"split-half controls"`` and ``"permutation tests"``.

    Returns
    -------
    pandas.DataFrame
        One row per condition: random-forest pairs and mean AUCs, the split-half results, the
        permutation tests, rejections at 0.05 and p-values at the floor ``1 / (B + 1)``.
    """
    clock = Stopwatch() if clock is None else clock
    with clock("random forest"):
        rf = {n: classifier_sensitivity(groups[n], pair_lists[n][:profile["rf_pairs"]], seed=seed, n_jobs=n_jobs)
              for n in present(groups)}
    with clock("split-half controls"):
        split = {n: split_half_controls(groups[n], permutations=profile["split_permutations"], seed=seed, n_jobs=n_jobs)
                 for n in present(groups)}
    with clock("permutation tests"):
        perm = {n: np.array([r.details["p_value"] for r in mmd_tv_pairs(
            groups[n], pair_lists[n][:profile["perm_pairs"]], permutations=profile["permutations"], seed=seed,
            n_jobs=n_jobs)]) for n in present(groups)}
    p_floor = 1 / (profile["permutations"] + 1)
    return labelled({n: {
        "RF pairs": len(rf[n]), "AUC logistic": rf[n]["auc_logistic"].mean(),
        "AUC forest": rf[n]["auc_alternative"].mean(),
        "logistic - forest": rf[n]["difference"].mean(),
        "split-half controls": split[n]["controls"], "split MMD rejections": split[n]["mmd_rejections"],
        "split mean MMD2_u": split[n]["mean_mmd2_u"], "split mean AUC": split[n]["mean_auc"],
        "split exact corners": split[n]["exact_corners"], "split +inf": split[n]["infinite_roc"],
        "perm tests": len(perm[n]), "perm reject 0.05": int((perm[n] <= 0.05).sum()),
        "perm at floor": int(np.isclose(perm[n], p_floor).sum()),
    } for n in present(groups)})


def robustness_numbers(checks: pd.DataFrame, profile: Mapping[str, Any], settings: AuditSettings) -> dict[str, Any]:
    """The numbers the sensitivity, split-half and permutation prose quotes.

    Parameters
    ----------
    checks : pandas.DataFrame
        :func:`robustness_checks` output.
    profile : mapping
    settings : AuditSettings
        The audits' settings.

    Returns
    -------
    dict
        Glue key -> value.
    """
    out: dict[str, Any] = {"rf_pairs": int(profile["rf_pairs"])}
    out["split_perm"] = int(profile["split_permutations"])
    out["perm_b"] = int(profile["permutations"])
    out["perm_pairs"] = int(profile["perm_pairs"])
    diff = checks["logistic - forest"]
    out["rf_diff_min"], out["rf_diff_max"] = float(diff.min()), float(diff.max())
    has_dp = "dp-pix" in checks.index.get_level_values("generator")
    if has_dp:
        rf_dp = checks.xs("dp-pix", level="generator")["logistic - forest"]
        out["rf_diff_dp_min"], out["rf_diff_dp_max"] = float(rf_dp.min()), float(rf_dp.max())
    rest = checks.drop("dp-pix", level="generator") if has_dp else checks
    out["rf_diff_rest_max_abs"] = float(rest["logistic - forest"].abs().max()) if len(rest) else float("nan")
    controls, rejections = checks["split-half controls"], checks["split MMD rejections"]
    out["split_controls"] = int(controls.sum())
    out["split_rejections"] = int(rejections.sum())
    out["split_rate"] = float(rejections.sum() / controls.sum())
    out["split_auc_min"] = float(checks["split mean AUC"].min())
    out["split_auc_max"] = float(checks["split mean AUC"].max())
    out["split_corners"] = int(checks["split exact corners"].sum())
    out["split_inf"] = int(checks["split +inf"].sum())
    out["split_worst_rate"] = float((rejections / controls).max())
    out["split_worst"] = " / ".join((rejections / controls).idxmax())
    out["perm_tests"] = int(checks["perm tests"].sum())
    out["perm_reject"] = int(checks["perm reject 0.05"].sum())
    out["perm_floor"] = int(checks["perm at floor"].sum())
    if has_dp:
        perm_dp = checks.xs("dp-pix", level="generator")
        out["perm_reject_dp"] = int(perm_dp["perm reject 0.05"].sum())
        out["perm_tests_dp"] = int(perm_dp["perm tests"].sum())
    out["p_floor"] = 1 / (profile["permutations"] + 1)
    out["perm_needed"] = int(np.ceil(checks["perm tests"].sum() / 0.05))
    return out
