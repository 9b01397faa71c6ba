"""epsaudit: what an epsilon-like number about identity privacy in face-embedding space means.

Every audit returns an :class:`~epsaudit.results.EpsilonResult` that says whether its number is a
*diagnostic*, an *estimate* or a *certificate* (SPEC section 1). Submodules:

- :mod:`epsaudit.results` -- the result type and tables;
- :mod:`epsaudit.bounds` -- Clopper-Pearson, ROC/TV/MMD -> epsilon, the analytic Gaussian mechanism;
- :mod:`epsaudit.audits` -- GaussMech, KDE-LR, MMD-TV, ROC-HT (out-of-fold and reserved test);
- :mod:`epsaudit.mechanisms` -- synthetic mechanisms with exactly known epsilon;
- :mod:`epsaudit.pairs` -- the identity-pair protocol;
- :mod:`epsaudit.scorers` -- default and shrinkage classifiers;
- :mod:`epsaudit.benchmark` -- the synthetic known-epsilon benchmark runner;
- :mod:`epsaudit.sniper` -- DP-Sniper for a fixed input pair;
- :mod:`epsaudit.data` -- embedding tables (CSV loader, row filter, manifests);
- :mod:`epsaudit.condition` -- the audit of one embedding table on the paper's pair protocol;
- :mod:`epsaudit.cli` -- the ``epsaudit`` command;
- :mod:`epsaudit.leakage` -- membership-inference metrics (AUC, TPR at low FPR, CMC);
- :mod:`epsaudit.operator` -- the affine stochastic operator of a face swapper and its cascade;
- :mod:`epsaudit.faces` -- photographs: encoders and generators (optional heavy dependencies);
- :mod:`epsaudit.face_study` -- the face case study: shared audit settings, Table 2/3 rows, swap membership inference;
- :mod:`epsaudit.paper_values`, :mod:`epsaudit.plotting` -- the papers' numbers; figure style.
"""

from .results import EpsilonResult, results_frame

__version__ = "0.2.0"
__all__ = ["EpsilonResult", "results_frame", "__version__"]
