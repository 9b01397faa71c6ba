"""Chapter 5's page: tables with readable labels, the numbers the prose cites and the verdict,
worded from the certificates and the same-person controls of both designs."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..cascade.display import strings, styled
from ..cascade.tables import ENCODER_LABEL
from . import levels
from .certify import PASSES
from .tables import DESIGN_LABEL, PAPER_TABLE_7, build_timings, condition_label, shared_photographs

__all__ = ["corpus_view", "face_choice_view", "design_view", "comparison_view", "control_view", "worst_view",
           "planner_view", "timings_view", "chapter_numbers", "verdict", "conclusions", "figure_data",
           "paper_medians", "exercise_numbers"]

_COUNT = "{:.0f}"


_SHORT = {"pool": "pool", "disjoint": "disjoint", "photographs": "photographs (ch. 4)"}


def _labelled(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    if "design" in out:
        out["design"] = [_SHORT.get(d, DESIGN_LABEL.get(d, d)) for d in out["design"]]
    if "encoder" in out and "variant" in out:
        out.insert(1 if "design" in out else 0, "condition",
                   [condition_label(e, v) for e, v in zip(frame["encoder"], frame["variant"])])
    return out


def corpus_view(table: pd.DataFrame):
    """:func:`~.tables.corpus_table` as the page shows it."""
    return styled(table, headers={"quantity": ""}, wrap_group=True,
                  caption="The two designs' corpora (from their manifests; SHA-256 of every file checked on loading)")


def face_choice_view(table: pd.DataFrame):
    """:func:`~.tables.face_choice_table` as the page shows it."""
    shown = table.copy()
    shown["encoder"] = [ENCODER_LABEL.get(e, "tracking") for e in shown["encoder"]]
    shown["variant"] = shown["variant"].replace({"none": "photograph"})
    cols = {"variant": "variant", "pass": "pass", "encoder": "face found by", "images": "images",
            "several_faces": "several faces", "bystander": "bystander avoided",
            "landmarks": "from landmarks", "lost": "chain lost"}
    frame = strings(shown[list(cols)], {c: _COUNT for c in ("pass", "images", "several_faces", "bystander",
                                                            "landmarks", "lost")})
    return styled(frame, group="variant", headers=cols,
                  caption="Which face the disjoint corpus encoded: images with several detected faces, and the "
                          "fallbacks")


def design_view(table: pd.DataFrame):
    """:func:`~.tables.design_summary` as the page shows it: certificates and controls side by side."""
    shown = _labelled(table)
    n_cert, n_ctl = int(table["certificates"].max()), int(table["control_pairs"].max())
    cols = {"design": "design", "condition": "condition", "pass": "pass", "median_bound": "median",
            "positive": f"> 0 (of {n_cert})", "control_positive": f"control > 0 (of {n_ctl})",
            "control_max": "control, largest", "reading": "evidence about"}
    frame = strings(shown[list(cols)], {"pass": _COUNT, "positive": _COUNT, "control_positive": _COUNT})
    return styled(frame, group="design", wrap_group=True, headers=cols,
                  caption=f"Certificates between two people and same-person controls ("
                          f"{levels.BOUND_LABEL.get(levels.DEFAULT_BOUND, levels.DEFAULT_BOUND)} bound, nats, 95% per "
                          f"family; caps {table['cap'].max():.3f} and {table['control_cap'].max():.3f})")


def comparison_view(comparison: pd.DataFrame):
    """:func:`~.tables.paper_comparison` as the page shows it."""
    shown = comparison.copy()
    short = {label: _SHORT[key] for key, label in DESIGN_LABEL.items()}
    shown["design"] = [short.get(d, d) for d in shown["design"]]
    shown["positive"] = [f"{a:.0f} / {b:.0f}" for a, b in zip(shown["positive_pass_1"], shown["positive_pass_5"])]
    cols = {"design": "design", "condition": "condition", "cp_pass_1": "pass 1", "cp_pass_5": "pass 5",
            "positive": "> 0 (1 / 5)", "cap_cp": "cap", "default_pass_1": "default, pass 1",
            "default_pass_5": "default, pass 5"}
    frame = strings(shown[list(cols)], {})
    return styled(frame, group="design", wrap_group=True, headers=cols,
                  caption="Beside Table 7 of Picture the Epsilon: medians (nats) and certificates above 0 at passes "
                          "1 and 5 with the paper's split Clopper–Pearson bound (100 test rows; chapter 4: 10–15), "
                          "and the default certificate's medians on the same tests")


def control_view(control: pd.DataFrame):
    """:func:`~.certify.same_person_control`'s summary as the page shows it."""
    shown = _labelled(control)
    shown["paper"] = [f"{p:.0f} / {m:.2f}" for p, m in zip(control["positive_cp"], control["max_cp"])]
    cols = {"design": "design", "condition": "condition", "pass": "pass", "positive": "> 0", "above_1": "> 1",
            "median_bound": "median", "max_bound": "largest", "paper": "paper's bound: > 0 / largest"}
    frame = strings(shown[list(cols)], {c: _COUNT for c in ("pass", "positive", "above_1")})
    return styled(frame, group="design", wrap_group=True, headers=cols,
                  caption=f"Same-person control: two halves of one identity's photographs certified apart (of "
                          f"{int(control['pairs'].max())} identities; nats; cap {control['cap'].max():.3f}, at least "
                          f"{int(control['n_test'].min())} test rows per half)")


