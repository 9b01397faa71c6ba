"""Chapter 5's tables from the corpora's manifests and the certificates: the two designs side by side,
the face choices, Table 7 beside ours, and the planner.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..cascade.tables import CASCADE_TABLE_7, CASCADE_TABLE_7_CAP, ENCODER_LABEL
from . import levels
from .certify import PASSES

__all__ = ["DESIGN_LABEL", "PAPER_TABLE_7", "CASCADE_TABLE_7_CAP", "condition_label", "corpus_table",
           "face_choice_table", "build_timings", "design_summary", "paper_comparison", "planner_table",
           "shared_photographs"]

#: How the designs are named on the page.
DESIGN_LABEL = {"pool": "photograph pool", "disjoint": "disjoint photographs",
                "photographs": "photographs (chapter 4)"}
#: Table 7 of *Picture the Epsilon* (the cascade's certificates: passes 1-5, 50 pairs per pass,
#: 100 test rows per side, one family of 250 split Clopper-Pearson bounds at 95%).
PAPER_TABLE_7 = CASCADE_TABLE_7


def condition_label(encoder: str, variant: str) -> str:
    """``"dlib, hull"``: an encoder and swap variant as the page names them."""
    return f"{ENCODER_LABEL.get(encoder, encoder)}, {variant}"


def shared_photographs(corpus: Any) -> tuple[int, int]:
    """``(test draws starting from a photograph some development draw of the identity started from,
    test draws)``, over the pass-0 draws of all identities."""
    draws = corpus.draws[corpus.draws["used_none"].astype(bool)]
    dev = draws[draws["split"] == "dev"].groupby("identity")["photograph"].apply(set)
    test = draws[draws["split"] == "test"]
    shared = sum(p in dev.get(a, set()) for a, p in zip(test["identity"], test["photograph"]))
    return int(shared), len(test)


def corpus_table(corpora: Mapping[str, Any]) -> pd.DataFrame:
    """The designs' corpora at a glance, from their manifests, one column per design.

    Parameters
    ----------
    corpora : mapping design -> epsaudit.resampled.Resampled
        One corpus (any encoder and variant) per design.

    Returns
    -------
    pandas.DataFrame
        ``quantity`` and one text column per design label.
    """
    cols: dict[str, list[str]] = {}
    names: list[str] = []
    for design, corpus in corpora.items():
        d = corpus.manifest["design"]
        usable = d["identities"]["usable_photographs"]
        per = d["draws_per_split"]
        shared, n_test = shared_photographs(corpus)
        dev_photos = corpus.draws[corpus.draws["split"] == "dev"].groupby("identity")["photograph"].nunique()
        test_photos = corpus.draws[corpus.draws["split"] == "test"].groupby("identity")["photograph"].nunique()
        lost = ", ".join(f"{v} {n:,}" for v, n in d["lost_draws"].items())
        rows = [("identities (>= 20 photographs)", f"{len(d['identities']['chosen'])}"),
                ("usable photographs per identity", f"{min(usable.values())}-{max(usable.values())}"),
                ("where a draw's photograph comes from",
                 "development: parts dev-1, dev-2; test: parts test-1, test-2 (four disjoint parts)"
                 if corpus.design == "disjoint" else "all of the identity's photographs, development and test alike"),
                ("photographs drawn per identity, development / test (median)",
                 f"{int(dev_photos.median())} / {int(test_photos.median())}"),
                ("test draws starting from a development photograph", f"{shared:,} of {n_test:,}"),
                ("donor pool", f"{d['donor_pool']['photographs']:,} photographs of {d['donor_pool']['identities']:,} "
                               "identities with <= 9 photographs (fresh donors every pass)"),
                ("draws per identity", f"{per['dev']} development + {per['test']} test"),
                ("passes stored", ", ".join(str(k) for k in d["passes"]) + f" (of a chain of {d['chain_length']})"),
                ("swap variants", ", ".join(d["variants"])),
                ("chains rendered", f"{d['draws_rendered']:,} ({d['rounds']} round(s))"),
                ("chains lost (the swapped face not found at a later pass)", lost),
                ("build time", f"{corpus.manifest['run']['wall_seconds'] / 60:.0f} min on "
                               f"{corpus.manifest['run']['n_jobs']} worker processes")]
        names = [r[0] for r in rows]
        cols[DESIGN_LABEL.get(design, design)] = [r[1] for r in rows]
    return pd.DataFrame({"quantity": names, **cols})


def face_choice_table(corpora: Mapping[str, Any]) -> pd.DataFrame:
    """How each encoded face was chosen, per design, variant, pass and encoder (the manifests'
    ``face_choices``; the pool corpus, built before faces were matched to the swap, has none).

    Returns
    -------
    pandas.DataFrame
        ``design``, ``variant``, ``pass``, ``encoder`` (``tracking``: the chain's landmarks at passes
        >= 2), ``images``, ``several_faces``, ``bystander`` (the face nearest the centre was not the
        swapped one), ``landmarks`` (no detected face on the swapped face: placed from the
        landmarks), ``lost`` (tracking found no face there).
    """
    rows = []
    for design, corpus in corpora.items():
        choices = corpus.manifest["design"].get("face_choices")
        if not choices:
            continue
        for variant, by_pass in choices.items():
            for k, by_encoder in sorted(by_pass.items(), key=lambda kv: int(kv[0])):
                for encoder, rec in by_encoder.items():
                    how = rec["how"]
                    rows.append({"design": design, "variant": variant, "pass": int(k), "encoder": encoder,
                                 "images": rec["images"], "several_faces": rec["several_faces"],
                                 "bystander": how.get("bystander", 0), "landmarks": how.get("landmarks", 0),
                                 "lost": how.get("none", 0)})
    return pd.DataFrame(rows, columns=["design", "variant", "pass", "encoder", "images", "several_faces",
                                       "bystander", "landmarks", "lost"])


def build_timings(corpus: Any) -> pd.DataFrame:
    """Images per second of each stage of a corpus's build (its manifest's ``run``).

    Returns
    -------
    pandas.DataFrame
        One row per stage and step: ``stage``, ``step``, ``images``, ``cpu_seconds``,
        ``images_per_cpu_second``, and per stage ``stage_wall_seconds``.
    """
    rows = []
    for stage, s in corpus.manifest["run"]["stages"].items():
        for step, v in s.get("steps", {}).items():
            rows.append({"stage": stage, "step": step, "images": v["count"], "cpu_seconds": v["cpu_seconds"],
                         "images_per_cpu_second": v["per_cpu_second"], "stage_wall_seconds": s["wall_seconds"]})
    return pd.DataFrame(rows)


def design_summary(summary: pd.DataFrame, control: pd.DataFrame) -> pd.DataFrame:
    """Certificates and same-person controls side by side, one row per design, condition and pass.

    Returns
    -------
    pandas.DataFrame
        ``design``, ``encoder``, ``variant``, ``pass``, ``certificates``, ``positive``,
        ``median_bound``, ``cap``, ``control_pairs``, ``control_positive``, ``control_max``,
        ``control_cap``, ``reading`` (what the certificate is evidence of: ``identity`` where the
        control is at or near 0 -- no positive control, or none above 0.1 nats --, ``photographs``
        where the control's largest bound reaches the certificates' median, else ``identity and
        photographs``).
    """
    keys = ["design", "encoder", "variant", "pass"]
    ctl = control.set_index(keys)[["pairs", "positive", "max_bound", "cap"]].rename(
        columns={"pairs": "control_pairs", "positive": "control_positive", "max_bound": "control_max",
                 "cap": "control_cap"})
    out = summary.set_index(keys)[["certificates", "positive", "median_bound", "cap"]].join(ctl).reset_index()

    def reading(r: pd.Series) -> str:
        if r["control_positive"] == 0 or r["control_max"] <= 0.1:
            return "identity"
        return "photographs" if r["control_max"] >= r["median_bound"] else "identity and photographs"

    out["reading"] = out.apply(reading, axis=1)
    return out.astype({"control_pairs": int, "control_positive": int})


def paper_comparison(summary: pd.DataFrame, photographs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Median certificate and positive count at passes 1 and 5, Table 7 of *Picture the Epsilon*
    beside ours: the paper's split Clopper-Pearson bound (as Table 7 reports it) and the default one.

    Parameters
    ----------
    summary, photographs : pandas.DataFrame
        :func:`~.certify.summary_table` of the resampled designs and (optional) of chapter 4's photographs.

    Returns
    -------
    pandas.DataFrame
        One row per design and condition: ``design``, ``condition``, ``cp_pass_1``, ``cp_pass_5``
        (median, paper's bound), ``positive_pass_1``, ``positive_pass_5`` (of the paper's bound),
        ``cap_cp``, ``default_pass_1``, ``default_pass_5``, ``cap``, ``n_test``.
    """
    paper = PAPER_TABLE_7
    rows = [{"design": "Picture the Epsilon, Table 7", "condition": "FaceFusion cascade, 50 pairs",
             "cp_pass_1": paper.loc[1, "median_lb"], "cp_pass_5": paper.loc[5, "median_lb"],
             "positive_pass_1": paper.loc[1, "positive"], "positive_pass_5": paper.loc[5, "positive"],
             "cap_cp": CASCADE_TABLE_7_CAP, "default_pass_1": np.nan, "default_pass_5": np.nan, "cap": np.nan,
             "n_test": "100"}]
    tables = [summary] + ([photographs] if photographs is not None else [])
    for table in tables:
        for (design, e, v), g in table.groupby(["design", "encoder", "variant"], sort=False):
            by = g.set_index("pass")
            rows.append({"design": DESIGN_LABEL.get(design, design), "condition": condition_label(e, v),
                         "cp_pass_1": by.loc[1, "median_cp"], "cp_pass_5": by.loc[5, "median_cp"],
                         "positive_pass_1": by.loc[1, "positive_cp"], "positive_pass_5": by.loc[5, "positive_cp"],
                         "cap_cp": by["cap_cp"].max(), "default_pass_1": by.loc[1, "median_bound"],
                         "default_pass_5": by.loc[5, "median_bound"], "cap": by["cap"].max(),
                         "n_test": _rows(by["n_test"].min(), by["n_test_max"].max())})
    return pd.DataFrame(rows)


