"""Start-up cost: `import epsaudit` and `epsaudit --help` against `import numpy`, measured in one run.

    python benchmarks/bench_import.py              # 15 repetitions each, median wall time
    python benchmarks/bench_import.py --reps 30 --out benchmarks/results/import.csv

Each command runs in a fresh interpreter (``sys.executable``); the three commands are interleaved
repetition by repetition so that load on the machine affects them alike, and the median wall time
of each is reported with its ratio to ``import numpy``. It also lists which of the heavy modules
(scipy.optimize, scipy.stats, sklearn, pandas, matplotlib) each command imports: none should.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

HEAVY = ("scipy.optimize", "scipy.stats", "sklearn", "pandas", "matplotlib")
COMMANDS = {
    "import numpy": "import numpy",
    "import epsaudit": "import epsaudit",
    "epsaudit --help": ("import sys, contextlib, io\nsys.argv = ['epsaudit', '--help']\nfrom epsaudit.cli import main\n"
                        "with contextlib.redirect_stdout(io.StringIO()):\n    try:\n        main()\n"
                        "    except SystemExit:\n        pass"),
}


def heavy_imported(code: str) -> list[str]:
    """The modules of :data:`HEAVY` loaded after running ``code`` in a fresh interpreter."""
    probe = code + f"\nimport sys\nprint(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return [m for m in out.strip().splitlines()[-1].split(",") if m] if out.strip() else []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--out", type=Path, default=None, help="CSV of the table")
    args = parser.parse_args(argv)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.reps):
        for name, code in COMMANDS.items():
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
            times[name].append(time.perf_counter() - t0)
    base = statistics.median(times["import numpy"])
    rows = []
    for name, ts in times.items():
        med = statistics.median(ts)
        rows.append((name, med * 1000, med / base, ",".join(heavy_imported(COMMANDS[name])) or "none"))
    print(f"{'command':<18}{'median ms':>10}{'x numpy':>9}  heavy modules loaded   ({args.reps} interleaved reps)")
    for name, ms, ratio, heavy in rows:
        print(f"{name:<18}{ms:>10.0f}{ratio:>9.2f}  {heavy}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("w", encoding="utf-8") as f:
            f.write("command,median_ms,ratio_to_numpy,heavy_modules,reps\n")
            for name, ms, ratio, heavy in rows:
                f.write(f"{name},{ms:.1f},{ratio:.3f},\"{heavy}\",{args.reps}\n")
    return 0 if all(r[3] == "none" for r in rows[1:]) else 1


if __name__ == "__main__":
    sys.exit(main())