def worst_view(worst: pd.DataFrame):
    """The worst-pair bounds per design, condition and pass."""
    shown = _labelled(worst)
    wide = shown.pivot_table(index=["design", "condition"], columns="pass", values="worst_bound", sort=False)
    pairs = shown[shown["pass"] == max(PASSES)].set_index(["design", "condition"])["worst_pair"]
    wide.columns = [f"pass {k}" for k in wide.columns]
    wide = wide.reset_index()
    wide[f"pair at pass {max(PASSES)}"] = [pairs.get((d, c), "") for d, c in zip(wide["design"], wide["condition"])]
    return styled(strings(wide), group="design", wrap_group=True,
                  caption="Worst-pair certificate: 95% lower bound on the largest pairwise epsilon (nats)")


def planner_view(planner: pd.DataFrame):
    """:func:`~.tables.planner_table` as the page shows it."""
    frame = planner.copy()
    frame["family"] = [f"{f} ({n:.0f})" for f, n in zip(frame["family"], frame["certificates"])]
    frame["bound"] = [b.split(" (")[0] for b in frame["bound"]]
    frame = frame.drop(columns=["certificates"] + [c for c in frame.columns if c == "n_for_0.5"])
    headers = {"family": "family (certificates)", "bound": "bound", "level": "level of each",
               "cap_100": "cap, 100 rows", "cap_control": "cap, 50 rows", "cap_photographs": "cap, 12 rows"}
    formats = {"level": "{:.2g}"}
    for col in frame.columns:
        if col.startswith("n_for_"):
            headers[col] = f"rows for {col[6:]}"
            formats[col] = _COUNT
    return styled(strings(frame, formats), group="family", headers=headers, wrap_group=True,
                  caption="What a reserved test can certify with zero test errors, and the test rows per side "
                          "each epsilon needs (delta = 1e-5)")


def timings_view(corpus: Any):
    """:func:`~.tables.build_timings` as the page shows it: images per CPU second of each step."""
    t = build_timings(corpus)
    t = t[t["images"] > 0]
    frame = strings(t[["stage", "step", "images", "images_per_cpu_second", "stage_wall_seconds"]],
                    {"images": "{:,.0f}", "images_per_cpu_second": "{:,.1f}", "stage_wall_seconds": "{:,.0f}"})
    run = corpus.manifest["run"]
    return styled(frame, group="stage", headers={"images_per_cpu_second": "images per CPU second",
                                                 "stage_wall_seconds": "stage wall time (s)"},
                  caption=f"How the {DESIGN_LABEL.get(corpus.design, corpus.design)} corpus was built "
                          f"({run['wall_seconds'] / 60:.0f} minutes on {run['n_jobs']} worker processes)")


# -------------------------------------------------------------------------------------------------
# numbers and words


def _range(values) -> str:
    v = np.asarray(list(values), dtype=float)
    lo, hi = np.nanmin(v), np.nanmax(v)
    return f"{lo:.2f}" if np.isclose(lo, hi, atol=5e-3) else f"{lo:.2f}–{hi:.2f}"


