"""The face case study (notebook 03): its conditions, the audit settings that the notebook and the
``epsaudit audit`` command share, the Table 2 / Table 3 analogs, and the membership-inference view
of the swap generator (paper 002, Section V; SPEC section 5).

Conditions are the committed embedding tables ``data/<encoder>_<regime>_<generator>.csv``
(:mod:`epsaudit.faces.pipeline`). Each is audited with :func:`epsaudit.condition.audit_condition`
and :func:`audit_settings`; ``settings.cli_args()`` gives the same settings as command-line flags,
so ``epsaudit audit data/<condition>.csv <flags>`` prints the notebook's numbers.

Membership inference (:func:`swap_membership`). Each swap output (a row of the ``swap`` table; its
label is the *target* identity, its image id the target photograph it was made from) is scored by
cosine similarity against three galleries, aggregated over the gallery by the median and the max:

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
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Hashable, Sequence

import numpy as np
import pandas as pd

from .bounds import bonferroni_alpha, certifiable_cap
from .condition import ConditionAudit
from .data import EmbeddingTable
from .leakage import cmc, membership_metrics, tpr_at_fpr
from .settings import AuditSettings
from .seeds import stream

ENCODERS = ("dlib", "sface")
REGIMES = ("large", "small")
GENERATORS = ("none", "swap", "dp-pix")
CERTIFICATES_PER_CONDITION = 5
#: The study's audit protocol (*Picture the Epsilon*, Section IV), before the family size is known.
STUDY_AUDIT = AuditSettings(certificates=CERTIFICATES_PER_CONDITION, prefer_certifiable=True)
#: Pairs behind each Table 2 median (paper 001: the same 100 pairs for every method).
TABLE2_PAIRS = 100


def condition_names(encoders: Sequence[str] = ENCODERS, regimes: Sequence[str] = REGIMES,
                    generators: Sequence[str] = GENERATORS) -> list[str]:
    """``<encoder>_<regime>_<generator>`` for every combination, encoder-major."""
    return [f"{e}_{r}_{g}" for e in encoders for r in regimes for g in generators]


def parse_condition(name: str) -> dict[str, str]:
    """``"sface_large_dp-pix"`` -> ``{"encoder": "sface", "regime": "large", "generator": "dp-pix"}``."""
    encoder, regime, generator = name.split("_", 2)
    return {"encoder": encoder, "regime": regime, "generator": generator}


def audit_settings(n_conditions: int, *, seed: int = 0, **overrides: Any) -> AuditSettings:
    """The settings of :func:`epsaudit.condition.audit_condition` for one condition of the study.

    Every condition certifies :data:`CERTIFICATES_PER_CONDITION` pairs and all
    ``5 * n_conditions`` certificates form one Bonferroni family (``family_size``), so they hold
    together at 95%. ``overrides`` replace protocol entries (e.g. smaller pair counts for a smoke
    run). ``settings.cli_args()`` gives the same settings as ``epsaudit audit`` flags.

    Raises
    ------
    epsaudit.settings.SettingsError
        For an unknown setting or a bad value.
    """
    settings = STUDY_AUDIT.replace(seed=int(seed), **overrides)
    return settings.replace(family_size=settings.certificates * int(n_conditions))


# -------------------------------------------------------------------------------------------------
# Table 2 and Table 3 analogs


def common_pairs(audit: ConditionAudit, n: int = TABLE2_PAIRS) -> set[tuple[Hashable, Hashable]]:
    """The first ``n`` shuffled pairs, i.e. those KDE-LR audited (it audits the shortest prefix)."""
    kde = audit.per_pair[audit.per_pair["route"] == "kde_lr"]
    pairs = list(dict.fromkeys(zip(kde["identity_a"], kde["identity_b"])))
    if len(pairs) < min(n, audit.counts["candidate_pairs"]):
        raise ValueError(f"KDE-LR audited {len(pairs)} pairs; Table 2 needs the first {n}")
    return set(pairs[:n])


def table2_row(audit: ConditionAudit, n: int = TABLE2_PAIRS) -> dict[str, float]:
    """Paper 001 Table 2 columns for one condition: medians over the same first ``n`` pairs.

    Also ``GaussMech (500)``/``MMD-TV (500)`` (median over every pair those routes audited),
    ``MMD-TV max (500)``, the pair counts and the exact-corner count.
    """
    per = audit.per_pair
    keys = common_pairs(audit, n)
    on = pd.Series([(a, b) in keys for a, b in zip(per["identity_a"], per["identity_b"])], index=per.index)

    def route(name, alpha=None):
        rows = per[(per["route"] == name) & on]
        if alpha is not None:
            rows = rows[np.isclose(rows["setting_alpha"].astype(float), alpha)]
        return rows

    roc = route("roc_oof")
    gauss_all = per[per["route"] == "gaussmech"]["value"].astype(float)
    mmd_all = per[per["route"] == "mmd_tv"]["value"].astype(float)
    return {
        "pairs": len(keys),
        "GaussMech": float(route("gaussmech")["value"].median()),
        "KDE-LR a=0": float(route("kde_lr", 0.0)["value"].median()),
        "KDE-LR a=.01": float(route("kde_lr", 0.01)["value"].median()),
        "MMD-TV": float(route("mmd_tv")["value"].median()),
        "ROC-HT +inf": int(roc["infinite"].astype(bool).sum()),
        "ROC AUC": float(roc["auc"].astype(float).median()),
        "exact corners": int(roc["exact_corner"].astype(bool).sum()),
        "pairs (500)": int(len(gauss_all)),
        "GaussMech (500)": float(gauss_all.median()),
        "MMD-TV (500)": float(mmd_all.median()),
        "MMD-TV max (500)": float(mmd_all.max()),
    }


def _range(values: Sequence[float], fmt: str) -> str:
    lo, hi = float(np.min(values)), float(np.max(values))
    return fmt.format(lo) if np.isclose(lo, hi) else f"{fmt.format(lo)} - {fmt.format(hi)}"


def table3_row(audit: ConditionAudit) -> dict[str, Any]:
    """Paper 001 Table 3 columns for one condition's certificates (ranges min - max over them).

    ``n/class`` is the range of test rows per identity, ``AUC`` of the test AUC, ``Pos.`` and
    ``>1`` count bounds above 0 and 1, ``eps_LB`` their range; ``cap`` the range of what each
    test size could certify at the family's level.
    """
    per = audit.per_pair[audit.per_pair["route"] == "roc_reserved"]
    if per.empty:
        return {"certificates": 0}
    values = per["value"].astype(float).to_numpy()
    sizes = np.r_[per["n_a"].astype(int), per["n_b"].astype(int)]
    return {
        "certificates": len(per),
        "n/class": _range(sizes, "{:.0f}"),
        "AUC": _range(per["test_auc"].astype(float), "{:.3f}"),
        "Pos.": int(np.sum(values > 0)),
        ">1": int(np.sum(values > 1)),
        "eps_LB": _range(values, "{:.3f}") if np.any(values > 0) else "0",
        "cap": _range(per["cap"].astype(float), "{:.3f}"),
        "censored": int(per["censored"].astype(bool).sum()),
        "alpha_per_bound": float(per["alpha_per_bound"].iloc[0]),
    }


def cap_table(sizes: Sequence[int], n_certificates: int, confidence: float = 0.95, delta: float = 1e-5) -> pd.Series:
    """What a zero-error test of ``n`` rows per class can certify when ``n_certificates`` hold together."""
    alpha = bonferroni_alpha(n_certificates, confidence)
    return pd.Series({int(n): certifiable_cap(int(n), int(n), alpha, delta) for n in sizes}, name="cap")


# -------------------------------------------------------------------------------------------------
# membership inference (paper 002)


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def reference_centre(*tables: EmbeddingTable | np.ndarray) -> np.ndarray:
    """Mean of the unit-normalised rows of ``tables`` (the adversary's reference mean), shape (d,)."""
    rows = [t.embeddings if isinstance(t, EmbeddingTable) else np.asarray(t, dtype=np.float64) for t in tables]
    return _unit(np.vstack(rows)).mean(axis=0)


def assign_non_members(n: int, identities: Sequence[Hashable], seed: int = 0) -> list[Hashable]:
    """One non-member identity per swap: a seeded permutation of ``identities`` (sorted), cycled."""
    ids = sorted(identities, key=str)
    if not ids:
        raise ValueError("no non-member identities")
    perm = stream("non-member-order", seed).permutation(len(ids))
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
        """:func:`epsaudit.leakage.membership_metrics` of target (positive) vs non-member scores."""
        prefix = "raw_" if raw else ""
        s = self.scores
        return membership_metrics(s[f"{prefix}target_{aggregate}"], s[f"{prefix}non_member_{aggregate}"])

    def summary(self) -> pd.DataFrame:
        """One row per aggregate: AUC, TPR at FPR <= 1% / 0.1%, max balanced accuracy, CMC rank-1 and
        rank-5, mean target / non-member / donor scores and the fraction of swaps closer to the donor."""
        rows = {}
        for agg in ("median", "max"):
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
                    donor: np.ndarray, *, centre: np.ndarray | None = None, seed: int = 0,
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
    seed : int
        Seed of the non-member assignment and of gallery subsampling.
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
    orig_c = _unit(originals.embeddings - c)
    orig_raw = originals.embeddings
    swaps_c = _unit(swap.embeddings - c)
    donor = _unit(np.asarray(donor, dtype=np.float64).reshape(-1, swap.dim))
    donor_c = _unit(donor - c)
    nm_groups = non_members.groups(min_rows=2)
    nm_ids = assign_non_members(swap.n_rows, list(nm_groups), seed)
    nm_c = {k: _unit(v - c) for k, v in nm_groups.items()}
    by_label: dict[str, np.ndarray] = {}
    for lab in np.unique(originals.labels):
        by_label[str(lab)] = np.flatnonzero(originals.labels == lab)
    index_of = {iid: i for i, iid in enumerate(originals.image_ids)}

    rows = []
    for i, (lab, iid) in enumerate(zip(swap.labels, swap.image_ids)):
        if iid not in index_of:
            raise ValueError(f"swap {iid} has no original photograph in the originals table")
        src = index_of[iid]
        members = by_label[str(lab)]
        members = members[members != src]
        if len(members) == 0:
            raise ValueError(f"target {lab} has no photograph besides {iid}")
        rng = stream("gallery-subsample", seed, iid)
        members = _subsample(members, gallery_size, rng)
        nm = _subsample(nm_c[nm_ids[i]], gallery_size, rng)
        s_t, s_n, s_d = orig_c[members] @ swaps_c[i], nm @ swaps_c[i], donor_c @ swaps_c[i]
        raw_x = swap.embeddings[i]
        rows.append({
            "identity": str(lab), "image_id": str(iid), "non_member": str(nm_ids[i]),
            "n_target": len(members), "n_non_member": len(nm), "n_donor": len(donor),
            "target_median": float(np.median(s_t)), "target_max": float(s_t.max()),
            "non_member_median": float(np.median(s_n)), "non_member_max": float(s_n.max()),
            "donor_median": float(np.median(s_d)), "donor_max": float(s_d.max()),
            "raw_target_median": float(np.median(orig_raw[members] @ raw_x)),
            "raw_target_max": float((orig_raw[members] @ raw_x).max()),
            "raw_non_member_median": float(np.median(_unit(nm_groups[nm_ids[i]]) @ raw_x)),
            "raw_non_member_max": float((_unit(nm_groups[nm_ids[i]]) @ raw_x).max()),
            "raw_donor_median": float(np.median(donor @ raw_x)),
            "genuine_median": float(np.median(orig_c[members] @ orig_c[src])),
        })
    scores = pd.DataFrame(rows)

    # closed set: every swap against every target identity's gallery (its own source excluded)
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
    curves = {agg: cmc(agg_scores[agg], truth, max_rank) for agg in agg_scores}
    return SwapMembership(scores=scores, cmc=curves, candidates=len(targets), centre=c, gallery_size=gallery_size)


def roc_curve_points(positive, negative) -> tuple[np.ndarray, np.ndarray]:
    """(FPR, TPR) of the threshold test "score > t" over every distinct threshold, from (0, 0) to (1, 1)."""
    pos, neg = np.sort(np.asarray(positive, float)), np.sort(np.asarray(negative, float))
    t = np.unique(np.r_[pos, neg])[::-1]
    tpr = 1.0 - np.searchsorted(pos, t, side="right") / len(pos)
    fpr = 1.0 - np.searchsorted(neg, t, side="right") / len(neg)
    return np.r_[0.0, fpr, 1.0], np.r_[0.0, tpr, 1.0]


def tpr_at(positive, negative, max_fpr: float) -> float:
    """:func:`epsaudit.leakage.tpr_at_fpr` (re-exported for the notebook)."""
    return tpr_at_fpr(positive, negative, max_fpr)


# -------------------------------------------------------------------------------------------------
# example images


def example_triplets(swap: EmbeddingTable, donor_id: str, *, k: int = 4, seed: int = 0,
                     image_root: str | Path | None = None, variant: str = "hull") -> list[dict[str, Any]]:
    """``k`` target / donor / swap images: targets drawn (seeded) from distinct identities of ``swap``.

    The swap is recomputed from the photographs by the data's generator
    (:class:`epsaudit.faces.SwapGenerator`, deterministic, so it is the image that was encoded). Needs the LFW images and
    dlib/OpenCV.

    Returns
    -------
    list of dict
        ``target_id``, ``target``, ``donor``, ``swap`` (uint8 RGB arrays).
    """
    from .faces import generators as gen
    from .faces import images as img

    donor = img.load_image(donor_id, image_root)
    generator = gen.SwapGenerator(donor, donor_id, variant=variant)
    labels = sorted(set(swap.labels))
    rng = stream("example-triplets", seed)
    chosen = [labels[i] for i in rng.choice(len(labels), size=min(k, len(labels)), replace=False)]
    out = []
    for lab in chosen:
        ids = sorted(i for i, l in zip(swap.image_ids, swap.labels) if l == lab)
        target_id = ids[int(rng.integers(len(ids)))]
        target = img.load_image(target_id, image_root)
        swapped, _ = generator(target, target_id)  # a target without a face passes through, as in the data
        out.append({"target_id": target_id, "target": target, "donor": donor, "swap": swapped})
    return out
