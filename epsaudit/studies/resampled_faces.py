"""Chapter 5, certificates about identities on resampled swaps: the plumbing its page imports.

The resampled corpora (:mod:`epsaudit.data.corpora`) hold 100 development and 100 test independent draws of the swap
mechanism ``M_k(A)`` at passes 0, 1 and 5 per identity, so the reserved test (*Picture the Epsilon*, Section IV-C) runs
at the paper's test size on real faces, in the ``pool`` (``data/resampled/``) and ``disjoint``
(``data/resampled_disjoint/``) photograph designs (the book's methods chapter, section 'A resampled mechanism: test rows
beyond the photographs'). The page calls the public audits; this module holds the profiles and parameters, the corpora's
loading (and chapter 4's photographs), one pass's rows, the same-person control's halves, and the manifests' face
choices and build timings as tables.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..data.corpora import DESIGN_DIRS, RESAMPLED_MANIFEST, control_half, load_corpora, load_resampled
from ..protocol import split_identities, stream
from ..validation import unit_rows
from . import choose_profile as _choose_profile
from . import parameters as _parameters
import matplotlib.pyplot as plt
from .figures import PALETTE

__all__ = ["CHAPTER", "PASSES", "DESIGNS", "PROFILES", "PARAMETERS", "check_parameters", "choose_profile",
           "corpus_folder", "load_designs", "load_photographs", "pass_data", "photograph_data", "control_groups",
           "face_choice_table", "build_timings", "certificates_and_controls", "running_bounds"]

CHAPTER = "chapter 5 (certificates on resampled swaps)"
#: Passes of the corpora: 0 = the photographs, 1 and 5 swaps.
PASSES = (0, 1, 5)
#: The photograph designs, in the order the page shows them.
DESIGNS = ("pool", "disjoint")

_FULL = dict(identities=None, pairs=50, worst_k=10, encoders=("dlib", "sface"), variants=("hull", "inner"),
             confidence=0.95, delta=1e-5)
PROFILES = {
    # the tests: one encoder and variant, 8 identities (28 pairs), 6 certificates per pass (~1 min)
    "smoke": dict(_FULL, identities=8, pairs=6, worst_k=3, encoders=("dlib",), variants=("hull",)),
    # the book: every identity, 50 certificates per pass as in Table 7, both encoders and variants
    "full": _FULL,
    # the paper's sizes are the full profile's here
    "paper": _FULL,
}

#: The notebook's parameters (:func:`check_parameters`).
PARAMETERS = (_parameters.PROFILE, _parameters.DATA,
              _parameters.subset(_parameters.ENCODERS, ("dlib", "sface"), optional=True),
              _parameters.Parameter("variants", str, "swap variants to include", choices=("hull", "inner"),
                                    many=True, optional=True),
              _parameters.SEED, _parameters.N_JOBS)


def check_parameters(namespace: dict, page: str = CHAPTER) -> dict[str, Any]:
    """Check the chapter's parameters (:func:`epsaudit.studies.parameters.check`) in its first cell.

    Raises
    ------
    ValueError
        An unknown parameter, or a value of the wrong type or out of range (named).
    """
    return _parameters.check(namespace, PARAMETERS, page)


def choose_profile(name: str, *, encoders: Sequence[str] | None = None,
                   variants: Sequence[str] | None = None) -> dict[str, Any]:
    """The chapter's settings for profile ``name`` (``smoke``, ``full`` or ``paper``), narrowed to
    ``encoders`` and ``variants`` when given (None: the profile's).

    Raises
    ------
    ValueError
        An unknown profile name, or encoders/variants the profile cannot honour (the smoke profile
        runs dlib and hull only).

    Examples
    --------
    >>> choose_profile("full", encoders=["sface"])["encoders"]
    ('sface',)
    """
    settings = _choose_profile(PROFILES, name, CHAPTER)
    for key, asked in (("encoders", encoders), ("variants", variants)):
        if asked is None:
            continue
        missing = [v for v in asked if v not in settings[key]]
        if missing:
            raise ValueError(f"{CHAPTER}: parameter {key} = {list(asked)}: the {name} profile runs "
                             f"{', '.join(settings[key])} only, not {', '.join(missing)}")
        settings[key] = tuple(v for v in settings[key] if v in asked)
    return settings


def corpus_folder(data: str | Path, design: str) -> Path:
    """The committed corpus folder of a design (``data`` resolved from the repository root).

    Raises
    ------
    FileNotFoundError
        The folder or its manifest is missing from the checkout (named; the corpora are committed).
    """
    try:
        root = _parameters.data_folder(data)
    except ValueError as exc:
        raise FileNotFoundError(str(exc)) from None
    folder = root / DESIGN_DIRS[design]
    if not (folder / RESAMPLED_MANIFEST).is_file():
        raise FileNotFoundError(f"{folder / RESAMPLED_MANIFEST} is missing: the {design} corpus is committed under "
                                f"{Path(str(data)) / DESIGN_DIRS[design]} of the repository "
                                f"({_parameters.REPOSITORY})")
    return folder


def load_designs(data: str | Path, encoders: Sequence[str], variants: Sequence[str],
                 designs: Sequence[str] = DESIGNS) -> dict[tuple[str, str, str], Any]:
    """Read each design's corpus once per encoder and swap variant it holds (a variant a design's manifest
    lacks is skipped: the pool corpus is ``hull`` only), checked against its manifest.

    Returns
    -------
    dict (design, encoder, variant) -> epsaudit.data.corpora.Resampled

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`corpus_folder` and :func:`epsaudit.data.corpora.load_resampled`.
    """
    out = {}
    for design in designs:
        folder = corpus_folder(data, design)
        held = json.loads((folder / RESAMPLED_MANIFEST).read_text(encoding="utf-8"))["design"]["variants"]
        for e in encoders:
            for v in variants:
                if v in held:
                    out[(design, e, v)] = load_resampled(e, folder, variant=v)
    return out


def pass_data(corpus: Any, k: int, identities: int | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Development and test rows (unit-normalised) of pass ``k`` with their draw ids.

    Parameters
    ----------
    corpus : epsaudit.data.corpora.Resampled
    k : int
        A pass of the corpus.
    identities : int, optional
        Keep the first ``identities`` identities in sorted order.

    Returns
    -------
    dev, test : dict identity -> ndarray (n, d)
    dev_ids, test_ids : dict identity -> ndarray (n,) int64

    Raises
    ------
    KeyError
        A pass the corpus does not hold.
    """
    p = corpus.passes[int(k)]
    keep = p.identities[:identities] if identities else p.identities
    return ({a: unit_rows(p.dev[a]) for a in keep}, {a: unit_rows(p.test[a]) for a in keep},
            {a: p.dev_draws[a] for a in keep}, {a: p.test_draws[a] for a in keep})


