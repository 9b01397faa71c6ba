"""Audit one condition (one embedding table) with the full protocol of *Picture the Epsilon*, Section IV.

:func:`audit_condition` is what the face notebook and ``epsaudit audit`` both call, so both print
the same numbers for the same table and seed:

1. identities with at least ``min_rows`` rows (default 5, the ROC-HT fold count) form the groups;
   the others are left out and counted;
2. the pair protocol: all unordered identity pairs shuffled once with ``seed``
   (:func:`epsaudit.pairs.identity_pairs`); GaussMech and MMD-TV audit the first ``pairs`` (500),
   KDE-LR (alpha 0 and 0.01) the first ``kde_pairs`` (100), ROC-HT out-of-fold the first
   ``roc_pairs`` (200);
3. reserved-test certificates for ``certificates`` pairs, chosen on development data only:
   each identity's rows are split *once* into development and test parts
   (:func:`epsaudit.splits.split_identities`); the first ``selection_pool`` (100) pairs are ranked by the
   out-of-fold AUC of the ROC-HT classifier on development rows (ties: the larger witness
   ``max(TPR - FPR)``, then the shuffled order; with ``prefer_certifiable`` ties in AUC first go
   to the pair whose test *sizes* allow the larger certificate, :func:`epsaudit.bounds.certifiable_cap`);
   the top ``k`` are certified on the untouched test rows with a Bonferroni correction over the
   ``k`` certificates (or over ``family_size`` certificates when this condition's ``k`` are part
   of a larger family reported together, e.g. 5 per condition over 12 conditions), so all hold
   together at ``confidence`` (95%) under the iid row model. Test rows are never looked at before
   the certificates are computed (the test sizes follow from the split alone), so the selection
   costs no validity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from .audits import audit_pairs, reserved_test_pairs, roc_oof_pairs
from .audits.roc_oof import DEFAULT_FOLDS
from .bounds import bonferroni_alpha, certifiable_cap, required_test_size
from .data import EmbeddingTable
from .pairs import identity_pairs
from .results import EpsilonResult, results_frame
from .settings import ROC_FOLDS, AuditSettings
from .splits import split_identities
from .validation import as_groups

SUMMARY_COLUMNS = ("route", "kind", "statistic", "pairs", "not_computed", "value", "max", "kde_alpha", "n_infinite",
                   "median_auc", "identity_a", "identity_b", "n_test_a", "n_test_b", "confidence",
                   "alpha_per_bound", "cap")


@dataclass(frozen=True, eq=False)
class ConditionAudit:
    """Everything :func:`audit_condition` computed for one table.

    Attributes
    ----------
    results : tuple of EpsilonResult
        Per pair and route: GaussMech, KDE-LR (one per alpha), MMD-TV, ROC-HT OOF, then the
        certificates.
    per_pair : pandas.DataFrame
        ``results_frame(results)`` (one row per result, a ``kind`` column). Detail columns that do
        not apply to a row's route are empty; ``value`` is ``+inf`` only for ROC-HT OOF rows with
        ``infinite`` True. MMD's ``p_value`` column is omitted when no permutation test was run.
    summary : pandas.DataFrame
        Columns :data:`SUMMARY_COLUMNS`; one row per route (KDE-LR: per alpha) with the median
        ``value`` and the ``max`` over its pairs, then one row per certificate. ROC-HT OOF's
        median may be ``+inf`` (documented; ``n_infinite`` counts the +inf pairs). ``cap`` is the
        largest value a certificate's test size can certify (zero test errors). ``statistic``
        says which (``"median"`` or, for certificates, ``"lower bound"``); ``pairs`` is the number
        of pairs it summarises. Cells that do not apply are ``<NA>``.
    selection : pandas.DataFrame
        The development-only ranking of the candidate pairs: ``rank``, ``identity_a``,
        ``identity_b``, ``dev_auc``, ``dev_tv_witness``, ``selected``.
    settings : dict
        Every parameter, including seeds and the resolved pair counts.
    counts : dict
        Identities audited / left out, candidate pairs, pairs per route.
    source : str
        The file audited (``"<groups>"`` for in-memory groups).
    table_counts : dict
        The loader's filter counts (:attr:`epsaudit.data.EmbeddingTable.counts`; empty for groups).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> groups = {k: rng.normal(c, 1.0, size=(20, 4)) for k, c in (("A", 0.0), ("B", 3.0), ("C", 0.0))}
    >>> audit = audit_condition(groups, certificates=1)
    >>> audit.summary[["route", "kind", "pairs"]].values.tolist()[:2]
    [['gaussmech', 'diagnostic', 3], ['kde_lr', 'diagnostic', 3]]
    >>> sorted(audit.to_dict())[:3], audit.not_computed_notes()
    (['counts', 'filter_counts', 'not_computed'], [])
    """

    results: tuple[EpsilonResult, ...]
    per_pair: pd.DataFrame
    summary: pd.DataFrame
    selection: pd.DataFrame
    settings: dict[str, Any]
    counts: dict[str, int]
    source: str = "<groups>"
    table_counts: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready record: source, settings, counts, summary, selection rows and the pairs not computed.

        Returns
        -------
        dict
            ``source``, ``settings``, ``filter_counts``, ``counts``, ``summary`` and ``selection``
            (lists of row dicts, ``None`` for missing cells) and ``not_computed`` (route, pair and
            reason of every pair a route could not compute).
        """
        failed = self.per_pair[self.per_pair["not_computed"].notna()] if "not_computed" in self.per_pair else []
        return {
            "source": self.source,
            "settings": dict(self.settings),
            "filter_counts": dict(self.table_counts),
            "counts": dict(self.counts),
            "summary": _records(self.summary),
            "selection": _records(self.selection),
            "not_computed": _records(failed[["route", "identity_a", "identity_b", "not_computed"]].drop_duplicates())
            if len(failed) else [],
        }

    def certificate_notes(self) -> list[str]:
        """Why every certificate is 0, when it is: too few test rows, or no separation on the test rows.

        When every certificate's cap is 0, the test sizes alone hold them at 0; the note gives the
        smallest test size per identity that can certify anything at the family's per-bound level
        (:func:`epsaudit.bounds.required_test_size`) and the rows per identity that means at this
        ``test_size``.

        Returns
        -------
        list of str
            Empty unless every certificate is 0.
        """
        certs = self.summary[(self.summary["route"] == "roc_reserved") & self.summary["value"].notna()]
        if certs.empty or (certs["value"] > 0).any():
            return []
        alpha = float(certs["alpha_per_bound"].iloc[0])
        sizes = pd.concat([certs["n_test_a"], certs["n_test_b"]]).astype(int)
        if (certs["cap"] > 0).any():
            return [f"{self.source}: every certificate is 0 although the test sizes could certify up to "
                    f"{float(certs['cap'].max()):.3g}: the selected pairs are not separated on their test rows"]
        need = required_test_size(0.0, alpha, self.settings["delta"])
        rows = math.ceil(need / self.settings["test_size"])
        return [f"{self.source}: every certificate is 0 because of its test sizes ({sizes.min()}-{sizes.max()} test "
                f"rows per identity): at {alpha:.3g} per bound ({self.settings['confidence']:.0%} over the family) a "
                f"reserved test needs at least {need} test rows per identity to certify anything above 0, i.e. "
                f"identities with at least {rows} rows at test_size {self.settings['test_size']:g} "
                f"(epsaudit plan tells the size for a given epsilon)"]

    def not_computed_notes(self) -> list[str]:
        """One line per route and reason: how many pairs the route could not compute, and which.

        Returns
        -------
        list of str
            :func:`not_computed_notes` of the per-pair frame.
        """
        return not_computed_notes(self.per_pair, source=self.source)


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for row in frame.astype(object).to_dict(orient="records"):
        out.append({k: (None if v is pd.NA or (isinstance(v, float) and np.isnan(v)) else v) for k, v in row.items()})
    return out


