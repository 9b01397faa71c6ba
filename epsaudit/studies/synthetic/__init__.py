"""Chapter 1, the known-epsilon benchmark: every audit value beside the exact epsilon of its pair.

*Picture the Epsilon* calibrates its audit routes on mechanisms whose privacy is known exactly
(Tables 4 and 6, Figures 2 and 3). This module is the chapter: its run profiles
(:data:`PROFILES`), the paper's reported values it compares with (:data:`TABLE4`,
:data:`TABLE6`, :data:`FIGURE2`), the runs and table-shaping of each section (Table 4, Figure 2,
Figure 3, Table 6, validity) and the floating-point section (:func:`attack_certificates`,
:func:`floating_point_table`). The benchmark runner it uses (:class:`Setting`,
:func:`audit_setting`, :func:`certify_setting`, :func:`run`, ...) lives in
:mod:`epsaudit.studies.synthetic.runner`; the trade-off-curve section beyond the papers in
:mod:`~epsaudit.studies.synthetic.gdp`; the display tables in :mod:`~epsaudit.studies.synthetic.views`
and the number-dependent wording of the prose in :mod:`~epsaudit.studies.synthetic.wording`. All
are re-exported here.

Section functions return a table and the named numbers the chapter's prose cites (glue keys).
"""

from __future__ import annotations

import numbers
from typing import Any, Callable

import numpy as np
import pandas as pd
from scipy import stats

from ...audits.roc_reserved import reserved_test_certificate
from ...bounds import bonferroni_alpha, certifiable_cap, required_test_size
from ...mechanisms import (BENCHMARK_EPSILONS, BENCHMARK_SAMPLE_SIZES, Mechanism, ProductLaplace, TextbookLaplace,
                          reachability_score)
from ...results import EpsilonResult
from ...seeds import seed_key
from ...sniper import DEFAULT_C, dp_sniper
from .. import choose_profile
from .gdp import (GDP_DELTA, gaussian_pair, gdp_certificate, gdp_curve_wording, gdp_curves, gdp_mu_table,
                  gdp_mu_view, gdp_one_threshold, gdp_runs, gdp_single_point_table, gdp_single_point_view)
from .runner import (N_IDENTITIES, TESTS, Setting, audit_setting, certification_summary, certify_grid,
                               certify_setting, optimal_auc_reference, per_setting_summary, run, settings_grid)
from .views import (by_geometry_view, figure2_data, figure2_view, figure3_view, floating_point_view, table4_view,
                    table6_view, validity_view)
from .wording import (figure2_wording, figure3_wording, floating_point_wording, table4_wording, table6_wording,
                      validity_wording)

__all__ = [
    "FIGURE2", "GDP_DELTA", "GEOMETRIES", "MECHANISMS", "N_IDENTITIES", "PROFILES", "Setting", "TABLE4", "TABLE6",
    "TESTS", "attack_certificates", "audit_setting", "by_geometry_view", "certification_summary", "certify_grid",
    "certify_setting", "figure2_data", "figure2_runs", "figure2_table", "figure2_view", "figure2_wording",
    "figure3_caps", "figure3_table", "figure3_view", "figure3_wording", "floating_point_table",
    "floating_point_view", "floating_point_wording", "gaussian_pair", "gdp_certificate", "gdp_curve_wording",
    "gdp_curves", "gdp_mu_table", "gdp_mu_view", "gdp_one_threshold", "gdp_runs", "gdp_single_point_table",
    "gdp_single_point_view", "null_summary", "optimal_auc_reference", "per_setting_summary", "plan_exercise",
    "profile_settings", "route_mean", "run", "settings_grid", "table4", "table4_view", "table4_wording", "table6",
    "table6_by_geometry", "table6_view", "table6_wording", "validity_table", "validity_view", "validity_wording",
]

#: Prototype geometries and noise mechanisms of Table 4 and Figures 2-3.
GEOMETRIES = ("dispersed", "face_like")
MECHANISMS = ("gaussian", "laplace")

