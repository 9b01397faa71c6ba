"""One result type for every epsilon-like number the compendium reports.

An epsilon-like number means nothing without its status (SPEC section 1; paper 001, Table 1):

* ``"diagnostic"`` -- a model-based score with no DP interpretation (GaussMech, KDE-LR);
* ``"estimate"`` -- a sample value put into a valid population bound, with no confidence
  correction (MMD-TV sample value, ROC-HT out-of-fold value);
* ``"certificate"`` -- a lower confidence bound on epsilon that holds with a stated probability
  under a stated sampling model (ROC-HT reserved test, DP-Sniper).

:class:`EpsilonResult` carries the number together with that status, the sample sizes it was
computed from and, for certificates, the confidence level, the per-bound level after the
multiplicity correction and the name of the correction.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Literal, Mapping

import pandas as pd

Kind = Literal["diagnostic", "estimate", "certificate"]
KINDS: tuple[str, ...] = ("diagnostic", "estimate", "certificate")


@dataclass(frozen=True)
class EpsilonResult:
    """An epsilon-like number together with what it is.

    Attributes
    ----------
    value : float
        The number (natural-log units of epsilon). ``+inf`` is allowed only for the out-of-fold
        ROC-HT estimate, where the paper reports it as a count.
    kind : {"diagnostic", "estimate", "certificate"}
        The formal status of ``value`` (SPEC section 1).
    route : str
        Name of the audit route, e.g. ``"gaussmech"``, ``"roc_reserved"``.
    n : tuple of int
        Sample sizes per class ``(n_A, n_B)`` that ``value`` was computed from. For certificates
        these are the *test* sizes (positives, negatives).
    pair : tuple or None
        The identity pair ``(A, B)`` audited, when known.
    delta : float or None
        The delta of an (epsilon, delta) statement, when the route uses one.
    confidence : float or None
        Family-wise confidence level of a certificate (e.g. 0.95). ``None`` otherwise.
    alpha_per_bound : float or None
        Level of each one-sided confidence bound after the multiplicity correction.
    correction : str or None
        The multiplicity correction, e.g. ``"bonferroni: 2 one-sided bounds x 40 certificates"``.
    settings : dict
        The method's hyperparameters (kernel bandwidth rule, classifier, folds, seed, ...).
    details : dict
        Secondary statistics the route computes alongside ``value`` (AUC, p-value, counts, ...).
    not_computed : str or None
        Why the route could not compute this pair (e.g. a coordinate constant within one
        identity for KDE-LR), naming the identities and the coordinate; ``None`` when computed.
        A result that was not computed has ``value`` NaN -- the one documented NaN -- and is
        left out of medians and counted instead.

    Raises
    ------
    ValueError
        If ``kind`` is unknown, a certificate lacks its confidence level, per-bound level,
        correction or sample sizes, a non-certificate claims a confidence level, or ``value`` is
        NaN without a ``not_computed`` reason (or infinite for anything but an estimate).
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

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        value = float("nan") if self.not_computed is not None else float(self.value)
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "n", tuple(int(k) for k in self.n))
        if self.not_computed is not None and not str(self.not_computed).strip():
            raise ValueError(f"{self.route}: not_computed must give the reason, got an empty string")
        if math.isnan(value) and self.not_computed is None:
            raise ValueError(f"{self.route}: value is NaN; routes must return a number")
        if math.isinf(value) and self.kind != "estimate":
            raise ValueError(
                f"{self.route}: an infinite value is only documented for estimates "
                f"(out-of-fold ROC-HT), not for a {self.kind}"
            )
        if self.kind == "certificate":
            missing = [
                name
                for name in ("confidence", "alpha_per_bound", "correction")
                if getattr(self, name) is None
            ]
            if missing or not self.n:
                raise ValueError(
                    f"{self.route}: a certificate must state its confidence level, per-bound "
                    f"level, correction and sample sizes; missing {missing or ['n']}"
                )
            if not 0.0 < self.confidence < 1.0:
                raise ValueError(f"confidence must be in (0, 1), got {self.confidence}")
        elif self.confidence is not None or self.alpha_per_bound is not None:
            raise ValueError(
                f"{self.route}: only certificates carry a confidence level; this is a {self.kind}"
            )

    @property
    def computed(self) -> bool:
        """True unless the route could not compute this pair (see ``not_computed``)."""
        return self.not_computed is None

    @property
    def is_certificate(self) -> bool:
        """True when ``value`` is a lower confidence bound on epsilon."""
        return self.kind == "certificate"

    def to_record(self) -> dict[str, Any]:
        """Flatten to one table row: the fixed fields, then ``settings`` and ``details``.

        Settings and details are prefixed (``setting_``/no prefix for details) so that a table of
        results from one route has one column per hyperparameter and per secondary statistic.
        """
        record = asdict(self)
        settings = record.pop("settings")
        details = record.pop("details")
        pair = record.pop("pair")
        record["identity_a"], record["identity_b"] = pair if pair is not None else (None, None)
        n = record.pop("n")
        record["n_a"] = n[0] if len(n) > 0 else None
        record["n_b"] = n[1] if len(n) > 1 else None
        record.update({f"setting_{k}": _scalar(v) for k, v in settings.items()})
        record.update({k: _scalar(v) for k, v in details.items()})
        return record

    def __str__(self) -> str:
        if not self.computed:
            return f"{self.route}: not computed ({self.not_computed})"
        text = f"{self.route}: epsilon = {self.value:.4g} ({self.kind}, n = {self.n})"
        if self.is_certificate:
            text += (
                f", {self.confidence:.0%} family-wise, each bound at {self.alpha_per_bound:.3g}"
                f" ({self.correction})"
            )
        return text


def _scalar(value: Any) -> Any:
    """Make a setting printable in a table cell (classifiers become their repr)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def results_frame(results: Iterable[EpsilonResult]) -> pd.DataFrame:
    """Turn results into a table with one row per result and a ``kind`` column.

    Parameters
    ----------
    results : iterable of EpsilonResult

    Returns
    -------
    pandas.DataFrame
        Columns ``route, kind, value, not_computed, identity_a, identity_b, n_a, n_b, delta,
        confidence, alpha_per_bound, correction``, then ``setting_*`` and detail columns.
        ``value`` is NaN exactly where ``not_computed`` gives a reason.

    Raises
    ------
    TypeError
        If an element is not an :class:`EpsilonResult`.
    """
    rows = []
    for i, result in enumerate(results):
        if not isinstance(result, EpsilonResult):
            raise TypeError(f"element {i} is a {type(result).__name__}, not an EpsilonResult")
        rows.append(result.to_record())
    first = ["route", "kind", "value", "not_computed", "identity_a", "identity_b", "n_a", "n_b", "delta",
             "confidence", "alpha_per_bound", "correction"]
    frame = pd.DataFrame(rows)
    if frame.empty:
        return pd.DataFrame(columns=first)
    return frame[first + [c for c in frame.columns if c not in first]]
