"""Chapter 3's membership adversary against the swaps, and the example images.

The view of *Toward Interpretable Privacy Guarantees in Face-Swapping Anonymization* (its Section
V-A to V-D, Table I) applied to the chapter's ``swap`` conditions. Each swap output (a row of the
``swap`` table; its label is the *target* identity, its image id the target photograph it was made
from) is scored by cosine similarity against three galleries, aggregated over the gallery by the
median and the max (:func:`swap_membership`):

- target: the target identity's other original photographs (the ``none`` table of the same
  regime), excluding the photograph the swap was made from;
- non-member: every photograph of one identity outside the target set (one per swap, assigned by
  a seeded permutation of the non-member identities, cycled);
- donor: the donor identity's photographs (``<encoder>_donor_none.csv``).

Cosines are taken after subtracting a reference mean (:func:`reference_centre`, the mean of the
unit-normalised original photographs) and re-normalising, because raw dlib vectors share a large
common offset (raw cosines of strangers ~0.8; :mod:`epsaudit.faces.encoders`); the raw cosines
are kept too. Closed-set identification ranks the swap's true target among all target identities
(each gallery excluding the swap's own source photograph).

:mod:`epsaudit.studies.face_study` re-exports every public name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd
from sklearn.metrics import roc_curve

from ...data import EmbeddingTable
from ...leakage import cmc, membership_metrics
from ...seeds import generator
from ...validation import unit_rows
from . import ENCODER_LABEL, ENCODERS, MATCHED_GALLERY, MIA, MIA_TABLE_I_FACEFUSION

AGGREGATES = ("median", "max")


def reference_centre(*tables: EmbeddingTable | np.ndarray) -> np.ndarray:
    """The adversary's reference mean: the mean of the unit-normalised rows of ``tables``.

    Parameters
    ----------
    *tables : EmbeddingTable or array_like, shape (n_i, d)

    Returns
    -------
    numpy.ndarray, shape (d,)
    """
    rows = [t.embeddings if isinstance(t, EmbeddingTable) else np.asarray(t, dtype=np.float64) for t in tables]
    return unit_rows(np.vstack(rows)).mean(axis=0)


def assign_non_members(n: int, identities: Sequence[Hashable], seed: int | tuple = 0) -> list[Hashable]:
    """One non-member identity per swap: a seeded permutation of ``identities`` (sorted), cycled.

    Parameters
    ----------
    n : int
        Swaps.
    identities : sequence
        The non-member identities.
    seed : int or tuple
        Base seed or stream key (purpose ``"non-member-order"``).

    Returns
    -------
    list
        ``n`` identities.

    Raises
    ------
    ValueError
        If ``identities`` is empty.
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


