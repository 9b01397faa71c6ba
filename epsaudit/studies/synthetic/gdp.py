"""Chapter 1, beyond the papers: trade-off-curve certificates on a Gaussian pair of known mu.

A pair of identities releases ``N(mu, 1)`` and ``N(0, 1)`` in one dimension
(:class:`epsaudit.mechanisms.IsotropicGaussian` with separation ``mu``): it is exactly ``mu``-GDP,
its trade-off curve is ``Phi(Phi^-1(1 - a) - mu)`` and its epsilon at ``delta`` is that of the
analytic Gaussian mechanism. The trade-off certificate
(:func:`epsaudit.audits.tradeoff.tradeoff_certificate`: a simultaneous Bonferroni band on the
error rates of the exact likelihood-ratio test at four thresholds fixed on development outputs)
certifies an upper envelope of that curve, a lower bound on ``mu`` and an epsilon at every delta.
This module runs it at several ``mu`` and sample sizes and compares it with the truth and with the
single-threshold reserved-test certificate on the same outputs.

Every certificate here stands on its own at 95% (a family of one): ``n`` development and ``n``
fresh test outputs per identity, drawn on the stream ``("gdp", seed, mu, n, rep, part)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy import stats

from ...audits.tradeoff import DEFAULT_THRESHOLDS, TradeoffCertificate, tradeoff_certificate
from ...bounds import gaussian_epsilon, gaussian_tradeoff
from ...mechanisms import IsotropicGaussian
from ...progress import progress_bar
from .views import number, styled

__all__ = ["GDP_DELTA", "gaussian_pair", "gdp_certificate", "gdp_curve_wording", "gdp_curves", "gdp_mu_table",
           "gdp_mu_view",
           "gdp_one_threshold", "gdp_runs", "gdp_single_point_table", "gdp_single_point_view"]

#: The delta of every single-point epsilon of this section (as the reserved test's).
GDP_DELTA = 1e-5
#: Decimal digits of mu and of epsilon in this section's tables and prose.
MU_DIGITS, EPS_DIGITS = 2, 2


def gaussian_pair(mu: float) -> IsotropicGaussian:
    """Two identities releasing ``N(mu, 1)`` (identity 0) and ``N(0, 1)`` (identity 1): exactly ``mu``-GDP.

    Parameters
    ----------
    mu : float, >= 0
        The separation in noise standard deviations (0 is the exact null).

    Returns
    -------
    IsotropicGaussian

    Examples
    --------
    >>> gaussian_pair(2.0).separation(0, 1)
    2.0
    """
    return IsotropicGaussian(np.array([[float(mu)], [0.0]]), sigma=1.0, delta=GDP_DELTA)


def gdp_certificate(mu: float, n: int, seed: int = 0, rep: int = 0, *, n_thresholds: int = DEFAULT_THRESHOLDS,
                    confidence: float = 0.95) -> TradeoffCertificate:
    """One trade-off certificate of :func:`gaussian_pair` with its exact likelihood-ratio score.

    Parameters
    ----------
    mu : float
        The pair's exact Gaussian-DP parameter.
    n : int
        Development outputs and fresh test outputs per identity.
    seed, rep : int
        Base seed and repetition (parts of the stream key).
    n_thresholds : int
        Thresholds of the Bonferroni band (1 gives the single-threshold reserved-test certificate).
    confidence : float
        The certificate holds on its own at this confidence.

    Returns
    -------
    TradeoffCertificate
        Its ``mu_lower``, ``best_epsilon`` (at :data:`GDP_DELTA`), ``single_threshold_epsilon``
        and ``envelope``.

    Examples
    --------
    >>> cert = gdp_certificate(2.0, 300)
    >>> bool(0 < cert.mu_lower <= 2.0), cert.n
    (True, (300, 300))
    """
    mech = gaussian_pair(mu)
    dev = mech.sample_groups(int(n), seed=("gdp", seed, float(mu), int(n), int(rep), "dev"))
    test = mech.sample_groups(int(n), seed=("gdp", seed, float(mu), int(n), int(rep), "test"))
    # test outputs are fresh draws on their own stream; one-dimensional grid outputs repeat by
    # value, where the value check of reused rows cannot tell reuse from repetition
    return tradeoff_certificate(dev[0], dev[1], test[0], test[1], score_function=mech.exact_score(0, 1),
                                n_thresholds=n_thresholds, confidence=confidence, delta=GDP_DELTA, pair=(0, 1),
                                check_reuse=not mech.repeated_outputs)


def _gdp_row(mu: float, n: int, seed: int, rep: int, exact: float) -> dict:
    """One row of :func:`gdp_runs` (module-level, so that joblib can run it in worker processes)."""
    cert = gdp_certificate(mu, n, seed, rep)
    return {"mu": float(mu), "n": int(n), "rep": rep, "mu_lower": cert.mu_lower,
            "best_epsilon": cert.best_epsilon, "single_threshold_epsilon": cert.single_threshold_epsilon,
            "same_threshold_epsilon": cert.same_threshold_epsilon,
            "correction_cost": cert.correction_cost, "exact_epsilon": exact, "points": cert.n_points}


def gdp_runs(profile: dict, seed: int = 0, n_jobs: int | None = None, progress: bool = True) -> pd.DataFrame:
    """Every certificate of the section: each ``mu`` x sample size x repetition of the profile.

    Parameters
    ----------
    profile : dict
        ``gdp_mus``, ``gdp_sizes``, ``gdp_reps`` (:data:`epsaudit.studies.synthetic.PROFILES`).
    seed : int
    n_jobs : int, optional
        joblib workers over certificates; each is seeded by its own ``mu``, size and repetition, so the
        table does not depend on it.
    progress : bool
        tqdm bar.

    Returns
    -------
    pandas.DataFrame
        One row per certificate: ``mu``, ``n``, ``rep``, ``mu_lower``, ``best_epsilon``,
        ``single_threshold_epsilon``, ``same_threshold_epsilon``, ``correction_cost``,
        ``exact_epsilon`` (of the pair at :data:`GDP_DELTA`) and ``points`` (certified points).

    Examples
    --------
    >>> runs = gdp_runs({"gdp_mus": (1.0,), "gdp_sizes": (100,), "gdp_reps": 2}, progress=False)
    >>> len(runs), bool((runs["mu_lower"] <= 1.0).all())
    (2, True)
    """
    tasks = [(float(mu), int(n), seed, rep, float(gaussian_epsilon(mu, GDP_DELTA)) if mu > 0 else 0.0)
             for mu in profile["gdp_mus"] for n in profile["gdp_sizes"] for rep in range(profile["gdp_reps"])]
    rows = Parallel(n_jobs=n_jobs, return_as="generator")(delayed(_gdp_row)(*t) for t in tasks)
    return pd.DataFrame(list(progress_bar(rows, progress, "trade-off certificates", total=len(tasks))))


def gdp_curves(profile: dict, seed: int = 0, n_grid: int = 201) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The figure's data: certified envelopes and the exact trade-off curve at ``gdp_figure_mu``.

    One certificate (repetition 0) per sample size of the profile.

    Parameters
    ----------
    profile : dict
        ``gdp_figure_mu`` and ``gdp_sizes``.
    seed : int
    n_grid : int
        False-positive rates on an even grid of [0, 1].

    Returns
    -------
    (DataFrame, DataFrame)
        Curves: ``n``, ``fpr``, ``exact`` (the pair's trade-off curve), ``envelope`` (the certified
        upper envelope) and ``gdp_of_certified_mu`` (the curve of the certified mu), with
        ``mu_lower`` per row; points: ``n``, ``fpr_upper``, ``fnr_upper`` of the certified points.

    Examples
    --------
    >>> curves, points = gdp_curves({"gdp_figure_mu": 2.0, "gdp_sizes": (100,)}, n_grid=3)
    >>> curves["fpr"].tolist(), bool((curves["envelope"] >= curves["exact"]).all())
    ([0.0, 0.5, 1.0], True)
    """
    mu = float(profile["gdp_figure_mu"])
    fpr = np.linspace(0.0, 1.0, n_grid)
    exact = gaussian_tradeoff(fpr, mu)
    curves, points = [], []
    for n in profile["gdp_sizes"]:
        cert = gdp_certificate(mu, n, seed, 0)
        curves.append(pd.DataFrame({"mu": mu, "n": int(n), "fpr": fpr, "exact": exact, "envelope": cert.envelope(fpr),
                                    "gdp_of_certified_mu": gaussian_tradeoff(fpr, cert.mu_lower),
                                    "mu_lower": cert.mu_lower}))
        points.append(pd.DataFrame({"n": int(n), "fpr_upper": cert.fpr_upper, "fnr_upper": cert.fnr_upper}))
    return pd.concat(curves, ignore_index=True), pd.concat(points, ignore_index=True)


