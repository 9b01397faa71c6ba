"""Closed-form bounds, pure functions over counts, rates and distances (vectorised with numpy).

- :mod:`~epsaudit.bounds.binomial` -- one-sided Clopper-Pearson bounds, the reserved-test
  certificate from test counts (Kairouz, Oh & Viswanath 2015), its cap, the Bonferroni level of a
  family, and the sample-size planner (the inverse of the cap);
- :mod:`~epsaudit.bounds.conversions` -- from total variation, MMD and trade-off curves (f-DP,
  Gaussian DP; Dong, Roth & Su 2022) to epsilon, the DKW margin and the MMD deviation bound;
- :mod:`~epsaudit.bounds.gaussian` -- the analytic Gaussian mechanism (Balle & Wang 2018).

Definitions: the book's methods chapter; *Picture the Epsilon*, Sections III-IV.
"""

from .binomial import (bonferroni_alpha, certifiable_cap, certified_epsilon, clopper_pearson_lower,
                       clopper_pearson_upper, planned_epsilon, roc_point_epsilon, required_test_size)
from .conversions import (dkw_margin, epsilon_from_mmd_hockey_stick, epsilon_from_mmd_tv_chain, epsilon_from_tv,
                          epsilon_from_tv_delta, gaussian_tradeoff, mmd2_deviation, tradeoff_delta, tradeoff_epsilon,
                          tradeoff_mu, tv_lower_from_mmd)
from .gaussian import gaussian_delta, gaussian_epsilon, gaussian_mu_for_epsilon

__all__ = [
    "bonferroni_alpha", "certifiable_cap", "certified_epsilon", "clopper_pearson_lower", "clopper_pearson_upper",
    "dkw_margin", "epsilon_from_mmd_hockey_stick", "epsilon_from_mmd_tv_chain", "epsilon_from_tv",
    "epsilon_from_tv_delta", "gaussian_delta", "gaussian_epsilon", "gaussian_mu_for_epsilon", "gaussian_tradeoff",
    "mmd2_deviation", "planned_epsilon", "roc_point_epsilon", "required_test_size", "tradeoff_delta", "tradeoff_epsilon",
    "tradeoff_mu", "tv_lower_from_mmd",
]