@dataclass(frozen=True)
class SwapMembership:
    """Scores of :func:`swap_membership`.

    Attributes
    ----------
    scores : pandas.DataFrame
        One row per swap: ``identity`` (target), ``image_id``, ``non_member``, gallery sizes
        ``n_target``/``n_non_member``/``n_donor``, and ``<role>_<aggregate>`` for role in target,
        non_member, donor and aggregate in median, max (centred cosines); ``raw_<role>_median``
        (uncentred); ``genuine_median``: the swap's *source photograph* against the same target
        gallery (what the target scored before the swap).
    cmc : dict
        ``{"median": ndarray, "max": ndarray}``: closed-set rank-k rates (k = 1..max_rank) over the
        target identities.
    candidates : int
        Identities in the closed set.
    centre : ndarray, shape (d,)
    gallery_size : int or None
        Common cap on the target and non-member galleries (None: full galleries).
    """

    scores: pd.DataFrame
    cmc: dict[str, np.ndarray]
    candidates: int
    centre: np.ndarray
    gallery_size: int | None

    def metrics(self, aggregate: str = "median", *, raw: bool = False) -> dict[str, float]:
        """Membership metrics of target (positive) against non-member (negative) scores.

        Parameters
        ----------
        aggregate : ``"median"`` or ``"max"``
        raw : bool
            Uncentred cosines (only the median aggregate is kept raw).

        Returns
        -------
        dict
            :func:`epsaudit.leakage.membership_metrics`: ``auc``, ``tpr_at_fpr_1pct``,
            ``tpr_at_fpr_0.1pct``, ``max_balanced_accuracy``, the class sizes.
        """
        prefix = "raw_" if raw else ""
        s = self.scores
        return membership_metrics(s[f"{prefix}target_{aggregate}"], s[f"{prefix}non_member_{aggregate}"])

    def summary(self) -> pd.DataFrame:
        """One row per aggregate (the face-swap operator paper's Table I columns and more).

        Returns
        -------
        pandas.DataFrame
            Index ``aggregate``; AUC, TPR at FPR <= 1% / 0.1% and max balanced accuracy (fractions),
            CMC rank-1 and rank-5, mean target / non-member / donor scores (centred cosines), the
            fraction of swaps closer to the donor than to their target, and the swaps.
        """
        rows = {}
        for agg in AGGREGATES:
            m = self.metrics(agg)
            s = self.scores
            rows[agg] = {
                "AUC": m["auc"], "TPR @ FPR<=1%": m["tpr_at_fpr_1pct"], "TPR @ FPR<=0.1%": m["tpr_at_fpr_0.1pct"],
                "max balanced accuracy": m["max_balanced_accuracy"],
                "CMC rank-1": float(self.cmc[agg][0]),
                "CMC rank-5": float(self.cmc[agg][min(4, len(self.cmc[agg]) - 1)]),
                "mean target": float(s[f"target_{agg}"].mean()),
                "mean non-member": float(s[f"non_member_{agg}"].mean()),
                "mean donor": float(s[f"donor_{agg}"].mean()),
                "donor > target": float(np.mean(s[f"donor_{agg}"] > s[f"target_{agg}"])),
                "swaps": int(len(s)),
            }
        return pd.DataFrame(rows).T.rename_axis("aggregate")


def swap_membership(swap: EmbeddingTable, originals: EmbeddingTable, non_members: EmbeddingTable,
                    donor: np.ndarray, *, centre: np.ndarray | None = None, seed: int | tuple = 0,
                    gallery_size: int | None = None, max_rank: int = 10) -> SwapMembership:
    """Score every swap against its target's, a non-member's and the donor's gallery (module docstring).

    Parameters
    ----------
    swap : EmbeddingTable
        Swap outputs; labels are target identities, image ids the source photographs.
    originals : EmbeddingTable
        The same photographs unchanged (generator ``none``): the target galleries.
    non_members : EmbeddingTable
        Photographs of identities outside the target set (e.g. the other regime's ``none`` table).
    donor : array_like, shape (g, d)
        The donor identity's photographs (unit-normalised or not).
    centre : ndarray (d,), optional
        Subtracted before the cosine; default :func:`reference_centre` of ``originals`` and
        ``non_members``.
    seed : int or tuple
        Base seed or stream key of the non-member assignment (:func:`assign_non_members`) and of
        the gallery subsampling (purpose ``"gallery-subsample"``, one stream per swap image).
    gallery_size : int, optional
        Cap every target and non-member gallery at this many photographs (seeded per swap), so the
        max aggregate does not favour the larger gallery.
    max_rank : int
        CMC length.

    Returns
    -------
    SwapMembership

    Raises
    ------
    ValueError
        Missing image ids, swaps whose photograph is not among ``originals``, a target with no
        other photograph, overlapping target and non-member identities.
    """
    for name, t in (("swap", swap), ("originals", originals)):
        if t.image_ids is None:
            raise ValueError(f"{name} table has no image-id column")
    if set(swap.labels) & set(non_members.labels):
        raise ValueError("non-member identities overlap the targets")
    c = reference_centre(originals, non_members) if centre is None else np.asarray(centre, dtype=np.float64)
    orig_c = unit_rows(originals.embeddings - c)
    swaps_c = unit_rows(swap.embeddings - c)
    by_label = {str(lab): np.flatnonzero(originals.labels == lab) for lab in np.unique(originals.labels)}
    index_of = {iid: i for i, iid in enumerate(originals.image_ids)}
    scores = _swap_scores(swap, originals, non_members, donor, c, orig_c, swaps_c, by_label, index_of,
                          seed=seed, gallery_size=gallery_size)
    curves, candidates = _closed_set_cmc(swap, orig_c, swaps_c, by_label, index_of, max_rank)
    return SwapMembership(scores=scores, cmc=curves, candidates=candidates, centre=c, gallery_size=gallery_size)


