"""The summary table of a condition's per-pair results, and the notes on pairs not computed.

:func:`summarize` turns the per-pair frame of :func:`epsaudit.condition.audit_condition` (or of any
batch of route results, :func:`epsaudit.results.results_frame`) into one row per route with its
kind and median; :func:`not_computed_notes` says, per route, which pairs could not be computed and
why, naming the source file and the identities (what the command line prints).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["SUMMARY_COLUMNS", "ROUTE_NAMES", "not_computed_notes", "summarize"]

SUMMARY_COLUMNS = ("route", "kind", "statistic", "pairs", "not_computed", "value", "max", "kde_alpha", "n_infinite",
                   "median_auc", "identity_a", "identity_b", "n_test_a", "n_test_b", "confidence",
                   "alpha_per_bound", "bound", "cap")

ROUTE_NAMES = {"gaussmech": "GaussMech", "kde_lr": "KDE-LR", "mmd_tv": "MMD-TV", "roc_oof": "ROC-HT out-of-fold",
               "roc_reserved": "reserved-test certificate", "worst_pair": "worst-pair certificate",
               "tradeoff_reserved": "trade-off certificate"}


def not_computed_notes(per_pair: pd.DataFrame, *, source: str = "<groups>", limit: int = 4) -> list[str]:
    """Lines naming, per route and reason, the pairs a route could not compute.

    Parameters
    ----------
    per_pair : pandas.DataFrame
        A per-pair frame (:func:`epsaudit.results.results_frame`) with a ``not_computed`` column.
    source : str
        The file audited, named in every line.
    limit : int
        Pairs listed per line (the rest are counted).

    Returns
    -------
    list of str
        Empty when every pair was computed.

    Examples
    --------
    >>> from epsaudit.results import EpsilonResult, results_frame
    >>> frame = results_frame([EpsilonResult(0.0, "diagnostic", "kde_lr", (5, 5), pair=("A", "B"),
    ...                                      not_computed="coordinate 0 is constant within identity 'B'")])
    >>> not_computed_notes(frame, source="t.csv")
    ["t.csv: KDE-LR not computed for 1 of 1 pair(s): coordinate 0 is constant within identity 'B'; pairs ('A', 'B')"]
    """
    if "not_computed" not in per_pair or per_pair["not_computed"].isna().all():
        return []
    lines = []
    for route, part in per_pair.groupby("route", sort=False):
        total = len(part.drop_duplicates(["identity_a", "identity_b"]))
        failed = part[part["not_computed"].notna()].drop_duplicates(["identity_a", "identity_b", "not_computed"])
        for reason, rows in failed.groupby("not_computed", sort=False):
            pairs = [f"({a!r}, {b!r})" for a, b in zip(rows["identity_a"], rows["identity_b"])]
            shown = ", ".join(pairs[:limit]) + (f" and {len(pairs) - limit} more" if len(pairs) > limit else "")
            lines.append(f"{source}: {ROUTE_NAMES.get(route, route)} not computed for {len(pairs)} of {total} "
                         f"pair(s): {reason}; pairs {shown}")
    return lines


def _route_row(frame: pd.DataFrame, route: str, kind: str, **extra: Any) -> dict[str, Any]:
    done = frame[frame["not_computed"].isna()]
    values = done["value"].to_numpy(dtype=float)
    return {"route": route, "kind": kind, "statistic": "median", "pairs": len(values),
            "not_computed": len(frame) - len(done),
            "value": float(np.median(values)) if len(values) else pd.NA,
            "max": float(np.max(values)) if len(values) else pd.NA, **extra}


def summarize(per_pair: pd.DataFrame) -> pd.DataFrame:
    """Condense a per-pair frame (as in :class:`ConditionAudit`) into the summary table.

    Medians and maxima are over the pairs each route computed; ``pairs`` counts them and
    ``not_computed`` counts the pairs it could not compute (their reasons are in the per-pair
    frame's ``not_computed`` column and in :func:`not_computed_notes`).

    Parameters
    ----------
    per_pair : pandas.DataFrame
        :func:`epsaudit.results.results_frame` of the routes' results and the certificates.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`SUMMARY_COLUMNS` (nullable dtypes; ``<NA>`` = not applicable, or no pair
        computed).

    Examples
    --------
    >>> from epsaudit.audits import gaussmech_pairs
    >>> from epsaudit.results import results_frame
    >>> groups = {"A": [[0.0, 0.0], [0.0, 2.0]], "B": [[3.0, 0.0], [3.0, 2.0]], "C": [[1.0, 1.0], [1.0, 3.0]]}
    >>> summary = summarize(results_frame(gaussmech_pairs(groups, [("A", "B"), ("A", "C")])))
    >>> summary[["route", "statistic", "pairs"]].values.tolist(), round(float(summary["value"][0]), 4)
    ([['gaussmech', 'median', 2]], 15.1222)
    """
    if "not_computed" not in per_pair.columns:
        per_pair = per_pair.assign(not_computed=None)
    rows = []
    for route in ("gaussmech", "kde_lr", "mmd_tv", "roc_oof"):
        part = per_pair[per_pair["route"] == route]
        if part.empty:
            continue
        kind = part["kind"].iloc[0]
        if route == "kde_lr":
            for alpha, sub in part.groupby("setting_alpha", sort=True):
                rows.append(_route_row(sub, route, kind, kde_alpha=float(alpha)))
        elif route == "roc_oof":
            done = part[part["not_computed"].isna()]
            rows.append(_route_row(part, route, kind, n_infinite=int(done["infinite"].astype(bool).sum()),
                                   median_auc=float(done["auc"].astype(float).median()) if len(done) else pd.NA))
        else:
            rows.append(_route_row(part, route, kind))
    certs = per_pair[per_pair["route"] == "roc_reserved"]
    for _, r in certs.iterrows():
        failed = r["not_computed"] is not None and not pd.isna(r["not_computed"])
        rows.append({"route": "roc_reserved", "kind": r["kind"], "statistic": "lower bound",
                     "pairs": 0 if failed else 1, "not_computed": int(failed),
                     "value": pd.NA if failed else float(r["value"]), "identity_a": r["identity_a"],
                     "identity_b": r["identity_b"], "n_test_a": int(r["n_a"]), "n_test_b": int(r["n_b"]),
                     "confidence": float(r["confidence"]), "alpha_per_bound": float(r["alpha_per_bound"]),
                     "bound": r.get("bound", pd.NA), "cap": pd.NA if failed else float(r["cap"])})
    rows += [_worst_row(r) for _, r in per_pair[per_pair["route"] == "worst_pair"].iterrows()]
    for _, r in per_pair[per_pair["route"] == "tradeoff_reserved"].iterrows():
        failed = r["not_computed"] is not None and not pd.isna(r["not_computed"])
        rows.append({"route": "tradeoff_reserved", "kind": r["kind"], "statistic": "best-point lower bound",
                     "pairs": 0 if failed else 1, "not_computed": int(failed),
                     "value": pd.NA if failed else float(r["value"]), "identity_a": r["identity_a"],
                     "identity_b": r["identity_b"], "n_test_a": int(r["n_a"]), "n_test_b": int(r["n_b"]),
                     "confidence": float(r["confidence"]), "alpha_per_bound": float(r["alpha_per_bound"])})
    frame = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
    dtypes = {"pairs": "Int64", "not_computed": "Int64", "value": "Float64", "max": "Float64", "kde_alpha": "Float64",
              "n_infinite": "Int64", "median_auc": "Float64", "n_test_a": "Int64", "n_test_b": "Int64",
              "confidence": "Float64", "alpha_per_bound": "Float64", "cap": "Float64"}
    frame = frame.astype(dtypes)
    for col in ("identity_a", "identity_b", "bound"):
        frame[col] = frame[col].astype(object).where(frame[col].notna(), pd.NA)
    return frame


def _worst_row(r: pd.Series) -> dict[str, Any]:
    failed = r["not_computed"] is not None and not pd.isna(r["not_computed"])
    return {"route": "worst_pair", "kind": r["kind"], "statistic": "worst-case lower bound",
            "pairs": 0 if failed else int(r["pairs_certified"]),
            "not_computed": int(r["pairs_not_computed"]) if not failed else 1,
            "value": pd.NA if failed else float(r["value"]),
            "identity_a": pd.NA if failed else r["identity_a"], "identity_b": pd.NA if failed else r["identity_b"],
            "n_test_a": pd.NA if failed else int(r["n_a"]), "n_test_b": pd.NA if failed else int(r["n_b"]),
            "confidence": float(r["confidence"]), "alpha_per_bound": float(r["alpha_per_bound"]),
            "bound": r.get("bound", pd.NA), "cap": pd.NA if failed else float(r["max_cap"])}
