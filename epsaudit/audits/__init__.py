"""The audit routes, one module each, plus one runner over the pair protocol.

=================  ==================================  ============  ============================
route              function (one pair / many pairs)    kind          statistics
=================  ==================================  ============  ============================
GaussMech          gaussmech_epsilon / _pairs           diagnostic    GaussMechStatistics
KDE-LR             kde_lr_epsilon / _pairs              diagnostic    KDEStatistics
MMD-TV             mmd_tv_epsilon / _pairs              estimate      MMDStatistics
ROC-HT OOF         roc_oof_epsilon / _pairs             estimate      RocStatistics
ROC-HT reserved    reserved_test_certificate / _pairs   certificate   CertificateStatistics
Trade-off (f-DP)   tradeoff_certificate / _pairs        certificate   TradeoffStatistics
MMD certificate    mmd_certificate / _pairs             certificate   MMDCertificateStatistics
Worst pair         worst_pair_certificate               certificate   WorstPairStatistics
Sequential         certify_sampler                      certificate   SequentialStatistics
=================  ==================================  ============  ============================

Definitions: *Picture the Epsilon*, Sections III-IV. Every many-pairs function runs its pairs through
:func:`runner.map_pairs`: a pair a route cannot compute is recorded as *not computed* with the reason. Secondary
statistics are a frozen dataclass (last column) in ``EpsilonResult.statistics``, flattened to table columns by
:func:`epsaudit.results.results_frame`.
"""

from ..protocol import split_dev_test
from .batch import audit_pairs
from .gaussmech import GaussMechStatistics, gaussmech_epsilon, gaussmech_pairs
from .kde_lr import KDEStatistics, kde_lr_epsilon, kde_lr_pairs
from .membership import cmc, membership_metrics
from .mmd import (MMDCertificate, MMDCertificateStatistics, MMDStatistics, mmd_certificate, mmd_certificate_pairs,
                  mmd_tv_epsilon, mmd_tv_pairs)
from .roc_oof import RocStatistics, roc_oof_epsilon, roc_oof_pairs
from .roc_reserved import (CertificateStatistics, certificate_with_bound, choose_threshold, reserved_test_certificate,
                           reserved_test_pairs)
from .scorers import logistic_regression, paper_logistic_regression, shrinkage_lda
from .sampler_audit import FittedTest, MechanismSampler, certify_sampler, fit_sequential_test
from .tradeoff import (TradeoffCertificate, TradeoffStatistics, curves_frame, development_thresholds, epsilon_curve,
                       mu_lower_bound, tradeoff_band, tradeoff_certificate, tradeoff_certificate_pairs)
from .worst_pair import (WorstPairCertificate, WorstPairStatistics, certify_top_pairs, ranked_pairs, select_pairs,
                         worst_pair_certificate)

__all__ = [
    "CertificateStatistics", "FittedTest", "GaussMechStatistics", "KDEStatistics", "MMDCertificate",
    "MMDCertificateStatistics", "MMDStatistics", "MechanismSampler", "RocStatistics", "TradeoffCertificate",
    "TradeoffStatistics", "WorstPairCertificate", "WorstPairStatistics", "audit_pairs", "certificate_with_bound",
    "certify_sampler", "certify_top_pairs", "choose_threshold", "cmc", "curves_frame", "development_thresholds",
    "epsilon_curve", "fit_sequential_test", "gaussmech_epsilon", "gaussmech_pairs", "kde_lr_epsilon",
    "kde_lr_pairs", "logistic_regression", "membership_metrics", "mmd_certificate", "mmd_certificate_pairs",
    "mmd_tv_epsilon", "mmd_tv_pairs", "mu_lower_bound", "paper_logistic_regression", "ranked_pairs",
    "reserved_test_certificate", "reserved_test_pairs", "roc_oof_epsilon", "roc_oof_pairs", "select_pairs",
    "shrinkage_lda", "split_dev_test", "tradeoff_band", "tradeoff_certificate", "tradeoff_certificate_pairs",
    "worst_pair_certificate",
]