ROUTE_NAMES = {"gaussmech": "GaussMech", "kde_lr": "KDE-LR", "mmd_tv": "MMD-TV", "roc_oof": "ROC-HT out-of-fold",
               "roc_reserved": "reserved-test certificate"}


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


# Over 80 lines only through its docstring (layouts, checks and errors documented, an example).
def select_pairs(
    dev_groups: Mapping[Hashable, np.ndarray],
    candidates: Sequence[tuple[Hashable, Hashable]],
    k: int,
    *,
    seed: int = 0,
    folds: int = DEFAULT_FOLDS,
    test_caps: Mapping[tuple[Hashable, Hashable], float] | None = None,
    n_jobs: int | None = None,
    progress: bool = False,
) -> tuple[list[tuple[Hashable, Hashable]], pd.DataFrame]:
    """Rank candidate pairs by development-only out-of-fold AUC and take the top ``k``.

    Parameters
    ----------
    dev_groups : mapping identity -> ndarray, shape (n_j, d)
        Development rows only.
    candidates : sequence of (identity, identity)
        In the shuffled order; pairs with an identity missing from ``dev_groups`` or with fewer
        than ``folds`` development rows are skipped (they get no rank).
    k : int
        How many pairs to select (fewer if fewer candidates qualify).
    seed, folds, n_jobs, progress
        As in :func:`epsaudit.audits.roc_oof_pairs`.
    test_caps : mapping (identity, identity) -> float, optional
        The largest bound each pair's *test size* can certify (a function of the sizes only, never
        of the test rows). When given, ties in development AUC go to the larger cap before the
        witness and the shuffled order are consulted, and the ranking gets a ``test_cap`` column.

    Returns
    -------
    selected : list of (identity, identity)
        Best first.
    ranking : pandas.DataFrame
        One row per ranked candidate: ``rank`` (1 = best), ``identity_a``, ``identity_b``,
        ``order`` (position in ``candidates``), ``dev_auc``, ``dev_tv_witness``, ``selected``
        (and ``test_cap`` when ``test_caps`` is given), ``not_computed``. Candidates whose
        development ROC could not be computed come last, with ``rank`` and ``dev_auc`` ``<NA>``
        and the reason in ``not_computed``; they are never selected.

    Raises
    ------
    ValueError
        Invalid development groups.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> dev = {k: rng.normal(c, 1.0, size=(10, 2)) for k, c in (("A", 0.0), ("B", 4.0), ("C", 0.5))}
    >>> selected, ranking = select_pairs(dev, [("A", "C"), ("A", "B")], k=1)
    >>> selected, ranking["dev_auc"].round(2).tolist()
    ([('A', 'B')], [1.0, 0.7])
    """
    usable = [(i, p) for i, p in enumerate(candidates)
              if all(lab in dev_groups and len(dev_groups[lab]) >= folds for lab in p)]
    columns = ["rank", "identity_a", "identity_b", "order", "dev_auc", "dev_tv_witness", "selected"]
    if test_caps is not None:
        columns = columns[:-1] + ["test_cap", "selected"]
    if not usable or k < 1:
        return [], pd.DataFrame(columns=columns + ["not_computed"])
    res = roc_oof_pairs(dev_groups, [p for _, p in usable], folds=folds, seed=seed, n_jobs=n_jobs, progress=progress)
    ranking = pd.DataFrame({
        "identity_a": [p[0] for _, p in usable], "identity_b": [p[1] for _, p in usable],
        "order": [i for i, _ in usable],
        "dev_auc": [r.statistics.auc if r.computed else np.nan for r in res],
        "dev_tv_witness": [r.statistics.tv_witness if r.computed else np.nan for r in res],
        "not_computed": [r.not_computed for r in res],
    })
    if test_caps is not None:
        ranking["test_cap"] = [float(test_caps[p]) for _, p in usable]
    failed = ranking[ranking["not_computed"].notna()]
    ranking = ranking[ranking["not_computed"].isna()]
    keys, ascending = ["dev_auc", "dev_tv_witness", "order"], [False, False, True]
    if test_caps is not None:
        keys.insert(1, "test_cap")
        ascending.insert(1, False)
    ranking = ranking.sort_values(keys, ascending=ascending, kind="stable").reset_index(drop=True)
    ranking.insert(0, "rank", pd.array(np.arange(1, len(ranking) + 1), dtype="Int64"))
    ranking["selected"] = ranking["rank"] <= k
    chosen = ranking[ranking["selected"]]
    # candidates whose development ROC could not be computed: no rank, listed last with the reason
    failed = failed.assign(rank=pd.array([pd.NA] * len(failed), dtype="Int64"), selected=False)
    ranking = pd.concat([ranking, failed[ranking.columns]], ignore_index=True) if len(failed) else ranking
    return list(zip(chosen["identity_a"], chosen["identity_b"])), ranking[columns + ["not_computed"]]


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
                     "cap": pd.NA if failed else float(r["cap"])})
    frame = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
    dtypes = {"pairs": "Int64", "not_computed": "Int64", "value": "Float64", "max": "Float64", "kde_alpha": "Float64",
              "n_infinite": "Int64", "median_auc": "Float64", "n_test_a": "Int64", "n_test_b": "Int64",
              "confidence": "Float64", "alpha_per_bound": "Float64", "cap": "Float64"}
    frame = frame.astype(dtypes)
    for col in ("identity_a", "identity_b"):
        frame[col] = frame[col].astype(object).where(frame[col].notna(), pd.NA)
    return frame


