"""Audit a mechanism in ten minutes: the book's first chapter, on one pair of known epsilon.

Two identities release ``mu_i + Laplace(0, 1)`` noise per coordinate in ``d = 2`` dimensions
(:class:`epsaudit.mechanisms.ProductLaplace`); their means differ by ``epsilon / d`` in every
coordinate, so the pair is exactly ``epsilon``-DP. With ``mechanism="gaussian"`` they release
``mu_i + N(0, I)`` instead (:class:`epsaudit.mechanisms.IsotropicGaussian`), the means
``gaussian_mu_for_epsilon(epsilon)`` apart, so the pair is exactly ``(epsilon, 1e-5)``-DP. The chapter
runs the four routes of *Picture the Epsilon* (Section III) on draws of this pair and on the exact
null (two identical identities), then reserved-test certificates with the joint bound (the default)
and the paper's Clopper-Pearson bound, and shows the cap a test size puts on any certificate. The
page's parameters (:data:`PARAMETERS`), its number-dependent phrases (:func:`route_numbers`,
:func:`certificate_numbers`) and its display tables (``*_view``: readable labels, no integer index,
numbers written by :func:`number`) are here too.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ..audits import gaussmech_epsilon, kde_lr_epsilon, mmd_tv_epsilon, reserved_test_certificate, roc_oof_epsilon
from ..bounds import bonferroni_alpha, certifiable_cap, gaussian_mu_for_epsilon, required_test_size
from ..mechanisms import IsotropicGaussian, ProductLaplace
from ..results import EpsilonResult
from . import choose_profile
from .parameters import PROFILE, SEED, Parameter

__all__ = ["PROFILES", "PARAMETERS", "MECHANISMS", "BOUND_LABELS", "settings", "profile_settings", "route_frame", "pair_mechanism", "four_routes", "route_table", "certificate",
           "certificate_table", "cap_table", "smallest_certifying_sizes", "EpsilonResult", "route_numbers",
           "certificate_numbers", "route_view", "certificate_view", "cap_view", "sizes_view", "number", "cap_comparison",
           "cap_comparison_view", "size_exercise_sentence", "learned_exercise_sentence", "route_moves",
           "errors_sentence"]

#: Run profiles: ``n`` rows per identity for the routes and the certificate, ``sizes`` of the cap
#: table. Every profile finishes in well under a minute; "full" and "paper" are the same.
PROFILES: dict[str, dict[str, Any]] = {
    "smoke": {"n": 100, "sizes": (10, 30, 100, 300, 1000)},
    "full": {"n": 300, "sizes": (10, 30, 100, 300, 1000, 3000)},
    "paper": {"n": 300, "sizes": (10, 30, 100, 300, 1000, 3000)},  # no paper counterpart: = full
}
#: The mechanisms the page can audit (its ``mechanism`` parameter) and how the prose names them.
MECHANISMS = {"laplace": "product Laplace noise of scale 1 in each of two coordinates (pure DP)",
              "gaussian": "Gaussian noise of standard deviation 1 in each of two coordinates "
                          "(approximate DP at δ = 10⁻⁵)"}
#: The two certificates' names in tables and prose.
BOUND_LABELS = {"joint": "joint", "clopper-pearson": "Clopper-Pearson (paper)"}

#: The page's papermill parameters (checked by :func:`epsaudit.studies.parameters.check`).
PARAMETERS = (
    PROFILE,
    Parameter("epsilon", float, "exact epsilon of the audited pair (nats)", low=0.0, high=8.0),
    Parameter("n", int, "development rows and test rows per identity (None: the profile's)", low=10, high=10_000,
              optional=True),
    Parameter("mechanism", str, "noise of the two identities", choices=tuple(MECHANISMS)),
    SEED,
)
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


def settings(profile: str, n: int | None) -> dict[str, Any]:
    """The profile's settings with the page's ``n`` parameter applied (``None`` keeps the profile's).

    Examples
    --------
    >>> settings("smoke", None)["n"], settings("smoke", 30)["n"]
    (100, 30)
    """
    out = profile_settings(profile)
    if n is not None:
        out["n"] = int(n)
    return out


def pair_mechanism(epsilon: float, dim: int = 2, mechanism: str = "laplace") -> ProductLaplace | IsotropicGaussian:
    """Two identities whose outputs are exactly ``epsilon``-DP (Laplace) or ``(epsilon, 1e-5)``-DP (Gaussian).

    Laplace: identity 1 is centred at 0, identity 0 at ``epsilon / dim`` in every coordinate, with
    Laplace scale 1, so ``||mu_0 - mu_1||_1 / b = epsilon``. Gaussian: the means are
    ``D = gaussian_mu_for_epsilon(epsilon, 1e-5)`` apart along the diagonal, noise ``N(0, I)``. An
    ``epsilon`` of 0 gives the exact null.

    Parameters
    ----------
    epsilon : float, >= 0
    dim : int
        Output dimension ``d``.
    mechanism : {"laplace", "gaussian"}

    Returns
    -------
    ProductLaplace or IsotropicGaussian

    Raises
    ------
    ValueError
        If ``mechanism`` is not one of :data:`MECHANISMS`.

    Examples
    --------
    >>> pair_mechanism(1.0).exact_epsilon(0, 1)
    1.0
    >>> round(pair_mechanism(1.0, mechanism="gaussian").exact_epsilon(0, 1), 6)
    1.0
    """
    if mechanism == "laplace":
        return ProductLaplace(np.vstack([np.full(dim, epsilon / dim), np.zeros(dim)]), 1.0)
    if mechanism == "gaussian":
        separation = gaussian_mu_for_epsilon(epsilon, 1e-5) if epsilon > 0 else 0.0
        return IsotropicGaussian(np.vstack([np.full(dim, separation / np.sqrt(dim)), np.zeros(dim)]), 1.0, delta=1e-5)
    raise ValueError(f"mechanism must be one of {tuple(MECHANISMS)}, got {mechanism!r}")


def four_routes(mechanism, n: int, seed: int = 0) -> list[EpsilonResult]:
    """The four routes on ``n`` fresh outputs of each identity: two diagnostics, two estimates.

    Parameters
    ----------
    mechanism : ProductLaplace or IsotropicGaussian
        A :func:`pair_mechanism`.
    n : int
    seed : int

    Returns
    -------
    list of EpsilonResult
        GaussMech, KDE-LR (alpha 0.01), MMD-TV, ROC-HT out-of-fold, in that order.
    """
    draws = mechanism.sample_groups(n, seed=("quickstart", seed, "routes"))
    x_a, x_b = draws[0], draws[1]
    return [gaussmech_epsilon(x_a, x_b), kde_lr_epsilon(x_a, x_b, alpha=0.01), mmd_tv_epsilon(x_a, x_b),
            roc_oof_epsilon(x_a, x_b, seed=seed)]


def route_frame(runs: dict[float, list[EpsilonResult]]) -> pd.DataFrame:
    """The four routes' values per exact epsilon, as :func:`route_table` returns them.

    Parameters
    ----------
    runs : dict exact epsilon (or column label) -> list of EpsilonResult
        Each :func:`four_routes` (GaussMech, KDE-LR, MMD-TV, ROC-HT out-of-fold).

    Returns
    -------
    pandas.DataFrame
        One row per route (``route``, ``kind``), one column per entry (``"exact epsilon <e>"`` for a
        number key, the key itself for a label).
    """
    first = next(iter(runs.values()))
    index = pd.MultiIndex.from_arrays([list(ROUTE_LABELS.values()), [r.kind for r in first]], names=["route", "kind"])
    return pd.DataFrame({(key if isinstance(key, str) else f"exact epsilon {key:g}"): [r.value for r in results]
                         for key, results in runs.items()}, index=index)


def route_table(epsilons: tuple[float, ...] = (0.0, 1.0), n: int = 300, seed: int = 0, dim: int = 2,
                mechanism: str = "laplace") -> pd.DataFrame:
    """Each route's number beside the exact epsilon, for every pair in ``epsilons``, in ``dim`` dimensions.

    Returns
    -------
    pandas.DataFrame
        One row per route (``route``, ``kind``), one column per exact epsilon.
    """
    return route_frame({eps: four_routes(pair_mechanism(eps, dim, mechanism), n, seed) for eps in epsilons})


def certificate(epsilon: float, n: int, seed: int = 0, *, learned: bool = False,
                confidence: float = 0.95, bound: str = "joint", mechanism: str = "laplace") -> EpsilonResult:
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
    bound : {"joint", "clopper-pearson"}
        The joint certificate (default) or the paper's split Clopper-Pearson bound.
    mechanism : {"laplace", "gaussian"}

    Returns
    -------
    EpsilonResult
        ``kind == "certificate"``: with probability at least ``confidence`` the pair's true
        epsilon is at least ``value``.
    """
    mech = pair_mechanism(epsilon, mechanism=mechanism)
    dev = mech.sample_groups(n, seed=("quickstart", seed, "dev"))
    test = mech.sample_groups(n, seed=("quickstart", seed, "test"))
    # outputs on the mechanism's grid can repeat by value in two dimensions: the draws are fresh by
    # construction (separate streams), so the value check of reused rows is off where it would misfire
    return reserved_test_certificate(dev[0], dev[1], test[0], test[1], confidence=confidence, delta=mech.delta,
                                     score_function=None if learned else mech.exact_score(0, 1), pair=(0, 1),
                                     check_reuse=not mech.repeated_outputs, bound=bound)


def certificate_table(epsilons: tuple[float, ...], n: int, seed: int = 0, mechanism: str = "laplace") -> pd.DataFrame:
    """Certificates with the exact score and with a learned score, beside the truth and the cap.

    The joint certificate (the default) of each test, and the paper's Clopper-Pearson certificate of
    the exact score on the same rows.

    Returns
    -------
    pandas.DataFrame
        Columns ``exact epsilon``, ``certificate (exact score)``, ``certificate (learned)``,
        ``certificate (exact score, Clopper-Pearson)``, ``cap`` and ``cap (Clopper-Pearson)`` (the
        most ``n`` test rows per identity can certify with each bound).
    """
    rows = []
    for eps in epsilons:
        exact, learned = certificate(eps, n, seed, mechanism=mechanism), certificate(eps, n, seed, learned=True,
                                                                                      mechanism=mechanism)
        paper = certificate(eps, n, seed, mechanism=mechanism, bound="clopper-pearson")
        rows.append({"exact epsilon": eps, "certificate (exact score)": exact.value,
                     "certificate (learned)": learned.value, "certificate (exact score, Clopper-Pearson)": paper.value,
                     "cap": exact.details["cap"], "cap (Clopper-Pearson)": paper.details["cap"]})
    return pd.DataFrame(rows)


def cap_table(sizes: tuple[int, ...], families: tuple[int, ...] = (1, 40, 500), confidence: float = 0.95,
              delta: float = 0.0, bound: str = "joint") -> pd.DataFrame:
    """The largest epsilon a reserved test can certify, by test size and Bonferroni family size.

    Zero test errors in both classes (:func:`epsaudit.bounds.certifiable_cap`), with ``bound``
    (the joint certificate, or the paper's ``"clopper-pearson"``).

    Returns
    -------
    pandas.DataFrame
        Index: test rows per identity; one column per family size (``"<m> certificate(s)"``).

    Examples
    --------
    >>> cap_table((30, 100), families=(1,), bound="clopper-pearson").round(3)["1 certificate(s)"].tolist()
    [2.034, 3.281]
    >>> cap_table((30, 100), families=(1,)).round(3)["1 certificate(s)"].tolist()
    [2.972, 4.194]
    """
    table = {f"{m} certificate(s)": [certifiable_cap(n, n, bonferroni_alpha(m, confidence), delta, bound=bound)
                                     for n in sizes] for m in families}
    return pd.DataFrame(table, index=pd.Index(list(sizes), name="test rows per identity"))


def smallest_certifying_sizes(families: tuple[int, ...] = (1, 40, 500), confidence: float = 0.95,
                              delta: float = 0.0, epsilon: float = 0.0, bound: str = "joint") -> pd.Series:
    """The smallest test size per identity that can certify more than ``epsilon``, per family size.

    Zero test errors (a perfect test), with ``bound``.

    Examples
    --------
    >>> smallest_certifying_sizes((1, 40), bound="clopper-pearson").tolist()
    [6, 11]
    """
    return pd.Series({f"{m} certificate(s)": required_test_size(epsilon, bonferroni_alpha(m, confidence), delta,
                                                                bound=bound)
                      for m in families}, name="smallest test rows per identity")


# ---------------------------------------------------------------------------------------------
# The page's wording and display tables (numbers written once, the same in tables and prose)
# ---------------------------------------------------------------------------------------------

#: Decimal digits of the route values and of the certificates and caps, in tables and prose.
ROUTE_DIGITS, CERT_DIGITS = 3, 2


def number(value: Any, digits: int) -> str:
    """One number as the page writes it: fixed digits, no negative zero, ``+∞`` for infinity.

    Examples
    --------
    >>> number(-0.0001, 2), number(float("inf"), 3), number(3.28134, 2)
    ('0.00', '+∞', '3.28')
    """
    value = float(value)
    if math.isinf(value):
        return "+∞" if value > 0 else "−∞"
    return f"{round(value, digits) + 0.0:.{digits}f}"


def route_numbers(routes: pd.DataFrame, high: pd.DataFrame, epsilon: float | None = None) -> dict[str, Any]:
    """The numbers and number-dependent phrases the route section cites (``qs_*`` glue keys).

    Parameters
    ----------
    routes : DataFrame
        :func:`route_table` at the exact null and at epsilon 1, in two dimensions.
    high : DataFrame
        :func:`route_table` at the exact null in 512 dimensions.
    epsilon : float, optional
        The exact epsilon of the second column (0: it is a second draw of the exact null).

    Returns
    -------
    dict
        ``qs_gm_null``, ``qs_kde_null``, ``qs_kde_one``, ``qs_mmd_one``, ``qs_gm_null_512``,
        ``qs_kde_null_512`` and the phrases ``qs_kde_phrase`` (does KDE-LR order the two pairs?)
        and ``qs_roc_phrase`` (ROC-HT at the null).

    Examples
    --------
    >>> index = pd.MultiIndex.from_arrays([["g", "k", "m", "r"], ["d", "d", "e", "e"]])
    >>> routes = pd.DataFrame({"0": [1.5, 5.2, 0.08, float("inf")], "1": [1.1, 4.3, 0.14, float("inf")]}, index=index)
    >>> route_numbers(routes, routes)["qs_kde_phrase"]
    'it does not even order the two pairs'
    """
    kde_null, kde_one, roc_null = (float(v) for v in (routes.iloc[1, 0], routes.iloc[1, 1], routes.iloc[3, 0]))
    kde_phrase = ("both are the exact null here, and it still gives two numbers far from 0" if epsilon == 0 else
                  "it does not even order the two pairs" if kde_null >= kde_one else
                  "it orders the two pairs, but its values are not the pairs' epsilons")
    roc_phrase = ("it is +∞ at the exact null" if math.isinf(roc_null) else
                  f"it can be +∞ at the exact null ({number(roc_null, ROUTE_DIGITS)} on this draw)")
    return {"qs_gm_null": float(routes.iloc[0, 0]), "qs_kde_null": kde_null, "qs_kde_one": kde_one,
            "qs_mmd_one": float(routes.iloc[2, 1]), "qs_gm_null_512": float(high.iloc[0, 0]),
            "qs_kde_null_512": float(high.iloc[1, 0]), "qs_kde_phrase": kde_phrase, "qs_roc_phrase": roc_phrase}


def _this_pair(certs: pd.DataFrame, this: float | None) -> dict[str, Any]:
    """The certificates of the page's own pair (exact epsilon ``this``) and the caps of both bounds."""
    if this is None or "certificate (exact score, Clopper-Pearson)" not in certs:
        return {}
    row = certs[np.isclose(certs["exact epsilon"], this)].iloc[0]
    joint, paper = float(row["certificate (exact score)"]), float(row["certificate (exact score, Clopper-Pearson)"])
    gain = ("neither certifies anything at this test size" if max(joint, paper) < 5e-3 else
            "the two agree" if abs(joint - paper) < 5e-3 else
            f"the joint certificate is {number(joint - paper, CERT_DIGITS)} nats above it" if joint > paper else
            f"the joint certificate is {number(paper - joint, CERT_DIGITS)} nats below it")
    return {"qs_cert_this": joint, "qs_cert_this_cp": paper, "qs_cert_this_learned": float(row["certificate (learned)"]),
            "qs_cap_cp": float(row["cap (Clopper-Pearson)"]), "qs_joint_gain_phrase": gain}


def certificate_numbers(certs: pd.DataFrame, claim: float = 0.5, this: float | None = None) -> dict[str, Any]:
    """The numbers and the number-dependent phrases the certificate section cites (``qs_*`` glue keys).

    Parameters
    ----------
    certs : DataFrame
        :func:`certificate_table` (with the exact epsilons 0, 1, 2 and 4).
    claim : float
        An advertised epsilon the certificate of the ``epsilon = 2`` pair is compared with.
    this : float, optional
        The exact epsilon of the page's own pair: adds ``qs_cert_this`` (joint, exact score),
        ``qs_cert_this_cp`` (Clopper-Pearson), ``qs_cert_this_learned``, ``qs_cap_cp`` and
        ``qs_joint_gain_phrase`` (the joint certificate against the paper's).

    Returns
    -------
    dict
        ``qs_cert_one``, ``qs_cert_four``, ``qs_cap``, ``qs_above`` (certificates above their
        pair's exact epsilon, both tests), ``qs_count`` (certificates in the table) and the phrases
        ``qs_above_phrase``, ``qs_refute_phrase``.

    Examples
    --------
    >>> certs = pd.DataFrame({"exact epsilon": [0.0, 1.0, 2.0, 4.0], "certificate (exact score)": [0, 0.1, 1.0, 2.0],
    ...                       "certificate (learned)": [0, 0, 0.4, 1.5], "cap": [3.28] * 4})
    >>> certificate_numbers(certs)["qs_refute_phrase"]
    'a mechanism advertised as 0.5-DP is refuted by the certificate of the ε = 2 pair (1.00)'
    """
    exact = certs["exact epsilon"]
    above = int((certs["certificate (exact score)"] > exact + 1e-9).sum() + (certs["certificate (learned)"] > exact + 1e-9).sum())
    count = 2 * len(certs)
    two = float(certs.loc[exact == 2.0, "certificate (exact score)"].iloc[0])
    above_phrase = ("Every certificate lies at or below the exact ε of its pair" if above == 0 else
                    f"{above} of the {count} certificates lie above the exact ε of their pair, which a 95% "
                    "certificate may do 5% of the time")
    refute_phrase = (f"a mechanism advertised as {claim:g}-DP is refuted by the certificate of the ε = 2 "
                     f"pair ({number(two, CERT_DIGITS)})" if two > claim else
                     f"a mechanism advertised as {claim:g}-DP would be refuted by any certificate above {claim:g}; the "
                     f"ε = 2 pair's is {number(two, CERT_DIGITS)} here, too small to refute it")
    return {**_this_pair(certs, this),
            "qs_cert_one": float(certs.loc[exact == 1.0, "certificate (exact score)"].iloc[0]),
            "qs_cert_four": float(certs.loc[exact == 4.0, "certificate (exact score)"].iloc[0]),
            "qs_cap": float(certs["cap"].iloc[0]), "qs_above": above, "qs_count": count,
            "qs_above_phrase": above_phrase, "qs_refute_phrase": refute_phrase}


def _styled(frame: pd.DataFrame, caption: str | None = None, label_columns: int = 1):
    """A display table: the first ``label_columns`` columns are bold row labels, no integer index."""
    labels = list(frame.columns[:label_columns])
    style = (frame.style.hide(axis="index").set_table_attributes('class="dataframe"')
             .set_properties(subset=labels, **{"font-weight": "bold", "text-align": "left"})
             .set_table_styles([{"selector": "td", "props": "white-space: nowrap; padding: 0.15em 0.6em;"},
                                {"selector": "th", "props": "padding: 0.15em 0.6em;"}]))
    return style.set_caption(caption) if caption else style


def route_view(routes: pd.DataFrame, n: int | None = None):
    """:func:`route_table` as the page shows it: route, kind, one column per exact epsilon (3 digits);
    with ``n``, a caption naming the rows per identity."""
    frame = pd.DataFrame({"route": routes.index.get_level_values("route"), "kind": routes.index.get_level_values("kind")})
    for column in routes.columns:
        label = f"exact ε = {float(column.rsplit(' ', 1)[1]):g}" if column.startswith("exact epsilon ") else column
        frame[label] = [number(v, ROUTE_DIGITS) for v in routes[column]]
    caption = None if n is None else f"Each route's epsilon (nats) on n = {n} outputs per identity."
    return _styled(frame, caption, label_columns=1)


def certificate_view(certs: pd.DataFrame, n: int | None = None):
    """:func:`certificate_table` as the page shows it (2 digits, no index; the paper's bound beside the joint one);
    with ``n``, the caption names the development and test rows per identity."""
    frame = pd.DataFrame({"exact ε": [f"{e:g}" for e in certs["exact epsilon"]],
                          "certificate, exact score": [number(v, CERT_DIGITS) for v in certs["certificate (exact score)"]],
                          "certificate, learned": [number(v, CERT_DIGITS) for v in certs["certificate (learned)"]]})
    if "certificate (exact score, Clopper-Pearson)" in certs:
        frame["exact score, Clopper-Pearson (paper)"] = [number(v, CERT_DIGITS) for v in
                                                         certs["certificate (exact score, Clopper-Pearson)"]]
    frame["cap"] = [number(v, CERT_DIGITS) for v in certs["cap"]]
    if "cap (Clopper-Pearson)" in certs:
        frame["cap, Clopper-Pearson"] = [number(v, CERT_DIGITS) for v in certs["cap (Clopper-Pearson)"]]
    rows = "" if n is None else f", n = {n} development and {n} test rows per identity"
    return _styled(frame, f"Certified ε (nats, 95%{rows}) beside the exact ε: joint certificates unless marked "
                          "Clopper-Pearson; cap: the most this test size can certify.")


def _family_label(column: str) -> str:
    m = int(column.split(" ", 1)[0])
    return f"{m} certificate" if m == 1 else f"{m} certificates"


def cap_view(caps: pd.DataFrame):
    """:func:`cap_table` as the page shows it: test rows per identity, one column per family size."""
    frame = pd.DataFrame({"test rows per identity": [str(n) for n in caps.index]})
    for column in caps.columns:
        frame[_family_label(column)] = [number(v, CERT_DIGITS) for v in caps[column]]
    return _styled(frame, "Largest certifiable ε (nats, zero test errors), by certificates reported together.")


def cap_comparison(sizes: tuple[int, ...], families: tuple[int, ...] = (1, 40), confidence: float = 0.95,
                   delta: float = 0.0) -> pd.DataFrame:
    """:func:`cap_table` of both bounds side by side: columns ``"<m> certificate(s), <bound>"``.

    Examples
    --------
    >>> cap_comparison((100,), families=(1,)).round(3).iloc[0].tolist()
    [4.194, 3.281]
    """
    joint = cap_table(sizes, families, confidence, delta, bound="joint")
    paper = cap_table(sizes, families, confidence, delta, bound="clopper-pearson")
    columns = {}
    for column in joint.columns:
        columns[f"{column}, joint"] = joint[column]
        columns[f"{column}, clopper-pearson"] = paper[column]
    return pd.DataFrame(columns, index=joint.index)


def cap_comparison_view(caps: pd.DataFrame):
    """:func:`cap_comparison` as the page shows it: test rows per identity, both bounds per family size."""
    frame = pd.DataFrame({"test rows per identity": [str(n) for n in caps.index]})
    for column in caps.columns:
        family, bound = column.rsplit(", ", 1)
        frame[f"{_family_label(family)}, {BOUND_LABELS[bound]}"] = [number(v, CERT_DIGITS) for v in caps[column]]
    return _styled(frame, "Largest certifiable ε (nats, zero test errors, 95%), by bound and certificates reported together.")


def sizes_view(sizes: pd.Series):
    """:func:`smallest_certifying_sizes` as the page shows it: one row per family size."""
    frame = pd.DataFrame({"reported together": [_family_label(k) for k in sizes.index],
                          "smallest test rows per identity": [str(int(v)) for v in sizes]})
    return _styled(frame, "The smallest test that can certify anything above 0.")


# ---------------------------------------------------------------------------------------------
# The exercises' computed solutions (sentences that stay right for any parameter value)
# ---------------------------------------------------------------------------------------------


def size_exercise_sentence(rows: dict[int, pd.Series]) -> str:
    """The test-size exercise's answer: the epsilon = 4 pair's certificate and cap at each size.

    Parameters
    ----------
    rows : dict int -> pandas.Series
        Test rows per identity -> the :func:`certificate_table` row of the epsilon = 4 pair at that
        size (30 first, then the profile's own size when it differs).

    Returns
    -------
    str
        Markdown: the numbers, and whether the cap or the test's errors hold the certificate down
        at 30 rows (the cap binds when the certificate is within 10% of it).

    Examples
    --------
    >>> row = pd.Series({"certificate (exact score)": 2.9, "cap": 2.97})
    >>> size_exercise_sentence({30: row})[:62]
    'At 30 rows per identity the exact-score certificate of the ε ='
    """
    (small, at_small), *rest = rows.items()
    cert, cap = float(at_small["certificate (exact score)"]), float(at_small["cap"])
    text = (f"At {small} rows per identity the exact-score certificate of the ε = 4 pair is "
            f"{number(cert, CERT_DIGITS)} and the cap of the test is {number(cap, CERT_DIGITS)}")
    for size, row in rest:
        text += (f"; at the profile's {size} rows they are {number(row['certificate (exact score)'], CERT_DIGITS)} "
                 f"and {number(row['cap'], CERT_DIGITS)}")
    if cert >= 0.9 * cap:
        return text + f". At {small} rows the cap binds: the test size, not the mechanism, bounds what can be certified."
    return (text + f". The cap falls with the test size, but at {small} rows the certificate is well below it: the "
            "errors the test makes on so few rows, not the cap, hold it down.")


def learned_exercise_sentence(exact: float, learned: float, learned_more: float, n: int, epsilon: float) -> str:
    """The development-rows exercise's answer: the learned test against the exact score, before and after.

    Parameters
    ----------
    exact, learned : float
        Certificates of the page's pair with the exact score and with the learned test (n development rows).
    learned_more : float
        The learned test's certificate with ``10 n`` development rows, on the same test rows.
    n : int
    epsilon : float
        The page's exact epsilon.

    Returns
    -------
    str
        Markdown; a share in percent only where the exact score certifies something.

    Examples
    --------
    >>> learned_exercise_sentence(0.0, 0.0, 0.0, 100, 1.0)[:50]
    'With 100 development rows the learned test certifi'
    >>> learned_exercise_sentence(2.0, 1.0, 1.5, 100, 2.0)[-60:]
    ". That is 50% and then 75% of the exact score's certificate."
    """
    text = (f"With {n} development rows the learned test certifies {number(learned, CERT_DIGITS)} and the exact "
            f"score {number(exact, CERT_DIGITS)}; with {10 * n} development rows (the same test rows) the learned "
            f"test certifies {number(learned_more, CERT_DIGITS)}.")
    if exact < 5e-3:
        return text + (f" The exact score certifies nothing for ε = {epsilon:g} at this test size, so there is no "
                       "share to compare: run the page with `-p epsilon 4`.")
    above = max(learned, learned_more) > exact
    return text + (f" That is {number(100 * learned / exact, 0)}% and then {number(100 * learned_more / exact, 0)}% "
                   "of the exact score's certificate" + (" (above 100%: this sample happened to favour the learned "
                                                          "test)." if above else "."))


def route_moves(first: pd.Series, second: pd.Series) -> str:
    """How each route's value moves from one run to another, e.g. ``"GaussMech 1.544 → 0.329, ..."``.

    Parameters
    ----------
    first, second : pandas.Series
        A column of :func:`route_table` (index ``(route, kind)``) for each run.

    Examples
    --------
    >>> idx = pd.MultiIndex.from_tuples([("GaussMech", "diagnostic")], names=["route", "kind"])
    >>> route_moves(pd.Series([1.5444], idx), pd.Series([float("inf")], idx))
    'GaussMech 1.544 → +∞'
    """
    return ", ".join(f"{route} {number(a, ROUTE_DIGITS)} → {number(b, ROUTE_DIGITS)}"
                     for (route, _), a, b in zip(first.index, first, second))


def errors_sentence(certificate: EpsilonResult, n: int) -> str:
    """What the page's exact-score test did on its test rows, and why its certificate is below the cap.

    Parameters
    ----------
    certificate : EpsilonResult
        The reserved-test certificate of the page's pair.
    n : int
        Test rows per identity.

    Examples
    --------
    >>> from epsaudit.audits import reserved_test_certificate
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.normal(3, 1, (40, 1)), rng.normal(-3, 1, (40, 1))
    >>> errors_sentence(reserved_test_certificate(a[:20], b[:20], a[20:], b[20:]), 20)[:58]
    'The exact-score test above made 0 false positives and 0 fa'
    """
    fp, fn = int(certificate.details["fp"]), n - int(certificate.details["tp"])
    made = (f"The exact-score test above made {fp} false positive{'s' * (fp != 1)} and {fn} false "
            f"negative{'s' * (fn != 1)} on its {n} + {n} test rows")
    cap = number(certificate.details["cap"], CERT_DIGITS)
    if fp == fn == 0:
        return f"{made}, so it certifies its cap, {cap}."
    return f"{made}, so it certifies {number(certificate.value, CERT_DIGITS)}, not its cap {cap}."
