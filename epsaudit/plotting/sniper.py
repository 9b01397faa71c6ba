"""Chapter 2 figures: DP-Sniper against the reserved test."""

from __future__ import annotations

import math
from collections.abc import Mapping

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.lines import Line2D

from .style import MECHANISM_LABELS, PALETTE

#: Colour and marker per requested epsilon of the budget figure (Okabe-Ito blue and vermillion).
_COLOURS = {8.0: PALETTE[0], 32.0: PALETTE[5]}
_MARKERS = {8.0: "o", 32.0: "s"}
#: Text sizes (pt) of the chapter's figures: a 7.6-inch figure shown across the page's ~7 inches keeps >= 12 pt.
_TEXT = {"font.size": 14, "axes.titlesize": 15, "axes.labelsize": 14, "xtick.labelsize": 13, "ytick.labelsize": 13,
         "legend.fontsize": 13}
#: Panel order of the budget figure: the mechanism the attack breaks first, then the one it does not.
_PANELS = ("randomized_response", "laplace")
#: Panel titles of the chapter's two mechanisms.
_NAMES = {"laplace": "product Laplace (d = 512)", "randomized_response": "16-ary randomized response"}


def bounds_against_budget(rows: pd.DataFrame, caps: pd.DataFrame, *, c: float, labels: Mapping[str, str] | None = None):
    """How the budget and ``c`` cap what DP-Sniper can certify: raw bounds against calls per pair.

    One panel per mechanism (randomized response above, product Laplace below), each with the two
    caps, ``log(1/c)`` and the runs at requested epsilon 8 and 32.

    Parameters
    ----------
    rows : DataFrame
        DP-Sniper rows (one per direction) with ``mechanism``, ``requested_epsilon`` (8 or 32),
        ``calls`` (per pair) and ``raw`` (the unclamped bound, nats); points are the rows, lines
        their median per budget.
    caps : DataFrame
        ``calls``, ``cap`` (closed-form cap, solid) and ``design_cap`` (an attack firing with
        probability ``c`` under the reference input, dashed), in nats.
    c : float
        The attack's target firing probability; ``log(1/c)`` is drawn dotted.
    labels : mapping, optional
        Display name per mechanism (default: "product Laplace (d = 512)", "16-ary randomized response").

    Returns
    -------
    matplotlib.figure.Figure
    """
    with plt.rc_context(_TEXT):
        return _bounds_against_budget(rows, caps, c, dict(MECHANISM_LABELS) | _NAMES | dict(labels or {}))


def _bounds_against_budget(rows: pd.DataFrame, caps: pd.DataFrame, c: float, labels: Mapping[str, str]):
    kinds = [k for k in _PANELS if k in set(rows["mechanism"])] + sorted(set(rows["mechanism"]) - set(_PANELS))
    fig, axes = plt.subplots(len(kinds), 1, figsize=(7.6, 3.9 * len(kinds) + 1.4), sharex=True, layout="constrained",
                             squeeze=False)
    top = math.log(1 / c)
    for ax, kind in zip(axes[:, 0], kinds):
        ax.plot(caps["calls"], caps["cap"], color="black", lw=1.8)
        ax.plot(caps["calls"], caps["design_cap"], color="black", lw=1.2, ls="--")
        ax.axhline(top, color="grey", lw=1.2, ls=":")
        ax.axhline(0, color="grey", lw=0.8)
        part = rows[rows.mechanism == kind]
        for eps, sub in part.groupby("requested_epsilon"):
            med = sub.groupby("calls")["raw"].median()
            colour, marker = _COLOURS.get(eps, PALETTE[2]), _MARKERS.get(eps, "^")
            ax.plot(med.index, med.values, color=colour, marker=marker, ms=7, lw=1.6)
            ax.scatter(sub["calls"], sub["raw"], color=colour, marker=marker, s=18, alpha=0.4, lw=0)
        low = min(0.0, float(part["raw"].min()) if len(part) else 0.0)
        ax.set_ylim(low - 0.4, top + 0.5)
        ax.set_title(labels.get(kind, kind), loc="left")
        ax.set_ylabel("raw bound on ε (nats)")
    axes[-1, 0].set_xscale("log")
    axes[-1, 0].set_xlabel("mechanism calls per pair (both inputs, both directions)")
    handles = [Line2D([], [], color="black", lw=1.8), Line2D([], [], color="black", lw=1.2, ls="--"),
               Line2D([], [], color="grey", lw=1.2, ls=":")]
    names = ["closed-form cap", "attack firing w.p. $c$ under $a'$", f"$\\log(1/c)$ = {top:.2f}"]
    for eps in sorted(set(rows["requested_epsilon"])):
        handles.append(Line2D([], [], color=_COLOURS.get(eps, PALETTE[2]), marker=_MARKERS.get(eps, "^"), ms=7, lw=1.6))
        names.append(f"requested $\\varepsilon$ = {eps:g}")
    fig.legend(handles, names, loc="outside lower center", ncol=2, frameon=False)
    return fig
