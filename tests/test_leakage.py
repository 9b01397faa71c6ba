"""Membership-inference metrics against brute-force counts and a hand-made gallery."""

import numpy as np
import pytest

from epsaudit.audits.membership import _gallery_scores, _tpr_at_fpr, cmc, membership_metrics


def brute_force_tpr(pos, neg, max_fpr):
    best = 0.0
    for t in np.r_[np.unique(np.r_[pos, neg]), -np.inf]:
        if np.mean(neg > t) <= max_fpr:
            best = max(best, np.mean(pos > t))
    return best


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("max_fpr", [0.0, 0.001, 0.01, 0.1])
def test_tpr_at_fpr_matches_brute_force(seed, max_fpr):
    rng = np.random.default_rng(seed)
    pos = np.round(rng.normal(1.0, 1.0, 300), 2)  # rounding creates ties
    neg = np.round(rng.normal(0.0, 1.0, 1500), 2)
    assert _tpr_at_fpr(pos, neg, max_fpr) == pytest.approx(brute_force_tpr(pos, neg, max_fpr))


def test_membership_metrics_values():
    pos, neg = np.array([0.9, 0.8, 0.3]), np.array([0.5, 0.2, 0.1, 0.0])
    m = membership_metrics(pos, neg)
    assert m["auc"] == pytest.approx(11 / 12)
    assert m["tpr_at_fpr_1pct"] == pytest.approx(2 / 3)  # threshold = max negative 0.5
    assert m["max_balanced_accuracy"] == pytest.approx((1.0 + 0.75) / 2)  # t in [0.2, 0.3)
    with pytest.raises(ValueError, match="max_fpr"):
        _tpr_at_fpr(pos, neg, 1.0)
    with pytest.raises(ValueError, match="empty"):
        membership_metrics([], neg)


def test_gallery_scores_median_and_max():
    probes = np.array([[1.0, 0.0], [0.0, 2.0]])
    gallery = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    c = np.sqrt(0.5)
    assert _gallery_scores(probes, gallery, "median") == pytest.approx([c, c])
    assert _gallery_scores(probes, gallery, "max") == pytest.approx([1.0, 1.0])
    with pytest.raises(ValueError, match="dimension"):
        _gallery_scores(probes, np.ones((2, 3)))
    with pytest.raises(ValueError, match="aggregate"):
        _gallery_scores(probes, gallery, "mean")


def test_cmc_on_hand_made_gallery():
    scores = np.array([
        [0.9, 0.1, 0.2],  # true 0: rank 1
        [0.5, 0.4, 0.6],  # true 1: rank 3
        [0.3, 0.3, 0.1],  # true 1: tie with candidate 0 -> rank 2 (pessimistic)
        [0.2, 0.8, 0.7],  # true 2: rank 2
    ])
    curve = cmc(scores, [0, 1, 1, 2], max_rank=5)
    assert curve.tolist() == [0.25, 0.75, 1.0]
    with pytest.raises(ValueError, match="true_index"):
        cmc(scores, [0, 1, 3, 2])
