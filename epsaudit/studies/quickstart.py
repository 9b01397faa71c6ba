"""Audit a mechanism in ten minutes: the book's first page, on one pair of known epsilon (:func:`pair_mechanism`). The
page runs the routes of *Picture the Epsilon* (Section III), the reserved-test certificates and the caps with the public
API; this module holds its profiles, its parameters, the pair and the cap figure.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..bounds import gaussian_mu_for_epsilon
from ..mechanisms import IsotropicGaussian, ProductLaplace
from . import choose_profile
from .parameters import PROFILE, SEED, Parameter
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import FuncFormatter
from .figures import PALETTE

__all__ = ["PROFILES", "PARAMETERS", "MECHANISMS", "settings", "pair_mechanism", "cap_against_test_size"]

#: Run profiles: ``n`` development and test rows per identity, ``sizes`` of the cap figure. ``smoke`` audits
#: the book's 300 rows too (at 100 the pair certifies nothing; every profile takes under a minute).
PROFILES: dict[str, dict[str, Any]] = {
    "smoke": {"n": 300, "sizes": (10, 30, 100, 300, 1000)},
    "full": {"n": 300, "sizes": (10, 30, 100, 300, 1000, 3000)},
    "paper": {"n": 300, "sizes": (10, 30, 100, 300, 1000, 3000)},
}
#: The noises the page can audit (its ``mechanism`` parameter).
MECHANISMS: tuple[str, ...] = ("laplace", "gaussian")

#: The page's papermill parameters (checked by :func:`epsaudit.studies.parameters.check`).
PARAMETERS = (
    PROFILE,
    Parameter("epsilon", float, "exact epsilon of the audited pair (nats)", low=0.0, high=8.0),
    Parameter("n", int, "development rows and test rows per identity (None: the profile's)", low=10, high=10_000,
              optional=True),
    Parameter("mechanism", str, "noise of the two identities", choices=MECHANISMS),
    SEED,
)


def settings(profile: str, n: int | None = None) -> dict[str, Any]:
    """The profile's settings with the page's ``n`` parameter applied (``None`` keeps the profile's).

    Parameters
    ----------
    profile : {"smoke", "full", "paper"}
    n : int, optional
        Development and test rows per identity.

    Returns
    -------
    dict
        ``n`` and ``sizes`` (test rows per identity of the cap figure).

    Raises
    ------
    ValueError
        If ``profile`` is not one of the three profiles.

    Examples
    --------
    >>> settings("smoke")["n"], settings("smoke", 30)["n"], settings("full")["sizes"][-1]
    (300, 30, 3000)
    """
    out = choose_profile(PROFILES, profile, "Audit a mechanism in ten minutes")
    if n is not None:
        out["n"] = int(n)
    return out


def pair_mechanism(epsilon: float, dim: int = 2, mechanism: str = "laplace") -> ProductLaplace | IsotropicGaussian:
    """Two identities whose outputs are exactly ``epsilon``-DP (Laplace) or ``(epsilon, 1e-5)``-DP (Gaussian).

    Laplace (:class:`epsaudit.mechanisms.ProductLaplace`): identity 1 centred at 0, identity 0 at
    ``epsilon / dim`` in every coordinate, scale 1, so ``||mu_0 - mu_1||_1 / b = epsilon``. Gaussian
    (:class:`epsaudit.mechanisms.IsotropicGaussian`): the means ``gaussian_mu_for_epsilon(epsilon, 1e-5)``
    apart along the diagonal, noise ``N(0, I)``. ``epsilon`` 0 gives the exact null.

    Parameters
    ----------
    epsilon : float, >= 0
        Exact epsilon of the pair (nats).
    dim : int
        Output dimension ``d``.
    mechanism : {"laplace", "gaussian"}

    Returns
    -------
    ProductLaplace or IsotropicGaussian
        Identities 0 and 1.

    Raises
    ------
    ValueError
        If ``mechanism`` is not one of :data:`MECHANISMS`.

    Examples
    --------
    >>> pair_mechanism(1.0).exact_epsilon(0, 1)
    1.0
    >>> round(pair_mechanism(1.0, mechanism="gaussian").exact_epsilon(0, 1), 6)
    1.0
    """
    if mechanism == "laplace":
        return ProductLaplace(np.vstack([np.full(dim, epsilon / dim), np.zeros(dim)]), 1.0)
    if mechanism == "gaussian":
        separation = gaussian_mu_for_epsilon(epsilon, 1e-5) if epsilon > 0 else 0.0
        return IsotropicGaussian(np.vstack([np.full(dim, separation / np.sqrt(dim)), np.zeros(dim)]), 1.0, delta=1e-5)
    raise ValueError(f"mechanism must be one of {MECHANISMS}, got {mechanism!r}")


# --- Figures --------------------------------------------------------------------------------------


_STYLE = {"joint": ("-", "o", 6), "clopper-pearson": ("--", "s", 4)}


def cap_against_test_size(caps: pd.DataFrame, truth: float | None = None):
    """Certifiable cap (zero test errors) against test rows per identity, one line per family and bound.

    Parameters
    ----------
    caps : pandas.DataFrame
        Index: test rows per identity (ints); columns a MultiIndex ``(family, bound)``: the number of
        certificates reported together and ``"joint"`` (solid) or ``"clopper-pearson"`` (dashed);
        values the largest certifiable epsilon (nats).
    truth : float, optional
        An exact epsilon to draw as a horizontal line.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    families = list(dict.fromkeys(caps.columns.get_level_values(0)))
    for colour, family in zip(PALETTE, families):
        for bound in caps[family].columns:
            line, marker, size = _STYLE.get(bound, (":", "^", 5))
            label = f"{family} certificate{'' if family == 1 else 's'}, {bound}"
            ax.plot(caps.index, caps[(family, bound)], linestyle=line, marker=marker, markersize=size, color=colour,
                    label=label)
    if truth is not None:
        ax.axhline(truth, color="black", linestyle="--", linewidth=1, label=f"exact ε = {truth:g}")
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_xlabel("test rows per identity (log scale)")
    ax.set_ylabel("largest certifiable ε (nats)")
    ax.legend(title="reported together, bound", fontsize=10, title_fontsize=10)
    fig.tight_layout()
    return fig
