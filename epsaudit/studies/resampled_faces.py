"""Chapter 5, certificates on resampled swaps: what the chapter's notebook imports.

On the LFW photographs themselves a reserved-test certificate is held down by sample size: an
identity has 20-30 photographs, so its test half has 10-15 rows and no certificate can exceed a
small cap whatever the swapper does (chapter 4). The swapper is a randomised mechanism, though:
``M_k(A)`` = encode(pass ``k`` of a swap chain from a photograph drawn uniformly from A's
photographs, with a fresh donor per pass). The resampled corpus (:mod:`epsaudit.resampled`, built
by ``make resampled``) holds 100 development and 100 test *independent draws* of ``M_0``, ``M_1``
and ``M_5`` per identity, so the reserved test (*Picture the Epsilon*, Section IV-C) runs at the
paper's test size (100 rows per side) on real faces.

The chapter's experiment, per encoder, swap variant and pass:

1. all pairs of the corpus's identities are ranked by development-only out-of-fold AUC
   (:func:`epsaudit.audits.select_pairs`);
2. the top ``pairs`` (50) are certified on the untouched test draws, every bound of the encoder and
   variant (``pairs`` x the passes) in one Bonferroni family, as in Table 7 of *Picture the
   Epsilon* (:func:`certify_passes`);
3. the top ``worst_k`` of the same ranking give a 95% lower bound on the mechanism's worst-case
   pairwise epsilon (:func:`epsaudit.audits.certify_top_pairs`);

and, for comparison, the same certificates on the photograph design of chapter 4, where each
identity's cascade chains are split in halves (:func:`capped_design`), and the sample-size
planner's answers for the three designs (:func:`planner_table`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..audits import certify_top_pairs, ranked_pairs, reserved_test_pairs, select_pairs
from ..bounds import bonferroni_alpha, certifiable_cap, required_test_size
from ..corpora import load_corpora
from ..pairs import identity_pairs
from ..progress import progress_bar
from ..resampled import load_resampled
from ..splits import split_identities
from ..validation import unit_rows
from . import choose_profile as _choose_profile
from .cascade.display import strings, styled
from .cascade.scores import pass_groups
from .cascade.tables import CASCADE_TABLE_7, CASCADE_TABLE_7_CAP, ENCODER_LABEL

__all__ = ["CHAPTER", "PASSES", "PROFILES", "PAPER_TABLE_7", "choose_profile", "load_chapter_corpus", "pass_data",
           "certify_condition", "certify_passes", "capped_design", "planner_table", "summary_table",
           "paper_comparison", "corpus_table", "build_timings", "summary_view", "comparison_view",
           "worst_view", "planner_view", "chapter_numbers", "figure_data", "paper_medians", "verdict", "styled", "exercise_numbers", "ChapterResults", "run_chapter", "timings_view", "same_person_control", "control_view",
           "control_numbers", "ENCODER_LABEL", "CASCADE_TABLE_7_CAP"]

CHAPTER = "chapter 5 (certificates on resampled swaps)"
#: Passes of the corpus: 0 = the photographs, 1 and 5 swaps.
PASSES = (0, 1, 5)

_FULL = dict(identities=None, pairs=50, worst_k=10, encoders=("dlib", "sface"), variants=("hull",),
             capped=True, confidence=0.95, delta=1e-5, seed=0)
PROFILES = {
    # CI: one encoder and variant, 8 identities (28 pairs), few certificates (~1 min)
    "smoke": dict(_FULL, identities=8, pairs=6, worst_k=3, encoders=("dlib",), variants=("hull",), capped=False),
    # the book: every identity, 50 certificates per pass as in Table 7, both encoders and variants
    "full": _FULL,
    # the papers' sizes are the full profile's here
    "paper": _FULL,
}

#: Table 7 of *Picture the Epsilon* (the cascade's certificates: passes 1-5, 50 pairs per pass,
#: 100 test rows per side, one family of 250 bounds at 95%), the rows of passes 1 and 5.
PAPER_TABLE_7 = CASCADE_TABLE_7


def choose_profile(name: str) -> dict[str, Any]:
    """The chapter's settings for profile ``name`` (``smoke``, ``full`` or ``paper``).

    Raises
    ------
    ValueError
        An unknown profile name.
    """
    return _choose_profile(PROFILES, name, CHAPTER)


def load_chapter_corpus(directory: str | Path, encoders: Sequence[str], variants: Sequence[str]
                        ) -> dict[tuple[str, str], Any]:
    """Read the resampled corpus once per encoder and swap variant, checked against its manifest.

    Returns
    -------
    dict (encoder, variant) -> epsaudit.resampled.Resampled

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`epsaudit.resampled.load_resampled` (a missing file, a hash mismatch, ...).
    """
    return {(e, v): load_resampled(e, directory, variant=v) for e in encoders for v in variants}


def pass_data(corpus: Any, k: int, identities: int | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Development and test rows (unit-normalised) of pass ``k`` with their draw ids.

    Parameters
    ----------
    corpus : epsaudit.resampled.Resampled
    k : int
        A pass of the corpus.
    identities : int, optional
        Keep the first ``identities`` identities in sorted order (smoke runs).

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


def _pair_rows(certs: Sequence[Any], ranking: pd.DataFrame | None = None) -> pd.DataFrame:
    auc = {} if ranking is None else {(r.identity_a, r.identity_b): r.dev_auc for r in ranking.itertuples()}
    rows = []
    for rank, c in enumerate(certs, start=1):
        a, b = c.pair
        rows.append({"rank": rank, "identity_a": a, "identity_b": b, "dev_auc": auc.get((a, b), np.nan),
                     "bound": c.value, "n_test_a": c.n[0], "n_test_b": c.n[1],
                     "cap": certifiable_cap(c.n[0], c.n[1], c.alpha_per_bound, c.delta),
                     "alpha_per_bound": c.alpha_per_bound, "not_computed": c.not_computed})
    return pd.DataFrame(rows)


def certify_condition(dev: Mapping, test: Mapping, dev_ids: Mapping | None = None, test_ids: Mapping | None = None, *,
                      pairs: int = 50, worst_k: int = 10, family: int | None = None, confidence: float = 0.95,
                      delta: float = 1e-5, seed: int = 0, n_jobs: int | None = None, progress: bool = False
                      ) -> tuple[pd.DataFrame, Any]:
    """Certify one condition: ``pairs`` certificates and the worst-pair bound, both from one development ranking.

    Parameters
    ----------
    dev, test : mapping identity -> ndarray (n_i, d)
        Development rows (ranking, classifiers, thresholds) and untouched test rows.
    dev_ids, test_ids : mapping identity -> array_like, optional
        Draw ids of the rows (the freshness check then compares draws).
    pairs : int
        Certificates, the top of the ranking (*Picture the Epsilon*, Table 7: 50).
    worst_k : int
        Pairs certified for the worst-pair bound (its own family of ``worst_k``, at ``confidence``).
    family : int, optional
        Bonferroni family of the ``pairs`` certificates (default ``pairs``): every bound is at
        ``(1 - confidence) / (2 family)``.
    confidence, delta, seed, n_jobs, progress
        As in :func:`epsaudit.audits.reserved_test_pairs`.

    Returns
    -------
    per_pair : pandas.DataFrame
        One row per certificate: ``rank``, ``identity_a``, ``identity_b``, ``dev_auc``, ``bound``,
        ``n_test_a``, ``n_test_b``, ``cap`` (the largest bound the test sizes allow),
        ``alpha_per_bound``, ``not_computed``.
    worst : epsaudit.audits.WorstPairCertificate

    Raises
    ------
    ValueError
        As :func:`epsaudit.audits.select_pairs` and :func:`epsaudit.audits.reserved_test_pairs`.

    References
    ----------
    *Picture the Epsilon*, Section IV-C (the reserved test) and Table 7.
    """
    candidates = identity_pairs(sorted(dev), seed=seed)
    _, ranking = select_pairs(dev, candidates, max(pairs, worst_k), seed=seed, n_jobs=n_jobs, progress=progress)
    ranked = ranked_pairs(ranking)
    certs = reserved_test_pairs(dev, ranked[:pairs], test_groups=test, n_certificates=family or pairs,
                                confidence=confidence, delta=delta, seed=seed, dev_ids=dev_ids, test_ids=test_ids,
                                n_jobs=n_jobs, progress=progress)
    worst = certify_top_pairs(dev, test, ranked, worst_k, confidence=confidence, delta=delta, seed=seed,
                              dev_ids=dev_ids, test_ids=test_ids, n_jobs=n_jobs, progress=progress)
    return _pair_rows(certs, ranking), worst


def _worst_row(worst: Any) -> dict[str, Any]:
    r = worst.result
    return {"worst_bound": r.value, "worst_pair": " / ".join(map(str, r.pair)) if r.pair else "",
            "worst_rank": r.statistics.rank, "worst_k": r.statistics.k,
            "worst_alpha_per_bound": r.alpha_per_bound}


def certify_passes(corpora: Mapping[tuple[str, str], Any], settings: Mapping[str, Any], *, passes: Sequence[int] = PASSES,
                   n_jobs: int | None = None, progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The chapter's certificates on the resampled corpus, per encoder, variant and pass.

    Each (encoder, variant) is one family of ``settings["pairs"] * len(passes)`` bounds at
    ``settings["confidence"]``; the worst-pair bound of each (encoder, variant, pass) holds at
    ``settings["confidence"]`` on its own.

    Returns
    -------
    per_pair : pandas.DataFrame
        :func:`certify_condition`'s rows with ``encoder``, ``variant``, ``pass``.
    worst : pandas.DataFrame
        One row per (encoder, variant, pass): ``worst_bound``, ``worst_pair``, ``worst_rank``,
        ``worst_k``, ``worst_alpha_per_bound``.
    """
    def parts(encoder: str, variant: str, k: int) -> tuple:
        return pass_data(corpora[(encoder, variant)], k, settings["identities"])

    jobs = [(e, v, k) for e, v in corpora for k in passes]
    return _certify_jobs(jobs, parts, settings, len(passes), "resampled certificates", n_jobs, progress)


