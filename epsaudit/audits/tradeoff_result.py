"""The trade-off certificate as a result: the certified points of one pair and what they imply.

:class:`TradeoffCertificate` holds the band of :mod:`epsaudit.audits.tradeoff_curve` for one pair
(its thresholds, test counts and simultaneous upper limits), the epsilon curve and mu it certifies,
and the comparison with the single-threshold reserved test; :meth:`TradeoffCertificate.to_result`
turns it into an :class:`~epsaudit.results.EpsilonResult` whose statistics are a
:class:`TradeoffStatistics`; :func:`curves_frame` and :func:`summary_frame` tabulate many of them
(their points; one row each). How it is computed: :mod:`epsaudit.audits.tradeoff`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from ..bounds import joint_epsilon, tradeoff_delta, tradeoff_epsilon, tradeoff_mu
from ..results import EpsilonResult, RouteStatistics
from ..validation import check_probability
from .runner import PairFailure, not_computed
from .tradeoff_curve import METHODS, _lower_hull, epsilon_curve

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pandas as pd

ROUTE = "tradeoff_reserved"
#: Development statistics a certificate records in ``details`` (and its result in ``statistics``).
DEVELOPMENT_FIELDS: tuple[str, ...] = ("test_auc", "n_dev_a", "n_dev_b", "convergence_warnings")


def curve_columns(deltas: Sequence[float], epsilons: Sequence[float]) -> dict[str, float]:
    """An epsilon curve as table columns ``epsilon_at_delta_<delta>`` (``<delta>`` written with ``%g``).

    Parameters
    ----------
    deltas, epsilons : sequence of float, same length

    Returns
    -------
    dict

    Examples
    --------
    >>> curve_columns([0.0, 1e-5], [2.0, 1.5])
    {'epsilon_at_delta_0': 2.0, 'epsilon_at_delta_1e-05': 1.5}
    """
    return {f"epsilon_at_delta_{d:g}": float(e) for d, e in zip(deltas, epsilons)}


@dataclass(frozen=True)
class TradeoffStatistics(RouteStatistics):
    """What one trade-off certificate's headline epsilon comes with (columns of a results table).

    Attributes
    ----------
    mu_lower : float
        Certified lower bound on the Gaussian-DP parameter mu.
    best_threshold, fpr_upper, fnr_upper : float
        The point that attains the headline epsilon: its threshold and upper limits.
    n_points : int
        Certified points of the band.
    single_threshold, single_threshold_epsilon, same_threshold_epsilon, correction_cost : float
        The single-threshold reserved test on the same scores: its threshold and certificate, this
        band's bound at that threshold, and the difference.
    deltas, epsilon_at_delta : tuple of float
        The certified epsilon curve; :meth:`record` writes it as ``epsilon_at_delta_<delta>``.
    test_auc, n_dev_a, n_dev_b, convergence_warnings : float or int, optional
        Development statistics (:data:`DEVELOPMENT_FIELDS`); left out of the record when None.

    Examples
    --------
    >>> s = TradeoffStatistics(mu_lower=1.5, best_threshold=0.5, fpr_upper=0.1, fnr_upper=0.1, n_points=4,
    ...                        single_threshold=0.5, single_threshold_epsilon=2.0, same_threshold_epsilon=1.9,
    ...                        correction_cost=0.1, deltas=(0.0, 1e-5), epsilon_at_delta=(2.0, 1.9))
    >>> list(s.record())[-3:]
    ['correction_cost', 'epsilon_at_delta_0', 'epsilon_at_delta_1e-05']
    """

    mu_lower: float
    best_threshold: float
    fpr_upper: float
    fnr_upper: float
    n_points: int
    single_threshold: float
    single_threshold_epsilon: float
    same_threshold_epsilon: float
    correction_cost: float
    deltas: tuple[float, ...] = ()
    epsilon_at_delta: tuple[float, ...] = ()
    test_auc: float | None = None
    n_dev_a: int | None = None
    n_dev_b: int | None = None
    convergence_warnings: int | None = None

    def record(self) -> dict[str, Any]:
        """The statistics as columns: the point and comparison, the curve, then the development statistics.

        Returns
        -------
        dict

        Examples
        --------
        >>> TradeoffStatistics(1.0, 0.5, 0.1, 0.2, 3, 0.5, 1.0, 0.9, 0.1, (0.1,), (0.5,), n_dev_a=7).record()["n_dev_a"]
        7
        """
        out = {k: v for k, v in super().record().items() if k not in ("deltas", "epsilon_at_delta")
               and k not in DEVELOPMENT_FIELDS}
        out.update(curve_columns(self.deltas, self.epsilon_at_delta))
        out.update({k: getattr(self, k) for k in DEVELOPMENT_FIELDS if getattr(self, k) is not None})
        return out


def _frozen(values, dtype) -> np.ndarray:
    arr = np.array(values, dtype=dtype)
    arr.setflags(write=False)
    return arr


_ARRAYS = (("thresholds", np.float64), ("fp", np.int64), ("fn", np.int64), ("fpr_upper", np.float64),
           ("fnr_upper", np.float64), ("deltas", np.float64), ("epsilon_at_delta", np.float64))
_NUMBERS = ("mu_lower", "delta", "best_epsilon", "best_threshold", "single_threshold", "single_threshold_epsilon",
            "same_threshold_epsilon", "confidence", "alpha_per_bound")


@dataclass(frozen=True, eq=False)
class TradeoffCertificate:
    """A certified upper envelope of one pair's trade-off curve and what it implies.

    Attributes
    ----------
    pair : tuple or None
        Identities ``(A, B)``; A is the positive class.
    n : tuple of int
        Test sizes ``(n_A, n_B)``.
    method : {"bonferroni", "dkw"}
    confidence : float
        Family-wise confidence of every certificate reported together.
    alpha_per_bound : float
        Level of each one-sided Clopper-Pearson bound (Bonferroni) or failure probability of each
        identity's DKW band.
    correction : str
        The multiplicity correction in words.
    thresholds : numpy.ndarray, shape (K,)
        Thresholds of the certified points (rule: "identity A" when score > t).
    fp, fn : numpy.ndarray of int, shape (K,)
        Test counts: B rows scored > t, A rows scored <= t.
    fpr_upper, fnr_upper : numpy.ndarray, shape (K,)
        Simultaneous upper confidence limits of the false-positive and false-negative rates.
    deltas : numpy.ndarray, shape (J,)
    epsilon_at_delta : numpy.ndarray, shape (J,)
        Certified lower bound on epsilon at each delta (natural-log units, >= 0).
    mu_lower : float
        Certified lower bound on the Gaussian-DP parameter mu.
    delta : float
        The delta of ``best_epsilon``.
    best_epsilon : float
        Certified lower bound on epsilon at ``delta`` (the best point).
    best_threshold : float
        Threshold of the point that attains ``best_epsilon``.
    single_threshold : float
        The threshold the single-threshold reserved test chooses on the same development scores.
    single_threshold_epsilon : float
        That reserved-test certificate on the same test rows, at its own level (a comparison
        number, *not* part of this family).
    same_threshold_epsilon : float
        This band's epsilon bound at ``single_threshold``.
    joint_best_epsilon : float
        The best point by joint tests instead of the band's split bounds: the largest exact joint
        certificate (:func:`epsaudit.bounds.joint_epsilon`) over the band's development-fixed
        thresholds, each at the band's per-threshold level ``(1 - confidence) / (k m)`` (with
        ``method="dkw"``, whose points are read at test scores, the single development threshold
        at ``(1 - confidence) / m``). An alternative to ``best_epsilon`` from the same error
        budget, not a second statement beside it. NaN only when not computed.
    settings, details : dict
        Hyperparameters; development statistics (:data:`DEVELOPMENT_FIELDS`: ``test_auc``,
        ``n_dev_a``, ``n_dev_b``, ``convergence_warnings``; ``error`` when not computed).
    kind : str
        Always ``"certificate"``.
    route : str
        ``"tradeoff_reserved"``.
    not_computed : str or None
        Why the pair could not be certified (many-pairs runs only); then the arrays are empty and
        the numbers NaN, and the pair still counts in the family.

    Raises
    ------
    ValueError
        If the curve arrays differ in length, a rate lies outside [0, 1], ``kind`` is not
        ``"certificate"``, ``confidence`` is outside (0, 1) or ``method`` is unknown.

    Examples
    --------
    >>> from epsaudit.audits.tradeoff import tradeoff_certificate
    >>> rng = np.random.default_rng(0)
    >>> rows = [rng.normal(c, 1.0, size=(200, 3)) for c in (3.0, 0.0, 3.0, 0.0)]
    >>> cert = tradeoff_certificate(*rows, pair=("A", "B"))
    >>> cert.n, cert.n_points, list(cert.frame().columns[:4])
    ((200, 200), 4, ['identity_a', 'identity_b', 'method', 'threshold'])
    >>> bool(cert.envelope(0.1) <= 1.0), cert.to_result().kind
    (True, 'certificate')
    >>> bool(cert.epsilon(0.0) >= cert.epsilon(0.1)), bool(cert.delta_lower(1.0) > 0)
    (True, True)
    """

    pair: tuple[Any, Any] | None
    n: tuple[int, int]
    method: str
    confidence: float
    alpha_per_bound: float
    correction: str
    thresholds: np.ndarray
    fp: np.ndarray
    fn: np.ndarray
    fpr_upper: np.ndarray
    fnr_upper: np.ndarray
    deltas: np.ndarray
    epsilon_at_delta: np.ndarray
    mu_lower: float
    delta: float
    best_epsilon: float
    best_threshold: float
    single_threshold: float
    single_threshold_epsilon: float
    same_threshold_epsilon: float
    settings: Mapping[str, Any] = field(default_factory=dict)
    details: Mapping[str, Any] = field(default_factory=dict)
    kind: str = "certificate"
    route: str = ROUTE
    not_computed: str | None = None

    def __post_init__(self) -> None:
        if self.kind != "certificate":
            raise ValueError(f"a TradeoffCertificate is a certificate, got kind {self.kind!r}")
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        check_probability(self.confidence, "confidence")
        check_probability(self.alpha_per_bound, "alpha_per_bound")
        for name, dtype in _ARRAYS:
            object.__setattr__(self, name, _frozen(getattr(self, name), dtype))
        object.__setattr__(self, "n", tuple(int(v) for v in self.n))
        for name in _NUMBERS:
            object.__setattr__(self, name, float(getattr(self, name)))
        k = len(self.thresholds)
        if not (len(self.fp) == len(self.fn) == len(self.fpr_upper) == len(self.fnr_upper) == k):
            raise ValueError("thresholds, fp, fn, fpr_upper and fnr_upper must have one entry per certified point")
        if len(self.deltas) != len(self.epsilon_at_delta):
            raise ValueError("deltas and epsilon_at_delta must have the same length")
        if self.not_computed is not None:
            if not str(self.not_computed).strip():
                raise ValueError("not_computed must give the reason, got an empty string")
            return
        if k < 1:
            raise ValueError("a computed certificate needs at least one certified point")
        for name in ("fpr_upper", "fnr_upper"):
            values = getattr(self, name)
            if np.any(~((values >= 0) & (values <= 1))):
                raise ValueError(f"{name} must lie in [0, 1]")

    @classmethod
    def failed(cls, reason: str, *, pair, n, method, confidence, alpha_per_bound, correction, delta, deltas,
               settings=None, details=None) -> "TradeoffCertificate":
        """A certificate that could not be computed for ``pair`` (empty curve, NaN numbers, the reason)."""
        nan = float("nan")
        return cls(pair=pair, n=n, method=method, confidence=confidence, alpha_per_bound=alpha_per_bound,
                   correction=correction, thresholds=[], fp=[], fn=[], fpr_upper=[], fnr_upper=[],
                   deltas=deltas, epsilon_at_delta=np.full(len(deltas), nan), mu_lower=nan, delta=delta,
                   best_epsilon=nan, best_threshold=nan, single_threshold=nan, single_threshold_epsilon=nan,
                   same_threshold_epsilon=nan, settings=dict(settings or {}), details=dict(details or {}),
                   not_computed=reason)

    # -- derived numbers -------------------------------------------------------------------
    @cached_property
    def joint_best_epsilon(self) -> float:
        """The best point by joint tests (see the class attributes), computed when first asked for.

        Bonferroni: ``max`` over the certified points of :func:`epsaudit.bounds.joint_epsilon` on
        their test counts at ``2 * alpha_per_bound`` (one joint test in place of two one-sided
        bounds); DKW: ``single_threshold_epsilon``; NaN when not computed.
        """
        if not self.computed:
            return float("nan")
        if self.method != "bonferroni":
            return self.single_threshold_epsilon
        return float(np.max(joint_epsilon(self.fp, self.n[1], self.fn, self.n[0], 2 * self.alpha_per_bound,
                                          self.delta)))

    @property
    def computed(self) -> bool:
        """True unless the pair could not be certified (see ``not_computed``)."""
        return self.not_computed is None

    @property
    def n_points(self) -> int:
        """Number of certified points ``K``."""
        return len(self.thresholds)

    @property
    def correction_cost(self) -> float:
        """``single_threshold_epsilon - same_threshold_epsilon``: what the band's extra correction
        costs at the single-threshold test's threshold (>= 0 for Bonferroni)."""
        return self.single_threshold_epsilon - self.same_threshold_epsilon

    def epsilon(self, delta) -> np.ndarray | float:
        """Certified lower bound on epsilon at any ``delta`` in [0, 1) (scalar or array)."""
        self._require_computed()
        out = epsilon_curve(self.fpr_upper, self.fnr_upper, np.atleast_1d(delta))
        return float(out[0]) if np.ndim(delta) == 0 else out

    def delta_lower(self, epsilon) -> np.ndarray | float:
        """Certified lower bound on the privacy profile ``delta(epsilon)`` (scalar or array).

        ``max`` over the points of :func:`epsaudit.bounds.tradeoff_delta`.
        """
        self._require_computed()
        eps = np.atleast_1d(np.asarray(epsilon, dtype=np.float64))
        out = np.max(tradeoff_delta(self.fpr_upper[:, None], self.fnr_upper[:, None], eps[None, :]), axis=0)
        return float(out[0]) if np.ndim(epsilon) == 0 else out

    def envelope(self, fpr) -> np.ndarray | float:
        """Certified upper envelope of the trade-off curve ``T(P_B, P_A)`` at false-positive rate ``fpr``.

        The lower convex hull of the certified points and the trivial tests ``(0, 1)``, ``(1, 0)``
        (mixtures of tests are tests), evaluated by linear interpolation. The true curve lies on
        or below it with the certificate's confidence.

        Raises
        ------
        ValueError
            If ``fpr`` is outside [0, 1], or the certificate was not computed.
        """
        self._require_computed()
        f = np.asarray(fpr, dtype=np.float64)
        if np.any(~((f >= 0) & (f <= 1))):
            raise ValueError("fpr must lie in [0, 1]")
        hx, hy = _lower_hull(np.r_[0.0, self.fpr_upper, 1.0], np.r_[1.0, self.fnr_upper, 0.0])
        out = np.interp(f, hx, hy)
        return out[()] if out.ndim == 0 else out

    def _require_computed(self) -> None:
        if not self.computed:
            raise ValueError(f"the certificate of pair {self.pair!r} was not computed: {self.not_computed}")

    # -- tables ----------------------------------------------------------------------------
    def frame(self) -> "pd.DataFrame":
        """Tidy table of the certified points, one row per threshold (none if not computed).

        Columns ``identity_a, identity_b, method, threshold, fp, fn, n_a, n_b, fpr_hat, fnr_hat,
        fpr_upper, fnr_upper, epsilon`` (the point's bound at ``delta``) and ``mu`` (its bound on mu).
        """
        import pandas as pd

        a, b = self.pair if self.pair is not None else (None, None)
        return pd.DataFrame({
            "identity_a": a, "identity_b": b, "method": self.method,
            "threshold": self.thresholds, "fp": self.fp, "fn": self.fn,
            "n_a": self.n[0], "n_b": self.n[1],
            "fpr_hat": self.fp / self.n[1], "fnr_hat": self.fn / self.n[0],
            "fpr_upper": self.fpr_upper, "fnr_upper": self.fnr_upper,
            "epsilon": tradeoff_epsilon(self.fpr_upper, self.fnr_upper, self.delta),
            "mu": tradeoff_mu(self.fpr_upper, self.fnr_upper),
        })

    def epsilon_frame(self) -> "pd.DataFrame":
        """The certified epsilon curve: columns ``identity_a, identity_b, delta, epsilon``."""
        import pandas as pd

        a, b = self.pair if self.pair is not None else (None, None)
        return pd.DataFrame({"identity_a": a, "identity_b": b, "delta": self.deltas, "epsilon": self.epsilon_at_delta})

    def to_result(self) -> EpsilonResult:
        """The best single-point epsilon as an :class:`EpsilonResult` (``kind="certificate"``).

        Its ``statistics`` is a :class:`TradeoffStatistics`: ``mu_lower``, the best point, the
        comparison with the single-threshold certificate, the epsilon curve (columns
        ``epsilon_at_delta_<delta>``) and the development statistics of ``details``. A
        certificate that was not computed becomes a *not computed* result with the reason.

        Returns
        -------
        EpsilonResult

        Examples
        --------
        >>> cert = TradeoffCertificate.failed("too few rows", pair=("A", "B"), n=(1, 1), method="dkw",
        ...                                   confidence=0.95, alpha_per_bound=0.025, correction="DKW band",
        ...                                   delta=1e-5, deltas=[1e-5], details={"error": "ValueError"})
        >>> r = cert.to_result()
        >>> r.computed, r.details["error"]
        (False, 'ValueError')
        """
        fields = dict(kind="certificate", route=self.route, n=self.n, pair=self.pair, delta=self.delta,
                      confidence=self.confidence, alpha_per_bound=self.alpha_per_bound, correction=self.correction,
                      settings=dict(self.settings))
        if not self.computed:
            return not_computed(PairFailure(reason=self.not_computed, error=str(self.details.get("error", "ValueError"))),
                                **fields)
        best = int(np.flatnonzero(self.thresholds == self.best_threshold)[0])
        development = {k: self.details[k] for k in DEVELOPMENT_FIELDS if k in self.details}
        stats = TradeoffStatistics(
            mu_lower=self.mu_lower, best_threshold=self.best_threshold,
            fpr_upper=float(self.fpr_upper[best]), fnr_upper=float(self.fnr_upper[best]), n_points=self.n_points,
            single_threshold=self.single_threshold, single_threshold_epsilon=self.single_threshold_epsilon,
            same_threshold_epsilon=self.same_threshold_epsilon, correction_cost=self.correction_cost,
            deltas=tuple(float(d) for d in self.deltas), epsilon_at_delta=tuple(float(e) for e in self.epsilon_at_delta),
            **development)
        extra = {k: v for k, v in self.details.items() if k not in development}
        return EpsilonResult(value=self.best_epsilon, statistics=stats, details=extra, **fields)

    def __str__(self) -> str:
        if not self.computed:
            return f"{self.route}: not computed ({self.not_computed})"
        return (f"{self.route} ({self.method}): epsilon >= {self.best_epsilon:.4g} at delta = {self.delta:g}, "
                f"mu >= {self.mu_lower:.4g} ({self.confidence:.0%} family-wise, n = {self.n}, "
                f"{self.n_points} points, {self.correction})")


