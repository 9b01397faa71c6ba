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

from typing import Any, Mapping

import numpy as np
import pandas as pd
from scipy import stats

from ...bounds import bonferroni_alpha, certifiable_cap
from ...settings import AuditSettings
from . import DIAGNOSTICS, MIA, TABLE2
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
    f, r = numbers["dppix_fallbacks"], numbers["dppix_rows"]
    if f == r:
        dp = f"Pixelised images defeat both face detectors: all {r:,d} `dp-pix` rows were encoded from the whole image"
    elif 2 * f > r:
        dp = f"Pixelised images mostly defeat the face detectors: {f:,d} of {r:,d} `dp-pix` rows were encoded from the whole image"
    else:
        dp = f"The face detectors found most pixelised faces: {f:,d} of {r:,d} `dp-pix` rows were encoded from the whole image"
    return {"da_prefix": prefix, "da_dppix": dp}


def table2_claims(t2: pd.DataFrame) -> dict[str, str]:
    """Table 2's claims: MMD-TV against one and against the paper's range, how far the 500-pair medians move,
    and where MMD-TV's maximum over 500 pairs exceeds one."""
    out: dict[str, str] = {}
    med = t2["MMD-TV"]
    above = int((med >= 1).sum())
    out["t2_mmd_claim"] = ("stays below one" if above == 0 else f"reaches one or more in {above} condition(s)")
    lo_p, hi_p = float(TABLE2["MMD-TV"].min()), float(TABLE2["MMD-TV"].max())
    parts = []
    for gen in ("none", "swap", "dp-pix"):
        v = t2.xs(gen, level="generator")["MMD-TV"]
        rel = _relation(float(v.min()), float(v.max()), lo_p, hi_p)
        rng = f"{number(float(v.min()))}–{number(float(v.max()))}"
        parts.append(f"{'it overlaps the paper range' if rel == 'overlaps' else rel + ' the paper'} for `{gen}` ({rng})")
    out["t2_mmd_vs_paper"] = "; ".join(parts)
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
    out["t3_story"] = "reappears" if pos == 0 else "reappears only in part"
    return out


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
    out = {"sw_most": (f"most often for {enc.index[0]} ({enc.iloc[0]:,d} rejections over its conditions, against "
                       f"{enc.iloc[1]:,d} for {enc.index[1]}) and, by generator, for `{gen.index[0]}` ({gen.iloc[0]:,d}, "
                       f"against {gen.iloc[1]:,d} for `{gen.index[1]}` and {gen.iloc[2]:,d} for `{gen.index[2]}`)")}
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
    dp = checks.xs("dp-pix", level="generator")["logistic - forest"].astype(float)
    lo, hi = number(float(dp.min())), number(float(dp.max()))
    if (dp > 0).all():
        out["rf_dp_claim"] = f"the logistic regression is better in all {len(dp)} conditions, by {lo} to {hi} in mean AUC"
    elif (dp < 0).all():
        out["rf_dp_claim"] = f"the forest is better in all {len(dp)} conditions (logistic minus forest {lo} to {hi})"
    else:
        by_enc = dp.groupby(level="encoder").mean()
        winner = {e: "the logistic regression" if v > 0 else "the forest" for e, v in by_enc.items()}
        if len(set(winner.values())) == 1:
            average = f"on average {next(iter(winner.values()))} is better for both encoders"
        else:
            average = "on average " + ", ".join(f"{w} is better for {e}" for e, w in winner.items())
        out["rf_dp_claim"] = f"they disagree in both directions, from {lo} to {hi} (logistic minus forest; {average})"
    paper = max(abs(DIAGNOSTICS["rf_difference_min"]), abs(DIAGNOSTICS["rf_difference_max"]))
    out["rf_dp_size"] = ("by more than the paper's check would suggest" if float(dp.abs().max()) > paper
                         else "by no more than the paper's check found")
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


def membership_claims(numbers: Mapping[str, Any]) -> dict[str, str]:
    """The membership claims: how much the swap suppresses against the paper, centring, donor dominance, and
    the max against the median aggregate."""
    n = numbers
    out: dict[str, str] = {}
    less = n["mia_dlib_drop"] < n["paper_drop"] and n["mia_sface_drop"] < n["paper_drop"]
    more = n["mia_dlib_drop"] > n["paper_drop"] and n["mia_sface_drop"] > n["paper_drop"]
    out["mia_suppress"] = ("our classical swap suppresses less" if less else "our classical swap suppresses more"
                           if more else "our classical swap suppresses about as much")
    raw, centred = n["mia_dlib_raw_auc"], n["mia_dlib_auc_median"]
    out["mia_centring"] = (f"Centring {'raises' if centred > raw else 'lowers' if centred < raw else 'leaves'} "
                           f"dlib's AUC: on raw cosines it is {number(raw)}")
    w, paper = n["mia_dlib_donor_wins"], MIA["donor_dominated_min_fraction"]
    out["mia_dlib_donor_claim"] = (
        f"Under dlib the swap is {'mostly donor-dominated' if w > 0.5 else 'mostly target-dominated'} "
        f"({number(100 * w, 1)}% of swaps score higher against the donor than against their target), "
        + ("if less so than" if w < paper else "as much as") + " the paper's five anonymising tools (over 93%)")
    s = n["mia_sface_donor_wins"]
    out["mia_sface_donor_claim"] = f"Under SFace {'only ' if s < w else ''}{number(100 * s, 1)}% do"
    strength = "near-perfect" if n["mia_sface_auc_median"] >= 0.99 else "high"
    out["mia_sface_verdict"] = (
        "SFace evidently reads identity largely from what the warp keeps of the target (face outline, landmark "
        "geometry, skin tone after blending), so by that paper's working definition this swap fails as an anonymiser "
        f"for SFace, like DiffSwap and FaceShifter there, and its {strength} membership numbers belong beside those "
        "two tools (DiffSwap: 96.7% TPR at 1% FPR), not beside FaceFusion" if s < 0.5 else
        "by that paper's working definition the swap transfers the donor's identity under SFace too")
    a_max, a_med, m_max = n["mia_dlib_auc_max"], n["mia_dlib_auc_median"], n["mia_dlib_matched_auc_max"]
    t_med, t_max = n["mia_dlib_matched_tpr01_median"], n["mia_dlib_matched_tpr01_max"]
    first = (f"The max aggregate looks {'stronger' if a_max > a_med else 'no stronger'} than the median with full "
             f"galleries (dlib AUC {number(a_max)} against {number(a_med)})")
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
    gens = (("none", "none"), ("swap", "swap"), ("dp", "dp-pix"))
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
                                f"best {certificate(n['to_best_none'])} against {certificate(n['to_reserved_none'])} "
                                f"for `none`). A band divides the pair's error budget among its {points} thresholds; "
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


def exercise_numbers(family: int, confidence: float, delta: float, membership: Mapping[str, Any]) -> dict[str, Any]:
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
        n = next(k for k in range(2, 10_000) if certifiable_cap(k, k, alpha, delta) > 1)
        out[f"ex3_rows_above1_{key}"] = int(n)
        out[f"ex3_cap30_{key}"] = float(certifiable_cap(30, 30, alpha, delta))
    swaps = int(membership["mia_swaps"])
    for enc in ("dlib", "sface"):
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
