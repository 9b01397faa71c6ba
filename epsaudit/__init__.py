"""epsaudit: what an epsilon-like number about identity privacy in face-embedding space means.

Every audit returns an :class:`~epsaudit.results.EpsilonResult` that says whether its number is a
*diagnostic*, an *estimate* or a *certificate* (*Picture the Epsilon*, Table 1), with the route's
secondary statistics as named fields (a :class:`~epsaudit.results.RouteStatistics`).

The auditing core knows no chapter and never imports the builder: :mod:`epsaudit.results` (the result type,
route statistics, tables); :mod:`epsaudit.bounds` (closed forms over counts: Clopper-Pearson, the exact joint and
the anytime-valid certificates, ROC/TV/MMD/trade-off -> epsilon, the analytic Gaussian mechanism, sample-size
planners); :mod:`epsaudit.audits` (the routes, the certificates, the learned tests, membership metrics and one pair
runner, :func:`epsaudit.audits.runner.map_pairs`); :mod:`epsaudit.mechanisms` and :mod:`epsaudit.sniper`
(mechanisms with an exactly known epsilon; DP-Sniper); :mod:`epsaudit.protocol` and :mod:`epsaudit.validation`
(the one seed scheme, development/test splits, the shuffled pair order; input checks, freshness of test rows).

Around it: :mod:`epsaudit.condition` and :mod:`epsaudit.cli` (the audit of one embedding table and its settings;
the ``epsaudit`` command); :mod:`epsaudit.data` (embedding tables, SHA-256 manifests, the face-swap corpora);
:mod:`epsaudit.operator` (the affine operator model of a face swapper); :mod:`epsaudit.parallel` (local cores, a
Dask cluster, progress bars); :mod:`epsaudit.build` (photographs to embeddings; optional heavy dependencies) and
:mod:`epsaudit.studies` (one module per book page).

``import epsaudit`` loads nothing but this module and :mod:`epsaudit.results` (no numpy, pandas, SciPy or
scikit-learn); each submodule loads what it needs when it is imported.

Examples
--------
>>> import epsaudit
>>> epsaudit.EpsilonResult(0.3, "estimate", "mmd_tv", (30, 30)).kind
'estimate'
"""

from .results import EpsilonResult, RouteStatistics, results_frame

__version__ = "0.2.0"
__all__ = ["EpsilonResult", "RouteStatistics", "results_frame", "__version__"]
