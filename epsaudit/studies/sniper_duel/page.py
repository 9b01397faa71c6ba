"""Chapter 2's page: how its numbers are shown (tables, phrases of the prose, the exercises' numbers).

Everything here is presentation: the values come from the section functions of
:mod:`epsaudit.studies.sniper_duel`; this module formats them by one rule (:data:`NUMBER`, used by
the tables and by the prose's glue references alike), gives tables readable labels, and words the
sentences whose claim depends on a number (a phrase is computed from the number, so prose and
table cannot disagree). Phrases are Markdown with their numbers in bold, as the page shows every
glued number; the notebook pastes them with ``{glue:md}``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from ...sniper import DEFAULT_C, attack_cap, design_cap, split_budget

__all__ = ["MECHANISM_NAMES", "NUMBER", "budget_phrases", "caps_view", "count_words", "duel_phrases", "duel_views",
           "exercise_numbers", "fmt", "page_numbers", "table5_phrases", "table5_view", "validity_phrases",
           "validity_view"]

#: The chapter's number format (tables and prose): two decimals, no negative zero (``"z"``).
NUMBER = "z.2f"
#: Mechanism names on the page.
MECHANISM_NAMES = {"laplace": "product Laplace (d = 512)", "randomized_response": "16-ary randomized response"}
_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
_ALPHA = (1 - 0.95) / 4  # each of DP-Sniper's four one-sided bounds (two directions at 95%)


def fmt(value: Any, spec: str = NUMBER) -> str:
    """One number as the page shows it; ``"n/a"`` for a missing value.

    Examples
    --------
    >>> fmt(-0.001), fmt(1.2345), fmt(float("nan")), fmt(0.111, ".0%"), fmt(1200, ",d")
    ('0.00', '1.23', 'n/a', '11%', '1,200')
    """
    if value is None or (isinstance(value, (float, np.floating)) and math.isnan(value)):
        return "n/a"
    return format(int(value) if spec.endswith("d") else float(value), spec)


def _b(value: Any, spec: str = NUMBER) -> str:
    """A number inside a phrase, bold like every glued number of the page."""
    return f"**{fmt(value, spec)}**"


def count_words(n: int, singular: str, plural: str | None = None) -> str:
    """``n`` things in words: ``"one fixed pair"``, ``"three fixed pairs"``, ``"12 fixed pairs"``.

    Examples
    --------
    >>> count_words(1, "fixed pair"), count_words(3, "repetition"), count_words(12, "worker")
    ('one fixed pair', 'three repetitions', '12 workers')
    """
    n = int(n)
    word = _WORDS[n] if 0 <= n < len(_WORDS) else f"{n:,d}"
    return f"{word} {singular if n == 1 else (plural or singular + 's')}"


def _join(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def page_numbers(profile_name: str, profile: Mapping[str, Any], n_jobs: int | None) -> dict[str, Any]:
    """The first screen's and the protocol's words: profile, calls per row, pairs, repetitions, workers.

    Examples
    --------
    >>> page_numbers("smoke", dict(calls=20_000, pairs=1, reps=1), 2)["ch2_protocol"]
    'one fixed pair of each mechanism, run once'
    """
    reps = int(profile["reps"])
    runs = "run once" if reps == 1 else f"each run {count_words(reps, 'time')}"
    pairs = count_words(profile["pairs"], "fixed pair")
    return {"ch2_profile": f"**{profile_name}**", "calls_per_row": int(profile["calls"]),
            "ch2_protocol": f"{pairs} of each mechanism, {runs}",
            "ch2_workers": count_words(n_jobs, "worker") if n_jobs and n_jobs > 0 else "all available workers"}


# ---------------------------------------------------------------------------------------------
# Table 5
# ---------------------------------------------------------------------------------------------

_T5_ROWS = {"exact epsilon (median)": "exact ε (median)", "bound, ours": "raw bound, ours",
            "bound, paper": "raw bound, paper", "ratio, ours": "ratio, ours", "ratio, paper": "ratio, paper",
            "bound, exact-LR score": "raw bound, exact LR"}


def _styled(frame: pd.DataFrame, *, index: bool = True, wrap_header: bool = True):
    """A table as the page shows it: the book's table style, numbers right-aligned with room between
    columns, row labels on one line (column labels too unless ``wrap_header``)."""
    header = "padding: 0.2em 0.45em;" + ("" if wrap_header else " white-space: nowrap;")
    styler = frame.style.set_table_attributes('class="dataframe"').set_table_styles([
        {"selector": "td", "props": "text-align: right; white-space: nowrap; padding: 0.2em 0.45em;"},
        {"selector": "tbody th", "props": "white-space: nowrap; padding: 0.2em 0.45em;"},
        {"selector": "thead th", "props": header},
    ])
    return styler if index else styler.hide(axis="index")


def _epsilon_label(eps: float) -> str:
    return "0 (null)" if eps == 0 else f"{eps:g}"


def table5_view(table: pd.DataFrame, labels: Mapping[str, str]) -> dict[str, Any]:
    """Table 5 as the page shows it, one table per mechanism: readable labels, every number by :data:`NUMBER`.

    Parameters
    ----------
    table : DataFrame
        :func:`epsaudit.studies.sniper_duel.table5`'s table (rows (mechanism label, statistic),
        columns the requested epsilon, NaN where there is no value).
    labels : mapping
        Mechanism key -> the label used in ``table`` (:data:`epsaudit.studies.sniper_duel.LABELS`).

    Returns
    -------
    dict
        Mechanism key -> a Styler whose ``data`` is that mechanism's rows as strings.
    """
    out = {}
    for kind, label in labels.items():
        if label not in table.index.get_level_values(0):
            continue
        part = table.xs(label, level=0)
        view = part.map(fmt)
        view.index = pd.Index([_T5_ROWS.get(s, s) for s in part.index])
        view.columns = pd.Index([_epsilon_label(e) for e in part.columns], name="requested ε")
        out[kind] = _styled(view)
    return out


def _certify_words(raw: float) -> str:
    """What a median raw bound certifies: the certificate is max(0, raw bound)."""
    return "it certifies nothing (certificate 0)" if raw <= 0 or fmt(raw) == "0.00" else f"it certifies {_b(raw)}"


def table5_phrases(numbers: Mapping[str, Any], paper: pd.DataFrame) -> dict[str, str]:
    """The Table 5 sentences whose claim depends on a number.

    Parameters
    ----------
    numbers : mapping
        The ``t5_*`` numbers of :func:`epsaudit.studies.sniper_duel.table5`.
    paper : DataFrame
        :data:`epsaudit.studies.sniper_duel.TABLE5`.

    Returns
    -------
    dict
        ``t5_lap_8_says``, ``t5_lap_32_says`` (what the median run certifies) and
        ``t5_rr_small_phrase`` (randomized response at 0.5 and 2 against the exact value and the
        paper's ratios).
    """
    out = {f"t5_lap_{e}_says": _certify_words(numbers[f"t5_lap_{e}"]) for e in ("8", "32")}
    paper_ratio = paper.xs("ratio", level="statistic").loc["K-ary RR"]
    close, far, above = [], [], []
    for eps, key in ((0.5, "t5_rr_0p5_ratio"), (2.0, "t5_rr_2_ratio")):
        ratio = numbers[key]
        (close if ratio >= 0.8 else far).append(f"{eps:g} (ratio {_b(ratio)})")
        above.append(ratio > paper_ratio[eps])
    parts = []
    if close:
        parts.append(f"at {_join(close)} ours come close to the exact value (the rest is the Clopper–Pearson width)")
    if far:
        parts.append(f"at {_join(far)} ours stay well below it")
    side = ("both above" if all(above) else "both below" if not any(above) else "one above and one below")
    sentence = "; ".join(parts) + (f"; ours are {side} the paper's ratios ({paper_ratio[0.5]:.2f} and "
                                   f"{paper_ratio[2.0]:.2f})")
    out["t5_rr_small_phrase"] = sentence[0].upper() + sentence[1:]
    return out


# ---------------------------------------------------------------------------------------------
# The budget figure
# ---------------------------------------------------------------------------------------------


def budget_phrases(profile: Mapping[str, Any], rows: pd.DataFrame, c: float = DEFAULT_C) -> dict[str, Any]:
    """Where randomized response at requested 32 and product Laplace sit against the two caps.

    Parameters
    ----------
    profile : mapping
        One of the chapter's profiles (``budgets``, ``calls``).
    rows : DataFrame
        The budget figure's rows (:func:`epsaudit.studies.sniper_duel.budget_rows`, second result).

    Returns
    -------
    dict
        ``cap_small``, ``cap_top``, ``design_top`` (nats), ``rr32_phrase``, ``rr32_verdict``,
        ``lap_budget_phrase``.
    """
    small, top = int(min(profile["budgets"])), int(profile["calls"])
    cap = {b: float(attack_cap(split_budget(b).final, _ALPHA, c)) for b in (small, top)}
    design = {b: float(design_cap(split_budget(b).final, _ALPHA, c)) for b in (small, top)}
    rr32 = rows[(rows.mechanism == "randomized_response") & (rows.requested_epsilon == 32.0)]
    med = rr32.groupby("calls")["raw"].median()

    def where(value: float, b: int) -> str:
        near_cap, near_design = abs(value - cap[b]) < 0.05, abs(value - design[b]) < 0.1
        if near_cap and near_design:
            return "where the two curves meet"
        if near_cap:
            return "on the closed-form cap"
        if near_design:
            return "on the dashed curve"
        if value > design[b]:
            return "between the dashed curve and the cap"
        return "below the dashed curve"

    out: dict[str, Any] = {"cap_small": cap[small], "cap_top": cap[top], "design_top": design[top]}
    places = (where(float(med[small]), small), where(float(med[top]), top))
    broken = all(p != "below the dashed curve" for p in places)
    out["rr32_phrase"] = f"sits {places[0]} at **{small:,d}** calls and {places[1]} at **{top:,d}**"
    out["rr32_verdict"] = ("the attack breaks it completely, and the budget and $c$ decide the number" if broken else
                           "the attack does not reach what the budget allows everywhere")
    lap = rows[rows.mechanism == "laplace"].groupby("calls")["raw"].median()
    gap = min(float(design_cap(split_budget(int(b)).final, _ALPHA, c)) - float(v) for b, v in lap.items())
    out["lap_budget_phrase"] = (
        f"stays at least {_b(gap, '.1f')} below the dashed curve at every budget: there the attack, not the "
        "sample size, is the bottleneck" if gap >= 1 else
        f"comes within {_b(gap, '.1f')} of the dashed curve at some budget")
    return out


# ---------------------------------------------------------------------------------------------
# The matched budget
# ---------------------------------------------------------------------------------------------


def caps_view(caps: pd.DataFrame):
    """The caps of both methods per ``n``, with the calls behind them (a Styler without an index).

    Parameters
    ----------
    caps : DataFrame
        Index ``n``, columns ``DP-Sniper cap``, ``reserved-test cap`` (joint certificate) and, when
        present, ``reserved-test cap (Clopper-Pearson)`` (nats).
    """
    n = caps.index.to_numpy()
    view = pd.DataFrame({
        "n": n,
        "calls per pair (4n)": 4 * n,
        "DP-Sniper final calls per input": [split_budget(4 * int(k)).final for k in n],
        "DP-Sniper cap": caps["DP-Sniper cap"].map(fmt).to_numpy(),
        "reserved-test cap, joint": caps["reserved-test cap"].map(fmt).to_numpy(),
    })
    if "reserved-test cap (Clopper-Pearson)" in caps:
        view["reserved-test cap, Clopper-Pearson"] = caps["reserved-test cap (Clopper-Pearson)"].map(fmt).to_numpy()
    return _styled(view, index=False).format(thousands=",")


def duel_views(summary: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The duel summary as one table per mechanism: rows (requested epsilon, n), both methods side by side.

    Parameters
    ----------
    summary : DataFrame
        :func:`epsaudit.studies.sniper_duel.duel_tables`'s summary (index mechanism, requested
        epsilon, n; columns ``exact``, ``sniper_median``, ``reserved_median``, ``sniper_positive``,
        ``reserved_positive``).

    Returns
    -------
    dict
        Mechanism key (``"laplace"``, ``"randomized_response"``) -> its table (a Styler of strings).
    """
    out = {}
    for kind, part in summary.groupby(level="mechanism", sort=False):
        part = part.droplevel("mechanism")
        view = pd.DataFrame({
            ("", "exact ε"): part["exact"].map(fmt),
            ("median certificate", "DP-Sniper"): part["sniper_median"].map(fmt),
            ("median certificate", "reserved"): part["reserved_median"].map(fmt),
            ("pairs certified", "DP-Sniper"): part["sniper_positive"].map(lambda v: fmt(v, ".0%")),
            ("pairs certified", "reserved"): part["reserved_positive"].map(lambda v: fmt(v, ".0%")),
        })
        view.index = pd.MultiIndex.from_tuples([(f"ε = {e:g}", f"n = {n}") for e, n in part.index])
        out[kind] = _styled(view, wrap_header=False)
    return out


def duel_phrases(pairs: pd.DataFrame, numbers: Mapping[str, Any], sizes: Iterable[int]) -> dict[str, str]:
    """The matched-budget sentences whose claim depends on a number.

    Parameters
    ----------
    pairs : DataFrame
        One row per duel: ``mechanism``, ``requested_epsilon``, ``n``, ``DP-Sniper``, ``reserved test``.
    numbers : mapping
        The ``duel_*`` numbers of :func:`epsaudit.studies.sniper_duel.duel_tables`.
    sizes : iterable of int

    Returns
    -------
    dict
        ``both_zero_phrase``, ``duel_lap_phrase``, ``duel_rr8_sentence``, ``duel_rr8_reason`` and
        ``duel_cap_phrase`` (whose cap is higher at the smallest and largest ``n``, and why).
    """
    zero = (pairs["DP-Sniper"] == 0) & (pairs["reserved test"] == 0)
    groups = [("at the exact null", pairs.requested_epsilon == 0),
              ("at requested $\\varepsilon = 0.5$", pairs.requested_epsilon == 0.5),
              ("on product Laplace below requested $\\varepsilon = 32$",
               (pairs.mechanism == "laplace") & (pairs.requested_epsilon < 32))]
    held = [name for name, mask in groups if mask.any() and bool(zero[mask].all())]
    covered = np.zeros(len(pairs), dtype=bool)
    for name, mask in groups:
        if name in held:
            covered |= mask.to_numpy()
    lead = "every duel " if covered.sum() == zero.sum() else "among them every duel "
    out = {"both_zero_phrase": lead + _join(held) if held else "spread over the settings"}
    lap_res, lap_sn = numbers["duel_lap32_reserved_pos"], numbers["duel_lap32_sniper_pos"]
    out["duel_lap_phrase"] = (
        "the reserved test certifies more often: a threshold near the middle of the two score distributions, "
        "as the reserved test picks, uses a few hundred outputs better than a 1% tail"
        if lap_res > lap_sn else "neither method certifies more often")
    sizes = list(sizes)
    by = {"DP-Sniper": [], "the reserved test": [], "neither": []}
    for n in sizes:
        s, r = numbers[f"duel_rr8_sniper_{n}"], numbers[f"duel_rr8_reserved_{n}"]
        winner = "neither" if fmt(s) == fmt(r) else ("DP-Sniper" if s > r else "the reserved test")
        by[winner].append(n)
    parts = []
    for who, ns in by.items():
        if not ns:
            continue
        meds = (f"DP-Sniper {_join([_b(numbers[f'duel_rr8_sniper_{n}']) for n in ns])}, reserved test "
                + _join([_b(numbers[f'duel_rr8_reserved_{n}']) for n in ns]))
        verb = "neither is ahead" if who == "neither" else f"{who} certifies more"
        parts.append(f"at $n$ = {_join([str(n) for n in ns])} {verb} (medians: {meds})")
    sentence = "; ".join(parts)
    out["duel_rr8_sentence"] = sentence[0].upper() + sentence[1:]
    lo, hi = min(sizes), max(sizes)
    if all(f"cap_sniper_{n}" in numbers and f"cap_reserved_{n}" in numbers for n in (lo, hi)):
        out["duel_cap_phrase"] = _cap_phrase([(n, numbers[f"cap_sniper_{n}"], numbers[f"cap_reserved_{n}"])
                                              for n in dict.fromkeys((lo, hi))])
    reserved_ahead = by["the reserved test"]
    out["duel_rr8_reason"] = (
        f"Where the reserved test certifies more, the reason is that DP-Sniper's attack is built to fire with "
        f"probability $c = 1\\%$ under $a'$, so with "
        f"{_join([_b(numbers[f'duel_nfinal_{n}'], ',d') for n in reserved_ahead])} final calls per input it "
        "counts a few firings there and pays their Clopper–Pearson width, while the reserved test separates the "
        "one-hot outputs perfectly and pays only the zero-error width: $c = 0.01$ is tuned for millions of "
        "calls, and at a few hundred it is what limits DP-Sniper."
        if reserved_ahead else
        "DP-Sniper is not behind at any size here, so its small firing probability $c = 0.01$ costs it nothing "
        "at these budgets.")
    return out


def _cap_phrase(caps: list[tuple[int, float, float]]) -> str:
    """Whose zero-error cap is higher, ``caps`` = ``(n, DP-Sniper cap, reserved-test cap)`` rows, and why."""
    higher = {("DP-Sniper" if s > r else "the reserved test") for _, s, r in caps}
    first = "DP-Sniper" if higher == {"DP-Sniper"} else "reserved"
    words = _join([(f"{_b(s)} against {_b(r)}" if first == "DP-Sniper" else f"{_b(r)} against DP-Sniper's {_b(s)}")
                   + f" at $n = {n}$" for n, s, r in caps])
    if higher == {"DP-Sniper"}:
        return (f"DP-Sniper's hard cap is the higher ({words}): it spends 15% of its calls before the final estimate "
                "where the reserved test spends half, and measures on more outputs")
    if higher == {"the reserved test"}:
        return (f"The reserved test's joint certificate has the higher cap ({words}): it tests both error rates at "
                "once at the whole error level, while DP-Sniper splits it over four one-sided bounds, which "
                "outweighs DP-Sniper's larger final sample (85% of its calls against the reserved test's half)")
    return (f"Which cap is higher depends on $n$ ({words}): DP-Sniper measures on more outputs, the joint "
            "certificate uses its error level better")


# ---------------------------------------------------------------------------------------------
# Validity and the exercises
# ---------------------------------------------------------------------------------------------


def validity_view(counts: pd.Series):
    """The validity counts as the page shows them (readable labels, one column).

    Parameters
    ----------
    counts : Series
        :func:`epsaudit.studies.sniper_duel.validity_table`'s counts.
    """
    view = counts.rename(lambda label: label.replace("epsilon", "ε")).to_frame("count")
    return _styled(view).format("{:,d}")


def validity_phrases(numbers: Mapping[str, Any]) -> dict[str, str]:
    """Whether the paper's "none of 324 bounds above the exact value" carries over.

    Examples
    --------
    >>> validity_phrases(dict(v_above=0, v_fam_above=0, v_tol=9))["v_phrase"][:24]
    "The paper's 0 of 324 car"
    """
    if numbers["v_above"] == 0:
        return {"v_phrase": "The paper's 0 of 324 carries over"}
    if numbers["v_fam_above"] <= numbers["v_tol"]:
        return {"v_phrase": "Unlike the paper's 0 of 324, some bounds exceed the truth, but within the binomial "
                            "tolerance"}
    return {"v_phrase": "More families than the binomial tolerance contain a bound above the truth, so something "
                        "is wrong"}


def _first_budget(target: float, cap_of_final, start: int = 100, stop: int = 10**10, points: int = 4000) -> int:
    """Smallest budget (calls per pair) on a fine geometric grid whose cap exceeds ``target``."""
    for b in np.unique(np.geomspace(start, stop, points).round().astype(np.int64)):
        if cap_of_final(split_budget(int(b)).final) > target:
            return int(b)
    raise ValueError(f"no budget up to {stop:,d} reaches {target}")


def _two_digits(n: int) -> int:
    """``n`` rounded to two significant digits (the budget grid is finer than that)."""
    return int(float(f"{n:.2g}"))


def exercise_numbers(learned: pd.DataFrame, n: int = 30, c: float = DEFAULT_C, target: float = 8.0,
                     small_c: float = 1e-4) -> dict[str, Any]:
    """The numbers of the chapter's exercises (closed forms and the Table 5 null rows).

    Parameters
    ----------
    learned : DataFrame
        The learned Table 5 rows (two per pair-run: both directions).
    n : int
        The matched budget's ``n`` of the cap exercise (``4 n`` calls per pair).
    c : float
        DP-Sniper's firing probability.
    target : float
        The epsilon to certify in the small-``c`` exercise.
    small_c : float
        The smaller ``c`` tried there.

    Returns
    -------
    dict
        ``ex_c_needed`` (largest ``c`` with ``log(1/c) > target``), ``ex_cap_small_c``
        (``log(1/small_c)``), ``ex_budget_cap`` and ``ex_budget_design`` (calls per pair at which
        the closed-form cap and the dashed curve first exceed ``target`` with ``small_c``, two
        significant digits),
        ``ex_null_runs`` and ``ex_null_positive`` (null pair-runs and those with a positive
        certificate), ``ex_null_allowed`` (5% of them), ``ex_null_raw_min`` and ``ex_null_raw_max``
        (their raw bounds, nats); ``ex_train_<n>``, ``ex_threshold_<n>`` (DP-Sniper's split of ``4 n``)
        and ``ex_upper_<n>`` (the zero-count upper bound ``1 - alpha^(1/n_final)``).
    """
    split = split_budget(4 * int(n))
    null = learned[learned.requested_epsilon == 0]
    runs = null.assign(run=np.arange(len(null)) // 2).groupby("run")["value"].max()
    return {
        "ex_c_needed": math.exp(-target), "ex_target": target, "ex_small_c": small_c,
        "ex_cap_small_c": math.log(1 / small_c),
        "ex_budget_cap": _two_digits(_first_budget(target, lambda k: attack_cap(k, _ALPHA, small_c))),
        "ex_budget_design": _two_digits(_first_budget(target, lambda k: design_cap(k, _ALPHA, small_c), start=10**4)),
        "ex_null_runs": int(len(runs)), "ex_null_positive": int((runs > 0).sum()), "ex_null_allowed": 0.05 * len(runs),
        f"ex_train_{n}": split.train, f"ex_threshold_{n}": split.threshold,
        f"ex_upper_{n}": float(-np.expm1(np.log(_ALPHA) / split.final)),
        "ex_null_raw_min": float(null["raw"].min()), "ex_null_raw_max": float(null["raw"].max()),
        "ex_c_now": c, "ex_cap_now": math.log(1 / c),
    }
