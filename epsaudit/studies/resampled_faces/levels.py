"""The levels and caps of chapter 5's families, for the library's default certificate and for the
paper's split Clopper-Pearson bound, in one place.

A family of ``K`` certificates at family-wise confidence ``c`` gives each certificate the error level
``(1 - c) / K`` (Bonferroni); the default (``joint``) certificate spends it on one exact test of both
error rates, the paper's bound (``clopper-pearson``) on two one-sided Clopper-Pearson bounds at half
of it each (*Picture the Epsilon*, Section IV-C). The functions below take the family and the
confidence, so the chapter never divides a level by hand.
"""

from __future__ import annotations

from typing import Any

from ... import bounds as _bounds

__all__ = ["DEFAULT_BOUND", "CP", "BOUNDS", "BOUND_LABEL", "certificate_level", "cap", "required_rows",
           "cp_from_counts", "bound_options"]

#: The paper's split bound.
CP = "clopper-pearson"
#: The library's default certificate (``joint``).
DEFAULT_BOUND: str = _bounds.DEFAULT_BOUND
BOUNDS: tuple[str, ...] = tuple(_bounds.BOUNDS)
#: How each bound is named on the page.
BOUND_LABEL = {"joint": "joint (default)", CP: "Clopper–Pearson (paper)"}


def certificate_level(family: int, confidence: float = 0.95) -> float:
    """The error level of each certificate of a family of ``family`` at ``confidence``.

    Examples
    --------
    >>> round(certificate_level(250), 12)
    0.0002
    """
    return (1.0 - confidence) / int(family)


def _alpha(family: int, confidence: float, bound: str) -> tuple[float, dict[str, Any]]:
    """The ``alpha`` argument and options of :mod:`epsaudit.bounds` for one certificate of the family."""
    return certificate_level(family, confidence), {"bound": _bounds.check_bound(bound)}


def cap(n_pos: int, n_neg: int, family: int, confidence: float = 0.95, delta: float = 1e-5,
        bound: str = DEFAULT_BOUND) -> float:
    """The largest value a certificate of the family can take with these test sizes (zero errors).

    Examples
    --------
    >>> round(cap(100, 100, 250, bound=CP), 3)  # Table 7 of Picture the Epsilon
    2.338
    """
    alpha, opts = _alpha(family, confidence, bound)
    return float(_bounds.certifiable_cap(int(n_pos), int(n_neg), alpha, delta, **opts))


def required_rows(epsilon: float, family: int, confidence: float = 0.95, delta: float = 1e-5,
                  bound: str = DEFAULT_BOUND) -> int:
    """Test rows per side a certificate of the family needs to certify ``epsilon`` (zero errors).

    Examples
    --------
    >>> required_rows(2.29, 250, bound=CP)
    96
    """
    alpha, opts = _alpha(family, confidence, bound)
    return int(_bounds.required_test_size(epsilon, alpha, delta, **opts))


def cp_from_counts(tp: int, n_pos: int, fp: int, n_neg: int, family: int, confidence: float = 0.95,
                   delta: float = 1e-5) -> float:
    """The paper's split Clopper-Pearson certificate from a reserved test's counts.

    Examples
    --------
    >>> round(cp_from_counts(100, 100, 0, 100, 250), 3)
    2.338
    """
    alpha, opts = _alpha(family, confidence, CP)
    return float(_bounds.certified_epsilon(int(tp), int(n_pos), int(fp), int(n_neg), alpha, delta, **opts))


def bound_options(bound: str = DEFAULT_BOUND) -> dict[str, Any]:
    """Keyword options selecting ``bound`` in :mod:`epsaudit.audits` calls (none for the default).

    Examples
    --------
    >>> bound_options(DEFAULT_BOUND)
    {}
    """
    return {} if bound == DEFAULT_BOUND else {"bound": _bounds.check_bound(bound)}
