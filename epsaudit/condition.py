"""Audit one condition (one embedding table) with the full protocol of *Picture the Epsilon*, Section IV.

:func:`audit_condition` is what the face notebook and ``epsaudit audit`` both call (the same numbers for the same
table and seed):

1. identities with at least ``min_rows`` rows (default 5, the ROC-HT fold count) form the groups; the others are
   left out and counted;
2. all unordered identity pairs are shuffled once with ``seed`` (:func:`epsaudit.protocol.identity_pairs`);
   GaussMech and MMD-TV audit the first ``pairs`` (500), KDE-LR the first ``kde_pairs`` (100), ROC-HT out-of-fold
   the first ``roc_pairs`` (200);
3. reserved-test certificates chosen on development data only: each identity's rows are split *once*
   (:func:`epsaudit.protocol.split_identities`); the first ``selection_pool`` (100) pairs are ranked by the
   out-of-fold AUC on development rows (ties: the larger ``max(TPR - FPR)``, then the shuffled order; with
   ``prefer_certifiable``, ties in AUC first go to the larger cap of the test *sizes*,
   :func:`epsaudit.bounds.certifiable_cap`); the top ``certificates`` are certified on the untouched test rows
   with a Bonferroni correction over them (or over ``family_size``), so all hold together at ``confidence`` under
   the iid row model. Test rows are not looked at before, so the selection costs no validity;
4. with ``worst_pair = K``, the top ``K`` pairs of the same ranking are certified (Bonferroni over ``K``) and the
   largest is a ``confidence`` lower bound on the worst-case pairwise epsilon (:mod:`epsaudit.audits.worst_pair`);
5. with ``tradeoff``, the trade-off (f-DP) certificate of every pair of step 3, on the same rows and in the same
   family: a band at four development thresholds certifies the trade-off curve, a lower bound on the Gaussian-DP
   mu and the best single-point epsilon (:mod:`epsaudit.audits.tradeoff`, :meth:`ConditionAudit.tradeoff_table`).

Steps 4 and 5 are each their own family at ``confidence``: with step 3, both hold together at
``1 - 2 (1 - confidence)``. Every certificate checks that its test rows do not repeat development rows, by value
(:func:`epsaudit.validation.check_fresh`), or by draw when ``draw_ids`` are given (values that repeat by design;
:func:`epsaudit.validation.check_fresh_ids`). :class:`AuditSettings` defines the settings (the ``settings`` record,
the ``epsaudit audit`` flags, the book's settings table). Importing this module loads numpy only.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Hashable, Mapping

import numpy as np

from .protocol import PAIRS_PER_ROUTE, identity_pairs, split_identities
from .results import BOUNDS, EpsilonResult, results_frame
from .validation import as_draw_ids, as_groups

if TYPE_CHECKING:
    import pandas as pd

    from .audits.tradeoff import TradeoffCertificate
    from .audits.worst_pair import WorstPairCertificate
    from .data import EmbeddingTable

__all__ = ["SettingsError", "AuditSettings", "flag", "SUMMARY_COLUMNS", "not_computed_notes", "summarize",
           "ConditionAudit", "audit_condition"]


_ROC_FOLDS = 5  # ROC-HT folds (the paper's 5): a class needs at least one row per fold


class SettingsError(ValueError):
    """A setting with a value it cannot take.

    Attributes
    ----------
    parameter, requirement : str
        The field of :class:`AuditSettings` (the command line shows its flag); what the value must be, and was.

    See Also
    --------
    AuditSettings : the settings whose values it refuses.
    flag : the command-line flag it names.

    Examples
    --------
    >>> err = SettingsError("min_rows", "must be >= 5; got 2")
    >>> str(err), flag(err.parameter)
    ('min_rows must be >= 5; got 2', '--min-rows')
    """

    def __init__(self, parameter: str, requirement: str) -> None:
        self.parameter = parameter
        self.requirement = requirement
        super().__init__(f"{parameter} {requirement}")


def _setting(default: Any, help: str, metavar: str | None = None) -> Any:
    return field(default=default, metadata={"help": help, "metavar": metavar})


@dataclass(frozen=True)
class AuditSettings:
    """What one condition audit computes (*Picture the Epsilon*, Section IV): every number or flag of the protocol
    (workers and progress bars are arguments of the run, not settings).

    Raises
    ------
    SettingsError
        (a ``ValueError``) For a value out of range, naming the parameter.

    See Also
    --------
    audit_condition : the audit it configures.
    summarize : the summary table under these settings.
    SettingsError : what a bad value raises.

    Examples
    --------
    >>> AuditSettings(min_rows=2)
    Traceback (most recent call last):
    ...
    epsaudit.condition.SettingsError: min_rows must be >= 5, the ROC-HT fold count (a class needs one row per fold); got 2
    """

    pairs: int = _setting(PAIRS_PER_ROUTE["gaussmech"], "GaussMech and MMD-TV audit the first N shuffled pairs", "N")
    kde_pairs: int = _setting(PAIRS_PER_ROUTE["kde_lr"], "KDE-LR audits the first N pairs", "N")
    roc_pairs: int = _setting(PAIRS_PER_ROUTE["roc_oof"], "ROC-HT out-of-fold audits the first N pairs", "N")
    certificates: int = _setting(5, "reserved-test certificates reported together (0 = none)", "K")
    family_size: int | None = _setting(
        None, "Bonferroni family size when these certificates are reported together with others (e.g. 60 = "
              "5 per file x 12 files); default: the certificates of this file", "M")
    prefer_certifiable: bool = _setting(
        False, "among pairs with equal development AUC, prefer the one whose test sizes can certify more "
               "(the cap, from the sizes alone)")
    selection_pool: int = _setting(PAIRS_PER_ROUTE["common"], "certificates are chosen among the first N pairs", "N")
    worst_pair: int = _setting(
        0, "worst-pair certificate: certify the top K development-ranked pairs of the selection pool (Bonferroni "
           "over K) and report the largest as a lower bound on the worst-case pairwise epsilon (0 = off)", "K")
    tradeoff: bool = _setting(
        False, "trade-off (f-DP) certificate of every certified pair on the same rows: a band at 4 development "
               "thresholds certifies the trade-off curve, a lower bound on the Gaussian-DP mu and the best "
               "single-point epsilon (with --out also PREFIX_tradeoff.csv)")
    test_size: float = _setting(0.3, "fraction of each identity's rows reserved for the certificates' test", "F")
    confidence: float = _setting(0.95, "family-wise confidence of the certificates", "P")
    bound: str = _setting("joint", "bound of the reserved-test certificates: 'joint' (the exact joint test of both "
                                   "error rates, one per pair at (1 - P) / K) or 'clopper-pearson' (the paper's two "
                                   "one-sided bounds per pair at (1 - P) / 2K)", "NAME")
    delta: float = _setting(1e-5, "delta of GaussMech and of the certificates (MMD-TV and ROC-HT "
                                  "out-of-fold use pure DP)", "D")
    kde_alphas: tuple[float, ...] = _setting((0.0, 0.01), "KDE-LR smoothing weights of the uniform mixture",
                                             "A,B")
    min_rows: int = _setting(_ROC_FOLDS, "identities with fewer rows are left out and counted "
                                         f"(at least the {_ROC_FOLDS} ROC-HT folds)", "N")
    seed: int = _setting(0, "base seed of the pair shuffle, folds, permutations and development/test split")
    permutations: int = _setting(0, "MMD permutation-test size per pair (0 = no test; the paper uses 10000)", "B")

    def __post_init__(self) -> None:
        for name in ("pairs", "kde_pairs", "roc_pairs", "certificates", "selection_pool", "worst_pair", "permutations",
                     "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise SettingsError(name, f"must be an integer >= 0; got {value!r}")
        if not isinstance(self.min_rows, int) or self.min_rows < _ROC_FOLDS:
            raise SettingsError("min_rows", f"must be >= {_ROC_FOLDS}, the ROC-HT fold count (a class needs one row "
                                            f"per fold); got {self.min_rows!r}")
        if self.family_size is not None and (not isinstance(self.family_size, int)
                                             or self.family_size < max(self.certificates, 1)):
            raise SettingsError("family_size", f"must be >= certificates ({self.certificates}) and >= 1; "
                                               f"got {self.family_size!r}")
        for name, low_open in (("test_size", True), ("confidence", True), ("delta", False)):
            value = getattr(self, name)
            low_ok = value > 0 if low_open else value >= 0
            if not isinstance(value, (int, float)) or not (low_ok and value < 1):
                raise SettingsError(name, f"must be in {'(0, 1)' if low_open else '[0, 1)'}; got {value!r}")
        if self.bound not in BOUNDS:
            raise SettingsError("bound", f"must be one of {', '.join(BOUNDS)}; got {self.bound!r}")
        alphas = tuple(float(a) for a in self.kde_alphas)
        if not alphas or any(not 0 <= a <= 1 for a in alphas):
            raise SettingsError("kde_alphas", f"must be one or more values in [0, 1]; got {self.kde_alphas!r}")
        object.__setattr__(self, "kde_alphas", alphas)

    # -- records -----------------------------------------------------------------------------
    def record(self) -> dict[str, Any]:
        """Every setting as a plain dict (JSON-ready; ``kde_alphas`` as a list)."""
        out = asdict(self)
        out["kde_alphas"] = list(self.kde_alphas)
        return out

    def replace(self, **changes: Any) -> "AuditSettings":
        """A copy with some settings changed.

        Raises
        ------
        SettingsError
            For an unknown setting name (the known ones are listed) or a bad value.
        """
        unknown = sorted(set(changes) - {f.name for f in fields(self)})
        if unknown:
            raise SettingsError(unknown[0], f"is not an audit setting; the settings are "
                                            f"{', '.join(f.name for f in fields(self))}")
        return replace(self, **changes)

    def table(self) -> "Any":
        """The settings as a table for the book (pandas): ``setting``, ``flag``, ``value``, ``default``, ``meaning``.

        Examples
        --------
        >>> AuditSettings(pairs=50).table().loc[0, ["setting", "flag", "value", "default"]].tolist()
        ['pairs', '--pairs', '50', '500']
        """
        import pandas as pd

        rows = []
        for f in fields(self):
            value = getattr(self, f.name)
            rows.append({"setting": f.name, "flag": flag(f.name), "value": _text(value),
                         "default": _text(f.default), "meaning": f.metadata["help"]})
        return pd.DataFrame(rows)

    # -- the command line --------------------------------------------------------------------
    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        """Add one flag per setting to an argparse parser or argument group (defaults and help from the fields).

        Examples
        --------
        >>> parser = argparse.ArgumentParser()
        >>> AuditSettings.add_arguments(parser)
        >>> AuditSettings.from_namespace(parser.parse_args(["--kde-alphas", "0,0.1"])).kde_alphas
        (0.0, 0.1)
        """
        for f in fields(cls):
            default = f.default if f.default is not MISSING else None
            text = f"{f.metadata['help']} (default {_text(default)})"
            if f.type in ("bool", bool):
                parser.add_argument(flag(f.name), action="store_true", help=f.metadata["help"])
            elif f.name == "bound":
                parser.add_argument(flag(f.name), choices=BOUNDS, default=default, help=text)
            elif f.name == "kde_alphas":
                parser.add_argument(flag(f.name), type=_float_list, default=default, metavar=f.metadata["metavar"],
                                    help=text)
            else:
                kind = float if "float" in str(f.type) else int
                parser.add_argument(flag(f.name), type=kind, default=default, metavar=f.metadata["metavar"],
                                    help=text)

    @classmethod
    def from_namespace(cls, args: argparse.Namespace) -> "AuditSettings":
        """The settings parsed by :meth:`add_arguments`.

        Raises
        ------
        SettingsError
            For a value out of range.
        """
        return cls(**{f.name: getattr(args, f.name) for f in fields(cls)})

    def cli_args(self) -> list[str]:
        """Flags of ``epsaudit audit`` that give these settings (only those that differ from the defaults).

        Examples
        --------
        >>> AuditSettings(pairs=50, prefer_certifiable=True).cli_args()
        ['--pairs', '50', '--prefer-certifiable']
        """
        out: list[str] = []
        for f in fields(self):
            value = getattr(self, f.name)
            if value == f.default:
                continue
            if isinstance(value, bool):
                out.append(flag(f.name))
            else:
                out += [flag(f.name), _text(value)]
        return out


def flag(parameter: str) -> str:
    """The command-line flag of a setting: ``"min_rows"`` -> ``"--min-rows"``.

    Parameters
    ----------
    parameter : str
        A field of :class:`AuditSettings`.

    Returns
    -------
    str

    See Also
    --------
    AuditSettings : the settings it names flags of.
    SettingsError : the error that shows the flag.

    Examples
    --------
    >>> flag("selection_pool")
    '--selection-pool'
    """
    return "--" + parameter.replace("_", "-")


def _text(value: Any) -> str:
    if isinstance(value, tuple):
        return ",".join(f"{v:g}" for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _float_list(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas, got {text!r}") from None


SUMMARY_COLUMNS = ("route", "kind", "statistic", "pairs", "not_computed", "value", "max", "kde_alpha", "n_infinite",
                   "median_auc", "identity_a", "identity_b", "n_test_a", "n_test_b", "confidence",
                   "alpha_per_bound", "bound", "cap")

_ROUTE_NAMES = {"gaussmech": "GaussMech", "kde_lr": "KDE-LR", "mmd_tv": "MMD-TV", "roc_oof": "ROC-HT out-of-fold",
                "roc_reserved": "reserved-test certificate", "worst_pair": "worst-pair certificate",
                "tradeoff_reserved": "trade-off certificate"}


def not_computed_notes(per_pair: pd.DataFrame, *, source: str = "<groups>", limit: int = 4) -> list[str]:
    """Lines naming, per route and reason, the pairs a route could not compute.

    Parameters
    ----------
    per_pair : pandas.DataFrame
        A per-pair frame (:func:`epsaudit.results.results_frame`) with a ``not_computed`` column.
    source : str, default="<groups>"
        The file audited, named in every line.
    limit : int, default=4
        Pairs listed per line (the rest are counted).

    Returns
    -------
    list of str
        Empty when every pair was computed.

    See Also
    --------
    summarize : the summary table beside these notes.
    epsaudit.audits.runner.not_computed : the result of a pair a route could not compute.

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
            lines.append(f"{source}: {_ROUTE_NAMES.get(route, route)} not computed for {len(pairs)} of {total} "
                         f"pair(s): {reason}; pairs {shown}")
    return lines


