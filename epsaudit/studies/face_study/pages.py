"""Chapter 3's tables as a reader sees them: short labels, one number format per column, page width.

The computing functions (:mod:`~epsaudit.studies.face_study.audit`,
:mod:`~epsaudit.studies.face_study.diagnostics`, :mod:`~epsaudit.studies.face_study.membership`,
:mod:`~epsaudit.studies.face_study.tradeoff`) return full-precision frames with the library's own
column names. The ``*_view`` functions here turn them into :class:`pandas.io.formats.style.Styler`
tables for the page: readable column labels, counts as integers, a fixed number of decimals per
column (the same the prose uses: :func:`number`), never ``-0.000``, condition labels that fit
one line, the papers' rows beside ours where there are any, and at most about seven columns.

:mod:`epsaudit.studies.face_study` re-exports every public name.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from . import DIAGNOSTICS, LEVELS, MIA, MIA_TABLE_I_FACEFUSION, REGIME_LABEL, TABLE2, TABLE3, parse_condition

#: Short labels of the two regimes in the page's tables (the prose says which paper data set each plays).
SHORT_REGIME = {"large": "≥20 photos", "small": "10-19 photos"}
_SHORT_BY_LABEL = {REGIME_LABEL[k]: v for k, v in SHORT_REGIME.items()}
#: Cell styles of every table of the chapter (compact, so that seven columns fit the page).
TABLE_STYLES = [
    {"selector": "th, td", "props": "padding: 0.2em 0.45em; font-size: 0.85em;"},
    {"selector": "th.row_heading, td", "props": "white-space: nowrap;"},
    {"selector": "caption", "props": "caption-side: top; text-align: left; font-size: 0.9em; padding-bottom: 0.3em;"},
]


# -------------------------------------------------------------------------------------------------
# numbers as text


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    try:
        return bool(np.isnan(value))
    except TypeError:
        return False


def number(value: Any, decimals: int = 3, *, na: str = "n/a") -> str:
    """A number as the chapter prints it: fixed decimals, thousands separators, no negative zero.

    Integers (Python or NumPy) print without decimals; ``inf`` as ``+∞``; strings unchanged;
    missing values as ``na``.

    Parameters
    ----------
    value : number, str or None
    decimals : int
        Decimals of a float.
    na : str

    Returns
    -------
    str

    Examples
    --------
    >>> number(-0.0004), number(0.25, 1), number(2383), number(1211.876, 0), number(float("inf"))
    ('0.000', '0.2', '2,383', '1,212', '+∞')
    """
    if isinstance(value, str):
        return value
    if _missing(value):
        return na
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,d}"
    v = float(value)
    if np.isinf(v):
        return "+∞" if v > 0 else "−∞"
    text = f"{v:,.{int(decimals)}f}"
    return text.lstrip("-") if float(text.replace(",", "")) == 0 else text


def count(value: Any, *, na: str = "n/a") -> str:
    """A count (possibly stored as a float) as an integer with thousands separators.

    Examples
    --------
    >>> count(500.0), count(None)
    ('500', 'n/a')
    """
    return value if isinstance(value, str) else na if _missing(value) else f"{int(round(float(value))):,d}"


def percent(value: Any, decimals: int = 1, *, na: str = "n/a") -> str:
    """A fraction as a percentage number (the column header says "%").

    Examples
    --------
    >>> percent(0.32396), percent(0.0)
    ('32.4', '0.0')
    """
    return na if _missing(value) else number(100.0 * float(value), decimals)


def certificate(value: Any, decimals: int = 3, *, na: str = "n/a") -> str:
    """A certified lower bound: exactly 0 prints as ``0`` (nothing certified), else fixed decimals.

    Examples
    --------
    >>> certificate(0.0), certificate(1.2166903)
    ('0', '1.217')
    """
    if _missing(value) or isinstance(value, str):
        return number(value, decimals, na=na)
    return "0" if float(value) == 0 else number(float(value), decimals)


def decimals(k: int) -> Callable[[Any], str]:
    """A formatter with ``k`` decimals (:func:`number`)."""
    return lambda v: number(v, k)


def span_text(text: Any) -> str:
    """A range written ``"lo - hi"`` (the paper's Table 3 style) as ``"lo–hi"``: one value when both ends
    agree, and a bound of exactly 0 as ``0`` (:func:`certificate`).

    Examples
    --------
    >>> span_text("23 - 30"), span_text("1.000 - 1.000"), span_text("0.000 - 0.348"), span_text("10-10")
    ('23–30', '1.000', '0–0.348', '10')
    >>> span_text("0.000"), span_text("n/a")
    ('0', 'n/a')
    """
    if _missing(text):
        return "n/a"
    parts = [p.strip() for p in str(text).replace(" - ", "–").replace("-", "–").split("–")]
    if len(parts) not in (1, 2) or not all(p.replace(".", "", 1).replace(",", "").isdigit() for p in parts):
        return str(text)
    parts = parts * (3 - len(parts))
    parts = ["0" if float(p.replace(",", "")) == 0 else p for p in parts]
    return parts[0] if parts[0] == parts[1] else "–".join(parts)


def range_text(low: float, high: float, k: int = 3) -> str:
    """``"lo–hi"`` at ``k`` decimals, or one number when both print alike (:func:`number`).

    Examples
    --------
    >>> range_text(5.4061, 5.4064), range_text(1.9, 3.97, 2)
    ('5.406', '1.90–3.97')
    """
    lo, hi = number(low, k), number(high, k)
    return lo if lo == hi else f"{lo}–{hi}"


# -------------------------------------------------------------------------------------------------
# labels and the table style


def short_label(name: str) -> tuple[str, str, str]:
    """A condition's row label in the page's tables: (encoder, photographs per identity, generator).

    Examples
    --------
    >>> short_label("sface_small_swap")
    ('SFace', '10-19 photos', 'swap')
    """
    c = parse_condition(name)
    return {"dlib": "dlib", "sface": "SFace"}[c["encoder"]], SHORT_REGIME[c["regime"]], c["generator"]


def condition_text(label: tuple[str, ...] | str) -> str:
    """A condition for the prose: ``"dlib, ≥20 photos, swap"`` from a name or a table label.

    Examples
    --------
    >>> condition_text("dlib_large_swap"), condition_text(("SFace", REGIME_LABEL["small"], "none"))
    ('dlib, ≥20 photos, swap', 'SFace, 10-19 photos, none')
    """
    parts = short_label(label) if isinstance(label, str) else tuple(_SHORT_BY_LABEL.get(p, p) for p in label)
    return ", ".join(parts)


def short_index(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the regime level of its (encoder, data, generator) index in :data:`SHORT_REGIME` labels."""
    out = frame.copy()
    out.index = pd.MultiIndex.from_tuples([tuple(_SHORT_BY_LABEL.get(p, p) for p in idx) for idx in frame.index],
                                          names=frame.index.names)
    return out


#: Row label of *Picture the Epsilon*'s values (Section IV-D: ranges over its eight conditions) in a
#: diagnostics table, and the caption note that says so.
PAPER_ROW, PAPER_NOTE = ("paper", "8 conditions", ""), "last row: Picture the Epsilon, Section IV-D, over its 8 conditions"


def with_paper(frame: pd.DataFrame, values: Mapping[Any, Any], label: tuple = PAPER_ROW) -> pd.DataFrame:
    """``frame`` with one more row ``label`` holding a paper's ``values`` (column -> value; others missing).

    Examples
    --------
    >>> t = pd.DataFrame({"a": [1.0]}, index=pd.MultiIndex.from_tuples([("x", "y", "z")]))
    >>> with_paper(t, {"a": "2–3"})["a"].tolist()
    [1.0, '2–3']
    """
    row = pd.DataFrame([{c: values.get(c, np.nan) for c in frame.columns}], dtype=object,
                       index=pd.MultiIndex.from_tuples([label], names=frame.index.names))
    return pd.concat([frame.astype(object), row])


def _dash(low: Any, high: Any) -> str:
    return f"{low}–{high}"


def styled(frame: pd.DataFrame, formats: Mapping[Any, Callable[[Any], str]] | None = None, *,
           caption: str | None = None, index: bool = True, default: Callable[[Any], str] = number):
    """A table for the page: every cell formatted, index names hidden (or the whole index), compact cells.

    Parameters
    ----------
    frame : pandas.DataFrame
    formats : mapping column -> formatter, optional
        Columns not listed use ``default``.
    caption : str, optional
        Shown above the table.
    index : bool
        Show the row labels (False hides the index, e.g. a default integer index).
    default : callable

    Returns
    -------
    pandas.io.formats.style.Styler
    """
    formats = dict(formats or {})
    styler = frame.style.format({c: formats.get(c, default) for c in frame.columns})
    styler = styler.hide(axis="index", names=True) if index else styler.hide(axis="index")
    styler = styler.set_table_attributes('class="dataframe"').set_table_styles(TABLE_STYLES)
    return styler.set_caption(caption) if caption else styler


# -------------------------------------------------------------------------------------------------
# the data section


def data_views(table: pd.DataFrame):
    """The data table in two parts: counts, and mean cosines.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`epsaudit.studies.face_study.data_table` output.

    Returns
    -------
    tuple of Styler
        ``(counts, cosines)``.
    """
    t = short_index(table)
    t["rows/identity"] = t["rows/identity"].map(span_text)
    counts = t[["rows", "identities", "rows/identity", "pairs", "detector fallbacks", "swap flags"]].rename(columns={
        "rows/identity": "rows per identity", "pairs": "identity pairs", "detector fallbacks": "detector fallbacks",
        "swap flags": "CNN swap targets"})
    cosine_cols = {("raw cosine", "same identity"): "cos same raw", ("raw cosine", "different"): "cos diff raw",
                   ("centred cosine", "same identity"): "cos same centred",
                   ("centred cosine", "different"): "cos diff centred",
                   ("norm of", "mean unit vector"): "|mean unit vector|"}
    cosines = pd.DataFrame({k: t[v].astype(float) for k, v in cosine_cols.items()}, index=t.index)
    return (styled(counts, default=count),
            styled(cosines, default=decimals(3), caption="Mean cosine of two rows, by identity (raw, and after "
                                                         "subtracting the mean unit embedding)"))


# -------------------------------------------------------------------------------------------------
# Table 2 and Table 3

_T2 = {"GaussMech": ("GaussMech", decimals(1)), "KDE-LR a=0": ("KDE-LR α=0", decimals(0)),
       "KDE-LR a=.01": ("KDE-LR α=0.01", decimals(0)), "MMD-TV": ("MMD-TV", decimals(3)),
       "ROC-HT +inf": ("ROC-HT = +∞", count), "ROC AUC": ("ROC AUC", decimals(3))}


def table2_view(t2: pd.DataFrame):
    """*Picture the Epsilon*, Table 2 analog with the paper's six rows below ours.

    Parameters
    ----------
    t2 : pandas.DataFrame
        :func:`epsaudit.studies.face_study.table2` output.

    Returns
    -------
    Styler
        GaussMech at 1 decimal, KDE-LR at 0, MMD-TV and AUC at 3, the +inf count as an integer.
    """
    frame = pd.concat([short_index(t2)[list(_T2)], TABLE2.rename_axis(LEVELS)[list(_T2)]])
    frame = frame.rename(columns={k: v[0] for k, v in _T2.items()})
    n = int(t2["pairs"].min()) if len(t2) else 0
    return styled(frame, {v[0]: v[1] for v in _T2.values()},
                  caption=f"Medians over the first {n:,d} pairs of each condition (ours: dlib, SFace; 128-D) and "
                          "Picture the Epsilon's Table 2 (ArcFace, FaceNet; 512-D; FF = FaceFusion, ID = InstantID)")


def table2_500_view(t2: pd.DataFrame):
    """GaussMech and MMD-TV medians on the first 100 and 500 pairs, MMD-TV's maximum, and ROC-HT's exact corners.

    Returns
    -------
    Styler
    """
    t = short_index(t2)
    n100, n500 = int(t["pairs"].min()), int(t["pairs (500)"].min())
    cols = {("GaussMech", f"first {n100:,d}"): ("GaussMech", decimals(1)),
            ("GaussMech", f"all {n500:,d}"): ("GaussMech (500)", decimals(1)),
            ("MMD-TV", f"first {n100:,d}"): ("MMD-TV", decimals(3)),
            ("MMD-TV", f"all {n500:,d}"): ("MMD-TV (500)", decimals(3)),
            ("MMD-TV", f"max of all {n500:,d}"): ("MMD-TV max (500)", decimals(3)),
            ("ROC-HT", f"exact corners, first {n100:,d}"): ("exact corners", count)}
    frame = pd.DataFrame({k: t[v[0]] for k, v in cols.items()}, index=t.index)
    return styled(frame, {k: v[1] for k, v in cols.items()},
                  caption="Medians over the first pairs (columns: how many) and over all pairs GaussMech and MMD-TV "
                          "audited, MMD-TV's maximum, and how many pairs ROC-HT separates completely out of fold")


def cap_view(caps: pd.DataFrame, rows) -> Any:
    """The largest certificate a zero-error reserved test can give, by test rows per identity.

    Parameters
    ----------
    caps : pandas.DataFrame
        :func:`epsaudit.studies.face_study.certificate_caps` output: columns (bound, "ours" or
        "paper").
    rows : sequence of int
        Test sizes shown.

    Returns
    -------
    Styler
        One row per test size, one column per (bound, family); 0 printed as ``0``.
    """
    from . import TABLE3_PROTOCOL

    frame = caps.loc[list(rows)].copy()
    family = {"ours": None, "paper": TABLE3_PROTOCOL["certificates"]}
    names = {"clopper-pearson": "Clopper–Pearson", "joint": "joint"}
    frame.columns = pd.MultiIndex.from_tuples(
        [(f"{names[b]} bound", "ours" if who == "ours" else f"paper ({family['paper']} certificates)")
         for b, who in frame.columns])
    frame.index.name = "test rows per identity"
    return styled(frame, default=certificate,
                  caption="Cap of a zero-error reserved test (ours: the lecture's family; the paper's family is "
                          "smaller, so its caps are a little higher at the same size)")


def table3_view(t3: pd.DataFrame):
    """*Picture the Epsilon*, Table 3 analog (its Clopper–Pearson bound) with the paper's six rows below ours.

    Returns
    -------
    Styler
        Test rows per identity, test AUC, the certified epsilons (ranges "lo–hi" over the pairs),
        and how many exceed 0 and 1.
    """
    cols = {"n/class": "test rows / identity", "AUC": "test AUC", "eps_LB": "certified ε", "Pos.": "> 0", ">1": "> 1"}
    ours = short_index(t3).reindex(columns=list(cols))
    frame = pd.concat([ours, TABLE3.rename_axis(LEVELS)[list(cols)]]).rename(columns=cols)
    n = int(t3["certificates"].max()) if len(t3) else 0
    fmt = {c: span_text for c in ("test rows / identity", "test AUC", "certified ε")}
    return styled(frame, {**fmt, "> 0": count, "> 1": count},
                  caption=f"{n} certificates per condition, the paper's Clopper–Pearson bound: ranges over the pairs "
                          "(ours: dlib, SFace, LFW test sets of a few to about 30 rows) and Picture the Epsilon's "
                          "Table 3 (ArcFace, FaceNet; 29-30 test rows in VGGFace2, 9-10 in CelebA)")


def table3_joint_view(t3: pd.DataFrame, t3_joint: pd.DataFrame):
    """Table 3 under both bounds, per condition: certified range, positives, cap and how many reached it.

    Parameters
    ----------
    t3, t3_joint : pandas.DataFrame
        :func:`epsaudit.studies.face_study.table3` of the Clopper–Pearson and of the joint audits.

    Returns
    -------
    Styler
    """
    blocks = []
    for label, t in (("paper's CP", t3), ("joint", t3_joint)):
        t = short_index(t)
        block = pd.DataFrame({"test rows": t.get("n/class"), "certified ε": t.get("eps_LB"), "> 0": t.get("Pos."),
                              "cap": t.get("cap"), "at cap": t.get("censored")}, index=t.index)
        block.index = pd.MultiIndex.from_tuples([(*i, label) for i in t.index], names=[*t.index.names, "bound"])
        blocks.append(block)
    order = [i for pair in zip(blocks[0].index, blocks[1].index) for i in pair]  # each condition's two rows together
    frame = pd.concat(blocks).loc[order]
    fmt = {k: (span_text if k in ("test rows", "certified ε", "cap") else count) for k in frame.columns}
    return styled(frame, fmt, caption="Each condition's certificates under both bounds, the paper's Clopper–Pearson "
                                      "(CP) and the joint default (ranges over its pairs; each bound chooses and "
                                      "certifies its own pairs)")


def table3_caps_view(t3: pd.DataFrame):
    """What each condition's test sizes could certify at most, and how many certificates reached it.

    Returns
    -------
    Styler
    """
    t = short_index(t3)
    frame = pd.DataFrame({"certificates": t["certificates"], "test rows / identity": t.get("n/class"),
                          "cap (zero test errors)": t.get("cap"), "at their cap": t.get("censored")}, index=t.index)
    return styled(frame, {"certificates": count, "test rows / identity": span_text,
                          "cap (zero test errors)": span_text, "at their cap": count})


# -------------------------------------------------------------------------------------------------
# diagnostics


def shapiro_view(sw: pd.DataFrame):
    """Shapiro-Wilk rejections per condition (share rejected in whole percent, as the prose)."""
    t = short_index(sw)
    dim = int(t["coordinates"].max()) if len(t) else 0
    frame = pd.DataFrame({"residual rows": t["residual rows"], "rejected at p < 0.001": t["rejections (p<1e-3)"],
                          "share rejected (%)": t["fraction"], "smallest W": t["min W"]}, index=t.index)
    d = DIAGNOSTICS
    frame = with_paper(frame, {"residual rows": 5000, "rejected at p < 0.001": _dash(d["shapiro_rejections_min"],
                                                                                    d["shapiro_rejections_max"]),
                               "share rejected (%)": _dash(*(round(100 * d[f"shapiro_rejections_{k}"]
                                                                   / d["shapiro_dimensions"]) for k in ("min", "max")))})
    return styled(frame, {"residual rows": count, "rejected at p < 0.001": count,
                          "share rejected (%)": lambda v: v if isinstance(v, str) else percent(v, 0),
                          "smallest W": decimals(3)},
                  caption=f"Shapiro-Wilk tests of the {dim} residual coordinates of each condition "
                          f"({PAPER_NOTE}, 512 coordinates, 5,000 rows drawn)")


def bandwidth_view(maxima: pd.DataFrame, n_pairs: int):
    """MMD-TV's maximum over the pairs at each bandwidth scale, ours and the paper's two sweeps.

    Parameters
    ----------
    maxima : pandas.DataFrame
        ``BandwidthStudy.maxima()`` (columns ``"<scale> x median"``).
    n_pairs : int
        Pairs swept per condition.

    Returns
    -------
    Styler
    """
    ours = short_index(maxima)
    scales = [float(c.split(" ")[0]) for c in ours.columns]
    paper = pd.DataFrame([DIAGNOSTICS["bandwidth_max_facefusion"], DIAGNOSTICS["bandwidth_max_instantid"]],
                         columns=ours.columns, index=pd.MultiIndex.from_tuples(
                             [("ArcFace", "VGGFace2", "FF"), ("ArcFace", "VGGFace2", "ID")], names=LEVELS))
    frame = pd.concat([ours, paper])
    frame.columns = [f"{s:g} σ*" for s in scales]
    return styled(frame, default=decimals(3),
                  caption=f"Maximum of MMD-TV over the first {n_pairs:,d} pairs at bandwidth = scale × the median "
                          "heuristic σ* (ArcFace rows: Picture the Epsilon)")


def edges_view(edges: pd.DataFrame):
    """Where each bandwidth sweep peaks, before and after widening past an edge.

    Parameters
    ----------
    edges : pandas.DataFrame
        ``BandwidthStudy.edges()``.

    Returns
    -------
    Styler
        Edge status as ``no`` (interior), ``lower`` or ``upper``.
    """
    t = short_index(edges)

    def edge(v):
        return "no" if v == "interior" else str(v)

    frame = pd.DataFrame({("paper's scales", "peak (× σ*)"): t["peak (paper's scales)"],
                          ("paper's scales", "at an edge"): t["edge (paper's scales)"].map(edge),
                          ("widened", "scales added"): t["scales added"],
                          ("widened", "peak (× σ*)"): t["peak after widening"],
                          ("widened", "at an edge"): t["edge after widening"].map(edge),
                          ("widened", "maximum"): t["max at peak"]}, index=t.index)
    return styled(frame, {("paper's scales", "peak (× σ*)"): lambda v: f"{float(v):g}",
                          ("widened", "peak (× σ*)"): lambda v: f"{float(v):g}",
                          ("widened", "maximum"): decimals(3)}, default=str)


def witness_view(witness: pd.DataFrame):
    """The classifier witness against MMD/2 and KDE-LR's smoothing ratio (ratios at 2 and 1 decimals, as the prose)."""
    t = short_index(witness)
    n = int(t["pairs"].max()) if len(t) else 0
    frame = pd.DataFrame({"mean witness TV": t["mean_tv_witness"], "mean MMD/2": t["mean_half_mmd"],
                          "witness ÷ (MMD/2)": t["mean_ratio"], "KDE-LR α=0 ÷ α=0.01": t["KDE-LR ratio a=0 / a=.01"]},
                         index=t.index)
    d = DIAGNOSTICS
    frame = with_paper(frame, {"mean witness TV": _dash(d["witness_tv_min"], d["witness_tv_max"]),
                               "witness ÷ (MMD/2)": _dash(d["witness_ratio_min"], d["witness_ratio_max"]),
                               "KDE-LR α=0 ÷ α=0.01": _dash(d["kde_ratio_min"], d["kde_ratio_max"])})
    return styled(frame, {"mean witness TV": decimals(3), "mean MMD/2": decimals(3), "witness ÷ (MMD/2)": decimals(2),
                          "KDE-LR α=0 ÷ α=0.01": decimals(1)},
                  caption=f"Out-of-fold witness max(TPR − FPR) and MMD/2 on the {n:,d} pairs both routes audited per "
                          f"condition (n/a: MMD is 0 on every pair); KDE-LR's ratio of medians ({PAPER_NOTE})")


def robustness_views(checks: pd.DataFrame):
    """The robustness table in three parts: classifier sensitivity, split-half controls, permutation tests.

    Parameters
    ----------
    checks : pandas.DataFrame
        :func:`epsaudit.studies.face_study.robustness_checks` output.

    Returns
    -------
    tuple of Styler
        ``(classifiers, split_half, permutations)``.
    """
    t = short_index(checks)
    rf = int(t["RF pairs"].max()) if len(t) else 0
    classifiers = pd.DataFrame({"AUC logistic": t["AUC logistic"], "AUC forest": t["AUC forest"],
                                "logistic − forest": t["logistic - forest"]}, index=t.index)
    split = pd.DataFrame({"controls": t["split-half controls"], "MMD rejections": t["split MMD rejections"],
                          "mean MMD²ᵤ": t["split mean MMD2_u"], "mean AUC": t["split mean AUC"],
                          "exact corners": t["split exact corners"], "+∞ values": t["split +inf"]}, index=t.index)
    perm = pd.DataFrame({"tests": t["perm tests"], "rejected at 0.05": t["perm reject 0.05"],
                         "p at its floor": t["perm at floor"]}, index=t.index)
    d = DIAGNOSTICS
    classifiers = with_paper(classifiers, {"logistic − forest": _dash(d["rf_difference_min"], d["rf_difference_max"])})
    split = with_paper(split, {"controls": d["split_half_controls"], "MMD rejections": d["split_half_rejections"],
                               "exact corners": 0})
    perm = with_paper(perm, {"tests": d["permutation_tests"], "rejected at 0.05": d["permutation_rejections"]})
    return (styled(classifiers, default=decimals(3),
                   caption=f"Mean out-of-fold AUC over the first {rf:,d} pairs, identical folds ({PAPER_NOTE}, "
                           "200 pairs each)"),
            styled(split, {"mean MMD²ᵤ": decimals(4), "mean AUC": decimals(3)}, default=count,
                   caption=f"Same-identity split-half controls (the null holds by construction; {PAPER_NOTE})"),
            styled(perm, default=count, caption=f"Inter-identity MMD permutation tests ({PAPER_NOTE})"))


# -------------------------------------------------------------------------------------------------
# membership inference


def membership_views(table: pd.DataFrame, scores: pd.DataFrame):
    """The membership tables: the face-swap operator paper's Table I columns beside ours, the ranking
    metrics, and the mean scores.

    Parameters
    ----------
    table : pandas.DataFrame
        ``MembershipStudy.table()`` (percent columns already in percent).
    scores : pandas.DataFrame
        ``MembershipStudy.score_table()``.

    Returns
    -------
    tuple of Styler
        ``(operating_points, ranking, mean_scores)``.
    """
    pct = ["TPR @ FPR<=1% (%)", "TPR @ FPR<=0.1% (%)", "max balanced accuracy (%)"]
    names = {"TPR @ FPR<=1% (%)": "TPR at FPR ≤ 1% (%)", "TPR @ FPR<=0.1% (%)": "TPR at FPR ≤ 0.1% (%)",
             "max balanced accuracy (%)": "max balanced accuracy (%)"}
    paper = MIA_TABLE_I_FACEFUSION.T
    paper.columns = list(names.values())
    paper.index = pd.MultiIndex.from_tuples([(r.split(" ")[0], "paper: FaceFusion", a) for r, a in paper.index])
    ours = table[pct].rename(columns=names)
    ours.index = pd.MultiIndex.from_tuples([tuple(i) for i in ours.index])
    points = styled(pd.concat([ours, paper]), default=decimals(1),
                    caption="Membership operating points (buffalo_l and Facenet512 rows: the face-swap operator "
                            "paper's Table I, FaceFusion)")
    ranking = table[["AUC", "AUC (raw cosines)", "CMC rank-1", "CMC rank-5"]].copy()
    ranking.columns = ["AUC", "AUC, raw cosines", "rank-1 (%)", "rank-5 (%)"]
    ranking = with_paper(ranking, {"AUC": MIA["facefusion_auc"]}, label=("paper", "FaceFusion", ""))
    ranking_view = styled(ranking, {"AUC": decimals(3), "AUC, raw cosines": decimals(3),
                                    "rank-1 (%)": percent, "rank-5 (%)": percent},
                          caption="AUC of the thresholding adversary and closed-set identification of the target "
                                  "(last row: the face-swap operator paper, Section VIII, FaceFusion)")
    cols = {("mean cosine to the gallery", "genuine"): "mean genuine (before the swap)",
            ("mean cosine to the gallery", "target"): "mean target",
            ("mean cosine to the gallery", "non-member"): "mean non-member",
            ("mean cosine to the gallery", "donor"): "mean donor", ("", "donor > target (%)"): "donor > target"}
    frame = pd.DataFrame({k: scores[v] for k, v in cols.items()}, index=scores.index)
    frame = with_paper(frame, {cols_k: MIA[key] for cols_k, key in (
        (("mean cosine to the gallery", "genuine"), "facefusion_target_genuine"),
        (("mean cosine to the gallery", "target"), "facefusion_target_swap"),
        (("mean cosine to the gallery", "non-member"), "non_member_mean"))}, label=("buffalo_l (paper)", "median"))
    mean_view = styled(frame, {("", "donor > target (%)"): percent}, default=decimals(3),
                       caption="Centred cosines; genuine: the swap's source photograph before the swap (last row: "
                               "the face-swap operator paper, FaceFusion under buffalo_l)")
    return points, ranking_view, mean_view


# -------------------------------------------------------------------------------------------------
# the trade-off section and the timing


def short_name(identity: Any) -> str:
    """An LFW identity as initials and surname: ``"George_W_Bush"`` -> ``"G. W. Bush"``.

    Examples
    --------
    >>> short_name("George_W_Bush"), short_name("Madonna")
    ('G. W. Bush', 'Madonna')
    """
    parts = str(identity).split("_")
    return " ".join([f"{p[0]}." for p in parts[:-1] if p] + [parts[-1]])


def tradeoff_views(table: pd.DataFrame):
    """The trade-off section's tables: the band beside the reserved test, and the MMD certificate.

    Parameters
    ----------
    table : pandas.DataFrame
        ``TradeoffStudy.table()``.

    Returns
    -------
    tuple of Styler
        ``(bands, mmd)``, one row per pair (encoder, generator, rank and surnames). ``bands``: test
        rows, the reserved-test certificate, the band's best single-point epsilon, what the band's
        extra correction costs at the reserved test's threshold, and the certified mu.
    """
    pair = [f"{r}. {short_name(a).split()[-1]} – {short_name(b).split()[-1]}"
            for r, a, b in zip(table["rank"], table["identity_a"], table["identity_b"])]
    index = pd.MultiIndex.from_arrays([table["encoder"], table["generator"], pair])
    sizes = [f"{a} / {b}" for a, b in zip(table["n_test_a"], table["n_test_b"])]
    bands = pd.DataFrame({"test rows": sizes, "reserved test ε": table["reserved"].to_numpy(),
                          "band: best ε": table["best_epsilon"].to_numpy(),
                          "cost at its threshold": table["correction_cost"].to_numpy(),
                          "band: μ ≥": table["mu_lower"].to_numpy()}, index=index)
    mmd = pd.DataFrame({"test rows": sizes, "MMD²ᵤ on test rows": table["mmd2_u"].to_numpy(),
                        "deviation t": table["deviation"].to_numpy(), "MMD certificate ε": table["mmd_epsilon"].to_numpy()},
                       index=index)
    return (styled(bands, {"test rows": str}, default=certificate,
                   caption="Trade-off bands of the certified pairs beside their reserved-test certificates (the "
                           "library's joint bound); neither paper certifies curves, so there is no paper value"),
            styled(mmd, {"test rows": str, "MMD²ᵤ on test rows": decimals(3), "deviation t": decimals(3)},
                   default=certificate,
                   caption="MMD certificates of the same pairs: the test rows' MMD²ᵤ minus its worst-case deviation "
                           "(Picture the Epsilon reports MMD-TV only as a sample value, never as a certificate)"))


def timing_view(timing: pd.DataFrame):
    """Seconds per stage of the chapter (``Stopwatch.table()``), one decimal."""
    return styled(timing.set_index("stage").rename(columns={"seconds": "seconds (wall clock)"}), default=decimals(1))