#: Run profiles. sizes: samples per class; reps_null / reps: repetitions at the null / elsewhere;
#: pairs: audited pairs per setting (the paper: 40); fig2_n: sample size of Figure 2; mc: Monte
#: Carlo draws per class of the optimal-AUC reference; float_n / float_calls: reserved-test
#: outputs per input and part / DP-Sniper calls of the floating-point section; gdp_mus /
#: gdp_sizes / gdp_reps / gdp_figure_mu: true mu, outputs per identity and part, repetitions and
#: the figure's mu of the trade-off-curve section (:mod:`~epsaudit.studies.synthetic.gdp`).
#: "paper" differs from "full" only in the repetitions: three everywhere, as in Tables 4 and 6.
_GDP_FULL = dict(gdp_mus=(0.5, 1.0, 2.0, 4.0), gdp_sizes=(100, 300, 1000), gdp_reps=200, gdp_figure_mu=2.0)
PROFILES: dict[str, dict[str, Any]] = {
    "smoke": dict(sizes=(30,), epsilons=(0.0, 8.0, 32.0), reps_null=1, reps=1, pairs=10, fig2_n=30, mc=2000,
                  float_n=20_000, float_calls=100_000,
                  gdp_mus=(1.0, 2.0), gdp_sizes=(100, 300, 1000), gdp_reps=20, gdp_figure_mu=2.0),
    "full": dict(sizes=BENCHMARK_SAMPLE_SIZES, epsilons=BENCHMARK_EPSILONS, reps_null=2, reps=1, pairs=40,
                 fig2_n=100, mc=20_000, float_n=100_000, float_calls=400_000, **_GDP_FULL),
    "paper": dict(sizes=BENCHMARK_SAMPLE_SIZES, epsilons=BENCHMARK_EPSILONS, reps_null=3, reps=3, pairs=40,
                  fig2_n=100, mc=20_000, float_n=100_000, float_calls=400_000, **_GDP_FULL),
}

# ---------------------------------------------------------------------------------------------
# The papers' reported values (Picture the Epsilon)
# ---------------------------------------------------------------------------------------------

#: *Picture the Epsilon*, Table 4: the exact null (true epsilon 0); medians over 40 pairs averaged
#: over both prototype sets, the applicable mechanisms and three repetitions. "Div." = mean +inf
#: count of 40.
TABLE4 = pd.DataFrame(
    {"AUC": [0.490, 0.499, 0.502], "Div.": [29.3, 24.7, 20.8], "MMD-TV": [0.003, 0.003, 0.001],
     "GaussMech": [28.60, 15.51, 8.96], "KDE-LR a=.01": [1526.0, 1210.0, 962.0]},
    index=pd.Index([30, 100, 300], name="n"),
)
#: *Picture the Epsilon*, Table 6: fraction of the 40 anisotropic-Gaussian pairs certified above
#: zero, averaged over both prototype sets and three repetitions; columns are requested global epsilon.
TABLE6 = pd.DataFrame(
    [[0.00, 0.00, 0.00, 0.01, 0.29, 0.85],
     [0.00, 0.00, 0.00, 0.64, 0.88, 0.88],
     [0.00, 0.00, 0.04, 0.88, 0.90, 0.98],
     [0.00, 0.00, 0.00, 0.00, 0.00, 0.00],
     [0.00, 0.00, 0.00, 0.00, 0.00, 0.02]],
    index=pd.MultiIndex.from_tuples([("exact", 30), ("exact", 100), ("exact", 300), ("logistic", 30), ("logistic", 100)],
                                    names=["test", "n"]),
    columns=pd.Index([0.0, 0.5, 2.0, 8.0, 16.0, 32.0], name="requested epsilon"),
)
#: *Picture the Epsilon*, Figures 2 and 3 (plots only, no numbers to tabulate): Figure 2's sample
#: size per class and Monte Carlo draws per class of its Laplace optimal-AUC reference.
FIGURE2 = {"n": 100, "mc_draws_per_class": 20_000}


def profile_settings(name: str) -> dict[str, Any]:
    """The settings of one run profile of this chapter (:data:`PROFILES`).

    Parameters
    ----------
    name : {"smoke", "full", "paper"}

    Returns
    -------
    dict
        A copy of the profile's settings.

    Raises
    ------
    ValueError
        If ``name`` is not ``"smoke"``, ``"full"`` or ``"paper"``.
    """
    return choose_profile(PROFILES, name, "chapter 1 (the known-epsilon benchmark)")