def capped_design(directory: str | Path, settings: Mapping[str, Any], *, passes: Sequence[int] = PASSES,
                  n_jobs: int | None = None, progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The same certificates on the photograph design: each identity's cascade chains split in halves.

    The cascade corpora (:mod:`epsaudit.corpora`, chapter 4) hold one chain per photograph, so an
    identity's pass-``k`` rows are its ~25 photographs swapped; half of them (seeded split,
    :func:`epsaudit.splits.split_identities` with ``test_size=0.5``) are the test rows.

    Returns
    -------
    per_pair, worst : pandas.DataFrame
        As :func:`certify_passes`.
    """
    corpora = {e: load_corpora(e, directory) for e in settings["encoders"]}

    def parts(encoder: str, variant: str, k: int) -> tuple:
        groups = pass_groups(corpora[encoder], variant, k)
        if settings["identities"]:
            groups = {a: groups[a] for a in sorted(groups)[: settings["identities"]]}
        dev, test, _ = split_identities(groups, test_size=0.5, seed=settings["seed"])
        return dev, test, None, None

    jobs = [(e, v, k) for e in settings["encoders"] for v in settings["variants"] for k in passes]
    return _certify_jobs(jobs, parts, settings, len(passes), "photograph design", n_jobs, progress)


def _certify_jobs(jobs: Sequence[tuple[str, str, int]], parts: Any, settings: Mapping[str, Any], passes: int,
                  desc: str, n_jobs: int | None, progress: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`certify_condition` of every (encoder, variant, pass) job, whose rows ``parts(encoder,
    variant, pass)`` gives as ``(dev, test, dev_ids, test_ids)``; one family of ``pairs x passes``
    certificates per encoder and variant. Returns the per-pair and the worst-pair frames."""
    frames, worst_rows = [], []
    for encoder, variant, k in progress_bar(jobs, progress, desc):
        dev, test, dev_ids, test_ids = parts(encoder, variant, k)
        per_pair, worst = certify_condition(dev, test, dev_ids, test_ids, pairs=settings["pairs"],
                                            worst_k=settings["worst_k"], family=settings["pairs"] * passes,
                                            confidence=settings["confidence"], delta=settings["delta"],
                                            seed=settings["seed"], n_jobs=n_jobs)
        key = {"encoder": encoder, "variant": variant, "pass": k}
        frames.append(per_pair.assign(**key))
        worst_rows.append({**key, **_worst_row(worst)})
    return pd.concat(frames, ignore_index=True), pd.DataFrame(worst_rows)


