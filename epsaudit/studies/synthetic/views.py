"""Chapter 1's tables as a reader sees them: readable labels, one number format per quantity.

The section functions of :mod:`epsaudit.studies.synthetic` return tables of numbers (what the tests
and the CSV files hold); the functions here turn them into display tables (pandas ``Styler``) with
readable row and column labels, no integer index, and every number written by :func:`number` with
the digits of :data:`DIGITS`, the same digits the chapter's prose uses for the glued numbers. A
reproduced table shows a row of ours above a row of the paper's values. :func:`figure2_data` is the table behind
Figure 2 (its CSV file).
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

__all__ = ["DIGITS", "MECHANISM_NAMES", "TEST_NAMES", "by_geometry_view", "figure2_data", "figure2_view",
           "figure3_view", "flat_labels", "floating_point_view", "number", "styled", "table4_view", "table6_view",
           "validity_view"]

#: Decimal digits per quantity, shared by the tables and the prose.
DIGITS: dict[str, int] = {"auc": 3, "infinite": 1, "mmd": 3, "gaussmech": 2, "kde": 0, "epsilon": 2, "fraction": 2}
#: Display names of the noise mechanisms, tests and prototype geometries.
MECHANISM_NAMES = {"gaussian": "Gaussian", "laplace": "product Laplace", "anisotropic_gaussian": "anisotropic Gaussian"}
TEST_NAMES = {"exact": "exact likelihood ratio", "logistic": "logistic regression", "shrinkage_lda": "shrinkage LDA"}
#: The same, short, for tables with many columns.
TEST_SHORT = {"exact": "exact", "logistic": "logistic", "shrinkage_lda": "shrinkage LDA"}
GEOMETRY_NAMES = {"dispersed": "dispersed", "face_like": "face-like"}


def number(value: Any, digits: int) -> str:
    """One number as the book writes it: fixed digits, no negative zero, ``+∞``, ``n/a`` for missing.

    Examples
    --------
    >>> number(-0.0004, 2), number(float("inf"), 2), number(1264.34, 0), number(None, 1)
    ('0.00', '+∞', '1264', 'n/a')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    value = float(value)
    if math.isinf(value):
        return "+∞" if value > 0 else "−∞"
    return f"{round(value, digits) + 0.0:.{digits}f}"


def flat_labels(frame: pd.DataFrame) -> pd.DataFrame:
    """The row labels (index levels) as leading columns, a label left blank where it repeats the row above.

    Examples
    --------
    >>> index = pd.MultiIndex.from_tuples([("a", 1), ("a", 2), ("b", 1)], names=["x", "n"])
    >>> flat_labels(pd.DataFrame({"v": [1, 2, 3]}, index=index))["x"].tolist()
    ['a', '', 'b']
    """
    names = [str(name) if name is not None else "" for name in frame.index.names]
    labels = pd.DataFrame(list(frame.index) if frame.index.nlevels > 1 else [[v] for v in frame.index], columns=names)
    labels = labels.astype(str)
    shown = labels.copy()
    same_so_far = pd.Series(True, index=labels.index)
    for name in names[:-1]:  # the last level is never blanked
        same_so_far &= labels[name].eq(labels[name].shift())
        shown.loc[same_so_far, name] = ""
    body = frame.reset_index(drop=True)
    return pd.concat([shown, body], axis=1)


def styled(frame: pd.DataFrame, caption: str | None = None):
    """A display table: row labels as bold leading columns (no separate index), cells on one line; the
    rows of a ``source`` level equal to ``"paper"`` in grey italics.

    Parameters
    ----------
    frame : DataFrame
        Cells already written as text; its index holds the row labels (named levels).
    caption : str, optional
        Shown above the table.

    Returns
    -------
    pandas.io.formats.style.Styler
    """
    flat = flat_labels(frame)
    labels = list(flat.columns[: frame.index.nlevels])
    style = (flat.style.hide(axis="index").set_table_attributes('class="dataframe"')
             .set_properties(subset=labels, **{"font-weight": "bold", "text-align": "left"})
             .set_table_styles([{"selector": "td", "props": "white-space: nowrap; padding: 0.15em 0.45em;"},
                                {"selector": "th", "props": "padding: 0.15em 0.45em;"}]))
    if "source" in labels:  # the paper's rows of a reproduced table, set off from ours
        style = style.apply(lambda row: ["font-style: italic; color: #555" if row["source"] == "paper" else ""
                                         for _ in row], axis=1)
    return style.set_caption(caption) if caption else style


