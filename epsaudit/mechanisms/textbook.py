"""The textbook float64 Laplace mechanism (:class:`TextbookLaplace`, not epsilon-DP for any epsilon) and Mironov's
support attack on it (:func:`reachability_score`; Mironov 2012, "On significance of the least significant bits
for differential privacy", ACM CCS)."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .additive import ProductLaplace
from .base import check_positive


class TextbookLaplace(ProductLaplace):
    """The textbook float64 Laplace mechanism ``fl(mu + Laplace noise)`` with no output grid: *not* epsilon-DP.

    The same draws as :class:`ProductLaplace`, released unrounded. numpy's noise takes only the values
    ``+-b log(2 k 2**-53)``, so the doubles reachable from one mean are mostly unreachable from the other
    (likelihood ratio ``+inf``; Mironov 2012): with means 0.3 and 0 and ``b = 1``, 81% of either input's
    outputs. Kept for teaching (the synthetic-benchmark chapter) and as a control.

    Parameters
    ----------
    prototypes : array_like, shape (K, d)
    scale : float, > 0
        Laplace scale ``b``.

    Raises
    ------
    ValueError
        As :class:`ProductLaplace`.

    Examples
    --------
    >>> t = TextbookLaplace([[0.3], [0.0]], scale=1.0)
    >>> t.nominal_epsilon(0, 1), t.exact_epsilon(0, 1), t.grid
    (0.3, inf, None)
    """

    name = "textbook_laplace"

    def __init__(self, prototypes, scale: float) -> None:
        super().__init__(prototypes, scale)
        self.grid = None

    def nominal_epsilon(self, a: int, b: int) -> float:
        """``||mu_a - mu_b||_1 / b``, the epsilon claimed for the real-valued mechanism (``ValueError``: bad identity).

        Examples
        --------
        >>> TextbookLaplace([[0.3], [0.0]], scale=1.0).nominal_epsilon(0, 1)
        0.3
        """
        return float(ProductLaplace._epsilon_from_separation(self, self.separation(a, b)))

    def _epsilon_from_separation(self, sep):
        """Pure-DP epsilon of the float64 sampler: ``+inf`` for distinct means (Mironov 2012), else 0."""
        sep = np.asarray(sep, dtype=np.float64)
        return np.where(sep > 0, np.inf, 0.0)

    def exact_score(self, a: int, b: int) -> Callable[[np.ndarray], np.ndarray]:
        """The textbook log-likelihood ratio ``sum_j (|x_j - mu_bj| - |x_j - mu_aj|) / b``, computed naively (with the
        cancellation :meth:`ProductLaplace.exact_score` avoids); a callable ``(n, d) -> (n,)``.

        Examples
        --------
        >>> TextbookLaplace([[0.3], [0.0]], scale=1.0).exact_score(0, 1)(np.array([[5.0], [0.15]]))
        array([0.3, 0. ])
        """
        mu_a = self.prototypes[self._check_identity(a, "a")]
        mu_b = self.prototypes[self._check_identity(b, "b")]
        scale = self.scale

        def score(x):
            xk = self._check_points(x)
            return (np.abs(xk - mu_b).sum(axis=1) - np.abs(xk - mu_a).sum(axis=1)) / scale

        return score


def _laplace_noise_at(k, scale: float) -> np.ndarray:
    """numpy's ``Generator.laplace(0.0, scale)`` for the uniform ``U = k 2**-53``, bit for bit (same IEEE operations
    and C ``log`` via :func:`math.log`; the tests check it against ``Generator.laplace``)."""
    scale = check_positive(scale, "scale")
    k = np.asarray(k, dtype=np.int64)
    if k.size and (k.min() < 1 or k.max() >= 2**53):
        raise ValueError("k must hold lattice indices in [1, 2**53): numpy's uniform is k * 2**-53, k > 0")
    u = k.astype(np.float64) * 2.0**-53
    upper = u >= 0.5
    arg = np.where(upper, (2.0 - u) - u, u + u)
    log = np.fromiter(map(math.log, arg.ravel()), dtype=np.float64, count=arg.size).reshape(arg.shape)
    y = scale * log
    return np.where(upper, 0.0 - y, 0.0 + y)


def _reachable(x: np.ndarray, mu: np.ndarray, scale: float, grid, width: int = 3) -> np.ndarray:
    """Elementwise: is ``x`` ``snap(fl(mu + _laplace_noise_at(k, scale)))`` for some k? The lattice index nearest
    ``x - mu`` (inverse Laplace CDF) and its ``2 width + 1`` neighbours are replayed exactly."""
    v = x - mu
    with np.errstate(over="ignore", under="ignore"):
        k0 = np.where(v < 0, 2.0**52 * np.exp(v / scale), 2.0**53 - 2.0**52 * np.exp(-v / scale))
    k0 = np.clip(np.rint(k0), 1, 2**53 - 1).astype(np.int64)
    ks = np.clip(k0[..., None] + np.arange(-width, width + 1), 1, 2**53 - 1)
    out = mu[..., None] + _laplace_noise_at(ks, scale)
    if grid is not None:
        g = np.broadcast_to(np.asarray(grid, dtype=np.float64), x.shape)[..., None]
        out = np.rint(out / g) * g
    return np.any(out == x[..., None], axis=-1)


def reachability_score(mechanism: ProductLaplace, a: int, b: int) -> Callable[[np.ndarray], np.ndarray]:
    """Mironov's support attack on a Laplace mechanism: is an output impossible under one input?

    Per row ``x``: ``+1`` if some coordinate cannot be produced from ``mu_b`` by the float64 sampler (numpy's
    Laplace draw replayed bit for bit, plus the mean, rounded to the grid if any) while every coordinate can
    from ``mu_a``; ``-1`` mirrored; ``0`` otherwise. Such an output has likelihood ratio ``+inf`` (Mironov
    2012). It fires on most outputs of :class:`TextbookLaplace` and almost never on the grid mechanism. Any
    fixed score is a valid test: a replay mismatch can only cost power, never validity.

    Parameters
    ----------
    mechanism : ProductLaplace or TextbookLaplace
    a, b : int
        The pair; ``+1`` means "certainly from a".

    Returns
    -------
    callable
        ``(n, d) -> (n,)`` array of ``-1.0, 0.0, +1.0``.

    Raises
    ------
    ValueError
        If ``mechanism`` is not a product Laplace mechanism or ``a``/``b`` is invalid (the callable: if its
        input is not ``(n, d)``).

    Examples
    --------
    >>> t = TextbookLaplace([[0.3], [0.0]], scale=1.0)
    >>> score = reachability_score(t, 0, 1)
    >>> float(np.mean(score(t.sample(0, 1000, seed=0)) == 1.0)) > 0.5  # most outputs of a are impossible under b
    True
    >>> grid = ProductLaplace([[0.3], [0.0]], scale=1.0)
    >>> float(np.mean(reachability_score(grid, 0, 1)(grid.sample(0, 1000, seed=0)) != 0))
    0.0
    """
    if not isinstance(mechanism, ProductLaplace):
        raise ValueError(f"reachability_score needs a ProductLaplace or TextbookLaplace mechanism, got "
                         f"{type(mechanism).__name__}")
    mu_a = mechanism.prototypes[mechanism._check_identity(a, "a")]
    mu_b = mechanism.prototypes[mechanism._check_identity(b, "b")]
    scale, grid = mechanism.scale, mechanism.grid

    def score(x):
        xk = mechanism._check_points(x)
        from_a = _reachable(xk, np.broadcast_to(mu_a, xk.shape), scale, grid).all(axis=1)
        from_b = _reachable(xk, np.broadcast_to(mu_b, xk.shape), scale, grid).all(axis=1)
        return (~from_b).astype(np.float64) - (~from_a).astype(np.float64)

    return score

