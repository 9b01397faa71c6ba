"""Chapter 5's figure: certificates per pass of the two photograph designs, with their same-person controls."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .style import PALETTE

WIDTH = 9.0
DESIGN_COLOUR = {"pool": PALETTE[1], "disjoint": PALETTE[0], "photographs": PALETTE[2]}


def _design_colour(design: str, j: int) -> str:
    return DESIGN_COLOUR.get(design, PALETTE[3 + j % 4])


def certificates_and_controls(bounds: pd.DataFrame, *, paper_medians: dict[int, float] | None = None,
                              paper_cap: float | None = None):
    """Every certified lower bound per pass, one panel per condition, each design in its colour, with
    the same-person controls of the same design beside the certificates.

    Parameters
    ----------
    bounds : pandas.DataFrame
        Tidy: ``condition`` (panel), ``design`` (colour: ``pool``, ``disjoint``), ``kind`` (``certificate``: two people,
        dots; ``control``: two halves of one person, open triangles), ``pass``, ``bound`` (certified
        epsilon, nats), ``cap`` (the largest bound the test sizes allow).
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
    fig, axes = plt.subplots(rows, cols, figsize=(WIDTH, 3.6 * rows + 0.8), sharey=True, squeeze=False,
                             layout="constrained")
    passes = sorted(bounds["pass"].unique())
    designs = list(dict.fromkeys(bounds["design"]))
    slots = [(d, kind) for d in designs for kind in ("certificate", "control")]
    width = 0.84 / len(slots)
    rng = np.random.default_rng(0)  # horizontal jitter of the dots only
    for ax, cond in zip(axes.flat, conditions):
        sub = bounds[bounds["condition"] == cond]
        for j, (design, kind) in enumerate(slots):
            g = sub[(sub["design"] == design) & (sub["kind"] == kind)]
            colour = _design_colour(design, designs.index(design))
            offset = (j - (len(slots) - 1) / 2) * width
            for i, k in enumerate(passes):
                b = g.loc[g["pass"] == k, "bound"].to_numpy(float)
                if not len(b):
                    continue
                x = i + offset + rng.uniform(-width / 3, width / 3, size=len(b))
                label = (f"{design}: {'two people' if kind == 'certificate' else 'same person (control)'}"
                         if i == 0 else None)
                if kind == "certificate":
                    ax.scatter(x, b, s=11, alpha=0.55, color=colour, label=label)
                else:
                    ax.scatter(x, b, s=16, marker="v", facecolors="none", edgecolors=colour, linewidths=0.9,
                               label=label)
                ax.hlines(np.median(b), i + offset - width / 2, i + offset + width / 2, color=colour, lw=2.5)
                ax.hlines(g.loc[g["pass"] == k, "cap"].max(), i + offset - width / 2, i + offset + width / 2,
                          color=colour, lw=1, ls="--")
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
    fig.legend(handles, labels, loc="outside lower center", ncol=2, frameon=False)
    return fig


def running_bounds(paths: dict[str, np.ndarray], *, target: float, plan_rows: int | None = None):
    """The running anytime-valid bound of each pair against the test rows taken (both sides).

    Parameters
    ----------
    paths : dict pair label -> ndarray (rows,)
        The certificate's bound after each test row (``SequentialCertificate.bound_path``), nats.
    target : float
        The epsilon the certificates aim for (a dashed horizontal line).
    plan_rows : int, optional
        Test rows (both sides) the fixed-size plan needs to certify ``target`` with zero errors (a
        dotted vertical line).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, ax = plt.subplots(figsize=(WIDTH, 3.4 + 0.25 * (len(paths) + 2) / 3), layout="constrained")
    for j, (label, path) in enumerate(paths.items()):
        ax.step(np.arange(1, len(path) + 1), path, where="post", lw=1.4, color=plt.get_cmap("tab10")(j % 10),
                ls="-" if j < 10 else "--", alpha=0.85, label=label)
    ax.axhline(target, color="black", ls="--", lw=1, label=f"target {target:g}")
    if plan_rows is not None:
        ax.axvline(plan_rows, color="black", ls=":", lw=1, label=f"fixed plan ({plan_rows} rows)")
    ax.set_xlabel("test draws taken, both identities (rows)")
    ax.set_ylabel("running lower bound on\nepsilon (nats)")
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncol=3, frameon=False)
    return fig