def chapter_numbers(design: pd.DataFrame, summary: pd.DataFrame, worst: pd.DataFrame) -> dict[str, Any]:
    """The numbers the chapter's prose cites, by name (glued into the page with the prefix ``ch5_``).

    Parameters
    ----------
    design : pandas.DataFrame
        :func:`~.tables.design_summary`.
    summary : pandas.DataFrame
        :func:`~.certify.summary_table` of the resampled designs.
    worst : pandas.DataFrame
        :func:`~.certify.certify_passes`' worst-pair frame.
    """
    out: dict[str, Any] = {}
    out["n_test"] = int(summary["n_test"].min())
    out["family"] = int(summary.groupby(["design", "encoder", "variant"])["certificates"].sum().max())
    out["control_family"] = int(design.groupby(["design", "encoder", "variant"])["control_pairs"].sum().max())
    out["level"] = levels.certificate_level(out["family"])
    out["cap"] = float(summary["cap"].max())
    out["cap_cp"] = float(summary["cap_cp"].max())
    out["control_cap"] = float(design["control_cap"].max())
    out["bound_name"] = levels.BOUND_LABEL.get(levels.DEFAULT_BOUND, levels.DEFAULT_BOUND)
    for d, g in design.groupby("design", sort=False):
        for k, gk in g.groupby("pass"):
            out[f"{d}_{k}_median"] = _range(gk["median_bound"])
            out[f"{d}_{k}_ctl_pos"] = _range(gk["control_positive"]).replace(".00", "")
            out[f"{d}_{k}_ctl_max"] = float(gk["control_max"].max())
            out[f"{d}_{k}_positive"] = _range(gk["positive"]).replace(".00", "")
        out[f"{d}_pairs"] = int(g["control_pairs"].max())
    out["worst_max"] = float(worst["worst_bound"].max())
    out["worst_min"] = float(worst["worst_bound"].min())
    k = int(worst["worst_k"].max())
    worst_cap = levels.cap(out["n_test"], out["n_test"], k)
    out["worst_phrase"] = (f"every one is {out['worst_max']:.2f}, the cap of a family of {k} at {out['n_test']} test "
                           "rows: one of the ten pairs is separated without a test error in every condition, so more "
                           "test draws would certify more" if np.isclose(out["worst_min"], worst_cap, atol=1e-9)
                           and np.isclose(out["worst_max"], worst_cap, atol=1e-9) else
                           f"between {out['worst_min']:.2f} and {out['worst_max']:.2f} here")
    return out


def conclusions(design: pd.DataFrame) -> dict[str, str]:
    """Per design, what its certificates let a reader conclude (Markdown, glued as ``ch5_conclude_<design>``)."""
    out = {}
    for d, g in design.groupby("design", sort=False):
        swaps = g[g["pass"] > 0]
        identity = swaps[swaps["reading"] == "identity"]
        label = {"pool": "pool design's", "disjoint": "disjoint design's"}.get(d, DESIGN_LABEL.get(d, d))
        if d == "pool":
            head = ("**Photograph pool.** A test draw usually starts from a photograph the classifier met in "
                    "development, so a certificate bounds how well the swapped *photograph pools* of two people "
                    "can be told apart. ")
        else:
            head = ("**Disjoint photographs.** Every test draw starts from a photograph no development draw used, "
                    "so a certificate is evidence about photographs the classifier never saw: what a recipient "
                    "can learn about the *person* from a fresh photograph's swap, for this swapper, donor pool "
                    "and encoder. ")
        pos0 = int(g.loc[g["pass"] == 0, "control_positive"].max())
        head += (f"Its same-person control is positive for up to {pos0} of {int(g['control_pairs'].max())} identities "
                 f"at pass 0 (largest {g.loc[g['pass'] == 0, 'control_max'].max():.2f}); ")
        if len(identity) == len(swaps):
            head += (f"after the swap it is at or near 0 in every condition (largest {swaps['control_max'].max():.2f}), "
                     f"so the {label} certificates ({_range(identity['median_bound'])} median) count as evidence "
                     "about identity.")
        elif len(identity):
            where = ", ".join(f"{condition_label(r['encoder'], r['variant'])} at pass {int(r['pass'])}"
                              for r in identity.to_dict(orient="records"))
            rest = swaps[swaps["reading"] != "identity"]
            head += (f"after the swap it is at or near 0 only for {where}, where the {label} certificates "
                     f"({_range(identity['median_bound'])} median) count as evidence about identity; elsewhere it "
                     f"stays positive (up to {int(rest['control_positive'].max())} of "
                     f"{int(g['control_pairs'].max())} identities, largest {rest['control_max'].max():.2f}).")
        else:
            head += (f"after the swap it stays positive everywhere (largest "
                     f"{swaps['control_max'].max():.2f}), so none of the {label} certificates is clean evidence "
                     "about identity on its own.")
        out[f"conclude_{d}"] = head
    return out


