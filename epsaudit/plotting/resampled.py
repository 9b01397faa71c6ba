"""Chapter 5's figure: the certificates per pass on resampled draws and on the photographs."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .style import PALETTE

WIDTH = 8.0
DESIGN_COLOUR = {"resampled draws": PALETTE[0], "photographs (chapter 4)": PALETTE[1]}


def certificates_per_pass(bounds: pd.DataFrame, *, paper_medians: dict[int, float] | None = None,
                          paper_cap: float | None = None):
    """Every certified lower bound per pass, one panel per condition, with each design's cap.

    Parameters
    ----------
    bounds : pandas.DataFrame
        Tidy: ``condition`` (panel), ``design`` (colour), ``pass``, ``bound`` (certified epsilon,
        nats), ``cap`` (the largest bound the design's test sizes allow).
    paper_medians : dict pass -> float, optional
        The median certificate of Table 7 of *Picture the Epsilon* per pass (black crosses).
    paper_cap : float, optional
        Table 7's cap (a dotted black line).

    Returns
    -------
    matplotlib.figure.Figure
    """
    conditions = list(dict.fromkeys(bounds["condition"]))
    cols = min(2, len(conditions))
    rows = int(np.ceil(len(conditions) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(WIDTH, 3.4 * rows), sharey=True, squeeze=False,
                             layout="constrained")
    passes = sorted(bounds["pass"].unique())
    designs = list(dict.fromkeys(bounds["design"]))
    width = 0.8 / max(1, len(designs))
    rng = np.random.default_rng(0)  # horizontal jitter of the dots only
    for ax, cond in zip(axes.flat, conditions):
        sub = bounds[bounds["condition"] == cond]
        for j, design in enumerate(designs):
            g = sub[sub["design"] == design]
            colour = DESIGN_COLOUR.get(design, PALETTE[2 + j])
            offset = (j - (len(designs) - 1) / 2) * width
            for i, k in enumerate(passes):
                b = g.loc[g["pass"] == k, "bound"].to_numpy(float)
                if not len(b):
                    continue
                x = i + offset + rng.uniform(-width / 3, width / 3, size=len(b))
                ax.scatter(x, b, s=12, alpha=0.6, color=colour, label=design if i == 0 else None)
                ax.hlines(np.median(b), i + offset - width / 2, i + offset + width / 2, color=colour, lw=2.5)
                cap = g.loc[g["pass"] == k, "cap"].max()
                ax.hlines(cap, i + offset - width / 2, i + offset + width / 2, color=colour, lw=1, ls="--")
        if paper_medians:
            xs = [i for i, k in enumerate(passes) if k in paper_medians]
            ax.scatter(xs, [paper_medians[passes[i]] for i in xs], marker="x", s=60, color="black",
                       label="Table 7 median (paper)", zorder=5)
        if paper_cap is not None:
            ax.axhline(paper_cap, color="black", ls=":", lw=1, label="Table 7 cap (paper)")
        ax.set_xticks(range(len(passes)), [f"pass {k}" for k in passes])
        ax.set_title(cond)
    for ax in axes.flat[len(conditions):]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("certified lower bound on\nepsilon (nats)")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=min(4, len(labels)), frameon=False)
    return fig