def audit_condition(
    table: EmbeddingTable | Mapping[Hashable, np.ndarray],
    settings: AuditSettings | None = None,
    *,
    n_jobs: int | None = None,
    progress: bool = False,
    **changes: Any,
) -> ConditionAudit:
    """Run the four routes and the reserved-test certificates on one condition (module docstring).

    Parameters
    ----------
    table : EmbeddingTable or mapping identity -> ndarray (n_i, d)
        Filtered, L2-normalised embeddings (e.g. from :func:`epsaudit.data.load_embeddings`).
    settings : AuditSettings, optional
        What to compute (pair counts, certificates, confidence, delta, seed, ...; see
        :class:`epsaudit.settings.AuditSettings` for each field and its default).
    n_jobs : int, optional
        joblib workers; the numbers do not depend on it.
    progress : bool
        tqdm bars (on stderr).
    **changes
        Settings to change, by name (``audit_condition(table, pairs=50)``).

    Returns
    -------
    ConditionAudit

    Raises
    ------
    epsaudit.settings.SettingsError
        (a ``ValueError``) An unknown setting or a value out of range, naming the parameter.
    ValueError
        Fewer than two identities with ``min_rows`` rows, or invalid groups.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> groups = {name: rng.normal(size=(20, 8)) + shift for name, shift in (("A", 0.0), ("B", 1.0), ("C", 2.0))}
    >>> audit = audit_condition(groups, certificates=1)
    >>> audit.counts["candidate_pairs"], audit.counts["certificates"]
    (3, 1)
    """
    settings = (settings or AuditSettings()).replace(**changes)
    source, table_counts, groups, left_out, coordinate_names = _audited_groups(table, settings.min_rows)
    shuffled = identity_pairs(groups, seed=settings.seed)
    counts = {"gaussmech": settings.pairs, "mmd_tv": settings.pairs, "kde_lr": settings.kde_pairs,
              "roc_oof": settings.roc_pairs}
    routes = [r for r in ("gaussmech", "kde_lr", "mmd_tv", "roc_oof") if counts[r] > 0]
    results = audit_pairs(groups, shuffled, routes=routes, pair_counts=counts, delta=settings.delta,
                          kde_alphas=settings.kde_alphas, coordinate_names=coordinate_names,
                          permutations=settings.permutations, seed=settings.seed, n_jobs=n_jobs,
                          progress=progress) if routes else []
    certificates, ranking, too_small = _certify_selected(groups, shuffled, settings, n_jobs, progress)
    per_pair = results_frame(results + certificates)
    if settings.permutations == 0 and "p_value" in per_pair.columns:
        per_pair = per_pair.drop(columns=["p_value"])  # NaN by construction without a test
    record = {**settings.record(), "selection_rule": _selection_rule(settings), "split_rule": SPLIT_RULE}
    audit_counts = {
        "identities": len(groups), "identities_below_min_rows": len(left_out),
        "candidate_pairs": len(shuffled),
        **{f"pairs_{r}": min(counts[r], len(shuffled)) for r in ("gaussmech", "kde_lr", "mmd_tv", "roc_oof")},
        "selection_candidates": int(ranking["rank"].notna().sum()),
        "selection_not_computed": int(ranking["not_computed"].notna().sum()),
        "identities_too_small_to_split": len(too_small),
        "certificates": len(certificates),
        "not_computed": int(per_pair.drop_duplicates(["route", "identity_a", "identity_b"])["not_computed"].notna().sum())
        if len(per_pair) else 0,
    }
    return ConditionAudit(results=tuple(results + certificates), per_pair=per_pair, summary=summarize(per_pair),
                          selection=ranking.reset_index(drop=True), settings=record, counts=audit_counts,
                          source=source, table_counts=table_counts)


