"""The settings of one condition audit, defined once.

:class:`AuditSettings` is the single definition of what :func:`epsaudit.condition.audit_condition`
can be told: each field has its type, default and help text. From it come the function's
``settings`` record, the ``epsaudit audit`` command-line flags (:meth:`AuditSettings.add_arguments`,
:meth:`AuditSettings.from_namespace`, :meth:`AuditSettings.cli_args`) and the book's settings table
(:meth:`AuditSettings.table`). The library's messages name the parameter (``min_rows``); only the
command line translates it into its flag (``--min-rows``, :func:`flag`).
"""

from __future__ import annotations

import argparse
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from typing import Any

from .pairs import PAIRS_PER_ROUTE
from .results import BOUNDS

#: ROC-HT folds (the paper's 5): a class needs at least one row per fold.
ROC_FOLDS = 5


class SettingsError(ValueError):
    """A setting with a value it cannot take.

    Attributes
    ----------
    parameter : str
        The field of :class:`AuditSettings` (the command line shows its flag instead).
    requirement : str
        What the value must be, and what it was.

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
    """What one condition audit computes (*Picture the Epsilon*, Section IV; the book's methods chapter).

    Every field is a number or a flag of the protocol; results do not depend on anything else
    (parallel workers and progress bars are arguments of the run, not settings).

    Raises
    ------
    SettingsError
        (a ``ValueError``) For a value out of range, naming the parameter.

    Examples
    --------
    >>> AuditSettings(pairs=50).pairs
    50
    >>> AuditSettings(min_rows=2)
    Traceback (most recent call last):
    ...
    epsaudit.settings.SettingsError: min_rows must be >= 5, the ROC-HT fold count (a class needs one row per fold); got 2
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
    min_rows: int = _setting(ROC_FOLDS, "identities with fewer rows are left out and counted "
                                        f"(at least the {ROC_FOLDS} ROC-HT folds)", "N")
    seed: int = _setting(0, "base seed of the pair shuffle, folds, permutations and development/test split")
    permutations: int = _setting(0, "MMD permutation-test size per pair (0 = no test; the paper uses 10000)", "B")

    def __post_init__(self) -> None:
        for name in ("pairs", "kde_pairs", "roc_pairs", "certificates", "selection_pool", "worst_pair", "permutations",
                     "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise SettingsError(name, f"must be an integer >= 0; got {value!r}")
        if not isinstance(self.min_rows, int) or self.min_rows < ROC_FOLDS:
            raise SettingsError("min_rows", f"must be >= {ROC_FOLDS}, the ROC-HT fold count (a class needs one row "
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
        """Every setting as a plain dict (JSON-ready; ``kde_alphas`` as a list).

        Examples
        --------
        >>> AuditSettings().record()["kde_alphas"]
        [0.0, 0.01]
        """
        out = asdict(self)
        out["kde_alphas"] = list(self.kde_alphas)
        return out

    def replace(self, **changes: Any) -> "AuditSettings":
        """A copy with some settings changed.

        Raises
        ------
        SettingsError
            For an unknown setting name (the known ones are listed) or a bad value.

        Examples
        --------
        >>> AuditSettings().replace(certificates=0).certificates
        0
        """
        unknown = sorted(set(changes) - {f.name for f in fields(self)})
        if unknown:
            raise SettingsError(unknown[0], f"is not an audit setting; the settings are "
                                            f"{', '.join(f.name for f in fields(self))}")
        return replace(self, **changes)

    def table(self) -> "Any":
        """The settings as a table for the book: ``setting``, ``flag``, ``value``, ``default``, ``meaning``.

        Returns
        -------
        pandas.DataFrame
            One row per setting.

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
        """Add one flag per setting to an argparse parser (defaults and help from the fields).

        Parameters
        ----------
        parser : argparse.ArgumentParser or argument group

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

        Examples
        --------
        >>> parser = argparse.ArgumentParser()
        >>> AuditSettings.add_arguments(parser)
        >>> AuditSettings.from_namespace(parser.parse_args(["--pairs", "20"])).pairs
        20
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
