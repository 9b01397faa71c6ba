"""Figures of "Audit a mechanism in ten minutes": the cap a test size puts on any certificate."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import FuncFormatter

from .style import PALETTE

_STYLE = {"joint": ("-", "o", 6), "clopper-pearson": ("--", "s", 4)}


def cap_against_test_size(caps: pd.DataFrame, truth: float | None = None):
    """Certifiable cap (zero test errors) against test rows per identity, one line per family and bound.

    Parameters
    ----------
    caps : pandas.DataFrame
        Index: test rows per identity (ints); columns a MultiIndex ``(family, bound)``: the number of
        certificates reported together and ``"joint"`` (solid) or ``"clopper-pearson"`` (dashed);
        values the largest certifiable epsilon (nats).
    truth : float, optional
        An exact epsilon to draw as a horizontal line.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    families = list(dict.fromkeys(caps.columns.get_level_values(0)))
    for colour, family in zip(PALETTE, families):
        for bound in caps[family].columns:
            line, marker, size = _STYLE.get(bound, (":", "^", 5))
            label = f"{family} certificate{'' if family == 1 else 's'}, {bound}"
            ax.plot(caps.index, caps[(family, bound)], linestyle=line, marker=marker, markersize=size, color=colour,
                    label=label)
    if truth is not None:
        ax.axhline(truth, color="black", linestyle="--", linewidth=1, label=f"exact ε = {truth:g}")
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_xlabel("test rows per identity (log scale)")
    ax.set_ylabel("largest certifiable ε (nats)")
    ax.legend(title="reported together, bound", fontsize=10, title_fontsize=10)
    fig.tight_layout()
    return fig
