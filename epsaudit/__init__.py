"""epsaudit: what an epsilon-like number about identity privacy in face-embedding space means.

Every audit returns an :class:`~epsaudit.results.EpsilonResult` that says whether its number is a
*diagnostic*, an *estimate* or a *certificate* (SPEC section 1). Submodules:

- :mod:`epsaudit.results` -- the result type and tables;
- :mod:`epsaudit.bounds` -- Clopper-Pearson, ROC/TV/MMD -> epsilon, the analytic Gaussian mechanism;
- :mod:`epsaudit.audits` -- GaussMech, KDE-LR, MMD-TV, ROC-HT (out-of-fold and reserved test);
- :mod:`epsaudit.mechanisms` -- synthetic mechanisms with exactly known epsilon;
- :mod:`epsaudit.pairs` -- the identity-pair protocol;
- :mod:`epsaudit.scorers` -- default and shrinkage classifiers.
"""

from .results import EpsilonResult, results_frame

__version__ = "0.1.0"
__all__ = ["EpsilonResult", "results_frame", "__version__"]
