"""Chapter 3, the face case study: the four audit routes and a membership adversary on LFW.

*Picture the Epsilon* applies GaussMech, KDE-LR, MMD-TV and ROC-HT to face embeddings of generated
images (its Section IV; Tables 2 and 3, Figures 4 and 5) and *Toward Interpretable Privacy
Guarantees in Face-Swapping Anonymization* measures how much target identity a face swap leaves
for a membership adversary (its Section V, Table I). The chapter runs both on conditions built
from Labeled Faces in the Wild: ``<encoder>_<regime>_<generator>`` embedding tables
(:mod:`epsaudit.faces.pipeline`), 2 encoders x 2 regimes x 3 generators.

The chapter is two lecture pages: ``notebooks/03_face_case_study.py`` (the data, the audits, Tables
2 and 3 under both certificate bounds, the diagnostics) and ``notebooks/03b_face_membership.py``
(membership inference, the examples, certified trade-off curves). Both import this module only
(besides the public core API), and both take the same checked papermill parameters
(:data:`PARAMETERS`, :func:`check_parameters`: profile, data folder, encoders, generators, seed).
This module holds

- the conditions and their labels (:data:`CONDITIONS`, :func:`condition_label`, :func:`present`:
  those a run includes);
- the run profiles (:data:`PROFILES`, :func:`choose_profile`);
- the papers' reported values the chapter compares with (:data:`TABLE2`, :data:`TABLE3`,
  :data:`DIAGNOSTICS`, :data:`MIA_TABLE_I_FACEFUSION`, :data:`MIA`);
- loading the conditions (:func:`load_conditions`) and the audit settings shared with
  ``epsaudit audit`` (:func:`audit_settings`).

The companion modules hold the experiment and its page; their public names are re-exported here
(on first use, so that they can import this module):

- :mod:`~epsaudit.studies.face_study.audit` -- the audits, the data table and the Table 2 / Table 3
  analogs;
- :mod:`~epsaudit.studies.face_study.diagnostics` -- the diagnostics of *Picture the Epsilon*,
  Section IV-D;
- :mod:`~epsaudit.studies.face_study.membership` -- the membership adversary and the example images;
- :mod:`~epsaudit.studies.face_study.tradeoff` -- beyond the papers: trade-off-curve and MMD
  certificates of the certified pairs, on the audit's own development/test split;
- :mod:`~epsaudit.studies.face_study.pages` -- the tables as the page shows them (labels, formats);
- :mod:`~epsaudit.studies.face_study.wording` -- the sentences whose wording follows from the numbers.

Every condition is audited with :func:`epsaudit.condition.audit_condition` and
:func:`audit_settings`; ``settings.cli_args()`` gives the same settings as command-line flags, so
``epsaudit audit data/<condition>.csv <flags>`` prints the chapter's numbers.
"""

from __future__ import annotations

import importlib
import json
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..stopwatch import Stopwatch
from .. import parameters as _parameters
from ..glue import glue_markdown, glue_numbers  # noqa: F401  (the page's glue, re-exported for the notebooks)

from ... import faces
from ...data import EmbeddingTable, load_embeddings
from ...faces.images import images_available
from ...settings import AuditSettings
from ...validation import unit_rows
from .. import choose_profile as _choose_profile

__all__ = [
    "glue_markdown", "glue_numbers", "ENCODERS", "REGIMES", "GENERATORS", "CONDITIONS", "LEVELS", "ENCODER_LABEL", "REGIME_LABEL",
    "CERTIFICATES_PER_CONDITION", "STUDY_AUDIT", "TABLE2_PAIRS", "PAPER_DIM", "MATCHED_GALLERY", "PROFILES",
    "TABLE2", "TABLE3", "TABLE3_PROTOCOL", "CERTIFICATE_CLOSED_FORMS", "DIAGNOSTICS", "MIA_TABLE_I_FACEFUSION",
    "MIA", "condition_names", "parse_condition", "condition_label", "labelled", "span", "rounded", "choose_profile",
    "Stopwatch", "images_available", "StudyData", "load_conditions", "subset_table", "audit_settings", "PARAMETERS",
    "present", "check_parameters",
]

