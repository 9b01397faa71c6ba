"""One result type for every epsilon-like number the compendium reports.

An epsilon-like number means nothing without its status (*Picture the Epsilon*, Table 1): ``"diagnostic"`` (a
model-based score with no DP interpretation), ``"estimate"`` (a sample value put into a valid population bound,
without confidence correction) or ``"certificate"`` (a lower confidence bound on epsilon under a stated sampling
model); the book's methods chapter, section 'Status of each route'. :class:`EpsilonResult` carries the number with
its status, sample sizes and, for certificates, the levels and correction; a route's secondary statistics are a
frozen :class:`RouteStatistics` dataclass, flattened to table columns. pandas is loaded only by :func:`results_frame`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pandas as pd

Kind = Literal["diagnostic", "estimate", "certificate"]
KINDS: tuple[str, ...] = ("diagnostic", "estimate", "certificate")
#: The bounds that make a reserved-test certificate from its test counts: the exact joint test (the default) and
#: the paper's split Clopper-Pearson bound (``EpsilonResult.bound``).
BOUNDS: tuple[str, ...] = ("joint", "clopper-pearson")
DEFAULT_BOUND = "joint"
#: Every name ``EpsilonResult.bound`` accepts: :data:`BOUNDS` and the anytime-valid sequential certificate's.
RESULT_BOUNDS: tuple[str, ...] = BOUNDS + ("anytime-valid",)
#: The fixed columns of :func:`results_frame`, in order (``setting_*`` and statistics follow).
FIRST_COLUMNS: tuple[str, ...] = ("route", "kind", "value", "not_computed", "identity_a", "identity_b", "n_a",
                                  "n_b", "delta", "confidence", "alpha_per_bound", "correction", "bound")


@dataclass(frozen=True)
class RouteStatistics:
    """Base class of a route's secondary statistics: a frozen dataclass, one field per statistic.

    See Also
    --------
    EpsilonResult : the result that holds one in ``statistics``.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Demo(RouteStatistics):
    ...     auc: float
    ...     tp: int
    >>> Demo(auc=0.75, tp=3).record()
    {'auc': 0.75, 'tp': 3}
    """

    def record(self) -> dict[str, Any]:
        """The statistics as ``{column name: value}``, in field order (non-scalar fields: override it).

        Returns
        -------
        dict

        Examples
        --------
        >>> RouteStatistics().record()
        {}
        """
        names = _FIELD_NAMES.get(type(self))
        if names is None:  # a dataclass's fields are fixed: look them up once per class
            names = _FIELD_NAMES[type(self)] = tuple(f.name for f in fields(self))
        return {name: getattr(self, name) for name in names}


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


class _ReadOnlyDetails(dict):
    """The ``details`` of an :class:`EpsilonResult`: a dict that refuses changes (pickles, copies, JSON as a dict)."""

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("EpsilonResult.details is read-only (the route's statistics are fixed when it is made)")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self):  # rebuild from a plain dict: unpickling must not call the refused __setitem__
        return type(self), (dict(self),)


def _same(a: Any, b: Any) -> bool:
    """Equal, or both NaN (a statistic recorded twice, e.g. after ``dataclasses.replace``)."""
    if a is b:
        return True
    try:
        if a == b:
            return True
    except (TypeError, ValueError):  # arrays: ambiguous truth value
        return False
    return isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)


@dataclass(frozen=True)
class EpsilonResult:
    """An epsilon-like number together with what it is.

    Attributes
    ----------
    value : float
        The number (natural-log units). ``+inf`` only for the out-of-fold ROC-HT estimate (the paper counts it).
    kind : {"diagnostic", "estimate", "certificate"}
    route : str
        Name of the audit route, e.g. ``"roc_reserved"``.
    n : tuple of int
        Sample sizes per class ``(n_A, n_B)``; for certificates the *test* sizes (positives, negatives).
    pair, delta : tuple or None, float or None
        The identity pair ``(A, B)`` audited and the delta of an (epsilon, delta) statement, when known or used.
    confidence, alpha_per_bound, correction : float, float, str or None
        A certificate's family-wise confidence (e.g. 0.95), the level of each test it is made of after the
        multiplicity correction, and that correction (e.g. ``"bonferroni: 1 joint test x 40 certificate(s)"``).
    bound : str or None
        Which bound made a certificate from its counts (:data:`RESULT_BOUNDS`): ``"joint"`` (the default),
        ``"clopper-pearson"`` (the paper's) or ``"anytime-valid"`` (sequential); ``None`` otherwise.
    settings : dict
        The method's hyperparameters (kernel bandwidth rule, classifier, folds, seed, ...).
    details : mapping
        Read-only view of the fields of ``statistics`` followed by any free ``details=`` entries (e.g. ``"error"``);
        ``result.details["auc"]`` equals ``result.statistics.auc``.
    not_computed : str or None
        Why the route could not compute this pair (naming the identities); then ``value`` is NaN -- the one
        documented NaN -- and is counted, not put into medians.
    statistics : RouteStatistics or None
        The route's secondary statistics (e.g. ``RocStatistics``).

    Raises
    ------
    ValueError
        If ``kind`` is unknown, a certificate lacks its confidence level, per-bound level, correction or sample
        sizes or names a bound not in :data:`RESULT_BOUNDS`, a non-certificate claims a confidence level, ``value``
        is NaN without a ``not_computed`` reason (or infinite for anything but an estimate), or a ``details`` entry
        contradicts the field of ``statistics`` of the same name.
    TypeError
        If ``statistics`` is not a :class:`RouteStatistics`.

    See Also
    --------
    results_frame : many results as a table.

    Examples
    --------
    >>> print(EpsilonResult(1.2, "certificate", "roc_reserved", (30, 30), confidence=0.95,
    ...                     alpha_per_bound=0.0125, correction="bonferroni x 2"))
    roc_reserved: epsilon = 1.2 (certificate, n = (30, 30)), 95% family-wise, each bound at 0.0125 (bonferroni x 2)
    """

    value: float
    kind: Kind
    route: str
    n: tuple[int, ...]
    pair: tuple[Any, Any] | None = None
    delta: float | None = None
    confidence: float | None = None
    alpha_per_bound: float | None = None
    correction: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    details: Mapping[str, Any] = field(default_factory=dict)
    not_computed: str | None = None
    statistics: RouteStatistics | None = None
    bound: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        value = float("nan") if self.not_computed is not None else float(self.value)
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "n", tuple(map(int, self.n)))
        object.__setattr__(self, "details", self._details_view())
        if self.not_computed is not None and not str(self.not_computed).strip():
            raise ValueError(f"{self.route}: not_computed must give the reason, got an empty string")
        if math.isnan(value) and self.not_computed is None:
            raise ValueError(f"{self.route}: value is NaN; routes must return a number")
        if math.isinf(value) and self.kind != "estimate":
            raise ValueError(f"{self.route}: an infinite value is only documented for estimates "
                             f"(out-of-fold ROC-HT), not for a {self.kind}")
        if self.kind == "certificate":
            missing = [name for name in ("confidence", "alpha_per_bound", "correction") if getattr(self, name) is None]
            if missing or not self.n:
                raise ValueError(f"{self.route}: a certificate must state its confidence level, per-bound "
                                 f"level, correction and sample sizes; missing {missing or ['n']}")
            if not 0.0 < self.confidence < 1.0:
                raise ValueError(f"confidence must be in (0, 1), got {self.confidence}")
            if self.bound is not None and self.bound not in RESULT_BOUNDS:
                raise ValueError(f"{self.route}: bound must be one of {RESULT_BOUNDS} or None, got {self.bound!r}")
        elif self.confidence is not None or self.alpha_per_bound is not None or self.bound is not None:
            raise ValueError(f"{self.route}: only certificates carry a confidence level; this is a {self.kind}")

    def _details_view(self) -> Mapping[str, Any]:
        """The statistics' record followed by the free entries, as a read-only mapping."""
        stats = self.statistics
        if stats is not None and not isinstance(stats, RouteStatistics):
            raise TypeError(f"{self.route}: statistics must be a RouteStatistics, got {type(stats).__name__}")
        record = stats.record() if stats is not None else {}
        if not self.details:
            return _ReadOnlyDetails(record)
        extra = dict(self.details)
        for key in [k for k in extra if k in record]:  # e.g. after dataclasses.replace: the view passed back
            if not _same(extra[key], record[key]):
                raise ValueError(f"{self.route}: details[{key!r}] = {extra[key]!r} contradicts the statistic "
                                 f"{key} = {record[key]!r}")
            del extra[key]
        return _ReadOnlyDetails({**record, **extra})

    @classmethod
    def many(cls, values: Iterable[float], pairs: Iterable[Any], ns: Iterable[tuple[int, ...]],
             statistics: Iterable[RouteStatistics | None], **common: Any) -> list[EpsilonResult]:
        """Computed results of one route that differ only in value, pair, sample sizes and statistics.

        The shared fields are checked once, on the first result; the others are copies with their own value
        (checked as the constructor checks it), pair, sizes and statistics.

        Parameters
        ----------
        values, pairs, ns, statistics : iterables of the same length
            Per result (statistics all of one :class:`RouteStatistics` class, or None).
        **common
            The other fields (not ``details`` or ``not_computed``).

        Returns
        -------
        list of EpsilonResult
            Equal to ``[EpsilonResult(value=v, pair=p, n=n, statistics=s, **common) ...]``.

        Raises
        ------
        ValueError
            As the constructor, for the first result or any value (NaN, or infinite for anything but an estimate);
            ``details`` or ``not_computed`` among ``common``.

        Examples
        --------
        >>> rs = EpsilonResult.many([0.5, 2.0], [("A", "B"), ("A", "C")], [(3, 3), (3, 4)], [None, None],
        ...                         kind="diagnostic", route="demo")
        >>> str(rs[1]) == str(EpsilonResult(2.0, "diagnostic", "demo", (3, 4)))
        True
        """
        if "details" in common or "not_computed" in common:
            raise ValueError("EpsilonResult.many makes computed results without free details; build the others "
                             "one by one")
        rows = list(zip(values, pairs, ns, statistics))
        if not rows:
            return []
        (v0, p0, n0, s0), rest = rows[0], rows[1:]
        first = cls(value=v0, pair=p0, n=n0, statistics=s0, **common)
        base = dict(first.__dict__)
        stats_type = type(s0)
        out = [first]
        for v, p, n, st in rest:
            value = float(v)
            if math.isnan(value) or (math.isinf(value) and first.kind != "estimate") or type(st) is not stats_type:
                out.append(cls(value=v, pair=p, n=n, statistics=st, **common))  # the constructor says why
                continue
            obj = object.__new__(cls)
            fields_ = dict(base)
            fields_.update(value=value, pair=p, n=tuple(map(int, n)), statistics=st,
                           details=_ReadOnlyDetails(st.record() if st is not None else {}))
            object.__setattr__(obj, "__dict__", fields_)
            out.append(obj)
        return out

    @property
    def computed(self) -> bool:
        """True unless the route could not compute this pair (see ``not_computed``).

        Examples
        --------
        >>> EpsilonResult(0.0, "diagnostic", "x", (2, 2), not_computed="constant coordinate").computed
        False
        """
        return self.not_computed is None

    @property
    def is_certificate(self) -> bool:
        """True when ``value`` is a lower confidence bound on epsilon.

        Examples
        --------
        >>> EpsilonResult(1.0, "diagnostic", "gaussmech", (30, 30)).is_certificate
        False
        """
        return self.kind == "certificate"

    def to_record(self) -> dict[str, Any]:
        """Flatten to one table row: the fixed fields, ``setting_*`` for each setting, then every statistic.

        Returns
        -------
        dict
            ``value, kind, route, delta, confidence, alpha_per_bound, correction, bound, not_computed, identity_a,
            identity_b, n_a, n_b``, the settings (non-scalars as their ``repr``), then the statistics.

        Examples
        --------
        >>> rec = EpsilonResult(2.0, "diagnostic", "kde_lr", (10, 12), pair=("a", "b"),
        ...                     settings={"alpha": 0.01}, details={"grid_edge_coordinates": 0}).to_record()
        >>> rec["identity_a"], rec["n_b"], rec["setting_alpha"], rec["grid_edge_coordinates"]
        ('a', 12, 0.01, 0)
        """
        record = {name: getattr(self, name) for name in ("value", "kind", "route", "delta", "confidence",
                                                          "alpha_per_bound", "correction", "bound", "not_computed")}
        record["identity_a"], record["identity_b"] = self.pair if self.pair is not None else (None, None)
        record["n_a"] = self.n[0] if len(self.n) > 0 else None
        record["n_b"] = self.n[1] if len(self.n) > 1 else None
        record.update({f"setting_{k}": _scalar(v) for k, v in self.settings.items()})
        record.update({k: _scalar(v) for k, v in self.details.items()})
        return record

    def __str__(self) -> str:
        if not self.computed:
            return f"{self.route}: not computed ({self.not_computed})"
        text = f"{self.route}: epsilon = {self.value:.4g} ({self.kind}, n = {self.n})"
        if self.is_certificate:
            text += f", {self.confidence:.0%} family-wise, each bound at {self.alpha_per_bound:.3g} ({self.correction})"
            if self.bound is not None:
                text += f", {self.bound} bound"
        return text


def _scalar(value: Any) -> Any:
    """Make a setting printable in a table cell (classifiers become their repr)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def results_frame(results: Iterable[EpsilonResult]) -> "pd.DataFrame":
    """Turn results into a table with one row per result and a ``kind`` column.

    Parameters
    ----------
    results : iterable of EpsilonResult

    Returns
    -------
    pandas.DataFrame
        Columns :data:`FIRST_COLUMNS`, then ``setting_*`` and statistic columns (:meth:`EpsilonResult.to_record`).
        ``value`` is NaN exactly where ``not_computed`` gives a reason.

    Raises
    ------
    TypeError
        If an element is not an :class:`EpsilonResult`.

    See Also
    --------
    EpsilonResult : the rows of the table.

    Examples
    --------
    >>> frame = results_frame([EpsilonResult(2.0, "diagnostic", "gaussmech", (30, 30), details={"sigma_a": 0.1})])
    >>> frame[["route", "kind", "value", "n_a", "sigma_a"]].to_dict("records")
    [{'route': 'gaussmech', 'kind': 'diagnostic', 'value': 2.0, 'n_a': 30, 'sigma_a': 0.1}]
    """
    import pandas as pd  # loaded on first use: `import epsaudit` stays light

    rows = []
    for i, result in enumerate(results):
        if not isinstance(result, EpsilonResult):
            raise TypeError(f"element {i} is a {type(result).__name__}, not an EpsilonResult")
        rows.append(result.to_record())
    first = list(FIRST_COLUMNS)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return pd.DataFrame(columns=first)
    return frame[first + [c for c in frame.columns if c not in first]]
