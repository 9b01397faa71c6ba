"""Chapter 3.1, membership inference on the swaps and certified trade-off curves: the page's plumbing.

*Toward Interpretable Privacy Guarantees in Face-Swapping Anonymization* (its Section V, Table I)
scores each face swap against galleries of photographs. ``notebooks/03b_face_membership.py`` runs
that adversary on the chapter's ``swap`` conditions and certifies the trade-off curves of the pairs
chapter 3 certified. This module holds the plumbing the page calls; the conditions, parameters and
profiles are chapter 3's (:mod:`epsaudit.studies.face_study`, re-exported here).

Each swap (a row of a ``swap`` table: its label is the *target*, its image id the target photograph
it was made from) is scored by the cosine of its embedding to three galleries, aggregated by the
median and the max (:func:`swap_membership`):

- target: the target identity's other original photographs (the ``none`` table of the same regime),
  the swap's own source photograph excluded;
- non-member: every photograph of one identity outside the target set, assigned by a seeded
  permutation (:func:`assign_non_members`);
- donor: the donor identity's photographs.

Cosines are taken after subtracting the mean of the unit-normalised original photographs
(:func:`reference_centre`) and re-normalising, because raw dlib vectors share a large common offset.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Hashable, Sequence

import numpy as np
import pandas as pd

from ..data import EmbeddingTable
from ..build.images import images_available
from ..leakage import cmc
from ..seeds import generator
from ..validation import unit_rows
from .face_study import (CONDITIONS, ENCODERS, GENERATORS, PARAMETERS, PROFILES, audit_settings,  # noqa: F401
                         check_parameters, choose_profile, load_conditions)

__all__ = ["CONDITIONS", "ENCODERS", "GENERATORS", "PARAMETERS", "PROFILES", "audit_settings", "check_parameters",
           "choose_profile", "load_conditions", "images_available", "reference_centre", "assign_non_members",
           "swap_membership", "certified_pairs", "rows_for_deviation", "example_triplets"]


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
    swap : EmbeddingTable
        Swap outputs; labels are target identities, image ids the source photographs.
    originals : EmbeddingTable
        The same photographs unchanged (generator ``none``): the target galleries.
    non_members : EmbeddingTable
        Photographs of identities outside the target set (the other regime's ``none`` table).
    donor : EmbeddingTable
        The donor identity's photographs.
    seed : int or tuple
        Seeds the non-member assignment and the gallery subsampling (one stream per swap image).
    gallery_size : int, optional
        Cap every target and non-member gallery at this many photographs.
    max_rank : int
        Length of the closed-set CMC curves.

    Returns
    -------
    tuple
        ``(scores, cmc)``: one row per swap with ``identity``, ``image_id``, ``non_member``, the gallery
        sizes ``n_target`` and ``n_non_member``, centred cosines ``<role>_<aggregate>`` (role target,
        non_member, donor; aggregate median, max), ``raw_target_median`` and ``raw_non_member_median``
        (uncentred; the non-member's whole gallery) and ``genuine_median`` (the swap's source
        photograph against the same target gallery, before the swap); and ``{"median": rates,
        "max": rates}``, the closed-set rank-1..k identification rates among all target identities.

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
    """``k`` target / donor / swap images, targets drawn (seeded) from distinct identities of ``swap``.

    The swap is recomputed from the photographs by the data's deterministic generator
    (:class:`epsaudit.build.SwapGenerator`), so it is the image that was encoded.

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
