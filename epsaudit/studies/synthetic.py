"""Chapter 1, the known-epsilon benchmark: the plumbing behind the page.

*Picture the Epsilon* calibrates its audit routes on mechanisms whose privacy is known exactly (Tables 4 and 6, Figures
2 and 3). The notebook holds the computation; this module the profiles and parameters, the benchmark's settings
(:class:`Setting`), the parallel map over settings (:func:`run`), the learned scorers (:func:`classifier`), the
floating-point section's :func:`attack_certificates` and the figures. Each setting's draws are seeded by its own fields
(:mod:`epsaudit.protocol`), so tables do not depend on ``n_jobs`` and any setting can be re-run on its own.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from ..audits import reserved_test_certificate
from ..mechanisms import (BENCHMARK_EPSILONS, BENCHMARK_SAMPLE_SIZES, N_AUDITED_PAIRS, Mechanism, benchmark_pairs,
                          calibrate, prototype_set)
from ..parallel import progress_bar
from ..results import EpsilonResult
from ..audits.scorers import paper_logistic_regression, shrinkage_lda
from ..protocol import seed_key
from ..sniper import DEFAULT_C, dp_sniper
from . import choose_profile
from .parameters import N_JOBS, PROFILE, SEED, Parameter
import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
from .figures import MECHANISM_LABELS, PALETTE

__all__ = ["BOUNDS", "GEOMETRIES", "MECHANISMS", "N_IDENTITIES", "PARAMETERS", "PROFILES", "Setting",
           "attack_certificates", "classifier", "run", "settings", "settings_grid", "routes_against_reference", "certification_curves", "tradeoff_curves"]

#: Prototype geometries and noise mechanisms of Table 4 and Figures 2-3.
GEOMETRIES = ("dispersed", "face_like")
MECHANISMS = ("gaussian", "laplace")
#: Identities per prototype set (ours: the paper does not state it; 20 give 190 candidate pairs).
N_IDENTITIES = 20
#: The certificates the chapter compares: the joint certificate (the default) and the paper's.
BOUNDS = ("joint", "clopper-pearson")

#: Run profiles. sizes: test rows per identity (rows per class at the null); reps_null / reps: repetitions
#: at the null / elsewhere; pairs: audited pairs per setting (the paper: 40); fig2_n: rows per class of
#: Figure 2; mc: Monte Carlo draws per class of the optimal-AUC reference; float_n / float_calls: the
#: floating-point section's reserved-test outputs per input and part / DP-Sniper calls; gdp_*: the trade-off
#: section's true mu, outputs per identity and part, repetitions, figure's mu. "paper": three repetitions everywhere.
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
    sizes : int or list of int, optional
        Test rows per identity of the certificates, and rows per class of Table 4's null (Figure 2 then
        runs at the given size nearest the profile's ``fig2_n``).
    epsilons : float or list of float, optional
        Requested global epsilons (0 is the exact null); at least one in (0, 8] (Table 6's column).
    mechanisms : str or list of str, optional
        Noise mechanisms of Figure 3 (key ``"mechanisms"``; Table 4 and Figure 2 always run both).

    Returns
    -------
    dict
        A copy of :data:`PROFILES` ``[profile]`` with the parameters applied.

    Raises
    ------
    ValueError
        If ``profile`` is unknown, or ``epsilons`` has no value in (0, 8].

    Examples
    --------
    >>> s = settings("smoke", sizes=[30, 100], epsilons=[0, 2])
    >>> s["sizes"], s["epsilons"], s["mechanisms"], s["fig2_n"]
    ((30, 100), (0.0, 2.0), ('gaussian', 'laplace'), 30)
    >>> settings("smoke", sizes=300)["sizes"]
    (300,)
    """
    out = choose_profile(PROFILES, profile, "chapter 1 (the known-epsilon benchmark)")
    as_list = lambda v: list(v) if isinstance(v, (list, tuple)) else [v]  # noqa: E731 (a bare value)
    if sizes is not None:
        out["sizes"] = tuple(sorted(int(n) for n in as_list(sizes)))
        # Figure 2 runs at one size whose null row comes from Table 4's run: the given size nearest the profile's
        out["fig2_n"] = min(out["sizes"], key=lambda n: (abs(n - out["fig2_n"]), n))
    if epsilons is not None:
        eps = tuple(sorted(float(e) for e in as_list(epsilons)))
        if not any(0 < e <= 8 for e in eps):
            raise ValueError(f"chapter 1: parameter epsilons = {list(eps)} needs at least one value in (0, 8] "
                             "(Table 6's column and Figure 2's largest setting)")
        out["epsilons"] = eps
    out["mechanisms"] = tuple(as_list(mechanisms)) if mechanisms is not None else MECHANISMS
    return out


