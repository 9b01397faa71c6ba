"""Chapter 4, the swap cascade and the affine operator: the plumbing of ``notebooks/04_cascade.py``.

*Toward Interpretable Privacy Guarantees in Face-Swapping Anonymization* models a face swapper as an
affine stochastic operator ``s = A d + B t + c + e`` (Sections VI-VIII); definitions (leakage, floor,
excess): the book's methods chapter, section 'Membership inference and the affine operator
(face-swap operator paper)'. This module holds the profiles, the corpora's loading, the centred
scores (cosines centred on :func:`reference_centre`) and the rollouts; section 4.1 reuses them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ..data.corpora import DESIGN_FILES, ROLES, Corpora, embedding_file, load_corpora, subset_corpora
from ..build.images import images_available
from ..audits.membership import membership_metrics
from ..operator import AffineOperator, lyapunov_residual, rollout, stationary_law
from ..protocol import generator
from ..validation import unit_rows
from . import choose_profile as _choose_profile
from . import parameters as _parameters
import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
from .figures import PALETTE

__all__ = ["PASSES", "ENCODERS", "PROFILES", "PARAMETERS", "check_parameters", "choose_profile",
           "load_chapter_corpora", "variants_of", "example_chains", "centred_unit",
           "reference_centre", "chain_embeddings", "CentredScores", "centred_scores", "excess_ratios",
           "operator_arrays", "same_person_photos", "residual_checks", "model_predictions", "plot_example_chains", "spectra_against_size", "penalty_sensitivity", "eigenvalues", "leakage_per_pass", "excess_per_pass"]

#: Passes of the measured cascade, and passes the model predicts.
PASSES = 5
ENCODERS = ("dlib", "sface")

# identities/chains: cascade slice and train/test: operator triplets per variant (None: all); sizes: train
# sizes of the size curve; mc_reps: Monte Carlo rollouts; audit: per-pass audit sizes
_FULL = dict(identities=None, chains=None, train=None, test=None, sizes=(1000, 2000, 4000, 8000), mc_reps=20,
             audit=dict(pairs=500, kde_pairs=100, roc_pairs=200, certificates=50, permutations=10_000,
                        permutation_pairs=100))
PROFILES = {
    # under a minute: six identities, all their chains (~15 test rows each: 2 certificates can certify)
    "smoke": dict(identities=6, chains=None, train=1500, test=400, sizes=(500, 1500), mc_reps=3,
                  audit=dict(pairs=10, kde_pairs=3, roc_pairs=3, certificates=2, permutations=200,
                             permutation_pairs=3)),
    # the book: every chain and triplet, the papers' per-pass audit sizes (Picture the Epsilon, Tables 7-8)
    "full": _FULL,
    "paper": _FULL,  # the full profile already runs the papers' protocol on the whole corpus
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
    """Each encoder's corpora (:func:`epsaudit.data.corpora.load_corpora`), sliced as the profile says.

    Parameters
    ----------
    directory : path-like
        The corpora folder (a relative one is taken from the repository).
    settings : mapping
        A profile: ``identities``, ``chains``, ``train``, ``test``.
    encoders : sequence of str

    Returns
    -------
    dict encoder -> Corpora

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`epsaudit.data.corpora.load_corpora`.
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
    """Re-create (deterministically) the first chain of the first ``chains`` identities in every
    variant, or ``None`` without the LFW images.

    Returns
    -------
    list of dict or None
        Per chain: ``identity``, ``design`` (its design row), ``variants`` (variant -> (pass images,
        donor images), :func:`epsaudit.build.corpora_builder.render_chain`).
    """
    if not images_available():
        return None
    from ..build.corpora_builder import render_chain

    return [{"identity": row["identity"], "design": row.to_dict(),
             "variants": {v: render_chain(row.to_dict(), v) for v in variants[:2]}}
            for _, row in corpora.chains.groupby("identity").head(1).head(chains).iterrows()]


# -------------------------------------------------------------------------------------------------
# centred scores against the galleries


def _mean_direction(x) -> np.ndarray:
    """Mean of the unit-normalised rows of ``x``, shape (d,)."""
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
    return _mean_direction(corpora.embeddings(sorted(set(train["donor"]) | set(train["target"]))))


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