SPLIT_RULE = "each identity split once: permutation by stream('dev-test-split', seed, identity)"


def _selection_rule(settings: AuditSettings) -> str:
    return ("development-only out-of-fold AUC (ties: "
            + ("the larger cap of the pair's test sizes, then " if settings.prefer_certifiable else "")
            + "dev max(TPR-FPR), then shuffled order)")


def _audited_groups(table, min_rows: int):
    """Source name, filter counts, groups with >= ``min_rows`` rows, labels left out, coordinate names."""
    if isinstance(table, EmbeddingTable):
        source, table_counts, coordinate_names = table.source, table.counts, table.embedding_cols
        all_groups = table.groups(min_rows=1)
    else:
        source, table_counts, coordinate_names = "<groups>", {}, None
        all_groups = {k: np.asarray(v, dtype=np.float64) for k, v in as_groups(table, min_rows=1).items()}
    groups = {k: v for k, v in all_groups.items() if len(v) >= min_rows}
    left_out = sorted(str(k) for k in all_groups if k not in groups)
    if len(groups) < 2:
        raise ValueError(f"{source}: only {len(groups)} identity(ies) with >= {min_rows} rows "
                         f"({len(left_out)} left out with fewer); an audit needs >= 2 identities (min_rows "
                         f"defaults to the {ROC_FOLDS} ROC-HT folds)")
    return source, table_counts, groups, left_out, coordinate_names