@dataclass(frozen=True)
class Setting:
    """One benchmark cell: a calibrated mechanism, its audited pairs and the seeds of its draws.

    Attributes
    ----------
    geometry, mechanism : str
        Prototype geometry (``dispersed``, ``face_like``; :func:`epsaudit.mechanisms.prototype_set`) and noise
        mechanism (``laplace``, ``gaussian``, ``anisotropic_gaussian``; :func:`epsaudit.mechanisms.calibrate`).
    epsilon : float
        Requested global epsilon (nats; 0 is the exact null).
    n, rep, seed : int
        Samples per class and part; repetition index; base seed (prototypes and pair order; draws use :meth:`key`).
    dim, n_identities, n_pairs : int
        Embedding dimension, identities per prototype set, audited pairs (the paper: 40).

    Examples
    --------
    >>> s = Setting("dispersed", "gaussian", 8.0, 30, 0, n_pairs=3)
    >>> mechanism, pairs = s.build()
    >>> len(pairs), s.key("dev")[-1], s.fields()["epsilon"]
    (3, 'dev', 8.0)
    """

    geometry: str
    mechanism: str
    epsilon: float
    n: int
    rep: int
    seed: int = 0
    dim: int = 512
    n_identities: int = N_IDENTITIES
    n_pairs: int = N_AUDITED_PAIRS

    def key(self, draws: str) -> tuple:
        """The stream key ``("benchmark", seed, geometry, mechanism, epsilon, n, rep, draws)`` of one set
        of draws (``"routes"``, ``"dev"``, ``"test"``, ...); each identity's draws add the identity."""
        return ("benchmark", self.seed, self.geometry, self.mechanism, float(self.epsilon), self.n, self.rep, draws)

    def build(self) -> tuple[Mechanism, list[tuple[int, int]]]:
        """Calibrated mechanism (prototypes seeded by ``seed`` only) and its ``n_pairs`` audited pairs."""
        prototypes = prototype_set(self.geometry, self.n_identities, self.dim, seed=self.seed)
        mechanism = calibrate(self.mechanism, prototypes, self.epsilon, seed=self.seed)
        return mechanism, benchmark_pairs(self.n_identities, seed=self.seed)[: self.n_pairs]

    def fields(self) -> dict[str, Any]:
        """The columns that name this setting in a table: geometry, mechanism, epsilon, n, rep."""
        return {"geometry": self.geometry, "mechanism": self.mechanism, "epsilon": float(self.epsilon),
                "n": int(self.n), "rep": int(self.rep)}


def settings_grid(geometries: Iterable[str], mechanisms: Iterable[str], epsilons: Iterable[float],
                  sizes: Iterable[int], reps: int, seed: int = 0, dim: int = 512,
                  n_pairs: int = N_AUDITED_PAIRS) -> list[Setting]:
    """Every combination of the arguments as a :class:`Setting`, in a fixed order.

    Parameters
    ----------
    geometries, mechanisms : iterable of str
    epsilons, sizes : iterable
        Requested global epsilons (nats); samples per class.
    reps, seed, dim, n_pairs : int
        Repetitions per combination (``rep = 0 .. reps - 1``); the rest as :class:`Setting`.

    Returns
    -------
    list of Setting
        Ordered by geometry, mechanism, epsilon, size, repetition (the last varies fastest).

    Examples
    --------
    >>> [(s.mechanism, s.rep) for s in settings_grid(["dispersed"], ["gaussian", "laplace"], [0.0], [30], 2)]
    [('gaussian', 0), ('gaussian', 1), ('laplace', 0), ('laplace', 1)]
    """
    geometries, mechanisms, epsilons, sizes = (list(v) for v in (geometries, mechanisms, epsilons, sizes))
    return [Setting(g, m, float(e), int(n), r, seed, dim, N_IDENTITIES, n_pairs)
            for g in geometries for m in mechanisms for e in epsilons for n in sizes for r in range(reps)]


