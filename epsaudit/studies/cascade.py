"""Chapter 4, the swap cascade and the affine operator: the plumbing of ``notebooks/04_cascade.py``.

*Toward Interpretable Privacy Guarantees in Face-Swapping Anonymization* models a face swapper in the
adversary's embedding space as an affine stochastic operator ``s = A d + B t + c + e`` (Sections
VI-VIII) and predicts from it how target identity fades when an image is swapped again and again. The
page fits the operator in visible cells with :mod:`epsaudit.operator`; this module holds the run
profiles, the loading of the corpora (:mod:`epsaudit.corpora`), the centred scores against galleries
and the rollouts of the fitted operator. Section 4.1 (:mod:`epsaudit.studies.cascade_measured`) reuses
all of it. Nothing here returns English: numbers, arrays and tables only.

Scores. Every cosine is *centred*: an embedding is unit-normalised, the reference centre (the mean
direction of the operator *train* photographs, :func:`reference_centre`) is subtracted and the result
re-normalised (raw dlib vectors share a large common offset, as in chapter 3). A chain's *target
score* at pass ``k`` is the median centred cosine of its pass-``k`` embedding to its target gallery (up
to 30 other photographs of its identity); its *non-member score* the median to its non-member
identity's photographs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ..corpora import DESIGN_FILES, ROLES, Corpora, embedding_file, load_corpora, subset_corpora
from ..build.images import images_available
from ..leakage import membership_metrics
from ..operator import AffineOperator, lyapunov_residual, rollout, stationary_law
from ..seeds import generator
from ..validation import unit_rows
from . import choose_profile as _choose_profile
from . import parameters as _parameters

__all__ = ["PASSES", "ENCODERS", "PROFILES", "PARAMETERS", "check_parameters", "choose_profile",
           "load_chapter_corpora", "variants_of", "example_chains", "mean_direction", "centred_unit",
           "reference_centre", "chain_embeddings", "CentredScores", "centred_scores", "excess_ratios",
           "operator_arrays", "same_person_photos", "residual_checks", "model_predictions"]

#: Passes of the measured cascade, and passes the model predicts.
PASSES = 5
ENCODERS = ("dlib", "sface")

# identities/chains: cascade slice (None: all); train/test: operator triplets per variant (None: all);
# sizes: train sizes of the size curve; mc_reps: Monte Carlo rollouts; audit: per-pass audit sizes
_FULL = dict(identities=None, chains=None, train=None, test=None, sizes=(1000, 2000, 4000, 8000), mc_reps=20,
             audit=dict(pairs=500, kde_pairs=100, roc_pairs=200, certificates=50, permutations=10_000,
                        permutation_pairs=100))
PROFILES = {
    # seconds to a minute: six target identities with all their chains (about 15 test rows per identity,
    # so 2 certificates per pass can certify), a slice of the operator triplets, few pairs
    "smoke": dict(identities=6, chains=None, train=1500, test=400, sizes=(500, 1500), mc_reps=3,
                  audit=dict(pairs=10, kde_pairs=3, roc_pairs=3, certificates=2, permutations=200,
                             permutation_pairs=3)),
    # the book: every chain and triplet, the papers' per-pass audit sizes (Picture the Epsilon, Tables 7-8)
    "full": _FULL,
    # "paper" equals "full": the full profile already runs the papers' protocol on the whole corpus
    "paper": _FULL,
}

#: The pages' papermill parameters (both pages of chapter 4).
PARAMETERS = (_parameters.PROFILE,
              _parameters.Parameter("data", str, "corpora folder, relative to the repository root"),
              _parameters.ENCODERS, _parameters.SEED, _parameters.N_JOBS)


def check_parameters(namespace: dict, page: str) -> dict[str, Any]:
    """Check a page's parameters (:func:`epsaudit.studies.parameters.check`); encoders in the chapter's order.

    Raises
    ------
    ValueError
        An unknown parameter or a value that is not allowed, naming it and the allowed values.
    """
    values = _parameters.check(namespace, PARAMETERS, page)
    namespace["encoders"] = values["encoders"] = [e for e in ENCODERS if e in values["encoders"]]
    return values


def choose_profile(name: str) -> dict[str, Any]:
    """The settings of one of :data:`PROFILES`.

    Raises
    ------
    ValueError
        An unknown profile name.

    Examples
    --------
    >>> choose_profile("smoke")["mc_reps"], choose_profile("paper") == choose_profile("full")
    (3, True)
    """
    return _choose_profile(PROFILES, name, "chapter 4 (the cascade)")


def load_chapter_corpora(directory: str | Path, settings: Mapping[str, Any], *,
                         encoders: Sequence[str] = ENCODERS) -> dict[str, Corpora]:
    """Each encoder's corpora (:func:`epsaudit.corpora.load_corpora`, hashes verified), sliced as the
    profile says (:func:`epsaudit.corpora.subset_corpora`).

    Parameters
    ----------
    directory : path-like
        The corpora folder; a relative folder is taken from the repository, not the working directory.
    settings : mapping
        A profile: ``identities``, ``chains``, ``train``, ``test``.
    encoders : sequence of str

    Returns
    -------
    dict encoder -> Corpora

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`epsaudit.corpora.load_corpora`.
    """
    folder = _parameters.data_folder(directory)
    corpora = {e: load_corpora(e, folder) for e in encoders}
    if any(settings[k] is not None for k in ("identities", "chains", "train", "test")):
        corpora = {e: subset_corpora(c, identities=settings["identities"], chains_per_identity=settings["chains"],
                                     train=settings["train"], test=settings["test"]) for e, c in corpora.items()}
    return corpora


def variants_of(corpora: Mapping[str, Corpora]) -> tuple[str, ...]:
    """The swap variants of the corpora's design (``hull``, ``inner``)."""
    return tuple(next(iter(corpora.values())).manifest["design"]["variants"])


