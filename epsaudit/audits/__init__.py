"""The four audit routes, one module each, plus a runner over the paper's pair protocol.

=================  ===============================  ============
route              function (one pair / many pairs)  kind
=================  ===============================  ============
GaussMech          gaussmech_epsilon / _pairs        diagnostic
KDE-LR             kde_lr_epsilon / _pairs           diagnostic
MMD-TV             mmd_tv_epsilon / _pairs           estimate
ROC-HT OOF         roc_oof_epsilon / _pairs          estimate
ROC-HT reserved    reserved_test_certificate / _pairs certificate
=================  ===============================  ============
"""

from .batch import audit_pairs
from .gaussmech import gaussmech_epsilon, gaussmech_pairs
from .kde_lr import kde_lr_coordinates, kde_lr_epsilon, kde_lr_pairs
from .mmd_tv import mmd_statistics, mmd_tv_epsilon, mmd_tv_pairs
from .roc_oof import out_of_fold_scores, roc_oof_epsilon, roc_oof_pairs, roc_summary
from .roc_reserved import choose_threshold, reserved_test_certificate, reserved_test_pairs, split_dev_test

__all__ = [
    "audit_pairs",
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
