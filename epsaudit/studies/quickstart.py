"""Audit a mechanism in ten minutes: the book's first chapter, on one pair of known epsilon.

Two identities release ``mu_i + Laplace(0, 1)`` noise per coordinate in ``d = 2`` dimensions
(:class:`epsaudit.mechanisms.ProductLaplace`); their means differ by ``epsilon / d`` in every
coordinate, so the pair is exactly ``epsilon``-DP. The chapter runs the four routes of *Picture the
Epsilon* (Section III) on draws of this pair and on the exact null (two identical identities), then
one reserved-test certificate, and shows the cap a test size puts on any certificate.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..audits import gaussmech_epsilon, kde_lr_epsilon, mmd_tv_epsilon, reserved_test_certificate, roc_oof_epsilon
from ..bounds import bonferroni_alpha, certifiable_cap, required_test_size
from ..mechanisms import ProductLaplace
from ..results import EpsilonResult
from . import choose_profile

__all__ = ["PROFILES", "profile_settings", "pair_mechanism", "four_routes", "route_table", "certificate",
           "certificate_table", "cap_table", "smallest_certifying_sizes", "EpsilonResult"]

#: Run profiles: ``n`` rows per identity for the routes and the certificate, ``sizes`` of the cap
#: table. Every profile finishes in well under a minute; "full" and "paper" are the same.
PROFILES: dict[str, dict[str, Any]] = {
    "smoke": {"n": 100, "sizes": (10, 30, 100, 300, 1000)},
    "full": {"n": 300, "sizes": (10, 30, 100, 300, 1000, 3000)},
    "paper": {"n": 300, "sizes": (10, 30, 100, 300, 1000, 3000)},  # no paper counterpart: = full
}
ROUTE_LABELS = {"gaussmech": "GaussMech", "kde_lr": "KDE-LR (alpha 0.01)", "mmd_tv": "MMD-TV",
                "roc_oof": "ROC-HT out-of-fold"}


def profile_settings(name: str) -> dict[str, Any]:
    """The settings of profile ``name`` (``"smoke"``, ``"full"`` or ``"paper"``).

    Examples
    --------
    >>> profile_settings("smoke")["n"]
    100
    """
    return choose_profile(PROFILES, name, "Audit a mechanism in ten minutes")


def pair_mechanism(epsilon: float, dim: int = 2) -> ProductLaplace:
    """Two identities whose product-Laplace outputs are exactly ``epsilon``-DP.

    Identity 1 is centred at 0, identity 0 at ``epsilon / dim`` in every coordinate, with
    Laplace scale 1, so ``||mu_0 - mu_1||_1 / b = epsilon`` (0 gives the exact null).

    Parameters
    ----------
    epsilon : float, >= 0
    dim : int
        Output dimension ``d``.

    Returns
    -------
    ProductLaplace

    Examples
    --------
    >>> pair_mechanism(1.0).exact_epsilon(0, 1)
    1.0
    """
    prototypes = np.vstack([np.full(dim, epsilon / dim), np.zeros(dim)])
    return ProductLaplace(prototypes, 1.0)


def four_routes(mechanism: ProductLaplace, n: int, seed: int = 0) -> list[EpsilonResult]:
    """The four routes on ``n`` fresh outputs of each identity: two diagnostics, two estimates.

    Returns
    -------
    list of EpsilonResult
        GaussMech, KDE-LR (alpha 0.01), MMD-TV, ROC-HT out-of-fold, in that order.
    """
    draws = mechanism.sample_groups(n, seed=("quickstart", seed, "routes"))
    x_a, x_b = draws[0], draws[1]
    return [gaussmech_epsilon(x_a, x_b), kde_lr_epsilon(x_a, x_b, alpha=0.01), mmd_tv_epsilon(x_a, x_b),
            roc_oof_epsilon(x_a, x_b, seed=seed)]


def route_table(epsilons: tuple[float, ...] = (0.0, 1.0), n: int = 300, seed: int = 0, dim: int = 2) -> pd.DataFrame:
    """Each route's number beside the exact epsilon, for every pair in ``epsilons``, in ``dim`` dimensions.

    Returns
    -------
    pandas.DataFrame
        One row per route (``route``, ``kind``), one column per exact epsilon.
    """
    runs = {eps: four_routes(pair_mechanism(eps, dim), n, seed) for eps in epsilons}
    kinds = [r.kind for r in runs[epsilons[0]]]
    index = pd.MultiIndex.from_arrays([list(ROUTE_LABELS.values()), kinds], names=["route", "kind"])
    return pd.DataFrame({f"exact epsilon {eps:g}": [r.value for r in results] for eps, results in runs.items()},
                        index=index)


def certificate(epsilon: float, n: int, seed: int = 0, *, learned: bool = False,
                confidence: float = 0.95) -> EpsilonResult:
    """One reserved-test certificate: ``n`` development and ``n`` fresh test outputs per identity.

    Parameters
    ----------
    epsilon : float
        The pair's exact epsilon (:func:`pair_mechanism`).
    n : int
        Development rows and test rows per identity.
    seed : int
    learned : bool
        Fit the default logistic regression on the development rows (True) or use the exact
        likelihood-ratio score of the mechanism (False, the best any test can do).
    confidence : float

    Returns
    -------
    EpsilonResult
        ``kind == "certificate"``: with probability at least ``confidence`` the pair's true
        epsilon is at least ``value``.
    """
    mech = pair_mechanism(epsilon)
    dev = mech.sample_groups(n, seed=("quickstart", seed, "dev"))
    test = mech.sample_groups(n, seed=("quickstart", seed, "test"))
    # outputs on the mechanism's grid can repeat by value in two dimensions: the draws are fresh by
    # construction (separate streams), so the value check of reused rows is off where it would misfire
    return reserved_test_certificate(dev[0], dev[1], test[0], test[1], confidence=confidence, delta=0.0,
                                     score_function=None if learned else mech.exact_score(0, 1), pair=(0, 1),
                                     check_reuse=not mech.repeated_outputs)


def certificate_table(epsilons: tuple[float, ...], n: int, seed: int = 0) -> pd.DataFrame:
    """Certificates with the exact score and with a learned score, beside the truth and the cap.

    Returns
    -------
    pandas.DataFrame
        Columns ``exact epsilon``, ``certificate (exact score)``, ``certificate (learned)`` and
        ``cap`` (the most ``n`` test rows per identity can certify).
    """
    rows = []
    for eps in epsilons:
        exact, learned = certificate(eps, n, seed), certificate(eps, n, seed, learned=True)
        rows.append({"exact epsilon": eps, "certificate (exact score)": exact.value,
                     "certificate (learned)": learned.value, "cap": exact.details["cap"]})
    return pd.DataFrame(rows)


def cap_table(sizes: tuple[int, ...], families: tuple[int, ...] = (1, 40, 500), confidence: float = 0.95,
              delta: float = 0.0) -> pd.DataFrame:
    """The largest epsilon a reserved test can certify, by test size and Bonferroni family size.

    Zero test errors in both classes (:func:`epsaudit.bounds.certifiable_cap`).

    Returns
    -------
    pandas.DataFrame
        Index: test rows per identity; one column per family size (``"<m> certificate(s)"``).

    Examples
    --------
    >>> cap_table((30, 100), families=(1,)).round(3)["1 certificate(s)"].tolist()
    [2.034, 3.281]
    """
    table = {f"{m} certificate(s)": [certifiable_cap(n, n, bonferroni_alpha(m, confidence), delta) for n in sizes]
             for m in families}
    return pd.DataFrame(table, index=pd.Index(list(sizes), name="test rows per identity"))


def smallest_certifying_sizes(families: tuple[int, ...] = (1, 40, 500), confidence: float = 0.95,
                              delta: float = 0.0) -> pd.Series:
    """The smallest test size per identity that can certify anything above 0, per family size.

    Examples
    --------
    >>> smallest_certifying_sizes((1, 40)).tolist()
    [6, 11]
    """
    return pd.Series({f"{m} certificate(s)": required_test_size(0.0, bonferroni_alpha(m, confidence), delta)
                      for m in families}, name="smallest test rows per identity")