def example_chains(corpora: Corpora, variants: Sequence[str], *, chains: int = 2) -> list[dict] | None:
    """Re-create the first chain of the first ``chains`` identities in every variant (the swaps are
    deterministic: exactly the images the corpus encoded), or ``None`` without the LFW images.

    Returns
    -------
    list of dict or None
        Per chain: ``identity``, ``design`` (its row of the chains design), ``variants`` (variant ->
        (pass images, donor images), :func:`epsaudit.build.corpora_builder.render_chain`).
    """
    if not images_available():
        return None
    from ..build.corpora_builder import render_chain

    return [{"identity": row["identity"], "design": row.to_dict(),
             "variants": {v: render_chain(row.to_dict(), v) for v in variants[:2]}}
            for _, row in corpora.chains.groupby("identity").head(1).head(chains).iterrows()]


# -------------------------------------------------------------------------------------------------
# centred scores against the galleries


def mean_direction(x) -> np.ndarray:
    """Mean of the unit-normalised rows of ``x``, shape (d,).

    Examples
    --------
    >>> mean_direction([[2.0, 0.0], [0.0, 3.0]]).tolist()
    [0.5, 0.5]
    """
    return unit_rows(np.asarray(x, dtype=np.float64)).mean(axis=0)


def centred_unit(x, centre) -> np.ndarray:
    """Unit-normalise the last axis, subtract ``centre``, re-normalise (the chapter's cosine space).

    Examples
    --------
    >>> centred_unit([[3.0, 0.0]], [0.0, 0.5]).round(3).tolist()
    [[0.894, -0.447]]
    """
    return unit_rows(unit_rows(np.asarray(x, dtype=np.float64)) - centre)


def reference_centre(corpora: Corpora) -> np.ndarray:
    """Mean direction of the operator *train* photographs (every donor or target once), shape (d,).

    Raises
    ------
    ValueError
        If the operator design has no train triplet.
    """
    train = corpora.triplets[corpora.triplets["partition"] == "train"]
    if train.empty:
        raise ValueError(f"{corpora.directory / DESIGN_FILES['triplets']}: no train triplets, so no reference centre")
    return mean_direction(corpora.embeddings(sorted(set(train["donor"]) | set(train["target"]))))


def chain_embeddings(corpora: Corpora, variant: str) -> tuple[np.ndarray, pd.DataFrame]:
    """Raw embeddings of every complete chain of ``variant``, pass 0 (the start photograph) to ``K``.

    Returns
    -------
    embeddings : ndarray, shape (K + 1, m, d)
    chains : pandas.DataFrame
        The ``m`` complete chains' rows of the chains design, in the order of axis 1.

    Raises
    ------
    ValueError
        An unknown variant.
    """
    key = ("chain_embeddings", variant)
    if key not in corpora.cache:
        part = corpora.cascade[corpora.cascade["variant"] == variant]
        if part.empty:
            raise ValueError(f"{embedding_file(corpora.encoder, 'cascade')}: no rows for variant {variant!r}; "
                             f"variants present: {corpora.variants}")
        ids = np.sort(part["chain"].unique())
        chains = corpora.chains.set_index("chain").loc[ids].reset_index()
        cols = corpora.embedding_columns
        swaps = part.sort_values(["pass", "chain"])[cols].to_numpy(dtype=np.float64)
        swaps = swaps.reshape(corpora.passes, len(ids), len(cols))
        corpora.cache[key] = (np.concatenate([corpora.embeddings(chains["start"])[None], swaps]), chains)
    emb, chains = corpora.cache[key]
    return emb.copy(), chains.copy()


