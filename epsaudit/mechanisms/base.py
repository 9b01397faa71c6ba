"""The base class of the known-epsilon mechanisms (identity ``i`` releases ``snap(mu_i + noise)``, the grid
``snap`` of the :mod:`epsaudit.mechanisms` docstring, "Float-safe outputs") and the checks they share."""

from __future__ import annotations

import numbers
from typing import Callable, Iterable, Sequence

import numpy as np
from scipy.spatial import distance

from ..protocol import generator, generators

__all__ = ["DEFAULT_DELTA", "Mechanism"]

#: Default delta of the approximate-DP (Gaussian) mechanisms.
DEFAULT_DELTA: float = 1e-5
#: Two draws coinciding with at least this probability make equal rows expected (:attr:`Mechanism.repeated_outputs`).
_REPEAT_PROBABILITY: float = 1e-15


class Mechanism:
    """Base class: identity ``i`` (row ``i`` of ``prototypes``) releases ``prototypes[i] + noise``; subclasses
    define the noise and the exact pairwise privacy.

    Attributes
    ----------
    prototypes : numpy.ndarray, shape (K, d)
        Mean of each identity's outputs (all rows equal at the exact null).
    name : str
        ``"laplace"``, ``"gaussian"``, ``"anisotropic_gaussian"``, ...
    delta : float
        The delta of the exact ``(epsilon, delta)`` values: 0.0 for Laplace (pure DP).
    null : bool
        All prototypes equal: every pairwise epsilon is exactly 0.
    requested_epsilon : float or None
        The global epsilon :func:`calibrate` fitted, ``None`` for a hand-built mechanism.
    worst_pair : tuple of int or None
        The pair that attains ``requested_epsilon`` (``None`` at the null or if not calibrated).
    grid : numpy.ndarray of shape (d,) or None
        Output grid spacing per coordinate (powers of two); outputs are ``grid * rint((mu + noise) / grid)``.
        ``None``: raw float64 outputs (:class:`TextbookLaplace`, or not prototype-plus-noise).

    Examples
    --------
    >>> from epsaudit.mechanisms import ProductLaplace
    >>> m = ProductLaplace([[0.0, 0.0], [1.0, 0.5]], scale=0.5)
    >>> m.n_identities, m.dim, m.exact_epsilon(0, 1), m.sample(0, 3, seed=0).shape
    (2, 2, 3.0, (3, 2))
    """

    name: str = ""
    grid: np.ndarray | None = None

    def __init__(self, prototypes, delta: float) -> None:
        self.prototypes = check_prototypes(prototypes, minimum=1)
        self.prototypes.setflags(write=False)
        self.delta = float(delta)
        self.null = bool(np.all(self.prototypes == self.prototypes[0]))
        self.requested_epsilon: float | None = None
        self.worst_pair: tuple[int, int] | None = None

    @property
    def n_identities(self) -> int:
        """Number of identities ``K``."""
        return int(self.prototypes.shape[0])

    @property
    def dim(self) -> int:
        """Embedding dimension ``d``."""
        return int(self.prototypes.shape[1])

    def _noise(self, rng: np.random.Generator, n: int) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def _separation_pairs(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def _epsilon_from_separation(self, sep):  # pragma: no cover
        raise NotImplementedError

    def exact_score(self, a: int, b: int) -> Callable[[np.ndarray], np.ndarray]:  # pragma: no cover
        """Exact log-likelihood ratio ``log p_a(x) - log p_b(x)``, a callable ``(n, d) -> (n,)``: the most powerful
        test (Neyman-Pearson), the "exact" test of *Picture the Epsilon*, Figure 3 and Table 6."""
        raise NotImplementedError

    def optimal_auc(self, a: int, b: int, n_mc: int = 20000, seed=0) -> float:  # pragma: no cover
        """Population AUC of the exact likelihood-ratio test of ``a`` (positive) against ``b``."""
        raise NotImplementedError

    def _collision_probability(self) -> float:
        """Probability that two independent outputs of one identity are equal (0: continuous)."""
        return 0.0

    @property
    def repeated_outputs(self) -> bool:
        """True when two independent outputs of one identity coincide with probability >= ``1e-15``.

        One-hot rows of :class:`RandomizedResponse`, grid outputs in one or two dimensions. Then a freshness
        check (:func:`epsaudit.validation.check_fresh`) cannot tell a reused draw from a repeated value; give
        the reserved test draw ids (``dev_ids``/``test_ids``), or ``check_reuse=False`` for fresh draws.

        Examples
        --------
        >>> from epsaudit.mechanisms import ProductLaplace, RandomizedResponse, prototype_set
        >>> laplace = ProductLaplace(prototype_set("dispersed", 2, 8, seed=0), 0.5)
        >>> RandomizedResponse(4, 1.0).repeated_outputs, laplace.repeated_outputs
        (True, False)
        """
        return self._collision_probability() >= _REPEAT_PROBABILITY

    def discretisation_slack(self, a: int, b: int) -> float:
        """How far the discretised mechanism's epsilon may lie below :meth:`exact_epsilon` (nats).

        0 for product Laplace noise and randomized response; for Gaussian noise
        ``sum_j |mu_aj - mu_bj| g_j / s_j**2`` (package docstring, "Float-safe outputs"). ``ValueError`` for an
        invalid identity.

        Examples
        --------
        >>> from epsaudit.mechanisms import ProductLaplace
        >>> ProductLaplace([[0.0, 0.0], [1.0, 0.5]], scale=0.5).discretisation_slack(0, 1)
        0.0
        """
        self._check_identity(a, "a"), self._check_identity(b, "b")
        return 0.0

    def _snap(self, x: np.ndarray) -> np.ndarray:
        """Round raw outputs ``x`` (a fresh array, modified in place) to the grid."""
        if self.grid is None:
            return x
        x /= self.grid  # exact: the grid spacing is a power of two
        np.rint(x, out=x)
        x *= self.grid
        return x

    def _draw(self, identity: int, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` released outputs of a validated identity: ``snap(prototype + noise)``."""
        return self._snap(self.prototypes[identity] + self._noise(rng, n))

    def sample(self, identity: int, n: int, seed=0) -> np.ndarray:
        """Draw ``n`` outputs ``(n, d)`` of identity ``0 <= identity < K``: ``prototypes[identity] + noise`` rounded
        to :attr:`grid` (prototype units, not normalised). ``seed``: int, stream key (tuple) or Generator.

        Raises
        ------
        ValueError
            If ``identity`` is not a valid index, ``n < 1`` or ``seed`` is invalid.

        Examples
        --------
        >>> from epsaudit.mechanisms import ProductLaplace
        >>> m = ProductLaplace([[0.0, 0.0], [1.0, 0.5]], scale=0.5)
        >>> bool((m.sample(1, 4, seed=7) == m.sample(1, 4, seed=7)).all())
        True
        """
        i = self._check_identity(identity, "identity")
        n = check_int(n, "n", minimum=1)
        return self._draw(i, generator(seed, "mechanism-draws", i), n)

    def sample_groups(self, n: int, seed=0, identities: Iterable[int] | None = None) -> dict[int, np.ndarray]:
        """Draw ``n`` outputs for each identity, on independent random streams.

        Identity ``i`` uses ``stream("mechanism-draws", seed, i)`` (a Generator seed: its ``spawn(K)`` children),
        so ``sample_groups(n, s)[i] == sample(i, n, s)`` whichever ``identities`` are requested.

        Returns ``{identity: (n, d) array}`` in the order requested (default: all ``K``).

        Raises
        ------
        ValueError
            If an identity is invalid or repeated, ``n < 1`` or ``seed`` is invalid.

        Examples
        --------
        >>> from epsaudit.mechanisms import ProductLaplace
        >>> m = ProductLaplace([[0.0, 0.0], [1.0, 0.5]], scale=0.5)
        >>> groups = m.sample_groups(3, seed=0, identities=[1])
        >>> list(groups), bool((groups[1] == m.sample(1, 3, seed=0)).all())
        ([1], True)
        """
        n = check_int(n, "n", minimum=1)
        if identities is None:
            ids = list(range(self.n_identities))
        else:
            ids = [self._check_identity(i, "identities") for i in identities]
            if len(set(ids)) != len(ids):
                raise ValueError(f"identities contains repeated entries: {ids}")
        streams = generators(seed, "mechanism-draws", range(self.n_identities))
        return {i: self.sample(i, n, streams[i]) for i in ids}

    def separation(self, a: int, b: int) -> float:
        """The standardised distance that determines the pair's exact epsilon: ``||mu_a - mu_b||_1 / b`` (Laplace),
        ``||mu_a - mu_b||_2 / sigma`` (isotropic Gaussian) or the Mahalanobis distance (anisotropic).

        Examples
        --------
        >>> from epsaudit.mechanisms import IsotropicGaussian
        >>> IsotropicGaussian([[0.0, 0.0], [3.0, 4.0]], sigma=1.0).separation(0, 1)
        5.0
        """
        a, b = self._check_identity(a, "a"), self._check_identity(b, "b")
        return float(self._separation_pairs(np.array([a]), np.array([b]))[0])

    def exact_epsilon(self, a: int, b: int) -> float:
        """Exact pairwise epsilon (pure for Laplace; ``epsilon(delta)`` at ``self.delta`` for the Gaussians);
        ``ValueError`` for an invalid identity.

        Examples
        --------
        >>> from epsaudit.mechanisms import ProductLaplace
        >>> ProductLaplace([[0.0, 0.0], [1.0, 0.5]], scale=0.5).exact_epsilon(0, 1)  # ||mu_a - mu_b||_1 / b
        3.0
        """
        return float(self._epsilon_from_separation(self.separation(a, b)))

    def exact_epsilons(self, pairs: Sequence[tuple[int, int]]) -> np.ndarray:
        """Exact epsilon of each pair, shape ``(len(pairs),)``; ``ValueError`` if ``pairs`` is empty or invalid.

        Examples
        --------
        >>> from epsaudit.mechanisms import ProductLaplace
        >>> ProductLaplace([[0.0, 0.0], [1.0, 0.5]], scale=0.5).exact_epsilons([(0, 1), (1, 1)])
        array([3., 0.])
        """
        a, b = self._check_pairs(pairs)
        out = self._epsilon_from_separation(self._separation_pairs(a, b))
        return np.atleast_1d(np.asarray(out, dtype=np.float64))

    def _check_identity(self, i, name: str) -> int:
        if isinstance(i, bool) or not isinstance(i, numbers.Integral):
            raise ValueError(f"{name} must be an integer identity index, got {i!r}")
        if not 0 <= int(i) < self.n_identities:
            raise ValueError(
                f"{name} = {i} is not an identity of this mechanism (valid: 0 .. {self.n_identities - 1})"
            )
        return int(i)

    def _check_pairs(self, pairs) -> tuple[np.ndarray, np.ndarray]:
        pairs = list(pairs)
        if not pairs:
            raise ValueError("pairs is empty; give at least one identity pair")
        a, b = [], []
        for k, pair in enumerate(pairs):
            if len(pair) != 2:
                raise ValueError(f"pairs[{k}] = {pair!r} is not a pair of two identities")
            a.append(self._check_identity(pair[0], f"pairs[{k}][0]"))
            b.append(self._check_identity(pair[1], f"pairs[{k}][1]"))
        return np.array(a), np.array(b)

    def _check_points(self, x) -> np.ndarray:
        arr = np.asarray(x, dtype=np.float64)
        if arr.ndim != 2 or arr.shape[1] != self.dim:
            raise ValueError(f"x must have shape (n, {self.dim}); got {arr.shape}")
        return arr

    def __repr__(self) -> str:
        extra = "" if self.requested_epsilon is None else f", requested_epsilon={self.requested_epsilon:g}"
        return (
            f"{type(self).__name__}(K={self.n_identities}, d={self.dim}, {self._scale_repr()}, "
            f"delta={self.delta:g}, null={self.null}{extra})"
        )

    def _scale_repr(self) -> str:  # pragma: no cover
        return ""


# Checks shared by the mechanism modules (public for them, not in ``__all__``)


def check_int(value, name: str, *, minimum: int) -> int:
    """``value`` as an ``int`` (not a bool) ``>= minimum``; ``ValueError`` naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def check_positive(value, name: str) -> float:
    """``value`` as a finite ``float > 0`` (not a bool); ``ValueError`` naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def check_prototypes(prototypes, *, minimum: int) -> np.ndarray:
    """Prototypes as a finite float64 ``(K, d)`` array with ``K >= minimum``; ``ValueError`` otherwise."""
    try:
        p = np.array(prototypes, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"prototypes must be a numeric (K, d) array: {exc}") from None
    if p.ndim != 2 or p.shape[1] < 1:
        raise ValueError(f"prototypes must be a two-dimensional (K, d) array; got shape {p.shape}")
    if p.shape[0] < minimum:
        raise ValueError(f"prototypes needs at least {minimum} identities (rows); got {p.shape[0]}")
    if not np.all(np.isfinite(p)):
        raise ValueError("prototypes holds NaN or infinite values")
    return p


def pairwise_distances(p: np.ndarray, metric: str) -> np.ndarray:
    """(K, K) matrix of pairwise L1 or L2 distances between the rows of ``p``."""
    return distance.cdist(p, p, "cityblock" if metric == "l1" else "euclidean")
