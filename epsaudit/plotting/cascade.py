"""Chapter 4 figures: the swap cascade and the affine operator.

Each function draws one figure of the chapter from plain tables and arrays (what
:mod:`epsaudit.studies.cascade` computed) and returns it; the notebook shows it.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

__all__ = ["example_chains", "spectra_against_size", "penalty_sensitivity", "eigenvalues", "leakage_per_pass"]


def example_chains(examples: Sequence[Mapping]):
    """Re-rendered example chains: per chain one row per variant, pass 0 to the last pass, then the
    last pass's donor.

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
    fig, axes = plt.subplots(n_var * len(examples), 7, figsize=(12, 3.6 * len(examples)), squeeze=False)
    for i, ex in enumerate(examples):
        for j, (variant, (passes_img, donors_img)) in enumerate(ex["variants"].items()):
            row = axes[n_var * i + j]
            for k, ax in enumerate(row):
                ax.axis("off")
                if k < len(passes_img):
                    ax.imshow(passes_img[k])
                    ax.set_title(f"{variant}: pass {k}" if k else f"{ex['identity']}: original", fontsize=8)
            row[-1].imshow(donors_img[-1])
            row[-1].set_title("donor of pass 5", fontsize=8)
    fig.tight_layout()
    return fig


def spectra_against_size(curve: pd.DataFrame):
    """``rho(B)`` and ``b_u`` against the number of train triplets (the paper's Figure 14 analog).

    Parameters
    ----------
    curve : pandas.DataFrame
        Index (variant, encoder, n_train); columns ``rho_B`` and ``b_u`` (dimensionless).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for (v, enc), g in curve.groupby(level=["variant", "encoder"]):
        g = g.droplevel(["variant", "encoder"])
        axes[0].plot(g.index, g["rho_B"], marker="o", label=f"{v}, {enc}")
        axes[1].plot(g.index, g["b_u"], marker="o", label=f"{v}, {enc}")
    for ax, what in zip(axes, (r"spectral radius $\rho(B)$", r"mean Rayleigh gain $b_u$")):
        ax.set_xscale("log")
        ax.set_xlabel("train triplets (single swaps)")
        ax.set_ylabel(what)
    axes[0].legend(fontsize=8)
    fig.suptitle("Operator spectra against corpus size")
    fig.tight_layout()
    return fig


def penalty_sensitivity(sensitivity: Mapping[str, pd.DataFrame]):
    """CV R^2, ``rho(B)`` and ``sigma_max(B)`` against the ridge penalty, one line per fit; dots mark
    the penalties within one standard error of the best CV R^2, stars the chosen one.

    Parameters
    ----------
    sensitivity : mapping label -> DataFrame
        :func:`epsaudit.operator.penalty_sensitivity` (``alpha``, ``cv_r2``, ``rho_B``,
        ``sigma_max_B``, ``within_one_se``, ``chosen``), e.g. ``{"hull, dlib": ...}``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for label, sens in sensitivity.items():
        line, = axes[0].plot(sens["alpha"], sens["cv_r2"] - sens["cv_r2"].max(), label=label)
        for ax, col in zip(axes, ("cv_r2", "rho_B", "sigma_max_B")):
            y = sens[col] - sens["cv_r2"].max() if col == "cv_r2" else sens[col]
            if col != "cv_r2":
                ax.plot(sens["alpha"], y, color=line.get_color())
            near = sens["within_one_se"].to_numpy()
            ax.plot(sens["alpha"][near], y[near], "o", ms=3, color=line.get_color())
            ax.plot(sens["alpha"][sens["chosen"]], y[sens["chosen"]], "*", ms=12, color=line.get_color())
    for ax, what in zip(axes, ("CV $R^2$ minus its best", r"$\rho(B)$", r"$\sigma_{\max}(B)$")):
        ax.set_xscale("log")
        ax.set_xlabel("ridge penalty")
        ax.set_ylabel(what)
    axes[0].set_ylim(-0.05, 0.005)
    axes[2].set_yscale("log")
    axes[0].legend(fontsize=8)
    fig.suptitle("Penalty sensitivity (dots: within one SE of the best CV $R^2$; stars: chosen)")
    fig.tight_layout()
    return fig


def eigenvalues(eigs: Mapping[str, Mapping[str, np.ndarray]]):
    """The eigenvalues of ``B`` in the complex plane with the unit circle, one panel per encoder.

    Parameters
    ----------
    eigs : mapping encoder label -> (mapping variant -> complex ndarray)

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = plt.subplots(1, len(eigs), figsize=(10, 4.6), sharex=True, sharey=True, squeeze=False)
    theta = np.linspace(0, 2 * np.pi, 400)
    for ax, (enc, per_variant) in zip(axes[0], eigs.items()):
        ax.plot(np.cos(theta), np.sin(theta), color="0.6", lw=1, label="unit circle")
        for (v, ev), marker in zip(per_variant.items(), ("o", "x")):
            ax.scatter(ev.real, ev.imag, s=12, marker=marker, label=rf"{v}: $\rho(B)$ = {np.abs(ev).max():.3f}")
        ax.set_aspect("equal")
        ax.set_title(f"{enc}: eigenvalues of B")
        ax.set_xlabel("real part")
        ax.set_ylabel("imaginary part")
        ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    return fig


def leakage_per_pass(panels: Mapping[str, Mapping[str, Mapping]]):
    """Target leakage per pass, measured and predicted, over the non-member floor (top); the excess
    over the floor on a log scale with the slope ``rho(B)`` from pass 1 (bottom); one column per encoder.

    Parameters
    ----------
    panels : mapping encoder label -> (mapping variant -> dict)
        Per variant: ``measured`` (:func:`epsaudit.studies.cascade.cascade_series`: ``pass``,
        ``leakage``, ``floor``, ``excess``), ``predicted`` (``pass``, ``monte_carlo_leakage``) and
        ``rho_B``. Leakage is a median centred cosine (dimensionless).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = plt.subplots(2, len(panels), figsize=(11, 7.5), squeeze=False)
    for j, (enc, per_variant) in enumerate(panels.items()):
        for (v, d), colour in zip(per_variant.items(), ("C0", "C3")):
            m, p, rho = d["measured"], d["predicted"], d["rho_B"]
            axes[0, j].plot(m["pass"], m["leakage"], "o-", color=colour, label=f"{v}: measured")
            axes[0, j].plot(p["pass"], p["monte_carlo_leakage"], "s--", color=colour, alpha=0.6,
                            label=f"{v}: Monte Carlo")
            axes[0, j].plot(m["pass"], m["floor"], ":", color=colour, alpha=0.8, label=f"{v}: non-member")
            ex = m["excess"].astype(float).to_numpy()
            axes[1, j].semilogy(m["pass"][ex > 0], ex[ex > 0], "o-", color=colour, label=f"{v}: measured excess")
            ks = np.arange(1, len(ex))
            axes[1, j].semilogy(ks, ex[1] * rho ** (ks - 1), "--", color=colour, alpha=0.6,
                                label=rf"{v}: slope $\rho(B)$ = {rho:.2f} from pass 1")
        axes[0, j].set_title(f"{enc}: target leakage per pass")
        axes[0, j].set_ylabel("median centred cosine to target gallery")
        axes[1, j].set_ylabel("excess over the non-member floor (log)")
        for ax in axes[:, j]:
            ax.set_xlabel("pass (0 = original photograph)")
            ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