@dataclass(frozen=True)
class _Galleries:
    """Centred originals and padded gallery indices (-1 = padding) of one variant's complete chains."""

    vectors: np.ndarray      # (n_orig, d)
    target: np.ndarray       # (m, g_t)
    nonmember: np.ndarray    # (m, g_n)
    union: np.ndarray        # (C, g_u): each candidate identity's union of target galleries
    truth: np.ndarray        # (m,): candidate index of each chain's identity
    start: np.ndarray        # (m,): originals index of each chain's start


def _padded(groups: Sequence[Sequence[int]]) -> np.ndarray:
    out = np.full((len(groups), max(len(g) for g in groups)), -1, dtype=np.int64)
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
    # the closed set is every target identity of the design (whether or not its chains completed)
    tg = gal[gal["role"] == "target"].merge(corpora.chains[["chain", "identity"]], on="chain")
    union = tg.groupby(tg["identity"].astype(str))["pos"].agg(lambda x: sorted(set(x)))
    where = {c: j for j, c in enumerate(union.index)}
    return _Galleries(vectors=vectors, target=idx["target"], nonmember=idx["nonmember"],
                      union=_padded(list(union)), truth=np.array([where[str(i)] for i in chains["identity"]]),
                      start=np.array([pos[i] for i in chains["start"]]))


