"""Chapter 3's conditions audited: the data table and the Table 2 / Table 3 analogs.

:func:`run_audits` audits each of the chapter's conditions
(:func:`epsaudit.studies.face_study.load_conditions`) with
:func:`epsaudit.condition.audit_condition` at the study's settings
(:func:`epsaudit.studies.face_study.audit_settings`), and the table functions give *Picture the
Epsilon*'s Table 2 (medians of the four routes over the same 100 pairs) and Table 3 (reserved-test
certificates) for our conditions, beside the paper's, with the numbers the prose quotes.
:mod:`epsaudit.studies.face_study` re-exports every public name.
"""

from __future__ import annotations

import time
from typing import Any, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from ...bounds import DEFAULT_BOUND, bonferroni_alpha, certifiable_cap
from ...condition import ConditionAudit, audit_condition
from ...data import EmbeddingTable
from ...pairs import identity_pairs
from ...settings import AuditSettings
from . import (
    CONDITIONS,
    ENCODER_LABEL,
    LEVELS,
    PAPER_DIM,
    REGIME_LABEL,
    REGIMES,
    TABLE2,
    TABLE2_PAIRS,
    TABLE3,
    TABLE3_PROTOCOL,
    StudyData,
    labelled,
    present,
    span,
)


def data_table(data: StudyData) -> pd.DataFrame:
    """One row per condition: what the loader kept and what the manifest records.

    Parameters
    ----------
    data : StudyData

    Returns
    -------
    pandas.DataFrame
        Index (encoder, data, generator); columns ``rows``, ``identities``, ``rows/identity``
        (min-max), ``pairs`` (candidate identity pairs), ``detector fallbacks`` (rows encoded from
        the whole image), ``swap flags``, mean same/different-identity cosines raw and centred, and
        ``|mean unit vector|`` (norm of the mean unit embedding).

    Raises
    ------
    KeyError
        A condition missing from the manifest.
    """
    rows = {}
    for name in present(data.tables):
        t, e = data.tables[name], data.manifest["files"][f"{name}.csv"]
        per_id = t.rows_per_identity()
        primary = {"dlib": "hog", "sface": "yunet"}[e["encoder"]]
        rows[name] = {
            "rows": t.n_rows, "identities": len(t.identities), "rows/identity": f"{per_id.min()}-{per_id.max()}",
            "pairs": len(t.identities) * (len(t.identities) - 1) // 2,
            "detector fallbacks": sum(v for k, v in e["detection_paths"].items() if k != primary),
            "swap flags": sum(len(v) for v in e["generator_flags"].values()),
            "cos same raw": e["cosine"]["raw"]["same_mean"], "cos diff raw": e["cosine"]["raw"]["different_mean"],
            "cos same centred": e["cosine"]["centred"]["same_mean"],
            "cos diff centred": e["cosine"]["centred"]["different_mean"],
            "|mean unit vector|": e["cosine"]["norm_of_mean_unit_vector"],
        }
    return labelled(rows)


def data_numbers(table: pd.DataFrame, data: StudyData) -> dict[str, Any]:  # noqa: C901
    """The numbers the data section's prose quotes.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`data_table` output.
    data : StudyData

    Returns
    -------
    dict
        Glue key -> value: rows and identities per regime, candidate pairs, mean-vector norms and
        mean different-identity cosines (dlib's ``none`` conditions and SFace's), ``dp-pix``
        detector fallbacks, the donor and its photographs.
    """
    out: dict[str, Any] = {}
    first = ENCODER_LABEL[data.encoders[0]]
    for regime in REGIMES:
        row = table.xs((first, REGIME_LABEL[regime], "none"))
        out[f"n_rows_{regime}"] = int(row["rows"])
        out[f"n_ids_{regime}"] = int(row["identities"])
        k = int(row["identities"])
        out[f"cand_pairs_{regime}"] = k * (k - 1) // 2
    none_rows = table.xs("none", level="generator")
    for enc in data.encoders:
        rows = none_rows.xs(ENCODER_LABEL[enc])
        out[f"{enc}_mean_norm"] = float(rows["|mean unit vector|"].mean())
        out[f"{enc}_diff_raw"] = float(rows["cos diff raw"].mean())
        out[f"{enc}_diff_centred"] = float(rows["cos diff centred"].mean())
    if "dp-pix" in table.index.get_level_values("generator"):
        dp = table.xs("dp-pix", level="generator")
        out["dppix_fallbacks"] = int(dp["detector fallbacks"].sum())
        out["dppix_rows"] = int(dp["rows"].sum())
    out["donor_id"] = data.donor_id
    out["donor_photos"] = int(len(next(iter(data.donors.values())).labels))
    return out