def _certify_selected(groups, shuffled, settings: AuditSettings, n_jobs, progress):
    """Split every identity once, select pairs on development rows, certify them on test rows."""
    ranking = pd.DataFrame(columns=["rank", "identity_a", "identity_b", "order", "dev_auc", "dev_tv_witness",
                                    "selected", "not_computed"])
    if settings.certificates == 0:
        return [], ranking, []
    dev, test, too_small = split_identities(groups, test_size=settings.test_size, seed=settings.seed)
    pool = shuffled[: settings.selection_pool]
    caps = None
    if settings.prefer_certifiable:
        level = bonferroni_alpha(settings.family_size or settings.certificates, settings.confidence)
        caps = {p: certifiable_cap(len(test[p[0]]), len(test[p[1]]), level, settings.delta)
                for p in pool if p[0] in test and p[1] in test}
    selected, ranking = select_pairs(dev, pool, settings.certificates, seed=settings.seed, test_caps=caps,
                                     n_jobs=n_jobs, progress=progress)
    if not selected:
        return [], ranking, too_small
    certificates = reserved_test_pairs(dev, selected, test_groups=test,
                                       n_certificates=int(settings.family_size or len(selected)),
                                       confidence=settings.confidence, delta=settings.delta, seed=settings.seed,
                                       n_jobs=n_jobs, progress=progress)
    return certificates, ranking, too_small