def gdp_mu_table(runs: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Median certified mu per true mu and sample size, and the section's validity counts (``gdp_*``).

    Parameters
    ----------
    runs : DataFrame
        :func:`gdp_runs`.

    Returns
    -------
    (DataFrame, dict)
        Rows true mu, columns n (median ``mu_lower`` over repetitions); the numbers:
        ``gdp_certs``, ``gdp_reps``, ``gdp_mu_above`` (certified mu above the true mu),
        ``gdp_eps_above`` (best epsilon above the exact epsilon), ``gdp_tolerance`` (99.9% quantile of
        Binomial(certificates, 0.05)) and ``gdp_validity_phrase``.

    Examples
    --------
    >>> table, numbers = gdp_mu_table(gdp_runs({"gdp_mus": (1.0,), "gdp_sizes": (100,), "gdp_reps": 2}))
    >>> table.shape, numbers["gdp_certs"]
    ((1, 1), 2)
    """
    table = runs.pivot_table(index="mu", columns="n", values="mu_lower", aggfunc="median")
    certs = len(runs)
    mu_above = int((runs["mu_lower"] > runs["mu"] + 1e-9).sum())
    eps_above = int((runs["best_epsilon"] > runs["exact_epsilon"] + 1e-9).sum())
    tolerance = int(stats.binom.ppf(0.999, certs, 0.05))
    worst = max(mu_above, eps_above)
    phrase = ("as a 95% certificate may" if worst <= tolerance else
              "more often than a 95% certificate may: a failure of the construction")
    return table, {"gdp_certs": certs, "gdp_reps": int(runs["rep"].nunique()), "gdp_mu_above": mu_above,
                   "gdp_eps_above": eps_above, "gdp_tolerance": tolerance, "gdp_validity_phrase": phrase}


def gdp_single_point_table(runs: pd.DataFrame, mu: float) -> tuple[pd.DataFrame, dict[str, Any]]:
    """What the curve costs at one point: the band's epsilons against the single-threshold certificate.

    Parameters
    ----------
    runs : DataFrame
        :func:`gdp_runs`.
    mu : float
        The true mu compared (one of the runs' ``mu``).

    Returns
    -------
    (DataFrame, dict)
        Rows n; medians over repetitions of ``single_threshold_epsilon``, ``best_epsilon``,
        ``same_threshold_epsilon``, ``correction_cost`` and ``mu_lower`` (nats, delta =
        :data:`GDP_DELTA`); the numbers the text cites at the largest n (``gdp_sp_*``).

    Examples
    --------
    >>> runs = gdp_runs({"gdp_mus": (2.0,), "gdp_sizes": (100,), "gdp_reps": 2})
    >>> table, numbers = gdp_single_point_table(runs, 2.0)
    >>> list(table.index), bool(numbers["gdp_sp_cost"] >= 0)
    ([100], True)
    """
    rows = runs[np.isclose(runs["mu"], mu)]
    columns = ["single_threshold_epsilon", "best_epsilon", "same_threshold_epsilon", "correction_cost", "mu_lower"]
    table = rows.groupby("n")[columns].median()
    big = int(table.index.max())
    top = table.loc[big]
    best, single = round(float(top["best_epsilon"]), EPS_DIGITS), round(float(top["single_threshold_epsilon"]), EPS_DIGITS)
    if best < single:
        phrase = "its other thresholds do not win that back"
    elif best == single:
        phrase = "its other thresholds just win that back"
    else:
        phrase = "its other thresholds more than win that back"
    numbers = {"gdp_sp_mu": float(mu), "gdp_sp_n": big, "gdp_sp_exact": float(rows["exact_epsilon"].iloc[0]),
               "gdp_sp_single": float(top["single_threshold_epsilon"]), "gdp_sp_best": float(top["best_epsilon"]),
               "gdp_sp_same": float(top["same_threshold_epsilon"]), "gdp_sp_cost": float(top["correction_cost"]),
               "gdp_sp_mu_lower": float(top["mu_lower"]), "gdp_sp_phrase": phrase}
    return table, numbers


def gdp_curve_wording(curves: pd.DataFrame, mu_table: pd.DataFrame) -> dict[str, str]:
    """The sentence on the figure and the mu table, worded from their numbers.

    Parameters
    ----------
    curves : DataFrame
        :func:`gdp_curves`' curves.
    mu_table : DataFrame
        :func:`gdp_mu_table`'s table (rows true mu, columns n).

    Returns
    -------
    dict
        ``gdp_curve_phrase``: whether every drawn envelope lies on or above the exact curve, and
        whether the median certified mu stays below the true mu and grows with n.

    Examples
    --------
    >>> curves = pd.DataFrame({"exact": [1.0, 0.2, 0.0], "envelope": [1.0, 0.5, 0.0]})
    >>> table = pd.DataFrame({100: [0.5], 1000: [0.8]}, index=pd.Index([1.0], name="mu"))
    >>> gdp_curve_wording(curves, table)["gdp_curve_phrase"]
    'Every certified envelope in the figure lies on or above the exact curve, and the median certified μ stays below the true μ and grows with n.'
    """
    above = bool((curves["envelope"] >= curves["exact"] - 1e-12).all())
    first = ("Every certified envelope in the figure lies on or above the exact curve" if above else
             "Not every certified envelope in the figure lies above the exact curve (a 95% certificate may fail)")
    values = mu_table.to_numpy()
    below = bool((values <= mu_table.index.to_numpy()[:, None] + 1e-12).all())
    grows = bool((np.diff(values, axis=1) >= 0).all())
    second = {(True, True): "the median certified μ stays below the true μ and grows with n",
              (True, False): "the median certified μ stays below the true μ but does not grow with n in every row",
              (False, True): "the median certified μ grows with n but exceeds the true μ in some row",
              (False, False): "the median certified μ neither stays below the true μ nor grows with n"}[(below, grows)]
    return {"gdp_curve_phrase": f"{first}, and {second}."}


def gdp_one_threshold(profile: dict, seed: int = 0) -> dict[str, Any]:
    """The exercise on one threshold: the band with ``n_thresholds=1`` is the reserved-test certificate.

    At ``gdp_figure_mu`` and the largest size of the profile, repetition 0.

    Returns
    -------
    dict
        ``gdp_ex_one`` (one-threshold band, best point by joint test), ``gdp_ex_single`` (the
        single-threshold certificate reported by the four-threshold band), ``gdp_ex_four``
        (four-threshold band, best point by joint tests), ``gdp_ex_mu_one`` / ``gdp_ex_mu_four`` (certified mu), ``gdp_ex_n``,
        ``gdp_ex_mu`` and ``gdp_ex_same`` ("the same" or "not the same").

    Examples
    --------
    >>> gdp_one_threshold({"gdp_figure_mu": 2.0, "gdp_sizes": (100,)})["gdp_ex_same"]
    'the same'
    """
    mu, n = float(profile["gdp_figure_mu"]), int(max(profile["gdp_sizes"]))
    one, four = gdp_certificate(mu, n, seed, 0, n_thresholds=1), gdp_certificate(mu, n, seed, 0)
    # best points by joint tests, as the reserved test's own certificate (the library's default bound)
    same = np.isclose(one.joint_best_epsilon, four.single_threshold_epsilon, rtol=0, atol=1e-12)
    return {"gdp_ex_mu": mu, "gdp_ex_n": n, "gdp_ex_one": one.joint_best_epsilon,
            "gdp_ex_single": four.single_threshold_epsilon, "gdp_ex_four": four.joint_best_epsilon, "gdp_ex_mu_one": one.mu_lower, "gdp_ex_mu_four": four.mu_lower,
            "gdp_ex_same": "the same" if same else "not the same"}


def gdp_mu_view(table: pd.DataFrame, reps: int):
    """:func:`gdp_mu_table` as a display table: rows true mu, one column per sample size."""
    frame = pd.DataFrame({f"n = {n}": [number(v, MU_DIGITS) for v in table[n]] for n in table.columns},
                         index=pd.Index([f"{mu:g}" for mu in table.index], name="true μ"))
    return styled(frame, f"Certified μ, median of {reps} draws (95% each).")


def gdp_single_point_view(table: pd.DataFrame, mu: float, reps: int):
    """:func:`gdp_single_point_table` as a display table (nats at delta = 1e-5, medians over repetitions)."""
    labels = {"single_threshold_epsilon": ("reserved test", EPS_DIGITS),
              "same_threshold_epsilon": ("band, same threshold", EPS_DIGITS), "correction_cost": ("cost", EPS_DIGITS),
              "best_epsilon": ("band, best threshold", EPS_DIGITS), "mu_lower": ("band, certified μ", MU_DIGITS)}
    frame = pd.DataFrame({label: [number(v, d) for v in table[key]] for key, (label, d) in labels.items()},
                         index=pd.Index(list(table.index), name="n"))
    exact = gaussian_epsilon(mu, GDP_DELTA)
    return styled(frame, f"Certified ε at δ = 10⁻⁵ (nats; median of {reps} draws) for true μ = {mu:g}, whose exact "
                         f"ε is {number(exact, EPS_DIGITS)}. Cost: the reserved test minus the band at the same "
                         "threshold, per draw.")
