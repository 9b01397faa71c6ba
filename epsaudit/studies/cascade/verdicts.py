"""Chapter 4, the verdicts: each prediction of the operator model against the measured cascade
(*Toward Interpretable Privacy Guarantees in Face-Swapping Anonymization*, Sections VII-C and
VIII-B), and the operational reading (how many passes until the excess is negligible).

The rules are explicit numbers, the module constants below (``RATE_*``, ``FLOOR_*``,
``DOMINANCE_*``, ``PERSIST_*``), fixed before the corpora were analysed. One function per
prediction (:func:`verdict_two_rate_decay`, :func:`verdict_floor`,
:func:`verdict_first_pass_dominance`, :func:`verdict_persistent_directions`,
:func:`verdict_tool_ordering`) returns one table row; :func:`prediction_verdicts` collects them.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

__all__ = ["RATE_FIRST_TOL", "RATE_LATE_TOL", "LATE_RATIO_PASSES", "FLOOR_TOL_CONFIRMED", "FLOOR_TOL_PARTLY",
           "DOMINANCE_CONFIRMED", "DOMINANCE_PARTLY", "DOMINANCE_FIRST_SHARE", "PERSIST_ALPHA", "PERSIST_MIN_RHO",
           "VERDICTS", "VERDICT_COLUMNS", "late_ratio", "verdict_two_rate_decay", "verdict_floor",
           "verdict_first_pass_dominance", "verdict_persistent_directions", "verdict_tool_ordering",
           "prediction_verdicts", "verdict_sensitivity", "passes_to_excess"]

# ---- verdict rules (paper, Sections VII-C and VIII-B); fixed before looking at the corpora ----
#: Prediction 1: the first excess ratio must lie within this absolute distance of ``b_u``.
RATE_FIRST_TOL = 0.10
#: Prediction 1: the late excess ratio must lie within this absolute distance of ``rho(B)``.
RATE_LATE_TOL = 0.05
#: Prediction 1 and 5: the late ratio is the mean of the excess ratios of the last this-many passes.
LATE_RATIO_PASSES = 2
#: Prediction 2: ``|measured floor - Lyapunov floor|`` as a fraction of the pass-0 excess, for
#: "confirmed" and for "partly".
FLOOR_TOL_CONFIRMED = 0.05
FLOOR_TOL_PARTLY = 0.15
#: Prediction 3: (drop at pass 1) / (drop over passes 2..K) at least this, and the first pass
#: removing at least :data:`DOMINANCE_FIRST_SHARE` of the pass-0 excess, for "confirmed"; a ratio
#: above ``DOMINANCE_PARTLY`` (the first pass removes more than all later ones together) for "partly".
DOMINANCE_CONFIRMED = 3.0
DOMINANCE_PARTLY = 1.0
DOMINANCE_FIRST_SHARE = 0.5
#: Prediction 4: Spearman correlations of target alignment with pass-1 leakage and with survival
#: must be positive at this one-sided-in-sign, two-sided-in-p significance level ...
PERSIST_ALPHA = 0.05
#: ... and at least this large for "confirmed" (the paper: 0.21 and 0.11, "weak support only").
PERSIST_MIN_RHO = 0.3
VERDICTS = ("confirmed", "partly", "not confirmed")
VERDICT_COLUMNS = ["prediction", "variant", "expected", "measured", "verdict", "rule"]


def late_ratio(frame: pd.DataFrame, column: str = "excess_ratio") -> float:
    """Mean of the last :data:`LATE_RATIO_PASSES` excess ratios (NaN without any).

    Examples
    --------
    >>> round(late_ratio(pd.DataFrame({"excess_ratio": [None, 0.2, 0.8, 0.9]})), 6)
    0.85
    """
    r = frame[column].dropna().astype(float).to_numpy()
    return float(np.mean(r[-LATE_RATIO_PASSES:])) if len(r) else float("nan")


def _count_verdict(hits: int, total: int) -> str:
    return "confirmed" if hits == total else ("partly" if hits >= total - 1 and hits > 0 else "not confirmed")


def _ratios(measured: pd.DataFrame) -> np.ndarray:
    return measured.sort_values("pass")["excess_ratio"].dropna().astype(float).to_numpy()


def verdict_two_rate_decay(measured: pd.DataFrame, spectra: Mapping[str, float], variant: str) -> dict[str, Any]:
    """Prediction 1, two-rate decay: the first excess ratio near ``b_u``, the late one near ``rho(B)``.

    Three checks - (a) ``|r_1 - b_u| <= RATE_FIRST_TOL``, (b) ``|r_late - rho(B)| <= RATE_LATE_TOL``,
    (c) shape: ``r_1 < r_late`` and every ratio in (0, 1) (the excess falls at every pass and stays
    positive). All three: confirmed; two: partly; otherwise not confirmed.

    Parameters
    ----------
    measured : pandas.DataFrame
        :func:`~epsaudit.studies.cascade.scores.cascade_series` of the measured cascade.
    spectra : mapping
        With ``rho_B`` and ``b_u``.
    variant : str

    Returns
    -------
    dict
        One row: :data:`VERDICT_COLUMNS`.

    Examples
    --------
    >>> m = pd.DataFrame({"pass": range(4), "excess_ratio": [None, 0.15, 0.85, 0.9]})
    >>> verdict_two_rate_decay(m, {"rho_B": 0.88, "b_u": 0.18}, "ff")["verdict"]
    'confirmed'
    """
    m = measured.sort_values("pass")
    rho, bu = float(spectra["rho_B"]), float(spectra["b_u"])
    ratios = _ratios(m)
    r1, rl = (float(ratios[0]) if len(ratios) else float("nan")), late_ratio(m)
    checks = [abs(r1 - bu) <= RATE_FIRST_TOL, abs(rl - rho) <= RATE_LATE_TOL,
              bool(len(ratios) and r1 < rl and np.all((ratios > 0) & (ratios < 1)))]
    return {"prediction": "1 two-rate decay", "variant": variant,
            "expected": f"first ratio ~ b_u = {bu:.3f}; late ratio -> rho(B) = {rho:.3f}",
            "measured": f"ratios {', '.join(f'{x:.3f}' for x in ratios)}; first {r1:.3f}, late {rl:.3f}",
            "verdict": _count_verdict(sum(map(bool, checks)), 3),
            "rule": f"(a) |r1 - b_u| <= {RATE_FIRST_TOL}, (b) |late - rho(B)| <= {RATE_LATE_TOL} "
                    f"(late = mean of last {LATE_RATIO_PASSES} ratios), (c) r1 < late, all ratios in (0, 1); "
                    "3/3 confirmed, 2/3 partly"}


def verdict_floor(measured: pd.DataFrame, lyapunov_floor: float, variant: str) -> dict[str, Any]:
    """Prediction 2, the floor: the measured non-member floor equals the model's Lyapunov floor.

    ``|floor_pooled - lyapunov_floor| <= FLOOR_TOL_CONFIRMED * E_0`` confirmed,
    ``<= FLOOR_TOL_PARTLY * E_0`` partly, else not confirmed (``floor_pooled``: the measured
    median non-member score over passes >= 1; ``E_0`` the pass-0 excess).

    Parameters
    ----------
    measured : pandas.DataFrame
        :func:`~epsaudit.studies.cascade.scores.cascade_series`.
    lyapunov_floor : float
        :func:`~epsaudit.studies.cascade.operator_study.model_predictions`' ``lyapunov_floor``.
    variant : str

    Returns
    -------
    dict
        One row: :data:`VERDICT_COLUMNS`.

    Examples
    --------
    >>> m = pd.DataFrame({"pass": [0, 1], "excess": [0.6, 0.1], "floor_pooled": 0.006, "auc": [0.9, 0.8]})
    >>> verdict_floor(m, 0.0055, "ff")["verdict"]
    'confirmed'
    """
    m = measured.sort_values("pass")
    e0 = float(m["excess"].iloc[0])
    measured_floor = float(m["floor_pooled"].iloc[0])
    lyap = float(lyapunov_floor)
    gap = abs(measured_floor - lyap)
    verdict = ("confirmed" if gap <= FLOOR_TOL_CONFIRMED * abs(e0) else
               "partly" if gap <= FLOOR_TOL_PARTLY * abs(e0) else "not confirmed")
    aucs = m["auc"].astype(float).to_numpy()
    return {"prediction": "2 floor", "variant": variant,
            "expected": f"non-member floor = Lyapunov floor {lyap:.4f}",
            "measured": f"floor {measured_floor:.4f} (gap {gap:.4f} = {gap / abs(e0):.1%} of pass-0 excess "
                        f"{e0:.3f}); pass-{int(m['pass'].iloc[-1])} excess {float(m['excess'].iloc[-1]):.4f}; "
                        f"AUC {aucs[1] if len(aucs) > 1 else aucs[0]:.3f} -> {aucs[-1]:.3f}",
            "verdict": verdict,
            "rule": f"|floor - Lyapunov| <= {FLOOR_TOL_CONFIRMED} x pass-0 excess confirmed, "
                    f"<= {FLOOR_TOL_PARTLY} x partly"}


def verdict_first_pass_dominance(measured: pd.DataFrame, variant: str) -> dict[str, Any]:
    """Prediction 3, first-pass dominance: the first pass removes most of the similarity.

    ``D = (L_0 - L_1) / (L_1 - L_K)`` (``inf`` when later passes remove nothing while the first
    does) and ``f = (L_0 - L_1) / E_0``; ``D >= DOMINANCE_CONFIRMED`` and
    ``f >= DOMINANCE_FIRST_SHARE`` confirmed, ``D > DOMINANCE_PARTLY`` partly, else not confirmed.

    Parameters
    ----------
    measured : pandas.DataFrame
        :func:`~epsaudit.studies.cascade.scores.cascade_series` (``leakage``, ``excess``).
    variant : str

    Returns
    -------
    dict
        One row: :data:`VERDICT_COLUMNS`.

    Examples
    --------
    >>> m = pd.DataFrame({"pass": range(3), "leakage": [0.616, 0.091, 0.047], "excess": [0.61, 0.085, 0.041]})
    >>> verdict_first_pass_dominance(m, "ff")["verdict"]
    'confirmed'
    """
    m = measured.sort_values("pass")
    e0 = float(m["excess"].iloc[0])
    lk = m["leakage"].astype(float).to_numpy()
    first, later = lk[0] - lk[1], lk[1] - lk[-1]
    ratio = first / later if later > 0 else (float("inf") if first > 0 else float("nan"))
    share = first / e0 if e0 > 0 else float("nan")
    verdict = ("confirmed" if ratio >= DOMINANCE_CONFIRMED and share >= DOMINANCE_FIRST_SHARE else
               "partly" if ratio > DOMINANCE_PARTLY else "not confirmed")
    return {"prediction": "3 first-pass dominance", "variant": variant,
            "expected": "the first pass removes most similarity; later passes combined far less",
            "measured": f"pass 1 removes {first:.3f} ({share:.0%} of the pass-0 excess), passes "
                        f"2..{len(lk) - 1} remove {later:.3f} (ratio {ratio:.1f})",
            "verdict": verdict,
            "rule": f"D = (L0 - L1) / (L1 - LK) >= {DOMINANCE_CONFIRMED} and (L0 - L1) / E0 >= "
                    f"{DOMINANCE_FIRST_SHARE} confirmed; D > {DOMINANCE_PARTLY} partly"}


def _significant(persistent: Mapping[str, Any], rho_key: str, p_key: str) -> tuple[bool, bool]:
    """(positive and significant, and also at least :data:`PERSIST_MIN_RHO`)."""
    r_, p_ = persistent.get(rho_key), persistent.get(p_key)
    if r_ is None or p_ is None or r_ is pd.NA or p_ is pd.NA:
        return False, False
    ok = float(r_) > 0 and float(p_) < PERSIST_ALPHA
    return ok, ok and float(r_) >= PERSIST_MIN_RHO


def _num(x: Any) -> str:
    return "NA" if x is None or x is pd.NA else f"{float(x):.3g}"


def verdict_persistent_directions(persistent: Mapping[str, Any], variant: str) -> dict[str, Any]:
    """Prediction 4, persistent directions: targets aligned with B's dominant eigenspace leak more
    and survive longer.

    Spearman of alignment with pass-1 leakage and with survival; both positive with
    ``p < PERSIST_ALPHA`` and ``>= PERSIST_MIN_RHO``: confirmed; at least one positive with
    ``p < PERSIST_ALPHA``: partly; else not confirmed.

    Parameters
    ----------
    persistent : mapping
        :func:`~epsaudit.studies.cascade.operator_study.persistent_directions`.
    variant : str

    Returns
    -------
    dict
        One row: :data:`VERDICT_COLUMNS`.

    Examples
    --------
    >>> pr = {"rho_pass1": 0.21, "p_pass1": 1e-5, "rho_survival": 0.11, "p_survival": 0.2, "n": 478}
    >>> verdict_persistent_directions(pr, "ff")["verdict"]
    'partly'
    """
    s1, strong1 = _significant(persistent, "rho_pass1", "p_pass1")
    s2, strong2 = _significant(persistent, "rho_survival", "p_survival")
    verdict = "confirmed" if strong1 and strong2 else ("partly" if s1 or s2 else "not confirmed")
    pr = persistent
    return {"prediction": "4 persistent directions", "variant": variant,
            "expected": "targets aligned with B's dominant eigenspace leak more and survive longer",
            "measured": f"Spearman pass-1 {_num(pr.get('rho_pass1'))} (p {_num(pr.get('p_pass1'))}), "
                        f"survival {_num(pr.get('rho_survival'))} (p {_num(pr.get('p_survival'))}), "
                        f"n {pr.get('n')}",
            "verdict": verdict,
            "rule": f"both rho > 0 with p < {PERSIST_ALPHA} and rho >= {PERSIST_MIN_RHO} confirmed; "
                    f"one rho > 0 with p < {PERSIST_ALPHA} partly"}


def verdict_tool_ordering(measured: Mapping[str, pd.DataFrame], spectra: Mapping[str, Mapping[str, float]]
                          ) -> dict[str, Any]:
    """Prediction 5, tool ordering: a larger ``rho(B)`` means a slower tail (one row over all variants).

    For every pair of variants the sign of the ``rho(B)`` difference must match (a) the sign of the
    late-ratio difference and (b) the sign of the tail-survival difference ``E_K / E_1``. Both for
    every pair: confirmed; one: partly; else not confirmed.

    Parameters
    ----------
    measured : mapping variant -> DataFrame
        Two or more :func:`~epsaudit.studies.cascade.scores.cascade_series`.
    spectra : mapping variant -> mapping
        With ``rho_B``.

    Returns
    -------
    dict
        One row: :data:`VERDICT_COLUMNS` (``variant`` lists the variants).

    Examples
    --------
    >>> slow = pd.DataFrame({"pass": range(3), "excess_ratio": [None, 0.2, 0.9], "excess": [0.5, 0.1, 0.09]})
    >>> fast = pd.DataFrame({"pass": range(3), "excess_ratio": [None, 0.2, 0.5], "excess": [0.5, 0.1, 0.05]})
    >>> verdict_tool_ordering({"a": slow, "b": fast}, {"a": {"rho_B": 0.9}, "b": {"rho_B": 0.5}})["verdict"]
    'confirmed'
    """
    variants = list(measured)
    rho = {v: float(spectra[v]["rho_B"]) for v in variants}
    late = {v: late_ratio(measured[v].sort_values("pass")) for v in variants}
    surv = {}
    for v in variants:
        e = measured[v].sort_values("pass")["excess"].astype(float).to_numpy()
        surv[v] = e[-1] / e[1] if len(e) > 1 and e[1] != 0 else float("nan")
    pairs = [(a, b) for i, a in enumerate(variants) for b in variants[i + 1:]]
    agree_late = all(np.sign(rho[a] - rho[b]) == np.sign(late[a] - late[b]) for a, b in pairs)
    agree_surv = all(np.sign(rho[a] - rho[b]) == np.sign(surv[a] - surv[b]) for a, b in pairs)
    hits = int(agree_late) + int(agree_surv)
    order = sorted(variants, key=lambda v: -rho[v])
    return {"prediction": "5 tool ordering", "variant": ", ".join(variants),
            "expected": "slower tail for larger rho(B): " + " > ".join(f"{v} ({rho[v]:.3f})" for v in order),
            "measured": "late ratio " + ", ".join(f"{v} {late[v]:.3f}" for v in order)
                        + "; tail survival E_K/E_1 " + ", ".join(f"{v} {surv[v]:.3f}" for v in order),
            "verdict": "confirmed" if hits == 2 else ("partly" if hits == 1 else "not confirmed"),
            "rule": "for every pair of variants sign(d rho) = sign(d late ratio) and = sign(d E_K/E_1); "
                    "both confirmed, one partly"}


def prediction_verdicts(measured: Mapping[str, pd.DataFrame], predicted: Mapping[str, pd.DataFrame],
                        spectra: Mapping[str, Mapping[str, float]], persistent: Mapping[str, Mapping[str, Any]]
                        ) -> pd.DataFrame:
    """The paper's five predictions (Sections VII-C and VIII-B), one verdict each per variant.

    Predictions 1-4 per variant (:func:`verdict_two_rate_decay`, :func:`verdict_floor`,
    :func:`verdict_first_pass_dominance`, :func:`verdict_persistent_directions`), then prediction 5
    over all variants when there are two or more (:func:`verdict_tool_ordering`).

    Parameters
    ----------
    measured : mapping variant -> DataFrame
        :func:`~epsaudit.studies.cascade.scores.cascade_series` of the measured cascade.
    predicted : mapping variant -> DataFrame
        :func:`~epsaudit.studies.cascade.operator_study.model_predictions` (its ``lyapunov_floor`` is used).
    spectra : mapping variant -> dict
        With ``rho_B`` and ``b_u`` (``OperatorStudy.spectra``).
    persistent : mapping variant -> dict
        :func:`~epsaudit.studies.cascade.operator_study.persistent_directions`.

    Returns
    -------
    pandas.DataFrame
        ``prediction``, ``variant``, ``expected``, ``measured``, ``verdict`` (one of
        :data:`VERDICTS`), ``rule``.

    Raises
    ------
    ValueError
        Variants missing from ``predicted``/``spectra``/``persistent``.
    """
    variants = list(measured)
    for name, mapping in (("predicted", predicted), ("spectra", spectra), ("persistent", persistent)):
        missing = [v for v in variants if v not in mapping]
        if missing:
            raise ValueError(f"{name} lacks variant(s) {missing}")
    rows = []
    for v in variants:
        rows += [verdict_two_rate_decay(measured[v], spectra[v], v),
                 verdict_floor(measured[v], float(predicted[v]["lyapunov_floor"].iloc[0]), v),
                 verdict_first_pass_dominance(measured[v], v),
                 verdict_persistent_directions(persistent[v], v)]
    if len(variants) >= 2:
        rows.append(verdict_tool_ordering(measured, spectra))
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)


def verdict_sensitivity(measured: Mapping[str, pd.DataFrame], determination: Mapping[str, pd.DataFrame]
                        ) -> pd.DataFrame:
    """Would prediction 1's checks (a) and (b) come out the same at every penalty the cross-validation
    cannot tell apart from the chosen one?

    Check (a) compares the first measured excess ratio with ``b_u``, check (b) the late ratio with
    ``rho(B)`` (:func:`verdict_two_rate_decay`); both fitted numbers move with the ridge penalty. Over
    the one-standard-error range ``[low, high]`` of the fitted number
    (:func:`epsaudit.operator.penalty_determination`) the distance to the measured ratio ranges over
    ``[min, max]``; the check *holds throughout* if ``max <= tol``, *fails throughout* if
    ``min > tol``, and otherwise *depends on the penalty*: the data do not decide it (*no measured
    ratio* when the cascade has too few passes for the ratio).

    Parameters
    ----------
    measured : mapping variant -> DataFrame
        :func:`~epsaudit.studies.cascade.scores.cascade_series`.
    determination : mapping variant -> DataFrame
        ``OperatorStudy.determination``.

    Returns
    -------
    pandas.DataFrame
        ``variant``, ``check``, ``measured`` (the ratio), ``quantity``, ``low``, ``high``,
        ``distance_min``, ``distance_max``, ``tolerance``, ``outcome``.

    Raises
    ------
    ValueError
        Variants missing from ``determination``.
    """
    missing = [v for v in measured if v not in determination]
    if missing:
        raise ValueError(f"determination lacks variant(s) {missing}")
    rows = []
    for v, m in measured.items():
        m = m.sort_values("pass")
        ratios = _ratios(m)
        checks = (("(a) first ratio ~ b_u", float(ratios[0]) if len(ratios) else float("nan"), "b_u", RATE_FIRST_TOL),
                  ("(b) late ratio ~ rho(B)", late_ratio(m), "rho_B", RATE_LATE_TOL))
        for name, ratio, quantity, tol in checks:
            low, high = (float(determination[v].loc[quantity, k]) for k in ("low", "high"))
            near = 0.0 if low <= ratio <= high else min(abs(ratio - low), abs(ratio - high))
            far = max(abs(ratio - low), abs(ratio - high))
            outcome = ("no measured ratio" if not np.isfinite(ratio) else "holds throughout" if far <= tol
                       else "fails throughout" if near > tol else "depends on the penalty")
            rows.append({"variant": v, "check": name, "measured": ratio, "quantity": quantity, "low": low,
                         "high": high, "distance_min": near, "distance_max": far, "tolerance": tol,
                         "outcome": outcome})
    return pd.DataFrame(rows)


def passes_to_excess(excess_last: float, last_pass: int, rate: float, threshold: float = 0.01) -> int:
    """First pass ``k >= last_pass`` with ``excess_last * rate ** (k - last_pass) < threshold``.

    The paper's extrapolation of the confirmed tail rate (Section VIII-B: ~18-20 passes for
    FaceFusion).

    Parameters
    ----------
    excess_last : float
        Excess leakage at ``last_pass`` (> 0).
    last_pass : int
    rate : float in (0, 1)
        Per-pass ratio of the tail (e.g. the late excess ratio or ``rho(B)``).
    threshold : float > 0

    Returns
    -------
    int
        ``last_pass`` if the excess is already below the threshold.

    Raises
    ------
    ValueError
        ``rate`` outside (0, 1), a non-positive or non-finite ``excess_last`` or ``threshold``.

    Examples
    --------
    >>> passes_to_excess(0.05, 5, 0.9)
    21
    """
    if not (np.isfinite(rate) and 0.0 < rate < 1.0):
        raise ValueError(f"rate must lie in (0, 1) for the excess to vanish, got {rate}")
    if not (np.isfinite(excess_last) and excess_last > 0):
        raise ValueError(f"excess_last must be positive and finite, got {excess_last}")
    if not (np.isfinite(threshold) and threshold > 0):
        raise ValueError(f"threshold must be positive, got {threshold}")
    if excess_last < threshold:
        return int(last_pass)
    n = max(int(np.floor(np.log(threshold / excess_last) / np.log(rate))), 0)
    while excess_last * rate ** n >= threshold:  # guard floating point at exact powers
        n += 1
    while n > 0 and excess_last * rate ** (n - 1) < threshold:
        n -= 1
    return int(last_pass) + n