# ---------------------------------------------------------------------------------------------
# Table 4 and Figure 2: the routes against the exact epsilon
# ---------------------------------------------------------------------------------------------


def null_summary(profile: dict, seed: int, n_jobs: int | None) -> pd.DataFrame:
    """Table 4's runs summarised per setting: the exact null at every size of the profile.

    One geometry is run: at the null all prototypes coincide, so both geometries are the same
    mechanism. Both noise mechanisms of :data:`MECHANISMS`, ``reps_null`` repetitions.

    Parameters
    ----------
    profile : dict
        One of :data:`PROFILES`.
    seed : int
        Base seed.
    n_jobs : int or None
        joblib workers over settings.

    Returns
    -------
    pandas.DataFrame
        :func:`per_setting_summary` rows.
    """
    grid = settings_grid(["dispersed"], MECHANISMS, [0.0], profile["sizes"], profile["reps_null"], seed,
                         n_pairs=profile["pairs"])
    return per_setting_summary(run(grid, audit_setting, n_jobs=n_jobs, desc="null settings"))


def route_mean(summary: pd.DataFrame, route: str, column: str = "median", mechanism: str | None = None,
               alpha: float | None = None) -> pd.Series:
    """Mean over settings of one route's per-setting ``column``, per sample size ``n``.

    Parameters
    ----------
    summary : DataFrame
        :func:`per_setting_summary` rows.
    route : str
    column : str
        ``"median"``, ``"median_auc"``, ``"n_infinite"``, ...
    mechanism : str, optional
        Only this mechanism's settings.
    alpha : float, optional
        Only this KDE-LR smoothing weight.

    Returns
    -------
    pandas.Series
        Indexed by ``n``.
    """
    rows = summary[summary["route"] == route]
    if mechanism is not None:
        rows = rows[rows["mechanism"] == mechanism]
    if alpha is not None:
        rows = rows[np.isclose(rows["alpha"], alpha)]
    return rows.groupby("n")[column].mean()


def table4(null: pd.DataFrame, pairs: int) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Table 4 beside the paper's, and the numbers the text cites (``t4_*``).

    Parameters
    ----------
    null : DataFrame
        :func:`null_summary`.
    pairs : int
        Audited pairs per setting; ``Div.`` (the +inf count) is rescaled to the paper's 40.

    Returns
    -------
    (DataFrame, dict)
        Columns ``(statistic, "ours" | "paper")``, rows ``n``; the glue numbers.
    """
    ours = pd.DataFrame({
        "AUC": route_mean(null, "roc_oof", "median_auc"),
        "Div.": route_mean(null, "roc_oof", "n_infinite") * 40 / pairs,
        "MMD-TV": route_mean(null, "mmd_tv", mechanism="laplace"),
        "GaussMech": route_mean(null, "gaussmech"),
        "KDE-LR a=.01": route_mean(null, "kde_lr", alpha=0.01),
    })
    paper = TABLE4.loc[ours.index]
    side = pd.concat({(c, src): frame[c] for c in ours for src, frame in (("ours", ours), ("paper", paper))}, axis=1)
    numbers: dict[str, Any] = {}
    for n in ours.index:
        numbers[f"t4_gaussmech_{n}"] = float(ours.loc[n, "GaussMech"])
        numbers[f"t4_kde_{n}"] = float(ours.loc[n, "KDE-LR a=.01"])
        numbers[f"t4_div_{n}"] = float(ours.loc[n, "Div."])
        numbers[f"t4_auc_{n}"] = float(ours.loc[n, "AUC"])
    numbers["t4_n0"] = int(ours.index[0])
    return side, numbers


def figure2_runs(profile: dict, null: pd.DataFrame, seed: int, n_jobs: int | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Figure 2's runs: both geometries and mechanisms at every positive epsilon, at ``fig2_n`` per class.

    Parameters
    ----------
    profile : dict
        One of :data:`PROFILES`.
    null : DataFrame
        :func:`null_summary`; its settings at ``fig2_n`` are added as the epsilon = 0 points.
    seed : int
    n_jobs : int or None

    Returns
    -------
    (DataFrame, DataFrame)
        :func:`per_setting_summary` rows and the :func:`optimal_auc_reference` rows (one per
        geometry, mechanism and epsilon, Monte Carlo with ``mc`` draws per class for Laplace).
    """
    eps = [e for e in profile["epsilons"] if e > 0]
    grid = settings_grid(GEOMETRIES, MECHANISMS, eps, [profile["fig2_n"]], profile["reps"], seed, n_pairs=profile["pairs"])
    runs = run(grid, audit_setting, n_jobs=n_jobs, desc="Figure 2 settings")
    summary = pd.concat([per_setting_summary(runs), null[null["n"] == profile["fig2_n"]]], ignore_index=True)
    reference = pd.DataFrame([optimal_auc_reference(s, n_mc=profile["mc"]) for s in grid if s.rep == 0])
    return summary, reference


