"""Chapter 4.1, the measured cascade: the plumbing of ``notebooks/04b_cascade_measured.py``.

The page measures the five-pass cascade (Table III of *Toward Interpretable Privacy Guarantees in Face-Swapping
Anonymization*), judges the operator's predictions and audits every pass as a condition (*Picture the Epsilon*'s Tables
7 and 8) with the public API. This module holds the per-pass series, the pass groups, the alignment with ``B``'s
dominant eigenspace, a pass's MMD permutation tests and a geometric tail's extrapolation; profiles, loading and rollouts
are chapter 4's (:mod:`epsaudit.studies.cascade`, re-exported).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import linalg, stats

from ..data.corpora import Corpora
from ..audits.membership import cmc, membership_metrics
from ..operator import AffineOperator
from ..validation import unit_rows
from .cascade import (ENCODERS, PARAMETERS, PASSES, PROFILES, CentredScores, centred_scores, centred_unit,
                      chain_embeddings, check_parameters, choose_profile, excess_ratios, load_chapter_corpora,
                      model_predictions, operator_arrays, reference_centre, variants_of, nan_median)
from .cascade import excess_per_pass, leakage_per_pass  # the page's figures (shared style with chapter 4)

__all__ = ["ENCODERS", "PARAMETERS", "PASSES", "PROFILES", "check_parameters", "choose_profile",
           "load_chapter_corpora", "variants_of", "operator_arrays", "model_predictions", "chain_embeddings",
           "excess_ratios", "cascade_series", "pass_groups", "write_pass_csv", "dominant_subspace",
           "persistent_directions", "SURVIVAL_MIN_PASS1", "mmd_rejections", "passes_to_excess", "excess_per_pass", "leakage_per_pass"]

#: Prediction 4: survival ``target_K / target_1`` counts only chains whose pass-1 target score exceeds
#: this (a ratio of near-zero scores carries no information).
SURVIVAL_MIN_PASS1 = 0.05


def _closed_set_rank1(sc: CentredScores) -> np.ndarray:
    """Closed-set rank-1 rate per pass: each probe against every candidate's union gallery, its own
    start photograph left out."""
    g, probes = sc.galleries, sc.probes
    columns, pos = np.unique(g.union[g.union >= 0], return_inverse=True)
    where = np.zeros(g.union.shape, dtype=np.int64)
    where[g.union >= 0] = pos
    mask = (g.union[None] < 0) | (g.union[None] == g.start[:, None, None])  # (m, C, u)
    out = np.empty(probes.shape[0])
    for p in range(probes.shape[0]):
        block = np.where(mask, np.nan, (probes[p] @ g.vectors[columns].T)[:, where])
        out[p] = cmc(nan_median(block), g.truth, max_rank=1)[0]
    return out


def cascade_series(corpora: Corpora, variant: str, *, centre: np.ndarray | None = None) -> pd.DataFrame:
    """Leakage, floor, excess and membership metrics per pass of the measured cascade (the analog of
    Table III of *Toward Interpretable Privacy Guarantees*); ``centre`` replaces the reference centre.

    Returns
    -------
    pandas.DataFrame
        One row per pass ``0..K``: ``chains``, ``leakage`` (median target score), ``floor`` (this pass's
        median non-member score), ``floor_pooled`` (over passes 1..K: Table III's floor), ``excess``
        (leakage minus the pooled floor), ``excess_ratio`` (``<NA>`` at pass 0), ``auc``,
        ``tpr_at_fpr_1pct``, ``tpr_at_fpr_0.1pct`` (:func:`epsaudit.audits.membership.membership_metrics`),
        ``cmc_rank1`` (closed set over all target identities), ``norm_median`` (median raw L2 norm).

    Raises
    ------
    ValueError
        An unknown variant.
    """
    sc = centred_scores(corpora, variant, centre=centre)
    tgt, non = sc.target, sc.nonmember
    leakage = np.median(tgt, axis=1)
    pooled = float(np.median(non[1:])) if len(non) > 1 else float(np.median(non))
    metrics = [membership_metrics(tgt[p], non[p]) for p in range(len(tgt))]
    return pd.DataFrame({
        "pass": np.arange(len(tgt)), "chains": tgt.shape[1], "leakage": leakage,
        "floor": np.median(non, axis=1), "floor_pooled": pooled, "excess": leakage - pooled,
        "excess_ratio": excess_ratios(leakage - pooled),
        **{k: [m[k] for m in metrics] for k in ("auc", "tpr_at_fpr_1pct", "tpr_at_fpr_0.1pct")},
        "cmc_rank1": _closed_set_rank1(sc),
        "norm_median": np.median(np.linalg.norm(sc.embeddings, axis=2), axis=1)})


def _pass_embeddings(corpora: Corpora, variant: str, k: int):
    """Raw pass-``k`` embeddings of the complete chains, (n_chains, d), and the chains table."""
    emb, chains = chain_embeddings(corpora, variant)
    if not 0 <= int(k) < emb.shape[0]:
        raise ValueError(f"pass k={k} outside 0..{emb.shape[0] - 1}")
    return emb[int(k)], chains


def pass_groups(corpora: Corpora, variant: str, k: int) -> dict[str, np.ndarray]:
    """Pass-``k`` embeddings of the complete chains grouped by target identity (the input of
    :func:`epsaudit.condition.audit_condition`): identity -> (n_i, d), unit-normalised, uncentred.

    Raises
    ------
    ValueError
        ``k`` outside ``0..K`` or an unknown variant.
    """
    raw, chains = _pass_embeddings(corpora, variant, k)
    x, labels = unit_rows(raw), chains["identity"].astype(str).to_numpy()
    return {lab: x[labels == lab] for lab in sorted(set(labels))}


def write_pass_csv(corpora: Corpora, variant: str, k: int, path: str | Path) -> Path:
    """Write pass ``k`` of the complete chains in the exchange format (``identity, image_id, e0 ..``,
    raw embeddings, image id ``<start>|<variant>|pass<k>``), for ``epsaudit audit FILE.csv``.

    Raises
    ------
    ValueError
        ``k`` outside ``0..K`` or an unknown variant.
    """
    from ..data import write_embeddings

    raw, chains = _pass_embeddings(corpora, variant, k)
    ids = [f"{s}|{variant}|pass{int(k)}" for s in chains["start"]]
    return write_embeddings(path, chains["identity"].astype(str).tolist(), ids, raw)


def dominant_subspace(B: np.ndarray, top: int) -> np.ndarray:
    """Orthonormal basis (dim, q) of ``B``'s invariant subspace of its ``top`` largest-modulus
    eigenvalues (real Schur form; ``q`` may be ``top + 1`` when a complex pair straddles the cut).

    Examples
    --------
    >>> dominant_subspace(np.diag([0.2, 0.9, 0.5]), 1).round(6).ravel().tolist()
    [0.0, 1.0, 0.0]
    """
    ev = linalg.eigvals(B)
    top = int(min(max(top, 1), len(ev)))
    cut = np.sort(np.abs(ev))[::-1][top - 1] * (1 - 1e-9)
    _, z, sdim = linalg.schur(B, output="real", sort=lambda re, im: np.hypot(re, im) >= cut)
    return z[:, :max(int(sdim), 1)]


def _spearman(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Spearman correlation and p-value over the finite ``y`` (NaN when undefined)."""
    ok = np.isfinite(y)
    if ok.sum() < 3 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
        return float("nan"), float("nan")
    res = stats.spearmanr(x[ok], y[ok])
    return float(res.statistic), float(res.pvalue)


def persistent_directions(op: AffineOperator, corpora: Corpora, variant: str, *, top: int = 10) -> dict[str, Any]:
    """Prediction 4: do targets aligned with ``B``'s dominant eigenspace leak more and survive longer?

    Alignment of chain ``i``: ``||Q^T u_i||^2`` in [0, 1], ``u_i`` its unit raw pass-0 embedding, ``Q`` =
    a basis of ``B``'s dominant invariant subspace.

    Returns
    -------
    dict
        ``n`` (chains), ``subspace_dim``, ``rho_pass1``/``p_pass1`` (Spearman of alignment with the
        pass-1 target score), ``rho_survival``/``p_survival``/``n_survival`` (with ``target_K /
        target_1`` over chains whose pass-1 score exceeds :data:`SURVIVAL_MIN_PASS1`), ``rho_last``/``p_last``.
    """
    sc = centred_scores(corpora, variant)
    q = dominant_subspace(op.B, top)
    align = np.sum((unit_rows(sc.embeddings[0]) @ q) ** 2, axis=1)
    t1, tk = sc.target[1], sc.target[-1]
    keep = t1 > SURVIVAL_MIN_PASS1
    survival = np.where(keep, tk / np.where(keep, t1, 1.0), np.nan)
    out: dict[str, Any] = {"n": len(align), "subspace_dim": q.shape[1], "n_survival": int(keep.sum())}
    out["rho_pass1"], out["p_pass1"] = _spearman(align, t1)
    out["rho_survival"], out["p_survival"] = _spearman(align, survival)
    out["rho_last"], out["p_last"] = _spearman(align, tk)
    return out


def mmd_rejections(groups: Mapping[str, np.ndarray], *, min_rows: int, permutations: int, pairs: int,
                   seed: Any = 0, n_jobs: int | None = 2) -> tuple[int, int]:
    """MMD permutation tests (:func:`epsaudit.audits.mmd_tv_pairs`) on the first ``pairs`` identity pairs
    of the audit's shuffle (identities with at least ``min_rows`` rows, as the audit keeps them).

    Returns
    -------
    (rejections at 0.05, pairs tested)
        ``(0, 0)`` when ``permutations`` or ``pairs`` is 0.
    """
    from ..audits import mmd_tv_pairs
    from ..protocol import identity_pairs

    if permutations <= 0 or pairs <= 0:
        return 0, 0
    kept = {lab: x for lab, x in groups.items() if len(x) >= min_rows}
    chosen = identity_pairs(kept, seed=seed)[:pairs]
    res = mmd_tv_pairs(kept, chosen, permutations=permutations, seed=seed, n_jobs=n_jobs, progress=False)
    pvals = np.array([r.details["p_value"] for r in res], dtype=float)
    return int(np.sum(pvals < 0.05)), len(pvals)


def passes_to_excess(excess_last: float, last_pass: int, rate: float, threshold: float = 0.01) -> int:
    """First pass ``k >= last_pass`` with ``excess_last * rate ** (k - last_pass) < threshold`` (the
    extrapolation of Section VIII-B of *Toward Interpretable Privacy Guarantees*).

    Raises
    ------
    ValueError
        ``rate`` outside (0, 1), a non-positive or non-finite ``excess_last`` or ``threshold``.

    Examples
    --------
    >>> passes_to_excess(0.05, 5, 0.9)
    21
    """
    if not (np.isfinite(rate) and 0.0 < rate < 1.0):
        raise ValueError(f"rate must lie in (0, 1) for the excess to vanish, got {rate}")
    if not (np.isfinite(excess_last) and excess_last > 0):
        raise ValueError(f"excess_last must be positive and finite, got {excess_last}")
    if not (np.isfinite(threshold) and threshold > 0):
        raise ValueError(f"threshold must be positive, got {threshold}")
    if excess_last < threshold:
        return int(last_pass)
    n = max(int(np.floor(np.log(threshold / excess_last) / np.log(rate))), 0)
    while excess_last * rate ** n >= threshold:  # guard floating point at exact powers
        n += 1
    while n > 0 and excess_last * rate ** (n - 1) < threshold:
        n -= 1
    return int(last_pass) + n