def _route_row(frame: pd.DataFrame, route: str, kind: str, **extra: Any) -> dict[str, Any]:
    import pandas as pd
    done = frame[frame["not_computed"].isna()]
    values = done["value"].to_numpy(dtype=float)
    return {"route": route, "kind": kind, "statistic": "median", "pairs": len(values),
            "not_computed": len(frame) - len(done),
            "value": float(np.median(values)) if len(values) else pd.NA,
            "max": float(np.max(values)) if len(values) else pd.NA, **extra}


def summarize(per_pair: pd.DataFrame) -> pd.DataFrame:
    """Condense a per-pair frame (as in :class:`ConditionAudit`) into the summary table: medians and maxima over
    the pairs each route computed (``pairs``), and how many it could not (``not_computed``).

    Parameters
    ----------
    per_pair : pandas.DataFrame
        :func:`epsaudit.results.results_frame` of the routes' results and the certificates.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`SUMMARY_COLUMNS` (nullable dtypes; ``<NA>``: not applicable, or no pair computed).

    See Also
    --------
    audit_condition : the audit whose per-pair frame it condenses.
    ConditionAudit : what holds the frame and its summary.
    not_computed_notes : the pairs that could not be computed.
    epsaudit.results.results_frame : the per-pair table of results.

    Examples
    --------
    >>> from epsaudit.audits import gaussmech_pairs
    >>> from epsaudit.results import results_frame
    >>> groups = {"A": [[0.0, 0.0], [0.0, 2.0]], "B": [[3.0, 0.0], [3.0, 2.0]], "C": [[1.0, 1.0], [1.0, 3.0]]}
    >>> summary = summarize(results_frame(gaussmech_pairs(groups, [("A", "B"), ("A", "C")])))
    >>> summary[["route", "statistic", "pairs"]].values.tolist(), round(float(summary["value"][0]), 4)
    ([['gaussmech', 'median', 2]], 15.1222)
    """
    import pandas as pd
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
    import pandas as pd
    failed = r["not_computed"] is not None and not pd.isna(r["not_computed"])
    return {"route": "worst_pair", "kind": r["kind"], "statistic": "worst-case lower bound",
            "pairs": 0 if failed else int(r["pairs_certified"]),
            "not_computed": int(r["pairs_not_computed"]) if not failed else 1,
            "value": pd.NA if failed else float(r["value"]),
            "identity_a": pd.NA if failed else r["identity_a"], "identity_b": pd.NA if failed else r["identity_b"],
            "n_test_a": pd.NA if failed else int(r["n_a"]), "n_test_b": pd.NA if failed else int(r["n_b"]),
            "confidence": float(r["confidence"]), "alpha_per_bound": float(r["alpha_per_bound"]),
            "bound": r.get("bound", pd.NA), "cap": pd.NA if failed else float(r["max_cap"])}


