"""The book's figure style and shared labels."""

from __future__ import annotations

import seaborn as sns

MECHANISM_LABELS = {"gaussian": "Gaussian", "laplace": "product Laplace", "anisotropic_gaussian": "anisotropic Gaussian"}


def set_style() -> None:
    """The book's figure style (white grid, readable sizes)."""
    sns.set_theme(style="whitegrid", context="notebook", font_scale=0.95)
