"""epsaudit: what an epsilon-like number about identity privacy in face-embedding space means.

Every audit returns an :class:`~epsaudit.results.EpsilonResult` that says whether its number is a
*diagnostic*, an *estimate* or a *certificate* (*Picture the Epsilon*, Table 1), with the route's
secondary statistics as named fields (a :class:`~epsaudit.results.RouteStatistics`).

The core knows no chapter:

- :mod:`epsaudit.results` -- the result type, route statistics and tables;
- :mod:`epsaudit.bounds` -- Clopper-Pearson, ROC/TV/MMD/trade-off -> epsilon, the analytic Gaussian
  mechanism, the sample-size planner;
- :mod:`epsaudit.audits` -- the routes (GaussMech, KDE-LR, MMD-TV, ROC-HT out-of-fold and reserved
  test, trade-off and MMD certificates) and their one runner (:func:`epsaudit.audits.runner.map_pairs`);
- :mod:`epsaudit.validation`, :mod:`epsaudit.seeds`, :mod:`epsaudit.splits`, :mod:`epsaudit.pairs`,
  :mod:`epsaudit.scorers`, :mod:`epsaudit.grids` -- input checks, the one seed scheme
  (``seeds.stream(*key)``), development/test splits, the pair protocol, classifiers, grid searches;
- :mod:`epsaudit.settings`, :mod:`epsaudit.condition` -- the audit of one embedding table
  (:func:`~epsaudit.condition.audit_condition`) and its settings;
- :mod:`epsaudit.data` -- embedding tables (CSV loader, row filter, writer, manifests);
- :mod:`epsaudit.leakage` -- membership-inference metrics (AUC, TPR at low FPR, CMC);
- :mod:`epsaudit.mechanisms`, :mod:`epsaudit.sniper`, :mod:`epsaudit.operator` -- mechanisms with a
  known epsilon, DP-Sniper, the affine operator model of a face swapper;
- :mod:`epsaudit.build` -- the data builder, photographs to embeddings: LFW, encoders, generators,
  the condition pipeline, the corpora builders (optional heavy dependencies, loaded on use; the
  auditing core never imports it);
- :mod:`epsaudit.plotting`, :mod:`epsaudit.cli` -- figures; the ``epsaudit`` command.

One study module per chapter lives in :mod:`epsaudit.studies`.

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