def curves_frame(certificates: Sequence[TradeoffCertificate]) -> "pd.DataFrame":
    """Concatenate :meth:`TradeoffCertificate.frame` of many certificates (one row per point).

    Raises
    ------
    TypeError
        If an element is not a :class:`TradeoffCertificate`.

    Examples
    --------
    >>> curves_frame([]).empty
    True
    """
    import pandas as pd

    frames = []
    for i, cert in enumerate(certificates):
        if not isinstance(cert, TradeoffCertificate):
            raise TypeError(f"element {i} is a {type(cert).__name__}, not a TradeoffCertificate")
        frames.append(cert.frame())
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


#: Columns of :func:`summary_frame`.
SUMMARY_FRAME_COLUMNS = ("identity_a", "identity_b", "n_test_a", "n_test_b", "points", "mu_lower", "best_epsilon",
                         "single_threshold_epsilon", "correction_cost", "gain", "joint_best_epsilon", "joint_gain",
                         "delta", "confidence", "alpha_per_bound", "not_computed")


def summary_frame(certificates: Sequence[TradeoffCertificate]) -> "pd.DataFrame":
    """One row per trade-off certificate: what it certifies beside the single-threshold reserved test.

    Parameters
    ----------
    certificates : sequence of TradeoffCertificate

    Returns
    -------
    pandas.DataFrame
        Columns :data:`SUMMARY_FRAME_COLUMNS`: the pair and its test sizes, ``points`` (certified
        points ``K``), ``mu_lower`` (certified Gaussian-DP mu), ``best_epsilon`` (the best
        single-point epsilon at ``delta``), ``single_threshold_epsilon`` (the reserved-test
        certificate on the same rows at its own level), ``correction_cost`` (what the band's
        extra correction costs at the reserved test's threshold, >= 0 for Bonferroni),
        ``gain = best_epsilon - single_threshold_epsilon`` (negative when the other thresholds do
        not make up the cost), ``joint_best_epsilon`` (the best point by joint tests at the band's
        per-threshold level) and ``joint_gain = joint_best_epsilon - single_threshold_epsilon``,
        ``delta``, ``confidence``, ``alpha_per_bound`` and ``not_computed``
        (the reason, or None; the numbers are then NaN).

    Raises
    ------
    TypeError
        If an element is not a :class:`TradeoffCertificate`.

    Examples
    --------
    >>> from epsaudit.audits.tradeoff import tradeoff_certificate
    >>> rng = np.random.default_rng(0)
    >>> rows = [rng.normal(c, 1.0, size=(200, 1)) for c in (3.0, 0.0, 3.0, 0.0)]
    >>> row = summary_frame([tradeoff_certificate(*rows, score_function=lambda x: x[:, 0])]).iloc[0]
    >>> int(row["points"]), bool(row["correction_cost"] >= 0), bool(row["gain"] >= -row["correction_cost"])
    (4, True, True)
    """
    import pandas as pd

    rows = []
    for i, cert in enumerate(certificates):
        if not isinstance(cert, TradeoffCertificate):
            raise TypeError(f"element {i} is a {type(cert).__name__}, not a TradeoffCertificate")
        a, b = cert.pair if cert.pair is not None else (None, None)
        rows.append({"identity_a": a, "identity_b": b, "n_test_a": cert.n[0], "n_test_b": cert.n[1],
                     "points": cert.n_points, "mu_lower": cert.mu_lower, "best_epsilon": cert.best_epsilon,
                     "single_threshold_epsilon": cert.single_threshold_epsilon,
                     "correction_cost": cert.correction_cost,
                     "gain": cert.best_epsilon - cert.single_threshold_epsilon,
                     "joint_best_epsilon": cert.joint_best_epsilon,
                     "joint_gain": cert.joint_best_epsilon - cert.single_threshold_epsilon, "delta": cert.delta,
                     "confidence": cert.confidence, "alpha_per_bound": cert.alpha_per_bound,
                     "not_computed": cert.not_computed})
    return pd.DataFrame(rows, columns=list(SUMMARY_FRAME_COLUMNS))
