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
from ..parameters import N_JOBS, PROFILE, SEED, Parameter
from .gdp import (GDP_DELTA, gaussian_pair, gdp_certificate, gdp_curve_wording, gdp_curves, gdp_mu_table,
                  gdp_mu_view, gdp_one_threshold, gdp_runs, gdp_single_point_table, gdp_single_point_view)
from .runner import (N_IDENTITIES, TESTS, Setting, audit_setting, certification_summary, certify_grid,
                               certify_setting, optimal_auc_reference, per_setting_summary, run, settings_grid)
from .views import (by_geometry_view, figure2_data, figure2_view, figure3_view, floating_point_view, table4_view,
                    table6_view, validity_view)
from .wording import (figure2_wording, figure3_wording, floating_point_wording, table4_wording, table6_wording,
                      validity_wording)

__all__ = [
    "BOUNDS", "BOUND_NAMES", "PARAMETERS", "settings", "FIGURE2", "GDP_DELTA", "GEOMETRIES", "MECHANISMS", "N_IDENTITIES", "PROFILES", "Setting", "TABLE4", "TABLE6",
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


#: The certificates the chapter compares: the joint certificate (the default) and the paper's.
BOUNDS = ("joint", "clopper-pearson")
BOUND_NAMES = {"joint": "joint", "clopper-pearson": "Clopper-Pearson"}

#: The chapter's papermill parameters (:func:`epsaudit.studies.parameters.check`); ``None`` keeps the profile's.
PARAMETERS = (
    PROFILE,
    Parameter("sizes", int, "test rows per identity (and rows per class of Table 4)", low=10, high=1000,
              optional=True, many=True),
    Parameter("epsilons", float, "requested global epsilons of Figures 2-3 and Table 6, nats (one in (0, 8] at least)",
              low=0.0, high=64.0, optional=True, many=True),
    Parameter("mechanisms", str, "noise mechanisms of Figure 3", choices=MECHANISMS, optional=True, many=True),
    SEED,
    N_JOBS,
)


def settings(profile: str, sizes=None, epsilons=None, mechanisms=None) -> dict[str, Any]:
    """The profile's settings with the chapter's parameters applied (``None`` keeps the profile's).

    Parameters
    ----------
    profile : {"smoke", "full", "paper"}
    sizes : list of int, optional
        Test rows per identity of the certificates, and rows per class of Table 4's null (Figure 2 then
        runs at the given size nearest the profile's ``fig2_n``).
    epsilons : list of float, optional
        Requested global epsilons (0 is the exact null); at least one in (0, 8] (Table 6's column).
    mechanisms : list of str, optional
        Noise mechanisms of Figure 3 (key ``"mechanisms"``; Table 4 and Figure 2 always run both).

    Returns
    -------
    dict

    Raises
    ------
    ValueError
        If ``epsilons`` has no value in (0, 8].

    Examples
    --------
    >>> s = settings("smoke", sizes=[30, 100], epsilons=[0, 2])
    >>> s["sizes"], s["epsilons"], s["mechanisms"]
    ((30, 100), (0.0, 2.0), ('gaussian', 'laplace'))
    """
    out = profile_settings(profile)
    if sizes is not None:
        out["sizes"] = tuple(sorted(int(n) for n in sizes))
        # Figure 2 runs at one size whose null row comes from Table 4's run: the given size nearest the profile's
        out["fig2_n"] = min(out["sizes"], key=lambda n: (abs(n - out["fig2_n"]), n))
    if epsilons is not None:
        eps = tuple(sorted(float(e) for e in epsilons))
        if not any(0 < e <= 8 for e in eps):
            raise ValueError(f"chapter 1: parameter epsilons = {list(eps)} needs at least one value in (0, 8] "
                             "(Table 6's column and Figure 2's largest setting)")
        out["epsilons"] = eps
    out["mechanisms"] = tuple(mechanisms) if mechanisms is not None else MECHANISMS
    return out


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
    paper = TABLE4.reindex(ours.index)  # the paper has n = 30, 100, 300 only
    side = pd.concat({(c, src): frame[c] for c in ours for src, frame in (("ours", ours), ("paper", paper))}, axis=1)
    numbers: dict[str, Any] = {}
    for n in ours.index:
        numbers[f"t4_gaussmech_{n}"] = float(ours.loc[n, "GaussMech"])
        numbers[f"t4_kde_{n}"] = float(ours.loc[n, "KDE-LR a=.01"])
        numbers[f"t4_div_{n}"] = float(ours.loc[n, "Div."])
        numbers[f"t4_auc_{n}"] = float(ours.loc[n, "AUC"])
    n0 = int(ours.index[0])
    numbers["t4_n0"] = n0
    numbers |= {"t4_gaussmech_first": float(ours.loc[n0, "GaussMech"]), "t4_kde_first": float(ours.loc[n0, "KDE-LR a=.01"]),
                "t4_div_first": float(ours.loc[n0, "Div."]), "t4_auc_first": float(ours.loc[n0, "AUC"])}
    have = n0 in TABLE4.index
    numbers["t4_paper_first_phrase"] = (
        f"paper {TABLE4.loc[n0, 'GaussMech']:.2f}, {TABLE4.loc[n0, 'KDE-LR a=.01']:.0f} and {TABLE4.loc[n0, 'Div.']:.1f}"
        if have else "the paper reports n = 30, 100 and 300 only")
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


def figure3_caps(sizes: tuple[int, ...] = (30, 100, 300), pairs: int = 40) -> dict[str, Any]:
    """The error level of each of ``pairs`` certificates at 95% and the caps it allows at each size, both bounds.

    Returns
    -------
    dict
        ``alpha40`` (each certificate's level, ``0.05 / pairs``), ``cap<n>`` and ``cap<n>_cp`` (nats, at
        delta = 1e-5, joint and Clopper-Pearson; :func:`epsaudit.bounds.certifiable_cap`) and
        ``f3_caps_phrase`` ("2.97 (joint) / 2.03 (Clopper-Pearson) at n = 30, ...").

    Examples
    --------
    >>> round(figure3_caps((100,), pairs=1)["cap100"], 3)
    4.194
    """
    alpha = bonferroni_alpha(pairs)
    out: dict[str, Any] = {"alpha40": alpha}
    for n in sizes:
        out[f"cap{n}"] = certifiable_cap(n, n, alpha, 1e-5)
        out[f"cap{n}_cp"] = certifiable_cap(n, n, alpha, 1e-5, bound="clopper-pearson")
    out["f3_caps_phrase"] = ", ".join(f"{out[f'cap{n}']:.2f} (joint) or {out[f'cap{n}_cp']:.2f} (Clopper-Pearson) at "
                                      f"n = {n}" for n in sizes)
    return out


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
        ``plan_n_cp`` (the same with the paper's Clopper-Pearson bound), ``plan_n_run`` (the largest size
        run), ``plan_pairs`` and ``plan_mechanism`` (the noise's name). Joint certificate unless marked.

    Examples
    --------
    >>> frame = pd.DataFrame({"mechanism": ["gaussian"], "epsilon": [8.0], "reference_epsilon": [4.0], "n": [30],
    ...                       "median_certified": [0.5]})
    >>> plan = plan_exercise(frame)
    >>> plan["plan_n"], plan["plan_n_cp"]  # joint certificate, the paper's Clopper-Pearson bound
    (185, 407)
    """
    if "bound" in summary:
        summary = summary[summary["bound"] == "joint"]
    mechanism = "gaussian" if "gaussian" in set(summary["mechanism"]) else str(summary["mechanism"].iloc[0])
    positive = sorted(e for e in summary["epsilon"].unique() if e > 0)
    epsilon = epsilon if np.isclose(positive, epsilon).any() else positive[-1]
    rows = summary[(summary["mechanism"] == mechanism) & np.isclose(summary["epsilon"], epsilon)]
    ref = float(rows["reference_epsilon"].mean())
    return {"plan_eps": float(epsilon), "plan_ref": ref, "plan_certified": float(rows["median_certified"].max()),
            "plan_n": int(required_test_size(ref, bonferroni_alpha(pairs), delta)),
            "plan_n_single": int(required_test_size(ref, bonferroni_alpha(1), delta)),
            "plan_n_cp": int(required_test_size(ref, bonferroni_alpha(pairs), delta, bound="clopper-pearson")),
            "plan_n_run": int(summary["n"].max()), "plan_pairs": int(pairs),
            "plan_mechanism": {"gaussian": "Gaussian", "laplace": "product Laplace"}.get(mechanism, mechanism)}


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
    rows = ["mechanism", "test"] + (["bound"] if "bound" in summary else []) + ["n"]
    table = summary.pivot_table(index=rows, columns="epsilon", values="fraction_positive", aggfunc="mean")
    numbers: dict[str, float] = {}
    for bound, suffix in (("joint", ""), ("clopper-pearson", "_cp")):
        part = summary[summary["bound"] == bound] if "bound" in summary else summary
        first = "gaussian" if "gaussian" in set(part["mechanism"]) else part["mechanism"].iloc[0]
        part = part[part.mechanism == first]
        numbers[f"f3_exact_max{suffix}"] = float(part[part.test == "exact"]["fraction_positive"].max())
        numbers[f"f3_learned_max{suffix}"] = float(part[part.test == "logistic"]["fraction_positive"].max())
        numbers[f"f3_median_max{suffix}"] = float(part["median_certified"].max())
        numbers["f3_first_noise"] = {"gaussian": "Gaussian", "laplace": "product Laplace"}.get(first, first)
    gain = numbers["f3_median_max"] - numbers["f3_median_max_cp"]
    numbers["f3_joint_phrase"] = ("the joint test certifies more from the same kind of counts" if gain > 5e-3 else
                                  "the two bounds agree here" if gain > -5e-3 else
                                  "here the paper's bound is the larger")
    return table, numbers


def table6(summary: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 6: the fraction of anisotropic-Gaussian pairs certified above zero, and the same beside the paper's.

    Parameters
    ----------
    summary : DataFrame
        :func:`certification_summary` of the Table 6 certificates.

    Returns
    -------
    (DataFrame, DataFrame)
        Ours (rows (test, bound, n), columns requested epsilon) and our joint rows beside :data:`TABLE6`, rounded
        to 2 decimals, ``"n/a"`` where the paper has no row (no learned test at n = 300, no
        shrinkage LDA).
    """
    rows = ["test"] + (["bound"] if "bound" in summary else []) + ["n"]
    ours = summary.pivot_table(index=rows, columns="epsilon", values="fraction_positive", aggfunc="mean")
    joint = ours.xs("joint", level="bound") if "bound" in ours.index.names else ours
    paper = TABLE6.reindex(joint.index).reindex(columns=joint.columns)
    side = pd.concat({"ours": joint, "paper": paper}, axis=1).round(2).astype(object)
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
    if "bound" in summary:
        cp = ours.xs("clopper-pearson", level="bound")
        summary, runs, ours = (summary[summary["bound"] == "joint"], runs[runs["bound"] == "joint"],
                               ours.xs("joint", level="bound"))
    else:
        cp = ours
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
        numbers[f"t6_{test}_cp"] = float(cp.loc[(test, big_n), big_eps])
    have = ("exact", big_n) in TABLE6.index and big_eps in TABLE6.columns
    numbers["t6_paper_phrase"] = (f"paper {TABLE6.loc[('exact', big_n), big_eps]:.2f}" if have else
                                  "the paper has no value at this setting")
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
    keys = ["geometry", "mechanism", "test"] + (["bound"] if "bound" in certs else []) + ["epsilon", "n", "rep"]
    families = certs.groupby(keys)["violation"].any()
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