def summary_table(per_pair: pd.DataFrame) -> pd.DataFrame:
    """Table 7's columns per (encoder, variant, pass): counts, median/min/max bound and the cap.

    Returns
    -------
    pandas.DataFrame
        ``encoder``, ``variant``, ``pass``, ``certificates``, ``positive`` (> 0), ``above_1``,
        ``at_cap`` (bound equal to its cap: zero test errors), ``median_bound``, ``min_bound``,
        ``max_bound``, ``cap`` (the largest cap of the family), ``n_test`` and ``n_test_max`` (the
        smallest and the largest test size per side of a pair), ``not_computed``.
    """
    def row(g: pd.DataFrame) -> pd.Series:
        ok = g[g["not_computed"].isna()]
        b = ok["bound"].to_numpy(float)
        return pd.Series({"certificates": len(g), "positive": int((b > 0).sum()), "above_1": int((b > 1).sum()),
                          "at_cap": int(np.isclose(b, ok["cap"].to_numpy(float), rtol=0, atol=1e-12).sum()),
                          "median_bound": float(np.median(b)) if len(b) else np.nan,
                          "min_bound": float(b.min()) if len(b) else np.nan,
                          "max_bound": float(b.max()) if len(b) else np.nan,
                          "cap": float(g["cap"].max()),
                          "n_test": int(min(g["n_test_a"].min(), g["n_test_b"].min())),
                          "n_test_max": int(np.minimum(g["n_test_a"], g["n_test_b"]).max()),
                          "not_computed": int(g["not_computed"].notna().sum())})
    keys = ["encoder", "variant", "pass"]
    out = per_pair.groupby(keys, sort=False).apply(row, include_groups=False).reset_index()
    counts = ["certificates", "positive", "above_1", "at_cap", "n_test", "n_test_max", "not_computed"]
    return out.astype({c: int for c in counts})


