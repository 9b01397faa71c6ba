"""Chapter 4, the swap cascade and the affine operator: what the chapter's notebook imports.

*Toward Interpretable Privacy Guarantees in Face-Swapping Anonymization* models a face swapper in
the adversary's embedding space as an affine stochastic operator ``s = A d + B t + c + e``
(Sections VI-VIII) and predicts from it how target identity fades under repeated swapping;
*Picture the Epsilon* audits such a cascade after every pass (Tables 7 and 8). The chapter does
both on the LFW cascade and operator corpora (:mod:`epsaudit.corpora`).

The chapter is two lecture pages: ``notebooks/04_cascade.py`` (the operator fitted on single swaps
and its predictions) and ``notebooks/04b_cascade_measured.py`` (the measured cascade, the verdicts,
the per-pass audits with Table 7 under both certificate bounds); both take the checked papermill
parameters :data:`PARAMETERS` (:func:`check_parameters`).

This module holds the chapter's run profiles (:data:`PROFILES`), the loading of the corpora, the
experiment's steps over variants and encoders and the figures' data (tidy tables, also saved as
CSV beside each figure). Six companion modules hold the rest; their public names are re-exported
here, so the notebook imports this module only:

- :mod:`~epsaudit.studies.cascade.scores` -- centred scores, the per-pass series, per-pass audits;
- :mod:`~epsaudit.studies.cascade.operator_study` -- the operator fit study, residual checks, the fold
  designs and the cascade predicted from the fit;
- :mod:`~epsaudit.studies.cascade.verdicts` -- the verdict on each prediction, the operational reading;
- :mod:`~epsaudit.studies.cascade.tables` -- the papers' reported values (Tables II, III, 7 and 8)
  and the tables of the corpora and the operator fit, with those values beside ours;
- :mod:`~epsaudit.studies.cascade.pass_tables` -- the tables of the cascade (predictions, Table III,
  verdicts, Tables 7 and 8, the operational reading) and the exercises' numbers;
- :mod:`~epsaudit.studies.cascade.display` -- one formatting rule per number, tables that fit the
  page, the chapter's stopwatch and profile summary.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ...corpora import Corpora, load_corpora, subset_corpora
from ...faces.images import images_available
from . import display, operator_study, pass_tables, scores, tables, verdicts
from .. import choose_profile as _choose_profile
from .. import parameters as _parameters
from .display import *  # noqa: F403  (re-exported: the notebook imports this module only)
from .display import fit_label, glue_each
from ..glue import glue_values  # noqa: F401  (the page's glue, re-exported: the notebook imports this module only)
from .pass_tables import *  # noqa: F403
from .scores import *  # noqa: F403
from .scores import cascade_series, per_pass_audits
from .tables import *  # noqa: F403
from .tables import ENCODER_LABEL, ENCODERS
from .verdicts import *  # noqa: F403
from .operator_study import *  # noqa: F403
from .operator_study import (OperatorStudy, cv_design_comparison, fit_operator_study, model_predictions,
                             persistent_directions)

__all__ = ["CHAPTER", "PASSES", "AUDIT_PASSES", "AUDIT_TEST_SIZE", "PROFILES", "PARAMETERS", "check_parameters",
           "choose_profile", "load_chapter_corpora",
           "variants_of", "example_chains", "fit_operator_studies", "cv_design_tables", "predict_cascades",
           "measure_cascades", "persistent_all", "run_per_pass_audits", "example_chain_data", "sensitivity_data",
           "eigenvalue_data", "leakage_data", "excess_data", "Corpora", "load_corpora", "subset_corpora",
           "images_available", "glue_values", *scores.__all__, *operator_study.__all__, *verdicts.__all__,
           *tables.__all__, *pass_tables.__all__, *display.__all__]

CHAPTER = "chapter 4 (the cascade)"
#: Passes the model predicts (the measured cascade has five).
PASSES = 5
#: Passes audited per pass-condition (0 = the start photographs).
AUDIT_PASSES = tuple(range(0, 6))
#: Test share of each identity's chains for the per-pass certificates.
AUDIT_TEST_SIZE = 0.5

# identities/chains: cascade slice (None: all); train/test: operator triplets per variant (None: all);
# sizes: operator corpus sizes of the rho(B) curve; mc_reps: Monte Carlo rollouts; audit: per-pass
# audit sizes; audit_encoders: encoders audited per pass
_FULL = dict(identities=None, chains=None, train=None, test=None, sizes=(1000, 2000, 4000, 8000), mc_reps=20,
             audit=dict(pairs=500, kde_pairs=100, roc_pairs=200, certificates=50, permutations=10_000),
             audit_encoders=("dlib", "sface"))
PROFILES = {
    # CI: a slice of the chains and triplets, few pairs (~1 min)
    "smoke": dict(identities=8, chains=6, train=1500, test=400, sizes=(500, 1500), mc_reps=3,
                  audit=dict(pairs=10, kde_pairs=3, roc_pairs=3, certificates=2, permutations=200),
                  audit_encoders=("dlib",)),
    # the book (~5 min): every chain and triplet, the papers' per-pass audit sizes (500 pairs, KDE-LR
    # 100, ROC 200, 50 certificates per pass, MMD permutation tests)
    "full": _FULL,
    # "paper" equals "full": the full profile already runs the papers' protocol on the whole corpus
    # (5-fold identity-disjoint CV, Table 7's 50 pairs per pass, Table 8's pair counts; the papers
    # report no Monte Carlo replicate count)
    "paper": _FULL,
}

#: The notebooks' papermill parameters (both pages of chapter 4; :mod:`epsaudit.studies.parameters`).
PARAMETERS = (_parameters.PROFILE,
              _parameters.Parameter("data", str, "corpora folder, relative to the repository root"),
              _parameters.ENCODERS, _parameters.SEED, _parameters.N_JOBS)


def check_parameters(namespace: dict, page: str) -> dict[str, Any]:
    """Check a chapter-4 page's parameters in its first cell (:func:`epsaudit.studies.parameters.check`);
    the encoders are put in the chapter's order.

    Raises
    ------
    ValueError
        An unknown parameter or a value that is not allowed, naming it and the allowed values.
    """
    values = _parameters.check(namespace, PARAMETERS, page)
    namespace["encoders"] = values["encoders"] = [e for e in ENCODERS if e in values["encoders"]]
    return values


# -------------------------------------------------------------------------------------------------
# profiles and corpora


def choose_profile(name: str) -> dict[str, Any]:
    """The settings of one of the chapter's :data:`PROFILES`.

    Raises
    ------
    ValueError
        An unknown profile name.

    Examples
    --------
    >>> choose_profile("smoke")["mc_reps"], choose_profile("paper") == choose_profile("full")
    (3, True)
    """
    return _choose_profile(PROFILES, name, CHAPTER)


def load_chapter_corpora(directory: str | Path, settings: Mapping[str, Any], *,
                         encoders: Sequence[str] = ENCODERS) -> dict[str, Corpora]:
    """Both encoders' corpora (:func:`epsaudit.corpora.load_corpora`, hashes verified), sliced as the
    profile says (:func:`epsaudit.corpora.subset_corpora`; the full profile keeps everything).

    Parameters
    ----------
    directory : path-like
        The corpora folder (``data/corpora``); a relative folder is taken from the repository
        (:func:`epsaudit.studies.parameters.data_folder`), never from the working directory.
    settings : mapping
        A profile (:func:`choose_profile`): ``identities``, ``chains``, ``train``, ``test``.
    encoders : sequence of str

    Returns
    -------
    dict encoder -> Corpora

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`epsaudit.corpora.load_corpora`.
    """
    folder = _parameters.data_folder(directory)
    corpora = {e: load_corpora(e, folder) for e in encoders}
    if settings["identities"] is not None:
        corpora = {e: subset_corpora(c, identities=settings["identities"], chains_per_identity=settings["chains"],
                                     train=settings["train"], test=settings["test"]) for e, c in corpora.items()}
    return corpora


def variants_of(corpora: Mapping[str, Corpora]) -> tuple[str, ...]:
    """The swap variants of the corpora's design (``hull``, ``inner``), from the first corpora's manifest."""
    return tuple(next(iter(corpora.values())).manifest["design"]["variants"])


def example_chains(corpora: Corpora, variants: Sequence[str], *, chains: int = 2) -> list[dict] | None:
    """Re-create the first chain of the first ``chains`` identities in every variant (deterministic
    swaps: exactly the images the corpus encoded), or ``None`` when the LFW images are absent.

    Returns
    -------
    list of dict or None
        Per chain: ``identity``, ``design`` (its row of the chains design) and ``variants`` (variant ->
        (pass images, donor images), :func:`epsaudit.faces.corpora.render_chain`).
    """
    if not images_available():
        return None
    from ...faces.corpora import render_chain

    out = []
    for _, chain in corpora.chains.groupby("identity").head(1).head(chains).iterrows():
        out.append({"identity": chain["identity"], "design": chain.to_dict(),
                    "variants": {v: render_chain(chain.to_dict(), v) for v in variants[:2]}})
    return out


# -------------------------------------------------------------------------------------------------
# the experiment's steps, over variants and encoders


def fit_operator_studies(corpora: Mapping[str, Corpora], variants: Sequence[str], *, sizes: Sequence[int],
                         seed: Any = 0) -> dict[tuple[str, str], OperatorStudy]:
    """:func:`~epsaudit.studies.cascade.operator_study.fit_operator_study` for every (variant, encoder): the
    operator fitted on single swaps (paper Section VI, Table II analog).

    Returns
    -------
    dict (variant, encoder) -> OperatorStudy
        Variants outer, encoders inner (the order of every table of the chapter).

    Raises
    ------
    ValueError
        As :func:`~epsaudit.studies.cascade.operator_study.fit_operator_study`.
    """
    return {(v, e): fit_operator_study(corpora[e], v, sizes=sizes, seed=seed) for v in variants for e in corpora}


def cv_design_tables(corpora: Mapping[str, Corpora], variants: Sequence[str], *, seed: Any = 0
                     ) -> dict[tuple[str, str], pd.DataFrame]:
    """:func:`~epsaudit.studies.cascade.operator_study.cv_design_comparison` for every (variant, encoder).

    Returns
    -------
    dict (variant, encoder label) -> pandas.DataFrame
        Indexed by design (:data:`~epsaudit.studies.cascade.operator_study.CV_DESIGNS`).
    """
    return {(v, ENCODER_LABEL[e]): cv_design_comparison(corpora[e], v, seed=seed).set_index("design")
            for v in variants for e in corpora}


def predict_cascades(studies: Mapping[tuple[str, str], OperatorStudy], corpora: Mapping[str, Corpora], *,
                     passes: int = PASSES, mc_reps: int = 20, seed: Any = 0) -> dict[tuple[str, str], pd.DataFrame]:
    """:func:`~epsaudit.studies.cascade.operator_study.model_predictions` for every fitted (variant, encoder):
    the cascade predicted from the fit alone (paper Section VII).

    Returns
    -------
    dict (variant, encoder) -> pandas.DataFrame
        One row per pass ``0..passes``.

    Raises
    ------
    ValueError
        A fit with ``rho(B) >= 1`` (no stationary law).
    """
    return {(v, e): model_predictions(s, corpora[e], v, passes=passes, mc_reps=mc_reps, seed=seed)
            for (v, e), s in studies.items()}


def measure_cascades(corpora: Mapping[str, Corpora], variants: Sequence[str]) -> dict[tuple[str, str], pd.DataFrame]:
    """:func:`~epsaudit.studies.cascade.scores.cascade_series` for every (variant, encoder): the
    measured cascade (Table III analog).

    Returns
    -------
    dict (variant, encoder) -> pandas.DataFrame
        One row per pass ``0..K``.
    """
    return {(v, e): cascade_series(corpora[e], v) for v in variants for e in corpora}


def persistent_all(studies: Mapping[tuple[str, str], OperatorStudy], corpora: Mapping[str, Corpora]
                   ) -> dict[tuple[str, str], dict]:
    """:func:`~epsaudit.studies.cascade.operator_study.persistent_directions` for every (variant, encoder)
    (prediction 4's alignments and correlations).

    Returns
    -------
    dict (variant, encoder) -> dict
    """
    return {(v, e): persistent_directions(s, corpora[e], v) for (v, e), s in studies.items()}


def run_per_pass_audits(corpora: Mapping[str, Corpora], variants: Sequence[str], settings: Mapping[str, Any], *,
                        seed: Any = 0, n_jobs: int | None = 2, progress: bool = False
                        ) -> tuple[dict[tuple[str, str], pd.DataFrame], dict[tuple[str, str], pd.DataFrame]]:
    """:func:`~epsaudit.studies.cascade.scores.per_pass_audits` of the profile's audited encoders
    (``settings["audit_encoders"]`` among those of ``corpora``, else the first of ``corpora``; sizes
    ``settings["audit"]``), half of each identity's chains reserved for the certificates, each pass
    certified with the joint bound and with *Picture the Epsilon*'s Clopper-Pearson bound.

    Returns
    -------
    table8, table7 : dict (variant, encoder label) -> DataFrame
    """
    table8, table7 = {}, {}
    audited = [e for e in settings["audit_encoders"] if e in corpora] or list(corpora)[:1]
    for e in audited:
        for v in variants:
            table8[(v, ENCODER_LABEL[e])], table7[(v, ENCODER_LABEL[e])] = per_pass_audits(
                corpora[e], v, passes=AUDIT_PASSES, test_size=AUDIT_TEST_SIZE, seed=seed, n_jobs=n_jobs,
                progress=progress, **dict(settings["audit"]))
    return table8, table7



# -------------------------------------------------------------------------------------------------
# figure inputs (epsaudit.plotting.cascade draws them)


def example_chain_data(examples: Sequence[dict]) -> pd.DataFrame:
    """The example chains' design rows and how many passes each variant's figure row shows (the data
    behind the example-chain figure)."""
    rows = []
    for ex in examples:
        for v, (passes_img, _) in ex["variants"].items():
            rows.append({**ex["design"], "variant": v, "passes_shown": len(passes_img) - 1})
    return pd.DataFrame(rows)


def sensitivity_data(studies: Mapping[tuple[str, str], OperatorStudy]) -> pd.DataFrame:
    """Each fit's :func:`epsaudit.operator.penalty_sensitivity`, tidy with a ``fit`` column."""
    return pd.concat([s.sensitivity.assign(fit=fit_label(v, ENCODER_LABEL[e])) for (v, e), s in studies.items()],
                     ignore_index=True)


def eigenvalue_data(studies: Mapping[tuple[str, str], OperatorStudy], variants: Sequence[str]) -> pd.DataFrame:
    """The eigenvalues of every fitted ``B``: ``encoder``, ``variant``, ``real``, ``imaginary``, ``modulus``."""
    encoders = dict.fromkeys(e for _, e in studies)
    return pd.concat([pd.DataFrame({"encoder": ENCODER_LABEL[e], "variant": v, "real": ev.real, "imaginary": ev.imag,
                                    "modulus": np.abs(ev)})
                      for e in encoders for v in variants for ev in [np.asarray(studies[(v, e)].eigenvalues)]],
                     ignore_index=True)


def leakage_data(measured: Mapping[tuple[str, str], pd.DataFrame], predicted: Mapping[tuple[str, str], pd.DataFrame],
                 studies: Mapping[tuple[str, str], OperatorStudy], variants: Sequence[str]) -> pd.DataFrame:
    """Measured and predicted leakage per pass: ``encoder``, ``variant``, ``pass``, ``measured``,
    ``monte_carlo``, ``non_member`` (encoders outer, variants inner)."""
    encoders = dict.fromkeys(e for _, e in studies)
    parts = []
    for e in encoders:
        for v in variants:
            m, p = measured[(v, e)].sort_values("pass"), predicted[(v, e)].sort_values("pass")
            parts.append(pd.DataFrame({"encoder": ENCODER_LABEL[e], "variant": v, "pass": m["pass"].to_numpy(),
                                       "measured": m["leakage"].astype(float).to_numpy(),
                                       "monte_carlo": p["monte_carlo_leakage"].astype(float).to_numpy(),
                                       "non_member": m["floor"].astype(float).to_numpy()}))
    return pd.concat(parts, ignore_index=True)


def excess_data(measured: Mapping[tuple[str, str], pd.DataFrame], studies: Mapping[tuple[str, str], OperatorStudy],
                variants: Sequence[str]) -> pd.DataFrame:
    """The measured excess per pass with the slope ``rho(B)`` from pass 1: ``encoder``, ``variant``,
    ``pass``, ``excess``, ``rho_slope`` (pass-1 excess times ``rho(B)`` per later pass; empty at
    pass 0), ``rho_B``."""
    encoders = dict.fromkeys(e for _, e in studies)
    parts = []
    for e in encoders:
        for v in variants:
            m = measured[(v, e)].sort_values("pass")
            ex, k = m["excess"].astype(float).to_numpy(), m["pass"].to_numpy()
            rho = float(studies[(v, e)].spectra["rho_B"])
            slope = np.where(k >= 1, ex[1] * rho ** (k - 1.0), np.nan) if len(ex) > 1 else np.full(len(ex), np.nan)
            parts.append(pd.DataFrame({"encoder": ENCODER_LABEL[e], "variant": v, "pass": k, "excess": ex,
                                       "rho_slope": slope, "rho_B": rho}))
    return pd.concat(parts, ignore_index=True)
