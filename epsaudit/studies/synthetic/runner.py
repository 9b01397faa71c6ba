"""The known-epsilon benchmark runner of chapter 1: settings, audits and certificates per setting.

A *setting* is (prototype geometry, mechanism, requested global epsilon, samples per class n,
repetition). For each setting the runner calibrates the mechanism (:mod:`epsaudit.mechanisms`),
draws n outputs per identity, audits the benchmark pairs and returns a tidy table in which every
audit value sits beside the exact pairwise epsilon of its pair (*Picture the Epsilon*, Tables 4
and 6, Figures 2 and 3). Each setting's draws are seeded by its own fields (stream keys of
:mod:`epsaudit.seeds`), so tables do not depend on ``n_jobs`` and any setting can be re-run on its
own. :mod:`epsaudit.studies.synthetic` re-exports every public name.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from ...audits import audit_pairs, certificate_with_bound, reserved_test_pairs
from ...mechanisms import N_AUDITED_PAIRS, Mechanism, benchmark_pairs, calibrate, prototype_set
from ...progress import progress_bar
from ...results import results_frame
from ...scorers import paper_logistic_regression, shrinkage_lda

__all__ = ["N_IDENTITIES", "TESTS", "Setting", "audit_setting", "certification_summary", "certify_grid",
           "certify_setting", "optimal_auc_reference", "per_setting_summary", "run", "settings_grid"]

#: Identities per prototype set (ours: the paper does not state it; 20 give 190 candidate pairs).
N_IDENTITIES = 20
#: Tests of the reserved-test certificate: learned scorers and the exact likelihood ratio.
TESTS = ("logistic", "shrinkage_lda", "exact")


@dataclass(frozen=True)
class Setting:
    """One benchmark cell: a calibrated mechanism, its audited pairs and the seeds of its draws.

    Attributes
    ----------
    geometry : {"dispersed", "face_like"}
        Prototype geometry (:func:`epsaudit.mechanisms.prototype_set`).
    mechanism : {"laplace", "gaussian", "anisotropic_gaussian"}
        Noise mechanism (:func:`epsaudit.mechanisms.calibrate`).
    epsilon : float
        Requested global epsilon (nats; 0 is the exact null).
    n : int
        Samples per class (identity) and part (development, test).
    rep : int
        Repetition index (part of every stream key).
    seed : int
        Base seed: the prototypes and pair order depend on it alone; draws use :meth:`key`.
    dim, n_identities, n_pairs : int
        Embedding dimension, identities per prototype set, audited pairs (the paper: 40).
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
        """The stream key of one set of draws of this setting: ``"routes"``, ``"dev"`` or ``"test"``.

        ``("benchmark", seed, geometry, mechanism, epsilon, n, rep, draws)`` (:mod:`epsaudit.seeds`);
        each identity's draws then come from that key plus the identity.
        """
        return ("benchmark", self.seed, self.geometry, self.mechanism, float(self.epsilon), self.n, self.rep, draws)

    def build(self) -> tuple[Mechanism, list[tuple[int, int]]]:
        """Calibrated mechanism (prototypes seeded by ``seed`` only) and its ``n_pairs`` audited pairs."""
        prototypes = prototype_set(self.geometry, self.n_identities, self.dim, seed=self.seed)
        mechanism = calibrate(self.mechanism, prototypes, self.epsilon, seed=self.seed)
        return mechanism, benchmark_pairs(self.n_identities, seed=self.seed)[: self.n_pairs]


