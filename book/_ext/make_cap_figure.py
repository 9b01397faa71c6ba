"""The methods chapter's sample-size figure: the most a reserved test can certify, against its size.

For a test with ``n`` rows per identity and zero errors, the certificate is
:func:`epsaudit.bounds.certifiable_cap` at the error level
:func:`epsaudit.bounds.bonferroni_alpha` of each of a family of ``m`` certificates held together at
95%, for both bounds: the exact joint test (solid) and the paper's split Clopper-Pearson bound
(dashed); a dot marks the smallest ``n`` that certifies anything
(:func:`epsaudit.bounds.required_test_size` at epsilon 0). The book draws it at build time (``book/_ext/capfigure.py``); by hand:

    .venv/bin/python book/_ext/make_cap_figure.py /tmp/certifiable_cap.png
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

#: Certificates held together (Bonferroni family sizes): one pair, a chapter's 40, a face study's 500.
FAMILIES: tuple[int, ...] = (1, 40, 500)
CONFIDENCE = 0.95
DELTA = 1e-5
#: Test rows per identity drawn (log scale).
SIZES: tuple[int, ...] = tuple(sorted({*range(2, 40), *range(40, 200, 4), *range(200, 1001, 20)}))
#: Test sizes marked with a thin vertical line (the sizes the chapters use most).
MARKED: tuple[int, ...] = (30, 100)


def cap_table(sizes=SIZES, families=FAMILIES, confidence=CONFIDENCE, delta=DELTA):
    """The cap of every (bound, family size, test size): a long table ``bound, family, alpha, n, cap``."""
    import pandas as pd

    from epsaudit.bounds import BOUNDS, bonferroni_alpha, certifiable_cap

    rows = []
    for bound in BOUNDS:
        for m in families:
            alpha = bonferroni_alpha(m, confidence)
            rows += [dict(bound=bound, family=m, alpha=alpha, n=n, cap=certifiable_cap(n, n, alpha, delta, bound=bound))
                     for n in sizes]
    return pd.DataFrame(rows)


def draw(table, confidence=CONFIDENCE, delta=DELTA):
    """The figure of :func:`cap_table`: one line per family size, a dot at the first test size that
    certifies anything."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from epsaudit.studies.figures import set_style

    with plt.rc_context():  # the book's figure style, without changing the caller's settings
        set_style()
        fig, ax = plt.subplots(figsize=(5.6, 3.8), layout="constrained")
        _draw_on(ax, table, confidence, delta)
    return fig


def _draw_on(ax, table, confidence, delta) -> None:
    from matplotlib.ticker import FixedLocator, FormatStrFormatter

    from epsaudit.bounds import certifiable_cap, required_test_size
    from epsaudit.studies.figures import PALETTE

    for colour, (m, family) in zip(PALETTE, table.groupby("family", sort=True)):
        alpha = float(family["alpha"].iloc[0])
        for bound, style in (("joint", "-"), ("clopper-pearson", "--")):
            rows = family[family["bound"] == bound]
            first = required_test_size(0.0, alpha, delta, bound=bound)
            name = "joint" if bound == "joint" else "split CP"
            label = f"{m} certificate{'s' if m > 1 else ''}, {name}: first at n = {first}"
            ax.plot(rows["n"], rows["cap"], color=colour, lw=2 if bound == "joint" else 1.4, ls=style, label=label)
            ax.plot([first], [certifiable_cap(first, first, alpha, delta, bound=bound)], "o", color=colour, ms=5,
                    clip_on=False)
    for n in MARKED:
        ax.axvline(n, color="0.6", lw=0.8, ls=":", zorder=0)
    ax.set_xscale("log")
    ax.set_xlim(table["n"].min(), table["n"].max())
    ax.xaxis.set_major_locator(FixedLocator([2, 5, 10, 30, 100, 300, 1000]))
    ax.xaxis.set_major_formatter(FormatStrFormatter("%d"))
    ax.set_ylim(0, None)
    ax.set_xlabel("test rows per identity, n (log scale)")
    ax.set_ylabel("largest certifiable $\\varepsilon$")
    ax.set_title(f"Zero test errors, {confidence:.0%} over the family, $\\delta = {_tex_number(delta)}$", fontsize=10)
    ax.grid(True, which="both", color="0.9", lw=0.6)
    ax.legend(title="certificates held together, bound", fontsize=8, title_fontsize=9, loc="lower right", frameon=False)


def _tex_number(x: float) -> str:
    """``0.025``, ``6.25 \\times 10^{-4}``, ``10^{-5}``: three significant digits, mathtext."""
    if x >= 1e-2:
        return f"{x:.3g}"
    exponent = math.floor(math.log10(x))
    mantissa = float(f"{x / 10.0**exponent:.3g}")
    if mantissa >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    power = f"10^{{{exponent}}}"
    return power if mantissa == 1 else f"{mantissa:g} \\times {power}"


def write(path) -> Path:
    """Draw the figure and save it as PNG at ``path`` (folders created); return the path."""
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig = draw(cap_table())
    fig.savefig(path, dpi=200)
    plt.close(fig)
    return path


if __name__ == "__main__":
    print(write(sys.argv[1] if len(sys.argv) > 1 else "certifiable_cap.png"))
