"""Chapter 2 figures: DP-Sniper against the reserved test."""

from __future__ import annotations
