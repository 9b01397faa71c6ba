"""Chapter 3.1, membership inference on the swaps and certified trade-off curves: the page's plumbing.

*Toward Interpretable Privacy Guarantees in Face-Swapping Anonymization* (Section V, Table I) scores
each face swap against galleries of photographs; the page runs that adversary on chapter 3's ``swap``
conditions and certifies the trade-off curves of the pairs chapter 3 certified. Conditions,
parameters and profiles are chapter 3's (:mod:`epsaudit.studies.face_study`, re-exported here).

Each swap (labelled by its *target*, its image id the source photograph) is scored by the cosine of its embedding to
three galleries, aggregated by the median and the max (:func:`swap_membership`): the target's other original photographs
(the same regime's ``none`` table, its own source excluded); every photograph of one seeded non-member identity
(:func:`assign_non_members`); the donor's photographs. Cosines are centred on the mean unit-normalised original
(:func:`reference_centre`) and re-normalised (raw dlib vectors share a large common offset). Definitions: the book's
methods chapter, section 'Membership inference and the affine operator (face-swap operator paper)'.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Hashable, Sequence

import numpy as np
import pandas as pd

from ..data import EmbeddingTable
from ..build.images import images_available
from ..audits.membership import cmc
from ..protocol import generator
from ..validation import unit_rows
from .face_study import (CONDITIONS, ENCODERS, GENERATORS, PARAMETERS, PROFILES, audit_settings,  # noqa: F401
                         check_parameters, choose_profile, load_conditions)
import matplotlib.pyplot as plt
from .figures import PALETTE

__all__ = ["CONDITIONS", "ENCODERS", "GENERATORS", "PARAMETERS", "PROFILES", "audit_settings", "check_parameters",
           "choose_profile", "load_conditions", "images_available", "reference_centre", "assign_non_members",
           "swap_membership", "certified_pairs", "rows_for_deviation", "example_triplets", "score_histograms", "membership_roc", "tradeoff_curves", "image_triplets"]


def reference_centre(*tables: EmbeddingTable) -> np.ndarray:
    """The adversary's reference mean: the mean of the unit-normalised rows of ``tables``, shape (d,).

    Examples
    --------
    >>> t = EmbeddingTable.from_arrays(["a", "b"], [[1.0, 0.0], [0.0, 1.0]])
    >>> reference_centre(t).tolist()
    [0.5, 0.5]
    """
    return unit_rows(np.vstack([t.embeddings for t in tables])).mean(axis=0)


def assign_non_members(n: int, identities: Sequence[Hashable], seed: int | tuple = 0) -> list[Hashable]:
    """One non-member identity per swap: a seeded permutation of ``identities`` (sorted), cycled.

    Raises
    ------
    ValueError
        If ``identities`` is empty.

    Examples
    --------
    >>> sorted(assign_non_members(4, ["x", "y"], seed=0))
    ['x', 'x', 'y', 'y']
    """
    ids = sorted(identities, key=str)
    if not ids:
        raise ValueError("no non-member identities")
    perm = generator(seed, "non-member-order").permutation(len(ids))
    return [ids[perm[i % len(ids)]] for i in range(n)]


def _subsample(x: np.ndarray, size: int | None, rng: np.random.Generator) -> np.ndarray:
    if size is None or len(x) <= size:
        return x
    return x[np.sort(rng.choice(len(x), size, replace=False))]


def swap_membership(swap: EmbeddingTable, originals: EmbeddingTable, non_members: EmbeddingTable,
                    donor: EmbeddingTable, *, seed: int | tuple = 0, gallery_size: int | None = None,
                    max_rank: int = 10) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """Score every swap against its target's, a non-member's and the donor's gallery (module docstring).

    Parameters
    ----------
    swap, originals, non_members, donor : EmbeddingTable
        Swap outputs (labels: targets, image ids: source photographs); the same photographs unchanged
        (the target galleries); identities outside the target set (the other regime's ``none`` table);
        the donor identity's photographs.
    seed : int or tuple
        Seeds the non-member assignment and the gallery subsampling (one stream per swap image).
    gallery_size : int, optional
        Cap every target and non-member gallery at this many photographs.
    max_rank : int, default=10
        Length of the closed-set CMC curves.

    Returns
    -------
    tuple
        ``(scores, cmc)``: one row per swap with ``identity``, ``image_id``, ``non_member``, ``n_target``,
        ``n_non_member``, centred cosines ``<role>_<median|max>`` (target, non_member, donor),
        ``raw_target_median`` and ``raw_non_member_median`` (uncentred) and ``genuine_median`` (the source
        photograph against the same gallery); and ``{"median": rates, "max": rates}``, the closed-set
        rank-1..k identification rates among all target identities.

    Raises
    ------
    ValueError
        Overlapping target and non-member identities, a swap whose photograph is not among
        ``originals``, or a target with no other photograph.
    """
    if set(swap.labels) & set(non_members.labels):
        raise ValueError("non-member identities overlap the targets")
    c = reference_centre(originals, non_members)
    orig_c, swaps_c = unit_rows(originals.embeddings - c), unit_rows(swap.embeddings - c)
    donor_c = unit_rows(unit_rows(donor.embeddings) - c)
    by_label = {str(lab): np.flatnonzero(originals.labels == lab) for lab in np.unique(originals.labels)}
    index_of = {iid: i for i, iid in enumerate(originals.image_ids)}
    nm_groups = non_members.groups(min_rows=2)
    nm_ids = assign_non_members(swap.n_rows, list(nm_groups), seed)
    rows = []
    for i, (lab, iid) in enumerate(zip(swap.labels, swap.image_ids)):
        if iid not in index_of:
            raise ValueError(f"swap {iid} has no original photograph in the originals table")
        members = by_label[str(lab)][by_label[str(lab)] != index_of[iid]]
        if len(members) == 0:
            raise ValueError(f"target {lab} has no photograph besides {iid}")
        rng = generator(seed, "gallery-subsample", iid)
        members = _subsample(members, gallery_size, rng)
        nm_raw = _subsample(nm_groups[nm_ids[i]], gallery_size, rng)
        s_t, s_n, s_d = orig_c[members] @ swaps_c[i], unit_rows(nm_raw - c) @ swaps_c[i], donor_c @ swaps_c[i]
        rows.append({"identity": str(lab), "image_id": str(iid), "non_member": str(nm_ids[i]),
                     "n_target": len(members), "n_non_member": len(nm_raw),
                     "target_median": np.median(s_t), "target_max": s_t.max(),
                     "non_member_median": np.median(s_n), "non_member_max": s_n.max(),
                     "donor_median": np.median(s_d), "donor_max": s_d.max(),
                     "raw_target_median": np.median(originals.embeddings[members] @ swap.embeddings[i]),
                     "raw_non_member_median": np.median(unit_rows(nm_groups[nm_ids[i]]) @ swap.embeddings[i]),
                     "genuine_median": np.median(orig_c[members] @ orig_c[index_of[iid]])})
    # closed set: every swap against every target identity's gallery, its own source excluded
    targets = sorted(by_label)
    sims = swaps_c @ orig_c.T
    sims[np.arange(swap.n_rows), [index_of[i] for i in swap.image_ids]] = np.nan
    truth = np.array([targets.index(str(lab)) for lab in swap.labels])
    curves = {agg: cmc(np.column_stack([fn(sims[:, by_label[t]], axis=1) for t in targets]), truth, max_rank)
              for agg, fn in (("median", np.nanmedian), ("max", np.nanmax))}
    return pd.DataFrame(rows), curves


def certified_pairs(per_pair: pd.DataFrame) -> pd.DataFrame:
    """The pairs an audit certified on its reserved test rows (``roc_reserved`` rows), best first.

    Returns
    -------
    pandas.DataFrame
        ``identity_a``, ``identity_b``, ``n_test_a``, ``n_test_b``, ``reserved`` (the certificate),
        ``cap``; empty when the audit certified none.
    """
    rows = per_pair[per_pair["route"] == "roc_reserved"]
    return pd.DataFrame({"identity_a": rows["identity_a"].to_numpy(), "identity_b": rows["identity_b"].to_numpy(),
                         "n_test_a": rows["n_a"].astype(int).to_numpy(), "n_test_b": rows["n_b"].astype(int).to_numpy(),
                         "reserved": rows["value"].astype(float).to_numpy(),
                         "cap": rows["cap"].astype(float).to_numpy()})


def rows_for_deviation(mmd2: float, alpha: float, *, limit: int = 1_000_000) -> int:
    """Fewest test rows per identity at which the MMD deviation ``sqrt(8 (2/n) log(1/alpha))``
    (:func:`epsaudit.bounds.mmd2_deviation`) falls below ``mmd2``; 0 if none up to ``limit``.

    Examples
    --------
    >>> rows_for_deviation(0.5, 0.05 / 60)  # 16 log(1200) / 0.25 = 453.7
    454
    """
    from ..bounds import mmd2_deviation

    if not mmd2 > 0:
        return 0
    guess = int(np.ceil(16.0 * np.log(1.0 / alpha) / mmd2 ** 2))
    for n in range(max(2, guess - 2), min(limit, guess + 3) + 1):
        if float(mmd2_deviation(n, n, alpha)) < mmd2:
            return n
    return 0


def example_triplets(swap: EmbeddingTable, donor_id: str, *, k: int = 4, seed: int | tuple = 0,
                     image_root: str | Path | None = None, variant: str = "hull") -> list[dict[str, Any]]:
    """``k`` target / donor / swap images, targets drawn (seeded) from distinct identities of ``swap``;
    the swap is recomputed by the data's deterministic :class:`epsaudit.build.SwapGenerator`.

    Returns
    -------
    list of dict
        ``target_id``, ``target``, ``donor``, ``swap`` (uint8 RGB arrays, shape (H, W, 3)).

    Raises
    ------
    epsaudit.build.ImageRootError
        If the LFW images are absent.
    """
    from ..build import generators as gen
    from ..build import images as img

    donor = img.load_image(donor_id, image_root)
    swapper = gen.SwapGenerator(donor, donor_id, variant=variant)
    labels = sorted(set(swap.labels))
    rng = generator(seed, "example-triplets")
    out = []
    for lab in [labels[i] for i in rng.choice(len(labels), size=min(k, len(labels)), replace=False)]:
        ids = sorted(i for i, label in zip(swap.image_ids, swap.labels) if label == lab)
        target_id = ids[int(rng.integers(len(ids)))]
        target = img.load_image(target_id, image_root)
        swapped, _ = swapper(target, target_id)  # a target without a face passes through, as in the data
        out.append({"target_id": target_id, "target": target, "donor": donor, "swap": swapped})
    return out


# --- Figures --------------------------------------------------------------------------------------


#: Colours of the three galleries (as in the face-swap operator paper's Figure 2: target orange,
#: non-member blue, donor green), from the Okabe-Ito palette.
ROLE_COLOURS = {"target": PALETTE[1], "non_member": PALETTE[0], "donor": PALETTE[2]}

ROLE_NAMES = {"target": "target (member)", "non_member": "non-member", "donor": "donor"}


def score_histograms(panels: dict, *, bins: int = 50):
    """Similarity of each swap to the three galleries, one panel per encoder (the face-swap operator
    paper's Figure 2 analog, median aggregation).

    Parameters
    ----------
    panels : dict
        ``label -> {"scores": DataFrame with target_median, non_member_median, donor_median, ...}``
        (:func:`swap_membership`).
    bins : int, default=50
        Histogram bin edges.

    Returns
    -------
    matplotlib.figure.Figure
        A one-photograph donor gallery gives one score for every swap: drawn as a vertical line.
    """
    labels = list(panels)
    fig, axes = plt.subplots(1, len(labels), figsize=(8.0, 3.6), squeeze=False, sharey=False, layout="constrained")
    for ax, label in zip(axes[0], labels):
        s = panels[label]["scores"]
        cols = [f"{r}_median" for r in ROLE_COLOURS]
        edges = np.linspace(float(s[cols].min().min()) - 0.02, float(s[cols].max().max()) + 0.02, bins)
        for role, colour in ROLE_COLOURS.items():
            values = s[f"{role}_median"]
            if values.nunique() == 1:
                ax.axvline(values.iloc[0], color=colour, lw=2.5, label=f"{ROLE_NAMES[role]} (one score)")
            else:  # a light fill and a full-colour outline, so that overlapping histograms stay apart
                ax.hist(values, bins=edges, color=colour, alpha=0.3, density=True, histtype="stepfilled")
                ax.hist(values, bins=edges, color=colour, lw=1.6, density=True, histtype="step",
                        label=ROLE_NAMES[role])
        ax.set_title(label)
        ax.set_xlabel("cosine to the gallery (median, centred)")
        ax.set_ylabel("density")
    handles, names = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", ncol=3)
    return fig


def membership_roc(panels: dict):
    """ROC of the thresholding membership adversary, one panel per encoder, median and max aggregation
    (the face-swap operator paper's Figure 3 analog).

    Parameters
    ----------
    panels : dict
        ``label -> {"roc": {aggregate: (fpr, tpr)}, "auc": {aggregate: float}}``.

    Returns
    -------
    matplotlib.figure.Figure
        Log false-positive-rate axis (an FPR of 0 is drawn at 1e-4); grey lines at FPR 0.1% and 1%.
    """
    labels = list(panels)
    fig, axes = plt.subplots(1, len(labels), figsize=(8.0, 3.8), squeeze=False, sharey=True, layout="constrained")
    for ax, label in zip(axes[0], labels):
        for agg, style, colour in (("median", "-", PALETTE[0]), ("max", "--", PALETTE[5])):
            fpr, tpr = panels[label]["roc"][agg]
            ax.plot(np.maximum(fpr, 1e-4), tpr, style, color=colour, lw=1.8,
                    label=f"{agg} (AUC {panels[label]['auc'][agg]:.3f})")
        grid = np.logspace(-4, 0, 200)
        ax.plot(grid, grid, ":", color="grey", label="chance")
        for level in (0.001, 0.01):
            ax.axvline(level, color="grey", lw=0.8, alpha=0.6)
        ax.set_xscale("log")
        ax.set_xlim(1e-4, 1)
        ax.set_ylim(0, 1.01)
        ax.set_title(label)
        ax.set_xlabel("false-positive rate (log scale)")
        ax.legend(loc="lower right", fontsize=10)
    axes[0, 0].set_ylabel("true-positive rate")
    return fig


def tradeoff_curves(points: pd.DataFrame, envelopes: pd.DataFrame, *, panel_titles: dict | None = None):
    """Certified trade-off curves: each pair's points ``(FPR_hi, FNR_hi)`` and their envelope, one panel per condition
    (rows: encoders, columns: generators), with the Gaussian-DP curve of the panel's largest certified mu.

    Parameters
    ----------
    points, envelopes : pandas.DataFrame
        The bands' :meth:`epsaudit.audits.TradeoffCertificate.frame` rows (``fpr_upper``, ``fnr_upper``,
        ``mu``) and envelopes (``fpr``, ``fnr_envelope``), each with ``encoder``, ``generator`` and
        ``rank`` (the pair's selection rank, 1 = best).
    panel_titles : dict, optional
        Generator -> column title.

    Returns
    -------
    matplotlib.figure.Figure
        A pair's true trade-off curve lies on or below its envelope with the family's confidence. Filled markers certify
        something (below the diagonal), hollow ones do not; the dotted diagonal is two identical distributions; the
        dashed curve ``Phi(Phi^-1(1 - a) - mu)`` is at the panel's largest certified mu, where above 0.
    """
    from ..bounds import gaussian_tradeoff

    encoders = list(dict.fromkeys(points["encoder"]))
    generators = list(dict.fromkeys(points["generator"]))
    fig, axes = plt.subplots(len(encoders), len(generators), figsize=(8.0, 0.9 + 2.75 * len(encoders)),
                             squeeze=False, sharex=True, sharey=True, layout="constrained")
    ranks = sorted(set(points["rank"]))
    markers, grid = "osD^v<>", np.linspace(0.0, 1.0, 201)
    for (i, enc), (j, gen) in ((e, g) for e in enumerate(encoders) for g in enumerate(generators)):
        ax = axes[i, j]
        here = points[(points["encoder"] == enc) & (points["generator"] == gen)]
        for k, rank in enumerate(ranks):
            colour, marker = PALETTE[k % len(PALETTE)], markers[k % len(markers)]
            env = envelopes[(envelopes["encoder"] == enc) & (envelopes["generator"] == gen)
                            & (envelopes["rank"] == rank)]
            pts = here[here["rank"] == rank]
            useful = (pts["fpr_upper"] + pts["fnr_upper"]) < 1
            if useful.any():  # otherwise the envelope is the diagonal itself
                ax.plot(env["fpr"], env["fnr_envelope"], color=colour, lw=1.5, alpha=0.9)
            ax.scatter(pts.loc[useful, "fpr_upper"], pts.loc[useful, "fnr_upper"], color=colour, marker=marker, s=40,
                       zorder=3, label=f"pair {rank}")
            ax.scatter(pts.loc[~useful, "fpr_upper"], pts.loc[~useful, "fnr_upper"], facecolors="none",
                       edgecolors=colour, marker=marker, s=30, zorder=3, alpha=0.7)
        mu = float(here["mu"].max()) if len(here) else 0.0
        if mu > 0:
            ax.plot(grid, gaussian_tradeoff(grid, mu), "--", color="black", lw=1.2, zorder=2,
                    label="Gaussian-DP curve, largest certified μ")
            ax.text(0.97, 0.97, f"μ ≥ {mu:.2f}", transform=ax.transAxes, ha="right", va="top", fontsize=10)
        ax.plot([0, 1], [1, 0], ":", color="dimgrey", lw=1.2, zorder=4, label="no separation")
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xticks([0, 0.25, 0.5, 0.75, 1], ["0", "", "0.5", "", "1"])
        ax.set_yticks([0, 0.25, 0.5, 0.75, 1], ["0", "", "0.5", "", "1"])
        if i == 0:
            ax.set_title((panel_titles or {}).get(gen, gen))
        if j == 0:
            ax.set_ylabel(f"{enc}\nFNR upper limit")
        if i == len(encoders) - 1:
            ax.set_xlabel("FPR upper limit")
    handles = {}
    for ax in axes.flat:  # one legend entry per label, whichever panel drew it
        for handle, name in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(name, handle)
    order = [f"pair {r}" for r in ranks] + ["Gaussian-DP curve, largest certified μ", "no separation"]
    names = [n for n in order if n in handles]
    fig.legend([handles[n] for n in names], names, loc="outside lower center", ncol=min(len(names), 3))
    return fig


def image_triplets(triplets, *, columns=("target", "donor", "swap")):
    """Rows of images (e.g. target / donor / swap), each panel titled; pixel axes hidden.

    Parameters
    ----------
    triplets : list of dict
        Each with uint8 RGB arrays under ``columns`` and a ``target_id``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = plt.subplots(len(triplets), len(columns), figsize=(2.5 * len(columns), 2.7 * len(triplets)),
                             squeeze=False, layout="constrained")
    for row, item in zip(axes, triplets):
        for ax, key in zip(row, columns):
            ax.imshow(item[key])
            ax.set_xticks([])
            ax.set_yticks([])
            h, w = item[key].shape[:2]
            name = item["target_id"].split("/")[0].replace("_", " ")
            title = {"target": f"target: {name}", "donor": "donor (the same for all)"}.get(key, key)
            ax.set_title(f"{title}\n{w} × {h} px", fontsize=10)
    return fig
