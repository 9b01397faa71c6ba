"""The textbook float64 Laplace mechanism and Mironov's attack on it.

:class:`TextbookLaplace` releases ``fl(mu + Laplace noise)`` with no output grid and is not
epsilon-DP for any epsilon (Mironov 2012, "On significance of the least significant bits for
differential privacy", ACM CCS); :func:`laplace_noise_at` replays numpy's Laplace draw bit for bit
and :func:`reachability_score` turns it into the support attack that certifies the violation.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .additive import ProductLaplace
from .base import check_positive


class TextbookLaplace(ProductLaplace):
    """The textbook float64 Laplace mechanism ``fl(mu + Laplace noise)`` with no output grid: *not* epsilon-DP.

    The same means, scale and numpy draws as :class:`ProductLaplace`, but the float64 sum is
    released as it is. That is the implementation a textbook formula suggests, and it is not
    epsilon-DP for any finite epsilon (Mironov 2012, "On significance of the least significant
    bits for differential privacy", ACM CCS): numpy's Laplace noise takes only the values
    ``+-b log(2 k 2**-53)`` (a sparse subset of the doubles), so the doubles ``fl(mu_a + noise)``
    reachable from one mean are mostly unreachable from the other. An output reachable from
    ``mu_a`` only has likelihood ratio ``+inf``; :func:`reachability_score` tests exactly that.
    With means 0.3 and 0 in one dimension and ``b = 1``, 81% of the outputs of either input are
    unreachable from the other.

    Kept for teaching (the synthetic-benchmark chapter certifies the violation) and as a control
    for the float-safe :class:`ProductLaplace`.

    Parameters
    ----------
    prototypes : array_like, shape (K, d)
    scale : float, > 0
        Laplace scale ``b``.

    Attributes
    ----------
    grid : None
        No output grid.

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
        """``||mu_a - mu_b||_1 / b``: the epsilon claimed for the real-valued mechanism this implements.

        Raises
        ------
        ValueError
            If ``a`` or ``b`` is not a valid identity index.

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
        """The textbook log-likelihood ratio ``sum_j (|x_j - mu_bj| - |x_j - mu_aj|) / b``, computed naively.

        The real-valued mechanism's exact ratio, evaluated the textbook way with the
        cancellation that the float-safe :meth:`ProductLaplace.exact_score` avoids; on the tails
        its last bits depend on the input that produced ``x``. Returns a callable
        ``(n, d) -> (n,)``.

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


def laplace_noise_at(k, scale: float) -> np.ndarray:
    """numpy's Laplace draw ``Generator.laplace(0.0, scale)`` for the uniform ``U = k 2**-53``, bit for bit.

    numpy (>= 1.17, ``random_laplace`` in ``distributions.c``) draws ``U = (u64 >> 11) 2**-53``,
    rejects ``U = 0`` and returns ``0 - scale * log(2 - U - U)`` if ``U >= 0.5``, else
    ``0 + scale * log(U + U)``, with the C library's ``log``. This replays it with the same
    IEEE operations and :func:`math.log` (the same C ``log``; numpy's vectorised ``np.log``
    differs in the last bit on about 0.4% of arguments). The test suite checks the replay against
    ``Generator.laplace`` draw for draw.

    Parameters
    ----------
    k : array_like of int, values in [1, 2**53)
        Lattice indices of the uniforms.
    scale : float, > 0

    Returns
    -------
    numpy.ndarray, float64, shape of ``k``

    Raises
    ------
    ValueError
        If an index is outside ``[1, 2**53)`` or ``scale`` is not positive and finite.

    Examples
    --------
    >>> laplace_noise_at([2**52, 2**51], 1.0)  # U = 1/2 and U = 1/4: 0 and log(1/2)
    array([ 0.        , -0.69314718])
    >>> k = np.random.default_rng(0).integers(0, 2**64, dtype=np.uint64, size=3) >> np.uint64(11)
    >>> bool((laplace_noise_at(k.astype(np.int64), 1.0) == np.random.default_rng(0).laplace(0.0, 1.0, 3)).all())
    True
    """
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
    """Elementwise: is ``x`` a possible output ``snap(fl(mu + laplace_noise_at(k, scale)))`` for some k?

    The lattice index whose noise lands nearest ``x - mu`` is found by inverting the Laplace
    quantile function; its ``2 width + 1`` neighbours are replayed exactly. Where the noise lattice
    is coarser than the output's resolution (the doubles near ``x``, or the grid cell) each output
    has at most a few preimages, all among these neighbours; where it is finer (the body of a
    grid mechanism) the nearest index already maps to ``x``.
    """
    v = x - mu
    with np.errstate(over="ignore", under="ignore"):
        k0 = np.where(v < 0, 2.0**52 * np.exp(v / scale), 2.0**53 - 2.0**52 * np.exp(-v / scale))
    k0 = np.clip(np.rint(k0), 1, 2**53 - 1).astype(np.int64)
    ks = np.clip(k0[..., None] + np.arange(-width, width + 1), 1, 2**53 - 1)
    out = mu[..., None] + laplace_noise_at(ks, scale)
    if grid is not None:
        g = np.broadcast_to(np.asarray(grid, dtype=np.float64), x.shape)[..., None]
        out = np.rint(out / g) * g
    return np.any(out == x[..., None], axis=-1)


def reachability_score(mechanism: ProductLaplace, a: int, b: int) -> Callable[[np.ndarray], np.ndarray]:
    """Mironov's support attack on a Laplace mechanism: is an output impossible under one input?

    For each row ``x`` the score is ``+1`` if some coordinate of ``x`` cannot be produced from
    ``mu_b`` by the mechanism's float64 sampler (numpy's Laplace draw, replayed bit for bit by
    :func:`laplace_noise_at`, added to the mean and, for :class:`ProductLaplace`, rounded to its
    grid) while every coordinate can be produced from ``mu_a``; ``-1`` in the mirrored case; ``0``
    otherwise. An output unreachable from ``mu_b`` has likelihood ratio ``+inf``: thresholding
    this score is the most powerful test where the supports differ (Mironov 2012). Against the
    textbook float64 mechanism (:class:`TextbookLaplace`) it fires on most outputs; against the
    grid mechanism every grid cell within ``~21 b`` of a mean is reachable from both means and
    the score is almost always 0.

    The replay assumes the mechanism's draws come from ``Generator.laplace`` (as
    :meth:`Mechanism.sample` does) and that numpy and :func:`math.log` use the same C ``log``.
    Any fixed score is a valid test, so a mismatch can only cost power, never validity.

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
        If ``mechanism`` is not a product Laplace mechanism or ``a``/``b`` is invalid; the
        callable raises if its input is not ``(n, d)``.

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