def _nan_median(x: np.ndarray) -> np.ndarray:
    """Median over the last axis ignoring NaN padding (every row holds at least one number)."""
    srt = np.sort(x, axis=-1)
    n = np.sum(~np.isnan(x), axis=-1, keepdims=True)
    lo, hi = np.take_along_axis(srt, (n - 1) // 2, axis=-1), np.take_along_axis(srt, n // 2, axis=-1)
    return ((lo + hi) / 2.0)[..., 0]


def _median_scores(probes: np.ndarray, vectors: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Median cosine of probes (P, m, d) to per-chain galleries ``vectors[index[i]]`` -> (P, m)."""
    sims = np.einsum("pmd,mgd->pmg", probes, vectors[np.where(index < 0, 0, index)])
    pad = index < 0
    return _nan_median(np.where(pad[None], np.nan, sims)) if pad.any() else np.median(sims, axis=2)


@dataclass(frozen=True)
class CentredScores:
    """What :func:`centred_scores` computed for one variant.

    Attributes
    ----------
    target, nonmember : ndarray, shape (P, m)
        Median centred cosine of each pass (axis 0) and chain (axis 1) to its target / non-member gallery.
    probes, embeddings : ndarray, shape (P, m, d)
        The centred unit embeddings scored, and the raw ones.
    chains : pandas.DataFrame
        The ``m`` complete chains.
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
    """Target and non-member scores of the measured chains, or of ``embeddings`` (a model rollout,
    shape (P, m, d), chains in the order of :func:`chain_embeddings`) in their place.

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


def excess_ratios(excess) -> pd.Series:
    """``excess_k / excess_{k-1}`` (``<NA>`` at pass 0).

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


# -------------------------------------------------------------------------------------------------
# the operator corpus and the fit's checks


def operator_arrays(corpora: Corpora, variant: str, partition: str
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Donor, target and swap embeddings (raw, (n, d)) of one partition's triplets, and the donor and
    target identity of each (``groups``, (n, 2): the keys of the identity-disjoint folds).

    Raises
    ------
    ValueError
        An unknown partition or a variant with no operator rows for it.
    """
    if partition not in ("train", "test"):
        raise ValueError(f"partition must be 'train' or 'test', got {partition!r}")
    key = ("operator_arrays", variant, partition)
    if key not in corpora.cache:
        trip = corpora.triplets[corpora.triplets["partition"] == partition]
        rows = trip.merge(corpora.operator[corpora.operator["variant"] == variant], on="triplet", how="inner")
        if rows.empty:
            raise ValueError(f"{embedding_file(corpora.encoder, 'operator')}: no {partition} swaps for variant "
                             f"{variant!r} (variants present: {sorted(corpora.operator['variant'].unique())})")
        corpora.cache[key] = (corpora.embeddings(rows["donor"]), corpora.embeddings(rows["target"]),
                              rows[corpora.embedding_columns].to_numpy(dtype=np.float64),
                              rows[["donor_identity", "target_identity"]].astype(str).to_numpy())
    return tuple(a.copy() for a in corpora.cache[key])  # type: ignore[return-value]


def same_person_photos(corpora: Corpora, identities) -> dict[str, np.ndarray]:
    """Raw embeddings of the original photographs of each of ``identities`` (identity -> (n_i, d))."""
    orig = corpora.originals[corpora.originals["identity"].isin(set(np.ravel(identities)))]
    return {k: v[corpora.embedding_columns].to_numpy(dtype=np.float64) for k, v in orig.groupby("identity")}


def _correlations(r: np.ndarray, a: np.ndarray) -> dict[str, float]:
    """Mean and largest |Pearson correlation| of residual coordinate j with coordinate j' of ``a``."""
    za = (r - r.mean(0)) / np.where(r.std(0) > 0, r.std(0), np.inf)
    zb = (a - a.mean(0)) / np.where(a.std(0) > 0, a.std(0), np.inf)
    corr = np.abs(za.T @ zb / len(r))
    return {"mean_abs": float(corr.mean()), "max_abs": float(corr.max())}


def residual_checks(op: AffineOperator, d, t, s, *, same_person: Mapping[Hashable, np.ndarray] | None = None,
                    top: int = 10, seed: Any = 0) -> dict[str, Any]:
    """Adequacy checks of the held-out residual ``r = s - (A d + B t + c)`` (*Toward Interpretable
    Privacy Guarantees*, Section VI-B and Appendix D).

    Returns
    -------
    dict
        ``n``; ``top_over_mean`` (largest eigenvalue of the residual covariance over the mean one; 1
        if isotropic); ``top_share`` (variance share of the ``top`` principal directions);
        ``non_gaussian`` (coordinates with Shapiro-Wilk p < 1e-3, on at most 5,000 seeded rows) of
        ``tested``; ``target_mean_abs``/``target_max_abs`` and ``donor_mean_abs``/``donor_max_abs``
        (|correlation| of residual and input coordinates); ``bias`` (mean residual norm over the RMS
        norm); ``same_person`` (median residual norm over the median distance of two photographs of one
        identity; NaN without ``same_person``).
    """
    d, t, s = (np.asarray(x, dtype=np.float64) for x in (d, t, s))
    r = s - op.predict(d, t)
    n, dim = r.shape
    eig = np.clip(np.linalg.eigvalsh(np.cov(r, rowvar=False))[::-1], 0, None)
    sub = r if n <= 5000 else r[generator(seed, "residual-subsample").choice(n, 5000, replace=False)]
    pvals = np.array([stats.shapiro(sub[:, j]).pvalue for j in range(dim)])
    dists = [np.linalg.norm(x[:, None] - x[None], axis=2)[np.triu_indices(len(x), 1)]
             for x in (same_person or {}).values() if len(x) >= 2]
    tc, dc = _correlations(r, t), _correlations(r, d)
    return {"n": n, "top_over_mean": float(eig[0] / eig.mean()), "top_share": float(eig[:top].sum() / eig.sum()),
            "non_gaussian": int(np.sum(pvals < 1e-3)), "tested": dim,
            "target_mean_abs": tc["mean_abs"], "target_max_abs": tc["max_abs"],
            "donor_mean_abs": dc["mean_abs"], "donor_max_abs": dc["max_abs"],
            "bias": float(np.linalg.norm(r.mean(0)) / np.sqrt(np.mean(np.sum(r**2, axis=1)))),
            "same_person": (float(np.median(np.linalg.norm(r, axis=1)) / np.median(np.concatenate(dists)))
                            if dists else float("nan"))}


# -------------------------------------------------------------------------------------------------
# the cascade predicted from the fit alone (Section VII)


def _monte_carlo(op: AffineOperator, scored, start: np.ndarray, donors: np.ndarray, law: tuple, passes: int,
                 mc_reps: int, seed: Any) -> tuple[dict[str, Any], float]:
    """Columns of the Monte Carlo rollout (medians over replicates) and the Lyapunov floor."""
    mu, cov = law
    m = len(start)
    rng = generator(seed, "model-monte-carlo")
    reps: dict[str, list] = {k: [] for k in ("leakage", "nonmember", "floor", "excess", "auc", "lyapunov")}
    for _ in range(int(mc_reps)):
        draws = donors[rng.integers(0, len(donors), size=(passes, m))]
        tgt, non = scored(rollout(op, start, draws, noise=True, seed=rng))
        st_t, st_n = scored(rng.multivariate_normal(mu, cov, size=m, method="eigh")[None])
        lk, fl = np.median(tgt, axis=1), float(np.median(st_t))
        reps["leakage"].append(lk)
        reps["nonmember"].append(np.median(non, axis=1))
        reps["floor"].append(fl)
        reps["excess"].append(lk - fl)
        reps["auc"].append([membership_metrics(tgt[p], non[p])["auc"] for p in range(passes + 1)])
        reps["lyapunov"].append(st_n.ravel())
    excess = np.median(np.array(reps["excess"]), axis=0)
    return ({"monte_carlo_leakage": np.median(np.array(reps["leakage"]), axis=0),
             "monte_carlo_nonmember": np.median(np.array(reps["nonmember"]), axis=0),
             "monte_carlo_floor": float(np.median(reps["floor"])), "monte_carlo_excess": excess,
             "monte_carlo_excess_ratio": excess_ratios(excess),
             "monte_carlo_auc": np.median(np.array(reps["auc"]), axis=0)},
            float(np.median(np.concatenate(reps["lyapunov"]))))


def model_predictions(op: AffineOperator, corpora: Corpora, variant: str, *, passes: int = PASSES,
                      mc_reps: int = 20, seed: Any = 0) -> pd.DataFrame:
    """The cascade predicted from the operator fit alone (Section VII, Figure 5 of *Toward
    Interpretable Privacy Guarantees*), scored with the measured cascade's galleries and centring.

    Rollouts (:func:`epsaudit.operator.rollout`) start from the complete chains' pass-0 photographs.
    *Noiseless*: the donor at the mean train donor, no noise; its floor is the fixed point
    ``(I - B)^-1 (A E[d] + c)`` scored against the target galleries. *Monte Carlo*: a train donor
    drawn per chain and pass and Gaussian noise of the residual covariance, ``mc_reps`` seeded
    replicates (medians); its floor is one draw per chain from the stationary law
    (:func:`epsaudit.operator.stationary_law`) scored against the target galleries. Each model's excess
    is taken above its own floor. ``carrier``: median ``cos(B^k t0, t0)``. ``lyapunov_floor``: the
    stationary draws scored against the *non-member* galleries (comparable with the measured floor).

    Returns
    -------
    pandas.DataFrame
        One row per pass ``0..passes``: ``noiseless_leakage``, ``noiseless_nonmember``,
        ``noiseless_floor``, ``noiseless_excess``, ``noiseless_excess_ratio``, the same ``monte_carlo_*``
        and ``monte_carlo_auc``, ``carrier``, ``lyapunov_floor``, ``lyapunov_residual``.

    Raises
    ------
    ValueError
        ``passes < 1``, ``mc_reps < 1``, or ``rho(B) >= 1`` (no stationary law).
    """
    if int(passes) < 1 or int(mc_reps) < 1:
        raise ValueError(f"passes and mc_reps must be >= 1, got {passes} and {mc_reps}")
    c = reference_centre(corpora)
    start = chain_embeddings(corpora, variant)[0][0]
    donors = operator_arrays(corpora, variant, "train")[0]
    d_mean, d_cov = donors.mean(axis=0), np.cov(donors, rowvar=False)
    law = stationary_law(op, d_mean, d_cov)
    m, dim = start.shape

    def scored(emb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        sc = centred_scores(corpora, variant, emb, c)
        return sc.target, sc.nonmember

    out = pd.DataFrame({"pass": np.arange(passes + 1)})
    fixed = np.linalg.solve(np.eye(dim) - op.B, op.A @ d_mean + op.c)
    tgt, non = scored(rollout(op, start, np.broadcast_to(d_mean, (passes, dim)), noise=False))
    floor = float(np.median(scored(np.broadcast_to(fixed, (1, m, dim)))[0]))
    lk = np.median(tgt, axis=1)
    out["noiseless_leakage"], out["noiseless_nonmember"] = lk, np.median(non, axis=1)
    out["noiseless_floor"], out["noiseless_excess"] = floor, lk - floor
    out["noiseless_excess_ratio"] = excess_ratios(lk - floor)
    columns, lyapunov_floor = _monte_carlo(op, scored, start, donors, law, passes, mc_reps, seed)
    for name, column in columns.items():
        out[name] = column
    carrier = [start]
    for _ in range(passes):
        carrier.append(carrier[-1] @ op.B.T)
    out["carrier"] = np.median(np.einsum("kmd,md->km", unit_rows(np.stack(carrier)), unit_rows(start)), axis=1)
    out["lyapunov_floor"] = lyapunov_floor
    out["lyapunov_residual"] = lyapunov_residual(op.B, law[1], op.A @ d_cov @ op.A.T + op.residual_cov)
    return out
