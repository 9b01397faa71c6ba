"""Chapter 4 figures: the swap cascade and the affine operator.

Each function draws one figure of the chapter from one tidy table (what
:mod:`epsaudit.studies.cascade` computed; the same table is saved beside the figure as CSV by
:func:`epsaudit.plotting.save_figure`) and returns the figure. Figures are sized for the book's
page (8 inches wide, text at least 11 pt, so at least 9 pt on the page), one idea per row of
panels, with the colour-blind-safe :data:`~epsaudit.plotting.style.PALETTE` and a shared legend
below the panels.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from .style import PALETTE

__all__ = ["WIDTH", "FIT_STYLE", "VARIANT_COLOUR", "example_chains", "spectra_against_size", "penalty_sensitivity",
           "eigenvalues", "leakage_per_pass", "excess_per_pass"]

#: Width of every figure of the chapter (inches): the page's text column at 1280 px.
WIDTH = 8.0
#: Colour and marker of each fit ("<variant>, <encoder>"), the same in every figure.
FIT_STYLE = {"hull, dlib": (PALETTE[0], "o"), "hull, SFace": (PALETTE[1], "s"),
             "inner, dlib": (PALETTE[2], "^"), "inner, SFace": (PALETTE[3], "D")}
#: Colour of each swap variant where the encoder is a panel of its own.
VARIANT_COLOUR = {"hull": PALETTE[0], "inner": PALETTE[5]}


def _fit_style(label: str, k: int) -> tuple[str, str]:
    return FIT_STYLE.get(label, (PALETTE[k % len(PALETTE)], "o"))


def _legend_below(fig, handles, labels, ncol: int) -> None:
    fig.legend(handles, labels, loc="outside lower center", ncol=ncol, frameon=False)


def example_chains(examples: Sequence[Mapping]):
    """Re-rendered example chains (the paper's Figure 15 analog): one block per chain, one row per
    variant, the original photograph, passes 1-5 and the fifth pass's donor.

    Parameters
    ----------
    examples : sequence of dict
        ``identity`` and ``variants`` (variant -> (pass images, donor images), each an (H, W, 3)
        uint8 array); :func:`epsaudit.studies.cascade.example_chains`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    n_var = max(len(ex["variants"]) for ex in examples)
    fig = plt.figure(figsize=(WIDTH, 2.55 * len(examples) * n_var / 2 + 0.4 * len(examples)), layout="constrained")
    blocks = fig.subfigures(len(examples), 1, squeeze=False)[:, 0]
    for block, ex in zip(blocks, examples):
        block.suptitle(f"target: {ex['identity'].replace('_', ' ')}", fontsize=12, x=0.02, ha="left")
        axes = block.subplots(n_var, 7, squeeze=False)
        for j, (variant, (passes_img, donors_img)) in enumerate(ex["variants"].items()):
            for k, ax in enumerate(axes[j]):
                ax.set_xticks([])
                ax.set_yticks([])
                for side in ax.spines.values():
                    side.set_visible(False)
                image = donors_img[-1] if k == 6 else (passes_img[k] if k < len(passes_img) else None)
                if image is not None:
                    ax.imshow(image)
                if j == 0:
                    ax.set_title("original" if k == 0 else ("donor 5" if k == 6 else f"pass {k}"), fontsize=11)
            axes[j, 0].set_ylabel(variant, fontsize=12)
    return fig


def spectra_against_size(curve: pd.DataFrame):
    """``rho(B)`` and ``b_u`` against the number of train triplets (the paper's Figure 14 analog).

    Parameters
    ----------
    curve : pandas.DataFrame
        Tidy: ``fit`` ("<variant>, <encoder>"), ``train_triplets``, ``rho_B``, ``b_u`` (dimensionless).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = plt.subplots(1, 2, figsize=(WIDTH, 3.9), layout="constrained")
    handles = []
    for k, (fit, g) in enumerate(curve.groupby("fit", sort=False)):
        colour, marker = _fit_style(fit, k)
        for ax, col in zip(axes, ("rho_B", "b_u")):
            line, = ax.plot(g["train_triplets"], g[col], marker=marker, color=colour, label=fit)
        handles.append(line)
    sizes = sorted(set(curve["train_triplets"].astype(int)))
    for ax, what in zip(axes, (r"spectral radius $\rho(B)$", r"mean Rayleigh gain $b_u$")):
        ax.set_xscale("log")
        ax.set_xticks(sizes, [f"{n:,}" for n in sizes])  # the sizes fitted, not powers of ten
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("train triplets (single swaps, log scale)")
        ax.set_ylabel(what)
    _legend_below(fig, handles, [h.get_label() for h in handles], ncol=4)
    return fig


def penalty_sensitivity(sensitivity: pd.DataFrame):
    """CV R^2, ``rho(B)`` and ``sigma_max(B)`` against the ridge penalty, one line per fit; dots mark
    the penalties within one standard error of the best CV R^2, stars the chosen one.

    Parameters
    ----------
    sensitivity : pandas.DataFrame
        Tidy: ``fit`` and the columns of :func:`epsaudit.operator.penalty_sensitivity` (``alpha``,
        ``cv_r2``, ``rho_B``, ``sigma_max_B``, ``within_one_se``, ``chosen``).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = plt.subplots(1, 3, figsize=(WIDTH, 4.2), layout="constrained")
    handles = []
    for k, (fit, sens) in enumerate(sensitivity.groupby("fit", sort=False)):
        colour, _ = _fit_style(fit, k)
        alpha = sens["alpha"].to_numpy(float)
        near, chosen = sens["within_one_se"].to_numpy(bool), sens["chosen"].to_numpy(bool)
        for ax, y in zip(axes, (sens["cv_r2"] - sens["cv_r2"].max(), sens["rho_B"], sens["sigma_max_B"])):
            y = np.asarray(y, float)
            line, = ax.plot(alpha, y, color=colour, label=fit)
            ax.plot(alpha[near], y[near], "o", ms=4, color=colour)
            ax.plot(alpha[chosen], y[chosen], "*", ms=13, color=colour, markeredgecolor="black", markeredgewidth=0.6)
        handles.append(line)
    for ax, what in zip(axes, ("CV $R^2$ minus its best", r"spectral radius $\rho(B)$",
                               r"$\sigma_{\max}(B)$ (log scale)")):
        ax.set_xscale("log")
        ax.set_xlabel("ridge penalty (log)")
        ax.set_ylabel(what)
    axes[0].set_ylim(-0.05, 0.005)
    axes[2].set_yscale("log")
    handles += [Line2D([], [], color="0.3", marker="o", ls="", ms=4, label="within one SE of the best CV $R^2$"),
                Line2D([], [], color="0.3", marker="*", ls="", ms=13, markeredgecolor="black", label="chosen")]
    _legend_below(fig, handles, [h.get_label() for h in handles], ncol=3)
    return fig


def eigenvalues(eigs: pd.DataFrame):
    """The eigenvalues of ``B`` in the complex plane with the unit circle (the paper's Figure 4
    analog), one panel per encoder, the spectral radius of each variant in the panel.

    Parameters
    ----------
    eigs : pandas.DataFrame
        Tidy: ``encoder``, ``variant``, ``real``, ``imaginary``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    encoders = list(dict.fromkeys(eigs["encoder"]))
    fig, axes = plt.subplots(1, len(encoders), figsize=(WIDTH, 4.4), sharex=True, sharey=True, squeeze=False,
                             layout="constrained")
    theta = np.linspace(0, 2 * np.pi, 400)
    handles = {}
    for ax, enc in zip(axes[0], encoders):
        circle, = ax.plot(np.cos(theta), np.sin(theta), color="0.55", lw=1, label="unit circle")
        handles["unit circle"] = circle
        radii = []
        for (v, g), marker in zip(eigs[eigs["encoder"] == enc].groupby("variant", sort=False), ("o", "x")):
            handles[v] = ax.scatter(g["real"], g["imaginary"], s=16, marker=marker, color=VARIANT_COLOUR.get(v),
                                    label=v, alpha=0.8)
            radii.append(rf"{v} {np.hypot(g['real'], g['imaginary']).max():.3f}")
        ax.text(-1.05, 1.05, r"$\rho(B)$: " + ", ".join(radii), fontsize=11, va="top")
        ax.set_aspect("equal")
        ax.set_title(f"{enc}: eigenvalues of $B$")
        ax.set_xlabel("real part")
    axes[0, 0].set_ylabel("imaginary part")
    _legend_below(fig, list(handles.values()), list(handles), ncol=len(handles))
    return fig


def _per_encoder_axes(frame: pd.DataFrame, height: float):
    encoders = list(dict.fromkeys(frame["encoder"]))
    fig, axes = plt.subplots(1, len(encoders), figsize=(WIDTH, height), sharey=True, squeeze=False,
                             layout="constrained")
    return fig, list(zip(encoders, axes[0]))


def leakage_per_pass(series: pd.DataFrame):
    """Target leakage per pass, measured and predicted by the Monte Carlo rollout, with the measured
    non-member score (the paper's Figure 6 analog); one panel per encoder.

    Parameters
    ----------
    series : pandas.DataFrame
        Tidy: ``encoder``, ``variant``, ``pass``, ``measured``, ``monte_carlo``, ``non_member`` (median
        centred cosines, dimensionless).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, panels = _per_encoder_axes(series, 4.3)
    for enc, ax in panels:
        for v, g in series[series["encoder"] == enc].groupby("variant", sort=False):
            colour = VARIANT_COLOUR.get(v)
            ax.plot(g["pass"], g["measured"], "o-", color=colour, label=f"{v}: measured")
            ax.plot(g["pass"], g["monte_carlo"], "s--", color=colour, mfc="white", label=f"{v}: Monte Carlo model")
            ax.plot(g["pass"], g["non_member"], ":", color=colour, lw=2, label=f"{v}: non-member")
        ax.set_title(enc)
        ax.set_xlabel("pass (0 = original photograph)")
    panels[0][1].set_ylabel("median centred cosine\nto the target's gallery")
    handles, labels = panels[0][1].get_legend_handles_labels()
    _legend_below(fig, handles, labels, ncol=2)
    return fig


def excess_per_pass(series: pd.DataFrame):
    """The excess over the non-member floor per pass on a log scale, with the slope ``rho(B)`` drawn
    from pass 1 (the paper's Figure 7 analog); one panel per encoder.

    Parameters
    ----------
    series : pandas.DataFrame
        Tidy: ``encoder``, ``variant``, ``pass``, ``excess`` (measured) and ``rho_slope`` (the pass-1
        excess times ``rho(B)`` per later pass), ``rho_B``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, panels = _per_encoder_axes(series, 4.1)
    for enc, ax in panels:
        for v, g in series[series["encoder"] == enc].groupby("variant", sort=False):
            colour = VARIANT_COLOUR.get(v)
            ex = g["excess"].astype(float)
            ax.plot(g["pass"][ex > 0], ex[ex > 0], "o-", color=colour, label=f"{v}: measured excess")
            slope = g.dropna(subset=["rho_slope"])
            ax.plot(slope["pass"], slope["rho_slope"], "--", color=colour,
                    label=rf"{v}: slope $\rho(B)$ from pass 1")
            ax.text(slope["pass"].iloc[-1] + 0.1, slope["rho_slope"].iloc[-1], f"{g['rho_B'].iloc[0]:.2f}",
                    color=colour, fontsize=11, va="center")
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlim(-0.3, 5.8)
        ax.set_title(enc)
        ax.set_xlabel("pass (0 = original photograph)")
    panels[0][1].set_ylabel("excess over the non-member\nfloor (log scale)")
    handles, labels = panels[0][1].get_legend_handles_labels()
    _legend_below(fig, handles, labels, ncol=2)
    return fig