def settings_grid(geometries: Iterable[str], mechanisms: Iterable[str], epsilons: Iterable[float],
                  sizes: Iterable[int], reps: int, seed: int = 0, dim: int = 512,
                  n_pairs: int = N_AUDITED_PAIRS) -> list[Setting]:
    """Every combination of the arguments as a :class:`Setting`, in a fixed order.

    Parameters
    ----------
    geometries, mechanisms : iterable of str
    epsilons : iterable of float
        Requested global epsilons (nats).
    sizes : iterable of int
        Samples per class.
    reps : int
        Repetitions per combination (``rep = 0 .. reps - 1``).
    seed, dim, n_pairs : int
        As :class:`Setting`.

    Returns
    -------
    list of Setting
        Ordered by geometry, mechanism, epsilon, size, repetition (the last varies fastest).
    """
    return [
        Setting(g, m, float(e), int(n), r, seed, dim, N_IDENTITIES, n_pairs)
        for g in geometries for m in mechanisms for e in epsilons for n in sizes for r in range(reps)
    ]


def _annotate(frame: pd.DataFrame, setting: Setting, mechanism: Mechanism, pairs) -> pd.DataFrame:
    """Add the exact epsilon of each row's pair, the setting's reference and its fields."""
    audited = list(zip(frame["identity_a"], frame["identity_b"]))
    frame.insert(3, "exact_epsilon", mechanism.exact_epsilons(audited) if audited else [])
    for key, value in reversed(list(asdict(setting).items())):
        if key not in ("seed", "n_identities", "n_pairs"):
            frame.insert(0, key, value)
    frame.insert(0, "reference_epsilon", float(np.median(mechanism.exact_epsilons(pairs))))
    return frame


def audit_setting(setting: Setting, *, routes: Sequence[str] = ("gaussmech", "kde_lr", "mmd_tv", "roc_oof"),
                  pair_counts: dict[str, int] | None = None, n_jobs: int | None = None) -> pd.DataFrame:
    """Run the four routes on one setting's pairs (``pair_counts`` may audit fewer per route).

    ROC-HT uses the paper's learner (:func:`epsaudit.scorers.paper_logistic_regression`), whose
    numbers Table 4 and Figure 2 reproduce.

    Parameters
    ----------
    setting : Setting
    routes : sequence of str
        Route names of :func:`epsaudit.audits.audit_pairs`.
    pair_counts : dict of str to int, optional
        Pairs audited per route (default: all of the setting's pairs).
    n_jobs : int, optional
        joblib workers over pairs.

    Returns
    -------
    pandas.DataFrame
        :func:`epsaudit.results.results_frame` columns plus ``exact_epsilon`` (of the pair),
        ``reference_epsilon`` (median over the setting's pairs) and the setting's fields.
    """
    mechanism, pairs = setting.build()
    groups = mechanism.sample_groups(setting.n, seed=setting.key("routes"))
    counts = {route: len(pairs) for route in routes} | (pair_counts or {})
    results = audit_pairs(groups, pairs, routes=routes, pair_counts=counts, classifier=paper_logistic_regression(),
                          seed=setting.seed, n_jobs=n_jobs)
    return _annotate(results_frame(results), setting, mechanism, pairs)


def _classifier(test: str) -> Any:
    if test == "logistic":  # the paper's learner (Table 6 reproduces its numbers): no standardisation
        return paper_logistic_regression()
    if test == "shrinkage_lda":
        return shrinkage_lda()
    raise ValueError(f"unknown test {test!r}; expected one of {TESTS}")


