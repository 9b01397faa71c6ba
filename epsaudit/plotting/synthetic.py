"""Chapter 1 figures: the known-epsilon benchmark (Figure 2 and Figure 3 analogs) and the trade-off curves.

Every figure is sized for the book's page (7.5 inches wide, text at 10 pt or more, so at least 9 pt
in the page's column), one idea per panel row, with the mechanisms, sample sizes and tests told apart by the colour-blind-safe
:data:`~epsaudit.plotting.style.PALETTE` and by line style.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from .style import MECHANISM_LABELS, PALETTE

#: One colour per noise mechanism, the same in every figure of the chapter.
MECHANISM_COLOURS = {"gaussian": PALETTE[0], "laplace": PALETTE[1], "anisotropic_gaussian": PALETTE[2]}
#: Line style per test of the reserved-test certificate.
TEST_STYLES = {"exact": "--", "logistic": "-", "shrinkage_lda": "-."}
TEST_LABELS = {"exact": "exact likelihood ratio", "logistic": "logistic regression", "shrinkage_lda": "shrinkage LDA"}
WIDTH = 7.5
#: Font sizes (pt) of legends and panel titles.
LEGEND, TITLE = 10, 11


def _log_ticks(ax) -> None:
    """Plain numbers (1, 2, 5, 10, ...) on a log-scaled x axis instead of powers of ten."""
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def _line_with_band(ax, data: pd.DataFrame, x: str, y: str, label: str, **kwargs) -> None:
    """Mean of ``y`` per requested epsilon as a line at the mean of ``x``; min-max band over the
    rows of that setting (prototype geometries and repetitions)."""
    key = "epsilon" if "epsilon" in data else x
    g = data.groupby(key).agg(x_=(x, "mean"), mean=(y, "mean"), lo=(y, "min"), hi=(y, "max")).sort_values("x_")
    (line,) = ax.plot(g["x_"], g["mean"], marker="o", markersize=4, label=label, **kwargs)
    ax.fill_between(g["x_"], g["lo"], g["hi"], alpha=0.2, color=line.get_color(), linewidth=0)


def routes_against_reference(summary: pd.DataFrame, auc_reference: pd.DataFrame, *, kde_alpha: float = 0.01):
    """Figure 2 analog: each route's per-setting median against the exact median pairwise epsilon.

    Top row: the two diagnostics (GaussMech, KDE-LR); bottom row: the two estimates (MMD-TV, the
    out-of-fold ROC AUC beside the population-optimal AUC). Colour: noise mechanism.

    Parameters
    ----------
    summary : DataFrame
        Per-setting route medians at one sample size (chapter 1's ``per_setting``): ``route``,
        ``mechanism``, ``epsilon``, ``reference_epsilon``, ``alpha``, ``median``, ``median_auc``, ``hockey_stick``.
    auc_reference : DataFrame
        Population-optimal AUC per setting: ``mechanism``, ``epsilon``, ``reference_epsilon``, ``optimal_auc``.
    kde_alpha : float
        KDE-LR smoothing weight shown.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = plt.subplots(2, 2, figsize=(WIDTH, 7.6), sharex=True)
    panels = [
        ("gaussmech", "median", "GaussMech (diagnostic)", "median GaussMech (nats)"),
        ("kde_lr", "median", f"KDE-LR, α = {kde_alpha:g} (diagnostic)", "median KDE-LR (nats)"),
        ("mmd_tv", "median", "MMD-TV (estimate), product Laplace", "median MMD-TV (nats)"),
        ("roc_oof", "median_auc", "ROC-HT out-of-fold (estimate)", "median AUC"),
    ]
    for ax, (route, column, title, ylabel) in zip(axes.flat, panels):
        rows = summary[summary["route"] == route]
        if route == "kde_lr":
            rows = rows[np.isclose(rows["alpha"], kde_alpha)]
        for mech, part in rows.groupby("mechanism"):
            if route == "mmd_tv" and mech != "laplace":
                continue  # pure-DP route: shown for the pure-DP mechanism only
            _line_with_band(ax, part, "reference_epsilon", column, MECHANISM_LABELS.get(mech, mech),
                            color=MECHANISM_COLOURS.get(mech))
        if route == "mmd_tv" and "hockey_stick" in rows:
            lap = rows[rows["mechanism"] == "laplace"]
            _line_with_band(ax, lap, "reference_epsilon", "hockey_stick", "hockey-stick form", linestyle="--",
                            color=PALETTE[3])
        if route == "roc_oof":
            for mech, part in auc_reference.groupby("mechanism"):
                g = part.groupby("epsilon")[["reference_epsilon", "optimal_auc"]].mean().sort_values("reference_epsilon")
                ax.plot(g["reference_epsilon"], g["optimal_auc"], linestyle=":", linewidth=2,
                        color=MECHANISM_COLOURS.get(mech), label=f"optimal AUC, {MECHANISM_LABELS.get(mech, mech)}")
            ax.set_ylim(0.4, 1.02)
        ax.set_title(title, fontsize=TITLE)
        ax.set_ylabel(ylabel)
    for ax in axes[1]:
        ax.set_xlabel("exact median ε (nats)")
    mechanisms = [m for m in MECHANISM_COLOURS if m in set(summary["mechanism"])]
    handles = [Line2D([], [], color=MECHANISM_COLOURS[m], marker="o", label=MECHANISM_LABELS.get(m, m)) for m in mechanisms]
    handles += [Line2D([], [], color=PALETTE[3], linestyle="--", label="MMD-TV, hockey-stick form"),
                Line2D([], [], color="grey", linestyle=":", linewidth=2, label="optimal AUC (colour: noise)")]
    fig.legend(handles=handles, loc="lower center", ncol=2, fontsize=LEGEND, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def certification_curves(cert_summary: pd.DataFrame):
    """Figure 3 analog: how often and how much the reserved test certifies, against the exact median epsilon.

    Top row: fraction of pairs certified above 0; bottom row: median certified epsilon, with the
    cap of each test size dotted. Columns: noise mechanisms; colour: test size per identity; line
    style: the test. With a ``bound`` column the joint certificate is drawn bold with markers and the
    paper's Clopper-Pearson bound thin and faded beside it (its caps dash-dotted).

    Parameters
    ----------
    cert_summary : DataFrame
        Per setting, test and bound (chapter 1's ``certification_summary``): ``mechanism``, ``test``,
        ``bound``, ``n``, ``epsilon``, ``reference_epsilon``, ``fraction_positive``, ``median_certified``, ``cap``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    mechanisms = list(dict.fromkeys(cert_summary["mechanism"]))
    fig, axes = plt.subplots(2, len(mechanisms), figsize=(WIDTH, 7.6), squeeze=False, sharex=True)
    sizes = sorted(cert_summary["n"].unique())
    colours = dict(zip(sizes, PALETTE))
    tests = list(dict.fromkeys(cert_summary["test"]))
    summary = cert_summary if "bound" in cert_summary else cert_summary.assign(bound="joint")
    bounds = [b for b in ("joint", "clopper-pearson") if b in set(summary["bound"])]
    look = {"joint": dict(marker="o", markersize=4, linewidth=1.8, alpha=1.0),
            "clopper-pearson": dict(marker=None, linewidth=1.0, alpha=0.5)}
    for col, mech in enumerate(mechanisms):
        for (n, test, bound), part in summary[summary["mechanism"] == mech].groupby(["n", "test", "bound"]):
            positive = part[part["reference_epsilon"] > 0]
            for row, column in enumerate(["fraction_positive", "median_certified"]):
                g = positive.groupby("epsilon")[["reference_epsilon", column]].mean().sort_values("reference_epsilon")
                axes[row, col].plot(g["reference_epsilon"], g[column], TEST_STYLES.get(test, ":"), color=colours[n],
                                    **look.get(bound, look["joint"]))
        for n in sizes:
            for bound in bounds:
                cap = summary.loc[(summary["n"] == n) & (summary["bound"] == bound), "cap"].max()
                axes[1, col].axhline(cap, color=colours[n], linestyle=":" if bound == "joint" else "-.",
                                     linewidth=1, alpha=look[bound]["alpha"])
        axes[0, col].set_title(MECHANISM_LABELS.get(mech, mech), fontsize=TITLE)
        axes[1, col].set_xlabel("exact median ε (nats, log scale)")
        for row in range(2):
            axes[row, col].set_xscale("log")
    axes[0, 0].set_ylabel("fraction of pairs certified > 0")
    axes[1, 0].set_ylabel("median certified ε (nats)")
    for row in range(2):
        top = max(ax.get_ylim()[1] for ax in axes[row])
        for ax in axes[row]:
            ax.set_ylim(-0.03 * top, top)
    for ax in axes.flat:
        _log_ticks(ax)
    size_handles = [Line2D([], [], color=colours[n], marker="o", label=f"n = {n} per identity") for n in sizes]
    test_handles = [Line2D([], [], color="black", linestyle=TEST_STYLES.get(t, ":"), label=TEST_LABELS.get(t, t))
                    for t in tests] + [Line2D([], [], color="grey", linestyle=":", label="cap of the test size")]
    if "clopper-pearson" in bounds:
        test_handles += [Line2D([], [], color="black", linewidth=1.8, marker="o", markersize=4, label="joint"),
                         Line2D([], [], color="black", linewidth=1.0, alpha=0.5, label="Clopper-Pearson (paper)")]
    fig.legend(handles=size_handles, loc="lower center", bbox_to_anchor=(0.5, 0.045), ncol=len(size_handles),
               fontsize=LEGEND, frameon=False)
    fig.legend(handles=test_handles, loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=len(test_handles),
               fontsize=LEGEND, frameon=False)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig


def tradeoff_curves(curves: pd.DataFrame, points: pd.DataFrame):
    """The trade-off-curve section: certified curves beside the exact curve of a Gaussian pair.

    Left: the certified upper envelope (lower convex hull of the certified points) at each sample
    size; right: the Gaussian-DP curve of the certified mu. The exact curve is black in both;
    the truth lies on or below every certified curve (with 95% confidence each).

    Parameters
    ----------
    curves, points : DataFrame
        Curves: ``mu``, ``n``, ``fpr``, ``exact``, ``envelope``, ``gdp_of_certified_mu``, ``mu_lower``;
        points: ``n``, ``fpr_upper``, ``fnr_upper`` (chapter 1's trade-off section).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = plt.subplots(1, 2, figsize=(WIDTH, 4.3), sharey=True)
    sizes = sorted(curves["n"].unique())
    mu = float(curves["mu"].iloc[0])
    first = curves[curves["n"] == sizes[0]]
    for ax in axes:
        ax.plot(first["fpr"], first["exact"], color="black", linewidth=2, label=f"exact, μ = {mu:g}")
        ax.plot([0, 1], [1, 0], color="grey", linewidth=1, linestyle=":")
    for colour, n in zip(PALETTE, sizes):
        part = curves[curves["n"] == n]
        axes[0].plot(part["fpr"], part["envelope"], color=colour, label=f"n = {n}")
        pts = points[points["n"] == n]
        axes[0].plot(pts["fpr_upper"], pts["fnr_upper"], "o", color=colour, markersize=5)
        axes[1].plot(part["fpr"], part["gdp_of_certified_mu"], color=colour,
                     label=f"n = {n}: μ ≥ {part['mu_lower'].iloc[0]:.2f}")
    axes[0].set_title("certified envelope (dots: certified points)", fontsize=TITLE)
    axes[1].set_title("Gaussian-DP curve of the certified μ", fontsize=TITLE)
    for ax in axes:
        ax.set_xlabel("false-positive rate α")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
        ax.legend(fontsize=LEGEND, loc="upper right")
    axes[0].set_ylabel("false-negative rate β")
    fig.tight_layout()
    return fig