def _epsilon_label(eps: float) -> str:
    return f"ε = {eps:g}"


def table4_view(side: pd.DataFrame):
    """Table 4 (:func:`~epsaudit.studies.synthetic.table4`): per size a row of ours and a row of the paper's."""
    columns = {"AUC": ("median AUC", "auc"), "Div.": ("+∞ pairs (mean, of 40)", "infinite"), "MMD-TV": ("MMD-TV", "mmd"),
               "GaussMech": ("GaussMech", "gaussmech"), "KDE-LR a=.01": ("KDE-LR", "kde")}
    rows, labels = [], []
    for n in side.index:
        for source in ("ours", "paper"):
            rows.append({label: number(side.loc[n, (key, source)], DIGITS[kind]) for key, (label, kind) in columns.items()})
            labels.append((n, source))
    frame = pd.DataFrame(rows, index=pd.MultiIndex.from_tuples(labels, names=["n", "source"]))
    return styled(frame, "The exact null, n outputs per identity: epsilons in nats, medians over the audited pairs "
                         "averaged over settings; +∞ pairs scaled to 40 audited pairs; KDE-LR at α = 0.01.")


def figure2_view(table: pd.DataFrame, n: int):
    """Figure 2 as numbers (:func:`~epsaudit.studies.synthetic.figure2_table`), readable labels."""
    columns = {"reference epsilon": ("exact ε", "epsilon"), "gaussmech": ("GaussMech", "gaussmech"),
               "kde_lr": ("KDE-LR", "kde"), "mmd_tv": ("MMD-TV", "mmd"), "roc_oof AUC": ("ROC AUC", "auc")}
    frame = pd.DataFrame({label: [number(v, DIGITS[kind]) for v in table[key]] for key, (label, kind) in columns.items()},
                         index=pd.MultiIndex.from_tuples(
                             [(MECHANISM_NAMES.get(m, m), f"{e:g}") for m, e in table.index],
                             names=["noise", "requested ε"]))
    return styled(frame, f"Medians over the audited pairs at n = {n} per identity, in nats except the AUC; exact ε: "
                         "the median exact pairwise ε; KDE-LR at α = 0.01. The paper gives Figure 2 as a plot only.")


def figure3_view(table: pd.DataFrame):
    """Figure 3 as numbers (:func:`~epsaudit.studies.synthetic.figure3_table`): fraction certified > 0."""
    digits = DIGITS["fraction"]
    frame = table.apply(lambda col: col.map(lambda v: number(v, digits)))
    frame.columns = [_epsilon_label(e) for e in table.columns]
    if "bound" in table.index.names:
        bound_names = {"joint": "joint", "clopper-pearson": "Clopper-Pearson"}
        frame.index = pd.MultiIndex.from_tuples([(MECHANISM_NAMES.get(m, m), TEST_SHORT.get(t, t), bound_names.get(b, b), n)
                                                 for m, t, b, n in table.index], names=["noise", "test", "bound", "n"])
    else:
        frame.index = pd.MultiIndex.from_tuples([(MECHANISM_NAMES.get(m, m), TEST_SHORT.get(t, t), n)
                                                 for m, t, n in table.index], names=["noise", "test", "n"])
    return styled(frame, "Fraction of the dispersed set's pairs certified above 0, by requested global ε; exact: "
                         "the exact likelihood-ratio test, logistic: logistic regression; bound: the joint "
                         "certificate or the paper's Clopper-Pearson bound; n: test size per identity. The paper "
                         "gives Figure 3 as a plot only.")


