"""K-ary randomized response: the second mechanism of the DP-Sniper comparison (*Picture the Epsilon*, Table 5)."""

from __future__ import annotations

import math
import numbers
from typing import Callable

import numpy as np

from ..protocol import generator
from .base import Mechanism, check_int


class RandomizedResponse(Mechanism):
    """K-ary randomized response: identity ``i`` reports category ``i`` or, rarely, another one.

    Identity ``i`` releases category ``i`` with probability ``p_true = e^eps / (e^eps + K - 1)`` and each other
    category with ``p_other = 1 / (e^eps + K - 1)``: likelihood ratios ``e^eps``, ``e^-eps`` or 1, so every pair
    is pure epsilon-DP with exactly ``epsilon`` (Warner 1965; Kairouz, Oh & Viswanath 2016); ``epsilon = 0`` is
    the exact null. :meth:`sample` returns **one-hot rows** in ``R^K`` (so a linear classifier gives each
    category its own weight), :meth:`sample_codes` the same draws as codes ``0 .. K-1``. ``prototypes`` are
    the mean one-hot outputs ``p_other + (p_true - p_other) I``; sampling is not prototype plus noise.

    Parameters
    ----------
    n_categories : int, >= 2
        ``K``, the number of categories (= identities). The DP-Sniper comparison uses ``K = 16``.
    epsilon : float, >= 0
        Exact pairwise epsilon (natural-log units).

    Raises
    ------
    ValueError
        If ``n_categories < 2`` or ``epsilon`` is negative or not finite.

    Examples
    --------
    >>> rr = RandomizedResponse(4, 1.0)
    >>> round(rr.p_true, 6), round(rr.p_other, 6), rr.exact_epsilon(0, 1), rr.sample(2, 3, seed=0).shape  # one-hot
    (0.475367, 0.174878, 1.0, (3, 4))
    """

    name = "randomized_response"

    def __init__(self, n_categories: int, epsilon: float) -> None:
        k = check_int(n_categories, "n_categories", minimum=2)
        if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or not np.isfinite(epsilon) or epsilon < 0:
            raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
        eps = float(epsilon)
        # p_other = 1 / (e^eps + K - 1) computed as e^-eps / (1 + (K - 1) e^-eps): no overflow at large eps
        p_other = float(np.exp(-eps) / (1.0 + (k - 1) * np.exp(-eps)))
        p_true = float(1.0 / (1.0 + (k - 1) * np.exp(-eps)))
        super().__init__(np.full((k, k), p_other) + (p_true - p_other) * np.eye(k), delta=0.0)
        self.epsilon = eps
        self.n_categories = k
        self.p_true = p_true
        self.p_other = p_other
        self.requested_epsilon = eps
        self.worst_pair = (0, 1) if eps > 0 else None

    def _scale_repr(self) -> str:
        return f"epsilon={self.epsilon:g}, p_true={self.p_true:.6g}"

    def _collision_probability(self) -> float:
        return float(np.sum(self.prototypes[0] ** 2))  # one of K categories: equal rows are the rule

    @property
    def _sampled_epsilon(self) -> float:
        """Exact epsilon of the float64 sampler (nats): ``log(P (K - 1) / (1 - P))``, ``P = ceil(p_true 2**53) 2**-53``
        (for ``K = 16``: ``epsilon`` to 1e-14 for ``epsilon <= 8``, 31.99943 at ``epsilon = 32``)."""
        if self.epsilon == 0:
            return 0.0
        keep = math.ceil(self.p_true * 2.0**53)  # exact: scaling by a power of two
        other = 2**53 - keep
        return math.log(keep * (self.n_categories - 1) / other)

    def _output_probabilities(self, identity: int) -> np.ndarray:
        """Probability of each category under ``identity``, shape ``(K,)``."""
        return self.prototypes[self._check_identity(identity, "identity")].copy()

    def sample_codes(self, identity: int, n: int, seed=0) -> np.ndarray:
        """Draw ``n`` reports of one identity as int64 category codes, shape ``(n,)`` (``identity`` if ``U < p_true``,
        else uniform over the other ``K - 1``); ``ValueError`` if ``identity``, ``n`` (>= 1) or ``seed`` is invalid.

        Examples
        --------
        >>> codes = RandomizedResponse(4, 1.0).sample_codes(0, 5, seed=0)
        >>> codes.shape, bool(((0 <= codes) & (codes < 4)).all())
        ((5,), True)
        """
        i = self._check_identity(identity, "identity")
        n = check_int(n, "n", minimum=1)
        rng = generator(seed, "mechanism-draws", i)
        keep = rng.random(n) < self.p_true
        other = rng.integers(0, self.n_categories - 1, size=n)
        other += other >= i  # skip the true category
        return np.where(keep, i, other)

    def encode(self, codes) -> np.ndarray:
        """One-hot rows for category codes, ``(n,) -> (n, K)`` float64; ``ValueError`` unless codes lie in ``0 .. K-1``.

        Examples
        --------
        >>> RandomizedResponse(4, 1.0).encode([2, 0])
        array([[0., 0., 1., 0.],
               [1., 0., 0., 0.]])
        """
        c = np.asarray(codes)
        if c.ndim != 1 or not np.issubdtype(c.dtype, np.integer) or (c.size and (c.min() < 0 or c.max() >= self.n_categories)):
            raise ValueError(f"codes must be a 1-D integer array with values in 0 .. {self.n_categories - 1}")
        out = np.zeros((c.shape[0], self.n_categories))
        out[np.arange(c.shape[0]), c] = 1.0
        return out

    def sample(self, identity: int, n: int, seed=0) -> np.ndarray:
        """``n`` reports as one-hot rows ``(n, K)``: ``encode(sample_codes(i, n, s))`` (errors as :meth:`sample_codes`).

        Examples
        --------
        >>> rr = RandomizedResponse(4, 1.0)
        >>> bool((rr.sample(1, 6, seed=3) == rr.encode(rr.sample_codes(1, 6, seed=3))).all())
        True
        """
        return self.encode(self.sample_codes(identity, n, seed))

    def _noise(self, rng, n):  # pragma: no cover - randomized response is not additive
        raise NotImplementedError("RandomizedResponse is not prototype-plus-noise; use sample()")

    def _separation_pairs(self, a, b):
        return np.where(np.asarray(a) != np.asarray(b), self.epsilon, 0.0)

    def _epsilon_from_separation(self, sep):
        return np.asarray(sep, dtype=np.float64)

    def exact_score(self, a: int, b: int) -> Callable[[np.ndarray], np.ndarray]:
        """Exact log-likelihood ratio on one-hot rows: a callable ``(n, K) -> eps * (x[:, a] - x[:, b])``.

        Examples
        --------
        >>> rr = RandomizedResponse(4, 1.0)
        >>> rr.exact_score(0, 1)(rr.encode([0, 1, 2]))
        array([ 1., -1.,  0.])
        """
        a, b = self._check_identity(a, "a"), self._check_identity(b, "b")
        eps = self.epsilon if a != b else 0.0

        def score(x):
            xk = self._check_points(x)
            return eps * (xk[:, a] - xk[:, b])

        return score

    def optimal_auc(self, a: int, b: int, n_mc: int = 20000, seed=0) -> float:
        """Population AUC of the exact likelihood-ratio test, ``P(S_a > S_b) + P(S_a = S_b) / 2`` in closed form
        (``n_mc`` and ``seed`` are ignored).

        Examples
        --------
        >>> round(RandomizedResponse(4, 1.0).optimal_auc(0, 1), 4)
        0.7028
        """
        a, b = self._check_identity(a, "a"), self._check_identity(b, "b")
        if a == b or self.epsilon == 0:
            return 0.5
        pt, po, k = self.p_true, self.p_other, self.n_categories
        # score levels +eps / 0 / -eps: probabilities under a and under b
        pa = np.array([pt, (k - 2) * po, po])
        pb = np.array([po, (k - 2) * po, pt])
        greater = pa[0] * (pb[1] + pb[2]) + pa[1] * pb[2]
        equal = float(pa @ pb)
        return float(greater + equal / 2)