def load_photographs(data: str | Path, encoders: Sequence[str]) -> dict[str, Any]:
    """Chapter 4's cascade corpora (one chain per photograph), one per encoder.

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`epsaudit.data.corpora.load_corpora`.
    """
    folder = _parameters.data_folder(data) / "corpora"
    return {e: load_corpora(e, folder) for e in encoders}


def photograph_data(corpora: Any, variant: str, k: int, identities: int | None = None, seed: int = 0
                    ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Chapter 4's photographs at pass ``k``: each identity's complete chains of ``variant`` split in
    halves (:func:`epsaudit.protocol.split_identities`, ``test_size=0.5``), development and test.

    Parameters
    ----------
    corpora : epsaudit.data.corpora.Corpora
    variant : str
    k, seed : int
        0 (the start photographs) to the chain length; the split's seed.
    identities : int, optional
        Keep the first ``identities`` identities in sorted order.

    Returns
    -------
    dev, test : dict identity -> ndarray (n, d), unit-normalised, one row per photograph's chain

    Raises
    ------
    ValueError
        An unknown variant or a pass outside the chains.
    """
    part = corpora.cascade[corpora.cascade["variant"] == variant]
    if part.empty:
        raise ValueError(f"{corpora.directory}: no cascade rows of variant {variant!r}")
    chains = corpora.chains.set_index("chain").loc[np.sort(part["chain"].unique())].reset_index()
    if not 0 <= int(k) <= corpora.passes:
        raise ValueError(f"pass k={k} outside 0..{corpora.passes}")
    if int(k) == 0:
        raw = corpora.embeddings(chains["start"])
    else:
        rows = part[part["pass"] == int(k)].set_index("chain").loc[chains["chain"]]
        raw = rows[corpora.embedding_columns].to_numpy(dtype=np.float64)
    x, labels = unit_rows(raw), chains["identity"].astype(str).to_numpy()
    names = sorted(set(labels))[:identities] if identities else sorted(set(labels))
    dev, test, _ = split_identities({a: x[labels == a] for a in names}, test_size=0.5, seed=seed)
    return dev, test


def _halves(corpus: Any, identities: Sequence[str], seed: int):
    """``half(identity, draw ids) -> 1 or 2 per draw`` (:func:`control_groups`); the pool design's photograph
    halves come from ``stream("same-person-split", seed, identity)``."""
    draws = corpus.draws.set_index("draw")
    if corpus.design == "disjoint":
        part = draws["part"]
        return lambda a, ids: np.array([control_half(p) for p in part.loc[ids]])
    photo = draws["photograph"]
    half_of: dict[str, int] = {}
    p0 = corpus.passes[0]
    for a in identities:
        photos = sorted(set(photo.loc[p0.dev_draws[a]]) | set(photo.loc[p0.test_draws[a]]))
        order = stream("same-person-split", seed, a).permutation(len(photos))
        half_of.update({photos[i]: (1 if rank < len(photos) / 2 else 2) for rank, i in enumerate(order)})
    return lambda a, ids: np.array([half_of[p] for p in photo.loc[ids]])


def control_groups(corpus: Any, k: int, identities: int | None = None, seed: int = 0
                   ) -> tuple[dict[str, dict], list[tuple[str, str]]]:
    """The same-person control's rows of pass ``k``: each identity's development and test draws split
    into halves ``"<identity> #1"`` and ``"<identity> #2"``, and the pairs (half 1, half 2).

    Disjoint design: half 1 is the draws starting in ``dev-1`` and ``test-1``, half 2 in ``dev-2`` and
    ``test-2``; pool design: each draw goes with its photograph's seeded half.

    Returns
    -------
    groups : dict
        ``dev``, ``test``, ``dev_ids``, ``test_ids``: each a dict half name -> rows or draw ids.
    pairs : list of (str, str)
    """
    dev, test, dev_ids, test_ids = pass_data(corpus, k, identities)
    names = sorted(dev)
    half = _halves(corpus, names, seed)
    groups: dict[str, dict] = {"dev": {}, "test": {}, "dev_ids": {}, "test_ids": {}}
    for a in names:
        for part, x, ids in (("dev", dev[a], dev_ids[a]), ("test", test[a], test_ids[a])):
            h = half(a, ids)
            for j in (1, 2):
                groups[part][f"{a} #{j}"] = x[h == j]
                groups[f"{part}_ids"][f"{a} #{j}"] = ids[h == j]
    return groups, [(f"{a} #1", f"{a} #2") for a in names]


def face_choice_table(corpus: Any) -> pd.DataFrame:
    """How each encoded face was chosen, per variant, pass and encoder (the manifest's ``face_choices``;
    empty for the pool corpus, built before faces were matched to the swap).

    Returns
    -------
    pandas.DataFrame
        ``variant``, ``pass``, ``encoder`` (``tracking``: the chain's landmarks at passes >= 2), ``images``,
        ``several_faces``, ``bystander``, ``landmarks``, ``lost`` (:func:`epsaudit.build.resampled_builder.face_choices`).
    """
    rows = []
    for variant, by_pass in (corpus.manifest["design"].get("face_choices") or {}).items():
        for k, by_encoder in sorted(by_pass.items(), key=lambda kv: int(kv[0])):
            for encoder, rec in by_encoder.items():
                how = rec["how"]
                rows.append({"variant": variant, "pass": int(k), "encoder": encoder, "images": rec["images"],
                             "several_faces": rec["several_faces"], "bystander": how.get("bystander", 0),
                             "landmarks": how.get("landmarks", 0), "lost": how.get("none", 0)})
    return pd.DataFrame(rows, columns=["variant", "pass", "encoder", "images", "several_faces", "bystander",
                                       "landmarks", "lost"])


def build_timings(corpus: Any) -> pd.DataFrame:
    """Images per CPU second of each stage and step of a corpus's build (its manifest's ``run``).

    Returns
    -------
    pandas.DataFrame
        ``stage``, ``step``, ``images``, ``cpu_seconds``, ``images_per_cpu_second``, ``stage_wall_seconds``
        (steps that encoded no image left out).
    """
    rows = []
    for stage, s in corpus.manifest["run"]["stages"].items():
        for step, v in s.get("steps", {}).items():
            rows.append({"stage": stage, "step": step, "images": v["count"], "cpu_seconds": v["cpu_seconds"],
                         "images_per_cpu_second": v["per_cpu_second"], "stage_wall_seconds": s["wall_seconds"]})
    out = pd.DataFrame(rows)
    return out[out["images"] > 0].reset_index(drop=True)


# --- Figures --------------------------------------------------------------------------------------


WIDTH = 9.0

DESIGN_COLOUR = {"pool": PALETTE[1], "disjoint": PALETTE[0], "photographs": PALETTE[2]}


def _design_colour(design: str, j: int) -> str:
    return DESIGN_COLOUR.get(design, PALETTE[3 + j % 4])


def certificates_and_controls(bounds: pd.DataFrame, *, paper_medians: dict[int, float] | None = None,
                              paper_cap: float | None = None):
    """Every certified lower bound per pass, one panel per condition, each design in its colour, with
    the same-person controls of the same design beside the certificates.

    Parameters
    ----------
    bounds : pandas.DataFrame
        Tidy: ``condition`` (panel), ``design`` (colour: ``pool``, ``disjoint``), ``kind`` (``certificate``: two people,
        dots; ``control``: two halves of one person, open triangles), ``pass``, ``bound`` (certified
        epsilon, nats), ``cap`` (the largest bound the test sizes allow).
    paper_medians : dict pass -> float, optional
        The median certificate of Table 7 of *Picture the Epsilon* per pass (black crosses).
    paper_cap : float, optional
        Table 7's cap (a dotted black line).

    Returns
    -------
    matplotlib.figure.Figure
    """
    conditions = list(dict.fromkeys(bounds["condition"]))
    cols = min(2, len(conditions))
    rows = int(np.ceil(len(conditions) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(WIDTH, 3.6 * rows + 0.8), sharey=True, squeeze=False,
                             layout="constrained")
    passes = sorted(bounds["pass"].unique())
    designs = list(dict.fromkeys(bounds["design"]))
    slots = [(d, kind) for d in designs for kind in ("certificate", "control")]
    width = 0.84 / len(slots)
    rng = np.random.default_rng(0)  # horizontal jitter of the dots only
    for ax, cond in zip(axes.flat, conditions):
        sub = bounds[bounds["condition"] == cond]
        for j, (design, kind) in enumerate(slots):
            g = sub[(sub["design"] == design) & (sub["kind"] == kind)]
            colour = _design_colour(design, designs.index(design))
            offset = (j - (len(slots) - 1) / 2) * width
            for i, k in enumerate(passes):
                b = g.loc[g["pass"] == k, "bound"].to_numpy(float)
                if not len(b):
                    continue
                x = i + offset + rng.uniform(-width / 3, width / 3, size=len(b))
                label = (f"{design}: {'two people' if kind == 'certificate' else 'same person (control)'}"
                         if i == 0 else None)
                if kind == "certificate":
                    ax.scatter(x, b, s=11, alpha=0.55, color=colour, label=label)
                else:
                    ax.scatter(x, b, s=16, marker="v", facecolors="none", edgecolors=colour, linewidths=0.9,
                               label=label)
                ax.hlines(np.median(b), i + offset - width / 2, i + offset + width / 2, color=colour, lw=2.5)
                ax.hlines(g.loc[g["pass"] == k, "cap"].max(), i + offset - width / 2, i + offset + width / 2,
                          color=colour, lw=1, ls="--")
        if paper_medians:
            xs = [i for i, k in enumerate(passes) if k in paper_medians]
            ax.scatter(xs, [paper_medians[passes[i]] for i in xs], marker="x", s=60, color="black",
                       label="Table 7 median (paper)", zorder=5)
        if paper_cap is not None:
            ax.axhline(paper_cap, color="black", ls=":", lw=1, label="Table 7 cap (paper)")
        ax.set_xticks(range(len(passes)), [f"pass {k}" for k in passes])
        ax.set_title(cond)
    for ax in axes.flat[len(conditions):]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("certified lower bound on\nepsilon (nats)")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=2, frameon=False)
    return fig


def running_bounds(paths: dict[str, np.ndarray], *, target: float, plan_rows: int | None = None):
    """The running anytime-valid bound of each pair against the test rows taken (both sides).

    Parameters
    ----------
    paths : dict pair label -> ndarray (rows,)
        The certificate's bound after each test row (``SequentialCertificate.bound_path``), nats.
    target : float
        The epsilon the certificates aim for (a dashed horizontal line).
    plan_rows : int, optional
        Test rows (both sides) the fixed-size plan needs to certify ``target`` with zero errors (a
        dotted vertical line).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, ax = plt.subplots(figsize=(WIDTH, 3.4 + 0.25 * (len(paths) + 2) / 3), layout="constrained")
    for j, (label, path) in enumerate(paths.items()):
        ax.step(np.arange(1, len(path) + 1), path, where="post", lw=1.4, color=plt.get_cmap("tab10")(j % 10),
                ls="-" if j < 10 else "--", alpha=0.85, label=label)
    ax.axhline(target, color="black", ls="--", lw=1, label=f"target {target:g}")
    if plan_rows is not None:
        ax.axvline(plan_rows, color="black", ls=":", lw=1, label=f"fixed plan ({plan_rows} rows)")
    ax.set_xlabel("test draws taken, both identities (rows)")
    ax.set_ylabel("running lower bound on\nepsilon (nats)")
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncol=3, frameon=False)
    return fig
