"""Chapter 2 figures: DP-Sniper against the reserved test."""

from __future__ import annotations

import math
from typing import Mapping

import matplotlib.pyplot as plt
import pandas as pd

from .style import MECHANISM_LABELS

#: Colour per mechanism and marker per requested epsilon of the budget figure.
_COLOURS = {"laplace": "tab:blue", "randomized_response": "tab:orange"}
_MARKERS = {8.0: "o", 32.0: "s"}


def bounds_against_budget(rows: pd.DataFrame, caps: pd.DataFrame, *, c: float, labels: Mapping[str, str] | None = None):
    """How the budget and ``c`` cap what DP-Sniper can certify: bounds against calls per pair.

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
        Display name per mechanism (default :data:`epsaudit.plotting.MECHANISM_LABELS`).

    Returns
    -------
    matplotlib.figure.Figure
    """
    labels = dict(MECHANISM_LABELS) | dict(labels or {})
    fig, ax = plt.subplots(figsize=(7.5, 5.6), layout="constrained")
    ax.plot(caps["calls"], caps["cap"], color="black", lw=1.8, label="cap: all fire under $a$, none under $a'$ (closed form)")
    ax.plot(caps["calls"], caps["design_cap"], color="black", lw=1.2, ls="--",
            label="attack firing with prob. $c$ under $a'$, 1 under $a$")
    ax.axhline(math.log(1 / c), color="grey", lw=1, ls=":", label=r"$\log(1/c)$")
    for (kind, eps), part in rows.groupby(["mechanism", "requested_epsilon"]):
        med = part.groupby("calls")["raw"].median()
        ax.plot(med.index, med.values, color=_COLOURS.get(kind), marker=_MARKERS.get(eps, "^"), lw=1.2,
                label=f"{labels.get(kind, kind)}, requested $\\varepsilon$ = {eps:g}")
        ax.scatter(part["calls"], part["raw"], color=_COLOURS.get(kind), marker=_MARKERS.get(eps, "^"), s=12, alpha=0.35)
    ax.set_xscale("log")
    ax.set_ylim(-0.5, math.log(1 / c) + 0.4)
    ax.set_xlabel("mechanism calls per pair (both inputs, both directions)")
    ax.set_ylabel(r"DP-Sniper lower bound on $\varepsilon$ (nats, raw)")
    ax.set_title("Sample size and c cap what DP-Sniper can certify")
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=2, frameon=False)
    return fig
