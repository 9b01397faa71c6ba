"""The sequential certificate on the command line: ``epsaudit plan --sequential`` and ``epsaudit certify-stream``.

``certify-stream FILE|-`` reads test rows in arrival order -- a delimited table with a header and
the columns ``side`` (A: a row of identity A, a positive; B: a negative), ``erred`` (1/0,
true/false: the fixed test got the row wrong) and optionally ``draw_id`` -- from a file (with
``--follow``, one that grows: it is polled until ``--timeout`` seconds pass without a new row) or
from standard input, feeds them to a :class:`epsaudit.bounds.SequentialCertificate`, prints the
running bound, and exits as soon as a stop rule fires, with the exit status of its reason
(:data:`EXIT_CODES`).
"""

from __future__ import annotations

import csv
import io
import json
import sys
import time
from collections.abc import Iterator
from typing import Any, TextIO

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


def add_stream_arguments(p) -> None:
    """The options of ``epsaudit certify-stream`` (an argparse parser).

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser(); add_stream_arguments(p)
    >>> p.parse_args(["-", "--target", "2"]).target
    2.0
    """
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


def certify_stream(args, out: TextIO | None = None) -> int:
    """Run ``epsaudit certify-stream``: feed the rows to a certificate until a stop rule fires; the exit status.

    Parameters
    ----------
    args : argparse.Namespace
        From :func:`add_stream_arguments`.
    out : text stream, optional
        Where the running bound goes (default standard output).

    Returns
    -------
    int
        :data:`EXIT_CODES` of the stop reason.

    Raises
    ------
    ValueError
        Bad rows (line and column named), a reused draw id, bad options.

    Examples
    --------
    >>> import argparse, tempfile, os
    >>> p = argparse.ArgumentParser(); add_stream_arguments(p)
    >>> path = os.path.join(tempfile.mkdtemp(), "rows.csv")
    >>> _ = open(path, "w").write("side,erred,draw_id\\n" + "".join(f"{'AB'[i % 2]},0,d{i}\\n" for i in range(40)))
    >>> certify_stream(p.parse_args([path, "--target", "2", "--every", "100"]), out=io.StringIO())
    0
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


def sequential_plan_text(epsilon: float, alpha: float, delta: float, tpr: float, fpr: float, prior: str | None = None,
                         runs: int = 1000, seed: int = 0) -> str:
    """``epsaudit plan --sequential``: the fixed size and its power beside the sequential certificate's stopping rows.

    Parameters
    ----------
    epsilon : float
        The target.
    alpha : float
        Error level of each certificate (after the family's correction).
    delta, tpr, fpr : float
        The plan: the test's rates (``fnr = 1 - tpr``).
    prior : str, optional
        Default: :func:`epsaudit.bounds.planned_prior` of the planned rates.
    runs, seed : int
        Simulation runs (seeded).

    Returns
    -------
    str

    Examples
    --------
    >>> print(sequential_plan_text(3.0, 0.05, 0.0, 1.0, 0.0, runs=100))  # doctest: +ELLIPSIS
    sequential (anytime-valid, prior B): stops at 79 rows (40 of A, 39 of B) with zero errors...
    """
    from .bounds import (fixed_size_power, planned_prior, required_test_size, sequential_stopping_rows,
                         zero_error_stopping_row)

    fnr = round(1.0 - tpr, 12)
    prior = planned_prior(fpr, fnr) if prior is None else prior
    name = prior if isinstance(prior, str) else "/".join(prior)
    n = required_test_size(epsilon, alpha, delta, tpr, fpr, bound="joint")
    zero = zero_error_stopping_row(epsilon, alpha, delta, prior)
    lines = [f"sequential (anytime-valid, prior {name}): stops at {zero} rows ({(zero + 1) // 2} of A, {zero // 2} "
             f"of B) with zero errors; the fixed-size joint test needs {n} + {n} rows, fixed in advance"]
    off = (2 * fpr, 2 * fnr) if fpr or fnr else (0.01, 0.01)
    for label, (p, q) in (("at the planned rates", (fpr, fnr)), ("if the rates are off", off)):
        power = fixed_size_power(n, epsilon, alpha, p, q, delta, runs=runs, seed=seed)
        stop = sequential_stopping_rows(epsilon, alpha, min(p, 1.0), min(q, 1.0), delta, prior, runs=runs,
                                        max_rows=max(50 * n, 2000), seed=seed)
        cap = max(50 * n, 2000)
        median = f"{stop['median']:.0f}" if stop["stopped"] >= 0.5 else f"beyond {cap}"
        q90 = f"by {stop['q90']:.0f}" if stop["stopped"] >= 0.9 else f"beyond {cap}"
        mean = f"mean {stop['mean']:.0f}, " if stop["stopped"] == 1 else f"{stop['stopped']:.0%} stopped by {cap}, "
        lines.append(f"  {label} (FPR {p:.3g}, FNR {q:.3g}): the fixed size certifies with probability {power:.0%}; "
                     f"the sequential one stops at median {median} rows, 90% {q90} ({mean}the fixed size is {2 * n})")
    return "\n".join(lines)
