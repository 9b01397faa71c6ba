"""Chapter 5, certificates about identities, not about photographs: what the chapter's notebook imports.

The swapper is a randomised mechanism: ``M_k(A)`` = encode(pass ``k`` of a swap chain started from a
photograph of A, with a fresh donor per pass). Its resampled corpora (:mod:`epsaudit.resampled`)
hold 100 development and 100 test *independent draws* of ``M_0``, ``M_1`` and ``M_5`` per identity,
so the reserved test (*Picture the Epsilon*, Section IV-C) runs at the paper's test size on real
faces. Two photograph designs say what a certificate is about:

- ``pool`` (``data/resampled/``): every draw starts from any of the identity's ~25 photographs, so
  most test draws start from a photograph development also drew: the certificate is about the
  identity's *photograph pool*;
- ``disjoint`` (``data/resampled_disjoint/``): each identity's photographs are cut once into four
  disjoint parts; development draws start on two of them, test draws on the other two, so the test
  is evidence about photographs the classifier never saw. The same draws re-partitioned by part make
  a same-person control that asks exactly what the certificate asks.

The chapter's experiment, per design, encoder, swap variant and pass (:mod:`.certify`): all pairs
of identities ranked by development-only out-of-fold AUC, the top ``pairs`` (50) certified on the
untouched test draws in one Bonferroni family per design, encoder and variant (as Table 7), the
worst-pair bound of the top ``worst_k``, and the same-person control (one pair per identity). The
certificates use the library's default bound; the paper's split Clopper-Pearson bound on the same
test counts sits beside them where Table 7 is compared (:mod:`.tables`). :mod:`.views` words the
page from the numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from ...resampled import DESIGN_DIRS, MANIFEST, load_resampled
from .. import choose_profile as _choose_profile
from .. import parameters as _parameters
from ..cascade.display import styled
from ..cascade.tables import ENCODER_LABEL
from . import levels
from .certify import (PASSES, capped_design, certify_condition, certify_passes, control_groups, pass_data,
                      same_person_control, summary_table)
from .tables import (CASCADE_TABLE_7_CAP, DESIGN_LABEL, PAPER_TABLE_7, build_timings, condition_label, corpus_table,
                     design_summary, face_choice_table, paper_comparison, planner_table, shared_photographs)
from .views import (chapter_numbers, comparison_view, conclusions, control_view, corpus_view, design_view,
                    exercise_numbers, face_choice_view, figure_data, paper_medians, planner_view, timings_view,
                    verdict, worst_view)

__all__ = ["CHAPTER", "PASSES", "DESIGNS", "PROFILES", "PARAMETERS", "PAPER_TABLE_7", "CASCADE_TABLE_7_CAP",
           "DESIGN_LABEL", "ENCODER_LABEL", "levels", "check_parameters", "choose_profile", "corpus_folder",
           "load_designs", "pass_data", "certify_condition", "certify_passes", "capped_design",
           "same_person_control", "control_groups", "summary_table", "design_summary", "corpus_table",
           "face_choice_table", "build_timings", "paper_comparison", "planner_table", "shared_photographs",
           "condition_label", "corpus_view", "face_choice_view", "design_view", "comparison_view", "control_view",
           "worst_view", "planner_view", "timings_view", "chapter_numbers", "conclusions", "verdict", "figure_data",
           "paper_medians", "exercise_numbers", "styled", "ChapterResults", "run_chapter"]

CHAPTER = "chapter 5 (certificates on resampled swaps)"
#: The photograph designs, in the order the page shows them.
DESIGNS = ("pool", "disjoint")

_FULL = dict(identities=None, pairs=50, worst_k=10, encoders=("dlib", "sface"), variants=("hull", "inner"),
             capped=True, confidence=0.95, delta=1e-5, seed=0)
PROFILES = {
    # CI: one encoder and variant, 8 identities (28 pairs), few certificates (~1 min), both designs
    "smoke": dict(_FULL, identities=8, pairs=6, worst_k=3, encoders=("dlib",), variants=("hull",), capped=False),
    # the book: every identity, 50 certificates per pass as in Table 7, both encoders and variants
    "full": _FULL,
    # the papers' sizes are the full profile's here
    "paper": _FULL,
}

#: The notebook's parameters (:func:`check_parameters`).
PARAMETERS = (_parameters.PROFILE, _parameters.DATA, _parameters.ENCODERS,
              _parameters.Parameter("variants", str, "swap variants to include", choices=("hull", "inner"),
                                    many=True),
              _parameters.SEED, _parameters.N_JOBS)


def check_parameters(namespace: dict, page: str = CHAPTER) -> dict[str, Any]:
    """Check the chapter's parameters (:func:`epsaudit.studies.parameters.check`) in its first cell.

    Raises
    ------
    ValueError
        An unknown parameter, or a value of the wrong type or out of range (named).
    """
    return _parameters.check(namespace, PARAMETERS, page)


def choose_profile(name: str, *, encoders: Sequence[str] | None = None, variants: Sequence[str] | None = None,
                   seed: int | None = None) -> dict[str, Any]:
    """The chapter's settings for profile ``name`` (``smoke``, ``full`` or ``paper``), narrowed to
    ``encoders`` and ``variants`` when given (the smoke profile keeps its own), with ``seed`` when given.

    Raises
    ------
    ValueError
        An unknown profile name.
    """
    settings = _choose_profile(PROFILES, name, CHAPTER)
    if name != "smoke":
        settings["encoders"] = tuple(e for e in settings["encoders"] if encoders is None or e in encoders)
        settings["variants"] = tuple(v for v in settings["variants"] if variants is None or v in variants)
    if seed is not None:
        settings["seed"] = int(seed)
    return settings


def corpus_folder(data: str | Path, design: str) -> Path:
    """The committed corpus folder of a design (``data`` resolved from the repository root).

    Raises
    ------
    FileNotFoundError
        The folder or its manifest is missing from the checkout (named; nothing needs rebuilding,
        the corpora are committed).
    """
    try:
        root = _parameters.data_folder(data)
    except ValueError as exc:
        raise FileNotFoundError(str(exc)) from None
    folder = root / DESIGN_DIRS[design]
    if not (folder / MANIFEST).is_file():
        raise FileNotFoundError(f"{folder / MANIFEST} is missing: the {DESIGN_LABEL[design]} corpus is committed "
                                f"under {Path(str(data)) / DESIGN_DIRS[design]} of the repository "
                                f"({_parameters.REPOSITORY})")
    return folder


def load_designs(data: str | Path, encoders: Sequence[str], variants: Sequence[str],
                 designs: Sequence[str] = DESIGNS) -> dict[tuple[str, str, str], Any]:
    """Read each design's corpus once per encoder and swap variant it holds, checked against its manifest.

    The pool corpus was built for ``hull`` only; a variant a design's manifest lacks is skipped.

    Returns
    -------
    dict (design, encoder, variant) -> epsaudit.resampled.Resampled

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`corpus_folder` and :func:`epsaudit.resampled.load_resampled`.
    """
    import json

    out = {}
    for design in designs:
        folder = corpus_folder(data, design)
        held = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))["design"]["variants"]
        for e in encoders:
            for v in variants:
                if v in held:
                    out[(design, e, v)] = load_resampled(e, folder, variant=v)
    return out


@dataclass(frozen=True)
class ChapterResults:
    """Everything chapter 5 computes (:func:`run_chapter`).

    Attributes
    ----------
    per_pair, worst, summary : pandas.DataFrame
        The certificates of both designs (:func:`certify_passes`) and their :func:`summary_table`.
    control, control_pairs : pandas.DataFrame
        :func:`same_person_control` (summary and per identity).
    design : pandas.DataFrame
        :func:`design_summary`: certificates and controls side by side.
    photo_pairs, photo_summary : pandas.DataFrame or None
        Chapter 4's photographs (:func:`capped_design`), when the profile asks for them.
    numbers : dict
        :func:`chapter_numbers` and :func:`conclusions`.
    """

    per_pair: pd.DataFrame
    worst: pd.DataFrame
    summary: pd.DataFrame
    control: pd.DataFrame
    control_pairs: pd.DataFrame
    design: pd.DataFrame
    photo_pairs: pd.DataFrame | None
    photo_summary: pd.DataFrame | None
    numbers: dict


def run_chapter(corpora: Mapping[tuple[str, str, str], Any], settings: Mapping[str, Any], *,
                data: str | Path = "data", n_jobs: int | None = None, progress: bool = True) -> ChapterResults:
    """Certify both designs, their controls and, when ``settings["capped"]``, chapter 4's photographs.

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`certify_passes`, :func:`same_person_control` and :func:`capped_design`.
    """
    per_pair, worst = certify_passes(corpora, settings, n_jobs=n_jobs, progress=progress)
    summary = summary_table(per_pair)
    control, control_pairs = same_person_control(corpora, settings, n_jobs=n_jobs)
    design = design_summary(summary, control)
    photo_pairs = photo_summary = None
    if settings["capped"]:
        photo_pairs, _ = capped_design(_parameters.data_folder(data) / "corpora", settings, n_jobs=n_jobs,
                                       progress=progress)
        photo_summary = summary_table(photo_pairs)
    numbers = {**chapter_numbers(design, summary, worst), **conclusions(design)}
    return ChapterResults(per_pair, worst, summary, control, control_pairs, design, photo_pairs, photo_summary,
                          numbers)