def example_condition(tables: Mapping[str, Any]) -> str:
    """The condition the page certifies one pair of by hand: SFace's ≥20-photo swaps when present, else
    the first ≥20-photo condition of the run (in :data:`CONDITIONS` order).

    Examples
    --------
    >>> example_condition({"dlib_large_none": 0, "sface_large_swap": 0})
    'sface_large_swap'
    >>> example_condition({"dlib_small_none": 0, "dlib_large_none": 0})
    'dlib_large_none'
    """
    names = [n for n in CONDITIONS if n in tables]
    for choice in ("sface_large_swap", "dlib_large_swap"):
        if choice in tables:
            return choice
    large = [n for n in names if "_large_" in n]
    return (large or names)[0]


def condition_groups(tables: Mapping[str, EmbeddingTable], min_rows: int = 5) -> dict[str, dict[str, np.ndarray]]:
    """Every condition's rows grouped by identity.

    Parameters
    ----------
    tables : mapping condition name -> EmbeddingTable
    min_rows : int
        Identities with fewer rows are left out (5, the ROC-HT fold count, as
        :func:`epsaudit.condition.audit_condition` does).

    Returns
    -------
    dict
        Condition name -> identity -> array, shape (n_i, d).
    """
    return {n: tables[n].groups(min_rows=min_rows) for n in present(tables)}


def pair_lists(groups: Mapping[str, Mapping[Hashable, Any]], *,
               seed: int = 0) -> dict[str, list[tuple[Hashable, Hashable]]]:
    """Every condition's identity pairs, shuffled once with ``seed``.

    The order :func:`epsaudit.condition.audit_condition` audits (:func:`epsaudit.pairs.identity_pairs`),
    so a prefix of it is the same pairs as the audit's.

    Parameters
    ----------
    groups : mapping condition name -> groups
    seed : int

    Returns
    -------
    dict
        Condition name -> list of (identity, identity).
    """
    return {n: identity_pairs(groups[n], seed=seed) for n in present(groups)}



# -------------------------------------------------------------------------------------------------
# the audits


def run_audits(tables: Mapping[str, EmbeddingTable], settings: AuditSettings, *,
               n_jobs: int | None = None) -> tuple[dict[str, ConditionAudit], dict[str, float]]:
    """:func:`epsaudit.condition.audit_condition` on every condition.

    Parameters
    ----------
    tables : mapping condition name -> EmbeddingTable
    settings : AuditSettings
        :func:`epsaudit.studies.face_study.audit_settings`.
    n_jobs : int, optional

    Returns
    -------
    tuple
        ``(audits, seconds)``: condition name -> ConditionAudit, and -> wall-clock seconds.
    """
    audits, seconds = {}, {}
    for name in present(tables):
        t0 = time.perf_counter()
        audits[name] = audit_condition(tables[name], settings, n_jobs=n_jobs)
        seconds[name] = time.perf_counter() - t0
    return audits, seconds


# -------------------------------------------------------------------------------------------------
# Table 2 analog