def verdict(design: pd.DataFrame, numbers: Mapping[str, Any]) -> str:
    """The chapter's closing paragraph (Markdown), worded from the certificates and the controls.

    A certificate counts as evidence about identity where its control is at or near 0
    (:func:`~.tables.design_summary`'s ``reading``).
    """
    swaps = design[design["pass"] > 0]
    clean = swaps[swaps["reading"] == "identity"]
    text = ("Each certificate is a 95% lower bound (for its family) on the epsilon between two people's swapped "
            "images, for this swapper, donor pool and encoder; whether it is about *identity* is what the control "
            "says. ")
    if len(clean):
        above = clean[clean["median_bound"] > 1]
        at_cap = int(np.isclose(clean["median_bound"], clean["cap"], atol=1e-9).sum())
        text += (f"Where the control is at or near 0 ({len(clean)} of {len(swaps)} swapped conditions across both "
                 f"designs), the certificates are evidence about identity: their medians are "
                 f"{_range(clean['median_bound'])}, {at_cap} of them at the cap of {clean['cap'].max():.2f} "
                 "(no test error: more test draws could certify more). ")
        if len(above):
            text += (f"In {len(above)} of them the median certificate exceeds 1, so a claim that the classical "
                     "swapper protects identities at ε ≤ 1 (δ = 10⁻⁵) is refuted for those encoders, variants and "
                     "passes. ")
    else:
        text += "No swapped condition has a control at or near 0, so no certificate here is clean evidence about identity. "
    mixed = swaps[swaps["reading"] != "identity"]
    if len(mixed):
        text += (f"Where the control stays positive ({len(mixed)} condition{'s' if len(mixed) > 1 else ''}, largest "
                 f"{mixed['control_max'].max():.2f}), part of the certificate is recognition of photographs, and the "
                 "number should not be read as an identity-level epsilon. ")
    text += ("A certificate is a lower bound: where it is small, this test could not show more, which is not "
             "evidence of privacy.")
    return text


def figure_data(per_pair: pd.DataFrame, control_pairs: pd.DataFrame) -> pd.DataFrame:
    """The bounds the chapter's figure draws: ``condition``, ``design``, ``kind`` (``certificate`` or
    ``control``), ``pass``, ``pair``, ``bound``, ``cap``."""
    frames = []
    for kind, frame in (("certificate", per_pair), ("control", control_pairs)):
        f = frame[frame["not_computed"].isna()]
        frames.append(pd.DataFrame({"condition": [condition_label(e, v) for e, v in zip(f["encoder"], f["variant"])],
                                    "design": [DESIGN_LABEL.get(d, d) for d in f["design"]], "kind": kind,
                                    "pass": f["pass"].to_numpy(), "pair": f["identity_a"] + " / " + f["identity_b"],
                                    "bound": f["bound"].to_numpy(), "cap": f["cap"].to_numpy()}))
    return pd.concat(frames, ignore_index=True)


def paper_medians() -> dict[int, float]:
    """Table 7's median certificate per pass (*Picture the Epsilon*), at the passes this chapter stores."""
    paper = PAPER_TABLE_7["median_lb"]
    return {k: float(paper[k]) for k in PASSES if k in paper.index}


def exercise_numbers(corpora: Mapping[str, Any], numbers: Mapping[str, Any]) -> dict[str, Any]:
    """The numbers of the chapter's exercises' solutions (glued into the page).

    Returns
    -------
    dict
        ``ex_<design>_shared`` and ``ex_<design>_test`` (test draws starting from a development
        photograph, and test draws, at pass 0), ``ex_n_for_paper_median`` and ``ex_n_for_one`` (test
        rows per side to certify 2.29 and 1.0 in this chapter's family, default bound).
    """
    out: dict[str, Any] = {}
    for design, corpus in corpora.items():
        out[f"ex_{design}_shared"], out[f"ex_{design}_test"] = shared_photographs(corpus)
    family = numbers["family"]
    out["ex_n_for_paper_median"] = levels.required_rows(2.29, family)
    out["ex_n_for_one"] = levels.required_rows(1.0, family)
    return out
