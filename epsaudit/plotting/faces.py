"""Chapter 3 figures: Q-Q panels, membership score histograms and ROC, trade-off curves, example images.

The data behind each figure is shaped by the chapter's pages (``notebooks/03_face_case_study.py``,
``notebooks/03b_face_membership.py``) with :func:`epsaudit.studies.face_study.qq_points` and
:func:`epsaudit.studies.face_membership.example_triplets`; these functions only draw. Every figure is sized for the book's page (about 7.5-8.5 inches wide, text of
10 pt or more) and uses the colour-blind-safe :data:`epsaudit.plotting.PALETTE`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .style import PALETTE

#: Colours of the three galleries (as in the face-swap operator paper's Figure 2: target orange,
#: non-member blue, donor green), from the Okabe-Ito palette.
ROLE_COLOURS = {"target": PALETTE[1], "non_member": PALETTE[0], "donor": PALETTE[2]}
ROLE_NAMES = {"target": "target (member)", "non_member": "non-member", "donor": "donor"}


def qq_panels(points: pd.DataFrame, *, title: str = ""):
    """Normal Q-Q plots of residual coordinates (*Picture the Epsilon*, Figure 4 analog), two panels per row.

    Parameters
    ----------
    points : pandas.DataFrame
        :func:`epsaudit.studies.face_study.qq_points`: ``coordinate``, ``normal_quantile``,
        ``residual_quantile`` (embedding units), ``slope``, ``intercept`` (the Gaussian reference line).
    title : str
        Figure title (none if empty).

    Returns
    -------
    matplotlib.figure.Figure
    """
    coordinates = list(dict.fromkeys(points["coordinate"]))
    ncols = min(2, len(coordinates))
    nrows = -(-len(coordinates) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(7.5, 2.9 * nrows + 0.6), squeeze=False, layout="constrained")
    for ax in axes.flat[len(coordinates):]:
        ax.set_visible(False)
    for ax, j in zip(axes.flat, coordinates):
        p = points[points["coordinate"] == j]
        x = p["normal_quantile"].to_numpy()
        ax.scatter(x, p["residual_quantile"], s=6, alpha=0.6, color=PALETTE[0], label="residual quantiles")
        ax.plot(x, p["slope"].iloc[0] * x + p["intercept"].iloc[0], color="black", lw=1.2, label="Gaussian reference")
        ax.set_title(f"coordinate {j}")
    axes.flat[0].legend(loc="upper left", fontsize=10)
    fig.supxlabel("standard normal quantile")
    fig.supylabel("residual quantile (unit-norm embedding units)")
    if title:
        fig.suptitle(title)
    return fig


def score_histograms(panels: dict, *, bins: int = 50):
    """Similarity of each swap to the three galleries, one panel per encoder (the face-swap operator
    paper's Figure 2 analog, median aggregation).

    Parameters
    ----------
    panels : dict
        ``label -> {"scores": DataFrame with target_median, non_member_median, donor_median, ...}``
        (built on the membership page from :func:`epsaudit.studies.face_membership.swap_membership`).
    bins : int
        Histogram bin edges.

    Returns
    -------
    matplotlib.figure.Figure
        A one-photograph donor gallery gives one score for every swap: drawn as a vertical line.
    """
    labels = list(panels)
    fig, axes = plt.subplots(1, len(labels), figsize=(8.0, 3.6), squeeze=False, sharey=False, layout="constrained")
    for ax, label in zip(axes[0], labels):
        s = panels[label]["scores"]
        cols = [f"{r}_median" for r in ROLE_COLOURS]
        edges = np.linspace(float(s[cols].min().min()) - 0.02, float(s[cols].max().max()) + 0.02, bins)
        for role, colour in ROLE_COLOURS.items():
            values = s[f"{role}_median"]
            if values.nunique() == 1:
                ax.axvline(values.iloc[0], color=colour, lw=2.5, label=f"{ROLE_NAMES[role]} (one score)")
            else:  # a light fill and a full-colour outline, so that overlapping histograms stay apart
                ax.hist(values, bins=edges, color=colour, alpha=0.3, density=True, histtype="stepfilled")
                ax.hist(values, bins=edges, color=colour, lw=1.6, density=True, histtype="step",
                        label=ROLE_NAMES[role])
        ax.set_title(label)
        ax.set_xlabel("cosine to the gallery (median, centred)")
        ax.set_ylabel("density")
    handles, names = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", ncol=3)
    return fig


def membership_roc(panels: dict):
    """ROC of the thresholding membership adversary, one panel per encoder, median and max aggregation
    (the face-swap operator paper's Figure 3 analog).

    Parameters
    ----------
    panels : dict
        ``label -> {"roc": {aggregate: (fpr, tpr)}, "auc": {aggregate: float}}``.

    Returns
    -------
    matplotlib.figure.Figure
        Log false-positive-rate axis (an FPR of 0 is drawn at 1e-4); grey lines at FPR 0.1% and 1%.
    """
    labels = list(panels)
    fig, axes = plt.subplots(1, len(labels), figsize=(8.0, 3.8), squeeze=False, sharey=True, layout="constrained")
    for ax, label in zip(axes[0], labels):
        for agg, style, colour in (("median", "-", PALETTE[0]), ("max", "--", PALETTE[5])):
            fpr, tpr = panels[label]["roc"][agg]
            ax.plot(np.maximum(fpr, 1e-4), tpr, style, color=colour, lw=1.8,
                    label=f"{agg} (AUC {panels[label]['auc'][agg]:.3f})")
        grid = np.logspace(-4, 0, 200)
        ax.plot(grid, grid, ":", color="grey", label="chance")
        for level in (0.001, 0.01):
            ax.axvline(level, color="grey", lw=0.8, alpha=0.6)
        ax.set_xscale("log")
        ax.set_xlim(1e-4, 1)
        ax.set_ylim(0, 1.01)
        ax.set_title(label)
        ax.set_xlabel("false-positive rate (log scale)")
        ax.legend(loc="lower right", fontsize=10)
    axes[0, 0].set_ylabel("true-positive rate")
    return fig


def tradeoff_curves(points: pd.DataFrame, envelopes: pd.DataFrame, *, panel_titles: dict | None = None):
    """Certified trade-off curves: each pair's points ``(FPR_hi, FNR_hi)`` and their envelope, one panel per
    condition (rows: encoders, columns: generators), with the Gaussian-DP curve of the panel's largest
    certified mu.

    Parameters
    ----------
    points : pandas.DataFrame
        The bands' :meth:`epsaudit.audits.TradeoffCertificate.frame` rows with ``encoder``,
        ``generator``, ``rank`` (the pair's selection rank, 1 = best): ``fpr_upper``, ``fnr_upper``
        and each point's own ``mu`` bound.
    envelopes : pandas.DataFrame
        Each band's envelope (``fpr``, ``fnr_envelope``) with the same ``encoder``, ``generator``
        and ``rank`` columns.
    panel_titles : dict, optional
        Generator -> column title.

    Returns
    -------
    matplotlib.figure.Figure
        A pair's true trade-off curve lies on or below its envelope with the family's confidence.
        Filled markers are points below the diagonal (they certify something), hollow ones do not
        (a pair without a filled marker has the diagonal as its envelope, not drawn again); the
        dotted diagonal is the curve of two identical distributions; the dashed curve is
        ``Phi(Phi^-1(1 - a) - mu)`` at the largest certified mu of the panel (the point that gives
        that mu lies on it), drawn where that mu is above 0.
    """
    from ..bounds import gaussian_tradeoff

    encoders = list(dict.fromkeys(points["encoder"]))
    generators = list(dict.fromkeys(points["generator"]))
    fig, axes = plt.subplots(len(encoders), len(generators), figsize=(8.0, 0.9 + 2.75 * len(encoders)),
                             squeeze=False, sharex=True, sharey=True, layout="constrained")
    ranks = sorted(set(points["rank"]))
    markers, grid = "osD^v<>", np.linspace(0.0, 1.0, 201)
    for (i, enc), (j, gen) in ((e, g) for e in enumerate(encoders) for g in enumerate(generators)):
        ax = axes[i, j]
        here = points[(points["encoder"] == enc) & (points["generator"] == gen)]
        for k, rank in enumerate(ranks):
            colour, marker = PALETTE[k % len(PALETTE)], markers[k % len(markers)]
            env = envelopes[(envelopes["encoder"] == enc) & (envelopes["generator"] == gen)
                            & (envelopes["rank"] == rank)]
            pts = here[here["rank"] == rank]
            useful = (pts["fpr_upper"] + pts["fnr_upper"]) < 1
            if useful.any():  # otherwise the envelope is the diagonal itself
                ax.plot(env["fpr"], env["fnr_envelope"], color=colour, lw=1.5, alpha=0.9)
            ax.scatter(pts.loc[useful, "fpr_upper"], pts.loc[useful, "fnr_upper"], color=colour, marker=marker, s=40,
                       zorder=3, label=f"pair {rank}")
            ax.scatter(pts.loc[~useful, "fpr_upper"], pts.loc[~useful, "fnr_upper"], facecolors="none",
                       edgecolors=colour, marker=marker, s=30, zorder=3, alpha=0.7)
        mu = float(here["mu"].max()) if len(here) else 0.0
        if mu > 0:
            ax.plot(grid, gaussian_tradeoff(grid, mu), "--", color="black", lw=1.2, zorder=2,
                    label="Gaussian-DP curve, largest certified μ")
            ax.text(0.97, 0.97, f"μ ≥ {mu:.2f}", transform=ax.transAxes, ha="right", va="top", fontsize=10)
        ax.plot([0, 1], [1, 0], ":", color="dimgrey", lw=1.2, zorder=4, label="no separation")
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xticks([0, 0.25, 0.5, 0.75, 1], ["0", "", "0.5", "", "1"])
        ax.set_yticks([0, 0.25, 0.5, 0.75, 1], ["0", "", "0.5", "", "1"])
        if i == 0:
            ax.set_title((panel_titles or {}).get(gen, gen))
        if j == 0:
            ax.set_ylabel(f"{enc}\nFNR upper limit")
        if i == len(encoders) - 1:
            ax.set_xlabel("FPR upper limit")
    handles = {}
    for ax in axes.flat:  # one legend entry per label, whichever panel drew it
        for handle, name in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(name, handle)
    order = [f"pair {r}" for r in ranks] + ["Gaussian-DP curve, largest certified μ", "no separation"]
    names = [n for n in order if n in handles]
    fig.legend([handles[n] for n in names], names, loc="outside lower center", ncol=min(len(names), 3))
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
    fig, axes = plt.subplots(len(triplets), len(columns), figsize=(2.5 * len(columns), 2.7 * len(triplets)),
                             squeeze=False, layout="constrained")
    for row, item in zip(axes, triplets):
        for ax, key in zip(row, columns):
            ax.imshow(item[key])
            ax.set_xticks([])
            ax.set_yticks([])
            h, w = item[key].shape[:2]
            name = item["target_id"].split("/")[0].replace("_", " ")
            title = {"target": f"target: {name}", "donor": "donor (the same for all)"}.get(key, key)
            ax.set_title(f"{title}\n{w} × {h} px", fontsize=10)
    return fig