def common_pairs(audit: ConditionAudit, n: int = TABLE2_PAIRS) -> set[tuple[Hashable, Hashable]]:
    """The first ``n`` shuffled pairs, i.e. those KDE-LR audited (it audits the shortest prefix).

    Raises
    ------
    ValueError
        If KDE-LR audited fewer than ``min(n, candidate pairs)`` pairs.
    """
    kde = audit.per_pair[audit.per_pair["route"] == "kde_lr"]
    pairs = list(dict.fromkeys(zip(kde["identity_a"], kde["identity_b"])))
    if len(pairs) < min(n, audit.counts["candidate_pairs"]):
        raise ValueError(f"KDE-LR audited {len(pairs)} pairs; Table 2 needs the first {n}")
    return set(pairs[:n])


def table2_row(audit: ConditionAudit, n: int = TABLE2_PAIRS) -> dict[str, float]:
    """*Picture the Epsilon*, Table 2 columns for one condition: medians over the same first ``n`` pairs.

    Parameters
    ----------
    audit : ConditionAudit
    n : int
        Pairs behind each median (the paper: 100).

    Returns
    -------
    dict
        ``pairs``; ``GaussMech`` (delta = 1e-5), ``KDE-LR a=0``, ``KDE-LR a=.01``, ``MMD-TV``
        medians; ``ROC-HT +inf`` (count of out-of-fold values equal to +inf), ``ROC AUC`` (median),
        ``exact corners``; and over every pair GaussMech and MMD-TV audited: ``pairs (500)``,
        ``GaussMech (500)``, ``MMD-TV (500)`` (medians), ``MMD-TV max (500)``.

    Raises
    ------
    ValueError
        If KDE-LR audited fewer than the first ``n`` pairs (:func:`common_pairs`).
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


#: The Table 2 columns shown beside the paper's.
TABLE2_COLUMNS = ["pairs", "GaussMech", "KDE-LR a=0", "KDE-LR a=.01", "MMD-TV", "ROC-HT +inf", "ROC AUC"]


def table2(audits: Mapping[str, ConditionAudit]) -> pd.DataFrame:
    """The Table 2 analog: :func:`table2_row` of every condition.

    Returns
    -------
    pandas.DataFrame
        Index (encoder, data, generator); every column float except ``pairs``.
    """
    t2 = labelled({n: table2_row(audits[n]) for n in present(audits)})
    return t2.astype({c: float for c in t2.columns if c != "pairs"})


def table2_comparison(t2: pd.DataFrame) -> pd.DataFrame:
    """Our Table 2 columns above *Picture the Epsilon*'s Table 2 (:data:`TABLE2`).

    Parameters
    ----------
    t2 : pandas.DataFrame
        :func:`table2` output.

    Returns
    -------
    pandas.DataFrame
        Index (source, encoder, data, generator); columns :data:`TABLE2_COLUMNS`, floats rounded to
        3 decimals.
    """
    paper = TABLE2.assign(pairs=TABLE2_PAIRS).rename_axis(LEVELS)
    side = pd.concat({"ours: LFW, 128-D": t2[TABLE2_COLUMNS], "Picture the Epsilon: 512-D": paper[TABLE2_COLUMNS]},
                     names=["source"])
    return side.astype(float).round(3)


def table2_500(t2: pd.DataFrame) -> pd.DataFrame:
    """GaussMech and MMD-TV medians on the first 100 pairs beside those on the first 500.

    Returns
    -------
    pandas.DataFrame
        ``t2``'s 500-pair columns and MMD-TV's maximum over the 500, rounded to 3 decimals.
    """
    return t2[["pairs (500)", "GaussMech", "GaussMech (500)", "MMD-TV", "MMD-TV (500)", "MMD-TV max (500)"]].round(3)


def table2_numbers(t2: pd.DataFrame, dim: int) -> dict[str, Any]:
    """The numbers the Table 2 prose quotes.

    Parameters
    ----------
    t2 : pandas.DataFrame
        :func:`table2` output.
    dim : int
        Our embedding dimension.

    Returns
    -------
    dict
        Glue key -> value: ``t2_<column>[_none|_swap|_dp]`` ranges (:func:`span`) overall and per
        generator, the pair count, KDE-LR per coordinate (ours and the paper's), the swap
        conditions' GaussMech median scaled by sqrt(512 / dim), MMD-TV's maximum over 500 pairs.
    """
    out: dict[str, Any] = {}
    for col, key, fmt in (("GaussMech", "gm", "{:.1f}"), ("KDE-LR a=0", "kde0", "{:,.0f}"),
                          ("KDE-LR a=.01", "kde1", "{:,.0f}"), ("MMD-TV", "mmd", "{:.3f}"),
                          ("ROC-HT +inf", "inf", "{:.0f}"), ("ROC AUC", "auc", "{:.3f}"),
                          ("exact corners", "corners", "{:.0f}")):
        for part, gen in (("", None), ("_none", "none"), ("_swap", "swap"), ("_dp", "dp-pix")):
            if gen is not None and gen not in t2.index.get_level_values("generator"):
                continue
            rows = t2 if gen is None else t2.xs(gen, level="generator")
            out[f"t2_{key}{part}"] = span(rows[col], fmt)
    out["t2_pairs"] = int(t2["pairs"].min())
    out["dim"] = int(dim)
    out["t2_kde1_per_coord"] = float((t2["KDE-LR a=.01"] / dim).median())
    out["paper_kde1_per_coord"] = float((TABLE2["KDE-LR a=.01"] / PAPER_DIM).median())
    out["t2_gm_scaled"] = float(t2["GaussMech"].median() * np.sqrt(PAPER_DIM / dim))
    out["t2_mmd500_max_none"] = float(t2.xs("none", level="generator")["MMD-TV max (500)"].max())
    out["t2_mmd500_max_count"] = int((t2["MMD-TV max (500)"] > 1).sum())
    return out


# -------------------------------------------------------------------------------------------------
# Table 3 analog


def _range(values: Sequence[float], fmt: str) -> str:
    # the paper's Table 3 style "lo - hi" (spaced; one value when lo and hi are numerically equal)
    lo, hi = float(np.min(values)), float(np.max(values))
    return fmt.format(lo) if np.isclose(lo, hi) else f"{fmt.format(lo)} - {fmt.format(hi)}"


def table3_row(audit: ConditionAudit) -> dict[str, Any]:
    """*Picture the Epsilon*, Table 3 columns for one condition's reserved-test certificates.

    Ranges are "min - max" over the certificates, in the paper's style.

    Parameters
    ----------
    audit : ConditionAudit

    Returns
    -------
    dict
        ``certificates``; ``n/class`` (test rows per identity), ``AUC`` (test AUC), ``eps_LB``
        (bounds above 0) and ``cap`` (what each test size could certify at the family's level)
        as ranges; ``Pos.`` and ``>1`` (bounds above 0 and 1), ``censored`` (bounds at their cap),
        ``alpha_per_bound``. Only ``certificates`` (0) when the condition has none.
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


def table3(audits: Mapping[str, ConditionAudit]) -> pd.DataFrame:
    """The Table 3 analog: :func:`table3_row` of every condition.

    Returns
    -------
    pandas.DataFrame
        Index (encoder, data, generator).
    """
    return labelled({n: table3_row(audits[n]) for n in present(audits)})


def table3_comparison(t3: pd.DataFrame) -> pd.DataFrame:
    """Our Table 3 (with caps and censoring) above *Picture the Epsilon*'s Table 3 (:data:`TABLE3`).

    Returns
    -------
    pandas.DataFrame
        Index (source, encoder, data, generator); "n/a" where a column has no paper value.
    """
    cols = ["n/class", "AUC", "Pos.", ">1", "eps_LB"]
    side = pd.concat({"ours: LFW, 128-D": t3[cols + ["cap", "censored"]],
                      "Picture the Epsilon: 512-D": TABLE3.rename_axis(LEVELS)[cols]}, names=["source"])
    return side.astype(object).where(side.notna(), "n/a")


def cap_table(sizes: Sequence[int], n_certificates: int, confidence: float = 0.95, delta: float = 1e-5, *,
              bound: str = DEFAULT_BOUND) -> pd.Series:
    """What a zero-error test of ``n`` rows per class can certify when ``n_certificates`` hold together.

    Parameters
    ----------
    sizes : sequence of int
        Test rows per class.
    n_certificates : int
        The Bonferroni family: each certificate's error level is ``(1 - confidence) / n_certificates``
        (:func:`epsaudit.bounds.bonferroni_alpha`).
    confidence, delta : float
    bound : {"joint", "clopper-pearson"}
        The library's exact joint test (default) or *Picture the Epsilon*'s two one-sided
        Clopper-Pearson bounds at half the level each.

    Returns
    -------
    pandas.Series
        Test size -> largest certifiable epsilon (:func:`epsaudit.bounds.certifiable_cap`).

    Examples
    --------
    >>> round(float(cap_table([30], 40, bound="clopper-pearson").iloc[0]), 3)  # the paper's Table 3 cap
    1.277
    """
    alpha = bonferroni_alpha(n_certificates, confidence)
    return pd.Series({int(n): float(certifiable_cap(int(n), int(n), alpha, delta, bound=bound)) for n in sizes},
                     name="cap")


#: Test sizes shown in the caps table.
CAP_ROWS = [3, 5, 6, 9, 10, 11, 12, 15, 20, 25, 30]
#: Column labels of :func:`certificate_caps`: (bound, whose family).
CAP_COLUMNS = (("clopper-pearson", "ours"), ("joint", "ours"), ("clopper-pearson", "paper"))


def certificate_caps(family: int, confidence: float = 0.95, delta: float = 1e-5) -> pd.DataFrame:
    """:func:`cap_table` for 3-30 test rows per identity: our family under both bounds, and the paper's.

    Parameters
    ----------
    family : int
        Certificates that hold together (ours: 5 per condition).
    confidence, delta : float

    Returns
    -------
    pandas.DataFrame
        Index test rows per identity; columns :data:`CAP_COLUMNS`: ``family`` certificates with the
        paper's Clopper-Pearson bound, the same with the joint bound, and the paper's 40
        certificates (:data:`TABLE3_PROTOCOL`) with its bound.
    """
    paper = TABLE3_PROTOCOL["certificates"]
    sizes = range(3, 31)
    return pd.DataFrame({
        CAP_COLUMNS[0]: cap_table(sizes, family, confidence, delta, bound="clopper-pearson"),
        CAP_COLUMNS[1]: cap_table(sizes, family, confidence, delta, bound="joint"),
        CAP_COLUMNS[2]: cap_table(sizes, paper, confidence, delta, bound="clopper-pearson"),
    }).rename_axis("test rows per identity")


def cap_summary(caps: pd.DataFrame) -> pd.DataFrame:
    """The caps at the test sizes :data:`CAP_ROWS`, one column per size, rounded to 3 decimals."""
    return caps.loc[CAP_ROWS].T.round(3)


def reserved_certificates(audits: Mapping[str, ConditionAudit]) -> pd.DataFrame:
    """Every reserved-test certificate of the audits, one row each (the ``roc_reserved`` rows of
    :attr:`~epsaudit.condition.ConditionAudit.per_pair`), with a ``condition`` column.

    Returns
    -------
    pandas.DataFrame
        Empty (with a ``condition`` column) when no audit certified anything.
    """
    parts = [a.per_pair[a.per_pair["route"] == "roc_reserved"].assign(condition=n) for n, a in audits.items()]
    parts = [p for p in parts if len(p)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["condition", "value", "cap"])


def bound_summary(by_bound: Mapping[str, Mapping[str, ConditionAudit]]) -> pd.DataFrame:
    """The certificates of the same conditions under each bound: how many, median, largest, cap, at the cap.

    Parameters
    ----------
    by_bound : mapping bound name -> (condition name -> ConditionAudit)

    Returns
    -------
    pandas.DataFrame
        One row per bound: ``certificates``, ``positive``, ``median``, ``largest``, ``cap`` (the
        largest cap of the test sizes), ``at the cap`` (certificates with zero test errors, equal
        to their cap).
    """
    rows = {}
    for bound, audits in by_bound.items():
        c = reserved_certificates(audits)
        v = c["value"].astype(float)
        rows[bound] = {"certificates": len(c), "positive": int((v > 0).sum()), "median": float(v.median()),
                       "largest": float(v.max()), "cap": float(c["cap"].astype(float).max()),
                       "at the cap": int(c["censored"].astype(bool).sum())}
    return pd.DataFrame(rows).T


def table3_numbers(t3: pd.DataFrame, caps: pd.DataFrame, audits: Mapping[str, ConditionAudit],
                   data: StudyData, family: int) -> dict[str, Any]:
    """The numbers the Table 3 prose quotes.

    Parameters
    ----------
    t3 : pandas.DataFrame
        :func:`table3` output.
    caps : pandas.DataFrame
        :func:`certificate_caps` output.
    audits : mapping condition name -> ConditionAudit
    data : StudyData
    family : int

    Returns
    -------
    dict
        Glue key -> value: the per-bound level and family, the smallest test sizes that certify
        anything and more than one, the caps at 30 rows, certificate counts per regime, test sizes,
        quartiles of the large regime's photographs per identity, censored bounds, ``dp-pix``.
    """
    alpha = bonferroni_alpha(family)
    out: dict[str, Any] = {"alpha_cert": alpha, "alpha_side": alpha / 2, "family": int(family)}
    ours, paper, joint = caps[CAP_COLUMNS[0]], caps[CAP_COLUMNS[2]], caps[CAP_COLUMNS[1]]
    out["first_positive_n"] = int(caps.index[ours > 0][0]) if (ours > 0).any() else 0
    out["first_above_one_n"] = int(caps.index[ours > 1][0]) if (ours > 1).any() else 0
    out["cap30_ours"] = float(ours.loc[30])
    out["cap30_paper"] = float(paper.loc[30])
    out["cap30_joint"] = float(joint.loc[30])
    out["first_positive_n_joint"] = int(caps.index[joint > 0][0]) if (joint > 0).any() else 0
    out["first_above_one_n_joint"] = int(caps.index[joint > 1][0]) if (joint > 1).any() else 0
    large3 = t3.xs(REGIME_LABEL["large"], level="data", drop_level=False)
    small3 = t3.xs(REGIME_LABEL["small"], level="data", drop_level=False)
    certs = pd.concat([a.summary[a.summary.route == "roc_reserved"].assign(condition=n) for n, a in audits.items()
                       if (a.summary.route == "roc_reserved").any()])
    out["n_certs"] = int(len(certs))
    out["pos_large"] = int(large3["Pos."].sum())
    out["above1_large"] = int(large3[">1"].sum())
    out["certs_large"] = int(large3["certificates"].sum())
    out["pos_small"] = int(small3["Pos."].sum())
    out["certs_small"] = int(small3["certificates"].sum())
    out["cert_max"] = float(certs["value"].max())
    small_tests = certs[certs.condition.str.contains("_small_")][["n_test_a", "n_test_b"]]
    out["n_test_small_max"] = int(small_tests.max().max())
    large_tests = certs[certs.condition.str.contains("_large_")][["n_test_a", "n_test_b"]]
    out["n_test_large_min"] = int(large_tests.min().min())
    out["n_test_large_max"] = int(large_tests.max().max())
    large_sizes = data.tables[f"{data.encoders[0]}_large_none"].rows_per_identity()
    out["large_q1"] = int(large_sizes.quantile(0.25))
    out["large_q3"] = int(large_sizes.quantile(0.75))
    out["large_cap_rows"] = int(large_sizes.max())
    out["censored_total"] = int(t3["censored"].sum())
    if "dp-pix" in t3.index.get_level_values("generator"):
        dp = t3.xs("dp-pix", level="generator")
        pos_dp, n_dp = int(dp["Pos."].sum()), int(dp["certificates"].sum())
        out["dp_cert_phrase"] = f"{pos_dp} of {n_dp} certificates {'is' if pos_dp == 1 else 'are'} positive"
    else:
        out["dp_cert_phrase"] = ""
    return out
