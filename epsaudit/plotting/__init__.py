"""Figures of the compendium: one shared style, labelled axes with units (matplotlib/seaborn).

One module per chapter holds that chapter's figure functions; the notebooks call them as
``plotting.synthetic.routes_against_reference(...)`` and so on, after :func:`set_style`.

- :mod:`~epsaudit.plotting.quickstart` -- "Audit a mechanism in ten minutes";
- :mod:`~epsaudit.plotting.synthetic` -- chapter 1 (the known-epsilon benchmark);
- :mod:`~epsaudit.plotting.sniper` -- chapter 2 (DP-Sniper against the reserved test);
- :mod:`~epsaudit.plotting.faces` -- chapter 3 (the face case study);
- :mod:`~epsaudit.plotting.cascade` -- chapter 4 (the swap cascade and the operator);
- :mod:`~epsaudit.plotting.resampled` -- chapter 5 (certificates on resampled swaps).
"""

from __future__ import annotations

from . import cascade, faces, quickstart, resampled, sniper, synthetic
from .style import MECHANISM_LABELS, PALETTE, save_figure, set_style

__all__ = ["MECHANISM_LABELS", "PALETTE", "cascade", "faces", "quickstart", "resampled", "save_figure", "set_style", "sniper",
           "synthetic"]