def certify_setting(setting: Setting, *, test: str = "logistic", n_certificates: int | None = None,
                    confidence: float = 0.95, n_jobs: int | None = None,
                    bounds: Sequence[str] = ("joint",)) -> pd.DataFrame:
    """Reserved-test certificates for one setting: n development and n fresh test rows per identity.

    Parameters
    ----------
    setting : Setting
    test : {"logistic", "shrinkage_lda", "exact"}
        Learned scorer fitted on development rows, or the mechanism's exact likelihood ratio.
    n_certificates : int, optional
        Bonferroni family size (default: the setting's pairs, reported together as in the paper);
        1 makes each certificate its own family (each holds alone at ``confidence``).
    confidence : float
    n_jobs : int, optional
    bounds : sequence of {"joint", "clopper-pearson"}
        The joint certificate (default) and/or the paper's split Clopper-Pearson bound (column ``bound``),
        all from one fit and the same test counts (:func:`epsaudit.audits.certificate_with_bound`).

    Returns
    -------
    pandas.DataFrame
        Certificate rows with ``bound``, ``exact_epsilon`` and ``violation`` (certified value above the exact
        pairwise epsilon, beyond 1e-9 of rounding), the rows of each bound in the order of ``bounds``.
    """
    mechanism, pairs = setting.build()
    dev = mechanism.sample_groups(setting.n, seed=setting.key("dev"))
    held_out = mechanism.sample_groups(setting.n, seed=setting.key("test"))
    exact = test == "exact"
    # test rows are fresh draws on their own stream; where values repeat by design (grid outputs
    # in one or two dimensions) the value check cannot tell reuse from repetition and is skipped
    options = dict(test_groups=held_out, confidence=confidence,
                   classifier=None if exact else _classifier(test),
                   score_functions=mechanism.exact_score if exact else None,
                   delta=mechanism.delta, seed=setting.seed, n_jobs=n_jobs,
                   check_reuse=not mechanism.repeated_outputs, bound=bounds[0])
    if n_certificates == 1:  # each certificate on its own at `confidence`
        results = [r for pair in pairs for r in reserved_test_pairs(dev, [pair], **options)]
    else:
        results = reserved_test_pairs(dev, pairs, n_certificates=n_certificates, **options)
    frames = []
    for bound in bounds:  # one fit: the other bounds certify the same test counts
        same = results if bound == bounds[0] else [certificate_with_bound(r, bound) for r in results]
        frame = _annotate(results_frame(same), setting, mechanism, pairs)
        frame.insert(1, "test", test)
        frame["bound"] = bound
        frame["violation"] = frame["value"] > frame["exact_epsilon"] + 1e-9
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def run(settings: Sequence[Setting], task: Callable[..., pd.DataFrame], *, n_jobs: int | None = None,
        progress: bool = True, desc: str = "settings", **kwargs) -> pd.DataFrame:
    """Apply ``task`` (:func:`audit_setting` or :func:`certify_setting`) to every setting and stack the tables.

    Settings run in parallel with joblib (``n_jobs``); each setting's draws are seeded by its own
    fields, so the table does not depend on ``n_jobs`` or on the order of execution.

    Parameters
    ----------
    settings : sequence of Setting
    task : callable
        ``task(setting, **kwargs) -> DataFrame``.
    n_jobs : int, optional
        joblib workers over settings.
    progress : bool
        tqdm bar labelled ``desc``.
    **kwargs
        Passed to ``task``.

    Returns
    -------
    pandas.DataFrame
        The tables in setting order (empty if there are no settings).
    """
    jobs = (delayed(task)(s, **kwargs) for s in settings)
    frames = Parallel(n_jobs=n_jobs, return_as="generator")(jobs)
    frames = list(progress_bar(frames, progress, desc, total=len(settings)))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def optimal_auc_reference(setting: Setting, *, n_mc: int = 20_000) -> dict[str, float]:
    """Population-optimal AUC (exact likelihood-ratio test) of the setting's median-epsilon pair.

    Closed form ``Phi(D / sqrt 2)`` for Gaussian noise; Monte Carlo with ``n_mc`` draws per class
    for product Laplace noise (*Picture the Epsilon*, Figure 2).

    Returns
    -------
    dict
        ``mechanism``, ``geometry``, ``epsilon`` (requested), ``reference_epsilon`` (median exact
        pairwise epsilon, nats) and ``optimal_auc``.
    """
    mechanism, pairs = setting.build()
    exact = mechanism.exact_epsilons(pairs)
    k = int(np.argsort(exact)[(len(exact) - 1) // 2])
    a, b = pairs[k]
    return {"mechanism": setting.mechanism, "geometry": setting.geometry, "epsilon": setting.epsilon,
            "reference_epsilon": float(np.median(exact)),
            "optimal_auc": float(mechanism.optimal_auc(a, b, n_mc=n_mc, seed=setting.key("optimal-auc")))}


def per_setting_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Collapse the pairs of each setting and route: median value, median AUC, +inf count.

    Parameters
    ----------
    frame : DataFrame
        :func:`audit_setting` rows.

    Returns
    -------
    pandas.DataFrame
        One row per (setting, route, KDE alpha) with ``median``, ``median_auc``, ``n_infinite``,
        ``n_exact_corner``, ``hockey_stick``, ``pairs`` and the reference epsilon.
    """
    keys = ["geometry", "mechanism", "epsilon", "n", "rep", "route", "reference_epsilon"]
    frame = frame.copy()
    frame["alpha"] = frame["setting_alpha"] if "setting_alpha" in frame else np.nan
    frame["is_inf"] = np.isinf(frame["value"])
    corner = frame["exact_corner"] if "exact_corner" in frame else pd.Series(False, index=frame.index)
    frame["is_corner"] = corner.fillna(False).astype(bool)
    auc = frame["auc"] if "auc" in frame else pd.Series(np.nan, index=frame.index)
    frame["auc_"] = auc
    frame["hockey_"] = frame["epsilon_hockey_stick"] if "epsilon_hockey_stick" in frame else np.nan
    grouped = frame.groupby(keys + ["alpha"], dropna=False)
    return grouped.agg(
        median=("value", "median"), median_auc=("auc_", "median"), n_infinite=("is_inf", "sum"),
        n_exact_corner=("is_corner", "sum"), hockey_stick=("hockey_", "median"), pairs=("value", "size"),
    ).reset_index()


def certification_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Fraction of pairs certified above zero and median certified epsilon per setting and test.

    Parameters
    ----------
    frame : DataFrame
        :func:`certify_setting` rows.

    Returns
    -------
    pandas.DataFrame
        One row per (setting, test, bound): ``fraction_positive``, ``median_certified`` (nats),
        ``violations``, ``certificates`` and ``cap`` (the largest certifiable value).
    """
    keys = ["geometry", "mechanism", "test"] + (["bound"] if "bound" in frame else []) + [
        "epsilon", "n", "rep", "reference_epsilon"]
    out = frame.assign(positive=frame["value"] > 0).groupby(keys).agg(
        fraction_positive=("positive", "mean"), median_certified=("value", "median"),
        violations=("violation", "sum"), certificates=("value", "size"), cap=("cap", "max"),
    )
    return out.reset_index()


def certify_grid(geometries: Sequence[str], mechanisms: Sequence[str], tests: Sequence[str], profile: dict, seed: int,
                 n_jobs: int | None, label: str, bounds: Sequence[str] = ("joint",)) -> pd.DataFrame:
    """Reserved-test certificates of every test on the grid of a profile's epsilons, sizes and repetitions.

    Parameters
    ----------
    geometries, mechanisms, tests : sequence of str
    profile : dict
        A profile of :data:`epsaudit.studies.synthetic.PROFILES` (``epsilons``, ``sizes``,
        ``reps``, ``pairs``).
    seed : int
    n_jobs : int or None
    label : str
        Progress-bar label (``"<label> (<test>)"``; each setting is fitted once for all ``bounds``).
    bounds : sequence of {"joint", "clopper-pearson"}
        Each test is certified with each bound on the same draws.

    Returns
    -------
    pandas.DataFrame
        :func:`certify_setting` rows of every test and bound, stacked in the order of ``bounds``, ``tests``.
    """
    grid = settings_grid(geometries, mechanisms, profile["epsilons"], profile["sizes"], profile["reps"], seed,
                         n_pairs=profile["pairs"])
    runs = pd.concat([run(grid, certify_setting, test=test, bounds=tuple(bounds), n_jobs=n_jobs, desc=f"{label} ({test})")
                      for test in tests], ignore_index=True)
    order = {b: i for i, b in enumerate(bounds)}  # stacked by bound, then test (a stable sort keeps the rest)
    return runs.sort_values("bound", key=lambda b: b.map(order), kind="stable", ignore_index=True)

