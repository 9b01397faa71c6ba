"""Chapter 4 figures: the swap cascade and the affine operator."""

from __future__ import annotations
