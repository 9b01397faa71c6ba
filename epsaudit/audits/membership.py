"""Membership-inference view of identity leakage (*Toward Interpretable Privacy Guarantees in Face-Swapping
Anonymization*, Sections III-V): ROC AUC, TPR at FPR <= 1% and <= 0.1%, closed-set CMC rank-k rates.
Definitions: the book's methods chapter, section "Membership inference and the affine operator".
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from sklearn.metrics import roc_auc_score

from ..validation import as_sample

Aggregate = Literal["median", "max"]


def _unit_rows(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    if np.any(norms <= 1e-12):
        raise ValueError("an embedding has (near) zero norm; cosine similarity is undefined")
    return x / norms


def _gallery_scores(probes, gallery, aggregate: Aggregate = "median") -> np.ndarray:
    """Cosine similarity of each probe ``(m, d)`` to a gallery ``(g, d)``, aggregated over the gallery by the
    median or the max: shape ``(m,)``, in [-1, 1]."""
    p = _unit_rows(as_sample(probes, "probes", min_rows=1))
    g = _unit_rows(as_sample(gallery, "gallery", min_rows=1))
    if p.shape[1] != g.shape[1]:
        raise ValueError(f"probes have dimension {p.shape[1]} but the gallery has {g.shape[1]}")
    sims = p @ g.T
    if aggregate == "median":
        return np.median(sims, axis=1)
    if aggregate == "max":
        return sims.max(axis=1)
    raise ValueError(f"aggregate must be 'median' or 'max', got {aggregate!r}")


def _tpr_at_fpr(positive, negative, max_fpr: float) -> float:
    """TPR of "score > t" with ``t`` the ``(k + 1)``-th largest negative, ``k = floor(max_fpr * n_neg)``, so that
    FPR <= ``max_fpr`` (ties at ``t`` count as rejections)."""
    pos, neg = _scores(positive, "positive"), _scores(negative, "negative")
    if not 0.0 <= max_fpr < 1.0:
        raise ValueError(f"max_fpr must be in [0, 1), got {max_fpr}")
    k = int(np.floor(max_fpr * len(neg) + 1e-9))
    threshold = np.sort(neg)[::-1][k]
    return float(np.mean(pos > threshold))


def _scores(x, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64).ravel()
    if arr.size == 0:
        raise ValueError(f"{name} scores are empty")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} scores hold NaN or inf")
    return arr


def membership_metrics(positive, negative) -> dict[str, float]:
    """AUC, TPR at FPR <= 1% and <= 0.1%, and the best balanced accuracy of a threshold test.

    Parameters
    ----------
    positive, negative : array_like
        Member (target) and non-member scores.

    Returns
    -------
    dict
        ``auc``, ``tpr_at_fpr_1pct``, ``tpr_at_fpr_0.1pct``, ``max_balanced_accuracy``, ``n_positive``, ``n_negative``.

    Raises
    ------
    ValueError
        Empty inputs or NaN/inf scores.

    See Also
    --------
    cmc : closed-set identification rates by rank.

    Examples
    --------
    >>> m = membership_metrics([0.9, 0.8, 0.7], [0.1, 0.75, 0.2])
    >>> round(m["auc"], 4), round(m["max_balanced_accuracy"], 4), m["n_positive"]
    (0.8889, 0.8333, 3)
    """
    pos, neg = _scores(positive, "positive"), _scores(negative, "negative")
    y = np.r_[np.ones(len(pos)), np.zeros(len(neg))]
    s = np.r_[pos, neg]
    thresholds = np.unique(s)
    tpr = (pos[None, :] > thresholds[:, None]).mean(axis=1) if len(thresholds) < 20000 else None
    if tpr is None:  # large inputs: sort-based counts
        tpr = 1.0 - np.searchsorted(np.sort(pos), thresholds, side="right") / len(pos)
    fpr = 1.0 - np.searchsorted(np.sort(neg), thresholds, side="right") / len(neg)
    balanced = np.max(np.r_[0.5, (tpr + 1.0 - fpr) / 2.0])
    return {
        "auc": float(roc_auc_score(y, s)),
        "tpr_at_fpr_1pct": _tpr_at_fpr(pos, neg, 0.01),
        "tpr_at_fpr_0.1pct": _tpr_at_fpr(pos, neg, 0.001),
        "max_balanced_accuracy": float(balanced),
        "n_positive": int(len(pos)),
        "n_negative": int(len(neg)),
    }


def cmc(scores, true_index, max_rank: int = 10) -> np.ndarray:
    """Closed-set cumulative match characteristic: rate at which the true identity ranks <= k (ties counted
    against the probe: rank = 1 + the *other* candidates scoring at least as high).

    Parameters
    ----------
    scores : array_like, shape (m, C)
        Score of each probe against each of C candidate galleries.
    true_index : array_like of int, shape (m,)
        Column of the true candidate per probe.
    max_rank : int, default=10

    Returns
    -------
    ndarray, shape (min(max_rank, C),)
        ``out[k - 1]`` = fraction of probes whose true candidate has rank <= k.

    Raises
    ------
    ValueError
        Shape mismatch, an index out of range, NaN scores.

    See Also
    --------
    membership_metrics : metrics of a membership threshold test.

    Examples
    --------
    >>> cmc([[0.9, 0.1, 0.2], [0.3, 0.8, 0.5]], [0, 2], max_rank=3)
    array([0.5, 1. , 1. ])
    """
    s = np.asarray(scores, dtype=np.float64)
    idx = np.asarray(true_index)
    if s.ndim != 2 or s.shape[0] != idx.shape[0]:
        raise ValueError(f"scores must be (m, C) with m = len(true_index); got {s.shape} and {idx.shape}")
    if not np.all(np.isfinite(s)):
        raise ValueError("scores hold NaN or inf")
    if idx.size and (idx.min() < 0 or idx.max() >= s.shape[1]):
        raise ValueError(f"true_index must lie in [0, {s.shape[1]})")
    true_scores = s[np.arange(len(idx)), idx]
    ranks = (s >= true_scores[:, None]).sum(axis=1)  # includes the true candidate itself
    k = np.arange(1, min(max_rank, s.shape[1]) + 1)
    return (ranks[:, None] <= k[None, :]).mean(axis=0)