#: Row L2-normalisation under its old name: chapter 4 imports ``_unit`` from here until it takes
#: :func:`epsaudit.validation.unit_rows` itself.
_unit = unit_rows

# -------------------------------------------------------------------------------------------------
# the conditions

ENCODERS = ("dlib", "sface")
REGIMES = ("large", "small")
GENERATORS = ("none", "swap", "dp-pix")
#: Index levels of every per-condition table.
LEVELS = ["encoder", "data", "generator"]
ENCODER_LABEL = {"dlib": "dlib", "sface": "SFace"}
REGIME_LABEL = {"large": "LFW >=20 (VGGFace2 role)", "small": "LFW 10-19 (CelebA role)"}
CERTIFICATES_PER_CONDITION = 5
#: The study's audit protocol (*Picture the Epsilon*, Section IV), before the family size is known.
STUDY_AUDIT = AuditSettings(certificates=CERTIFICATES_PER_CONDITION, prefer_certifiable=True)
#: Pairs behind each Table 2 median (*Picture the Epsilon*: the same 100 pairs for every method).
TABLE2_PAIRS = 100
#: Embedding dimension of the paper's encoders (ArcFace, FaceNet); ours have 128.
PAPER_DIM = 512
#: Photographs per gallery in the matched-gallery membership comparison.
MATCHED_GALLERY = 10


def condition_names(encoders: Sequence[str] = ENCODERS, regimes: Sequence[str] = REGIMES,
                    generators: Sequence[str] = GENERATORS) -> list[str]:
    """The condition names ``<encoder>_<regime>_<generator>`` of every combination, encoder-major.

    Returns
    -------
    list of str
        e.g. ``["dlib_large_none", "dlib_large_swap", ...]`` (12 with the defaults).
    """
    return [f"{e}_{r}_{g}" for e in encoders for r in regimes for g in generators]


#: The chapter's 12 conditions, in table order.
CONDITIONS = condition_names()


def present(mapping: Mapping[str, Any] | Sequence[str]) -> list[str]:
    """The conditions of :data:`CONDITIONS` that ``mapping`` holds, in table order.

    A run may include only some encoders or generators (the notebook's ``encoders`` and
    ``generators`` parameters); every table of the chapter has one row per condition present.

    Examples
    --------
    >>> present({"sface_small_none": 1, "dlib_large_swap": 2})
    ['dlib_large_swap', 'sface_small_none']
    """
    return [n for n in CONDITIONS if n in mapping]


#: The notebooks' papermill parameters (both pages of chapter 3): what each may be
#: (:mod:`epsaudit.studies.parameters`). Every page needs the untouched photographs (``none``):
#: the membership adversary's galleries and the reference every generator is compared with.
PARAMETERS = (_parameters.PROFILE, _parameters.DATA, _parameters.ENCODERS, _parameters.GENERATORS,
              _parameters.SEED, _parameters.N_JOBS)


def check_parameters(namespace: dict, page: str, required: Sequence[str] = ("none",)) -> dict[str, Any]:
    """Check a chapter-3 page's parameters (:func:`epsaudit.studies.parameters.check`) in its first cell.

    Besides each parameter's own allowed values, ``generators`` must include ``required`` (the
    first page needs ``"none"``, the membership page also ``"swap"``, whose swaps it studies).

    Parameters
    ----------
    namespace : dict
        The notebook's ``globals()`` (checked values are written back).
    page : str
        The page, for the messages.
    required : sequence of str
        Generators the page cannot do without.

    Returns
    -------
    dict
        Parameter name -> checked value.

    Raises
    ------
    ValueError
        An unknown parameter or a value that is not allowed, naming it and the allowed values.
    """
    values = _parameters.check(namespace, PARAMETERS, page)
    missing = [g for g in required if g not in values["generators"]]
    if missing:
        need = " and ".join(repr(g) for g in required)
        raise ValueError(f"{page}: parameter generators = {values['generators']!r} must include {need} (this page "
                         f"needs {', '.join(repr(g) for g in missing)}); allowed: a list of distinct values among "
                         f"'none', 'swap', 'dp-pix' that includes {need}")
    # the pages' tables follow the chapter's order, whatever order the parameters gave
    namespace["encoders"] = values["encoders"] = [e for e in ENCODERS if e in values["encoders"]]
    namespace["generators"] = values["generators"] = [g for g in GENERATORS if g in values["generators"]]
    return values


