"""MMD certificate: a one-sided lower confidence bound on epsilon through the kernel two-sample route.

The MMD-TV route of *Picture the Epsilon* (with its comparison to the hockey-stick bound of
González et al.) inserts a sample MMD into a valid population inequality and is therefore an
*estimate*. This module makes the same chain a *certificate*:

1. the RBF kernel ``k(x, y) = exp(-||x - y||^2 / (2 s^2))`` is fixed on development rows only:
   ``s`` is the median pairwise distance of the pair's pooled development rows (median heuristic)
   times a scale, the scale maximising the development ``MMD_u^2`` over ``bandwidth_scales``;
2. on untouched test rows (``m`` of A, ``n`` of B) the unbiased statistic ``MMD_u^2``
   (Gretton et al. 2012, JMLR 13, Eq. 3) satisfies, for a kernel with values in ``[0, K]``,
   ``P(MMD_u^2 - MMD^2 >= t) <= exp(-t^2 / (8 K^2 (1/m + 1/n)))`` (McDiarmid's inequality; for
   ``m = n`` the Hoeffding U-statistic bound of Gretton et al. 2012, Theorem 10), so
   ``MMD^2 >= MMD_u^2 - t_a`` with ``t_a = K sqrt(8 (1/m + 1/n) log(1/a))`` holds with
   probability ``>= 1 - a`` (:func:`epsaudit.bounds.mmd2_deviation`; ``K = 1`` for the RBF kernel);
3. ``TV >= MMD / sqrt(2)`` for a kernel valued in [0, 1] (:func:`epsaudit.bounds.tv_lower_from_mmd`;
   ``link="2"`` gives the MMD-TV chain ``TV >= MMD / 2``);
4. an (epsilon, delta)-DP pair has ``TV <= (e^eps - 1 + 2 delta) / (e^eps + 1)``, so
   ``eps >= log((1 + TV - 2 delta) / (1 - TV))`` (:func:`epsaudit.bounds.epsilon_from_tv_delta`).

Sampling model: the test rows are independent of the development rows and iid within each
identity; the kernel is a function of the development rows only. With ``m`` certificates reported
together each uses ``a = (1 - confidence) / m`` (Bonferroni over one one-sided bound each).

It is much weaker than the reserved-test certificates: the deviation ``t_a`` is a worst case over
all distributions (it does not shrink with the variance of the statistic) and is 1.26 at ``n = 30``
per identity and 95%, 0.69 at ``n = 100`` and 0.40 at ``n = 300``, while ``MMD^2 <= 2`` and a
median-heuristic kernel rarely gives more than 1 even for well separated pairs. A zero certificate
here says little about the pair.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Hashable, Mapping, Sequence

import numpy as np

from ..bounds import epsilon_from_tv_delta, mmd2_deviation, tv_lower_from_mmd
from ..results import EpsilonResult, RouteStatistics
from ..validation import as_dev_test, as_groups, as_pair, as_pairs, check_fresh, check_probability
from .mmd_tv import cross_squared_distances
from .runner import PairFailure, family_size, map_certificates, not_computed, pair_parts, split_test_sizes
from .tradeoff import DEFAULT_DELTAS, curve_columns

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pandas as pd

ROUTE = "mmd_certificate"
#: Multipliers of the development median-heuristic bandwidth tried on development rows.
DEFAULT_BANDWIDTH_SCALES: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0)
TV_LINKS: tuple[str, ...] = ("sqrt2", "2")
#: Development statistics a certificate records in ``details`` (and its result in ``statistics``).
DEVELOPMENT_FIELDS: tuple[str, ...] = ("dev_mmd2_u", "median_distance", "n_dev_a", "n_dev_b")


# ---------------------------------------------------------------------------------------------
# Statistic and kernel choice
# ---------------------------------------------------------------------------------------------


def rbf_mmd2_unbiased(x_a, x_b, bandwidth: float) -> float:
    """Unbiased ``MMD_u^2`` of two samples with a fixed RBF kernel.

    ``sum_{i != j} k(a_i, a_j) / (m (m - 1)) + sum_{i != j} k(b_i, b_j) / (n (n - 1))
    - 2 sum_{i, j} k(a_i, b_j) / (m n)`` with ``k(x, y) = exp(-||x - y||^2 / (2 s^2))``
    (Gretton et al. 2012, Eq. 3); unbiased for the population ``MMD^2``, may be negative.

    Parameters
    ----------
    x_a, x_b : array_like, shapes (m, d), (n, d), m, n >= 2
    bandwidth : float, > 0
        ``s``, in the units of the embedding.

    Returns
    -------
    float
        In ``[-1, 2]``.

    Raises
    ------
    ValueError
        Bad samples (see :func:`epsaudit.validation.as_pair`) or a non-positive bandwidth.

    Examples
    --------
    >>> round(rbf_mmd2_unbiased([[0.0], [0.0]], [[1.0], [1.0]], 1.0), 6)  # 1 + 1 - 2 exp(-1/2)
    0.786939
    """
    a, b = as_pair(x_a, x_b)
    if not (np.isfinite(bandwidth) and bandwidth > 0):
        raise ValueError(f"bandwidth must be finite and > 0, got {bandwidth}")
    return float(_mmd2(a, b, float(bandwidth)))


def _mmd2(a: np.ndarray, b: np.ndarray, s: float) -> float:
    g = -1.0 / (2.0 * s * s)
    m, n = len(a), len(b)
    k_aa = np.exp(g * cross_squared_distances(a, a))
    k_bb = np.exp(g * cross_squared_distances(b, b))
    k_ab = np.exp(g * cross_squared_distances(a, b))
    return ((k_aa.sum() - np.trace(k_aa)) / (m * (m - 1)) + (k_bb.sum() - np.trace(k_bb)) / (n * (n - 1))
            - 2.0 * k_ab.sum() / (m * n))


def development_bandwidth(dev_a, dev_b, bandwidth_scales: Sequence[float] = DEFAULT_BANDWIDTH_SCALES) -> dict[str, float]:
    """RBF bandwidth fixed on development rows: median heuristic times the best scale.

    The median heuristic ``s0`` is the median of the pairwise distances (``i < j``) of the pair's
    pooled development rows (the rule of the MMD-TV route, applied to development rows only);
    the scale maximising the development ``MMD_u^2`` wins (the first among ties).

    Parameters
    ----------
    dev_a, dev_b : array_like, shapes (m, d), (n, d)
    bandwidth_scales : sequence of float, > 0

    Returns
    -------
    dict
        ``bandwidth`` (``s0 * scale``), ``scale``, ``median_distance`` (``s0``) and
        ``dev_mmd2_u`` (the development statistic at the chosen bandwidth).

    Raises
    ------
    ValueError
        Bad samples, an empty or non-positive scale list, or a zero median distance (most pooled
        points coincide).

    Examples
    --------
    >>> out = development_bandwidth([[0.0], [0.1]], [[1.0], [1.1]], bandwidth_scales=(1.0,))
    >>> round(out["median_distance"], 6), out["scale"]
    (0.95, 1.0)
    """
    a, b = as_pair(dev_a, dev_b)
    scales = np.asarray(bandwidth_scales, dtype=np.float64)
    if scales.ndim != 1 or scales.size < 1 or np.any(~(scales > 0)) or np.any(~np.isfinite(scales)):
        raise ValueError(f"bandwidth_scales must be a non-empty sequence of finite numbers > 0, got {bandwidth_scales!r}")
    iu_a, iu_b = np.triu_indices(len(a), k=1), np.triu_indices(len(b), k=1)
    pooled = np.concatenate([cross_squared_distances(a, a)[iu_a], cross_squared_distances(b, b)[iu_b],
                             cross_squared_distances(a, b).ravel()])
    s0 = float(np.median(np.sqrt(pooled)))
    if s0 == 0.0:
        raise ValueError("the median pairwise distance of the development rows is zero (most pooled points "
                         "coincide); the median-heuristic bandwidth is undefined")
    values = [_mmd2(a, b, s0 * float(c)) for c in scales]
    best = int(np.argmax(values))
    return {"bandwidth": s0 * float(scales[best]), "scale": float(scales[best]), "median_distance": s0,
            "dev_mmd2_u": float(values[best])}


def mmd_lower_bound(mmd2_u, n_a, n_b, alpha, kernel_bound: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """One-sided lower confidence bound on the population MMD from the unbiased statistic.

    ``MMD^2_LB = max(0, MMD_u^2 - t_alpha)`` with ``t_alpha`` from
    :func:`epsaudit.bounds.mmd2_deviation`; ``MMD_LB = sqrt(MMD^2_LB)``.

    Parameters
    ----------
    mmd2_u : array_like
        Unbiased statistic(s) on test rows with a kernel fixed beforehand.
    n_a, n_b : int or array_like, >= 2
    alpha : float in (0, 1)
    kernel_bound : float
        Upper end of the kernel's range (1 for RBF).

    Returns
    -------
    mmd2_lower, mmd_lower : numpy.ndarray or float

    Examples
    --------
    >>> [round(float(v), 4) for v in mmd_lower_bound(1.0, 100, 100, 0.05)]
    [0.3077, 0.5547]
    """
    t = mmd2_deviation(n_a, n_b, alpha, kernel_bound)
    low = np.maximum(np.asarray(mmd2_u, dtype=np.float64) - t, 0.0)
    root = np.sqrt(low)
    return (low[()] if low.ndim == 0 else low), (root[()] if root.ndim == 0 else root)


# ---------------------------------------------------------------------------------------------
# Result type
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MMDCertificateStatistics(RouteStatistics):
    """What one MMD certificate's epsilon is computed from (columns of a results table).

    Attributes
    ----------
    mmd2_u, deviation, mmd2_lower, mmd_lower, tv_lower : float
        The test statistic, the subtracted deviation ``t_alpha`` and the certified lower bounds
        on ``MMD^2``, ``MMD`` and total variation.
    bandwidth, bandwidth_scale : float
        The RBF bandwidth fixed on development rows and its multiple of the median heuristic.
    deltas, epsilon_at_delta : tuple of float
        The certified epsilon curve; :meth:`record` writes it as ``epsilon_at_delta_<delta>``.
    dev_mmd2_u, median_distance, n_dev_a, n_dev_b : float or int, optional
        Development statistics (:data:`DEVELOPMENT_FIELDS`); left out of the record when None.

    Examples
    --------
    >>> s = MMDCertificateStatistics(0.9, 0.5, 0.4, 0.63, 0.45, 1.0, 1.0, (0.0,), (0.97,), n_dev_a=70)
    >>> s.record()["epsilon_at_delta_0"], s.record()["n_dev_a"], "n_dev_b" in s.record()
    (0.97, 70, False)
    """

    mmd2_u: float
    deviation: float
    mmd2_lower: float
    mmd_lower: float
    tv_lower: float
    bandwidth: float
    bandwidth_scale: float
    deltas: tuple[float, ...] = ()
    epsilon_at_delta: tuple[float, ...] = ()
    dev_mmd2_u: float | None = None
    median_distance: float | None = None
    n_dev_a: int | None = None
    n_dev_b: int | None = None

    def record(self) -> dict[str, Any]:
        """The statistics as columns: the chain of bounds, the curve, then the development statistics.

        Returns
        -------
        dict

        Examples
        --------
        >>> list(MMDCertificateStatistics(0.9, 0.5, 0.4, 0.63, 0.45, 1.0, 1.0).record())[:3]
        ['mmd2_u', 'deviation', 'mmd2_lower']
        """
        out = {k: v for k, v in super().record().items() if k not in ("deltas", "epsilon_at_delta")
               and k not in DEVELOPMENT_FIELDS}
        out.update(curve_columns(self.deltas, self.epsilon_at_delta))
        out.update({k: getattr(self, k) for k in DEVELOPMENT_FIELDS if getattr(self, k) is not None})
        return out


@dataclass(frozen=True, eq=False)
class MMDCertificate:
    """A certified lower bound on MMD, total variation and epsilon(delta) for one pair.

    Attributes
    ----------
    pair : tuple or None
    n : tuple of int
        Test sizes ``(n_A, n_B)``.
    confidence : float
        Family-wise confidence of every certificate reported together.
    alpha_per_bound : float
        Level of this certificate's one-sided bound.
    correction : str
    bandwidth : float
        RBF bandwidth fixed on development rows (embedding units).
    bandwidth_scale : float
        Its multiple of the development median heuristic.
    mmd2_u : float
        Unbiased statistic on the test rows.
    deviation : float
        ``t_alpha``, subtracted from ``mmd2_u``.
    mmd2_lower, mmd_lower : float
        Certified lower bounds on ``MMD^2`` and ``MMD``.
    tv_link : {"sqrt2", "2"}
    tv_lower : float
        Certified lower bound on total variation.
    deltas : numpy.ndarray, shape (J,)
    epsilon_at_delta : numpy.ndarray, shape (J,)
        Certified lower bound on epsilon at each delta.
    delta : float
    epsilon : float
        Certified lower bound on epsilon at ``delta``.
    settings, details : dict
    kind : str
        Always ``"certificate"``.
    route : str
        ``"mmd_certificate"``.
    not_computed : str or None
        Why the pair could not be certified (many-pairs runs only); then the numbers are NaN and
        the pair still counts in the family.

    Raises
    ------
    ValueError
        If ``kind`` is not ``"certificate"``, a level is outside (0, 1), the curve arrays differ
        in length or ``tv_link`` is unknown.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> rows = [rng.normal(c, 0.1, size=(100, 3)) for c in (0.0, 3.0, 0.0, 3.0)]
    >>> cert = mmd_certificate(*rows)
    >>> round(cert.mmd2_lower, 4) == round(max(cert.mmd2_u - cert.deviation, 0.0), 4), cert.frame().shape
    (True, (7, 6))
    """

    pair: tuple[Any, Any] | None
    n: tuple[int, int]
    confidence: float
    alpha_per_bound: float
    correction: str
    bandwidth: float
    bandwidth_scale: float
    mmd2_u: float
    deviation: float
    mmd2_lower: float
    mmd_lower: float
    tv_link: str
    tv_lower: float
    deltas: np.ndarray
    epsilon_at_delta: np.ndarray
    delta: float
    epsilon: float
    settings: Mapping[str, Any] = field(default_factory=dict)
    details: Mapping[str, Any] = field(default_factory=dict)
    kind: str = "certificate"
    route: str = ROUTE
    not_computed: str | None = None

    def __post_init__(self) -> None:
        if self.kind != "certificate":
            raise ValueError(f"an MMDCertificate is a certificate, got kind {self.kind!r}")
        if self.not_computed is not None and not str(self.not_computed).strip():
            raise ValueError("not_computed must give the reason, got an empty string")
        if self.tv_link not in TV_LINKS:
            raise ValueError(f"tv_link must be one of {TV_LINKS}, got {self.tv_link!r}")
        check_probability(self.confidence, "confidence")
        check_probability(self.alpha_per_bound, "alpha_per_bound")
        for name in ("deltas", "epsilon_at_delta"):
            arr = np.array(getattr(self, name), dtype=np.float64)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        if len(self.deltas) != len(self.epsilon_at_delta):
            raise ValueError("deltas and epsilon_at_delta must have the same length")
        object.__setattr__(self, "n", tuple(int(v) for v in self.n))

    @classmethod
    def failed(cls, reason: str, *, pair, n, confidence, alpha_per_bound, correction, tv_link, delta, deltas,
               settings=None, details=None) -> "MMDCertificate":
        """A certificate that could not be computed for ``pair`` (NaN numbers, the reason)."""
        nan = float("nan")
        return cls(pair=pair, n=n, confidence=confidence, alpha_per_bound=alpha_per_bound, correction=correction,
                   bandwidth=nan, bandwidth_scale=nan, mmd2_u=nan, deviation=nan, mmd2_lower=nan, mmd_lower=nan,
                   tv_link=tv_link, tv_lower=nan, deltas=deltas, epsilon_at_delta=np.full(len(deltas), nan),
                   delta=delta, epsilon=nan, settings=dict(settings or {}), details=dict(details or {}),
                   not_computed=reason)

    @property
    def computed(self) -> bool:
        """True unless the pair could not be certified (see ``not_computed``)."""
        return self.not_computed is None

    def frame(self) -> "pd.DataFrame":
        """The certified epsilon curve: columns ``identity_a, identity_b, delta, epsilon, tv_lower, mmd_lower``."""
        import pandas as pd

        a, b = self.pair if self.pair is not None else (None, None)
        return pd.DataFrame({"identity_a": a, "identity_b": b, "delta": self.deltas, "epsilon": self.epsilon_at_delta,
                             "tv_lower": self.tv_lower, "mmd_lower": self.mmd_lower})

    def to_result(self) -> EpsilonResult:
        """The epsilon at ``delta`` as an :class:`EpsilonResult` (``kind="certificate"``; *not computed* with the reason when it failed).

        Its ``statistics`` is an :class:`MMDCertificateStatistics`.
        """
        fields = dict(kind="certificate", route=self.route, n=self.n, pair=self.pair, delta=self.delta,
                      confidence=self.confidence, alpha_per_bound=self.alpha_per_bound, correction=self.correction,
                      settings=dict(self.settings))
        if not self.computed:
            return not_computed(PairFailure(reason=self.not_computed, error=str(self.details.get("error", "ValueError"))),
                                **fields)
        development = {k: self.details[k] for k in DEVELOPMENT_FIELDS if k in self.details}
        stats = MMDCertificateStatistics(
            mmd2_u=self.mmd2_u, deviation=self.deviation, mmd2_lower=self.mmd2_lower, mmd_lower=self.mmd_lower,
            tv_lower=self.tv_lower, bandwidth=self.bandwidth, bandwidth_scale=self.bandwidth_scale,
            deltas=tuple(float(d) for d in self.deltas), epsilon_at_delta=tuple(float(e) for e in self.epsilon_at_delta),
            **development)
        extra = {k: v for k, v in self.details.items() if k not in development}
        return EpsilonResult(value=self.epsilon, statistics=stats, details=extra, **fields)

    def __str__(self) -> str:
        if not self.computed:
            return f"{self.route}: not computed ({self.not_computed})"
        return (f"{self.route}: epsilon >= {self.epsilon:.4g} at delta = {self.delta:g} (TV >= {self.tv_lower:.3g}, "
                f"MMD^2 >= {self.mmd2_lower:.3g} = {self.mmd2_u:.3g} - {self.deviation:.3g}; "
                f"{self.confidence:.0%} family-wise, n = {self.n}, {self.correction})")


# ---------------------------------------------------------------------------------------------
# Certificates
# ---------------------------------------------------------------------------------------------


def correction_label(n_certificates: int) -> str:
    """Text of the multiplicity correction recorded on each certificate.

    Examples
    --------
    >>> correction_label(5)
    'bonferroni: 1 one-sided MMD deviation bound x 5 certificate(s)'
    """
    return f"bonferroni: 1 one-sided MMD deviation bound x {n_certificates} certificate(s)"


def _check_options(n_certificates, confidence, delta, deltas, tv_link, bandwidth_scales) -> np.ndarray:
    if isinstance(n_certificates, bool) or int(n_certificates) != n_certificates or int(n_certificates) < 1:
        raise ValueError(f"n_certificates must be an integer >= 1, got {n_certificates!r}")
    check_probability(confidence, "confidence")
    check_probability(delta, "delta", open_interval=False)
    if tv_link not in TV_LINKS:
        raise ValueError(f"tv_link must be one of {TV_LINKS}, got {tv_link!r}")
    scales = np.asarray(bandwidth_scales, dtype=np.float64)
    if scales.ndim != 1 or scales.size < 1 or np.any(~(scales > 0)) or np.any(~np.isfinite(scales)):
        raise ValueError(f"bandwidth_scales must be a non-empty sequence of finite numbers > 0, got {bandwidth_scales!r}")
    d = np.asarray(deltas, dtype=np.float64)
    if d.ndim != 1 or d.size < 1 or np.any(~((d >= 0) & (d < 1))):
        raise ValueError(f"deltas must be a non-empty 1-D sequence of values in [0, 1), got {deltas!r}")
    return np.unique(np.r_[d, delta])


def _settings(bandwidth_scales, tv_link, m, seed, check_reuse) -> dict:
    return {"kernel": "rbf", "bandwidth": "development median heuristic x scale maximising development MMD_u^2",
            "bandwidth_scales": ",".join(f"{c:g}" for c in bandwidth_scales), "tv_link": tv_link,
            "deviation": "McDiarmid, kernel in [0, 1]", "n_certificates": m, "seed": seed,
            "freshness": ("test rows checked against development rows" if check_reuse else
                          "not checked (check_reuse=False): the caller vouches for fresh test draws")}


def _certify(dev_a, dev_b, test_a, test_b, bandwidth_scales, tv_link, m, confidence, delta, deltas, pair, seed,
             check_reuse) -> MMDCertificate:
    """One pair (module-level, so that joblib can run it anywhere)."""
    names = tuple(pair) if pair is not None else ("A", "B")
    if check_reuse:
        check_fresh({names[0]: dev_a, names[1]: dev_b}, {names[0]: test_a, names[1]: test_b},
                    context=f"MMD certificate of pair ({names[0]!r}, {names[1]!r})")
    kernel = development_bandwidth(dev_a, dev_b, bandwidth_scales)
    alpha = (1.0 - confidence) / m
    mmd2 = float(_mmd2(test_a, test_b, kernel["bandwidth"]))
    na, nb = len(test_a), len(test_b)
    deviation = float(mmd2_deviation(na, nb, alpha))
    mmd2_lo, mmd_lo = mmd_lower_bound(mmd2, na, nb, alpha)
    tv = float(tv_lower_from_mmd(mmd_lo, tv_link))
    return MMDCertificate(
        pair=pair, n=(na, nb), confidence=confidence, alpha_per_bound=alpha, correction=correction_label(m),
        bandwidth=kernel["bandwidth"], bandwidth_scale=kernel["scale"], mmd2_u=mmd2, deviation=deviation,
        mmd2_lower=float(mmd2_lo), mmd_lower=float(mmd_lo), tv_link=tv_link, tv_lower=tv,
        deltas=deltas, epsilon_at_delta=epsilon_from_tv_delta(tv, deltas), delta=delta,
        epsilon=float(epsilon_from_tv_delta(tv, delta)),
        settings=_settings(bandwidth_scales, tv_link, m, seed, check_reuse),
        details={"dev_mmd2_u": kernel["dev_mmd2_u"], "median_distance": kernel["median_distance"],
                 "n_dev_a": len(dev_a), "n_dev_b": len(dev_b)},
    )


def mmd_certificate(
    dev_a, dev_b, test_a, test_b, *,
    bandwidth_scales: Sequence[float] = DEFAULT_BANDWIDTH_SCALES,
    tv_link: str = "sqrt2",
    n_certificates: int = 1,
    confidence: float = 0.95,
    delta: float = 1e-5,
    deltas: Sequence[float] = DEFAULT_DELTAS,
    pair=None,
    check_reuse: bool = True,
) -> MMDCertificate:
    """MMD certificate for one pair from separate development and test samples (module docstring).

    Parameters
    ----------
    dev_a, dev_b : array_like, shapes (m_dev, d), (n_dev, d)
        Development rows: fix the kernel bandwidth.
    test_a, test_b : array_like, shapes (m, d), (n, d)
        Untouched test rows: the unbiased statistic.
    bandwidth_scales : sequence of float
        Multiples of the development median heuristic tried on development rows (default
        0.25 ... 4); ``(1.0,)`` is the plain median heuristic.
    tv_link : {"sqrt2", "2"}
        ``TV >= MMD / sqrt(2)`` (default; kernel in [0, 1]) or the MMD-TV chain ``TV >= MMD / 2``.
    n_certificates : int
        Family size ``m``: each bound is at ``(1 - confidence) / m``.
    confidence : float in (0, 1)
    delta : float in [0, 1)
        Delta of the headline ``epsilon`` (default 1e-5).
    deltas : sequence of float in [0, 1)
        Deltas of the reported epsilon curve (``delta`` is added).
    pair : tuple, optional
    check_reuse : bool
        Compare every test row with every development row and refuse copies (default); False
        only when values repeat by design or rows differing only in scale are different outputs,
        and the test rows are fresh draws (as :func:`reserved_test_certificate`).

    Returns
    -------
    MMDCertificate

    Raises
    ------
    ValueError
        Bad samples, a zero development median distance, or options out of range.
    epsaudit.validation.ReusedRowsError
        (a ``ValueError``) Test rows that repeat development rows.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> rows = [rng.normal(c, 0.1, size=(200, 3)) for c in (0.0, 3.0, 0.0, 3.0)]
    >>> cert = mmd_certificate(*rows)
    >>> cert.kind, bool(cert.epsilon > 0), round(cert.deviation, 4)
    ('certificate', True, 0.4895)
    """
    da, db, ta, tb = as_dev_test(dev_a, dev_b, test_a, test_b)
    deltas = _check_options(n_certificates, confidence, delta, deltas, tv_link, bandwidth_scales)
    return _certify(da, db, ta, tb, tuple(float(c) for c in bandwidth_scales), tv_link, int(n_certificates),
                    confidence, delta, deltas, pair, None, check_reuse)


def mmd_certificate_pairs(
    groups: Mapping[Hashable, np.ndarray],
    pairs: Sequence[tuple[Hashable, Hashable]],
    *,
    test_groups: Mapping[Hashable, np.ndarray] | None = None,
    test_size: float = 0.3,
    bandwidth_scales: Sequence[float] = DEFAULT_BANDWIDTH_SCALES,
    tv_link: str = "sqrt2",
    n_certificates: int | None = None,
    confidence: float = 0.95,
    delta: float = 1e-5,
    deltas: Sequence[float] = DEFAULT_DELTAS,
    seed: int = 0,
    n_jobs: int | None = None,
    progress: bool = False,
    check_reuse: bool = True,
) -> list[MMDCertificate]:
    """MMD certificates for many pairs, all holding together at ``confidence``.

    Same splits as :func:`epsaudit.audits.roc_reserved.reserved_test_pairs` (pair ``k`` with
    each identity split once when ``test_groups`` is None, as for the reserved test).

    Parameters
    ----------
    groups : mapping identity -> array_like, shape (n_i, d)
    pairs : sequence of (identity, identity)
    test_groups : mapping, optional
    test_size : float
    bandwidth_scales, tv_link, confidence, delta, deltas, check_reuse
        As in :func:`mmd_certificate`.
    n_certificates : int, optional
        Family size; defaults to ``len(pairs)``; must be at least that.
    seed : int
    n_jobs : int, optional
    progress : bool

    Returns
    -------
    list of MMDCertificate, one per pair; a pair that cannot be certified (reused rows, a split
    too small, a zero median distance, ...) is *not computed*, with the reason, and stays in the
    family.

    Raises
    ------
    ValueError
        As :func:`mmd_certificate`, plus invalid ``groups``/``pairs`` or ``n_certificates``
        below the number of pairs.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> groups = {c: rng.normal(c, 0.1, size=(40, 3)) for c in (0, 1, 2)}
    >>> certs = mmd_certificate_pairs(groups, [(0, 1), (0, 2)])
    >>> certs[0].correction, certs[0].n
    ('bonferroni: 1 one-sided MMD deviation bound x 2 certificate(s)', (12, 12))
    """
    groups = as_groups(groups)
    pairs = as_pairs(pairs, groups)
    if test_groups is not None:
        test_groups = as_groups(test_groups)
        as_pairs(pairs, test_groups)
    deltas = _check_options(len(pairs) if n_certificates is None else n_certificates, confidence, delta, deltas,
                            tv_link, bandwidth_scales)
    m = family_size(pairs, n_certificates)
    scales = tuple(float(c) for c in bandwidth_scales)
    parts = pair_parts(groups, pairs, test_groups=test_groups, test_size=test_size, seed=seed)
    outs = map_certificates(
        _certify, parts, pairs,
        lambda a, b: (scales, tv_link, m, confidence, delta, deltas, (a, b), seed, check_reuse),
        desc=ROUTE, n_jobs=n_jobs, progress=progress, prefer="threads")
    return [out if not isinstance(out, PairFailure) else MMDCertificate.failed(
                out.reason, pair=(a, b), n=split_test_sizes(parts[k], groups, (a, b), test_size),
                confidence=confidence, alpha_per_bound=(1.0 - confidence) / m, correction=correction_label(m),
                tv_link=tv_link, delta=delta, deltas=deltas,
                settings=_settings(scales, tv_link, m, seed, check_reuse), details={"error": out.error})
            for k, ((a, b), out) in enumerate(zip(pairs, outs))]
