"""epsaudit: what an epsilon-like number about identity privacy in face-embedding space means.

Every audit returns an :class:`~epsaudit.results.EpsilonResult` that says whether its number is a
*diagnostic*, an *estimate* or a *certificate* (*Picture the Epsilon*, Table 1), with the route's
secondary statistics as named fields (a :class:`~epsaudit.results.RouteStatistics`).

The auditing core knows no chapter and never imports the builder:

- :mod:`epsaudit.results` -- the result type, route statistics and tables;
- :mod:`epsaudit.bounds` -- closed forms over counts: Clopper-Pearson, the exact joint certificate,
  the anytime-valid (sequential) certificate, ROC/TV/MMD/trade-off -> epsilon, the analytic
  Gaussian mechanism, the sample-size planners;
- :mod:`epsaudit.audits` -- the routes (GaussMech, KDE-LR, MMD-TV, ROC-HT out-of-fold and reserved
  test), the certificates (reserved test, worst pair, trade-off, MMD, sampler audits), the learned
  tests, membership metrics, and one pair runner (:func:`epsaudit.audits.runner.map_pairs`);
- :mod:`epsaudit.mechanisms`, :mod:`epsaudit.sniper` -- mechanisms with an exactly known epsilon;
  DP-Sniper;
- :mod:`epsaudit.protocol`, :mod:`epsaudit.validation` -- the one seed scheme, development/test
  splits and the shuffled pair order; input checks and the freshness of test rows.

Around it:

- :mod:`epsaudit.condition`, :mod:`epsaudit.cli` -- the audit of one embedding table (what
  ``epsaudit audit`` runs) and its settings; the ``epsaudit`` command;
- :mod:`epsaudit.data` -- file formats and loaders: embedding tables, SHA-256 manifests, the
  face-swap corpora;
- :mod:`epsaudit.operator` -- the affine operator model of a face swapper (ridge fit, spectra,
  stationary law);
- :mod:`epsaudit.parallel` -- where work runs (local cores, a Dask cluster) and progress bars;
- :mod:`epsaudit.build` -- the data builder, photographs to embeddings (optional heavy
  dependencies, loaded on use);
- :mod:`epsaudit.studies` -- one module per book page (its profiles, plumbing and figures).

``import epsaudit`` loads nothing but this module and :mod:`epsaudit.results` (no numpy, pandas,
SciPy or scikit-learn); each submodule loads what it needs when it is imported.

Examples
--------
>>> import epsaudit
>>> epsaudit.EpsilonResult(0.3, "estimate", "mmd_tv", (30, 30)).kind
'estimate'
"""

from .results import EpsilonResult, RouteStatistics, results_frame

__version__ = "0.2.0"
__all__ = ["EpsilonResult", "RouteStatistics", "results_frame", "__version__"]