def _swap_scores(swap: EmbeddingTable, originals: EmbeddingTable, non_members: EmbeddingTable, donor: np.ndarray,
                 c: np.ndarray, orig_c: np.ndarray, swaps_c: np.ndarray, by_label: Mapping[str, np.ndarray],
                 index_of: Mapping[Any, int], *, seed: int | tuple, gallery_size: int | None) -> pd.DataFrame:
    """The per-swap rows of :attr:`SwapMembership.scores` (centred and raw gallery cosines)."""
    orig_raw = originals.embeddings
    donor = unit_rows(np.asarray(donor, dtype=np.float64).reshape(-1, swap.dim))
    donor_c = unit_rows(donor - c)
    nm_groups = non_members.groups(min_rows=2)
    nm_ids = assign_non_members(swap.n_rows, list(nm_groups), seed)
    nm_c = {k: unit_rows(v - c) for k, v in nm_groups.items()}
    rows = []
    for i, (lab, iid) in enumerate(zip(swap.labels, swap.image_ids)):
        if iid not in index_of:
            raise ValueError(f"swap {iid} has no original photograph in the originals table")
        src = index_of[iid]
        members = by_label[str(lab)]
        members = members[members != src]
        if len(members) == 0:
            raise ValueError(f"target {lab} has no photograph besides {iid}")
        rng = generator(seed, "gallery-subsample", iid)
        members = _subsample(members, gallery_size, rng)
        nm = _subsample(nm_c[nm_ids[i]], gallery_size, rng)
        s_t, s_n, s_d = orig_c[members] @ swaps_c[i], nm @ swaps_c[i], donor_c @ swaps_c[i]
        raw_x = swap.embeddings[i]
        raw_nm = unit_rows(nm_groups[nm_ids[i]]) @ raw_x
        rows.append({
            "identity": str(lab), "image_id": str(iid), "non_member": str(nm_ids[i]),
            "n_target": len(members), "n_non_member": len(nm), "n_donor": len(donor),
            "target_median": float(np.median(s_t)), "target_max": float(s_t.max()),
            "non_member_median": float(np.median(s_n)), "non_member_max": float(s_n.max()),
            "donor_median": float(np.median(s_d)), "donor_max": float(s_d.max()),
            "raw_target_median": float(np.median(orig_raw[members] @ raw_x)),
            "raw_target_max": float((orig_raw[members] @ raw_x).max()),
            "raw_non_member_median": float(np.median(raw_nm)),
            "raw_non_member_max": float(raw_nm.max()),
            "raw_donor_median": float(np.median(donor @ raw_x)),
            "genuine_median": float(np.median(orig_c[members] @ orig_c[src])),
        })
    return pd.DataFrame(rows)


def _closed_set_cmc(swap: EmbeddingTable, orig_c: np.ndarray, swaps_c: np.ndarray, by_label: Mapping[str, np.ndarray],
                    index_of: Mapping[Any, int], max_rank: int) -> tuple[dict[str, np.ndarray], int]:
    """Every swap against every target identity's gallery (its own source excluded): CMC per aggregate."""
    targets = sorted(by_label)
    sims = swaps_c @ orig_c.T  # (m, N)
    source = np.array([index_of[i] for i in swap.image_ids])
    sims[np.arange(len(source)), source] = np.nan
    agg_scores = {"median": np.empty((swap.n_rows, len(targets))), "max": np.empty((swap.n_rows, len(targets)))}
    for j, t in enumerate(targets):
        block = sims[:, by_label[t]]
        agg_scores["median"][:, j] = np.nanmedian(block, axis=1)
        agg_scores["max"][:, j] = np.nanmax(block, axis=1)
    truth = np.array([targets.index(str(lab)) for lab in swap.labels])
    return {agg: cmc(agg_scores[agg], truth, max_rank) for agg in agg_scores}, len(targets)


