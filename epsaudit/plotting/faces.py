"""Chapter 3 figures: Q-Q panels, membership-inference score histograms and ROC, example images.

The data behind each figure is shaped by :mod:`epsaudit.studies.face_study` (``qq_data``,
``MembershipStudy.panels``, ``example_triplets``); these functions only draw.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..seeds import generator


def qq_panels(residuals: np.ndarray, coordinates, *, title: str = "", max_rows: int = 5000, seed: int | tuple = 0):
    """Normal Q-Q plots of pooled within-identity residual coordinates (*Picture the Epsilon*, Figure 4 analog).

    Parameters
    ----------
    residuals : ndarray, shape (N, d)
        Pooled residuals (:func:`epsaudit.studies.face_study.diagnostics.pooled_residuals`), in embedding units.
    coordinates : sequence of int
        Coordinates to plot (e.g. the least Gaussian by Shapiro-Wilk W).
    title : str
        Figure title (none if empty).
    max_rows : int
        A seeded subsample of this many rows (the paper: 5,000).
    seed : int or tuple
        Base seed or stream key of the subsample (purpose ``"qq-subsample"``).

    Returns
    -------
    matplotlib.figure.Figure
    """
    from scipy import stats

    x = residuals
    if len(x) > max_rows:
        x = x[generator(seed, "qq-subsample").choice(len(x), max_rows, replace=False)]
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
        "roc": {aggregate: (fpr, tpr)}, "auc": {aggregate: float}}``; one column of panels per label
        (:meth:`epsaudit.studies.face_study.membership.MembershipStudy.panels`).
    bins : int
        Histogram bin edges.

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
