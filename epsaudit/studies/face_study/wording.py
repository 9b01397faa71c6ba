"""Chapter 3's sentences whose wording depends on the numbers.

A claim in the chapter's prose ("stays below one", "the forest is better for dlib", "a family-wise
claim would need more permutations") must follow from the numbers of the run that printed it,
whatever the profile. Each function here takes numbers the chapter already computed (the tables
and the ``*_numbers`` dictionaries of the companion modules) and returns glue key -> sentence
part; the numbers inside a sentence are formatted as in the tables
(:func:`epsaudit.studies.face_study.pages.number`). :mod:`epsaudit.studies.face_study`
re-exports every public name.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ...bounds import bonferroni_alpha, certifiable_cap
from ...settings import AuditSettings
from . import DIAGNOSTICS, ENCODER_LABEL, MIA, TABLE2
from .pages import certificate, condition_text, number, range_text

_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine",
          10: "ten"}


def fold_words(low: float, high: float) -> str:
    """``"four- to fivefold"`` for a range of ratios (rounded), ``"about fourfold"`` when both round alike.

    Examples
    --------
    >>> fold_words(4.05, 4.84), fold_words(4.8, 6.4), fold_words(4.2, 4.4)
    ('four- to fivefold', 'five- to sixfold', 'about fourfold')
    """
    lo, hi = (_WORDS.get(int(round(v)), f"{v:.0f}") for v in (low, high))
    return f"about {lo}fold" if lo == hi else f"{lo}- to {hi}fold"


def _relation(low: float, high: float, ref_low: float, ref_high: float) -> str:
    if low > ref_high:
        return "higher than"
    if high < ref_low:
        return "lower than"
    return "overlaps"


def profile_text(P: Mapping[str, Any], profile: str) -> dict[str, str]:
    """The first screen's description of the run profile (Markdown, pasted with ``{glue:md}``).

    Parameters
    ----------
    P : mapping
        The profile's settings (:func:`epsaudit.studies.face_study.choose_profile`).
    profile : str
        Its name.

    Returns
    -------
    dict
        ``ch3_profile_note``: what it runs.
    """
    if P["smoke"] is not None:
        ids, photos = P["smoke"]
        note = (f"every stage of the face pipeline on {ids} identities × {photos} photographs per regime, and one "
                "pair per route: the numbers below are a test of the machinery, not results")
    else:
        note = ("every committed condition with the paper's audit protocol"
                + ("" if profile == "full" else ", the paper's random-forest pairs and permutations"))
    return {"ch3_profile_note": note}


def cli_command(settings: AuditSettings, width: int = 72) -> str:
    """The ``epsaudit audit`` command of the chapter's audits, wrapped at ``width`` with ``\\`` continuations
    (72 characters fit the book's reading column at 1280 px).

    Examples
    --------
    >>> print(cli_command(AuditSettings(family_size=60, prefer_certifiable=True)))
    epsaudit audit data/<condition>.csv --family-size 60 \\
        --prefer-certifiable
    """
    lines, line = [], "epsaudit audit data/<condition>.csv"
    args = settings.cli_args()
    k = 0
    while k < len(args):
        word = args[k] if not (args[k].startswith("--") and k + 1 < len(args) and not args[k + 1].startswith("--")) \
            else f"{args[k]} {args[k + 1]}"
        k += 2 if " " in word else 1
        if len(line) + 1 + len(word) > width - 2:
            lines.append(line + " \\")
            line = "    " + word
        else:
            line += " " + word
    return "\n".join(lines + [line])


def audit_numbers(settings: AuditSettings) -> dict[str, Any]:
    """The audit protocol of this run, for the prose (glue key -> value)."""
    return {"au_pairs": int(settings.pairs), "au_kde_pairs": int(settings.kde_pairs),
            "au_roc_pairs": int(settings.roc_pairs), "au_certificates": int(settings.certificates),
            "au_pool": int(settings.selection_pool), "au_dev_share": f"{1 - settings.test_size:.0%}",
            "au_test_share": f"{settings.test_size:.0%}"}


def data_claims(numbers: Mapping[str, Any], settings: AuditSettings) -> dict[str, str]:
    """The data section's claims: whether every route gets its full prefix, how often detectors fail on ``dp-pix``."""
    longest = max(settings.pairs, settings.kde_pairs, settings.roc_pairs, settings.selection_pool)
    a, b = numbers["cand_pairs_large"], numbers["cand_pairs_small"]
    if min(a, b) >= longest:
        prefix = (f"both regimes have at least {longest:,d} candidate pairs ({a:,d} and {b:,d} in this run), so every "
                  "route gets its full prefix of the shuffled pair list")
    else:
        prefix = (f"the regimes have {a:,d} and {b:,d} candidate pairs in this run, fewer than the protocol's longest "
                  f"prefix ({longest:,d}), so the routes with longer prefixes audit every pair there is")
    if "dppix_rows" not in numbers:
        return {"da_prefix": prefix, "da_dppix": ""}
    f, r = numbers["dppix_fallbacks"], numbers["dppix_rows"]
    if f == r:
        dp = f"Pixelised images defeat both face detectors: all {r:,d} `dp-pix` rows were encoded from the whole image"
    elif 2 * f > r:
        dp = f"Pixelised images mostly defeat the face detectors: {f:,d} of {r:,d} `dp-pix` rows were encoded from the whole image"
    else:
        dp = f"The face detectors found most pixelised faces: {f:,d} of {r:,d} `dp-pix` rows were encoded from the whole image"
    return {"da_prefix": prefix, "da_dppix": dp + ", as the manifest records."}


def centring_claims(numbers: Mapping[str, Any], encoders: Sequence[str]) -> dict[str, str]:
    """How far from zero-mean each encoder's unit embeddings are, in one or two sentences (``da_centring``).

    Parameters
    ----------
    numbers : mapping
        :func:`epsaudit.studies.face_study.data_numbers` output (``<encoder>_mean_norm``,
        ``<encoder>_diff_raw``, ``<encoder>_diff_centred``).
    encoders : sequence of str
        The run's encoders.

    Examples
    --------
    >>> n = {"dlib_mean_norm": 0.9, "dlib_diff_raw": 0.8, "dlib_diff_centred": 0.0}
    >>> centring_claims(n, ["dlib"])["da_centring"].startswith("**dlib's vectors are far from zero-mean.**")
    True
    """
    parts = []
    for enc in encoders:
        label = ENCODER_LABEL[enc]
        norm, raw, centred = (numbers[f"{enc}_{k}"] for k in ("mean_norm", "diff_raw", "diff_centred"))
        parts.append(f"{label}: the mean unit embedding has norm {number(norm)}, so two photographs of *different* "
                     f"people have raw cosine {number(raw)} on average, {number(centred)} after subtracting the mean")
    far = [ENCODER_LABEL[e] for e in encoders if numbers[f"{e}_mean_norm"] > 0.5]
    head = (f"**{' and '.join(far)}'s vectors are far from zero-mean.** " if far
            else "**The vectors are close to zero-mean.** ")
    return {"da_centring": head + "Averaged over the two regimes' `none` tables, " + "; ".join(parts) + "."}


def table2_claims(t2: pd.DataFrame) -> dict[str, str]:
    """Table 2's claims: MMD-TV against one and against the paper's range, how far the 500-pair medians move,
    and where MMD-TV's maximum over 500 pairs exceeds one."""
    out: dict[str, str] = {}
    med = t2["MMD-TV"]
    above = int((med >= 1).sum())
    out["t2_mmd_claim"] = ("stays below one" if above == 0 else f"reaches one or more in {above} condition(s)")
    lo_p, hi_p = float(TABLE2["MMD-TV"].min()), float(TABLE2["MMD-TV"].max())
    parts = []
    present = [g for g in ("none", "swap", "dp-pix") if g in t2.index.get_level_values("generator")]
    for gen in present:
        v = t2.xs(gen, level="generator")["MMD-TV"]
        rel = _relation(float(v.min()), float(v.max()), lo_p, hi_p)
        rng = f"{number(float(v.min()))}–{number(float(v.max()))}"
        parts.append(f"{'it overlaps the paper range' if rel == 'overlaps' else rel + ' the paper'} for `{gen}` ({rng})")
    out["t2_mmd_vs_paper"] = "; ".join(parts)
    out.update(_generator_sentences(t2, present))
    moves = pd.concat([(t2["GaussMech (500)"] / t2["GaussMech"] - 1).abs(),
                       ((t2["MMD-TV (500)"] - t2["MMD-TV"]) / t2["MMD-TV"].where(t2["MMD-TV"] > 0)).abs()])
    moves = moves[np.isfinite(moves)]
    first = int(t2["pairs"].min())
    out["t2_500_move"] = (f"their medians move by at most {number(100 * float(moves.max()), 0)}% from those of the "
                          f"first {first:,d}"
                          if len(moves) else "the MMD-TV medians are 0, so no relative change can be given")
    mx = t2["MMD-TV max (500)"]
    n_over = int((mx > 1).sum())
    where = condition_text(mx.idxmax())
    if n_over:
        out["t2_mmd500_claim"] = (f"it exceeds one in {n_over} of {len(mx)} conditions (up to {number(float(mx.max()))}, "
                                  f"in {where}), where the paper notes that every value it reports is below one")
    else:
        out["t2_mmd500_claim"] = (f"it stays below one in every condition (at most {number(float(mx.max()))}, in "
                                  f"{where}), as every value the paper reports does")
    return out


def _generator_sentences(t2: pd.DataFrame, present: Sequence[str]) -> dict[str, str]:
    """Table 2's per-generator reading: +inf counts and AUCs for ``none``/``swap``, and ``dp-pix``'s case."""
    n = int(t2["pairs"].min())

    def col(gen, c, fmt):
        v = t2.xs(gen, level="generator")[c].astype(float)
        lo, hi = fmt.format(float(v.min())), fmt.format(float(v.max()))
        return lo if lo == hi else f"{lo}-{hi}"

    bits = []
    if "none" in present:
        bits.append(f"on {col('none', 'ROC-HT +inf', '{:.0f}')} of {n} pairs for the original photographs")
    if "swap" in present:
        bits.append(f"on {col('swap', 'ROC-HT +inf', '{:.0f}')} for the swaps, whose median AUC is "
                    f"{col('swap', 'ROC AUC', '{:.3f}')}")
    sentence = ("The out-of-fold ROC conversion is $+\\infty$ " + " and ".join(bits)
                + " (paper: 100 of 100, AUC 0.937-1.000)") if bits else ""
    if "swap" in present:
        sentence += (": a swap with one fixed donor leaves the target identity separable, as FaceFusion does in "
                     "the paper.")
    elif sentence:
        sentence += "."
    out = {"t2_generator_sentence": sentence}
    if "dp-pix" in present:
        out["t2_dp_sentence"] = (
            f"`dp-pix` has a proven pure-DP guarantee ($\\varepsilon = 1$ per changed pixel), yet its diagnostics are "
            f"as large. Where its out-of-fold AUC falls ({col('dp-pix', 'ROC AUC', '{:.3f}')}), "
            f"{col('dp-pix', 'ROC-HT +inf', '{:.0f}')} of the {n} conversions are still $+\\infty$: a single extreme "
            "out-of-fold score suffices, as at the null of chapter 1. The exact corner (FPR, TPR) = (0, 1), a "
            f"complete out-of-fold separation, is reached by {col('dp-pix', 'exact corners', '{:.0f}')} of its pairs"
            + "".join(f", {col(g, 'exact corners', '{:.0f}')} for `{g}`" for g in present if g != "dp-pix") + ".")
    else:
        out["t2_dp_sentence"] = ""
    return out


def table3_claims(numbers: Mapping[str, Any], audits: Mapping[str, Any]) -> dict[str, str]:
    """Table 3's claims: the small regime's certificates against its test sizes, the large regime's caps below one.

    Parameters
    ----------
    numbers : mapping
        :func:`epsaudit.studies.face_study.table3_numbers` output.
    audits : mapping condition name -> ConditionAudit
    """
    out: dict[str, str] = {}
    pos, n, rows, need = (numbers["pos_small"], numbers["certs_small"], numbers["n_test_small_max"],
                          numbers["first_positive_n"])
    because = (f"at most {rows} rows per identity, fewer than the {need} a zero-error test needs to certify anything"
               if rows < need else f"at most {rows} rows per identity")
    if pos == 0:
        out["t3_small_claim"] = (f"the test parts have {because}, so none of its {n} certificates is positive, even for "
                                 "pairs that separate perfectly on development data, just as the paper's CelebA "
                                 "conditions certify 0 of 5")
    else:
        out["t3_small_claim"] = (f"the test parts have {because}, and {pos} of its {n} certificates are positive (the "
                                 "paper's CelebA conditions certify 0 of 5)")
    caps = pd.concat([a.per_pair[a.per_pair["route"] == "roc_reserved"]["cap"] for k, a in audits.items()
                      if "_large_" in k]).astype(float)
    below = int((caps < 1).sum())
    out["t3_caps_claim"] = (f"{below} of their {len(caps)} caps are below one" if below
                            else f"all {len(caps)} caps are at least one")
    out["cert_max_text"] = certificate(numbers["cert_max"])
    dp = numbers.get("dp_cert_phrase", "")
    out["t3_dp_sentence"] = (f"For `dp-pix`, {dp}: its guarantee is $\\varepsilon = 1$ for images differing in *one "
                             "pixel*, whereas two identities differ in every pixel, so a separable pair and a positive "
                             "certificate contradict nothing, and neither would a certificate above one."
                             if dp else "")
    out["t3_story"] = "reappears" if pos == 0 else "reappears only in part"
    return out


def bound_claims(paper_method: Mapping[str, Any], default: Mapping[str, Any],
                 numbers: Mapping[str, Any]) -> dict[str, str]:
    """The two bounds' certificates compared in one sentence (``bound_sentence``).

    Parameters
    ----------
    paper_method, default : mapping condition name -> ConditionAudit
        The audits with ``bound="clopper-pearson"`` and with the default joint bound.
    numbers : mapping
        :func:`epsaudit.studies.face_study.table3_numbers` output (the family).
    """
    from .audit import reserved_certificates

    cp, joint = reserved_certificates(paper_method), reserved_certificates(default)
    if not len(cp) or not len(joint):
        return {"bound_sentence": "No certificate was computed in this run."}
    def describe(c: pd.DataFrame, name: str) -> str:
        v = c["value"].astype(float)
        large = c[c["condition"].str.contains("_large_")]["value"].astype(float)
        at = int(c["censored"].astype(bool).sum())
        in_large = f", {number(float(large.median()))} in the ≥20-photo regime" if len(large) else ""
        return (f"{name} has median {number(float(v.median()))}{in_large} and largest {number(float(v.max()))} (cap "
                f"{number(float(c['cap'].astype(float).max()))}; {at} at their cap)")

    return {"bound_sentence": (
        f"Over the {len(cp)} certificates of the family, {describe(cp, 'the paper’s bound')}; "
        f"{describe(joint, 'the joint bound')}. The data are the same; only how the error counts become a bound "
        "differs.")}


def shapiro_claims(sw: pd.DataFrame, qq: Mapping[str, Any]) -> dict[str, str]:
    """The Gaussianity claims: which encoder and generator are rejected most, the shape of the plotted
    coordinates (sample skewness and excess kurtosis), and the comparison with the paper.

    Parameters
    ----------
    sw : pandas.DataFrame
        :func:`epsaudit.studies.face_study.shapiro_study` table.
    qq : mapping
        :func:`epsaudit.studies.face_study.qq_data` output (the plotted residuals and coordinates).
    """
    rej = sw["rejections (p<1e-3)"].astype(int)
    enc = rej.groupby(level="encoder").sum().sort_values(ascending=False)
    gen = rej.groupby(level="generator").sum().sort_values(ascending=False)
    by_enc = (f"most often for {enc.index[0]} ({enc.iloc[0]:,d} rejections over its conditions"
              + "".join(f", against {v:,d} for {k}" for k, v in enc.iloc[1:].items()) + ")")
    by_gen = (f"by generator, for `{gen.index[0]}` ({gen.iloc[0]:,d}"
              + "".join(f", against {v:,d} for `{k}`" for k, v in gen.iloc[1:].items()) + ")")
    out = {"sw_most": f"{by_enc} and, {by_gen}"}
    x = np.asarray(qq["residuals"])[:, list(qq["coordinates"])]
    skew, kurt = stats.skew(x, axis=0), stats.kurtosis(x, axis=0)
    out["sw_shape"] = (f"sample skewness {number(float(skew.min()), 2)} to {number(float(skew.max()), 2)} and excess "
                       f"kurtosis {number(float(kurt.min()), 2)} to {number(float(kurt.max()), 2)} (both 0 for a "
                       "Gaussian; skewness bends one tail away from the line, positive kurtosis both)")
    out["sw_worst_text"] = f"**{condition_text(rej.idxmax())}**"
    frac, paper = float(sw["fraction"].max()), DIAGNOSTICS["shapiro_rejections_min"] / DIAGNOSTICS["shapiro_dimensions"]
    out["sw_verdict"] = ("less visibly wrong here than in the paper" if frac < paper
                         else "rejected here about as often as in the paper")
    return out


def witness_claims(witness: pd.DataFrame, t2: pd.DataFrame) -> dict[str, str]:
    """KDE-LR's ratio in words and where it is lowest; the witness ratio's relation to MMD."""
    ratio = witness["KDE-LR ratio a=0 / a=.01"].astype(float)
    out = {"kde_fold_ours": fold_words(float(ratio.min()), float(ratio.max())),
           "kde_fold_paper": fold_words(DIAGNOSTICS["kde_ratio_min"], DIAGNOSTICS["kde_ratio_max"])}
    lowest = ratio.groupby(level="generator").mean().idxmin()
    out["kde_lowest"] = (f"The ratio is lowest for `{lowest}`"
                         + (", whose pixelised inputs leave the marginals closer together" if lowest == "dp-pix" else ""))
    w = witness[["mean_half_mmd", "mean_ratio"]].astype(float).dropna()
    rho = float(stats.spearmanr(w["mean_half_mmd"], w["mean_ratio"])[0]) if len(w) > 2 else float("nan")
    if np.isnan(rho):
        out["witness_direction"] = "Too few conditions have a defined ratio to say how it varies with MMD"
    else:
        out["witness_direction"] = (f"Our ratios are {'lower' if rho < 0 else 'higher'} where MMD is larger (Spearman "
                                    f"correlation {number(rho, 2)} over the conditions)")
    low = float(witness["mean_ratio"].min())
    out["witness_verdict"] = ("every ratio exceeds one, as in the paper: the TV bound that MMD-TV inverts is far from "
                              "the separation a linear classifier finds" if low > 1 else
                              f"some ratios are at most one (smallest {number(low, 2)}), unlike the paper's")
    return out


def bandwidth_claims(maxima: pd.DataFrame) -> dict[str, str]:
    """Where the MMD-TV maximum peaks over the paper's scales, and whether it stays positive.

    Parameters
    ----------
    maxima : pandas.DataFrame
        ``BandwidthStudy.maxima()``.
    """
    best = maxima.astype(float).idxmax(axis=1).map(lambda c: float(c.split(" ")[0])).value_counts()
    parts = [f"at {s:g} σ* in {k}" for s, k in sorted(best.items(), key=lambda kv: -kv[1])]
    smallest = float(maxima.astype(float).min().min())
    return {"bw_peaks": ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1],
            "bw_positive": ("stays positive throughout (smallest maximum " + number(smallest) + ")" if smallest > 0
                            else "is 0 in at least one condition at some scale")}


