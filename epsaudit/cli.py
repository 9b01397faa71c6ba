"""Command line: ``epsaudit audit | check | plan | certify-stream`` (each subcommand's ``--help`` describes it).

``audit`` and ``check`` load each file with :func:`epsaudit.data.load_embeddings` (what was detected and
filtered goes to stderr); ``audit`` runs :func:`epsaudit.condition.audit_condition` on each file separately (the
function the face notebook calls: the same numbers for the same seed) and prints the summary table, with ``--out``
also writing the per-pair CSV and a JSON record. ``plan`` prints the test size a reserved-test certificate needs;
``certify-stream`` feeds test rows in arrival order to a :class:`epsaudit.bounds.SequentialCertificate` and exits
with the status of its stop reason (:data:`EXIT_CODES`). Exit status 2: bad input or options (the message names
the file, line and column). Start-up: the parser needs only :mod:`epsaudit.condition`; the heavy stack is imported
by the subcommand that runs, so ``epsaudit --help`` answers at once.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from . import __version__
from .parallel import SCHEDULER_ENV, available_cores, running_on
from .condition import AuditSettings, SettingsError, flag

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pandas as pd

    from .data import EmbeddingTable

DETECTION_HELP = """\
input format
  A delimited text file (',' ';' or tab, auto-detected; UTF-8 with or without BOM; .gz is fine)
  with a header line and one row per generated image: identity label, optional image id, and the
  embedding in columns e0..e{d-1} (or emb_0.., x0.., 0..; any one prefix).

column detection (override with --label-col / --embedding-cols / --image-col)
  image id   first column named image_id, image, filename, path, ... (read as text)
  label      first text column named identity, label, id, person, name, subject, class; else the
             first such column of integers (e.g. CelebA identity numbers; read as text, '7' for
             7, 007 or 7.0) unless it has a different value on every row (a row index); else the
             first text column. A label-named column of other numbers (0.5) is never taken;
             --label-col may name any column (read as text).
  embedding  the one block <prefix>0..<prefix>{d-1} (or 1..d) of numeric columns; several blocks
             or a block with a gap is an error; without a block, all numeric columns except the
             label, image id and columns named like them.

labels and image ids
  Surrounding whitespace is removed and text put in Unicode NFC before grouping ('Ann ' = 'Ann');
  labels written several ways are reported. Blank cells and NA/NaN/null/none are missing: a row
  with a missing label is dropped; a missing image id matches no other row.

row filter (every count is printed; dropped rows are listed in --out PREFIX.json)
  drop rows with a missing label, a missing/NaN/inf embedding cell, or norm <= 1e-6; then drop
  copies of one image (same image id, or same embedding after L2-normalisation: exact, rescaled
  or float32-rounded copies), keeping the first under one label and dropping every row of an
  image found under two labels; then L2-normalise. Identities with fewer than --min-rows rows
  (default 5) are left out of the audit and counted. A non-numeric cell in an embedding column is
  an error, not a filter.
