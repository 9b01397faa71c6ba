"""The same reserved test certified by another bound (joint or the paper's split Clopper-Pearson).

A reserved-test certificate's threshold is fixed on development rows the same way for both bounds,
so its test counts give either certificate without fitting again: chapters that show the joint
certificate beside *Picture the Epsilon*'s bound (Section IV-C) fit each test once.
"""

from __future__ import annotations

from dataclasses import replace

from ..bounds import bonferroni_alpha, bound_level, certifiable_cap, certified_epsilon, check_bound, correction_label
from ..results import EpsilonResult
from .roc_reserved import ROUTE, CertificateStatistics

__all__ = ["certificate_with_bound"]


def certificate_with_bound(result: EpsilonResult, bound: str) -> EpsilonResult:
    """The same reserved test's certificate by another bound: same threshold and test counts, other bound.

    The threshold is chosen on development rows the same way for both bounds, so one fit gives
    both certificates (e.g. the joint certificate and the paper's split Clopper-Pearson bound,
    *Picture the Epsilon*, Section IV-C, side by side) without fitting again.

    Parameters
    ----------
    result : EpsilonResult
        A certificate of :func:`~epsaudit.audits.reserved_test_certificate` or
        :func:`~epsaudit.audits.reserved_test_pairs`
        (route ``"roc_reserved"``), computed or not.
    bound : {"joint", "clopper-pearson"}

    Returns
    -------
    EpsilonResult
        ``value``, ``bound``, ``alpha_per_bound``, ``correction`` and the statistics' ``cap`` of
        ``bound``, at the same family size and confidence; a pair that was not computed stays so.

    Raises
    ------
    ValueError
        If ``result`` is not a reserved-test certificate, or ``bound`` is not one of
        :data:`epsaudit.bounds.BOUNDS`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.normal(3, 1, (60, 2)), rng.normal(-3, 1, (60, 2))
    >>> from epsaudit.audits import reserved_test_certificate
    >>> joint = reserved_test_certificate(a[:30], b[:30], a[30:], b[30:])
    >>> split = certificate_with_bound(joint, "clopper-pearson")
    >>> round(joint.value, 3), round(split.value, 3), split.bound
    (2.972, 2.034, 'clopper-pearson')
    """
    check_bound(bound)
    if result.route != ROUTE or result.kind != "certificate":
        raise ValueError(f"certificate_with_bound needs a reserved-test certificate (route {ROUTE!r}), "
                         f"got route {result.route!r}, kind {result.kind!r}")
    m = int(result.settings["n_certificates"])
    alpha = bonferroni_alpha(m, result.confidence)
    fields = {"bound": bound, "alpha_per_bound": bound_level(alpha, bound), "correction": correction_label(m, bound)}
    stats = result.statistics
    if not result.computed or not isinstance(stats, CertificateStatistics):
        return replace(result, **fields)
    n1, n0 = result.n
    value = float(certified_epsilon(stats.tp, n1, stats.fp, n0, alpha, result.delta, bound=bound))
    stats = replace(stats, cap=certifiable_cap(n1, n0, alpha, result.delta, bound=bound))
    free = {k: v for k, v in result.details.items() if k not in stats.record()}  # the statistics' entries are rebuilt
    return replace(result, value=value, statistics=stats, details=free, **fields)
