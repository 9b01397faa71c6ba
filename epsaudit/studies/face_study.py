"""Chapter 3, the face case study: the conditions, the run profiles and the plumbing of the first page.

*Picture the Epsilon* applies GaussMech, KDE-LR, MMD-TV and ROC-HT to face embeddings of generated images (Section IV;
Tables 2 and 3, Figure 4); the page runs them on the LFW conditions ``<encoder>_<regime>_<generator>`` (2 x 2 x 3,
:mod:`epsaudit.build.pipeline`) with the public API. This module holds the conditions, parameters and profiles,
:func:`load_conditions`, :func:`audit_settings` (shared with ``epsaudit audit``) and the Section IV-D diagnostics that
take more than a line (residuals and Shapiro-Wilk, the bandwidth sweep, the classifier witness, the random-forest
comparison, the split-half controls). ``seed`` is a base seed or a stream key (:func:`epsaudit.protocol.generator`).
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.ensemble import RandomForestClassifier

from . import choose_profile as _choose_profile
from . import parameters as _parameters
from ..audits import mmd_tv_pairs, roc_oof_pairs
from ..data import EmbeddingTable, load_embeddings
from ..results import results_frame
from ..protocol import generator
from ..condition import AuditSettings
from ..validation import as_groups
import matplotlib.pyplot as plt
from .figures import PALETTE

__all__ = ["ENCODERS", "REGIMES", "GENERATORS", "CONDITIONS", "PROFILES", "PARAMETERS", "CERTIFICATES_PER_CONDITION",
           "condition_names", "check_parameters", "choose_profile", "StudyData", "load_conditions",
           "audit_settings", "pooled_residuals", "shapiro_wilk", "qq_points", "bandwidth_sweep", "witness_gap",
           "classifier_sensitivity", "split_half_groups", "split_half_controls", "qq_panels"]

ENCODERS = ("dlib", "sface")
REGIMES = ("large", "small")
GENERATORS = ("none", "swap", "dp-pix")
#: Reserved-test certificates per condition; all of a run form one Bonferroni family.
CERTIFICATES_PER_CONDITION = 5


def condition_names(encoders: Sequence[str] = ENCODERS, regimes: Sequence[str] = REGIMES,
                    generators: Sequence[str] = GENERATORS) -> list[str]:
    """The condition names ``<encoder>_<regime>_<generator>``, encoder-major.

    Examples
    --------
    >>> condition_names(["dlib"], ["large"], ["none", "swap"])
    ['dlib_large_none', 'dlib_large_swap']
    """
    return [f"{e}_{r}_{g}" for e in encoders for r in regimes for g in generators]


#: The chapter's 12 conditions, in table order.
CONDITIONS = condition_names()

#: Both pages' papermill parameters (:mod:`epsaudit.studies.parameters`).
PARAMETERS = (_parameters.PROFILE, _parameters.DATA, _parameters.ENCODERS, _parameters.GENERATORS,
              _parameters.SEED, _parameters.N_JOBS)


def check_parameters(namespace: dict, page: str, required: Sequence[str] = ("none",)) -> dict[str, Any]:
    """Check a chapter-3 page's parameters (written back to ``namespace``, encoders and generators in the
    chapter's order); ``generators`` must include ``required``.

    Raises
    ------
    ValueError
        An unknown parameter, a value that is not allowed, or a required generator left out (naming it).

    Examples
    --------
    >>> ns = dict(profile="smoke", data="data", encoders=["sface", "dlib"], generators=["swap", "none"],
    ...           seed=0, n_jobs=1)
    >>> check_parameters(ns, "demo")["encoders"]
    ['dlib', 'sface']
    """
    values = _parameters.check(namespace, PARAMETERS, page)
    missing = [g for g in required if g not in values["generators"]]
    if missing:
        need = " and ".join(repr(g) for g in required)
        raise ValueError(f"{page}: parameter generators = {values['generators']!r} must include {need} (this page "
                         f"needs {', '.join(repr(g) for g in missing)}); allowed: a list of distinct values among "
                         f"'none', 'swap', 'dp-pix' that includes {need}")
    namespace["encoders"] = values["encoders"] = [e for e in ENCODERS if e in values["encoders"]]
    namespace["generators"] = values["generators"] = [g for g in GENERATORS if g in values["generators"]]
    return values


PROFILES: dict[str, dict[str, Any]] = {
    # subset: (identities, photographs) per regime, those with the most photographs (None: all); audit:
    # AuditSettings overrides; rf_pairs: random-forest pairs per condition; split_permutations: per
    # split-half MMD test; perm_pairs x permutations: MMD permutation tests; examples: example-figure rows
    "smoke": dict(subset=(4, 40), audit=dict(pairs=2, kde_pairs=2, roc_pairs=2, selection_pool=2, certificates=1),
                  rf_pairs=1, split_permutations=200, perm_pairs=1, permutations=1000, examples=2),
    # the paper's protocol with fewer random-forest pairs and split-half permutations (minutes)
    "full": dict(subset=None, audit={}, rf_pairs=20, split_permutations=1000, perm_pairs=100, permutations=10_000,
                 examples=4),
    # as full, with all 200 ROC-tested pairs and 10^4 split-half permutations (Picture the Epsilon, IV-D)
    "paper": dict(subset=None, audit={}, rf_pairs=200, split_permutations=10_000, perm_pairs=100,
                  permutations=10_000, examples=4),
}


def choose_profile(name: str) -> dict[str, Any]:
    """A copy of one of :data:`PROFILES` (``"smoke"``, ``"full"``, ``"paper"``); ValueError for another name.

    Examples
    --------
    >>> choose_profile("full")["permutations"]
    10000
    """
    return _choose_profile(PROFILES, name, "chapter 3 (face case study)")


@dataclass
class StudyData:
    """The loaded conditions: ``tables`` (condition name -> EmbeddingTable, in :data:`CONDITIONS` order),
    ``donors`` (encoder -> the donor's gallery), the ``manifest.json`` beside them and their folder."""

    tables: dict[str, EmbeddingTable]
    donors: dict[str, EmbeddingTable]
    manifest: dict[str, Any]
    directory: Path
    _temporary: tempfile.TemporaryDirectory | None = field(default=None, repr=False)

    @property
    def donor_id(self) -> str:
        """Image id of the fixed donor photograph of the ``swap`` generator."""
        return self.manifest["generation"]["donor"]["image_id"]


def _subset_table(table: EmbeddingTable, image_ids: set) -> EmbeddingTable:
    """The rows of ``table`` whose image id is in ``image_ids`` (the smoke profile's subset)."""
    keep = np.isin(table.image_ids.astype(str), sorted(map(str, image_ids)))
    return EmbeddingTable.from_arrays(table.labels[keep], table.embeddings[keep], table.image_ids[keep],
                                      source=f"{table.source} (subset of {int(keep.sum())} rows)")


def _subset_ids(table: EmbeddingTable, n_ids: int, n_rows: int) -> set:
    # the n_ids identities with the most rows (ties by name), their first n_rows image ids
    sizes = table.rows_per_identity()
    chosen = sorted(sizes.index, key=lambda k: (-int(sizes[k]), str(k)))[:n_ids]
    return {str(i) for lab in chosen for i in table.image_ids[table.labels == lab][:n_rows]}


def load_conditions(profile: Mapping[str, Any], committed: str | Path = "data", *,
                    encoders: Sequence[str] = ENCODERS, generators: Sequence[str] = GENERATORS) -> StudyData:
    """The conditions and donor galleries a profile asks for, read from the committed tables; with
    ``profile["subset"] = (k, n)`` each regime keeps the ``k`` identities with the most photographs, ``n``
    photographs each, the same in every generator.

    Raises
    ------
    ValueError
        A folder that does not exist or lacks ``manifest.json`` (naming the resolved path).
    FileNotFoundError
        A missing table.
    """
    directory = _parameters.data_folder(committed, ["manifest.json"])
    manifest = json.loads((directory / "manifest.json").read_text())
    tables = {n: load_embeddings(directory / f"{n}.csv") for n in condition_names(encoders, REGIMES, generators)}
    donors = {e: load_embeddings(directory / f"{e}_donor_none.csv", min_identities=0) for e in encoders}
    if profile["subset"] is not None:
        for e in encoders:
            for r in REGIMES:
                ids = _subset_ids(tables[f"{e}_{r}_none"], *profile["subset"])
                for g in generators:
                    tables[f"{e}_{r}_{g}"] = _subset_table(tables[f"{e}_{r}_{g}"], ids)
    return StudyData(tables, donors, manifest, directory)


def audit_settings(n_conditions: int, *, seed: int = 0, **overrides: Any) -> AuditSettings:
    """The settings of :func:`epsaudit.condition.audit_condition` for one condition: every condition
    certifies :data:`CERTIFICATES_PER_CONDITION` pairs (best on development rows, ties to the larger
    certifiable test), all one Bonferroni family; ``overrides`` replace protocol entries.

    Examples
    --------
    >>> audit_settings(12).family_size
    60
    """
    settings = AuditSettings(certificates=CERTIFICATES_PER_CONDITION, prefer_certifiable=True)
    settings = settings.replace(seed=int(seed), **overrides)
    return settings.replace(family_size=settings.certificates * int(n_conditions))


# -------------------------------------------------------------------------------------------------
# diagnostics (Picture the Epsilon, Section IV-D)

SHAPIRO_MAX_ROWS = 5000  # scipy's Shapiro-Wilk p-value is accurate up to N = 5000


def pooled_residuals(groups: Mapping[Hashable, np.ndarray]) -> np.ndarray:
    """Within-identity residuals ``x - mean(identity)`` of every row, pooled, shape (N, d).

    Examples
    --------
    >>> pooled_residuals({"a": np.array([[1.0], [3.0]])}).ravel().tolist()
    [-1.0, 1.0]
    """
    return np.vstack([x - x.mean(axis=0) for x in as_groups(groups).values()])


def _rows(x: np.ndarray, max_rows: int, seed, purpose: str) -> np.ndarray:
    if len(x) <= max_rows:
        return x
    return x[generator(seed, purpose).choice(len(x), max_rows, replace=False)]


def shapiro_wilk(groups: Mapping[Hashable, np.ndarray], *, max_rows: int = SHAPIRO_MAX_ROWS,
                 seed: int | tuple = 0) -> pd.DataFrame:
    """Shapiro-Wilk test per coordinate of the pooled residuals (a seeded subsample of ``max_rows``).

    Returns
    -------
    pandas.DataFrame
        One row per coordinate: ``coordinate``, ``W``, ``p_value``, least Gaussian (smallest W) first.
    """
    residuals = _rows(pooled_residuals(groups), max_rows, seed, "shapiro-subsample")
    rows = [(j, *stats.shapiro(residuals[:, j])) for j in range(residuals.shape[1])]
    return pd.DataFrame(rows, columns=["coordinate", "W", "p_value"]).sort_values("W").reset_index(drop=True)


def qq_points(residuals: np.ndarray, coordinates: Sequence[int], *, max_rows: int = SHAPIRO_MAX_ROWS,
              seed: int | tuple = 0) -> pd.DataFrame:
    """Normal Q-Q points of some residual coordinates (:func:`scipy.stats.probplot`), the Figure 4 analog.

    Returns
    -------
    pandas.DataFrame
        ``coordinate``, ``normal_quantile``, ``residual_quantile`` (embedding units), and the Gaussian
        reference line's ``slope`` and ``intercept``.
    """
    x = _rows(np.asarray(residuals), max_rows, seed, "qq-subsample")
    frames = []
    for j in coordinates:
        (osm, osr), (slope, intercept, _) = stats.probplot(x[:, int(j)], dist="norm")
        frames.append(pd.DataFrame({"coordinate": int(j), "normal_quantile": osm, "residual_quantile": osr,
                                    "slope": slope, "intercept": intercept}))
    return pd.concat(frames, ignore_index=True)


def bandwidth_sweep(groups, pairs, *, scales: Sequence[float] = (0.5, 0.75, 1.0, 1.5, 2.0), widen: int = 2,
                    n_jobs: int | None = None) -> pd.DataFrame:
    """MMD-TV sample values under bandwidths ``scale x`` the median heuristic, widened past an edge peak: while the
    maximum over the pairs peaks at the smallest (largest) scale, half (twice) it is added, at most ``widen`` times.

    Returns
    -------
    pandas.DataFrame
        One row per scale, increasing: ``bandwidth_scale``, ``max`` and ``median`` over the pairs,
        ``pairs``, ``added`` (True for scales added by widening).

    Raises
    ------
    ValueError
        If no pair is computed at some scale.
    """
    def row(scale: float, added: bool) -> dict[str, Any]:
        values = np.array([r.value for r in mmd_tv_pairs(groups, pairs, bandwidth_scale=float(scale),
                                                          n_jobs=n_jobs)], dtype=float)
        ok = np.isfinite(values)
        if not ok.any():
            raise ValueError(f"MMD-TV computed no pair at bandwidth scale {scale:g}")
        return {"bandwidth_scale": float(scale), "max": values[ok].max(), "median": float(np.median(values[ok])),
                "pairs": int(ok.sum()), "added": added}

    rows = [row(s, False) for s in sorted(scales)]
    for _ in range(int(widen)):
        frame = pd.DataFrame(rows).sort_values("bandwidth_scale").reset_index(drop=True)
        peak = int(frame["max"].idxmax())  # the first (smallest) scale of equal maxima
        if peak == 0:
            rows.append(row(frame["bandwidth_scale"].iloc[0] / 2, True))
        elif peak == len(frame) - 1:
            rows.append(row(frame["bandwidth_scale"].iloc[-1] * 2, True))
        else:
            break
    return pd.DataFrame(rows).sort_values("bandwidth_scale").reset_index(drop=True)


def witness_gap(per_pair: pd.DataFrame) -> dict[str, float]:
    """Classifier-witness TV ``max(TPR - FPR)`` against ``MMD / 2`` on the pairs both routes audited.

    Returns
    -------
    dict
        ``pairs``, ``mean_tv_witness``, ``mean_half_mmd`` and ``mean_ratio`` (TV / (MMD/2) over the pairs
        with MMD > 0; NaN if there are none), ``pairs_with_zero_mmd``.
    """
    keys = ["identity_a", "identity_b"]
    roc = per_pair[per_pair["route"] == "roc_oof"].set_index(keys)["tv_witness"]
    mmd = per_pair[per_pair["route"] == "mmd_tv"].set_index(keys)["mmd"]
    joined = pd.concat({"tv": roc, "mmd": mmd}, axis=1, join="inner").astype(float)
    positive = joined[joined["mmd"] > 0]
    return {"pairs": int(len(joined)), "mean_tv_witness": float(joined["tv"].mean()),
            "mean_half_mmd": float((joined["mmd"] / 2).mean()),
            "mean_ratio": float(np.mean(positive["tv"] / (positive["mmd"] / 2))) if len(positive) else float("nan"),
            "pairs_with_zero_mmd": int(len(joined) - len(positive))}


def classifier_sensitivity(groups, pairs, *, alternative: Any = None, seed: int | tuple = 0,
                           n_jobs: int | None = None) -> pd.DataFrame:
    """Out-of-fold AUC of logistic regression and of ``alternative`` (default: a 100-tree random forest,
    ``random_state=0``) on the same pairs and identical folds.

    Returns
    -------
    pandas.DataFrame
        Per pair: ``identity_a``, ``identity_b``, ``auc_logistic``, ``auc_alternative``, ``difference``.
    """
    alternative = RandomForestClassifier(n_estimators=100, random_state=0) if alternative is None else alternative
    base = results_frame(roc_oof_pairs(groups, pairs, seed=seed, n_jobs=n_jobs))
    alt = results_frame(roc_oof_pairs(groups, pairs, classifier=alternative, seed=seed, n_jobs=n_jobs))
    out = base[["identity_a", "identity_b"]].copy()
    out["auc_logistic"] = base["auc"].to_numpy()
    out["auc_alternative"] = alt["auc"].to_numpy()
    out["difference"] = out["auc_logistic"] - out["auc_alternative"]
    return out


def split_half_groups(groups: Mapping[Hashable, np.ndarray], *, seed: int | tuple = 0,
                      min_rows: int = 10) -> tuple[dict, list]:
    """Each identity with ``min_rows`` rows split at random into halves ``(identity, 0)``, ``(identity, 1)``.

    Returns
    -------
    tuple
        ``(halves, pairs)``: a groups mapping and the same-identity pairs.

    Raises
    ------
    ValueError
        If no identity has ``min_rows`` rows.
    """
    halves, pairs = {}, []
    for label, x in as_groups(groups).items():
        if len(x) < min_rows:
            continue
        order = generator(seed, "split-half", label).permutation(len(x))
        halves[(label, 0)], halves[(label, 1)] = x[order[:len(x) // 2]], x[order[len(x) // 2:]]
        pairs.append(((label, 0), (label, 1)))
    if not pairs:
        raise ValueError(f"no identity has >= {min_rows} rows for a split-half control")
    return halves, pairs


def split_half_controls(groups, *, permutations: int = 1000, seed: int | tuple = 0, level: float = 0.05,
                        n_jobs: int | None = None) -> dict[str, float]:
    """MMD permutation tests and out-of-fold ROC on the split halves, where the null holds by construction.

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
    return {"controls": len(pairs), "mmd_rejections": int(rejections), "mmd_rejection_rate": rejections / len(pairs),
            "mean_mmd2_u": float(np.mean([r.details["mmd2_u"] for r in mmd])),
            "mean_auc": float(np.mean([r.details["auc"] for r in roc])),
            "exact_corners": int(sum(r.details["exact_corner"] for r in roc)),
            "infinite_roc": int(sum(np.isinf(r.value) for r in roc))}


# --- Figures --------------------------------------------------------------------------------------


def qq_panels(points: pd.DataFrame, *, title: str = ""):
    """Normal Q-Q plots of residual coordinates (*Picture the Epsilon*, Figure 4 analog), two panels per row.

    Parameters
    ----------
    points : pandas.DataFrame
        :func:`qq_points` (embedding units).
    title : str
        Figure title (none if empty).

    Returns
    -------
    matplotlib.figure.Figure
    """
    coordinates = list(dict.fromkeys(points["coordinate"]))
    ncols = min(2, len(coordinates))
    nrows = -(-len(coordinates) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(7.5, 2.9 * nrows + 0.6), squeeze=False, layout="constrained")
    for ax in axes.flat[len(coordinates):]:
        ax.set_visible(False)
    for ax, j in zip(axes.flat, coordinates):
        p = points[points["coordinate"] == j]
        x = p["normal_quantile"].to_numpy()
        ax.scatter(x, p["residual_quantile"], s=6, alpha=0.6, color=PALETTE[0], label="residual quantiles")
        ax.plot(x, p["slope"].iloc[0] * x + p["intercept"].iloc[0], color="black", lw=1.2, label="Gaussian reference")
        ax.set_title(f"coordinate {j}")
    axes.flat[0].legend(loc="upper left", fontsize=10)
    fig.supxlabel("standard normal quantile")
    fig.supylabel("residual quantile (unit-norm embedding units)")
    if title:
        fig.suptitle(title)
    return fig