@dataclass(frozen=True, eq=False)
class ConditionAudit:
    """Everything :func:`audit_condition` computed for one table.

    Attributes
    ----------
    results : tuple of EpsilonResult
        Per pair and route: GaussMech, KDE-LR (one per alpha), MMD-TV, ROC-HT OOF, then the certificates
        (reserved-test, worst-pair, trade-off).
    per_pair : pandas.DataFrame
        ``results_frame(results)``; ``value`` is ``+inf`` only for ROC-HT OOF rows with ``infinite`` True; no
        ``p_value`` column without a permutation test.
    summary : pandas.DataFrame
        :func:`summarize`: one row per route (KDE-LR: per alpha) with the median ``value`` and the ``max`` over
        its ``pairs`` (ROC-HT OOF's median may be ``+inf``; ``n_infinite`` counts those pairs), then one row per
        certificate (``statistic`` ``"lower bound"``; ``cap`` the largest value its test sizes can certify), the
        ``"worst_pair"`` row (the pair that attained it and its test sizes; ``pairs`` the ``K`` certified, ``cap``
        their largest cap) and one ``"tradeoff_reserved"`` row per trade-off certificate (its best point; the rest
        in :meth:`tradeoff_table`). Cells that do not apply are ``<NA>``.
    selection : pandas.DataFrame
        The development-only ranking of the candidate pairs: ``rank``, ``identity_a``, ``identity_b``, ``dev_auc``,
        ``dev_tv_witness``, ``selected`` (with ``worst_pair`` also ``worst_pair_selected``, the top ``K``).
    settings, counts : dict
        Every parameter (seeds, resolved pair counts); identities audited / left out, candidate pairs, per route.
    source : str
        The file audited (``"<groups>"`` for in-memory groups).
    table_counts : dict
        The loader's filter counts (:attr:`epsaudit.data.EmbeddingTable.counts`; empty for groups).
    worst_pair : WorstPairCertificate or None
        With ``worst_pair = K > 0``: the worst-pair certificate and the ``K`` certificates it is the maximum of.
    tradeoff : tuple of TradeoffCertificate
        With ``tradeoff``: one trade-off certificate per reserved-test certificate, same pairs and order.

    See Also
    --------
    audit_condition : computes it.
    summarize : its summary table.
    AuditSettings : the settings it was computed with.

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
    worst_pair: WorstPairCertificate | None = None
    tradeoff: tuple[TradeoffCertificate, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready record: ``source``, ``settings``, ``filter_counts``, ``counts``, ``summary`` and ``selection``
        (row dicts, ``None`` for missing cells), ``not_computed`` (route, pair, reason); with a worst-pair
        certificate ``worst_pair`` (its value, pair, ``k``, levels, ``claim`` and ``certificates``); with trade-off
        certificates ``tradeoff`` (per pair the :meth:`tradeoff_table` row and its ``epsilon_curve``, delta -> eps)."""
        failed = self.per_pair[self.per_pair["not_computed"].notna()] if "not_computed" in self.per_pair else []
        extra = {"worst_pair": _worst_record(self.worst_pair)} if self.worst_pair is not None else {}
        if self.tradeoff:
            extra["tradeoff"] = [{**row, "epsilon_curve": {f"{d:g}": float(e) for d, e in
                                                           zip(c.deltas, c.epsilon_at_delta)}}
                                 for row, c in zip(_records(self.tradeoff_table()), self.tradeoff)]
        return {
            "source": self.source,
            "settings": dict(self.settings),
            "filter_counts": dict(self.table_counts),
            "counts": dict(self.counts),
            "summary": _records(self.summary),
            "selection": _records(self.selection),
            "not_computed": _records(failed[["route", "identity_a", "identity_b", "not_computed"]].drop_duplicates())
            if len(failed) else [],
            **extra,
        }

    def tradeoff_table(self) -> pd.DataFrame:
        """The trade-off certificates, one row per certified pair (empty without ``tradeoff``):
        :func:`epsaudit.audits.tradeoff.summary_frame` (``mu_lower``, ``best_epsilon``, ``gain`` over the pair's
        reserved-test certificate, ...)."""
        from .audits.tradeoff import summary_frame
        return summary_frame(self.tradeoff)

    def tradeoff_points(self) -> pd.DataFrame:
        """The certified points of every trade-off certificate, one row per pair and threshold (empty without
        ``tradeoff``): :func:`epsaudit.audits.tradeoff.curves_frame`. A pair's true trade-off curve lies on or below
        the lower convex hull of its points and ``(0, 1)``, ``(1, 0)``."""
        from .audits.tradeoff import curves_frame
        return curves_frame([c for c in self.tradeoff if c.computed])

    def certificate_notes(self) -> list[str]:
        """Lines: the worst-pair certificate's claim, and why every certificate is 0 when it is (no separation on
        the test rows, or test sizes too small: then the smallest test size that can certify anything,
        :func:`epsaudit.bounds.required_test_size`, and the rows per identity it means at this ``test_size``)."""
        return self._worst_pair_notes() + self._zero_notes()

    def _worst_pair_notes(self) -> list[str]:
        worst = self.worst_pair
        if worst is None:
            return []
        r = worst.result
        if not r.computed:
            return [f"{self.source}: worst-pair certificate not computed: {r.not_computed}"]
        s = r.statistics
        line = (f"{self.source}: worst-pair certificate: with {r.confidence:.0%} confidence the worst-case pairwise "
                f"epsilon is >= {r.value:.4g} (attained by ({r.pair[0]!r}, {r.pair[1]!r}), development rank {s.rank}; "
                f"the largest of {s.pairs_certified} reserved-test certificate(s) of the top development-ranked pairs, "
                f"each bound at {r.alpha_per_bound:.3g}, test rows {r.n[0]} and {r.n[1]})")
        if s.max_cap == 0:
            line += "; its test sizes cannot certify anything above 0 at this level"
        return [line]

    def _zero_notes(self) -> list[str]:
        import pandas as pd
        from .bounds import required_test_size
        certs = self.summary[(self.summary["route"] == "roc_reserved") & self.summary["value"].notna()]
        if certs.empty or (certs["value"] > 0).any():
            return []
        bound = self.settings.get("bound", "joint")
        alpha = float(certs["alpha_per_bound"].iloc[0])  # per test: the certificate's level is twice it for the split bound
        level = alpha if bound == "joint" else 2 * alpha
        sizes = pd.concat([certs["n_test_a"], certs["n_test_b"]]).astype(int)
        if (certs["cap"] > 0).any():
            return [f"{self.source}: every certificate is 0 although the test sizes could certify up to "
                    f"{float(certs['cap'].max()):.3g}: the selected pairs are not separated on their test rows"]
        need = required_test_size(0.0, level, self.settings["delta"], bound=bound)
        rows = math.ceil(need / self.settings["test_size"])
        return [f"{self.source}: every certificate is 0 because of its test sizes ({sizes.min()}-{sizes.max()} test "
                f"rows per identity): at {level:.3g} per certificate ({self.settings['confidence']:.0%} over the "
                f"family, {bound} bound) a reserved test needs at least {need} test rows per identity to certify anything above 0, i.e. "
                f"identities with at least {rows} rows at test_size {self.settings['test_size']:g} "
                f"(epsaudit plan tells the size for a given epsilon)"]

    def not_computed_notes(self) -> list[str]:
        """:func:`not_computed_notes` of the per-pair frame: per route and reason, the pairs not computed."""
        return not_computed_notes(self.per_pair, source=self.source)


