"""Chapter 4, measuring the cascade: centred scores against galleries, the per-pass series and the
per-pass audits (*Toward Interpretable Privacy Guarantees in Face-Swapping Anonymization*, Table
III; *Picture the Epsilon*, Tables 7 and 8).

The corpora (:mod:`epsaudit.corpora`) hold, per encoder, the raw embeddings of every original
photograph, of every pass of every complete cascade chain and of every single-swap operator
triplet.

Scores. Every cosine here is *centred*: an embedding is unit-normalised, the reference centre is
subtracted and the result re-normalised (raw dlib vectors share a large common offset, as in
chapter 3). The centre (:func:`reference_centre`) is the mean direction (:func:`mean_direction`)
of the operator *train* photographs, so it is independent of the cascade, of the galleries and of
the operator test partition. A chain's *target score* at pass ``k`` is the median centred cosine
of its pass-``k`` embedding to its target gallery (up to 30 other photographs of its identity,
never its start); its *non-member score* the median to its non-member identity's photographs.

Series (:func:`cascade_series`, one row per pass ``k = 0..K``; pass 0 is the start photograph):
``leakage`` = median over chains of the target scores, ``floor`` = median over chains of this
pass's non-member scores, ``floor_pooled`` = median non-member score over passes 1..K (the floor of
the paper's Table III, 0.006 there), ``excess = leakage - floor_pooled`` and ``excess_ratio`` =
``excess_k / excess_{k-1}`` as in Table III; ``excess_per_pass`` / ``excess_ratio_per_pass`` use
each pass's own floor instead.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ...bounds import DEFAULT_BOUND, bonferroni_alpha
from ...corpora import DESIGN_FILES, ROLES, Corpora, embedding_file
from ...leakage import cmc, membership_metrics
from ...validation import unit_rows

__all__ = ["mean_direction", "centred_unit", "reference_centre", "chain_embeddings", "pass_groups", "write_pass_csv",
           "CentredScores", "centred_scores", "chain_scores", "excess_ratios", "cascade_series", "per_pass_audits"]


def mean_direction(x) -> np.ndarray:
    """Mean of the unit-normalised rows of ``x`` (the adversary's reference centre), shape (d,).

    Parameters
    ----------
    x : array_like, shape (n, d)

    Examples
    --------
    >>> mean_direction([[2.0, 0.0], [0.0, 3.0]]).tolist()
    [0.5, 0.5]
    """
    return unit_rows(np.asarray(x, dtype=np.float64)).mean(axis=0)


def centred_unit(x, centre) -> np.ndarray:
    """Unit-normalise the last axis, subtract ``centre``, re-normalise (the chapter's cosine space).

    Parameters
    ----------
    x : array_like, shape (..., d)
    centre : array_like, shape (d,)

    Examples
    --------
    >>> centred_unit([[3.0, 0.0]], [0.0, 0.5]).round(3).tolist()
    [[0.894, -0.447]]
    """
    return unit_rows(unit_rows(np.asarray(x, dtype=np.float64)) - centre)


def reference_centre(corpora: Corpora) -> np.ndarray:
    """Mean direction of the operator *train* photographs, shape (d,).

    Every photograph that is a donor or a target of a train triplet counts once. The centre is thus
    independent of the cascade, its galleries and the operator test partition.

    Raises
    ------
    ValueError
        If the operator design has no train triplet.
    """
    train = corpora.triplets[corpora.triplets["partition"] == "train"]
    if train.empty:
        raise ValueError(f"{corpora.directory / DESIGN_FILES['triplets']}: no train triplets, so no reference centre")
    ids = sorted(set(train["donor"]) | set(train["target"]))
    return mean_direction(corpora.embeddings(ids))


def _variant_cascade(corpora: Corpora, variant: str) -> pd.DataFrame:
    part = corpora.cascade[corpora.cascade["variant"] == variant]
    if part.empty:
        raise ValueError(f"{embedding_file(corpora.encoder, 'cascade')}: no rows for variant {variant!r}; "
                         f"variants present: {corpora.variants}")
    return part


def chain_embeddings(corpora: Corpora, variant: str) -> tuple[np.ndarray, pd.DataFrame]:
    """Raw embeddings of every complete chain of ``variant``, pass 0 (the start photograph) to ``K``.

    Returns
    -------
    embeddings : ndarray, shape (K + 1, m, d), float64
    chains : pandas.DataFrame
        The ``m`` complete chains' rows of ``cascade_chains.csv``, in chain order (the order of axis 1).

    Raises
    ------
    ValueError
        An unknown variant.
    """
    key = ("chain_embeddings", variant)
    if key not in corpora.cache:
        part = _variant_cascade(corpora, variant)
        ids = np.sort(part["chain"].unique())
        chains = corpora.chains.set_index("chain").loc[ids].reset_index()
        k = corpora.passes
        cols = corpora.embedding_columns
        swaps = part.sort_values(["pass", "chain"])[cols].to_numpy(dtype=np.float64).reshape(k, len(ids), len(cols))
        start = corpora.embeddings(chains["start"])
        corpora.cache[key] = (np.concatenate([start[None], swaps]), chains)
    emb, chains = corpora.cache[key]
    return emb.copy(), chains.copy()


def _pass_embeddings(corpora: Corpora, variant: str, k: int) -> tuple[np.ndarray, pd.DataFrame]:
    """Raw pass-``k`` embeddings ``(m, d)`` of the complete chains and their rows; ``ValueError``
    for ``k`` outside ``0..K``."""
    emb, chains = chain_embeddings(corpora, variant)
    if not 0 <= int(k) < emb.shape[0]:
        raise ValueError(f"pass k={k} outside 0..{emb.shape[0] - 1}")
    return emb[int(k)], chains


def pass_groups(corpora: Corpora, variant: str, k: int) -> dict[str, np.ndarray]:
    """Pass-``k`` embeddings of the complete chains grouped by target identity (the input of
    :func:`epsaudit.condition.audit_condition`).

    Returns
    -------
    dict identity -> ndarray, shape (n_i, d)
        Unit-normalised (uncentred, like the tables of chapter 3), one row per chain; pass 0 gives
        the start photographs.

    Raises
    ------
    ValueError
        ``k`` outside ``0..K`` or an unknown variant.
    """
    raw, chains = _pass_embeddings(corpora, variant, k)
    x = unit_rows(raw)
    labels = chains["identity"].astype(str).to_numpy()
    return {lab: x[labels == lab] for lab in sorted(set(labels))}


def write_pass_csv(corpora: Corpora, variant: str, k: int, path: str | Path) -> Path:
    """Write pass ``k`` of the complete chains in the exchange format (``identity, image_id, e0 ..``).

    Raw embeddings (as stored), one row per chain labelled by its target identity; the image id is
    ``<start image>|<variant>|pass<k>``. ``epsaudit audit FILE.csv`` then audits that pass as
    :func:`per_pass_audits` does (its loader L2-normalises the rows, as :func:`pass_groups` does).

    Raises
    ------
    ValueError
        ``k`` outside ``0..K`` or an unknown variant.
    """
    from ...data import write_embeddings

    raw, chains = _pass_embeddings(corpora, variant, k)
    ids = [f"{s}|{variant}|pass{int(k)}" for s in chains["start"]]
    return write_embeddings(path, chains["identity"].astype(str).tolist(), ids, raw)


# -------------------------------------------------------------------------------------------------
# scoring against galleries


@dataclass(frozen=True)
class _Galleries:
    """Centred originals and padded gallery indices of one variant's complete chains."""

    vectors: np.ndarray          # (n_orig, d) centred unit originals
    target: np.ndarray           # (m, g_t) int indices, -1 = padding
    nonmember: np.ndarray        # (m, g_n)
    candidates: list[str]        # closed-set identities, sorted
    union: np.ndarray            # (C, g_u) indices of each candidate's union gallery, -1 = padding
    truth: np.ndarray            # (m,) candidate index of each chain's identity
    start: np.ndarray            # (m,) originals index of each chain's start


def _padded(groups: Sequence[np.ndarray]) -> np.ndarray:
    width = max(len(g) for g in groups)
    out = np.full((len(groups), width), -1, dtype=np.int64)
    for i, g in enumerate(groups):
        out[i, :len(g)] = g
    return out


def _galleries(corpora: Corpora, chains: pd.DataFrame, centre: np.ndarray) -> _Galleries:
    pos = {iid: i for i, iid in enumerate(corpora.originals.index)}
    vectors = centred_unit(corpora.originals[corpora.embedding_columns].to_numpy(dtype=np.float64), centre)
    gal = corpora.galleries.assign(pos=corpora.galleries["image_id"].map(pos))
    idx = {}
    for role in ROLES:
        lists = gal[gal["role"] == role].groupby("chain")["pos"].agg(list)
        idx[role] = _padded([lists.loc[c] for c in chains["chain"]])
    # closed set over every chain of the design (the candidates do not depend on which chains completed)
    tg = gal[gal["role"] == "target"].merge(corpora.chains[["chain", "identity"]], on="chain")
    union = tg.groupby(tg["identity"].astype(str))["pos"].agg(lambda x: sorted(set(x)))
    candidates = sorted(union.index)
    where = {c: j for j, c in enumerate(candidates)}
    return _Galleries(vectors=vectors, target=idx["target"], nonmember=idx["nonmember"], candidates=candidates,
                      union=_padded([union.loc[c] for c in candidates]),
                      truth=np.array([where[str(i)] for i in chains["identity"]]),
                      start=np.array([pos[i] for i in chains["start"]]))


def _nan_median(x: np.ndarray) -> np.ndarray:
    """Median over the last axis ignoring NaN padding (every row holds at least one number)."""
    srt = np.sort(x, axis=-1)  # NaN sorts last
    n = np.sum(~np.isnan(x), axis=-1, keepdims=True)
    lo = np.take_along_axis(srt, (n - 1) // 2, axis=-1)
    hi = np.take_along_axis(srt, n // 2, axis=-1)
    return ((lo + hi) / 2.0)[..., 0]


def _median_scores(probes: np.ndarray, vectors: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Median cosine of probes (P, m, d) to per-chain galleries ``vectors[index[i]]`` -> (P, m)."""
    gallery = vectors[np.where(index < 0, 0, index)]  # (m, g, d)
    sims = np.einsum("pmd,mgd->pmg", probes, gallery)
    pad = index < 0
    if pad.any():
        return _nan_median(np.where(pad[None], np.nan, sims))
    return np.median(sims, axis=2)


def _closed_set_rank1(probes: np.ndarray, g: _Galleries) -> np.ndarray:
    """Closed-set rank-1 rate per pass: probes (P, m, d) against every candidate's union gallery."""
    columns, pos = np.unique(g.union[g.union >= 0], return_inverse=True)
    where = np.zeros(g.union.shape, dtype=np.int64)
    where[g.union >= 0] = pos
    # padding and each probe's own start photograph are left out
    mask = (g.union[None] < 0) | (g.union[None] == g.start[:, None, None])  # (m, C, u)
    out = np.empty(probes.shape[0])
    for p in range(probes.shape[0]):
        sims = probes[p] @ g.vectors[columns].T  # (m, n_union)
        block = np.where(mask, np.nan, sims[:, where])  # (m, C, u)
        out[p] = cmc(_nan_median(block), g.truth, max_rank=1)[0]
    return out


@dataclass(frozen=True)
class CentredScores:
    """What :func:`centred_scores` computed for one variant.

    Attributes
    ----------
    target, nonmember : ndarray, shape (P, m)
        Median centred cosine of each pass (axis 0) and chain (axis 1) to its target and non-member gallery.
    probes : ndarray, shape (P, m, d)
        The centred unit embeddings scored.
    chains : pandas.DataFrame
        The ``m`` complete chains (:func:`chain_embeddings`).
    embeddings : ndarray, shape (P, m, d)
        The raw embeddings scored.
    galleries : _Galleries
    """

    target: np.ndarray
    nonmember: np.ndarray
    probes: np.ndarray
    chains: pd.DataFrame
    embeddings: np.ndarray
    galleries: _Galleries


def centred_scores(corpora: Corpora, variant: str, embeddings: np.ndarray | None = None,
                   centre: np.ndarray | None = None) -> CentredScores:
    """Target and non-member scores of the measured chains, or of ``embeddings`` in their place.

    Parameters
    ----------
    corpora : Corpora
    variant : str
    embeddings : ndarray, shape (P, m, d), optional
        Embeddings to score instead of the measured chain (e.g. a model rollout), chains in the
        order of :func:`chain_embeddings`.
    centre : ndarray, shape (d,), optional
        Default :func:`reference_centre`.

    Returns
    -------
    CentredScores

    Raises
    ------
    ValueError
        An unknown variant, or embeddings of the wrong shape or holding NaN/inf.
    """
    measured, chains = chain_embeddings(corpora, variant)
    emb = measured if embeddings is None else np.asarray(embeddings, dtype=np.float64)
    if emb.ndim != 3 or emb.shape[1:] != measured.shape[1:]:
        raise ValueError(f"embeddings must have shape (passes + 1, {measured.shape[1]}, {measured.shape[2]}) "
                         f"(the complete chains of {variant!r}); got {emb.shape}")
    if not np.all(np.isfinite(emb)):
        raise ValueError("embeddings hold NaN or inf")
    c = reference_centre(corpora) if centre is None else np.asarray(centre, dtype=np.float64)
    key = ("galleries", variant, c.tobytes())
    if key not in corpora.cache:
        corpora.cache[key] = _galleries(corpora, chains, c)
    g = corpora.cache[key]
    probes = centred_unit(emb, c)
    return CentredScores(target=_median_scores(probes, g.vectors, g.target),
                         nonmember=_median_scores(probes, g.vectors, g.nonmember), probes=probes, chains=chains,
                         embeddings=emb, galleries=g)


def chain_scores(corpora: Corpora, variant: str, *, embeddings: np.ndarray | None = None,
                 centre: np.ndarray | None = None) -> pd.DataFrame:
    """Per-chain target and non-member scores at every pass (long format).

    Parameters
    ----------
    corpora, variant, embeddings, centre
        As in :func:`centred_scores`.

    Returns
    -------
    pandas.DataFrame
        ``chain``, ``identity``, ``pass``, ``target``, ``nonmember`` (median centred cosines).
    """
    sc = centred_scores(corpora, variant, embeddings, centre)
    p, m = sc.target.shape
    return pd.DataFrame({"chain": np.tile(sc.chains["chain"].to_numpy(), p),
                         "identity": np.tile(sc.chains["identity"].astype(str).to_numpy(), p),
                         "pass": np.repeat(np.arange(p), m), "target": sc.target.ravel(),
                         "nonmember": sc.nonmember.ravel()})


def excess_ratios(excess) -> pd.Series:
    """``excess_k / excess_{k-1}`` (``<NA>`` at pass 0), as a nullable float Series.

    Examples
    --------
    >>> excess_ratios([0.4, 0.2, 0.1]).tolist()
    [<NA>, 0.5, 0.5]
    """
    excess = np.asarray(excess, dtype=np.float64)
    ratio = pd.Series(pd.NA, index=range(len(excess)), dtype="Float64")
    if len(excess) > 1:
        ratio.iloc[1:] = excess[1:] / excess[:-1]
    return ratio


def cascade_series(corpora: Corpora, variant: str, *, centre: np.ndarray | None = None,
                   embeddings: np.ndarray | None = None) -> pd.DataFrame:
    """Leakage, floor, excess and membership metrics per pass (Table III of *Toward Interpretable
    Privacy Guarantees in Face-Swapping Anonymization*; module docstring).

    Parameters
    ----------
    corpora : Corpora
    variant : str
    centre : ndarray, shape (d,), optional
        Default :func:`reference_centre` (operator train photographs).
    embeddings : ndarray, shape (P, m, d), optional
        Score these (e.g. a model rollout from the chains' starts) with exactly the same galleries
        and centring instead of the measured chain; ``P - 1`` passes.

    Returns
    -------
    pandas.DataFrame
        One row per pass ``0..P-1``: ``pass``, ``chains``, ``leakage``, ``floor`` (this pass's
        median non-member score), ``floor_pooled`` (median non-member score over passes >= 1, the
        same in every row: Table III's floor), ``excess`` (leakage minus the pooled floor, as in
        Table III: ``(0.091 - 0.006) / (0.616 - 0.006) = 0.139``), ``excess_ratio`` (its ratio between
        consecutive passes; ``<NA>`` at pass 0), ``excess_per_pass`` and ``excess_ratio_per_pass``
        (the same with each pass's own floor), ``auc``, ``tpr_at_fpr_1pct``, ``tpr_at_fpr_0.1pct`` (positives:
        per-chain target scores; negatives: per-chain non-member scores;
        :func:`epsaudit.leakage.membership_metrics`), ``cmc_rank1`` (closed set over all target
        identities; a candidate's gallery is the union of its chains' target galleries minus the
        probe's own start) and ``norm_median`` (median raw L2 norm).

    Raises
    ------
    ValueError
        An unknown variant or embeddings of the wrong shape.
    """
    sc = centred_scores(corpora, variant, embeddings, centre)
    tgt, non = sc.target, sc.nonmember
    leakage, floor = np.median(tgt, axis=1), np.median(non, axis=1)
    pooled = float(np.median(non[1:])) if len(non) > 1 else float(np.median(non))
    metrics = [membership_metrics(tgt[p], non[p]) for p in range(len(tgt))]
    return pd.DataFrame({
        "pass": np.arange(len(tgt)), "chains": tgt.shape[1], "leakage": leakage, "floor": floor,
        "floor_pooled": pooled, "excess": leakage - pooled, "excess_ratio": excess_ratios(leakage - pooled),
        "excess_per_pass": leakage - floor, "excess_ratio_per_pass": excess_ratios(leakage - floor),
        "auc": [m["auc"] for m in metrics], "tpr_at_fpr_1pct": [m["tpr_at_fpr_1pct"] for m in metrics],
        "tpr_at_fpr_0.1pct": [m["tpr_at_fpr_0.1pct"] for m in metrics],
        "cmc_rank1": _closed_set_rank1(sc.probes, sc.galleries),
        "norm_median": np.median(np.linalg.norm(sc.embeddings, axis=2), axis=1),
    })


# -------------------------------------------------------------------------------------------------
# per-pass audits (Picture the Epsilon, Tables 7 and 8)

_CERT_COLUMNS = ["pass", "bound", "certificates", "positive", "above_1", "median_bound", "min_bound", "max_bound",
                 "censored", "cap_min", "cap_max", "n_test_min", "n_test_max", "alpha", "alpha_per_bound", "family_size"]


def _descriptive_row(k: int, audit: Any, kept: dict, rejections: Any, tested: int, seconds: float) -> dict[str, Any]:
    """One row of the Table 8 analog from a pass's condition audit."""
    s, per = audit.summary, audit.per_pair
    row: dict[str, Any] = {"pass": k, "identities": audit.counts["identities"],
                           "rows": int(sum(len(x) for x in kept.values()))}
    for route in ("gaussmech", "mmd_tv"):
        r = s[s["route"] == route]
        row[route] = float(r["value"].iloc[0]) if len(r) else pd.NA
    for _, r in s[s["route"] == "kde_lr"].iterrows():
        row[f"kde_lr_{float(r['kde_alpha']):g}"] = float(r["value"])
    roc = per[per["route"] == "roc_oof"]
    row.update({"oof_auc": float(roc["auc"].astype(float).median()) if len(roc) else pd.NA,
                "exact_corners": int(roc["exact_corner"].astype(bool).sum()) if len(roc) else 0,
                "raw_infinite": int(roc["infinite"].astype(bool).sum()) if len(roc) else 0,
                "roc_pairs": len(roc), "mmd_rejections": rejections, "mmd_tested": tested,
                "seconds": round(seconds, 1)})
    return row


def _certificate_row(k: int, per_pair: pd.DataFrame, family: int, confidence: float, bound: str) -> dict[str, Any]:
    """One row of the Table 7 analog: the pass's reserved-test certificates under one bound."""
    cert = per_pair[per_pair["route"] == "roc_reserved"]
    values = cert["value"].astype(float).to_numpy()
    sizes = np.r_[cert["n_a"].astype(int), cert["n_b"].astype(int)]
    n = len(values)
    return {"pass": k, "bound": bound, "certificates": n, "positive": int(np.sum(values > 0)),
            "above_1": int(np.sum(values > 1)),
            "median_bound": float(np.median(values)) if n else pd.NA,
            "min_bound": float(np.min(values)) if n else pd.NA,
            "max_bound": float(np.max(values)) if n else pd.NA,
            "censored": int(cert["censored"].astype(bool).sum()) if n else 0,
            "cap_min": float(cert["cap"].astype(float).min()) if n else pd.NA,
            "cap_max": float(cert["cap"].astype(float).max()) if n else pd.NA,
            "n_test_min": int(sizes.min()) if n else pd.NA, "n_test_max": int(sizes.max()) if n else pd.NA,
            "alpha": bonferroni_alpha(family, confidence),
            "alpha_per_bound": float(cert["alpha_per_bound"].astype(float).iloc[0]) if n else pd.NA,
            "family_size": family}


def _permutation_rejections(kept: dict, permutations: int, permutation_pairs: int, seed: Any, n_jobs: int | None,
                            progress: bool) -> tuple[Any, int]:
    """MMD permutation tests on the first pairs of the audit's shuffle: rejections at 0.05 and pairs tested."""
    from ...audits.mmd_tv import mmd_tv_pairs
    from ...pairs import identity_pairs

    if permutations <= 0 or permutation_pairs <= 0:
        return pd.NA, 0
    chosen = identity_pairs(kept, seed=seed)[:permutation_pairs]
    res = mmd_tv_pairs(kept, chosen, permutations=permutations, seed=seed, n_jobs=n_jobs, progress=progress)
    pvals = np.array([r.details["p_value"] for r in res], dtype=float)
    return int(np.sum(pvals < 0.05)), len(pvals)


# long only by its docstring, which states the audit protocol in full; the body is ~40 lines
def per_pass_audits(corpora: Corpora, variant: str, *, passes: Sequence[int] = range(0, 6), pairs: int = 500,
                    kde_pairs: int = 100, roc_pairs: int = 100, permutations: int = 10_000,
                    permutation_pairs: int = 100, certificates: int = 50,
                    certificate_passes: Sequence[int] = range(1, 6), selection_pool: int = 100,
                    test_size: float = 0.3, prefer_certifiable: bool = True, confidence: float = 0.95,
                    delta: float = 1e-5, seed: int = 0, n_jobs: int | None = 2,
                    progress: bool = True, bounds: Sequence[str] = (DEFAULT_BOUND, "clopper-pearson")
                    ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Audit the identities' pass-``k`` embeddings with the four routes and reserved-test certificates.

    Each pass ``k`` is one condition: :func:`pass_groups` (one unit-normalised row per complete
    chain, grouped by target identity) through :func:`epsaudit.condition.audit_condition` with the
    same pair shuffle (``seed``) at every pass. Descriptive routes use all rows (chapter 3's
    convention; Table 8 of *Picture the Epsilon* used its development rows). The MMD permutation
    test is run on the first ``permutation_pairs`` pairs only (:func:`epsaudit.audits.mmd_tv_pairs`
    with the same seeds, so its statistics equal the audit's). Certificates: at each pass of
    ``certificate_passes``, ``certificates`` pairs chosen on development rows among the first
    ``selection_pool`` (audit_condition's development-only selection), certified on the untouched
    test rows; all ``certificates * len(certificate_passes)`` bounds form one Bonferroni family
    (``family_size``), so each certificate's error level is ``(1 - confidence) / family`` and all
    hold together at ``confidence``. Each bound of ``bounds`` certifies the pass anew (the first
    with the descriptive routes, the others certificates only): the library's joint test, and
    *Picture the Epsilon*'s two one-sided Clopper-Pearson bounds at half the level each. Unlike the
    paper the selected pairs may share identities.

    Parameters
    ----------
    passes : sequence of int
        Passes to audit (0 = start photographs).
    pairs, kde_pairs, roc_pairs : int
        GaussMech/MMD-TV, KDE-LR and ROC-HT OOF prefixes of the shuffled pair list.
    permutations, permutation_pairs : int
        MMD permutation count (0 = no test) and the prefix it is run on.
    certificates, certificate_passes, selection_pool, confidence, delta
        See above.
    test_size, prefer_certifiable
        As in :func:`epsaudit.condition.audit_condition`. With ~27 rows per identity the default
        0.3 leaves 8 test rows per identity, whose cap at the paper's family (250 bounds,
        ``alpha = 1e-4``) is 0: nothing can be certified (``cap_max`` says so); e.g. 5 certificates
        per pass (``alpha = 1e-3``) with ``test_size=0.5`` (13-14 rows) caps at 0.36-0.45.
    seed, n_jobs, progress
        As in :func:`epsaudit.condition.audit_condition`.
    bounds : sequence of {"joint", "clopper-pearson"}
        The certificates' bounds, one Table 7 row per pass and bound.

    Returns
    -------
    descriptive : pandas.DataFrame
        Table 8 analog, one row per pass: ``pass``, ``identities``, ``rows``, ``gaussmech``,
        ``mmd_tv`` (medians over ``pairs``), ``kde_lr_<alpha>`` (medians over ``kde_pairs``),
        ``oof_auc`` (median), ``exact_corners``, ``raw_infinite``, ``roc_pairs`` (counts over
        ``roc_pairs``), ``mmd_rejections`` (p < 0.05), ``mmd_tested``, ``seconds``.
    certified : pandas.DataFrame
        Table 7 analog, one row per pass of ``certificate_passes`` and bound: ``pass``, ``bound``,
        ``certificates``,
        ``positive`` (> 0), ``above_1``, ``median_bound``, ``min_bound``, ``max_bound``,
        ``censored`` (zero test errors: the bound equals its cap), ``cap_min``/``cap_max`` (what the
        test sizes can certify, :func:`epsaudit.bounds.certifiable_cap`), ``n_test_min``/
        ``n_test_max`` (test rows per identity), ``alpha`` (each certificate's error level),
        ``alpha_per_bound`` (the level of each test it is made of), ``family_size``.

    Raises
    ------
    ValueError
        A pass outside ``0..K``, a certificate pass not in ``passes``, or audit_condition's errors.
    """
    from ...condition import audit_condition

    passes = [int(p) for p in passes]
    cert_passes = [int(p) for p in certificate_passes] if certificates > 0 else []
    if not set(cert_passes) <= set(passes):
        raise ValueError(f"certificate_passes {cert_passes} must be among passes {passes}")
    family = certificates * len(cert_passes)
    desc_rows, cert_rows = [], []
    for k in passes:
        groups = pass_groups(corpora, variant, k)
        t0 = time.perf_counter()
        certify = certificates if k in cert_passes else 0
        common = dict(certificates=certify, family_size=family if certify else None, selection_pool=selection_pool,
                      test_size=test_size, prefer_certifiable=prefer_certifiable, confidence=confidence, delta=delta,
                      seed=seed, permutations=0, n_jobs=n_jobs, progress=progress)
        audit = audit_condition(groups, pairs=pairs, kde_pairs=kde_pairs, roc_pairs=roc_pairs, bound=bounds[0],
                                **common)
        kept = {lab: x for lab, x in groups.items() if len(x) >= audit.settings["min_rows"]}
        rejections, tested = _permutation_rejections(kept, permutations, permutation_pairs, seed, n_jobs, progress)
        desc_rows.append(_descriptive_row(k, audit, kept, rejections, tested, time.perf_counter() - t0))
        if certify:
            cert_rows.append(_certificate_row(k, audit.per_pair, family, confidence, bounds[0]))
            for other in bounds[1:]:
                alone = audit_condition(groups, pairs=0, kde_pairs=0, roc_pairs=0, bound=other, **common)
                cert_rows.append(_certificate_row(k, alone.per_pair, family, confidence, other))
    desc = pd.DataFrame(desc_rows)
    for col in desc.columns:
        if desc[col].dtype == object:
            dtype = "Int64" if col == "mmd_rejections" else "Float64"
            desc[col] = pd.to_numeric(desc[col], errors="coerce").astype(dtype)
    certs = pd.DataFrame(cert_rows, columns=_CERT_COLUMNS)
    return desc, certs.astype({"median_bound": "Float64", "min_bound": "Float64", "max_bound": "Float64",
                               "cap_min": "Float64", "cap_max": "Float64", "n_test_min": "Int64",
                               "n_test_max": "Int64"})
