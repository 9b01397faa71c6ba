"""The four audit routes, one module each, plus a runner over the paper's pair protocol.

=================  ===============================  ============
route              function (one pair / many pairs)  kind
=================  ===============================  ============
GaussMech          gaussmech_epsilon / _pairs        diagnostic
KDE-LR             kde_lr_epsilon / _pairs           diagnostic
MMD-TV             mmd_tv_epsilon / _pairs           estimate
ROC-HT OOF         roc_oof_epsilon / _pairs          estimate
ROC-HT reserved    reserved_test_certificate / _pairs certificate
Trade-off (f-DP)   tradeoff_certificate / _pairs     certificate
MMD certificate    mmd_certificate / _pairs          certificate
=================  ===============================  ============

Every many-pairs function runs its pairs through :func:`runner.map_pairs`: a pair a route cannot
compute is recorded as *not computed* with the reason, and the other pairs go on.
"""

from .batch import audit_pairs
from .gaussmech import gaussmech_epsilon, gaussmech_pairs
from .kde_lr import kde_lr_coordinates, kde_lr_epsilon, kde_lr_pairs
from .mmd_tv import mmd_statistics, mmd_tv_epsilon, mmd_tv_pairs
from .roc_oof import out_of_fold_scores, roc_oof_epsilon, roc_oof_pairs, roc_summary
from .mmd_certificate import (MMDCertificate, development_bandwidth, mmd_certificate, mmd_certificate_pairs,
                              mmd_lower_bound, rbf_mmd2_unbiased)
from ..splits import split_dev_test
from .roc_reserved import choose_threshold, reserved_test_certificate, reserved_test_pairs
from .tradeoff import (TradeoffCertificate, curves_frame, development_thresholds, epsilon_curve, mu_lower_bound,
                       tradeoff_band, tradeoff_certificate, tradeoff_certificate_pairs)

__all__ = [
    "MMDCertificate",
    "TradeoffCertificate",
    "audit_pairs",
    "curves_frame",
    "development_bandwidth",
    "development_thresholds",
    "epsilon_curve",
    "mmd_certificate",
    "mmd_certificate_pairs",
    "mmd_lower_bound",
    "mu_lower_bound",
    "rbf_mmd2_unbiased",
    "tradeoff_band",
    "tradeoff_certificate",
    "tradeoff_certificate_pairs",
    "choose_threshold",
    "gaussmech_epsilon",
    "gaussmech_pairs",
    "kde_lr_coordinates",
    "kde_lr_epsilon",
    "kde_lr_pairs",
    "mmd_statistics",
    "mmd_tv_epsilon",
    "mmd_tv_pairs",
    "out_of_fold_scores",
    "reserved_test_certificate",
    "reserved_test_pairs",
    "roc_oof_epsilon",
    "roc_oof_pairs",
    "roc_summary",
    "split_dev_test",
]
