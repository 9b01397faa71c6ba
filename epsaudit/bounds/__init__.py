"""Closed-form bounds, pure functions over counts, rates and distances (vectorised with numpy).

- :mod:`~epsaudit.bounds.binomial` -- Clopper-Pearson bounds, the reserved-test certificate from test counts
  (``bound="joint"``, the default, or the paper's ``"clopper-pearson"``), its cap, the Bonferroni level and the
  sample-size planner;
- :mod:`~epsaudit.bounds.joint` -- the exact joint certificate against the (epsilon, delta)-DP or mu-GDP null region;
- :mod:`~epsaudit.bounds.conversions` -- total variation, MMD and trade-off curves (f-DP, Gaussian DP) to epsilon;
- :mod:`~epsaudit.bounds.gaussian` -- the analytic Gaussian mechanism (Balle & Wang 2018);
- :mod:`~epsaudit.bounds.sequential` -- the anytime-valid certificate: an e-process over test rows as they arrive.

Definitions: the book's methods chapter; *Picture the Epsilon*, Sections III-IV.
"""

from .binomial import (BOUNDS, DEFAULT_BOUND, bonferroni_alpha, bound_level, certifiable_cap, certified_epsilon,
                       check_bound, clopper_pearson_epsilon, correction_label, clopper_pearson_lower, clopper_pearson_upper,
                       planned_epsilon, promise_sizes, required_test_size, roc_point_epsilon)
from .conversions import (dkw_margin, epsilon_from_mmd_hockey_stick, epsilon_from_mmd_tv_chain, epsilon_from_tv_delta,
                          gaussian_tradeoff, mmd2_deviation, tradeoff_delta, tradeoff_epsilon, tradeoff_mu,
                          tv_lower_from_mmd)
from .gaussian import gaussian_epsilon, gaussian_mu_for_epsilon
from .joint import joint_epsilon, joint_mu, joint_pvalue, joint_rejection_region

__all__ = [
    "BOUNDS", "DEFAULT_BOUND", "bonferroni_alpha", "bound_level", "certifiable_cap", "certified_epsilon", "check_bound",
    "clopper_pearson_epsilon", "clopper_pearson_lower", "correction_label", "clopper_pearson_upper", "joint_epsilon", "joint_mu",
    "joint_pvalue", "joint_rejection_region", "dkw_margin", "epsilon_from_mmd_hockey_stick", "epsilon_from_mmd_tv_chain",
    "epsilon_from_tv_delta", "gaussian_epsilon", "gaussian_mu_for_epsilon", "gaussian_tradeoff",
    "mmd2_deviation", "planned_epsilon", "promise_sizes", "roc_point_epsilon", "required_test_size", "tradeoff_delta", "tradeoff_epsilon",
    "tradeoff_mu", "tv_lower_from_mmd",
]
from .sequential import (STOP_REASONS, SEQUENTIAL_BOUND, SequentialCertificate, SequentialFamily, SequentialPrior,
                         SequentialStatistics, fixed_size_power, planned_prior, sequential_epsilon, sequential_evalue,
                         sequential_prior, sequential_stopping_rows, worst_pair_sequential, zero_error_sequential_epsilon,
                         zero_error_stopping_row)

__all__ += ["SEQUENTIAL_BOUND", "STOP_REASONS", "SequentialCertificate", "SequentialFamily", "SequentialPrior", "SequentialStatistics", "sequential_epsilon", "sequential_evalue", "sequential_prior", "worst_pair_sequential", "zero_error_sequential_epsilon", "fixed_size_power", "planned_prior", "sequential_stopping_rows", "zero_error_stopping_row"]
