"""The book's figure style, shared labels, and saving a figure with the data behind it."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import seaborn as sns

MECHANISM_LABELS = {"gaussian": "Gaussian", "laplace": "product Laplace", "anisotropic_gaussian": "anisotropic Gaussian"}
#: Where :func:`save_figure` writes: the repository's ``_build/figures/`` whatever the working
#: directory (so papermill runs from anywhere); ``$EPSAUDIT_FIGURE_DIR`` overrides it.
DEFAULT_FIGURE_DIR = str(Path(__file__).resolve().parents[2] / "_build" / "figures")
#: Colour-blind-safe palette (Okabe & Ito) for lines that must be told apart.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
#: Dots per inch of the saved PNG files.
PNG_DPI = 200


def set_style() -> None:
    """The book's figure style: white grid, readable sizes (axis text >= 10 pt at the page's width),
    the colour-blind-safe :data:`PALETTE`."""
    sns.set_theme(style="whitegrid", context="notebook", font_scale=1.0, palette=list(PALETTE))


def _figure_dir() -> Path:
    """The folder figures are saved to (created when missing)."""
    path = Path(os.environ.get("EPSAUDIT_FIGURE_DIR", DEFAULT_FIGURE_DIR))
    path.mkdir(parents=True, exist_ok=True)
    return path


def save_figure(fig: Any, name: str, data: Any = None) -> list[Path]:
    """Write ``fig`` as PNG (200 dpi) and PDF, and the data behind it as CSV; return download links.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    name : str
        File stem naming the chapter and the paper's figure, e.g. ``"ch1-figure2-routes"``
        (letters, digits, ``-`` and ``_`` only).
    data : pandas.DataFrame, optional
        The numbers drawn, written as ``<name>.csv``.

    Returns
    -------
    list of pathlib.Path
        The files written (PNG, PDF and, with ``data``, CSV).

    Raises
    ------
    ValueError
        If ``name`` holds other characters.
    """
    if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
        raise ValueError(f"figure name {name!r}: use letters, digits, '-' and '_' only")
    folder = _figure_dir()
    fig.savefig(folder / f"{name}.png", dpi=PNG_DPI, bbox_inches="tight")
    fig.savefig(folder / f"{name}.pdf", bbox_inches="tight")
    files = [f"{name}.png", f"{name}.pdf"]
    if data is not None:
        data.to_csv(folder / f"{name}.csv", index=hasattr(data, "index") and data.index.name is not None)
        files.append(f"{name}.csv")
    return [folder / f for f in files]
