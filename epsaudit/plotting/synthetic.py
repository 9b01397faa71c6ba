"""Chapter 1 figures: the known-epsilon benchmark (Figure 2 and Figure 3 analogs)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from .style import MECHANISM_LABELS


def _line_with_band(ax, data: pd.DataFrame, x: str, y: str, label: str, **kwargs) -> None:
    """Mean of ``y`` per requested epsilon as a line at the mean of ``x``; min-max band over the
    rows of that setting (prototype geometries and repetitions)."""
    key = "epsilon" if "epsilon" in data else x
    g = data.groupby(key).agg(x_=(x, "mean"), mean=(y, "mean"), lo=(y, "min"), hi=(y, "max")).sort_values("x_")
    (line,) = ax.plot(g["x_"], g["mean"], marker="o", label=label, **kwargs)
    ax.fill_between(g["x_"], g["lo"], g["hi"], alpha=0.2, color=line.get_color())


def routes_against_reference(summary: pd.DataFrame, auc_reference: pd.DataFrame, *, kde_alpha: float = 0.01):
    """Figure 2 analog: each route's per-setting median against the exact median pairwise epsilon.

    Parameters
    ----------
    summary : DataFrame
        :func:`epsaudit.studies.synthetic.per_setting_summary` rows at one sample size.
    auc_reference : DataFrame
        :func:`epsaudit.studies.synthetic.optimal_auc_reference` rows.
    kde_alpha : float
        KDE-LR smoothing weight shown.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = plt.subplots(1, 4, figsize=(15, 3.6))
    panels = [
        ("gaussmech", "median", "GaussMech diagnostic (nats)"),
        ("kde_lr", "median", f"KDE-LR diagnostic, alpha={kde_alpha} (nats)"),
        ("mmd_tv", "median", "MMD-TV sample value (nats)"),
        ("roc_oof", "median_auc", "ROC-HT out-of-fold AUC"),
    ]
    for ax, (route, column, title) in zip(axes, panels):
        rows = summary[summary["route"] == route]
        if route == "kde_lr":
            rows = rows[np.isclose(rows["alpha"], kde_alpha)]
        for mech, part in rows.groupby("mechanism"):
            if route == "mmd_tv" and mech != "laplace":
                continue  # pure-DP route: shown for the pure-DP mechanism only
            _line_with_band(ax, part, "reference_epsilon", column, MECHANISM_LABELS.get(mech, mech))
        if route == "mmd_tv" and "hockey_stick" in rows:
            lap = rows[rows["mechanism"] == "laplace"]
            _line_with_band(ax, lap, "reference_epsilon", "hockey_stick", "hockey-stick form", linestyle="--")
        if route == "roc_oof":
            for mech, part in auc_reference.groupby("mechanism"):
                g = part.groupby("epsilon")[["reference_epsilon", "optimal_auc"]].mean().sort_values("reference_epsilon")
                ax.plot(g["reference_epsilon"], g["optimal_auc"], linestyle=":", color="black" if mech == "gaussian" else "grey",
                        label=f"optimal AUC, {MECHANISM_LABELS.get(mech, mech)}")
            ax.set_ylim(0.4, 1.02)
        ax.set_xlabel("exact median pairwise epsilon (nats)")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def certification_curves(cert_summary: pd.DataFrame):
    """Figure 3 analog: fraction certified > 0 (top) and median certified epsilon (bottom) against the
    exact median pairwise epsilon; columns are mechanisms, colours sample sizes, line style the test.

    Returns
    -------
    matplotlib.figure.Figure
    """
    mechanisms = list(dict.fromkeys(cert_summary["mechanism"]))
    fig, axes = plt.subplots(2, len(mechanisms), figsize=(5.5 * len(mechanisms), 7), squeeze=False)
    sizes = sorted(cert_summary["n"].unique())
    colours = dict(zip(sizes, sns.color_palette("viridis", len(sizes))))
    styles = {"logistic": "-", "exact": "--", "shrinkage_lda": "-."}
    for col, mech in enumerate(mechanisms):
        for (n, test), part in cert_summary[cert_summary["mechanism"] == mech].groupby(["n", "test"]):
            positive = part[part["reference_epsilon"] > 0]
            for row, column in enumerate(["fraction_positive", "median_certified"]):
                g = positive.groupby("epsilon")[["reference_epsilon", column]].mean().sort_values("reference_epsilon")
                axes[row, col].plot(g["reference_epsilon"], g[column], styles.get(test, ":"), marker="o",
                                    color=colours[n], label=f"n={n}, {test}")
        axes[0, col].set_title(MECHANISM_LABELS.get(mech, mech))
        axes[0, col].set_ylabel("fraction of pairs certified > 0")
        axes[1, col].set_ylabel("median certified epsilon (nats)")
        for row in range(2):
            axes[row, col].set_xscale("log")
            axes[row, col].set_xlabel("exact median pairwise epsilon (nats, log scale)")
        axes[0, col].legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig
