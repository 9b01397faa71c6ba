"""Chapter 4's presentation: one rule per number for tables and prose, tables that fit the page.

A number the chapter shows is formatted once, by :func:`num` with the spec of its kind (the table
column and the glued prose value use the same spec), never as ``-0.000`` and never a count as a
float. :func:`styled` turns a frame of such strings into a table for the page: no integer index,
readable headers (HTML for symbols: :data:`LABEL`), repeated group labels left blank, a rule
between groups. :class:`Stopwatch` times the chapter's stages; :func:`profile_summary` says in
words what a run profile computes.
"""

from __future__ import annotations

import html
import re
from typing import Any, Mapping, Sequence

import pandas as pd

from ..stopwatch import Stopwatch

__all__ = ["LABEL", "MATH", "num", "span", "fit_label", "strings", "styled", "Stopwatch", "profile_summary",
           "minutes", "each", "glue_each", "chains_text"]

#: Table headers of the operator's quantities (HTML).
LABEL = {"rho_B": "ρ(B)", "sigma_max_B": "σ<sub>max</sub>(B)", "b_u": "b<sub>u</sub>", "rho_A": "ρ(A)",
         "r2": "R²", "mean_cosine": "held-out cosine"}
#: The same quantities in prose (MyST; glued as Markdown).
MATH = {"rho_B": r"$\rho(B)$", "sigma_max_B": r"$\sigma_{\max}(B)$", "b_u": "$b_u$", "rho_A": r"$\rho(A)$",
        "r2": "$R^2$", "mean_cosine": "held-out cosine"}

_NEGATIVE_ZERO = re.compile(r"-0(\.0*)?(e[+-]?\d+)?%?")


def num(x: Any, spec: str = "{:.3f}", missing: str = "n/a") -> str:
    """A number as the chapter prints it: ``spec`` applied, no negative zero, ``missing`` for NaN/NA.

    Examples
    --------
    >>> num(-0.0004), num(1234.0, "{:,.0f}"), num(float("nan")), num(-0.00001, "{:.1%}")
    ('0.000', '1,234', 'n/a', '0.0%')
    """
    if x is None or (not isinstance(x, str) and pd.isna(x)):
        return missing
    if isinstance(x, str):
        return x
    text = spec.format(float(x))
    return text[1:] if _NEGATIVE_ZERO.fullmatch(text) else text


def span(low: Any, high: Any, spec: str = "{:.3f}") -> str:
    """A range ``low–high`` (one value when both print the same).

    Examples
    --------
    >>> span(0.8145, 0.8539), span(1.0, 1.0, "{:.1e}")
    ('0.815–0.854', '1.0e+00')
    """
    a, b = num(low, spec), num(high, spec)
    return a if a == b else f"{a}–{b}"


def fit_label(variant: str, encoder_label: str) -> str:
    """How a fit is named in tables and figures: ``"hull, dlib"``."""
    return f"{variant}, {encoder_label}"


def minutes(seconds: float) -> str:
    """Elapsed time in minutes with one decimal.

    Examples
    --------
    >>> minutes(95.0)
    '1.6'
    """
    return f"{seconds / 60:.1f}"


def strings(frame: pd.DataFrame, formats: Mapping[str, str] | None = None, default: str = "{:.3f}",
            missing: str = "n/a") -> pd.DataFrame:
    """Every cell as the text the page shows: numeric cells by ``formats[column]`` (else ``default``),
    text as is, missing cells as ``missing``.

    Examples
    --------
    >>> strings(pd.DataFrame({"x": [-0.0001, None], "n": [3.0, 4.0]}), {"n": "{:.0f}"}).to_dict("list")
    {'x': ['0.000', 'n/a'], 'n': ['3', '4']}
    """
    out = pd.DataFrame(index=frame.index)
    for col in frame.columns:
        spec = (formats or {}).get(col, default)
        out[col] = [num(x, spec, missing) if not isinstance(x, (bool, str)) else str(x) for x in frame[col]]
    return out