"""

AUDIT_HELP = """\
protocol (Picture the Epsilon, Section IV)
  All unordered identity pairs are shuffled once with --seed. GaussMech and MMD-TV audit the first
  --pairs (500), KDE-LR (alpha 0 and 0.01) the first --kde-pairs (100), ROC-HT out-of-fold the
  first --roc-pairs (200). Reserved-test certificates: each identity's rows are split once into
  development and test parts (--test-size); the first --selection-pool (100) pairs are ranked by
  out-of-fold AUC on development rows only (ties: max(TPR - FPR), then the shuffled order; with
  --prefer-certifiable first the larger cap of the pair's test sizes); the top --certificates are
  certified on the untouched test rows with a Bonferroni correction over --certificates (or over
  --family-size certificates reported together), so all of them hold together at --confidence (95%).

output table (stdout), one row per route (KDE-LR per alpha) and per certificate
  kind        diagnostic | estimate | certificate (what the number is)
  value, max  median and maximum over the route's pairs; the certificate's lower bound
  pairs       pairs the route computed (the median is over these)
  not_computed  pairs the route could not compute (e.g. a coordinate constant within one
              identity for KDE-LR, test rows that repeat development rows for a certificate);
              the reasons are printed on stderr and listed in --out PREFIX.json
  n_infinite  ROC-HT OOF pairs whose value is +inf (the median is +inf when most are)
  median_auc  ROC-HT OOF median AUC
  confidence, alpha_per_bound, n_test_a/b   the certificate's family-wise level, level of each
              one-sided Clopper-Pearson bound, and test rows per identity
  cap         the most the certificate's test size could certify (zero test errors)
  worst_pair  with --worst-pair K: the top K pairs ranked on development rows are certified with a
              Bonferroni correction over K, and the largest bound is a lower bound (95%) on the
              worst-case pairwise epsilon of the mechanism, the quantity a DP claim is about
  tradeoff_reserved  with --tradeoff: per certified pair, the best single-point epsilon of its
              trade-off (f-DP) certificate on the same rows at the same level; a second table
              gives its certified Gaussian-DP mu, the reserved-test certificate it is compared
              with, the cost of the band's extra correction at that test's threshold and the gain
              (best point - reserved test); --out PREFIX also writes the certified points of each
              pair's trade-off curve to PREFIX_tradeoff.csv
  Cells that do not apply are <NA>.
"""


#: Exit status of ``epsaudit certify-stream`` by stop reason (2: bad input or options).
EXIT_CODES = {"target reached": 0, "claim refuted": 3, "budget spent": 4, "futile": 5, None: 6}
EXIT_HELP = """\
exit status
  0  target reached (the running bound reached --target)
  3  claim refuted (the running bound exceeds --claim)
  4  budget spent (--budget rows read without another stop)
  5  futile (zero errors in the rest of --budget rows could not reach --target)
  6  the input ended (or --timeout passed without a new row) before any stop rule fired
  2  bad input or options
input
  A table with a header line and the columns side (A or B), erred (1/0, true/false) and, optionally,
  draw_id (each row's draw id: repeats are refused). ',' ';' or tab delimited. Rows in arrival order.
"""
TRUE, FALSE = {"1", "true", "t", "yes", "y"}, {"0", "false", "f", "no", "n"}


def _add_loader_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="EMBEDDINGS.csv",
                   help="embedding table(s); several files are audited separately and must share d")
    p.add_argument("--label-col", metavar="C", help="identity-label column (default: auto-detected)")
    p.add_argument("--embedding-cols", metavar="SPEC",
                   help='embedding columns: "e0:e127" (inclusive range in file order), "e0,e1,e2", or both '
                        "comma-separated (default: auto-detected)")
    p.add_argument("--image-col", metavar="C", help="image-id column (default: auto-detected by name)")


def build_parser() -> argparse.ArgumentParser:
    """The ``epsaudit`` argument parser (subcommands ``audit``, ``check``, ``plan`` and ``certify-stream``).

    Returns
    -------
    argparse.ArgumentParser
        ``audit`` takes one flag per :class:`~epsaudit.condition.AuditSettings` field.

    Examples
    --------
    >>> args = build_parser().parse_args(["audit", "t.csv", "--pairs", "50"])
    >>> args.command, args.files, args.pairs, args.jobs == available_cores(), args.scheduler
    ('audit', ['t.csv'], 50, True, None)
    """
    parser = argparse.ArgumentParser(
        prog="epsaudit",
        description="Audit epsilon-like privacy numbers for face images in embedding space.\n"
                    "Every number printed says whether it is a diagnostic, an estimate or a certificate.",
        epilog=DETECTION_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"epsaudit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    audit = sub.add_parser(
        "audit", help="run GaussMech, KDE-LR, MMD-TV, ROC-HT and reserved-test certificates on embedding tables",
        description="Run the paper's four audit routes and reserved-test certificates on each embedding table.",
        epilog=AUDIT_HELP + "\n" + DETECTION_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_loader_options(audit)
    AuditSettings.add_arguments(audit.add_argument_group("audit settings"))
    audit.add_argument("--jobs", type=int, default=available_cores(), metavar="J",
                       help="parallel workers (joblib; -1 = all cores; default: the cores available to this "
                            f"process, {available_cores()} here); numbers do not depend on it")
    audit.add_argument("--scheduler", metavar="ADDRESS", default=None,
                       help=f"send the work to the workers of a running Dask scheduler (tcp://host:port; default "
                            f"${SCHEDULER_ENV} when set; needs pip install 'epsaudit[scale]'); --jobs is then "
                            "ignored and numbers do not depend on it")
    audit.add_argument("--out", metavar="PREFIX",
                       help="write PREFIX.csv (all per-pair results) and PREFIX.json (summary, settings, "
                            "input SHA-256, filter counts), with --tradeoff also PREFIX_tradeoff.csv (the certified "
                            "points of every trade-off curve); a trailing .csv or .json is dropped from PREFIX")
    audit.add_argument("--progress", action="store_true", help="show progress bars on stderr")

    check = sub.add_parser("check", help="load embedding tables and report detection and filter counts only",
                           description="Load each file as 'audit' would and print what was detected and filtered.",
                           epilog=DETECTION_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_loader_options(check)

    plan = sub.add_parser(
        "plan", help="the test size per identity a reserved-test certificate needs",
        description="Smallest number of test rows per identity at which a reserved test can certify EPSILON "
                    "(the inverse of the cap): with zero errors, or with a test of the given TPR and FPR.")
    plan.add_argument("--epsilon", type=float, required=True, metavar="E",
                      help="the lower bound to certify (0: anything above 0)")
    plan.add_argument("--confidence", type=float, default=0.95, metavar="C", help="family-wise confidence (default 0.95)")
    plan.add_argument("--family", type=int, default=1, metavar="M",
                      help="certificates reported together (Bonferroni family size; default 1)")
    plan.add_argument("--delta", type=float, default=1e-5, metavar="D", help="delta (default 1e-5)")
    plan.add_argument("--tpr", type=float, default=1.0, metavar="T", help="the test's true-positive rate (default 1)")
    plan.add_argument("--fpr", type=float, default=0.0, metavar="F", help="the test's false-positive rate (default 0)")
    plan.add_argument("--bound", choices=("both", "joint", "clopper-pearson"), default="both",
                      help="plan for the exact joint certificate (the library's default), the paper's split "
                           "Clopper-Pearson bound, or both (default)")
    plan.add_argument("--sequential", action="store_true",
                      help="also the anytime-valid sequential certificate: its stopping rows with zero errors and "
                           "(simulated) at the planned rates, and the fixed size's power if the rates are off")
    plan.add_argument("--prior", metavar="P", help="with --sequential: its prior (default H:<planned rate>, or B)")
    plan.add_argument("--runs", type=int, default=1000, metavar="R", help="with --sequential: simulated runs (1000)")
    plan.add_argument("--seed", type=int, default=0, metavar="S", help="with --sequential: simulation seed (0)")
    stream = sub.add_parser(
        "certify-stream", help="an anytime-valid certificate from test rows in arrival order (a file or stdin)",
        description="Read test rows (side, erred, draw_id) in arrival order, print the running anytime-valid bound "
                    "and stop at the first stop rule.", epilog=EXIT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_stream_arguments(stream)
    return parser


def _plan(args: argparse.Namespace) -> int:
    from .bounds import BOUNDS, bonferroni_alpha, bound_level, planned_epsilon, promise_sizes, required_test_size

    if args.family < 1:
        raise ValueError(f"--family must be at least 1 (certificates planned together), got {args.family}")
    alpha = bonferroni_alpha(args.family, args.confidence)
    perfect = (args.tpr, args.fpr) == (1.0, 0.0)
    what = "zero test errors" if perfect else f"TPR {args.tpr:g} and FPR {args.fpr:g} (expected counts)"
    target = "anything above 0" if args.epsilon == 0 else f"epsilon >= {args.epsilon:g}"
    lines, sizes_needed = [], {}  # every answer is computed (and every error raised) before the heading is printed
    for bound in (BOUNDS if args.bound == "both" else (args.bound,)):
        n = sizes_needed[bound] = required_test_size(args.epsilon, alpha, args.delta, args.tpr, args.fpr, bound=bound)
        level = (f"one joint test per certificate at {alpha:.3g}" if bound == "joint" else
                 f"two one-sided bounds per certificate at {bound_level(alpha, bound):.3g}")
        checked = promise_sizes(n)
        sizes = ("" if perfect else f" (so does every size up to {2 * n})" if len(checked) == n + 1
                 else f" (so do the {len(checked)} sizes checked from {n} to {2 * n}, {checked[1] - checked[0]} apart)")
        below = _at_most(planned_epsilon(n - 1, alpha, args.delta, args.tpr, args.fpr, bound=bound), args.epsilon)
        lines.append(f"  {bound + ' (default)' if bound == 'joint' else bound + ' (the paper' + chr(39) + 's)'}: "
                     f"{n} test rows per identity{sizes}; {n - 1} rows certify {below} [{level}]")
    print(f"To certify {target} with {what}, {args.confidence:.0%} over {args.family} certificate(s), "
          f"delta {args.delta:g}:")
    print("\n".join(lines))
    if args.sequential:
        print(_sequential_plan_text(args.epsilon, alpha, args.delta, args.tpr, args.fpr, args.prior, args.runs, args.seed,
                                    n=sizes_needed.get("joint")))
    return 0


def _at_most(value: float, target: float) -> str:
    """``"at most <value>"`` with enough digits to show it is below ``target``; ``"nothing"`` at or below 0."""
    if value <= 0:
        return "nothing (a bound of 0)"
    for digits in (4, 6, 8):
        text = f"{value:.{digits}g}"
        if float(text) < target:
            break
    return f"at most {text}"


# the sequential certificate: plan --sequential and certify-stream


def _add_stream_arguments(p) -> None:
    """Add the options of ``epsaudit certify-stream`` to the parser ``p``."""
    p.add_argument("source", metavar="FILE|-", help="table of test rows in arrival order ('-': standard input)")
    p.add_argument("--target", type=float, metavar="E", help="stop when the running bound reaches E (exit 0)")
    p.add_argument("--claim", type=float, metavar="E", help="stop when the running bound exceeds a claimed E (exit 3)")
    p.add_argument("--budget", type=int, metavar="N", help="stop after N rows (exit 4; with --target also futility, 5)")
    p.add_argument("--confidence", type=float, default=0.95, metavar="C", help="family-wise confidence (default 0.95)")
    p.add_argument("--family", type=int, default=1, metavar="K", help="pairs certified together (default 1)")
    p.add_argument("--delta", type=float, default=0.0, metavar="D", help="delta (default 0)")
    p.add_argument("--prior", default="B", metavar="P",
                   help="prior of the error rates: B (default), J, Z, P:<rate>, H:<rate>; fixed before the first row")
    p.add_argument("--test-hash", metavar="H", help="hash of the fixed test, recorded with the certificate")
    p.add_argument("--follow", action="store_true", help="the file grows: poll it for new rows")
    p.add_argument("--poll", type=float, default=0.5, metavar="S", help="seconds between polls (default 0.5)")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S",
                   help="with --follow: give up after S seconds without a new row (default 60)")
    p.add_argument("--every", type=int, default=1, metavar="N", help="print the running bound every N rows (default 1)")
    p.add_argument("--record", metavar="OUT.json", help="write the certificate's record (every row and the bound path)")


def _lines(handle: TextIO, follow: bool, poll: float, timeout: float) -> Iterator[str]:
    """Complete lines of a text stream; with ``follow``, wait for more until ``timeout`` seconds of silence."""
    pending, quiet = "", 0.0
    while True:
        chunk = handle.readline()
        if chunk:
            pending += chunk
            if pending.endswith("\n"):
                yield pending
                pending, quiet = "", 0.0
            continue
        if not follow or quiet >= timeout:
            if pending:
                yield pending  # a last line without its newline
            return
        time.sleep(poll)
        quiet += poll


def _rows(lines: Iterator[str]) -> Iterator[tuple[int, str, bool, Any]]:
    """(line number, side, erred, draw id) per data line; ValueError naming the line on bad input."""
    header = None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if header is None:
            delimiter = max(",;\t", key=line.count)
            header = [h.strip().lower() for h in next(csv.reader([line], delimiter=delimiter))]
            missing = [c for c in ("side", "erred") if c not in header]
            if missing:
                raise ValueError(f"line 1: the header needs the columns side and erred (and optionally draw_id); "
                                 f"missing {missing}")
            where = {c: header.index(c) for c in ("side", "erred", "draw_id") if c in header}
            continue
        cells = next(csv.reader(io.StringIO(line), delimiter=delimiter))
        if len(cells) < len(header):
            raise ValueError(f"line {number}: {len(cells)} cell(s) for {len(header)} column(s)")
        side, erred = cells[where["side"]].strip().upper(), cells[where["erred"]].strip().lower()
        if side not in ("A", "B"):
            raise ValueError(f"line {number}, column side: {side!r} is neither A nor B")
        if erred not in TRUE | FALSE:
            raise ValueError(f"line {number}, column erred: {erred!r} is not 1/0 or true/false")
        draw_id = cells[where["draw_id"]].strip() if "draw_id" in where else None
        yield number, side, erred in TRUE, draw_id or None


def _certify_stream(args, out: TextIO | None = None) -> int:
    """Run ``epsaudit certify-stream`` (output to ``out``, default stdout); the :data:`EXIT_CODES` of its stop reason.

    Raises ValueError on bad rows (line and column named), a reused draw id or bad options.
    """
    from .bounds import SequentialCertificate, bonferroni_alpha

    out = sys.stdout if out is None else out
    cert = SequentialCertificate(alpha=bonferroni_alpha(1, args.confidence), delta=args.delta, prior=args.prior,
                                 family=args.family, target=args.target, budget=args.budget, claim=args.claim,
                                 test_hash=args.test_hash)
    print(f"sequential certificate: {args.confidence:.0%} over {args.family} pair(s) (each at "
          f"{cert.alpha_per_pair:.3g}), delta {args.delta:g}, prior {'/'.join(p.name for p in cert.prior)}", file=out)
    handle = sys.stdin if args.source == "-" else open(args.source, encoding="utf-8-sig", newline="")
    try:
        reason = cert.stop_reason
        if reason is None:
            for number, side, erred, draw_id in _rows(_lines(handle, args.follow, args.poll, args.timeout)):
                try:
                    cert.update(side, erred, draw_id)
                except ValueError as exc:
                    raise ValueError(f"line {number}: {exc}") from None
                reason = cert.stop_reason
                if cert.rows % max(args.every, 1) == 0 or reason is not None:
                    print(f"row {cert.rows}: {side} {'erred' if erred else 'ok'}  fp {cert.fp}/{cert.n_neg}  "
                          f"fn {cert.fn}/{cert.n_pos}  bound {cert.bound:.4f}", file=out, flush=True)
                if reason is not None:
                    break
    finally:
        if handle is not sys.stdin:
            handle.close()
    ended = "input ended before any stop rule" if reason is None else reason
    print(f"stop: {ended} after {cert.rows} row(s); anytime-valid bound {cert.bound:.4f} "
          f"(exit {EXIT_CODES[reason]})", file=out)
    if args.record:
        with open(args.record, "w", encoding="utf-8") as f:
            json.dump(cert.record(), f, default=str, indent=1)
    return EXIT_CODES[reason]


def _sequential_plan_text(epsilon: float, alpha: float, delta: float, tpr: float, fpr: float, prior: str | None = None,
                          runs: int = 1000, seed: int = 0, n: int | None = None) -> str:
    """``plan --sequential``: the fixed size and its power beside the sequential certificate's stopping rows.

    ``alpha`` is each certificate's level, ``prior`` defaults to :func:`epsaudit.bounds.planned_prior` of the rates,
    ``n`` to the joint test's required size (passed when the caller has it).

    >>> print(_sequential_plan_text(3.0, 0.05, 0.0, 1.0, 0.0, runs=100))  # doctest: +ELLIPSIS
    sequential (anytime-valid, prior B): stops at 79 rows (40 of A, 39 of B) with zero errors...
    """
    from .bounds import (fixed_size_power, planned_prior, required_test_size, sequential_stopping_rows,
                         zero_error_stopping_row)

    fnr = round(1.0 - tpr, 12)
    prior = planned_prior(fpr, fnr) if prior is None else prior
    name = prior if isinstance(prior, str) else "/".join(prior)
    n = required_test_size(epsilon, alpha, delta, tpr, fpr, bound="joint") if n is None else n
    zero = zero_error_stopping_row(epsilon, alpha, delta, prior)
    lines = [f"sequential (anytime-valid, prior {name}): stops at {zero} rows ({(zero + 1) // 2} of A, {zero // 2} "
             f"of B) with zero errors; the fixed-size joint test needs {n} + {n} rows, fixed in advance"]
    off = (2 * fpr, 2 * fnr) if fpr or fnr else (0.01, 0.01)
    for label, (p, q) in (("at the planned rates", (fpr, fnr)), ("if the rates are off", off)):
        p, q = min(p, 1.0), min(q, 1.0)
        power = fixed_size_power(n, epsilon, alpha, p, q, delta, runs=runs, seed=seed)
        head = f"  {label} (FPR {p:.3g}, FNR {q:.3g}): the fixed size certifies with probability {power:.0%}; "
        k = math.exp(epsilon)
        if 1 - q <= k * p + delta and 1 - p <= k * q + delta:  # inside the null region: Ville's inequality
            lines.append(head + f"the sequential one stops with probability at most {alpha:.3g}, however long it runs "
                         f"(these error rates are possible under ({epsilon:g}, {delta:g})-DP; the fixed size is {2 * n})")
            continue
        cap = max(50 * n, 2000)
        stop = sequential_stopping_rows(epsilon, alpha, p, q, delta, prior, runs=runs, max_rows=cap, seed=seed)
        median = f"{stop['median']:.0f}" if stop["stopped"] >= 0.5 else f"beyond {cap}"
        q90 = f"by {stop['q90']:.0f}" if stop["stopped"] >= 0.9 else f"beyond {cap}"
        mean = f"mean {stop['mean']:.0f}, " if stop["stopped"] == 1 else f"{stop['stopped']:.0%} stopped by {cap}, "
        lines.append(head + f"the sequential one stops at median {median} rows, 90% {q90} ({mean}the fixed size "
                     f"is {2 * n})")
    return "\n".join(lines)


def _load(args: argparse.Namespace, to_stdout: bool = False) -> list[EmbeddingTable]:
    from .data import check_same_dimension, load_embeddings

    report = sys.stdout if to_stdout else sys.stderr  # looked up now: callers may redirect them
    tables = []
    for f in args.files:
        table = load_embeddings(f, label_col=args.label_col, embedding_cols=args.embedding_cols,
                                image_col=args.image_col)
        print(table.summary(), file=report)
        tables.append(table)
    if len(tables) > 1:
        check_same_dimension(tables)
    return tables


def _format_summary(summary: pd.DataFrame) -> str:
    """The summary table as text: columns that are <NA> throughout are left out, floats to 4 digits."""
    frame = summary.loc[:, [c for c in summary.columns if c in ("route", "kind") or summary[c].notna().any()]]
    return frame.to_string(index=False, float_format=lambda v: f"{v:.4g}", na_rep="<NA>")


def _format_tradeoff(table: pd.DataFrame) -> str:
    """``ConditionAudit.tradeoff_table()`` as text under a heading naming the level, floats to 4 digits."""
    if table.empty:
        return "trade-off certificates: none (no pair was certified)"
    first = table.iloc[0]
    keep = ["identity_a", "identity_b", "n_test_a", "n_test_b", "points", "mu_lower", "best_epsilon",
            "single_threshold_epsilon", "correction_cost", "gain"]
    level = f"{first['alpha_per_bound']:.3g} per one-sided bound"
    if table["alpha_per_bound"].nunique() > 1:  # a band with fewer distinct thresholds divides by fewer
        level = "the level of each one-sided bound in column alpha_per_bound"
        keep.insert(5, "alpha_per_bound")
    head = f"trade-off certificates ({first['confidence']:.0%} family-wise, delta {first['delta']:g}, {level}):"
    if table["not_computed"].notna().any():
        keep.append("not_computed")
    frame = table[keep].rename(columns={"single_threshold_epsilon": "reserved", "correction_cost": "cost"})
    return head + "\n" + frame.to_string(index=False, float_format=lambda v: f"{v:.4g}", na_rep="<NA>")


def _input_record(table: EmbeddingTable) -> dict[str, Any]:
    return {
        "path": table.source, "sha256": table.sha256, "label_col": table.label_col,
        "image_col": table.image_col, "embedding_cols": [table.embedding_cols[0], table.embedding_cols[-1]],
        "delimiter": table.delimiter, "bom": table.bom, "notes": list(table.notes),
        "dropped": table.dropped[["file_line", "reason", "detail"]].to_dict(orient="records"),
        "single_row_identities": list(table.single_row_identities),
    }


def _audit(args: argparse.Namespace, argv: Sequence[str]) -> int:
    import pandas as pd

    from .condition import audit_condition
    from .data import jsonable

    settings = AuditSettings.from_namespace(args)
    tables = _load(args)
    frames, records, curves = [], [], []
    for table in tables:
        print(f"auditing {table.source} ...", file=sys.stderr)
        start = time.perf_counter()
        with running_on(args.scheduler, lambda line: print(f"  {line}", file=sys.stderr)):
            audit = audit_condition(table, settings, n_jobs=args.jobs, progress=args.progress)
        seconds = time.perf_counter() - start
        c = audit.counts
        print(f"  {c['identities']} identities audited ({c['identities_below_min_rows']} with < {args.min_rows} rows "
              f"left out), {c['candidate_pairs']} candidate pairs, {c['certificates']} certificate(s); "
              f"{seconds:.1f} s", file=sys.stderr)
        if settings.certificates or settings.worst_pair:
            print(f"  certificates: {_bound_text(settings)}", file=sys.stderr)
        for line in audit.not_computed_notes() + audit.certificate_notes():
            print(f"  note: {line}", file=sys.stderr)
        if len(tables) > 1:
            print(f"== {table.source}")
        print(_format_summary(audit.summary))
        if settings.tradeoff:
            print(_format_tradeoff(audit.tradeoff_table()))
        frames.append(audit.per_pair.assign(condition=table.source))
        curves.append((table.source, audit.tradeoff_points()))
        records.append({**audit.to_dict(), "input": _input_record(table), "seconds": round(seconds, 2)})
    if args.out:
        csv_path, json_path = _output_paths(args.out)
        if settings.tradeoff:
            points = pd.concat([frame.assign(condition=source) for source, frame in curves], ignore_index=True)
            points = points[["condition"] + [c for c in points.columns if c != "condition"]]
            tradeoff_path = csv_path.with_name(csv_path.stem + "_tradeoff.csv")
            tradeoff_path.parent.mkdir(parents=True, exist_ok=True)
            points.to_csv(tradeoff_path, index=False)
            print(f"wrote {tradeoff_path} (the certified points of every trade-off curve)", file=sys.stderr)
        csv_path.parent.mkdir(parents=True, exist_ok=True)
        per_pair = pd.concat(frames, ignore_index=True)
        per_pair = per_pair[["condition"] + [c for c in per_pair.columns if c != "condition"]]
        per_pair.to_csv(csv_path, index=False)
        doc = {"epsaudit_version": __version__, "command": ["epsaudit", *argv], "conditions": records}
        json_path.write_text(json.dumps(jsonable(doc), indent=2, allow_nan=False) + "\n", encoding="utf-8")
        print(f"wrote {csv_path} and {json_path}", file=sys.stderr)
    return 0


def _bound_text(settings: AuditSettings) -> str:
    """Which bound made the reserved-test certificates, in words (printed above the summary)."""
    if settings.bound == "joint":
        return "joint bound (the exact joint test of both error rates; --bound clopper-pearson gives the paper's)"
    return "clopper-pearson bound (the paper's two one-sided bounds; the default is --bound joint)"


def _output_paths(out: str) -> tuple[Path, Path]:
    """``--out`` -> the CSV and JSON paths (``results``, ``results.csv``, ``results.json`` give the same)."""
    prefix = Path(out)
    if prefix.suffix.lower() in (".csv", ".json"):
        prefix = prefix.with_suffix("")
    return prefix.with_name(prefix.name + ".csv"), prefix.with_name(prefix.name + ".json")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``epsaudit`` command; returns the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success; 2 on bad input or options (the message, naming the file, line, column or flag, goes to
        stderr); ``certify-stream``: :data:`EXIT_CODES`. ``--help`` and ``--version`` raise ``SystemExit(0)``.

    Examples
    --------
    >>> main(["plan", "--epsilon", "3", "--delta", "0"])
    To certify epsilon >= 3 with zero test errors, 95% over 1 certificate(s), delta 0:
      joint (default): 31 test rows per identity; 30 rows certify at most 2.972 [one joint test per certificate at 0.05]
      clopper-pearson (the paper's): 76 test rows per identity; 75 rows certify at most 2.987 [two one-sided bounds per certificate at 0.025]
    0
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "check":
            _load(args, to_stdout=True)  # the report is the command's output
            return 0
        if args.command == "plan":
            return _plan(args)
        if args.command == "certify-stream":
            return _certify_stream(args)
        return _audit(args, argv)
    except SettingsError as exc:  # the library names the parameter; the command line names its flag
        print(f"epsaudit: error: {flag(exc.parameter)} {exc.requirement}", file=sys.stderr)
        return 2
    except (ValueError, OSError) as exc:  # EmbeddingFileError is a ValueError
        print(f"epsaudit: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