def paper_comparison(resampled: pd.DataFrame, photographs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Median certificate and positive count per pass: Table 7 of *Picture the Epsilon* beside ours.

    Parameters
    ----------
    resampled, photographs : pandas.DataFrame
        :func:`summary_table` of the resampled corpus and (optional) of the photograph design.

    Returns
    -------
    pandas.DataFrame
        One row per design and condition at passes 1 and 5: ``design``, ``condition``,
        ``median_pass_1``, ``median_pass_5``, ``positive_pass_1``, ``positive_pass_5``, ``cap``,
        ``n_test`` (test rows per side: a number, or a range such as ``"10-15"``).
    """
    paper = PAPER_TABLE_7
    rows = [{"design": "Picture the Epsilon, Table 7", "condition": "FaceFusion cascade, 50 pairs",
             "median_pass_1": paper.loc[1, "median_lb"], "median_pass_5": paper.loc[5, "median_lb"],
             "positive_pass_1": paper.loc[1, "positive"], "positive_pass_5": paper.loc[5, "positive"],
             "cap": CASCADE_TABLE_7_CAP, "n_test": 100}]
    for design, table in (("resampled draws", resampled), ("photographs (chapter 4)", photographs)):
        if table is None:
            continue
        for (e, v), g in table.groupby(["encoder", "variant"], sort=False):
            by = g.set_index("pass")
            rows.append({"design": design, "condition": f"{ENCODER_LABEL.get(e, e)}, {v}",
                         "median_pass_1": by.loc[1, "median_bound"], "median_pass_5": by.loc[5, "median_bound"],
                         "positive_pass_1": by.loc[1, "positive"], "positive_pass_5": by.loc[5, "positive"],
                         "cap": by["cap"].max(), "n_test": _rows(by["n_test"].min(), by["n_test_max"].max())})
    return pd.DataFrame(rows)


def _rows(low: int, high: int) -> int | str:
    """A test size, or the range of test sizes per side (``"10-15"``)."""
    return int(low) if int(low) == int(high) else f"{int(low)}-{int(high)}"


def planner_table(*, confidence: float = 0.95, delta: float = 1e-5, pairs: int = 50, passes: int = len(PASSES),
                  photograph_test_rows: int = 12, targets: Sequence[float] = (0.5, 1.0, 2.0, 2.29)
                  ) -> pd.DataFrame:
    """What each design can certify, and the test size per side each target epsilon needs (perfect separation).

    Rows: the paper's cascade family (50 pairs x 5 passes = 250 certificates), this chapter's
    family (``pairs`` x ``passes``); columns: the per-bound level, the cap at 100 test rows and at
    ``photograph_test_rows`` (an LFW identity's test half), and the smallest test size per side
    that can certify each target (:func:`epsaudit.bounds.required_test_size`).

    Returns
    -------
    pandas.DataFrame
    """
    rows = []
    for label, family in (("Picture the Epsilon, Table 7 (250 bounds)", 250),
                          (f"this chapter ({pairs * passes} bounds)", pairs * passes)):
        alpha = bonferroni_alpha(family, confidence)
        row = {"family": label, "alpha_per_bound": alpha, "cap_100": certifiable_cap(100, 100, alpha, delta),
               f"cap_{photograph_test_rows}": certifiable_cap(photograph_test_rows, photograph_test_rows, alpha, delta)}
        row.update({f"n_for_{t:g}": required_test_size(t, alpha, delta) for t in targets})
        rows.append(row)
    return pd.DataFrame(rows)


def corpus_table(corpus: Any) -> pd.DataFrame:
    """The corpus at a glance, from its manifest: identities, photographs, donor pool, draws, losses.

    Returns
    -------
    pandas.DataFrame
        Two columns, ``quantity`` and ``value`` (text).
    """
    d = corpus.manifest["design"]
    usable = d["identities"]["usable_photographs"]
    per = d["draws_per_split"]
    lost = d["lost_draws"].get(corpus.variant, 0)
    rows = [("identities (>= 20 photographs)", f"{len(d['identities']['chosen'])}"),
            ("usable photographs per identity", f"{min(usable.values())}-{max(usable.values())}"),
            ("donor pool", (f"{d['donor_pool']['photographs']:,} photographs of {d['donor_pool']['identities']:,} "
                            "identities with <= 9 photographs")),
            ("draws per identity", f"{per['dev']} development + {per['test']} test"),
            ("passes stored", ", ".join(str(k) for k in d["passes"]) + f" (of a chain of {d['chain_length']})"),
            ("swap variants", ", ".join(d["variants"])),
            ("chains rendered", f"{d['draws_rendered']:,} ({d['rounds']} round(s))"),
            (f"chains lost ({corpus.variant}: no face at a later pass)", f"{lost:,}"),
            ("distinct photographs at pass 0", f"{d['pass0_photographs']:,}")]
    return pd.DataFrame(rows, columns=["quantity", "value"])


def build_timings(corpus: Any) -> pd.DataFrame:
    """Images per second of each stage of the corpus's build (its manifest's ``run``).

    Returns
    -------
    pandas.DataFrame
        One row per stage and step: ``stage``, ``step``, ``images``, ``cpu_seconds``,
        ``images_per_cpu_second``, and per stage ``wall_seconds``.
    """
    rows = []
    for stage, s in corpus.manifest["run"]["stages"].items():
        for step, v in s.get("steps", {}).items():
            rows.append({"stage": stage, "step": step, "images": v["count"], "cpu_seconds": v["cpu_seconds"],
                         "images_per_cpu_second": v["per_cpu_second"], "stage_wall_seconds": s["wall_seconds"]})
    return pd.DataFrame(rows)


# -------------------------------------------------------------------------------------------------
# the page: tables with readable labels, and the numbers the prose cites


def _condition(e: str, v: str) -> str:
    return f"{ENCODER_LABEL.get(e, e)}, {v}"


def summary_view(summary: pd.DataFrame, caption: str):
    """:func:`summary_table` as the page shows it (one row per condition and pass)."""
    shown = summary.assign(condition=[_condition(e, v) for e, v in zip(summary["encoder"], summary["variant"])])
    cols = {"condition": "condition", "pass": "pass", "certificates": "certificates", "positive": "> 0",
            "above_1": "> 1", "at_cap": "at cap", "median_bound": "median", "min_bound": "min", "max_bound": "max",
            "cap": "cap", "n_test": "test rows"}
    frame = strings(shown[list(cols)], {"pass": "{:.0f}", "certificates": "{:.0f}", "positive": "{:.0f}",
                                       "above_1": "{:.0f}", "at_cap": "{:.0f}", "n_test": "{:.0f}"})
    return styled(frame, group="condition", caption=caption, headers=cols)


def comparison_view(comparison: pd.DataFrame):
    """:func:`paper_comparison` as the page shows it."""
    cols = {"design": "design", "condition": "condition", "median_pass_1": "median, pass 1",
            "median_pass_5": "median, pass 5", "positive_pass_1": "> 0, pass 1", "positive_pass_5": "> 0, pass 5",
            "cap": "cap", "n_test": "test rows"}
    frame = strings(comparison[list(cols)], {"positive_pass_1": "{:.0f}", "positive_pass_5": "{:.0f}",
                                             "n_test": "{:.0f}"})
    return styled(frame, group="design", wrap_group=True, headers=cols,
                  caption="Median certified epsilon (nats) and positive certificates of 50, passes 1 and 5")


def worst_view(worst: pd.DataFrame, photographs: pd.DataFrame | None = None):
    """The worst-pair bounds per condition and pass, for each design."""
    frames = [worst.assign(design="resampled draws")]
    if photographs is not None:
        frames.append(photographs.assign(design="photographs (chapter 4)"))
    both = pd.concat(frames, ignore_index=True)
    both["condition"] = [_condition(e, v) for e, v in zip(both["encoder"], both["variant"])]
    wide = both.pivot_table(index=["design", "condition"], columns="pass", values="worst_bound", sort=False)
    pairs = both[both["pass"] == max(PASSES)].set_index(["design", "condition"])["worst_pair"]
    wide.columns = [f"pass {k}" for k in wide.columns]
    wide = wide.reset_index()
    wide[f"pair at pass {max(PASSES)}"] = [pairs.get((d, c), "") for d, c in zip(wide["design"], wide["condition"])]
    return styled(strings(wide), group="design", wrap_group=True,
                  caption="Worst-pair certificate: 95% lower bound on the largest pairwise epsilon (nats)")


def planner_view(planner: pd.DataFrame):
    """:func:`planner_table` as the page shows it."""
    frame = planner.copy()
    headers = {"family": "family", "alpha_per_bound": "level per bound"}
    formats = {"alpha_per_bound": "{:.2g}"}
    for col in frame.columns:
        if col.startswith("cap_"):
            headers[col] = f"cap at {col[4:]} rows"
        elif col.startswith("n_for_"):
            headers[col] = f"rows for {col[6:]}"
            formats[col] = "{:.0f}"
    return styled(strings(frame, formats), headers=headers, wrap_group=True,
                  caption="What a reserved test can certify with zero test errors, and the test rows per side "
                          "each epsilon needs (delta = 1e-5)")


def chapter_numbers(summary: pd.DataFrame, worst: pd.DataFrame, photo_summary: pd.DataFrame | None,
                    photo_worst: pd.DataFrame | None) -> dict[str, Any]:
    """The numbers and phrases the chapter's prose cites, by name (glued into the page).

    Returns
    -------
    dict
        Numbers (float/int) and phrases (str, Markdown).
    """
    out: dict[str, Any] = {}
    s = summary.set_index(["encoder", "variant", "pass"])
    first = summary[["encoder", "variant"]].drop_duplicates().iloc[0]
    e, v = first["encoder"], first["variant"]
    out["cap"] = float(summary["cap"].max())
    out["n_test"] = int(summary["n_test"].min())
    out["family"] = int(summary.groupby(["encoder", "variant"])["certificates"].sum().max())
    out["alpha_per_bound"] = 0.05 / (2 * out["family"])
    lines = []
    for (enc, var), g in summary.groupby(["encoder", "variant"], sort=False):
        by = g.set_index("pass")
        m1, m5 = by.loc[1, "median_bound"], by.loc[5, "median_bound"]
        gap = by.loc[1, "cap"] - m1
        where = "within 0.1 of" if gap <= 0.1 else f"{gap:.2f} below"
        lines.append(f"{_condition(enc, var)}: median {m1:.2f} at pass 1 ({where} the cap), "
                     f"{m5:.2f} at pass 5 and {by.loc[0, 'median_bound']:.2f} at pass 0 (the photographs alone)")
    out["median_lines"] = "; ".join(lines)
    out["m1_first"] = float(s.loc[(e, v, 1), "median_bound"])
    out["m5_first"] = float(s.loc[(e, v, 5), "median_bound"])
    out["pos1_first"] = int(s.loc[(e, v, 1), "positive"])
    out["pos5_first"] = int(s.loc[(e, v, 5), "positive"])
    out["first_condition"] = _condition(e, v)
    drops = [(g.set_index("pass").loc[1, "median_bound"] - g.set_index("pass").loc[5, "median_bound"])
             for _, g in summary.groupby(["encoder", "variant"], sort=False)]
    out["largest_drop"] = float(max(drops))
    out["smallest_drop"] = float(min(drops))
    out["worst_max"] = float(worst["worst_bound"].max())
    out["worst_min"] = float(worst["worst_bound"].min())
    w5 = worst[worst["pass"] == max(PASSES)]
    out["worst5_max"] = float(w5["worst_bound"].max())
    out["worst5_min"] = float(w5["worst_bound"].min())
    out["worst_cap"] = certifiable_cap(out["n_test"], out["n_test"], float(worst["worst_alpha_per_bound"].max()), 1e-5)
    span = (f"{out['worst5_min']:.2f}" if np.isclose(out["worst5_min"], out["worst5_max"])
            else f"{out['worst5_min']:.2f} to {out['worst5_max']:.2f}")
    out["worst_phrase"] = span
    at_cap = np.isclose(worst["worst_bound"], out["worst_cap"], atol=1e-9)
    out["worst_sentence"] = (
        f"Every worst-pair bound on resampled draws is {out['worst_cap']:.2f}, the cap of a family of "
        f"{int(worst['worst_k'].max())} at {out['n_test']} test rows: in every condition one of the ten pairs is "
        "separated without a test error, so the bound says only that the worst-case epsilon exceeds this; more "
        "test draws would certify more." if at_cap.all() else
        f"On resampled draws the worst-pair bound is between {out['worst_min']:.2f} and {out['worst_max']:.2f} "
        f"across conditions and passes ({span} at pass 5; {int(at_cap.sum())} of {len(worst)} at the family's cap "
        f"of {out['worst_cap']:.2f}).")
    if photo_summary is not None:
        out["photo_cap"] = float(photo_summary["cap"].max())
        out["photo_median_max"] = float(photo_summary["median_bound"].max())
        out["photo_n_test"] = int(photo_summary["n_test"].min())
        out["photo_n_test_max"] = int(photo_summary["n_test_max"].max())
        out["photo_positive"] = int(photo_summary["positive"].sum())
        out["photo_certificates"] = int(photo_summary["certificates"].sum())
    if photo_worst is not None:
        out["photo_worst_max"] = float(photo_worst["worst_bound"].max())
    return out


def figure_data(per_pair: pd.DataFrame, photographs: pd.DataFrame | None = None) -> pd.DataFrame:
    """The bounds the chapter's figure draws: ``condition``, ``design``, ``pass``, ``bound``, ``cap``."""
    frames = [per_pair.assign(design="resampled draws")]
    if photographs is not None:
        frames.append(photographs.assign(design="photographs (chapter 4)"))
    both = pd.concat(frames, ignore_index=True)
    both = both[both["not_computed"].isna()]
    both = both.assign(condition=[_condition(e, v) for e, v in zip(both["encoder"], both["variant"])])
    return both[["condition", "design", "pass", "identity_a", "identity_b", "bound", "cap"]].reset_index(drop=True)


def paper_medians() -> dict[int, float]:
    """Table 7's median certificate per pass (*Picture the Epsilon*), at the passes this chapter stores."""
    paper = PAPER_TABLE_7["median_lb"]
    return {k: float(paper[k]) for k in PASSES if k in paper.index}


def verdict(numbers: Mapping[str, Any]) -> str:
    """The chapter's closing paragraphs, worded from :func:`chapter_numbers` and :func:`control_numbers` (Markdown)."""
    n = numbers
    text = (f"With {n['n_test']} independent test draws per identity the certificate is no longer held down by the "
            f"photographs: for {n['first_condition']} the median certified pair is {n['m1_first']:.2f} after one "
            f"swap and {n['m5_first']:.2f} after five, against a cap of {n['cap']:.2f}. Each bound is valid, with "
            "95% confidence for its encoder's family, for the mechanism as defined: this swapper, started from "
            "*this identity's pool of photographs*, with this donor pool, read by this encoder.\n\n")
    encoders = [e for e in ENCODER_LABEL if f"ctl_{e}_0_pos" in n]
    if encoders:
        pairs = n["ctl_pairs"]

        def at(k: int) -> str:
            return " and ".join(f"{n[f'ctl_{e}_{k}_pos']} of {pairs} positive (at most {n[f'ctl_{e}_{k}_max']:.2f}) "
                                f"with {ENCODER_LABEL[e]}" for e in encoders)

        clean = [ENCODER_LABEL[e] for e in encoders if n[f"ctl_{e}_5_max"] <= 0.1]
        mixed = [ENCODER_LABEL[e] for e in encoders if n[f"ctl_{e}_5_max"] > 0.1]
        text += ("The same-person control says how much of that is about the person. At pass 0 two halves of one "
                 f"person's photographs are told apart almost as well as two people ({at(0)}): without a swap the "
                 "test recognises photographs, and pass 0 certifies the pools, not the identities. After one swap "
                 f"the control falls to {at(1)}, and after five to {at(5)}, while the certificates between two "
                 "people stay near the cap. ")
        if clean:
            text += (f"Where the control is near zero at pass 5 ({', '.join(clean)}), a certificate between two people "
                     "is evidence about identity: the swapper is not (ε, 10⁻⁵)-differentially private between "
                     "identities for ε below the certified values there, and a claim of identity protection at "
                     "ε ≤ 1 is refuted for it. ")
        if mixed:
            text += (f"Where it stays positive ({', '.join(mixed)}), part of each certificate may be recognition of the "
                     "start photograph; a design whose development and test draws use disjoint photographs would "
                     "remove it. ")
        text += "\n\n"
    if "photo_median_max" in n:
        text += (f"The same audit on the photographs certifies at most a median of {n['photo_median_max']:.2f} "
                 f"({n['photo_positive']} of {n['photo_certificates']} certificates positive, caps of at most "
                 f"{n['photo_cap']:.2f} with {n['photo_n_test']}-{n['photo_n_test_max']} test rows per identity): "
                 "there, a bound near zero said more about the sample size than about the swapper. ")
    text += ("A certificate is a lower bound: where it is small, it only means this test could not show more.")
    return text


def exercise_numbers(corpus: Any, numbers: Mapping[str, Any]) -> dict[str, Any]:
    """The numbers of the chapter's exercises' solutions (glued into the page).

    Returns
    -------
    dict
        ``ex_shared_photos`` (test draws whose photograph is also drawn in development, over all
        identities), ``ex_test_draws``, ``ex_distinct_photos`` (photographs drawn, median per identity),
        ``ex_n_for_paper_median`` (test rows per side to certify 2.29 at this chapter's level) and
        ``ex_n_for_one`` (to certify 1.0).
    """
    draws = corpus.draws[corpus.draws["used_none"].astype(bool)]
    dev = draws[draws["split"] == "dev"].groupby("identity")["photograph"].apply(set)
    test = draws[draws["split"] == "test"]
    shared = sum(p in dev.get(a, set()) for a, p in zip(test["identity"], test["photograph"]))
    alpha = numbers["alpha_per_bound"]
    return {"ex_shared_photos": int(shared), "ex_test_draws": len(test),
            "ex_distinct_photos": int(draws.groupby("identity")["photograph"].nunique().median()),
            "ex_n_for_paper_median": required_test_size(2.29, alpha, 1e-5),
            "ex_n_for_one": required_test_size(1.0, alpha, 1e-5)}


@dataclass(frozen=True)
class ChapterResults:
    """Everything chapter 5 computes (:func:`run_chapter`).

    Attributes
    ----------
    per_pair, worst, summary : pandas.DataFrame
        Resampled corpus: :func:`certify_passes` and its :func:`summary_table`.
    photo_pairs, photo_worst, photo_summary : pandas.DataFrame or None
        The photograph design (:func:`capped_design`), when the profile asks for it.
    control : pandas.DataFrame
        :func:`same_person_control`.
    numbers : dict
        :func:`chapter_numbers` and :func:`control_numbers`.
    """

    per_pair: pd.DataFrame
    worst: pd.DataFrame
    summary: pd.DataFrame
    photo_pairs: pd.DataFrame | None
    photo_worst: pd.DataFrame | None
    photo_summary: pd.DataFrame | None
    control: pd.DataFrame
    numbers: dict


def run_chapter(corpora: Mapping[tuple[str, str], Any], settings: Mapping[str, Any], *, data: str | Path = "data",
                n_jobs: int | None = None, progress: bool = True) -> ChapterResults:
    """Certify the resampled corpus and, when ``settings["capped"]``, the photograph design in ``data/corpora``.

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`certify_passes` and :func:`capped_design`.
    """
    per_pair, worst = certify_passes(corpora, settings, n_jobs=n_jobs, progress=progress)
    summary = summary_table(per_pair)
    photo_pairs = photo_worst = photo_summary = None
    if settings["capped"]:
        photo_pairs, photo_worst = capped_design(Path(data) / "corpora", settings, n_jobs=n_jobs, progress=progress)
        photo_summary = summary_table(photo_pairs)
    control = same_person_control(corpora, settings, n_jobs=n_jobs)
    numbers = {**chapter_numbers(summary, worst, photo_summary, photo_worst), **control_numbers(control)}
    return ChapterResults(per_pair, worst, summary, photo_pairs, photo_worst, photo_summary, control, numbers)


def timings_view(corpus: Any):
    """:func:`build_timings` as the page shows it: images per CPU second of each step of each stage."""
    t = build_timings(corpus)
    t = t[t["images"] > 0]
    frame = strings(t[["stage", "step", "images", "images_per_cpu_second", "stage_wall_seconds"]],
                    {"images": "{:,.0f}", "images_per_cpu_second": "{:,.1f}", "stage_wall_seconds": "{:,.0f}"})
    return styled(frame, group="stage", headers={"images_per_cpu_second": "images per CPU second",
                                                 "stage_wall_seconds": "stage wall time (s)"},
                  caption=f"How the corpus was built ({corpus.manifest['run']['wall_seconds'] / 60:.0f} minutes on "
                          f"{corpus.manifest['run']['n_jobs']} worker processes)")


def same_person_control(corpora: Mapping[tuple[str, str], Any], settings: Mapping[str, Any], *,
                        passes: Sequence[int] = PASSES, n_jobs: int | None = None) -> pd.DataFrame:
    """Certificates between two halves of one identity's photographs: the same person, different pools.

    Each identity's photographs are split in two halves by a seeded permutation
    (``stream("same-person-split", seed, identity)``); a draw belongs to the half of the photograph
    it started from, so each half keeps its own development and test draws (about 50 each). The
    reserved test then certifies the pair (half 1, half 2) of every identity, all pairs of an
    encoder and variant (identities x passes) in one Bonferroni family at ``settings["confidence"]``.
    The two halves show the same face: a positive certificate measures how recognisable the
    *photographs* are, not the identity, which is the control the chapter's certificates need
    (methods chapter, "A resampled mechanism").

    Returns
    -------
    pandas.DataFrame
        :func:`summary_table` of the control's certificates, its ``certificates`` column named
        ``pairs``, with ``alpha_per_bound``.

    Raises
    ------
    ValueError
        As :func:`epsaudit.audits.reserved_test_pairs`.

    References
    ----------
    *Picture the Epsilon*, Section IV-C (the reserved test).
    """
    from ..seeds import stream

    frames = []
    for (encoder, variant), corpus in corpora.items():
        draws = corpus.draws.set_index("draw")["photograph"]
        identities = corpus.passes[0].identities[: settings["identities"]] if settings["identities"] else \
            corpus.passes[0].identities
        half_of = {}
        for a in identities:
            photos = sorted(set(draws[corpus.passes[0].dev_draws[a]]) | set(draws[corpus.passes[0].test_draws[a]]))
            order = stream("same-person-split", settings["seed"], a).permutation(len(photos))
            half_of.update({photos[i]: (1 if rank < len(photos) / 2 else 2) for rank, i in enumerate(order)})
        family = len(identities) * len(passes)
        for k in passes:
            dev, test, dev_ids, test_ids = pass_data(corpus, k, settings["identities"])
            groups: dict[str, dict] = {"dev": {}, "test": {}, "dev_ids": {}, "test_ids": {}}
            for a in identities:
                for part, x, ids in (("dev", dev[a], dev_ids[a]), ("test", test[a], test_ids[a])):
                    half = np.array([half_of[p] for p in draws[ids]])
                    for h in (1, 2):
                        groups[part][f"{a} #{h}"] = x[half == h]
                        groups[f"{part}_ids"][f"{a} #{h}"] = ids[half == h]
            pairs = [(f"{a} #1", f"{a} #2") for a in identities]
            certs = reserved_test_pairs(groups["dev"], pairs, test_groups=groups["test"], n_certificates=family,
                                        confidence=settings["confidence"], delta=settings["delta"],
                                        seed=settings["seed"], dev_ids=groups["dev_ids"],
                                        test_ids=groups["test_ids"], n_jobs=n_jobs)
            frames.append(_pair_rows(certs).assign(encoder=encoder, variant=variant, **{"pass": k}))
    per_pair = pd.concat(frames, ignore_index=True)
    alpha = per_pair.groupby(["encoder", "variant", "pass"], sort=False)["alpha_per_bound"].first().to_numpy()
    return summary_table(per_pair).rename(columns={"certificates": "pairs"}).assign(alpha_per_bound=alpha)


def control_view(control: pd.DataFrame):
    """:func:`same_person_control` as the page shows it."""
    shown = control.assign(condition=[_condition(e, v) for e, v in zip(control["encoder"], control["variant"])])
    cols = {"condition": "condition", "pass": "pass", "pairs": "pairs", "positive": "> 0", "above_1": "> 1",
            "median_bound": "median", "max_bound": "max", "cap": "cap", "n_test": "test rows (min)"}
    frame = strings(shown[list(cols)], {"pass": "{:.0f}", "pairs": "{:.0f}", "positive": "{:.0f}",
                                       "above_1": "{:.0f}", "n_test": "{:.0f}"})
    return styled(frame, group="condition", headers=cols,
                  caption="Same-person control: certificates between two halves of one identity's photographs "
                          "(the same face, different photographs; epsilon in nats)")


def control_numbers(control: pd.DataFrame) -> dict[str, Any]:
    """The control's numbers the prose cites (``ch5_ctl_*``)."""
    out: dict[str, Any] = {}
    for (e, v), g in control.groupby(["encoder", "variant"], sort=False):
        by = g.set_index("pass")
        for k in by.index:
            out[f"ctl_{e}_{k}_pos"] = int(by.loc[k, "positive"])
            out[f"ctl_{e}_{k}_max"] = float(by.loc[k, "max_bound"])
            out[f"ctl_{e}_{k}_median"] = float(by.loc[k, "median_bound"])
        out["ctl_pairs"] = int(by["pairs"].iloc[0])
    return out