def _rows(low: int, high: int) -> str:
    """A test size, or the range of test sizes per side (``"10-15"``)."""
    return f"{int(low)}" if int(low) == int(high) else f"{int(low)}-{int(high)}"


def planner_table(*, confidence: float = 0.95, delta: float = 1e-5, pairs: int = 50, passes: int = len(PASSES),
                  identities: int = 24, control_rows: int = 50, photograph_rows: int = 12,
                  targets: Sequence[float] = (0.5, 1.0, 2.0, 2.29)) -> pd.DataFrame:
    """What each family can certify and the test rows per side each target epsilon needs, for both bounds.

    Rows: the paper's cascade family (50 pairs x 5 passes = 250 certificates), this chapter's
    certificates (``pairs`` x ``passes``, either design) and its same-person controls (``identities``
    x ``passes``), each with the default bound and the paper's. Columns: the cap at the family's test
    sizes (100 rows per side; ``control_rows`` for a control half; ``photograph_rows`` for an LFW
    identity's test half of photographs), and the smallest test per side that can certify each target
    with zero test errors.

    Returns
    -------
    pandas.DataFrame
        ``family``, ``certificates``, ``bound``, ``level`` (of each certificate), ``cap_100``,
        ``cap_control``, ``cap_photographs``, ``n_for_<target>``.
    """
    rows = []
    families = (("Picture the Epsilon, Table 7", 250), ("certificates, either design", pairs * passes),
                ("same-person controls, either design", identities * passes))
    for label, family in families:
        for bound in dict.fromkeys((levels.DEFAULT_BOUND, levels.CP)):
            row = {"family": label, "certificates": family, "bound": levels.BOUND_LABEL.get(bound, bound),
                   "level": levels.certificate_level(family, confidence),
                   "cap_100": levels.cap(100, 100, family, confidence, delta, bound),
                   "cap_control": levels.cap(control_rows, control_rows, family, confidence, delta, bound),
                   "cap_photographs": levels.cap(photograph_rows, photograph_rows, family, confidence, delta, bound)}
            row.update({f"n_for_{t:g}": levels.required_rows(t, family, confidence, delta, bound) for t in targets})
            rows.append(row)
    return pd.DataFrame(rows)