def _worst_record(worst: WorstPairCertificate) -> dict[str, Any]:
    r = worst.result
    stats = r.statistics
    frame = worst.frame()
    keep = [c for c in ("rank", "attains", "identity_a", "identity_b", "value", "not_computed", "n_a", "n_b", "tp",
                        "fp", "cap") if c in frame.columns]
    return {"value": None if not r.computed else r.value,
            "identity_a": r.pair[0] if r.pair else None, "identity_b": r.pair[1] if r.pair else None,
            "k": stats.k if stats is not None else None, "confidence": r.confidence,
            "alpha_per_bound": r.alpha_per_bound, "claim": r.settings.get("claim"), "not_computed": r.not_computed,
            "certificates": _records(frame[keep]) if len(frame) else []}


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    import pandas as pd
    out = []
    for row in frame.astype(object).to_dict(orient="records"):
        out.append({k: (None if v is pd.NA or (isinstance(v, float) and np.isnan(v)) else v) for k, v in row.items()})
    return out


def audit_condition(
    table: EmbeddingTable | Mapping[Hashable, np.ndarray],
    settings: AuditSettings | None = None,
    *,
    n_jobs: int | None = None,
    progress: bool = False,
    draw_ids: Mapping[Hashable, Any] | str | None = None,
    **changes: Any,
) -> ConditionAudit:
    """Run the four routes and the certificates on one condition (the protocol of the module docstring).

    Parameters
    ----------
    table : EmbeddingTable or mapping identity -> ndarray (n_i, d)
        Filtered, L2-normalised embeddings (e.g. from :func:`epsaudit.data.load_embeddings`).
    settings : AuditSettings, default=None
        What to compute (each field and its default: :class:`epsaudit.condition.AuditSettings`).
    n_jobs : int, default=None
        joblib workers; the numbers do not depend on it.
    progress : bool, default=False
        tqdm bars (on stderr).
    draw_ids : mapping identity -> array_like, or "image_ids", default=None
        One draw id per row of each audited identity (in the groups' row order), split with the rows, or the
        table's image-id column; the freshness check then compares draws, not values.
    **changes
        Settings to change, by name (``audit_condition(table, pairs=50)``).

    Returns
    -------
    ConditionAudit

    Raises
    ------
    epsaudit.condition.SettingsError
        (a ``ValueError``) An unknown setting or a value out of range, naming the parameter.
    ValueError
        Fewer than two identities with ``min_rows`` rows, invalid groups, or draw ids missing for
        an audited identity or not one per row.

    See Also
    --------
    AuditSettings : what it computes.
    ConditionAudit : what it returns.
    summarize : the summary table of the per-pair frame.
    epsaudit.audits.audit_pairs : the four routes on one shuffled pair list.
    epsaudit.audits.reserved_test_pairs : the reserved-test certificates it adds.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> groups = {name: rng.normal(size=(20, 8)) + shift for name, shift in (("A", 0.0), ("B", 1.0), ("C", 2.0))}
    >>> audit = audit_condition(groups, certificates=1)
    >>> audit.counts["candidate_pairs"], audit.counts["certificates"]
    (3, 1)
    """
    from .audits import audit_pairs
    settings = (settings or AuditSettings()).replace(**changes)
    source, table_counts, groups, left_out, coordinate_names = _audited_groups(table, settings.min_rows)
    ids = _draw_ids(table, groups, draw_ids)
    shuffled = identity_pairs(groups, seed=settings.seed)
    counts = {"gaussmech": settings.pairs, "mmd_tv": settings.pairs, "kde_lr": settings.kde_pairs,
              "roc_oof": settings.roc_pairs}
    routes = [r for r in ("gaussmech", "kde_lr", "mmd_tv", "roc_oof") if counts[r] > 0]
    results = audit_pairs(groups, shuffled, routes=routes, pair_counts=counts, delta=settings.delta,
                          kde_alphas=settings.kde_alphas, coordinate_names=coordinate_names,
                          permutations=settings.permutations, seed=settings.seed, n_jobs=n_jobs,
                          progress=progress) if routes else []
    certificates, worst, bands, ranking, too_small = _certify_selected(groups, shuffled, settings, ids, n_jobs,
                                                                      progress)
    results = results + certificates + ([worst.result] if worst is not None else []) + [b.to_result() for b in bands]
    per_pair = results_frame(results)
    if settings.permutations == 0 and "p_value" in per_pair.columns:
        per_pair = per_pair.drop(columns=["p_value"])  # NaN by construction without a test
    record = {**settings.record(), "selection_rule": _selection_rule(settings), "split_rule": SPLIT_RULE,
              **({"freshness_check": "draw ids"} if ids is not None else {})}
    audit_counts = {
        "identities": len(groups), "identities_below_min_rows": len(left_out),
        "candidate_pairs": len(shuffled),
        **{f"pairs_{r}": min(counts[r], len(shuffled)) for r in ("gaussmech", "kde_lr", "mmd_tv", "roc_oof")},
        "selection_candidates": int(ranking["rank"].notna().sum()),
        "selection_not_computed": int(ranking["not_computed"].notna().sum()),
        "identities_too_small_to_split": len(too_small),
        "certificates": len(certificates),
        **({"worst_pair_certificates": len(worst.certificates)} if worst is not None else {}),
        **({"tradeoff_certificates": len(bands)} if settings.tradeoff else {}),
        "not_computed": int(per_pair.drop_duplicates(["route", "identity_a", "identity_b"])["not_computed"].notna().sum())
        if len(per_pair) else 0,
    }
    return ConditionAudit(results=tuple(results), per_pair=per_pair, summary=summarize(per_pair),
                          selection=ranking.reset_index(drop=True), settings=record, counts=audit_counts,
                          source=source, table_counts=table_counts, worst_pair=worst, tradeoff=tuple(bands))