def robustness_claims(checks: pd.DataFrame, numbers: Mapping[str, Any]) -> dict[str, str]:
    """Classifier sensitivity on ``dp-pix``, the split-half AUCs against 0.5, and the permutation floor."""
    out: dict[str, str] = {}
    gens = checks.index.get_level_values("generator")
    diff = checks["logistic - forest"].astype(float)
    rest = diff[gens != "dp-pix"]
    out["rf_rest_sentence"] = (f"Outside `dp-pix` the two classifiers' mean AUCs agree to within "
                               f"{number(float(rest.abs().max()))}: both separate nearly every pair completely"
                               if len(rest) else "Only `dp-pix` conditions were run")
    if "dp-pix" not in set(gens):
        out["rf_dp_sentence"] = ""
        dp = None
    else:
        dp = checks.xs("dp-pix", level="generator")["logistic - forest"].astype(float)
    if dp is not None:
        lo, hi = number(float(dp.min())), number(float(dp.max()))
        if (dp > 0).all():
            claim = f"the logistic regression is better in all {len(dp)} conditions, by {lo} to {hi} in mean AUC"
        elif (dp < 0).all():
            claim = f"the forest is better in all {len(dp)} conditions (logistic minus forest {lo} to {hi})"
        else:
            by_enc = dp.groupby(level="encoder").mean()
            winner = {e: "the logistic regression" if v > 0 else "the forest" for e, v in by_enc.items()}
            if len(set(winner.values())) == 1:
                average = f"on average {next(iter(winner.values()))} is better for every encoder"
            else:
                average = "on average " + ", ".join(f"{w} is better for {e}" for e, w in winner.items())
            claim = f"they disagree in both directions, from {lo} to {hi} (logistic minus forest; {average})"
        out["rf_dp_claim"] = claim
        paper = max(abs(DIAGNOSTICS["rf_difference_min"]), abs(DIAGNOSTICS["rf_difference_max"]))
        out["rf_dp_size"] = ("by more than the paper's check would suggest" if float(dp.abs().max()) > paper
                             else "by no more than the paper's check found")
        out["rf_dp_sentence"] = (f"On `dp-pix`, where neither separates every pair, {claim}: once the separation is "
                                 "partial, which scorer is chosen changes the out-of-fold ROC, and hence any epsilon "
                                 f"read from it, {out['rf_dp_size']}.")
    rate = checks["split MMD rejections"].astype(float) / checks["split-half controls"].astype(float)
    out["split_worst_text"] = f"**{condition_text(rate.idxmax())}**"
    a_lo, a_hi = numbers["split_auc_min"], numbers["split_auc_max"]
    out["split_auc_claim"] = ("below rather than at 0.5, as is usual for cross-validated AUC at the null with small "
                              "classes" if a_hi < 0.5 else "above 0.5 in every condition" if a_lo > 0.5 else
                              "on both sides of 0.5 (cross-validated AUC at the null scatters around 0.5, often "
                              "below it with small classes)")
    tests, b, pairs = numbers["perm_tests"], numbers["perm_b"], numbers["perm_pairs"]
    floor = 1.0 / (b + 1)
    if 0.05 / tests < floor:
        family = (f"With {tests:,d} tests a Bonferroni level of 0.05/{tests:,d} lies below the smallest attainable "
                  f"p-value 1/(B + 1), so a family-wise claim over all of them would need at least "
                  f"{numbers['perm_needed']:,d} permutations per test")
    else:
        family = (f"With {tests:,d} tests a Bonferroni level of 0.05/{tests:,d} still lies above the smallest "
                  "attainable p-value 1/(B + 1), so the permutations suffice for a family-wise claim over all of them")
    within = ("the floor suffices" if 0.05 / pairs >= floor else "even that lies below the floor")
    out["perm_family_claim"] = f"{family}; within one condition (0.05/{pairs:,d}) {within}"
    return out


