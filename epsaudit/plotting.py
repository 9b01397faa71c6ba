"""Figures of the compendium: one shared style, labelled axes with units (matplotlib/seaborn)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from .seeds import stream

MECHANISM_LABELS = {"gaussian": "Gaussian", "laplace": "product Laplace", "anisotropic_gaussian": "anisotropic Gaussian"}


def set_style() -> None:
    """The book's figure style (white grid, readable sizes)."""
    sns.set_theme(style="whitegrid", context="notebook", font_scale=0.95)


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
        :func:`epsaudit.benchmark.per_setting_summary` rows at one sample size.
    auc_reference : DataFrame
        :func:`epsaudit.benchmark.optimal_auc_reference` rows.
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


def qq_panels(residuals: np.ndarray, coordinates, *, title: str = "", max_rows: int = 5000, seed: int = 0):
    """Normal Q-Q plots of pooled within-identity residual coordinates (paper 001, Figure 4 analog).

    Parameters
    ----------
    residuals : ndarray, shape (N, d)
        Pooled residuals (:func:`epsaudit.diagnostics.pooled_residuals`), in embedding units.
    coordinates : sequence of int
        Coordinates to plot (e.g. the least Gaussian by Shapiro-Wilk W).
    max_rows : int
        A seeded subsample of this many rows (the paper: 5,000).

    Returns
    -------
    matplotlib.figure.Figure
    """
    from scipy import stats

    x = residuals
    if len(x) > max_rows:
        x = x[stream("qq-subsample", seed).choice(len(x), max_rows, replace=False)]
    coordinates = list(coordinates)
    ncols = min(2, len(coordinates))
    nrows = -(-len(coordinates) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.6 * nrows), squeeze=False, layout="constrained")
    for ax in axes.flat[len(coordinates):]:
        ax.set_visible(False)
    for ax, j in zip(axes.flat, coordinates):
        (osm, osr), (slope, intercept, _) = stats.probplot(x[:, j], dist="norm")
        ax.scatter(osm, osr, s=4, alpha=0.5)
        ax.plot(osm, slope * osm + intercept, color="black", lw=1, label="Gaussian reference")
        ax.set_title(f"coordinate e{j}", fontsize=10)
        ax.set_xlabel("standard normal quantile")
        ax.set_ylabel("residual quantile\n(unit-norm embedding units)")
        ax.legend(fontsize=7, loc="upper left")
    if title:
        fig.suptitle(title, fontsize=11)
    return fig


def membership_figure(panels: dict, *, bins: int = 50):
    """Score histograms (target / non-member / donor) and ROC curves of the membership adversary.

    Parameters
    ----------
    panels : dict
        ``label -> {"scores": DataFrame (columns target_<agg>, non_member_<agg>, donor_<agg>),
        "roc": {aggregate: (fpr, tpr)}, "auc": {aggregate: float}}``; one column of panels per label.

    Returns
    -------
    matplotlib.figure.Figure
        Top row: median-aggregated cosine histograms; bottom row: ROC (log FPR axis) for the median
        and max aggregates.
    """
    labels = list(panels)
    fig, axes = plt.subplots(2, len(labels), figsize=(6 * len(labels), 8), squeeze=False)
    colours = {"target": "tab:orange", "non_member": "tab:blue", "donor": "tab:green"}
    names = {"target": "target (member)", "non_member": "non-member", "donor": "donor"}
    for col, label in enumerate(labels):
        s = panels[label]["scores"]
        ax = axes[0, col]
        edges = np.linspace(min(s[[f"{r}_median" for r in colours]].min()) - 0.02,
                            max(s[[f"{r}_median" for r in colours]].max()) + 0.02, bins)
        for role, colour in colours.items():
            values = s[f"{role}_median"]
            if values.nunique() == 1:  # a one-photograph gallery of one donor: a single line
                ax.axvline(values.iloc[0], color=colour, lw=2, label=f"{names[role]} (all swaps)")
            else:
                ax.hist(values, bins=edges, color=colour, alpha=0.5, density=True, label=names[role])
        ax.set_title(f"{label}: AUC {panels[label]['auc']['median']:.3f} (median aggregation)", fontsize=10)
        ax.set_xlabel("cosine similarity of the swap to the gallery (median, centred)")
        ax.set_ylabel("density")
        ax.legend(fontsize=8)
        ax = axes[1, col]
        for agg, style in (("median", "-"), ("max", "--")):
            fpr, tpr = panels[label]["roc"][agg]
            ax.plot(np.maximum(fpr, 1e-4), tpr, style, label=f"{agg} aggregation (AUC {panels[label]['auc'][agg]:.3f})")
        grid = np.logspace(-4, 0, 200)
        ax.plot(grid, grid, ":", color="grey", label="chance (TPR = FPR)")
        for level in (0.001, 0.01):
            ax.axvline(level, color="grey", lw=0.8, alpha=0.6)
        ax.set_xscale("log")
        ax.set_xlim(1e-4, 1)
        ax.set_ylim(0, 1.01)
        ax.set_xlabel("false-positive rate (non-members flagged; log scale, 0 drawn at 1e-4)")
        ax.set_ylabel("true-positive rate (targets flagged)")
        ax.set_title(f"{label}: membership ROC", fontsize=10)
        ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


def image_triplets(triplets, *, columns=("target", "donor", "swap")):
    """Rows of images (e.g. target / donor / swap), each panel titled; pixel axes hidden.

    Parameters
    ----------
    triplets : list of dict
        Each with uint8 RGB arrays under ``columns`` and a ``target_id``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = plt.subplots(len(triplets), len(columns), figsize=(2.6 * len(columns), 2.7 * len(triplets)),
                             squeeze=False)
    for row, item in zip(axes, triplets):
        for ax, key in zip(row, columns):
            ax.imshow(item[key])
            ax.set_xticks([])
            ax.set_yticks([])
            h, w = item[key].shape[:2]
            title = f"{key}: {item['target_id'].split('/')[0]}" if key == "target" else key
            ax.set_title(f"{title}\n({w} x {h} px)", fontsize=8)
    fig.tight_layout()
    return fig