SPLIT_RULE = "each identity split once: permutation by stream('dev-test-split', seed, identity)"


def _selection_rule(settings: AuditSettings) -> str:
    return ("development-only out-of-fold AUC (ties: "
            + ("the larger cap of the pair's test sizes, then " if settings.prefer_certifiable else "")
            + "dev max(TPR-FPR), then shuffled order)")


def _audited_groups(table, min_rows: int):
    """Source name, filter counts, groups with >= ``min_rows`` rows, labels left out, coordinate names."""
    from .data import EmbeddingTable
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
                         f"defaults to the {_ROC_FOLDS} ROC-HT folds)")
    return source, table_counts, groups, left_out, coordinate_names


def _draw_ids(table, groups, draw_ids) -> dict[Hashable, np.ndarray] | None:
    """The draw ids of every audited identity's rows (validated), or None."""
    from .data import EmbeddingTable
    if draw_ids is None:
        return None
    if isinstance(draw_ids, str):
        if draw_ids != "image_ids":
            raise ValueError(f"draw_ids must be a mapping identity -> ids or 'image_ids', got {draw_ids!r}")
        if not isinstance(table, EmbeddingTable) or table.image_ids is None:
            raise ValueError("draw_ids='image_ids' needs an embedding table with an image-id column")
        draw_ids = {label: table.image_ids[table.labels == label] for label in groups}
        blank = {label: int(np.sum(v == "")) for label, v in draw_ids.items() if np.any(v == "")}
        if blank:
            first = next(iter(blank))
            raise ValueError(f"{table.source}: {sum(blank.values())} audited row(s) have no image id (first of "
                             f"identity {first!r}); draw ids need one id per row")
    missing = [label for label in groups if label not in draw_ids]
    if missing:
        raise ValueError(f"draw_ids has no ids for identity {missing[0]!r} ({len(missing)} audited identity(ies) "
                         "without ids)")
    return {label: as_draw_ids(draw_ids[label], len(groups[label]), f"draw_ids[{label!r}]") for label in groups}