def _each(numbers: Mapping[str, Any], encoders: Sequence[str], key: str, fmt=number) -> str:
    """``"0.812 (dlib) and 0.934 (SFace)"``: one value per encoder of ``mia_<encoder>_<key>``."""
    parts = [f"{fmt(numbers[f'mia_{e}_{key}'])} ({ENCODER_LABEL[e]})" for e in encoders]
    return " and ".join(parts) if len(parts) < 3 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _pct(value: float) -> str:
    return f"{number(100 * float(value), 1)}%"


def membership_claims(numbers: Mapping[str, Any], encoders: Sequence[str] | None = None) -> dict[str, str]:
    """The membership section's reading, for the encoders of the run (one value per encoder in each sentence).

    Parameters
    ----------
    numbers : mapping
        ``MembershipStudy.numbers()``.
    encoders : sequence of str, optional
        The encoders measured (default: those ``numbers`` has).

    Returns
    -------
    dict
        Glue key -> Markdown: ``mia_scores_sentence`` (the suppression of the target score against the
        paper's), ``mia_rates_sentence`` (AUC, TPRs), ``mia_rank_sentence`` (closed-set identification),
        ``mia_centring``, ``mia_donor_sentence`` and ``mia_aggregate_claim``.
    """
    n = numbers
    encoders = [e for e in (encoders or ("dlib", "sface")) if f"mia_{e}_drop" in n]
    out: dict[str, str] = {}
    drops = [n[f"mia_{e}_drop"] for e in encoders]
    suppress = ("our classical swap suppresses less" if max(drops) < n["paper_drop"] else
                "our classical swap suppresses more" if min(drops) > n["paper_drop"] else
                "our classical swap suppresses about as much")
    falls = "; ".join(f"under {ENCODER_LABEL[e]} from {number(n[f'mia_{e}_genuine'])} to {number(n[f'mia_{e}_target'])}"
                      f" (by {number(100 * n[f'mia_{e}_drop'], 0)}%)" for e in encoders)
    out["mia_scores_sentence"] = (
        f"Over {n['mia_swaps']:,d} swaps the mean target score falls from that of a genuine photograph against its "
        f"own gallery to that of the swap: {falls} (the face-swap operator paper, FaceFusion under ArcFace: 0.616 to "
        f"0.098, by {number(100 * n['paper_drop'], 0)}%; {suppress}). Non-members score "
        f"{_each(n, encoders, 'nonmember')} (paper about 0.008).")
    out["mia_rates_sentence"] = (
        f"With median aggregation the adversary reaches AUC {_each(n, encoders, 'auc_median')}, against 0.874 for "
        "FaceFusion and 0.73-0.95 for the paper's five donor-retaining tools. At FPR ≤ 1% it flags "
        f"{_each(n, encoders, 'tpr1_median', _pct)} of the targets (FaceFusion 30.2% under ArcFace, 15.5% under "
        f"Facenet512), at FPR ≤ 0.1% {_each(n, encoders, 'tpr01_median', _pct)} (14.6% and 3.6%).")
    out["mia_rank_sentence"] = (
        f"Closed-set rank-1 identification among {n['mia_candidates']} targets (chance "
        f"{_pct(n['mia_chance_r1'])}) succeeds for {_each(n, encoders, 'r1_median', _pct)} of the swaps, rank-5 for "
        f"{_each(n, encoders, 'r5_median', _pct)} (paper: up to 34% rank-1 among 948).")
    e0 = encoders[0]
    raw, centred = n[f"mia_{e0}_raw_auc"], n[f"mia_{e0}_auc_median"]
    out["mia_centring"] = (f"Centring {'raises' if centred > raw else 'lowers' if centred < raw else 'leaves'} "
                           f"{ENCODER_LABEL[e0]}'s AUC: on raw cosines it is {number(raw)}")
    paper = MIA["donor_dominated_min_fraction"]
    donor = []
    for e in encoders:
        w = n[f"mia_{e}_donor_wins"]
        if w > 0.5:
            donor.append(f"Under {ENCODER_LABEL[e]} the swap is mostly donor-dominated ({_pct(w)} of swaps score "
                         "higher against the donor than against their target, "
                         f"{'if less so than' if w < paper else 'as much as'} the paper's five anonymising tools, "
                         "over 93%)")
        else:
            donor.append(f"Under {ENCODER_LABEL[e]} the swap is mostly target-dominated (only {_pct(w)} of swaps "
                         "score higher against the donor than against their target; the paper's five anonymising "
                         "tools: over 93%)")
    target_led = [ENCODER_LABEL[e] for e in encoders if n[f"mia_{e}_donor_wins"] < 0.5]
    tail = ""
    if target_led:
        who = " and ".join(target_led)
        tail = (f" {who} evidently reads identity largely from what the warp keeps of the target (face outline, "
                "landmark geometry, skin tone after blending), so by that paper's working definition this swap fails "
                f"as an anonymiser for {who}, like DiffSwap and FaceShifter there, and its membership numbers belong "
                "beside those two tools (DiffSwap: 96.7% TPR at 1% FPR), not beside FaceFusion.")
    out["mia_donor_sentence"] = ". ".join(donor) + "." + tail
    a_max, a_med, m_max = n[f"mia_{e0}_auc_max"], n[f"mia_{e0}_auc_median"], n[f"mia_{e0}_matched_auc_max"]
    t_med, t_max = n[f"mia_{e0}_matched_tpr01_median"], n[f"mia_{e0}_matched_tpr01_max"]
    first = (f"The max aggregate looks {'stronger' if a_max > a_med else 'no stronger'} than the median with full "
             f"galleries ({ENCODER_LABEL[e0]} AUC {number(a_max)} against {number(a_med)})")
    if a_max > a_med and m_max < a_max:
        first += (f", because target galleries are larger: with {n['matched']} photographs per gallery it drops to "
                  f"{number(m_max)}")
    else:
        first += f"; with {n['matched']} photographs per gallery it is {number(m_max)}"
    first += (f", and {'median' if t_med > t_max else 'max'} aggregation is the stronger attack at FPR ≤ 0.1% "
              f"({number(100 * max(t_med, t_max), 1)}% against {number(100 * min(t_med, t_max), 1)}%)"
              + (", as in the paper" if t_med > t_max else ""))
    out["mia_aggregate_claim"] = first
    return out