def figure2_table(summary: pd.DataFrame, null: pd.DataFrame, profile: dict) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Figure 2 as numbers: route medians per mechanism and epsilon (KDE-LR at alpha 0.01, ROC as AUC).

    Parameters
    ----------
    summary, null : DataFrame
        :func:`figure2_runs`' summary and :func:`null_summary`.
    profile : dict

    Returns
    -------
    (DataFrame, dict)
        Rows (mechanism, epsilon), the reference epsilon and one column per route (nats; the
        ``roc_oof AUC`` column is an AUC); the ``f2_*`` numbers.
    """
    table = (summary[(summary["route"] != "kde_lr") | np.isclose(summary["alpha"], 0.01)]
             .assign(value=lambda f: np.where(f["route"] == "roc_oof", f["median_auc"], f["median"]))
             .pivot_table(index=["mechanism", "epsilon"], columns="route", values="value", aggfunc="mean"))
    table.insert(0, "reference epsilon", summary.groupby(["mechanism", "epsilon"])["reference_epsilon"].mean())
    top_eps = max(e for e in profile["epsilons"] if e > 0)
    top = summary[(summary["epsilon"] == top_eps) & (summary["mechanism"] == "laplace")]
    numbers = {"f2_mmd_top": float(top[top["route"] == "mmd_tv"]["median"].mean()),
               "f2_ref_top": float(top["reference_epsilon"].mean()),
               "f2_gm_null": float(route_mean(null, "gaussmech").loc[profile["fig2_n"]])}
    return table.rename(columns={"roc_oof": "roc_oof AUC"}), numbers


# ---------------------------------------------------------------------------------------------
# Figure 3 and Table 6: how often the reserved test certifies anything
# ---------------------------------------------------------------------------------------------


def figure3_caps() -> dict[str, float]:
    """The per-bound level of 40 certificates at 95% and the caps it allows at n = 30, 100, 300.

    Returns
    -------
    dict
        ``alpha40`` and ``cap30``, ``cap100``, ``cap300`` (nats, at delta = 1e-5;
        :func:`epsaudit.bounds.certifiable_cap`).
    """
    alpha40 = bonferroni_alpha(40)
    return {"alpha40": alpha40} | {f"cap{n}": certifiable_cap(n, n, alpha40, 1e-5) for n in (30, 100, 300)}


def plan_exercise(summary: pd.DataFrame, epsilon: float = 8.0, pairs: int = 40, delta: float = 1e-5) -> dict[str, Any]:
    """The planning exercise: test rows a perfect test needs to certify a Gaussian setting's reference.

    Parameters
    ----------
    summary : DataFrame
        :func:`certification_summary` of the Figure 3 certificates.
    epsilon : float
        The requested global epsilon of the setting (its exact median pairwise epsilon is the target).
    pairs : int
        Certificates reported together (the paper's 40).
    delta : float

    Returns
    -------
    dict
        ``plan_eps`` (the requested epsilon), ``plan_ref`` (the setting's exact median epsilon,
        nats), ``plan_certified`` (the largest median certificate there, any test and size),
        ``plan_n`` (test rows per identity with zero errors, :func:`epsaudit.bounds.required_test_size`
        at the family's level), ``plan_n_single`` (the same for one certificate alone),
        ``plan_n_run`` (the largest size run) and ``plan_pairs``.

    Examples
    --------
    >>> frame = pd.DataFrame({"mechanism": ["gaussian"], "epsilon": [8.0], "reference_epsilon": [4.0], "n": [30],
    ...                       "median_certified": [0.5]})
    >>> plan_exercise(frame)["plan_n"]
    407
    """
    rows = summary[(summary["mechanism"] == "gaussian") & np.isclose(summary["epsilon"], epsilon)]
    ref = float(rows["reference_epsilon"].mean())
    return {"plan_eps": float(epsilon), "plan_ref": ref, "plan_certified": float(rows["median_certified"].max()),
            "plan_n": int(required_test_size(ref, bonferroni_alpha(pairs), delta)),
            "plan_n_single": int(required_test_size(ref, bonferroni_alpha(1), delta)),
            "plan_n_run": int(summary["n"].max()), "plan_pairs": int(pairs)}


def figure3_table(summary: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, float]]:
    """Figure 3 as numbers: the fraction of pairs certified above zero.

    Parameters
    ----------
    summary : DataFrame
        :func:`certification_summary` of the Figure 3 certificates.

    Returns
    -------
    (DataFrame, dict)
        Rows (mechanism, test, n), columns requested epsilon; the largest fractions of the exact
        and the learned test on Gaussian noise (``f3_*``).
    """
    table = summary.pivot_table(index=["mechanism", "test", "n"], columns="epsilon", values="fraction_positive",
                                aggfunc="mean")
    gauss = summary[summary.mechanism == "gaussian"]
    return table, {"f3_exact_max": float(gauss[gauss.test == "exact"]["fraction_positive"].max()),
                   "f3_learned_max": float(gauss[gauss.test == "logistic"]["fraction_positive"].max())}


def table6(summary: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 6: the fraction of anisotropic-Gaussian pairs certified above zero, and the same beside the paper's.

    Parameters
    ----------
    summary : DataFrame
        :func:`certification_summary` of the Table 6 certificates.

    Returns
    -------
    (DataFrame, DataFrame)
        Ours (rows (test, n), columns requested epsilon) and ours beside :data:`TABLE6`, rounded
        to 2 decimals, ``"n/a"`` where the paper has no row (no learned test at n = 300, no
        shrinkage LDA).
    """
    ours = summary.pivot_table(index=["test", "n"], columns="epsilon", values="fraction_positive", aggfunc="mean")
    paper = TABLE6.reindex(ours.index)[ours.columns]
    side = pd.concat({"ours": ours, "paper": paper}, axis=1).round(2).astype(object)
    return ours, side.where(side.notna(), "n/a")


def table6_by_geometry(summary: pd.DataFrame, runs: pd.DataFrame, ours: pd.DataFrame,
                       profile: dict) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Table 6 at the largest size split by geometry, and the numbers the text cites (``t6_*``).

    Parameters
    ----------
    summary, runs : DataFrame
        :func:`certification_summary` of the Table 6 certificates, and the certificates.
    ours : DataFrame
        The first table of :func:`table6`.
    profile : dict

    Returns
    -------
    (DataFrame, dict)
        Rows (test, geometry), columns requested epsilon; the glue numbers, among them
        ``t6_gap_closed``: the share (%) of the exact-vs-logistic gap shrinkage LDA recovers.
    """
    big_n, big_eps = max(profile["sizes"]), max(e for e in profile["epsilons"] if e <= 8.0)
    by_geometry = (summary[summary["n"] == big_n]
                   .pivot_table(index=["test", "geometry"], columns="epsilon", values="fraction_positive", aggfunc="mean"))
    learned = runs[runs["test"] == "logistic"]
    row = ours.xs(big_n, level="n")[big_eps]
    gap = row["exact"] - row["logistic"]  # the share of it shrinkage LDA recovers, in percent
    numbers: dict[str, Any] = {
        "t6_exact_dispersed": float(by_geometry.loc[("exact", "dispersed"), big_eps]),
        "t6_exact_face": float(by_geometry.loc[("exact", "face_like"), big_eps]),
        "t6_stopped": int((learned["convergence_warnings"] > 0).sum()),
        "t6_learned": int(len(learned)), "t6_n": int(big_n), "t6_eps": float(big_eps),
    }
    for test in ("exact", "logistic", "shrinkage_lda"):
        numbers[f"t6_{test}"] = float(ours.loc[(test, big_n), big_eps])
    numbers["t6_paper_exact"] = float(TABLE6.loc[("exact", big_n), big_eps])
    numbers["t6_gap_closed"] = (float((row["shrinkage_lda"] - row["logistic"]) / gap) if gap > 0 else float("nan")) * 100
    return by_geometry, numbers


def validity_table(*runs: pd.DataFrame) -> tuple[pd.Series, dict[str, int]]:
    """Certificates above the exact epsilon, and families (one setting's certificates) with any.

    Parameters
    ----------
    *runs : DataFrame
        :func:`certify_setting` rows (with ``violation``).

    Returns
    -------
    (Series, dict)
        The counts and the binomial tolerance of families (99.9% quantile of
        Binomial(families, 0.05)); the ``v_*`` numbers.
    """
    certs = pd.concat(runs, ignore_index=True)
    families = certs.groupby(["geometry", "mechanism", "test", "epsilon", "n", "rep"])["violation"].any()
    counts = pd.Series({
        "certificates": len(certs),
        "certificates above exact epsilon": int(certs["violation"].sum()),
        "families (one setting's certificates, at 95%)": len(families),
        "families with any violation": int(families.sum()),
        "binomial tolerance (families)": int(stats.binom.ppf(0.999, len(families), 0.05)),
    })
    return counts, {"v_certs": int(counts.iloc[0]), "v_viol": int(counts.iloc[1]), "v_fam": int(counts.iloc[2]),
                    "v_fam_viol": int(counts.iloc[3])}


# ---------------------------------------------------------------------------------------------
# Floating point: the textbook Laplace mechanism against the float-safe one
# ---------------------------------------------------------------------------------------------


def attack_certificates(mechanism: Mechanism, a: int, b: int, score_function: Callable[[np.ndarray], np.ndarray], *,
                        n: int = 100_000, calls: int = 400_000, c: float = DEFAULT_C, confidence: float = 0.95,
                        seed=0) -> dict[str, EpsilonResult]:
    """Certify one fixed attack (a score function) on a mechanism with the reserved test and with DP-Sniper.

    The reserved test (:func:`epsaudit.audits.reserved_test_certificate`, pure DP) draws ``n``
    development and ``n`` test outputs per input and thresholds ``score_function`` where the
    development bound is largest; DP-Sniper (:func:`epsaudit.sniper.dp_sniper` with
    ``score_function``) spends ``calls`` mechanism calls on threshold and final samples. Each
    holds at ``confidence`` on its own (DP-Sniper's two directions together). The chapter uses it
    to show that a float64 textbook Laplace mechanism is not epsilon-DP while the float-safe one
    is not refuted (:class:`epsaudit.mechanisms.TextbookLaplace`,
    :func:`epsaudit.mechanisms.reachability_score`).

    Freshness: every sample is a fresh draw of the library's mechanism on its own child stream
    of ``seed``, so the reserved test's value check of test rows against development rows is
    skipped (``check_reuse=False``, recorded in its settings); it would also refuse grid outputs
    in one dimension, whose values repeat by design.

    Parameters
    ----------
    mechanism : Mechanism
    a, b : int
        Identities of the pair (``a`` is the positive class / the numerator of ``a -> b``).
    score_function : callable
        ``(n, d) -> (n,)`` scores, higher meaning "more like ``a``"; ``+-inf`` allowed.
    n : int, >= 2
        Development and test outputs per input for the reserved test.
    calls : int
        DP-Sniper budget for the pair (:func:`epsaudit.sniper.split_budget`; no training stage).
    c, confidence : float
        DP-Sniper's target firing probability; the confidence of each method's certificate.
    seed : int, stream key (tuple) or numpy.random.Generator

    Returns
    -------
    dict
        ``"reserved"``: the reserved-test certificate; ``"sniper a->b"`` and ``"sniper b->a"``:
        DP-Sniper's two directions.

    Raises
    ------
    ValueError
        If ``mechanism`` is not a :class:`~epsaudit.mechanisms.Mechanism`, ``n < 2``, or as
        :func:`epsaudit.sniper.dp_sniper` and the reserved test.
    """
    if not isinstance(mechanism, Mechanism):
        raise ValueError(f"mechanism must be an epsaudit Mechanism, got {type(mechanism).__name__}")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 2:
        raise ValueError(f"n must be an integer >= 2 (outputs per input and part), got {n!r}")
    s_sniper, s_dev, s_test = (seed_key(seed, "duel") + (part,) for part in ("dp-sniper", "dev", "test"))
    ab, ba = dp_sniper(mechanism, a, b, int(calls), c=c, score_function=score_function, confidence=confidence,
                       seed=s_sniper)
    dev = mechanism.sample_groups(int(n), seed=s_dev, identities=[a, b])
    test = mechanism.sample_groups(int(n), seed=s_test, identities=[a, b])
    reserved = reserved_test_certificate(dev[a], dev[b], test[a], test[b], score_function=score_function,
                                         n_certificates=1, confidence=confidence, delta=0.0, pair=(a, b),
                                         check_reuse=False)
    return {"reserved": reserved, "sniper a->b": ab, "sniper b->a": ba}


def floating_point_table(profile: dict, seed: int) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The floating-point section: two fixed attacks on the textbook and the float-safe Laplace mechanism.

    One pair in one dimension, means 0.3 and 0, Laplace scale 1 (nominal epsilon 0.3); the
    reachability attack and the log-likelihood ratio are each certified by :func:`attack_certificates`.

    Parameters
    ----------
    profile : dict
        One of :data:`PROFILES` (``float_n``, ``float_calls``).
    seed : int

    Returns
    -------
    (DataFrame, dict)
        Rows (mechanism, attack) with the nominal epsilon, the reserved-test certificate and
        DP-Sniper's larger direction (nats); the numbers the text cites (``fp_*``).
    """
    pair = np.array([[0.3], [0.0]])  # identity 0: mean 0.3, identity 1: mean 0; Laplace scale b = 1
    mechanisms = {"textbook float64": TextbookLaplace(pair, 1.0), "grid (float-safe)": ProductLaplace(pair, 1.0)}
    nominal = mechanisms["grid (float-safe)"].exact_epsilon(0, 1)
    rows = []
    for mech_name, mech in mechanisms.items():
        for attack, score in (("reachability", reachability_score(mech, 0, 1)),
                              ("log-likelihood ratio", mech.exact_score(0, 1))):
            certs = attack_certificates(mech, 0, 1, score, n=profile["float_n"], calls=profile["float_calls"], seed=seed)
            rows.append({"mechanism": mech_name, "attack": attack, "nominal epsilon": nominal,
                         "reserved test": certs["reserved"].value,
                         "DP-Sniper": max(certs["sniper a->b"].value, certs["sniper b->a"].value)})
    table = pd.DataFrame(rows).set_index(["mechanism", "attack"])
    numbers: dict[str, Any] = {"fp_n": profile["float_n"], "fp_calls": profile["float_calls"],
                               "fp_cap": float(np.log(1 / DEFAULT_C))}
    for (mech_name, attack), row in table.iterrows():
        key = ("tb" if mech_name.startswith("textbook") else "grid") + ("_reach" if attack == "reachability" else "_lr")
        numbers[f"fp_{key}_reserved"] = float(row["reserved test"])
        numbers[f"fp_{key}_sniper"] = float(row["DP-Sniper"])
    grid_max = float(table.loc["grid (float-safe)", ["reserved test", "DP-Sniper"]].to_numpy().max())
    numbers["fp_grid_phrase"] = ("none above the nominal 0.3" if grid_max <= nominal + 1e-9 else
                                 "one or more above the nominal 0.3 (each 95% certificate may exceed the truth 5% "
                                 "of the time)")
    return table, numbers