def _certify_selected(groups, shuffled, settings: AuditSettings, draw_ids, n_jobs, progress):
    """Split every identity once, rank pairs on development rows, certify the top ones on test rows."""
    import pandas as pd
    from .audits import reserved_test_pairs
    from .audits.worst_pair import certify_top_pairs, ranked_pairs, select_pairs
    from .bounds import bonferroni_alpha, certifiable_cap
    ranking = pd.DataFrame(columns=["rank", "identity_a", "identity_b", "order", "dev_auc", "dev_tv_witness",
                                    "selected", "not_computed"])
    if settings.certificates == 0 and settings.worst_pair == 0:
        return [], None, [], ranking, []
    dev, test, too_small = split_identities(groups, test_size=settings.test_size, seed=settings.seed)
    ids = {}
    if draw_ids is not None:  # the same permutation as the rows: every row keeps its id
        dev_ids, test_ids, _ = split_identities(draw_ids, test_size=settings.test_size, seed=settings.seed)
        ids = dict(dev_ids=dev_ids, test_ids=test_ids)
    pool = shuffled[: settings.selection_pool]
    caps = None
    if settings.prefer_certifiable:
        level = bonferroni_alpha(settings.family_size or settings.certificates or settings.worst_pair,
                                 settings.confidence)
        caps = {p: certifiable_cap(len(test[p[0]]), len(test[p[1]]), level, settings.delta, bound=settings.bound)
                for p in pool if p[0] in test and p[1] in test}
    selected, ranking = select_pairs(dev, pool, max(settings.certificates, settings.worst_pair), seed=settings.seed,
                                     test_caps=caps, n_jobs=n_jobs, progress=progress)
    worst = None
    if settings.worst_pair:
        ranked = ranked_pairs(ranking)
        selected = ranked[: settings.certificates]
        ranking["selected"] = [bool(pd.notna(r) and r <= settings.certificates) for r in ranking["rank"]]
        ranking["worst_pair_selected"] = [bool(pd.notna(r) and r <= settings.worst_pair) for r in ranking["rank"]]
        worst = certify_top_pairs(dev, test, ranked, settings.worst_pair, confidence=settings.confidence,
                                  delta=settings.delta, seed=settings.seed, selection_rule=_selection_rule(settings),
                                  n_jobs=n_jobs, progress=progress, bound=settings.bound, **ids)
    if not selected:
        return [], worst, [], ranking, too_small
    certificates = reserved_test_pairs(dev, selected, test_groups=test,
                                       n_certificates=int(settings.family_size or len(selected)),
                                       confidence=settings.confidence, delta=settings.delta, seed=settings.seed,
                                       n_jobs=n_jobs, progress=progress, bound=settings.bound, **ids)
    bands = _tradeoff_bands(dev, test, selected, certificates, settings, bool(ids), n_jobs, progress)
    return certificates, worst, bands, ranking, too_small