def examples_text(images: bool) -> str:
    """The examples section's first line: what the figure shows, or, without the photographs, that
    there is none (and nothing else is said about pictures the reader cannot see).

    Examples
    --------
    >>> examples_text(False)
    'The LFW photographs are not on this machine (`make lfw`), so this section shows no examples.'
    """
    if not images:
        return "The LFW photographs are not on this machine (`make lfw`), so this section shows no examples."
    return ("{numref}`fig-ch3b-examples` shows a few targets of the ≥20-photo regime, the fixed donor and the swap "
            "the generator made from them, recomputed from the photographs (the generator is deterministic, so these "
            "are the encoded images). The swap keeps the target's hair, pose, outline and lighting and replaces the "
            "inner face with the donor's, warped to the target's landmarks: the attributes that the donor-retaining "
            "tools of the face-swap operator paper also preserve, and through which target identity leaks.")


def tradeoff_claims(numbers: Mapping[str, Any]) -> dict[str, str]:
    """The trade-off section's claims: the certified mu, the band against the reserved test, the MMD certificates.

    Parameters
    ----------
    numbers : mapping
        ``TradeoffStudy.numbers()``.

    Returns
    -------
    dict
        ``to_mu_claim`` (how many bands certify a positive mu, the largest per generator),
        ``to_band_claim`` (the best single point against the reserved test, and why) and
        ``to_mmd_claim``; numbers formatted as in the section's tables (:func:`certificate`).

    Examples
    --------
    >>> n = dict(to_pairs=18, to_mu_positive=12, to_mu_none=1.30985, to_mu_swap=1.30985, to_mu_dp=0.0,
    ...          to_best_none=1.0655, to_best_swap=1.0655, to_best_dp=0.0, to_reserved_none=1.2167,
    ...          to_reserved_swap=1.2167, to_reserved_dp=0.0, to_band_wins=0, to_cost_max=0.1913, to_n_min=6,
    ...          to_n_max=30, to_points_min=3, to_points_max=4, to_dev_min=1.94, to_dev_max=3.97,
    ...          to_mmd2_max=0.788, to_mmd_positive=0)
    >>> print(tradeoff_claims(n)["to_mu_claim"])  # doctest: +NORMALIZE_WHITESPACE
    12 of the 18 bands certify a positive μ, up to 1.310 for `none` and 1.310 for `swap`, and none for `dp-pix`:
    those pairs are not μ-GDP for any smaller μ, a statement about the whole curve that the reserved test's single
    point does not make
    """
    n = numbers
    present = n.get("to_generators", ("none", "swap", "dp-pix"))
    gens = tuple((k, g) for k, g in (("none", "none"), ("swap", "swap"), ("dp", "dp-pix")) if g in present)
    out: dict[str, str] = {}
    some = [f"{certificate(n[f'to_mu_{k}'])} for `{g}`" for k, g in gens if n[f"to_mu_{k}"] > 0]
    nothing = [f"`{g}`" for k, g in gens if not n[f"to_mu_{k}"] > 0]
    if not some:
        out["to_mu_claim"] = f"None of the {n['to_pairs']} bands certifies a positive μ"
    else:
        out["to_mu_claim"] = (f"{n['to_mu_positive']} of the {n['to_pairs']} bands certify a positive μ, up to "
                              + " and ".join(some) + (f", and none for {' or '.join(nothing)}" if nothing else "")
                              + ": those pairs are not μ-GDP for any smaller μ, a statement about the whole curve "
                              "that the reserved test's single point does not make")
    rows, points = range_text(n["to_n_min"], n["to_n_max"], 0), range_text(n["to_points_min"], n["to_points_max"], 0)
    if max(n[f"to_{what}_{k}"] for what in ("reserved", "best") for k, _ in gens) == 0:
        out["to_band_claim"] = (f"With {rows} test rows per identity neither a band nor a reserved test certifies "
                                "anything here")
    elif n["to_band_wins"] == 0:
        out["to_band_claim"] = (f"No band certifies a larger single-point ε than the reserved test of its pair (at "
                                f"best {certificate(n[f'to_best_{gens[0][0]}'])} against "
                                f"{certificate(n[f'to_reserved_{gens[0][0]}'])} for `{gens[0][1]}`). A band divides the pair's error budget among its {points} thresholds; "
                                "where the reserved test makes no test error at all, that extra correction costs up "
                                f"to {certificate(n['to_cost_max'])} in ε at the reserved test's own threshold, and "
                                "a band's other thresholds cannot make it up. That price at one point buys the rest "
                                "of the curve")
    else:
        out["to_band_claim"] = (f"{n['to_band_wins']} of the {n['to_pairs']} bands certify a larger single-point ε "
                                "than the reserved test of their pair, although the band's extra correction costs up "
                                f"to {certificate(n['to_cost_max'])} in ε at the reserved test's own threshold")
    dev = range_text(n["to_dev_min"], n["to_dev_max"])
    best_reserved = max(n[f"to_reserved_{k}"] for k, _ in gens)
    reserved = certificate(best_reserved)
    if n["to_mmd_positive"] == 0:
        beside = (f"where the reserved tests of the same pairs certify up to {reserved}" if best_reserved > 0
                  else "as are the reserved tests of the same pairs")
        out["to_mmd_claim"] = (f"Every MMD certificate is 0, {beside}. The deviation subtracted from the test-row MMD²ᵤ is {dev} at these test "
                               f"sizes, larger than every MMD²ᵤ observed (at most {number(n['to_mmd2_max'])}), and "
                               "MMD² itself can never exceed 2: at these test sizes the MMD route cannot certify "
                               "anything, whatever the pair")
    else:
        out["to_mmd_claim"] = (f"{n['to_mmd_positive']} of the {n['to_pairs']} MMD certificates are positive (the "
                               f"reserved tests of the same pairs certify up to {reserved}); the deviation "
                               f"subtracted from the test-row MMD²ᵤ is {dev}")
    return out