def styled(frame: pd.DataFrame, *, group: str | None = None, caption: str | None = None,
           headers: Mapping[str, str] | None = None, raw: Sequence[str] = (), nowrap: Sequence[str] = (),
           caption_html: bool = False, wrap_group: bool = False):
    """A frame of display strings as a table for the page.

    Parameters
    ----------
    frame : pandas.DataFrame
        Cells already formatted (:func:`strings`); its index is not shown.
    group : str, optional
        A column whose repeated values are left blank below their first row, with a rule above each
        new group.
    caption : str, optional
        Text above the table (HTML if ``caption_html``).
    wrap_group : bool
        Let the ``group`` column wrap (it is kept on one line by default).
    headers : mapping, optional
        Column -> header text (HTML allowed, e.g. :data:`LABEL`).
    raw : sequence of str
        Columns whose cells are HTML already (e.g. :data:`LABEL` values); other cells are escaped.
    nowrap : sequence of str
        Columns kept on one line (besides ``group`` and ``fit``), e.g. ranges of numbers.

    Returns
    -------
    pandas.io.formats.style.Styler
    """
    shown = frame.reset_index(drop=True).astype(object)
    for col in shown.columns:
        if col not in raw:
            shown[col] = [html.escape(str(x), quote=False) for x in shown[col]]
    first = pd.Series(True, index=shown.index)
    if group is not None:
        first = shown[group].ne(shown[group].shift())
        shown.loc[~first, group] = ""
    labels = [(headers or {}).get(c, html.escape(str(c))) for c in shown.columns]
    rule = "border-top: 1.5px solid #888"

    def rules(table: pd.DataFrame) -> pd.DataFrame:
        css = pd.DataFrame("", index=table.index, columns=table.columns)
        if group is not None:
            css.loc[first & (table.index > 0), :] = rule
        return css

    st = shown.style.hide(axis="index").apply(rules, axis=None)
    keep = [c for c in dict.fromkeys([None if wrap_group else group, "fit", *nowrap]) if c in shown.columns]
    if keep:  # row labels on one line
        st = st.set_properties(subset=keep, **{"white-space": "nowrap"})
    st = st.relabel_index(labels, axis="columns")
    st = st.set_table_attributes('class="dataframe" style="font-size: 0.9em"')
    st = st.set_table_styles([{"selector": "td, th", "props": "padding: 2px 6px; vertical-align: top;"},
                              {"selector": "caption", "props": "caption-side: top; text-align: left;"}])
    return st.set_caption(caption if caption_html else html.escape(caption)) if caption else st


def profile_summary(name: str, settings: Mapping[str, Any], encoders: Sequence[str] = ("dlib", "SFace")) -> str:
    """What a run profile computes, in words (the chapter's first screen).

    Examples
    --------
    >>> profile_summary("smoke", {"identities": 8, "chains": 6, "train": 1500, "test": 400, "mc_reps": 3,
    ...                           "audit": {"pairs": 10}, "audit_encoders": ("dlib",)})
    'a slice of the corpora (8 target identities, up to 6 chains each; 1,500 train and 400 test triplets per variant), 3 Monte Carlo rollouts, per-pass audits of dlib with 10 pairs'
    """
    if settings.get("identities") is None:
        corpus = "the whole corpora"
    else:
        corpus = (f"a slice of the corpora ({settings['identities']} target identities, up to {settings['chains']} "
                  f"chains each; {settings['train']:,} train and {settings['test']:,} test triplets per variant)")
    audited = " and ".join("SFace" if e == "sface" else e for e in settings["audit_encoders"])
    return (f"{corpus}, {settings['mc_reps']} Monte Carlo rollouts, per-pass audits of {audited} with "
            f"{settings['audit']['pairs']:,} pairs")


def glue_each(values: Mapping[str, Any], *templates: str, encoders: Sequence[str], fmt: str = "{:.3f}") -> None:
    """Glue, for each ``template``, one value per encoder of the run (:func:`each`) under ``<template>_each``.

    Parameters
    ----------
    values : mapping str -> value
        The page's numbers, keyed ``template.format(e=encoder)``.
    *templates : str
        Keys with an ``{e}`` field, e.g. ``"leak0_hull_{e}"`` (glued as ``"leak0_hull_each"``).
    encoders : sequence of str
    fmt : str

    Examples
    --------
    >>> glue_each({}, encoders=["dlib"])  # no templates: nothing to glue
    """
    from myst_nb import glue

    for template in templates:
        glue(template.replace("_{e}", "") + "_each", each(values, template, encoders, fmt), display=False)


def each(values: Mapping[str, Any], template: str, encoders: Sequence[str], fmt: str = "{:.3f}") -> str:
    """One value per encoder of the run, labelled: ``"0.812 (dlib) and 0.934 (SFace)"``.

    Parameters
    ----------
    values : mapping
        Prose values keyed by ``template.format(e=encoder)``: text, or numbers (formatted by
        :func:`num` with ``fmt``).
    template : str
        A key with ``{e}`` for the encoder, e.g. ``"alpha_hull_{e}"``.
    encoders : sequence of str
        ``"dlib"``, ``"sface"``.
    fmt : str
        The format of a numeric value.

    Examples
    --------
    >>> each({"r_dlib": "0.8", "r_sface": 0.91234}, "r_{e}", ["dlib", "sface"])
    '0.8 (dlib) and 0.912 (SFace)'
    >>> each({"r_sface": -0.02131}, "r_{e}", ["sface"], "{:.4f}")
    '-0.0213 (SFace)'
    """
    def text(v: Any) -> str:
        return v if isinstance(v, str) else num(v, fmt)

    parts = [f"{text(values[template.format(e=e)])} ({'SFace' if e == 'sface' else e})" for e in encoders]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def chains_text(images: bool) -> str:
    """The example chains' sentence: what the figure shows, or, without the photographs, that there is none.

    Examples
    --------
    >>> chains_text(False)
    'The LFW photographs are not on this machine (`make lfw`), so no example chains are drawn.'
    """
    if not images:
        return "The LFW photographs are not on this machine (`make lfw`), so no example chains are drawn."
    return ("**What a chain looks like** ({numref}`fig-ch4-chains`; the paper's Figure 15 shows FaceFusion chains). "
            "Two chains are re-created from their design rows; the swaps are deterministic, so these are exactly the "
            "images the corpus encoded.")