def _tradeoff_bands(dev, test, selected, certificates, settings: AuditSettings, by_draw_ids: bool, n_jobs,
                    progress) -> list[TradeoffCertificate]:
    """Step 5 of the module docstring: the trade-off certificates of the certified pairs, on their rows."""
    from .audits.tradeoff import TradeoffCertificate, tradeoff_certificate_pairs
    if not settings.tradeoff:
        return []
    bands = tradeoff_certificate_pairs(dev, selected, test_groups=test,
                                       n_certificates=int(settings.family_size or len(selected)),
                                       confidence=settings.confidence, delta=settings.delta, seed=settings.seed,
                                       n_jobs=n_jobs, progress=progress, check_reuse=not by_draw_ids)
    if not by_draw_ids:
        return bands
    # values repeat by design: each pair's reserved test checked these very rows by draw id; a pair it
    # refused (or could not compute) is not computed here either, for the same reason
    return [b if r.computed or not b.computed else TradeoffCertificate.failed(
        r.not_computed, pair=b.pair, n=b.n, method=b.method, confidence=b.confidence,
        alpha_per_bound=b.alpha_per_bound, correction=b.correction, delta=b.delta, deltas=b.deltas,
        settings=b.settings, details={"error": str(r.details.get("error", "ValueError"))})
        for b, r in zip(bands, certificates)]