def nan_median(x: np.ndarray) -> np.ndarray:
    """Median over the last axis ignoring NaN padding (every row holds at least one number)."""
    srt = np.sort(x, axis=-1)
    n = np.sum(~np.isnan(x), axis=-1, keepdims=True)
    lo, hi = np.take_along_axis(srt, (n - 1) // 2, axis=-1), np.take_along_axis(srt, n // 2, axis=-1)
    return ((lo + hi) / 2.0)[..., 0]


def _median_scores(probes: np.ndarray, vectors: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Median cosine of probes (P, m, d) to per-chain galleries ``vectors[index[i]]`` -> (P, m)."""
    sims = np.einsum("pmd,mgd->pmg", probes, vectors[np.where(index < 0, 0, index)])
    pad = index < 0
    return nan_median(np.where(pad[None], np.nan, sims)) if pad.any() else np.median(sims, axis=2)


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
    """Target and non-member scores of the measured chains, or of ``embeddings`` (a rollout, (P, m, d)).

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
    """Donor, target and swap embeddings (raw, (n, d)) of one partition's triplets, and their identities
    (``groups``, (n, 2): the keys of the identity-disjoint folds).

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
        ``n``; ``top_over_mean`` (largest residual-covariance eigenvalue over the mean one; 1 if
        isotropic); ``top_share`` (variance share of the ``top`` principal directions); ``non_gaussian``
        (coordinates with Shapiro-Wilk p < 1e-3, on <= 5,000 seeded rows) of ``tested``;
        ``target_mean_abs``, ``target_max_abs``, ``donor_mean_abs``, ``donor_max_abs`` (|correlation| of
        residual and input coordinates); ``bias`` (mean residual norm over the RMS norm); ``same_person``
        (median residual norm over the median same-identity photograph distance; NaN without it).
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

    Rollouts (:func:`epsaudit.operator.rollout`) start from the complete chains' pass-0 photographs. *Noiseless*: the
    mean train donor, no noise; floor: the fixed point ``(I - B)^-1 (A E[d] + c)``. *Monte Carlo*: a train donor per
    chain and pass and Gaussian residual noise, ``mc_reps`` seeded replicates (medians); floor: one draw per chain from
    :func:`epsaudit.operator.stationary_law`. Floors are scored against the target galleries and each excess is above
    its own floor. ``carrier``: median ``cos(B^k t0, t0)``. ``lyapunov_floor``: the stationary draws against the
    *non-member* galleries (comparable with the measured floor).

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


# --- Figures --------------------------------------------------------------------------------------


#: Width of every figure of the chapter (inches): the page's text column at 1280 px.
WIDTH = 8.0

#: Colour and marker of each fit ("<variant>, <encoder>"), the same in every figure.
FIT_STYLE = {"hull, dlib": (PALETTE[0], "o"), "hull, SFace": (PALETTE[1], "s"),
             "inner, dlib": (PALETTE[2], "^"), "inner, SFace": (PALETTE[3], "D")}

#: Colour of each swap variant where the encoder is a panel of its own.
VARIANT_COLOUR = {"hull": PALETTE[0], "inner": PALETTE[5]}


def _fit_style(label: str, k: int) -> tuple[str, str]:
    return FIT_STYLE.get(label, (PALETTE[k % len(PALETTE)], "o"))


def _legend_below(fig, handles, labels, ncol: int) -> None:
    fig.legend(handles, labels, loc="outside lower center", ncol=ncol, frameon=False)


def plot_example_chains(examples: Sequence[Mapping]):
    """Re-rendered example chains (the paper's Figure 15 analog): one block per chain, one row per
    variant, the original photograph, passes 1-5 and the fifth pass's donor.

    Parameters
    ----------
    examples : sequence of dict
        :func:`example_chains` (images ``(H, W, 3)`` uint8).

    Returns
    -------
    matplotlib.figure.Figure
    """
    n_var = max(len(ex["variants"]) for ex in examples)
    fig = plt.figure(figsize=(WIDTH, 2.55 * len(examples) * n_var / 2 + 0.4 * len(examples)), layout="constrained")
    blocks = fig.subfigures(len(examples), 1, squeeze=False)[:, 0]
    for block, ex in zip(blocks, examples):
        block.suptitle(f"target: {ex['identity'].replace('_', ' ')}", fontsize=12, x=0.02, ha="left")
        axes = block.subplots(n_var, 7, squeeze=False)
        for j, (variant, (passes_img, donors_img)) in enumerate(ex["variants"].items()):
            for k, ax in enumerate(axes[j]):
                ax.set_xticks([])
                ax.set_yticks([])
                for side in ax.spines.values():
                    side.set_visible(False)
                image = donors_img[-1] if k == 6 else (passes_img[k] if k < len(passes_img) else None)
                if image is not None:
                    ax.imshow(image)
                if j == 0:
                    ax.set_title("original" if k == 0 else ("donor 5" if k == 6 else f"pass {k}"), fontsize=11)
            axes[j, 0].set_ylabel(variant, fontsize=12)
    return fig


def spectra_against_size(curve: pd.DataFrame):
    """``rho(B)`` and ``b_u`` against the number of train triplets (the paper's Figure 14 analog).

    Parameters
    ----------
    curve : pandas.DataFrame
        Tidy: ``fit`` ("<variant>, <encoder>"), ``train_triplets``, ``rho_B``, ``b_u`` (dimensionless).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = plt.subplots(1, 2, figsize=(WIDTH, 3.9), layout="constrained")
    handles = []
    for k, (fit, g) in enumerate(curve.groupby("fit", sort=False)):
        colour, marker = _fit_style(fit, k)
        for ax, col in zip(axes, ("rho_B", "b_u")):
            line, = ax.plot(g["train_triplets"], g[col], marker=marker, color=colour, label=fit)
        handles.append(line)
    sizes = sorted(set(curve["train_triplets"].astype(int)))
    for ax, what in zip(axes, (r"spectral radius $\rho(B)$", r"mean Rayleigh gain $b_u$")):
        ax.set_xscale("log")
        ax.set_xticks(sizes, [f"{n:,}" for n in sizes])  # the sizes fitted, not powers of ten
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("train triplets (single swaps, log scale)")
        ax.set_ylabel(what)
    _legend_below(fig, handles, [h.get_label() for h in handles], ncol=4)
    return fig


def penalty_sensitivity(sensitivity: pd.DataFrame):
    """CV R^2, ``rho(B)`` and ``sigma_max(B)`` against the ridge penalty, one line per fit; dots mark
    the penalties within one standard error of the best CV R^2, stars the chosen one.

    Parameters
    ----------
    sensitivity : pandas.DataFrame
        Tidy: ``fit`` and the columns of :func:`epsaudit.operator.penalty_sensitivity`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = plt.subplots(1, 3, figsize=(WIDTH, 4.2), layout="constrained")
    handles = []
    for k, (fit, sens) in enumerate(sensitivity.groupby("fit", sort=False)):
        colour, _ = _fit_style(fit, k)
        alpha = sens["alpha"].to_numpy(float)
        near, chosen = sens["within_one_se"].to_numpy(bool), sens["chosen"].to_numpy(bool)
        for ax, y in zip(axes, (sens["cv_r2"] - sens["cv_r2"].max(), sens["rho_B"], sens["sigma_max_B"])):
            y = np.asarray(y, float)
            line, = ax.plot(alpha, y, color=colour, label=fit)
            ax.plot(alpha[near], y[near], "o", ms=4, color=colour)
            ax.plot(alpha[chosen], y[chosen], "*", ms=13, color=colour, markeredgecolor="black", markeredgewidth=0.6)
        handles.append(line)
    for ax, what in zip(axes, ("CV $R^2$ minus its best", r"spectral radius $\rho(B)$",
                               r"$\sigma_{\max}(B)$ (log scale)")):
        ax.set_xscale("log")
        ax.set_xlabel("ridge penalty (log)")
        ax.set_ylabel(what)
    axes[0].set_ylim(-0.05, 0.005)
    axes[2].set_yscale("log")
    handles += [Line2D([], [], color="0.3", marker="o", ls="", ms=4, label="within one SE of the best CV $R^2$"),
                Line2D([], [], color="0.3", marker="*", ls="", ms=13, markeredgecolor="black", label="chosen")]
    _legend_below(fig, handles, [h.get_label() for h in handles], ncol=3)
    return fig


def eigenvalues(eigs: pd.DataFrame):
    """The eigenvalues of ``B`` with the unit circle (the paper's Figure 4 analog), one panel per encoder.

    Parameters
    ----------
    eigs : pandas.DataFrame
        Tidy: ``encoder``, ``variant``, ``real``, ``imaginary``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    encoders = list(dict.fromkeys(eigs["encoder"]))
    fig, axes = plt.subplots(1, len(encoders), figsize=(WIDTH, 4.4), sharex=True, sharey=True, squeeze=False,
                             layout="constrained")
    theta = np.linspace(0, 2 * np.pi, 400)
    handles = {}
    for ax, enc in zip(axes[0], encoders):
        circle, = ax.plot(np.cos(theta), np.sin(theta), color="0.55", lw=1, label="unit circle")
        handles["unit circle"] = circle
        radii = []
        for (v, g), marker in zip(eigs[eigs["encoder"] == enc].groupby("variant", sort=False), ("o", "x")):
            handles[v] = ax.scatter(g["real"], g["imaginary"], s=16, marker=marker, color=VARIANT_COLOUR.get(v),
                                    label=v, alpha=0.8)
            radii.append(rf"{v} {np.hypot(g['real'], g['imaginary']).max():.3f}")
        ax.text(-1.05, 1.05, r"$\rho(B)$: " + ", ".join(radii), fontsize=11, va="top")
        ax.set_aspect("equal")
        ax.set_title(f"{enc}: eigenvalues of $B$")
        ax.set_xlabel("real part")
    axes[0, 0].set_ylabel("imaginary part")
    _legend_below(fig, list(handles.values()), list(handles), ncol=len(handles))
    return fig


def _per_encoder_axes(frame: pd.DataFrame, height: float):
    encoders = list(dict.fromkeys(frame["encoder"]))
    fig, axes = plt.subplots(1, len(encoders), figsize=(WIDTH, height), sharey=True, squeeze=False,
                             layout="constrained")
    return fig, list(zip(encoders, axes[0]))


def leakage_per_pass(series: pd.DataFrame):
    """Target leakage per pass, measured and predicted by the Monte Carlo rollout, with the measured
    non-member score (the paper's Figure 6 analog); one panel per encoder.

    Parameters
    ----------
    series : pandas.DataFrame
        Tidy: ``encoder``, ``variant``, ``pass``, ``measured``, ``monte_carlo``, ``non_member`` (median cosines).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, panels = _per_encoder_axes(series, 4.3)
    for enc, ax in panels:
        for v, g in series[series["encoder"] == enc].groupby("variant", sort=False):
            colour = VARIANT_COLOUR.get(v)
            ax.plot(g["pass"], g["measured"], "o-", color=colour, label=f"{v}: measured")
            ax.plot(g["pass"], g["monte_carlo"], "s--", color=colour, mfc="white", label=f"{v}: Monte Carlo model")
            ax.plot(g["pass"], g["non_member"], ":", color=colour, lw=2, label=f"{v}: non-member")
        ax.set_title(enc)
        ax.set_xlabel("pass (0 = original photograph)")
    panels[0][1].set_ylabel("median centred cosine\nto the target's gallery")
    handles, labels = panels[0][1].get_legend_handles_labels()
    _legend_below(fig, handles, labels, ncol=2)
    return fig


def excess_per_pass(series: pd.DataFrame):
    """The excess over the non-member floor per pass on a log scale, with the slope ``rho(B)`` drawn
    from pass 1 (the paper's Figure 7 analog); one panel per encoder.

    Parameters
    ----------
    series : pandas.DataFrame
        Tidy: ``encoder``, ``variant``, ``pass``, ``excess``, ``rho_slope`` (pass-1 excess times ``rho(B)^(k-1)``), ``rho_B``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, panels = _per_encoder_axes(series, 4.1)
    for enc, ax in panels:
        for v, g in series[series["encoder"] == enc].groupby("variant", sort=False):
            colour = VARIANT_COLOUR.get(v)
            ex = g["excess"].astype(float)
            ax.plot(g["pass"][ex > 0], ex[ex > 0], "o-", color=colour, label=f"{v}: measured excess")
            slope = g.dropna(subset=["rho_slope"])
            ax.plot(slope["pass"], slope["rho_slope"], "--", color=colour,
                    label=rf"{v}: slope $\rho(B)$ from pass 1")
            ax.text(slope["pass"].iloc[-1] + 0.1, slope["rho_slope"].iloc[-1], f"{g['rho_B'].iloc[0]:.2f}",
                    color=colour, fontsize=11, va="center")
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlim(-0.3, 5.8)
        ax.set_title(enc)
        ax.set_xlabel("pass (0 = original photograph)")
    panels[0][1].set_ylabel("excess over the non-member\nfloor (log scale)")
    handles, labels = panels[0][1].get_legend_handles_labels()
    _legend_below(fig, handles, labels, ncol=2)
    return fig