def parse_condition(name: str) -> dict[str, str]:
    """Split a condition name into its parts.

    Examples
    --------
    >>> parse_condition("sface_large_dp-pix")
    {'encoder': 'sface', 'regime': 'large', 'generator': 'dp-pix'}
    """
    encoder, regime, generator = name.split("_", 2)
    return {"encoder": encoder, "regime": regime, "generator": generator}


def condition_label(name: str) -> tuple[str, str, str]:
    """The row label of a condition in the chapter's tables: (encoder, data, generator).

    Examples
    --------
    >>> condition_label("sface_small_swap")
    ('SFace', 'LFW 10-19 (CelebA role)', 'swap')
    """
    c = parse_condition(name)
    return ENCODER_LABEL[c["encoder"]], REGIME_LABEL[c["regime"]], c["generator"]


def labelled(rows: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """One table row per condition.

    Parameters
    ----------
    rows : mapping condition name -> (column -> value)

    Returns
    -------
    pandas.DataFrame
        Indexed by :func:`condition_label`, index levels :data:`LEVELS`.
    """
    return pd.DataFrame({condition_label(n): row for n, row in rows.items()}).T.rename_axis(LEVELS)


def span(values: Sequence[float], fmt: str = "{:.3f}") -> str:
    """``"a"`` when all values agree at this precision, else ``"min-max"`` (ranges in the prose).

    Examples
    --------
    >>> span([0.1234, 0.1231]), span([1, 3], "{:.0f}")
    ('0.123', '1-3')
    """
    lo, hi = fmt.format(float(np.min(values))), fmt.format(float(np.max(values)))
    return lo if lo == hi else f"{lo}-{hi}"  # a str: glue shows it verbatim


def rounded(frame: pd.DataFrame, na: str = "n/a") -> pd.DataFrame:
    """A numeric table for display: floats rounded to 3 decimals, ``na`` where a value is missing.

    Missing means undefined (a ratio where MMD is zero on every pair) or not computed.

    Returns
    -------
    pandas.DataFrame
        Object columns.
    """
    return frame.astype(float).round(3).astype(object).where(lambda f: f.notna(), na)


# -------------------------------------------------------------------------------------------------
# run profiles

PROFILES: dict[str, dict[str, Any]] = {
    # smoke: identities x photographs per regime for run_smoke (None: the committed tables); audit:
    # AuditSettings overrides; rf_pairs: random-forest sensitivity pairs per condition;
    # split_permutations: per split-half MMD test; perm_pairs x permutations: inter-identity MMD
    # permutation tests; examples: target/donor/swap rows in the figure
    "smoke": dict(smoke=(2, 10), audit=dict(pairs=1, kde_pairs=1, roc_pairs=1, selection_pool=1, certificates=1),
                  rf_pairs=1, split_permutations=200, perm_pairs=1, permutations=1000, examples=2),
    # full: the paper's audit protocol and permutation tests; fewer random-forest pairs and split-half
    # permutations than the paper, so that the chapter runs in minutes
    "full": dict(smoke=None, audit={}, rf_pairs=20, split_permutations=1000, perm_pairs=100, permutations=10_000,
                 examples=4),
    # paper: as full, plus the paper's random-forest check on all 200 ROC-tested pairs and 10^4
    # permutations for the split-half MMD tests too (Picture the Epsilon, Section IV-D)
    "paper": dict(smoke=None, audit={}, rf_pairs=200, split_permutations=10_000, perm_pairs=100,
                  permutations=10_000, examples=4),
}


def choose_profile(name: str) -> dict[str, Any]:
    """The settings of one of the chapter's :data:`PROFILES`.

    Parameters
    ----------
    name : str
        ``"smoke"``, ``"full"`` or ``"paper"`` (the notebook's ``profile`` parameter).

    Returns
    -------
    dict
        A copy of the profile.

    Raises
    ------
    ValueError
        For another name.
    """
    return _choose_profile(PROFILES, name, "chapter 3 (face case study)")


# -------------------------------------------------------------------------------------------------
# the papers' reported values (copied from the papers' text)

#: *Picture the Epsilon*, Table 2: L2-normalised face embeddings (512-D); medians over the same 100
#: identity pairs per condition; "ROC-HT +inf" counts out-of-fold values equal to +inf among the
#: 100. Encoders ArcFace / FaceNet; data sets VGGFace2 (90-100 generated embeddings per identity)
#: and CelebA (26-35); generators FF = FaceFusion (one fixed donor), ID = InstantID.
TABLE2 = pd.DataFrame(
    [["ArcFace", "VGGFace2", "FF", 93.1, 10447.0, 1657.0, 0.475, 100, 1.000],
     ["ArcFace", "VGGFace2", "ID", 46.1, 8560.0, 1334.0, 0.236, 100, 0.982],
     ["ArcFace", "CelebA", "FF", 81.6, 8271.0, 1689.0, 0.388, 100, 1.000],
     ["ArcFace", "CelebA", "ID", 58.7, 7249.0, 1523.0, 0.257, 100, 0.978],
     ["FaceNet", "VGGFace2", "FF", 91.8, 9976.0, 1652.0, 0.459, 100, 0.999],
     ["FaceNet", "VGGFace2", "ID", 44.2, 7872.0, 1278.0, 0.217, 100, 0.937]],
    columns=["encoder", "dataset", "generator", "GaussMech", "KDE-LR a=0", "KDE-LR a=.01", "MMD-TV",
             "ROC-HT +inf", "ROC AUC"],
).set_index(["encoder", "dataset", "generator"])

#: *Picture the Epsilon*, Table 3: reserved-test certificates for five pairs per condition
#: selected on development data; all 40 bounds hold together at 95% (alpha = 0.05/80 per one-sided
#: bound). Ranges are min - max over the five pairs; "Pos." and ">1" count bounds above 0 and 1.
TABLE3 = pd.DataFrame(
    [["ArcFace", "VGGFace2", "FF", "30", "1.000 - 1.000", 5, 5, "1.192 - 1.277"],
     ["ArcFace", "VGGFace2", "ID", "29 - 30", "0.986 - 1.000", 5, 5, "1.151 - 1.277"],
     ["ArcFace", "CelebA", "FF", "9 - 10", "1.000 - 1.000", 0, 0, "0"],
     ["ArcFace", "CelebA", "ID", "9", "1.000 - 1.000", 0, 0, "0"],
     ["FaceNet", "VGGFace2", "FF", "30", "0.997 - 1.000", 5, 5, "1.192 - 1.277"],
     ["FaceNet", "VGGFace2", "ID", "29 - 30", "0.970 - 0.999", 5, 0, "0.685 - 0.925"]],
    columns=["encoder", "dataset", "generator", "n/class", "AUC", "Pos.", ">1", "eps_LB"],
).set_index(["encoder", "dataset", "generator"])
TABLE3_PROTOCOL = {"certificates": 40, "per_condition": 5, "alpha_per_bound": 0.05 / 80, "confidence": 0.95}
#: *Picture the Epsilon*, Table 3 closed forms (zero or one test error, 40 certificates at 95%).
CERTIFICATE_CLOSED_FORMS = {"n30_zero_errors": 1.277, "n29_zero_errors": 1.239, "n30_one_error": 1.192,
                            "n29_one_error": 1.151, "n100_cap_alpha_1e-4": 2.338}

#: *Picture the Epsilon*, Section IV-D: diagnostics of its eight face conditions (512-D embeddings).
DIAGNOSTICS = {
    # Shapiro-Wilk rejections at p < 1e-3 among 512 coordinates: range over conditions, and the
    # canonical ArcFace+VGGFace2+InstantID condition
    "shapiro_rejections_min": 296, "shapiro_rejections_max": 512, "shapiro_dimensions": 512,
    "shapiro_canonical": 509,
    # KDE-LR: ratio of the alpha = 0 to the alpha = 0.01 median
    "kde_ratio_min": 4.8, "kde_ratio_max": 6.4,
    # MMD-TV bandwidth sweep (max over the audited pairs) on ArcFace+VGGFace2, sigma / sigma*
    "bandwidth_scales": (0.5, 0.75, 1.0, 1.5, 2.0),
    "bandwidth_max_facefusion": (0.677, 0.724, 0.642, 0.480, 0.374),
    "bandwidth_max_instantid": (0.413, 0.448, 0.406, 0.310, 0.244),
    # classifier witness TV = max(TPR - FPR) against MMD/2 on the 200 ROC-tested pairs
    "witness_ratio_min": 4.39, "witness_ratio_max": 7.52, "witness_tv_min": 0.735, "witness_tv_max": 0.992,
    # mean per-pair AUC difference logistic minus random forest (200 pairs per condition)
    "rf_difference_min": -0.002, "rf_difference_max": 0.013,
    # inter-identity MMD permutation tests (10^4 permutations, first 100 pairs per condition)
    "permutation_rejections": 799, "permutation_tests": 800,
    # same-identity split-half controls: MMD rejections at 0.05
    "split_half_rejections": 16, "split_half_controls": 400,
}

#: *Toward Interpretable Privacy Guarantees in Face-Swapping Anonymization*, Table I, FaceFusion row
#: (VGGFace2, 947-948 pairs): TPR at FPR <= 1% and <= 0.1% and the best balanced accuracy, in
#: percent, for the two recognizers and median / max aggregation.
MIA_TABLE_I_FACEFUSION = pd.DataFrame(
    {("buffalo_l (ArcFace)", "median"): [30.2, 14.6, 81.7], ("buffalo_l (ArcFace)", "max"): [26.3, 11.6, 79.8],
     ("Facenet512", "median"): [15.5, 3.6, 72.9], ("Facenet512", "max"): [13.4, 4.5, 72.1]},
    index=pd.Index(["TPR @ FPR <= 1% (%)", "TPR @ FPR <= 0.1% (%)", "max balanced accuracy (%)"], name="metric"),
)
#: The same paper, Sections V and VIII: other single-swap numbers quoted beside ours.
MIA = {
    "facefusion_target_genuine": 0.616,  # mean target score of a genuine target image (buffalo_l, median)
    "facefusion_target_swap": 0.098,  # mean target score of the FaceFusion swap
    "non_member_mean": 0.008,  # non-member baseline (buffalo_l), about
    "non_member_mean_min": 0.004, "non_member_mean_max": 0.009,
    "facefusion_auc": 0.874,  # MIA AUC at pass 0 of the FaceFusion cascade (Section VIII)
    "auc_min_all_tools": 0.729, "auc_max_all_tools": 0.993,  # E4S ... DiffSwap
    "auc_min_donor_tools": 0.73, "auc_max_donor_tools": 0.95,  # the five donor-retaining tools
    "donor_dominated_min_fraction": 0.93,  # five tools: donor score above target in > 93% of pairs
    "diffswap_target_closer_fraction": 0.86,  # DiffSwap: closer to the target than the donor
    "rank1_blendface": 0.34, "rank1_chance": 0.001, "closed_set_candidates": 948,
    "pairs": 947,
}


# -------------------------------------------------------------------------------------------------
# timing and data


@dataclass
class StudyData:
    """The chapter's conditions as loaded by :func:`load_conditions`.

    Attributes
    ----------
    tables : dict
        Condition name -> :class:`~epsaudit.data.EmbeddingTable` (the names of :data:`CONDITIONS` the run
        includes, in that order).
    donors : dict
        Encoder -> the donor identity's gallery (``<encoder>_donor_none.csv``).
    manifest : dict
        The ``manifest.json`` beside the tables (provenance, detection paths, cosines).
    directory : Path
        Where the tables were read.
    source_note : str
        Where they came from, for the prose.
    images : bool
        Whether the LFW photographs are on this machine.
    stage : str
        The timing label of the loading step.
    """

    tables: dict[str, EmbeddingTable]
    donors: dict[str, EmbeddingTable]
    manifest: dict[str, Any]
    directory: Path
    source_note: str
    images: bool
    stage: str
    _temporary: tempfile.TemporaryDirectory | None = field(default=None, repr=False)

    @property
    def dim(self) -> int:
        """Embedding dimension of the conditions."""
        return next(iter(self.tables.values())).dim

    @property
    def encoders(self) -> list[str]:
        """The encoders of the loaded conditions, in :data:`ENCODERS` order."""
        return [e for e in ENCODERS if any(parse_condition(n)["encoder"] == e for n in self.tables)]

    @property
    def generators(self) -> list[str]:
        """The generators of the loaded conditions, in :data:`GENERATORS` order."""
        return [g for g in GENERATORS if any(parse_condition(n)["generator"] == g for n in self.tables)]

    @property
    def donor_id(self) -> str:
        """Image id of the fixed donor photograph of the ``swap`` generator."""
        return self.manifest["generation"]["donor"]["image_id"]

    def close(self) -> None:
        """Remove the temporary folder of a smoke run (no-op for the committed tables)."""
        if self._temporary is not None:
            self._temporary.cleanup()
            self._temporary = None


def subset_table(table: EmbeddingTable, n_ids: int, n_rows: int) -> EmbeddingTable:
    """The first ``n_ids`` identities (sorted) of a table, ``n_rows`` rows each.

    What the smoke profile audits when the LFW photographs are absent.

    Parameters
    ----------
    table : EmbeddingTable
        With an image-id column.
    n_ids, n_rows : int

    Returns
    -------
    EmbeddingTable
    """
    keep = np.zeros(table.n_rows, bool)
    for lab in sorted(set(table.labels))[:n_ids]:
        keep[np.flatnonzero(table.labels == lab)[:n_rows]] = True
    return EmbeddingTable.from_arrays(table.labels[keep], table.embeddings[keep], table.image_ids[keep],
                                      source=f"{table.source} (first {n_ids} identities)")


def load_conditions(profile: Mapping[str, Any], committed: str | Path = "data", *,
                    encoders: Sequence[str] = ENCODERS, generators: Sequence[str] = GENERATORS,
                    n_jobs: int = 1, clock: Stopwatch | None = None) -> StudyData:
    """The chapter's conditions and the donor galleries, as a profile asks.

    The full and paper profiles read the committed tables in ``committed``. The smoke profile
    (``profile["smoke"] = (identities, photographs)``) runs every stage of the face pipeline
    (:func:`epsaudit.faces.run_smoke`: detect, generate, encode) on that many photographs per
    regime into a temporary folder (removed by :meth:`StudyData.close` or when the process exits);
    without the LFW photographs it takes the first identities of the committed tables instead.

    Parameters
    ----------
    profile : mapping
        A :data:`PROFILES` entry.
    committed : path
        The folder of the committed tables and ``manifest.json``; a relative folder is taken from
        the repository (:func:`epsaudit.studies.parameters.data_folder`), never from the working
        directory.
    encoders, generators : sequence of str
        The conditions to load (:func:`condition_names` of both regimes).
    n_jobs : int
        Workers of the face pipeline.
    clock : Stopwatch, optional
        Records the seconds under :attr:`StudyData.stage`.

    Returns
    -------
    StudyData

    Raises
    ------
    ValueError
        A folder that does not exist or lacks ``manifest.json`` (naming the resolved path).
    FileNotFoundError
        A missing table.
    """
    t0 = time.perf_counter()
    images = images_available()
    temporary = None
    names = condition_names(encoders, REGIMES, generators)
    committed = _parameters.data_folder(committed, ["manifest.json"])
    if profile["smoke"] is None:
        directory, note, stage = committed, "the committed tables in `data/`", "load"
    elif images:
        temporary = tempfile.TemporaryDirectory(prefix="epsaudit-faces-")
        directory, stage = Path(temporary.name), "data (smoke: run_smoke)"
        n_ids, n_images = profile["smoke"]
        faces.run_smoke(directory, n_identities=n_ids, n_images=n_images, n_jobs=n_jobs, donor_gallery=True)
        note = (f"`run_smoke`: {n_ids} identities x {n_images} photographs per regime, detected, "
                "generated, encoded and written to a temporary folder")
    else:
        directory, stage = committed, "load"
        note = "the first identities of the committed tables (the LFW images are absent, so `run_smoke` cannot run)"
    manifest = json.loads((directory / "manifest.json").read_text())
    tables = {name: load_embeddings(directory / f"{name}.csv") for name in names}
    donors = {e: load_embeddings(directory / f"{e}_donor_none.csv", min_identities=0) for e in encoders}
    if profile["smoke"] is not None and not images:
        tables = {k: subset_table(t, *profile["smoke"]) for k, t in tables.items()}
    if clock is not None:
        clock.add(stage, time.perf_counter() - t0)
    return StudyData(tables, donors, manifest, directory, note, images, stage, temporary)


# -------------------------------------------------------------------------------------------------
# the audits


def audit_settings(n_conditions: int, *, seed: int = 0, **overrides: Any) -> AuditSettings:
    """The settings of :func:`epsaudit.condition.audit_condition` for one condition of the study.

    Every condition certifies :data:`CERTIFICATES_PER_CONDITION` pairs and all
    ``5 * n_conditions`` certificates form one Bonferroni family (``family_size``), so they hold
    together at 95%. ``overrides`` replace protocol entries (e.g. smaller pair counts for a smoke
    run). ``settings.cli_args()`` gives the same settings as ``epsaudit audit`` flags.

    Raises
    ------
    epsaudit.settings.SettingsError
        For an unknown setting or a bad value.
    """
    settings = STUDY_AUDIT.replace(seed=int(seed), **overrides)
    return settings.replace(family_size=settings.certificates * int(n_conditions))


# -------------------------------------------------------------------------------------------------
# the companion modules' names, re-exported on first use

_COMPANIONS = {
    "audit": (
        "data_table", "data_numbers", "condition_groups", "pair_lists", "run_audits", "common_pairs", "table2_row",
        "TABLE2_COLUMNS", "table2", "table2_comparison", "table2_500", "table2_numbers", "table3_row", "table3",
        "table3_comparison", "cap_table", "CAP_ROWS", "CAP_COLUMNS", "certificate_caps", "cap_summary", "table3_numbers",
        "reserved_certificates", "bound_summary", "example_condition",
    ),
    "diagnostics": (
        "SHAPIRO_MAX_ROWS", "BANDWIDTH_SCALES", "BANDWIDTH_WIDEN_FACTOR", "pooled_residuals", "shapiro_wilk",
        "bandwidth_sweep", "bandwidth_sweep_record", "witness_gap", "random_forest", "classifier_sensitivity",
        "split_half_groups", "split_half_controls", "shapiro_study", "least_gaussian",
        "qq_data", "qq_points", "shapiro_numbers", "BandwidthStudy", "bandwidth_study", "witness_table", "witness_numbers",
        "robustness_checks", "robustness_numbers",
    ),
    "membership": (
        "reference_centre", "assign_non_members", "SwapMembership", "swap_membership", "roc_curve_points",
        "MembershipStudy", "membership_inference", "paper_table_i", "example_triplets", "triplet_ids",
    ),
    "tradeoff": (
        "TRADEOFF_ENCODERS", "TRADEOFF_REGIME", "TRADEOFF_PAIRS", "certified_pairs", "TradeoffStudy", "rows_for_deviation",
        "tradeoff_study",
    ),
    "pages": (
        "SHORT_REGIME", "PAPER_ROW", "PAPER_NOTE", "with_paper", "number", "count", "percent", "certificate", "span_text", "range_text", "short_label", "condition_text",
        "short_index", "styled", "data_views", "table2_view", "table2_500_view", "cap_view", "table3_view",
        "table3_caps_view", "shapiro_view", "bandwidth_view", "edges_view", "witness_view", "robustness_views",
        "membership_views", "short_name", "tradeoff_views", "timing_view", "table3_joint_view",
    ),
    "wording": (
        "fold_words", "profile_text", "cli_command", "audit_numbers", "data_claims", "centring_claims", "table2_claims",
        "table3_claims", "bound_claims",
        "shapiro_claims", "witness_claims", "bandwidth_claims", "robustness_claims", "membership_claims",
        "tradeoff_claims", "exercise_numbers", "exercise_claims", "examples_text",
    ),
}
_LAZY = {name: module for module, names in _COMPANIONS.items() for name in names}
__all__ += sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__package__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