def table6_view(ours: pd.DataFrame, paper: pd.DataFrame):
    """Table 6: per test and size our rows (joint and Clopper-Pearson) and, where it has one, the paper's.

    Parameters
    ----------
    ours : DataFrame
        The first table of :func:`~epsaudit.studies.synthetic.table6` (rows (test, bound, n) or (test, n)).
    paper : DataFrame
        :data:`~epsaudit.studies.synthetic.TABLE6`.
    """
    one_bound = "bound" not in ours.index.names
    if one_bound:
        ours = pd.concat({"joint": ours}, names=["bound"]).reorder_levels(["test", "bound", "n"])
    bounds = [b for b in ("joint", "clopper-pearson") if b in ours.index.get_level_values("bound")]
    names = {"joint": "ours" if one_bound else "ours, joint", "clopper-pearson": "ours, Clopper-Pearson"}
    paper_name = "paper" if one_bound else "paper (Clopper-Pearson)"
    keys = list(dict.fromkeys((t, n) for t, _, n in ours.index))
    aligned = paper.reindex(pd.MultiIndex.from_tuples(keys, names=["test", "n"])).reindex(columns=ours.columns)
    rows, labels = [], []
    for test, n in keys:
        sources = [(names[b], ours.loc[(test, b, n)]) for b in bounds if (test, b, n) in ours.index]
        if aligned.loc[(test, n)].notna().all():
            sources.append((paper_name, aligned.loc[(test, n)]))
        for source, row in sources:
            rows.append({_epsilon_label(e): number(row[e], DIGITS["fraction"]) for e in ours.columns})
            labels.append((TEST_SHORT.get(test, test), n, source))
    frame = pd.DataFrame(rows, index=pd.MultiIndex.from_tuples(labels, names=["test", "n", "source"]))
    return styled(frame, "Fraction of the anisotropic-Gaussian pairs certified above 0, by requested global ε "
                         "(exact: the exact likelihood-ratio test), with the joint certificate and with the paper's "
                         "Clopper-Pearson bound; the paper has no row for the logistic test at n = 300 nor for "
                         "shrinkage LDA.")


def by_geometry_view(by_geometry: pd.DataFrame, n: int):
    """Table 6 at the largest size split by prototype geometry (:func:`~epsaudit.studies.synthetic.table6_by_geometry`)."""
    frame = by_geometry.apply(lambda col: col.map(lambda v: number(v, DIGITS["fraction"])))
    frame.columns = [_epsilon_label(e) for e in by_geometry.columns]
    frame.index = pd.MultiIndex.from_tuples([(TEST_SHORT.get(t, t), GEOMETRY_NAMES.get(g, g))
                                             for t, g in by_geometry.index], names=["test", "prototype set"])
    return styled(frame, f"Fraction certified above 0 at n = {n}, by prototype geometry (ours only).")


def floating_point_view(table: pd.DataFrame):
    """The floating-point section's certificates (:func:`~epsaudit.studies.synthetic.floating_point_table`)."""
    names = {"textbook float64": "textbook float64", "grid (float-safe)": "float-safe grid"}
    attacks = {"reachability": "reachability", "log-likelihood ratio": "log-ratio"}
    digits = DIGITS["epsilon"]
    frame = pd.DataFrame({"nominal ε": [number(v, digits) for v in table["nominal epsilon"]],
                          "reserved test": [number(v, digits) for v in table["reserved test"]],
                          "DP-Sniper": [number(v, digits) for v in table["DP-Sniper"]]},
                         index=pd.MultiIndex.from_tuples([(names.get(m, m), attacks.get(a, a)) for m, a in table.index],
                                                         names=["mechanism", "attack"]))
    return styled(frame, "Certified ε (nats, 95% each) of two fixed attacks; DP-Sniper: the larger of its "
                         "two directions.")


def validity_view(counts: pd.Series):
    """The validity counts (:func:`~epsaudit.studies.synthetic.validity_table`) as a two-column table."""
    frame = pd.DataFrame({"count": [str(int(v)) for v in counts]}, index=pd.Index(list(counts.index), name=""))
    return styled(frame)


def figure2_data(summary: pd.DataFrame, auc_reference: pd.DataFrame) -> pd.DataFrame:
    """The numbers drawn in Figure 2, one tidy table (the figure's CSV file).

    Per-setting route medians (``value``: the median epsilon, or the median AUC for ROC-HT; the
    hockey-stick form of MMD-TV as its own route) and the population-optimal AUC as route
    ``"optimal_auc"``, each with its mechanism, geometry, requested and reference epsilon.
    """
    keys = ["mechanism", "geometry", "epsilon", "rep", "reference_epsilon"]
    rows = summary[(summary["route"] != "kde_lr") | (summary["alpha"].round(6) == 0.01)]
    value = rows["median_auc"].where(rows["route"] == "roc_oof", rows["median"])
    out = [rows[keys].assign(route=rows["route"], value=value)]
    hockey = rows[(rows["route"] == "mmd_tv") & rows["hockey_stick"].notna()]
    out.append(hockey[keys].assign(route="mmd_tv_hockey_stick", value=hockey["hockey_stick"]))
    ref = auc_reference.assign(rep=0, route="optimal_auc", value=auc_reference["optimal_auc"])
    out.append(ref[keys + ["route", "value"]])
    return pd.concat(out, ignore_index=True)