def roc_curve_points(positive, negative) -> tuple[np.ndarray, np.ndarray]:
    """ROC points of the threshold test on the scores, targets (positive) against non-members.

    Parameters
    ----------
    positive, negative : array_like, shapes (n_pos,), (n_neg,)

    Returns
    -------
    tuple of ndarray
        ``(fpr, tpr)`` over every distinct threshold (:func:`sklearn.metrics.roc_curve` without
        dropping collinear points), from (0, 0) to (1, 1).
    """
    pos, neg = np.asarray(positive, dtype=np.float64), np.asarray(negative, dtype=np.float64)
    fpr, tpr, _ = roc_curve(np.r_[np.ones(len(pos)), np.zeros(len(neg))], np.r_[pos, neg], drop_intermediate=False)
    return fpr, tpr


# -------------------------------------------------------------------------------------------------
# the chapter's membership tables


@dataclass(frozen=True)
class MembershipStudy:
    """:func:`swap_membership` of each encoder's large-regime swaps, with full and matched galleries.

    Attributes
    ----------
    full, matched : dict
        Encoder -> :class:`SwapMembership` with full galleries / every gallery cut to
        ``matched_size`` photographs.
    matched_size : int
    """

    full: dict[str, SwapMembership]
    matched: dict[str, SwapMembership]
    matched_size: int

    def _summaries(self) -> dict[tuple[str, str], pd.DataFrame]:
        parts = {}
        for enc in self.full:
            for galleries, m in (("full", self.full[enc]), (f"{self.matched_size} per gallery", self.matched[enc])):
                s = m.summary()
                s["AUC (raw cosines)"] = [m.metrics(a, raw=True)["auc"] if a == "median" else np.nan for a in s.index]
                parts[(ENCODER_LABEL[enc], galleries)] = s
        return parts

    def table(self) -> pd.DataFrame:
        """The membership table: per encoder, gallery size and aggregate.

        Returns
        -------
        pandas.DataFrame
            TPR at FPR <= 1% and <= 0.1% and max balanced accuracy in percent, AUC (centred and, for
            the median, raw cosines; NaN for the max aggregate, not computed) and CMC rank-1 / rank-5.
        """
        table = pd.concat(self._summaries(), names=["encoder", "galleries"])
        pct = ["TPR @ FPR<=1%", "TPR @ FPR<=0.1%", "max balanced accuracy"]
        ours = (table[pct] * 100).rename(columns=lambda c: c + " (%)")
        return pd.concat([ours, table[["AUC", "AUC (raw cosines)", "CMC rank-1", "CMC rank-5"]]], axis=1)

    def _scores(self) -> pd.DataFrame:
        cols = ["mean target", "mean non-member", "mean donor", "donor > target"]
        return pd.concat({ENCODER_LABEL[e]: self.full[e].summary()[cols].assign(
            **{"mean genuine (before the swap)": self.full[e].scores["genuine_median"].mean()}) for e in self.full},
            names=["encoder"])

    def score_table(self) -> pd.DataFrame:
        """Mean scores per encoder and aggregate, rounded to 3 decimals.

        Returns
        -------
        pandas.DataFrame
            Mean target, non-member and donor scores, the fraction of swaps closer to the donor, and
            the mean genuine score (the source photograph against the same gallery, before the swap).
        """
        return self._scores().astype(float).round(3)

    def panels(self) -> dict[str, dict[str, Any]]:
        """The argument of :func:`epsaudit.plotting.faces.membership_figure`.

        Returns
        -------
        dict
            Panel title -> ``scores``, ``auc`` and ``roc`` (:func:`roc_curve_points`) of both
            aggregates, per encoder (full galleries).
        """
        panels = {}
        for enc in self.full:
            m, s = self.full[enc], self.full[enc].scores
            panels[f"{ENCODER_LABEL[enc]}, swaps of the ≥20-photo regime"] = {
                "scores": s, "auc": {a: m.metrics(a)["auc"] for a in AGGREGATES},
                "roc": {a: roc_curve_points(s[f"target_{a}"], s[f"non_member_{a}"]) for a in AGGREGATES}}
        return panels

    def figure_data(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The data behind the two membership figures, in long form (one CSV each).

        Returns
        -------
        tuple of pandas.DataFrame
            ``(scores, roc)``: per encoder and swap the median-aggregated target, non-member and
            donor scores; per encoder and aggregate the ROC points ``fpr``, ``tpr``.
        """
        scores, roc = [], []
        for enc in self.full:
            s = self.full[enc].scores
            scores.append(pd.DataFrame({"encoder": ENCODER_LABEL[enc], "identity": s["identity"],
                                        "image_id": s["image_id"], "target": s["target_median"],
                                        "non_member": s["non_member_median"], "donor": s["donor_median"]}))
            for agg in AGGREGATES:
                fpr, tpr = roc_curve_points(s[f"target_{agg}"], s[f"non_member_{agg}"])
                roc.append(pd.DataFrame({"encoder": ENCODER_LABEL[enc], "aggregate": agg, "fpr": fpr, "tpr": tpr}))
        return pd.concat(scores, ignore_index=True), pd.concat(roc, ignore_index=True)

    def numbers(self) -> dict[str, Any]:
        """The numbers the membership prose quotes.

        Returns
        -------
        dict
            Glue key -> value: gallery sizes, per encoder the AUC, TPRs and CMC rates of both aggregates
            (full and matched galleries), raw AUC, mean scores, the drop of the target score, and the
            paper's FaceFusion drop.
        """
        out: dict[str, Any] = {"matched": self.matched_size}
        sizes = pd.concat([self.full[e].scores for e in self.full])
        for col, key in (("n_target", "t"), ("n_non_member", "n")):
            out[f"gal_{key}_min"] = int(sizes[col].min())
            out[f"gal_{key}_max"] = int(sizes[col].max())
        parts, scores = self._summaries(), self._scores()
        for enc in self.full:
            s = parts[(ENCODER_LABEL[enc], "full")]
            sm = parts[(ENCODER_LABEL[enc], f"{self.matched_size} per gallery")]
            sc = scores.loc[ENCODER_LABEL[enc]]
            for agg in AGGREGATES:
                out[f"mia_{enc}_auc_{agg}"] = float(s.loc[agg, "AUC"])
                out[f"mia_{enc}_tpr1_{agg}"] = float(s.loc[agg, "TPR @ FPR<=1%"])
                out[f"mia_{enc}_tpr01_{agg}"] = float(s.loc[agg, "TPR @ FPR<=0.1%"])
                out[f"mia_{enc}_r1_{agg}"] = float(s.loc[agg, "CMC rank-1"])
                out[f"mia_{enc}_r5_{agg}"] = float(s.loc[agg, "CMC rank-5"])
                out[f"mia_{enc}_matched_auc_{agg}"] = float(sm.loc[agg, "AUC"])
                out[f"mia_{enc}_matched_tpr01_{agg}"] = float(sm.loc[agg, "TPR @ FPR<=0.1%"])
            genuine = sc.loc["median", "mean genuine (before the swap)"]
            out[f"mia_{enc}_raw_auc"] = float(s.loc["median", "AUC (raw cosines)"])
            out[f"mia_{enc}_genuine"] = float(genuine)
            out[f"mia_{enc}_target"] = float(sc.loc["median", "mean target"])
            out[f"mia_{enc}_nonmember"] = float(sc.loc["median", "mean non-member"])
            out[f"mia_{enc}_donor"] = float(sc.loc["median", "mean donor"])
            out[f"mia_{enc}_donor_wins"] = float(sc.loc["median", "donor > target"])
            out[f"mia_{enc}_drop"] = float(1 - sc.loc["median", "mean target"] / genuine)
        first = next(iter(self.full.values()))
        out["mia_swaps"] = int(first.scores.shape[0])
        out["mia_candidates"] = int(first.candidates)
        out["mia_chance_r1"] = 1 / first.candidates
        out["paper_drop"] = 1 - MIA["facefusion_target_swap"] / MIA["facefusion_target_genuine"]
        return out


def membership_inference(tables: Mapping[str, EmbeddingTable], donors: Mapping[str, EmbeddingTable], *,
                         seed: int | tuple = 0, matched_size: int = MATCHED_GALLERY) -> MembershipStudy:
    """The membership adversary against every encoder's large-regime swaps.

    :func:`swap_membership` of ``<encoder>_large_swap`` (every encoder whose swaps are in ``tables``)
    with targets ``<encoder>_large_none``,
    non-members ``<encoder>_small_none`` and the donor gallery, with full galleries and with every
    gallery cut to ``matched_size`` photographs (the face-swap operator paper, Section V).

    Parameters
    ----------
    tables : mapping condition name -> EmbeddingTable
    donors : mapping encoder -> EmbeddingTable
    seed : int or tuple
    matched_size : int

    Returns
    -------
    MembershipStudy

    Raises
    ------
    KeyError
        A missing condition or donor gallery.
    """
    full, matched = {}, {}
    for enc in (e for e in ENCODERS if f"{e}_large_swap" in tables):
        args = (tables[f"{enc}_large_swap"], tables[f"{enc}_large_none"], tables[f"{enc}_small_none"],
                donors[enc].embeddings)
        full[enc] = swap_membership(*args, seed=seed)
        matched[enc] = swap_membership(*args, seed=seed, gallery_size=matched_size)
    return MembershipStudy(full, matched, int(matched_size))


def paper_table_i() -> pd.DataFrame:
    """The face-swap operator paper's Table I, FaceFusion row.

    Returns
    -------
    pandas.DataFrame
        :data:`epsaudit.studies.face_study.MIA_TABLE_I_FACEFUSION` transposed: index (recognizer,
        aggregate), values in percent.
    """
    paper = MIA_TABLE_I_FACEFUSION.T
    paper.index.names = ["recognizer", "aggregate"]
    return paper


# -------------------------------------------------------------------------------------------------
# example images


def example_triplets(swap: EmbeddingTable, donor_id: str, *, k: int = 4, seed: int | tuple = 0,
                     image_root: str | Path | None = None, variant: str = "hull") -> list[dict[str, Any]]:
    """``k`` target / donor / swap images: targets drawn (seeded) from distinct identities of ``swap``.

    The swap is recomputed from the photographs by the data's generator
    (:class:`epsaudit.faces.SwapGenerator`, deterministic, so it is the image that was encoded).
    Needs the LFW images and dlib/OpenCV.

    Parameters
    ----------
    swap : EmbeddingTable
        A ``swap`` condition (image ids are the target photographs).
    donor_id : str
        Image id of the donor photograph.
    k : int
        Targets (at most the identities of ``swap``).
    seed : int or tuple
        Base seed or stream key (purpose ``"example-triplets"``).
    image_root : path, optional
    variant : str
        The swap variant of :class:`epsaudit.faces.SwapGenerator`.

    Returns
    -------
    list of dict
        ``target_id``, ``target``, ``donor``, ``swap`` (uint8 RGB arrays, shape (H, W, 3)).

    Raises
    ------
    epsaudit.faces.ImageRootError
        If the LFW images are absent.
    """
    from ...faces import generators as gen
    from ...faces import images as img

    donor = img.load_image(donor_id, image_root)
    swapper = gen.SwapGenerator(donor, donor_id, variant=variant)
    labels = sorted(set(swap.labels))
    rng = generator(seed, "example-triplets")
    chosen = [labels[i] for i in rng.choice(len(labels), size=min(k, len(labels)), replace=False)]
    out = []
    for lab in chosen:
        ids = sorted(i for i, label in zip(swap.image_ids, swap.labels) if label == lab)
        target_id = ids[int(rng.integers(len(ids)))]
        target = img.load_image(target_id, image_root)
        swapped, _ = swapper(target, target_id)  # a target without a face passes through, as in the data
        out.append({"target_id": target_id, "target": target, "donor": donor, "swap": swapped})
    return out


def triplet_ids(triplets: Sequence[Mapping[str, Any]], donor_id: str) -> pd.DataFrame:
    """The image ids behind the example figure (its CSV): one row per target, with the donor.

    Parameters
    ----------
    triplets : sequence of dict
        :func:`example_triplets` output.
    donor_id : str

    Returns
    -------
    pandas.DataFrame
        ``target_id``, ``donor_id``.
    """
    return pd.DataFrame({"target_id": [str(t["target_id"]) for t in triplets], "donor_id": str(donor_id)})