def exercise_numbers(family: int, confidence: float, delta: float,
                     membership: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The numbers of the chapter's exercise solutions (glue key -> value).

    Parameters
    ----------
    family : int
        The chapter's certificate family.
    confidence, delta : float
    membership : mapping
        ``MembershipStudy.numbers()``.

    Returns
    -------
    dict
        Test rows per identity a zero-error reserved test needs to certify more than 1 in the family
        and alone, the single certificate's cap at 30 rows; the swaps the median adversary flags at
        FPR <= 1% per encoder.
    """
    out: dict[str, Any] = {}
    for key, m in (("family", family), ("alone", 1)):
        alpha = bonferroni_alpha(m, confidence)
        for bound, tag in (("clopper-pearson", ""), ("joint", "_joint")):
            n = next(k for k in range(2, 10_000) if certifiable_cap(k, k, alpha, delta, bound=bound) > 1)
            out[f"ex3_rows_above1_{key}{tag}"] = int(n)
            out[f"ex3_cap30_{key}{tag}"] = float(certifiable_cap(30, 30, alpha, delta, bound=bound))
    if membership is None:
        return out
    swaps = int(membership["mia_swaps"])
    for enc in ("dlib", "sface"):
        if f"mia_{enc}_tpr1_median" in membership:
            out[f"ex3_flagged_{enc}"] = int(round(membership[f"mia_{enc}_tpr1_median"] * swaps))
    out["ex3_swaps"] = swaps
    return out


def exercise_claims(tradeoff: Mapping[str, Any], test_size: float, kept: int) -> dict[str, str]:
    """The MMD exercise's answer in words: the test rows per identity, and the photographs that means.

    Parameters
    ----------
    tradeoff : mapping
        ``TradeoffStudy.numbers()``.
    test_size : float
        The audit's test share of each identity's rows.
    kept : int
        Most photographs the chapter keeps of an identity.
    """
    n = int(tradeoff["to_mmd_rows_needed"])
    if n == 0:
        return {"ex3_mmd_claim": "no test size would do, since the largest observed MMD²ᵤ is not positive"}
    photos = int(np.ceil(n / test_size))
    return {"ex3_mmd_claim": (f"it falls below {number(tradeoff['to_mmd2_max'])} from n = {n:,d} test rows per identity "
                              f"on, which at a {test_size:.0%} test share means identities with at least {photos:,d} "
                              f"photographs, {'more than' if photos > kept else 'within'} the {kept:,d} this chapter "
                              "keeps of any identity")}
