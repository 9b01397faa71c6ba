"""Figures of "Audit a mechanism in ten minutes": the cap a test size puts on any certificate."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import FuncFormatter

from .style import PALETTE


def cap_against_test_size(caps: pd.DataFrame, truth: float | None = None, paper: pd.DataFrame | None = None):
    """Certifiable cap (zero test errors) against test rows per identity, one line per family size.

    Parameters
    ----------
    caps : pandas.DataFrame
        Index: test rows per side (ints); one column per family size (``"<m> certificate(s)"``):
        the joint certificate's caps (solid lines).
    truth : float, optional
        An exact epsilon to draw as a horizontal line.
    paper : pandas.DataFrame, optional
        The same table for the paper's Clopper-Pearson bound, drawn dashed in the same colours.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for colour, column in zip(PALETTE, caps.columns):
        m = int(column.split(" ", 1)[0])
        label = f"{m} certificate" + ("" if m == 1 else "s")
        ax.plot(caps.index, caps[column], marker="o", color=colour, label=label + (", joint" if paper is not None else ""))
        if paper is not None:
            ax.plot(paper.index, paper[column], marker="s", markersize=4, linestyle="--", color=colour,
                    label=label + ", Clopper-Pearson")
    if truth is not None:
        ax.axhline(truth, color="black", linestyle="--", linewidth=1, label=f"exact ε = {truth:g}")
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_xlabel("test rows per identity (log scale)")
    ax.set_ylabel("largest certifiable ε (nats)")
    ax.legend(title="reported together, bound", fontsize=10, title_fontsize=10)
    fig.tight_layout()
    return fig