def classifier(test: str) -> Any:
    """The learned scorer of a test: the paper's logistic regression or shrinkage LDA.

    Parameters
    ----------
    test : {"logistic", "shrinkage_lda"}

    Returns
    -------
    sklearn estimator
        :func:`epsaudit.audits.scorers.paper_logistic_regression` (as Tables 4 and 6 of *Picture the
        Epsilon*) or :func:`epsaudit.audits.scorers.shrinkage_lda` (Ledoit-Wolf covariance).

    Raises
    ------
    ValueError
        Any other name.

    Examples
    --------
    >>> type(classifier("shrinkage_lda")).__name__
    'LinearDiscriminantAnalysis'
    """
    if test == "logistic":
        return paper_logistic_regression()
    if test == "shrinkage_lda":
        return shrinkage_lda()
    raise ValueError(f"unknown test {test!r}; expected 'logistic' or 'shrinkage_lda'")


def run(items: Sequence[Any], task: Callable[..., Any], *, n_jobs: int | None = None, progress: bool = True,
        desc: str = "settings", **kwargs) -> pd.DataFrame:
    """Map ``task`` over ``items`` in parallel (joblib) and stack the results into one table.

    Parameters
    ----------
    items : sequence
        :class:`Setting` objects, or any picklable arguments of ``task``.
    task : callable
        ``task(item, **kwargs)`` returning a DataFrame, a dict (one row) or a list of dicts; may be
        defined in the notebook.
    n_jobs : int, optional
        joblib workers.
    progress : bool
        tqdm bar labelled ``desc``.
    **kwargs
        Passed to ``task``.

    Returns
    -------
    pandas.DataFrame
        The results in item order (empty if there are no items).

    Examples
    --------
    >>> run([1, 2], lambda x, k: {"x": x, "y": k * x}, k=10, progress=False)["y"].tolist()
    [10, 20]
    """
    jobs = (delayed(task)(item, **kwargs) for item in items)
    out = list(progress_bar(Parallel(n_jobs=n_jobs, return_as="generator")(jobs), progress, desc, total=len(items)))
    frames = [o if isinstance(o, pd.DataFrame) else pd.DataFrame([o] if isinstance(o, dict) else o) for o in out]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def attack_certificates(mechanism: Mechanism, a: int, b: int, score_function: Callable[[np.ndarray], np.ndarray], *,
                        n: int = 100_000, calls: int = 400_000, c: float = DEFAULT_C, confidence: float = 0.95,
                        seed=0) -> dict[str, EpsilonResult]:
    """Certify one fixed attack (a score function) on a mechanism with the reserved test and with DP-Sniper.

    The reserved test (:func:`epsaudit.audits.reserved_test_certificate`, pure DP) draws ``n`` development and ``n``
    test outputs per input and thresholds ``score_function`` where the development bound is largest; DP-Sniper
    (:func:`epsaudit.sniper.dp_sniper`) spends ``calls`` mechanism calls. Each holds at ``confidence`` on its own
    (DP-Sniper's two directions together). Every sample is a fresh draw on its own child stream of ``seed``, so the
    reserved test's reuse check is skipped (``check_reuse=False``, recorded; grid outputs repeat values by design).

    Parameters
    ----------
    mechanism : Mechanism
    a, b : int
        Identities of the pair (``a`` is the positive class / the numerator of ``a -> b``).
    score_function : callable
        ``(n, d) -> (n,)`` scores, higher meaning "more like ``a``"; ``+-inf`` allowed.
    n, calls : int
        Development and test outputs per input for the reserved test (>= 2); DP-Sniper's budget for the pair.
    c, confidence : float
        DP-Sniper's target firing probability; the confidence of each method's certificate.
    seed : int, stream key (tuple) or numpy.random.Generator

    Returns
    -------
    dict
        ``"reserved"``, ``"sniper a->b"`` and ``"sniper b->a"``: :class:`~epsaudit.results.EpsilonResult`.

    Raises
    ------
    ValueError
        If ``mechanism`` is not a :class:`~epsaudit.mechanisms.Mechanism`, ``n < 2``, or as
        :func:`epsaudit.sniper.dp_sniper` and the reserved test.

    Examples
    --------
    >>> from epsaudit.mechanisms import ProductLaplace, reachability_score
    >>> grid = ProductLaplace(np.array([[0.3], [0.0]]), 1.0)
    >>> out = attack_certificates(grid, 0, 1, reachability_score(grid, 0, 1), n=2000, calls=20_000)
    >>> sorted(out), out["reserved"].value
    (['reserved', 'sniper a->b', 'sniper b->a'], 0.0)
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


# --- Figures --------------------------------------------------------------------------------------


#: One colour per noise mechanism, the same in every figure of the chapter.
MECHANISM_COLOURS = {"gaussian": PALETTE[0], "laplace": PALETTE[1], "anisotropic_gaussian": PALETTE[2]}

#: Line style per test of the reserved-test certificate.
TEST_STYLES = {"exact": "--", "logistic": "-", "shrinkage_lda": "-."}

TEST_LABELS = {"exact": "exact likelihood ratio", "logistic": "logistic regression", "shrinkage_lda": "shrinkage LDA"}

WIDTH = 7.5

#: Font sizes (pt) of legends and panel titles.
LEGEND, TITLE = 10, 11


def _log_ticks(ax) -> None:
    """Plain numbers (1, 2, 5, 10, ...) on a log-scaled x axis instead of powers of ten."""
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def _line_with_band(ax, data: pd.DataFrame, x: str, y: str, label: str, **kwargs) -> None:
    """Mean of ``y`` per requested epsilon as a line at the mean of ``x``; min-max band over the
    rows of that setting (prototype geometries and repetitions)."""
    key = "epsilon" if "epsilon" in data else x
    g = data.groupby(key).agg(x_=(x, "mean"), mean=(y, "mean"), lo=(y, "min"), hi=(y, "max")).sort_values("x_")
    (line,) = ax.plot(g["x_"], g["mean"], marker="o", markersize=4, label=label, **kwargs)
    ax.fill_between(g["x_"], g["lo"], g["hi"], alpha=0.2, color=line.get_color(), linewidth=0)


def routes_against_reference(summary: pd.DataFrame, auc_reference: pd.DataFrame, *, kde_alpha: float = 0.01):
    """Figure 2 analog: each route's per-setting median against the exact median pairwise epsilon (top:
    the diagnostics; bottom: the estimates, the out-of-fold AUC beside the optimal AUC; colour: mechanism).

    Parameters
    ----------
    summary : DataFrame
        Per-setting route medians at one sample size (chapter 1's ``per_setting``): ``route``,
        ``mechanism``, ``epsilon``, ``reference_epsilon``, ``alpha``, ``median``, ``median_auc``, ``hockey_stick``.
    auc_reference : DataFrame
        Population-optimal AUC per setting: ``mechanism``, ``epsilon``, ``reference_epsilon``, ``optimal_auc``.
    kde_alpha : float, default=0.01
        KDE-LR smoothing weight shown.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = plt.subplots(2, 2, figsize=(WIDTH, 7.6), sharex=True)
    panels = [
        ("gaussmech", "median", "GaussMech (diagnostic)", "median GaussMech (nats)"),
        ("kde_lr", "median", f"KDE-LR, α = {kde_alpha:g} (diagnostic)", "median KDE-LR (nats)"),
        ("mmd_tv", "median", "MMD-TV (estimate), product Laplace", "median MMD-TV (nats)"),
        ("roc_oof", "median_auc", "ROC-HT out-of-fold (estimate)", "median AUC"),
    ]
    for ax, (route, column, title, ylabel) in zip(axes.flat, panels):
        rows = summary[summary["route"] == route]
        if route == "kde_lr":
            rows = rows[np.isclose(rows["alpha"], kde_alpha)]
        for mech, part in rows.groupby("mechanism"):
            if route == "mmd_tv" and mech != "laplace":
                continue  # pure-DP route: shown for the pure-DP mechanism only
            _line_with_band(ax, part, "reference_epsilon", column, MECHANISM_LABELS.get(mech, mech),
                            color=MECHANISM_COLOURS.get(mech))
        if route == "mmd_tv" and "hockey_stick" in rows:
            lap = rows[rows["mechanism"] == "laplace"]
            _line_with_band(ax, lap, "reference_epsilon", "hockey_stick", "hockey-stick form", linestyle="--",
                            color=PALETTE[3])
        if route == "roc_oof":
            for mech, part in auc_reference.groupby("mechanism"):
                g = part.groupby("epsilon")[["reference_epsilon", "optimal_auc"]].mean().sort_values("reference_epsilon")
                ax.plot(g["reference_epsilon"], g["optimal_auc"], linestyle=":", linewidth=2,
                        color=MECHANISM_COLOURS.get(mech), label=f"optimal AUC, {MECHANISM_LABELS.get(mech, mech)}")
            ax.set_ylim(0.4, 1.02)
        ax.set_title(title, fontsize=TITLE)
        ax.set_ylabel(ylabel)
    for ax in axes[1]:
        ax.set_xlabel("exact median ε (nats)")
    mechanisms = [m for m in MECHANISM_COLOURS if m in set(summary["mechanism"])]
    handles = [Line2D([], [], color=MECHANISM_COLOURS[m], marker="o", label=MECHANISM_LABELS.get(m, m)) for m in mechanisms]
    handles += [Line2D([], [], color=PALETTE[3], linestyle="--", label="MMD-TV, hockey-stick form"),
                Line2D([], [], color="grey", linestyle=":", linewidth=2, label="optimal AUC (colour: noise)")]
    fig.legend(handles=handles, loc="lower center", ncol=2, fontsize=LEGEND, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def certification_curves(cert_summary: pd.DataFrame):
    """Figure 3 analog: how often and how much the reserved test certifies, against the exact median epsilon.

    Top: fraction of pairs certified above 0; bottom: median certified epsilon, each test size's cap
    dotted. Columns: mechanisms; colour: test size; line style: the test. With a ``bound`` column the
    joint certificate is bold and the paper's Clopper-Pearson bound thin and faded (caps dash-dotted).

    Parameters
    ----------
    cert_summary : DataFrame
        Per setting, test and bound (chapter 1's ``certification_summary``): ``mechanism``, ``test``,
        ``bound``, ``n``, ``epsilon``, ``reference_epsilon``, ``fraction_positive``, ``median_certified``, ``cap``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    mechanisms = list(dict.fromkeys(cert_summary["mechanism"]))
    fig, axes = plt.subplots(2, len(mechanisms), figsize=(WIDTH, 7.6), squeeze=False, sharex=True)
    sizes = sorted(cert_summary["n"].unique())
    colours = dict(zip(sizes, PALETTE))
    tests = list(dict.fromkeys(cert_summary["test"]))
    summary = cert_summary if "bound" in cert_summary else cert_summary.assign(bound="joint")
    bounds = [b for b in ("joint", "clopper-pearson") if b in set(summary["bound"])]
    look = {"joint": dict(marker="o", markersize=4, linewidth=1.8, alpha=1.0),
            "clopper-pearson": dict(marker=None, linewidth=1.0, alpha=0.5)}
    for col, mech in enumerate(mechanisms):
        for (n, test, bound), part in summary[summary["mechanism"] == mech].groupby(["n", "test", "bound"]):
            positive = part[part["reference_epsilon"] > 0]
            for row, column in enumerate(["fraction_positive", "median_certified"]):
                g = positive.groupby("epsilon")[["reference_epsilon", column]].mean().sort_values("reference_epsilon")
                axes[row, col].plot(g["reference_epsilon"], g[column], TEST_STYLES.get(test, ":"), color=colours[n],
                                    **look.get(bound, look["joint"]))
        for n in sizes:
            for bound in bounds:
                cap = summary.loc[(summary["n"] == n) & (summary["bound"] == bound), "cap"].max()
                axes[1, col].axhline(cap, color=colours[n], linestyle=":" if bound == "joint" else "-.",
                                     linewidth=1, alpha=look[bound]["alpha"])
        axes[0, col].set_title(MECHANISM_LABELS.get(mech, mech), fontsize=TITLE)
        axes[1, col].set_xlabel("exact median ε (nats, log scale)")
        for row in range(2):
            axes[row, col].set_xscale("log")
    axes[0, 0].set_ylabel("fraction of pairs certified > 0")
    axes[1, 0].set_ylabel("median certified ε (nats)")
    for row in range(2):
        top = max(ax.get_ylim()[1] for ax in axes[row])
        for ax in axes[row]:
            ax.set_ylim(-0.03 * top, top)
    for ax in axes.flat:
        _log_ticks(ax)
    size_handles = [Line2D([], [], color=colours[n], marker="o", label=f"n = {n} per identity") for n in sizes]
    test_handles = [Line2D([], [], color="black", linestyle=TEST_STYLES.get(t, ":"), label=TEST_LABELS.get(t, t))
                    for t in tests] + [Line2D([], [], color="grey", linestyle=":", label="cap of the test size")]
    if "clopper-pearson" in bounds:
        test_handles += [Line2D([], [], color="black", linewidth=1.8, marker="o", markersize=4, label="joint"),
                         Line2D([], [], color="black", linewidth=1.0, alpha=0.5, label="Clopper-Pearson (paper)")]
    fig.legend(handles=size_handles, loc="lower center", bbox_to_anchor=(0.5, 0.045), ncol=len(size_handles),
               fontsize=LEGEND, frameon=False)
    fig.legend(handles=test_handles, loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=len(test_handles),
               fontsize=LEGEND, frameon=False)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig


def tradeoff_curves(curves: pd.DataFrame, points: pd.DataFrame):
    """The trade-off-curve section: certified curves beside the exact curve of a Gaussian pair.

    Left: the certified upper envelope (lower convex hull of the certified points) per sample size;
    right: the Gaussian-DP curve of the certified mu. The exact curve (black) lies on or below every
    certified curve (with 95% confidence each).

    Parameters
    ----------
    curves, points : DataFrame
        Curves: ``mu``, ``n``, ``fpr``, ``exact``, ``envelope``, ``gdp_of_certified_mu``, ``mu_lower``;
        points: ``n``, ``fpr_upper``, ``fnr_upper`` (chapter 1's trade-off section).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = plt.subplots(1, 2, figsize=(WIDTH, 4.3), sharey=True)
    sizes = sorted(curves["n"].unique())
    mu = float(curves["mu"].iloc[0])
    first = curves[curves["n"] == sizes[0]]
    for ax in axes:
        ax.plot(first["fpr"], first["exact"], color="black", linewidth=2, label=f"exact, μ = {mu:g}")
        ax.plot([0, 1], [1, 0], color="grey", linewidth=1, linestyle=":")
    for colour, n in zip(PALETTE, sizes):
        part = curves[curves["n"] == n]
        axes[0].plot(part["fpr"], part["envelope"], color=colour, label=f"n = {n}")
        pts = points[points["n"] == n]
        axes[0].plot(pts["fpr_upper"], pts["fnr_upper"], "o", color=colour, markersize=5)
        axes[1].plot(part["fpr"], part["gdp_of_certified_mu"], color=colour,
                     label=f"n = {n}: μ ≥ {part['mu_lower'].iloc[0]:.2f}")
    axes[0].set_title("certified envelope (dots: certified points)", fontsize=TITLE)
    axes[1].set_title("Gaussian-DP curve of the certified μ", fontsize=TITLE)
    for ax in axes:
        ax.set_xlabel("false-positive rate α")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
        ax.legend(fontsize=LEGEND, loc="upper right")
    axes[0].set_ylabel("false-negative rate β")
    fig.tight_layout()
    return fig
