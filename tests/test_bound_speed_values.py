"""The joint bounds' values pinned across changes to how they are computed (issue 25, item 6).

Values from the computation before the branch-and-bound ran its two cell budgets at once and before
the tail sums were compiled; the faster computation must return them to 1e-9 (and never more).
"""

from __future__ import annotations

import numpy as np
import pytest

from epsaudit.bounds import joint
from epsaudit.bounds.joint import joint_epsilon, joint_mu

# (fp, n_neg, fn, n_pos, alpha, delta): joint_epsilon, joint_mu (mu ignores delta)
PINNED = [
    ((0, 100, 0, 100, 0.05, 1e-5), 4.193619836205441, 4.347229534250089),
    ((2, 100, 5, 80, 0.05, 1e-5), 2.656851314286518, 2.961052948081799),
    ((15, 300, 15, 300, 0.05, 1e-5), 2.493799237265485, 2.990697576819949),
    ((10, 1000, 10, 1000, 0.05, 0.0), 4.0566667954164, 4.363097483594509),
    ((50, 1000, 50, 1000, 0.05, 1e-5), 2.687280078342533, 3.129003208555344),
    ((3, 30, 1, 30, 1e-6, 0.01), 0.7063282511574004, 0.8958370441599551),
    ((140, 700, 50, 1000, 0.05, 0.0), 2.4954260802230404, 2.33942688908339),
]


@pytest.mark.parametrize("case, eps, mu", PINNED)
def test_pinned_values(case, eps, mu):
    fp, n_neg, fn, n_pos, alpha, delta = case
    got_eps, got_mu = joint_epsilon(*case), joint_mu(fp, n_neg, fn, n_pos, alpha)
    assert got_eps == pytest.approx(eps, abs=1e-9) and got_eps <= eps + 1e-12
    assert got_mu == pytest.approx(mu, abs=1e-9) and got_mu <= mu + 1e-12


def test_large_tests_staircase_from_every_count_matches_bisections(monkeypatch):
    """Above ``_FULL`` rows the tail's staircase comes from bisections; below, from every count."""
    args = ("dp", 500, 2500, 750, 2500, 0.05 / 40)
    full = [joint._Tail(*args, d) for d in (0.0, 1e-5)]
    monkeypatch.setattr(joint, "_FULL", 4000)
    for tail, order_delta in zip(full, (0.0, 1e-5)):
        bisected = joint._Tail(*args, order_delta)
        assert (bisected.K, bisected.C) == (tail.K, tail.C)
        assert np.array_equal(bisected.c, tail.c)


@pytest.mark.parametrize("kind, case", [("gdp", (15, 300, 15, 300)), ("dp", (10, 1000, 10, 1000)),
                                        ("gdp", (5, 100, 2, 100)), ("dp", (6, 300, 6, 300))])
def test_proves_decides_as_the_proven_limit(kind, case):
    """``proves`` (one refinement for both budgets, early answers, cells closed below the level) says yes
    wherever ``sup_upper`` proves the level, and never below the tail's largest value on a fine grid."""
    tail = joint._tail(kind, *case, 0.05)
    bnd = joint._Boundary(tail, kind, 0.0 if kind == "gdp" else 1e-5)
    for theta in (2.0, 2.8, 3.2, 4.0):
        hint = bnd.maximum(theta)[0]
        limits = [bnd.sup_upper(theta, hint, max_cells=b) for b in (joint._MAX_CELLS, 8 * joint._MAX_CELLS)]
        on_grid = float(bnd.values(theta, np.linspace(-1.0, 1.0, 20001)).max())
        assert on_grid <= min(limits) + 1e-12
        for level in (on_grid - 1e-3, on_grid - 1e-6, limits[1] - 1e-6, limits[1] + 1e-6, limits[0] + 1e-6,
                      limits[0] + 1e-3):
            proven = bnd.proves(theta, hint, level, (joint._MAX_CELLS, 8 * joint._MAX_CELLS))
            if any(v <= level for v in limits):
                assert proven
            if proven:
                assert on_grid <= level


def test_kernels_compiled_ahead_of_time_compute_what_numba_does(monkeypatch):
    """``make venv`` compiles the kernels ahead of time (``epsaudit.bounds._build_kernel``); they return numba's
    values bit for bit, and they are used only while built from the current sources (CI must build them)."""
    import importlib
    import os

    from epsaudit.bounds import _kernels, sequential
    from epsaudit.bounds import _joint_kernel as jit  # noqa: the compiled kernels themselves are under test
    from epsaudit.bounds import _sequential_kernel as jit_sequential

    if not _kernels.built():
        if os.environ.get("CI"):
            pytest.fail("the kernels were not compiled ahead of time (make venv builds them; a C compiler is needed)")
        pytest.skip("the kernels were not compiled ahead of time here")
    aot = importlib.import_module("epsaudit.bounds._kernels_aot")

    s, grid = np.linspace(-1.0, 1.0, 101), np.linspace(-1.0, 1.0, 17)
    newton = np.array([-2.0, -1.0, 0.0, 1.0, 2.0, 0.0, 0.0])
    for kind, code, case in (("dp", 0, (50, 1000, 50, 1000)), ("gdp", 1, (15, 300, 15, 300)), ("dp", 0, (3, 30, 1, 30))):
        tail = joint._tail(kind, *case, 0.05)
        args = tail.args
        for theta in (1.5, 2.5):
            th = np.full(s.size, theta)
            assert np.array_equal(aot.at_thetas(code, th, 1e-5, s, *args), jit.at_thetas(code, th, 1e-5, s, *args))
            assert np.array_equal(aot.cells(code, theta, 1e-5, s[:-1], s[1:], *args),
                                  jit.cells(code, theta, 1e-5, s[:-1], s[1:], *args))
            for decide in (True, False):
                call = (code, theta, 1e-5, grid, 0.01, np.log(0.05), decide, 512, 4096, 1e-4, 8, 60, *args)
                assert aot.search(*call) == jit.search(*call)
        call = (code, np.log(0.05), 1.0, 0.0, 10.0, np.nan, grid, newton, 1e-5, *args)
        assert aot.estimated_root(*call) == jit.estimated_root(*call)
    lu, l1u = joint._side(300, 0.025)
    for delta in (0.0, 1e-5, 0.3):
        less = joint._side_less(300, 0.025, delta)
        assert np.array_equal(aot.dp_staircase(1.0, lu, lu, less, less, 15, 20),
                              jit.dp_staircase(1.0, lu, lu, less, less, 15, 20))
    rng = np.random.default_rng(3)
    n0 = rng.integers(0, 200, 500)
    n1, m0 = n0 + rng.integers(0, 50, 500), rng.integers(0, 200, 500)
    m1 = m0 + rng.integers(0, 50, 500)
    x0, y0 = rng.binomial(n0, 0.1), rng.binomial(m0, 0.2)
    ends = (x0, x0 + rng.binomial(n1 - n0, 0.1), n0, n1, y0, y0 + rng.binomial(m1 - m0, 0.2), m0, m1)
    for prior in ("B", ("H:0.1", "H:0.2"), "Z"):
        tables = [a for p in sequential._priors(prior) for a in sequential._log_m_table(p, 260)]
        got = aot.box_bounds(*ends, np.exp(1.5), 1e-5, *tables)
        assert np.array_equal(got, jit_sequential.box_bounds(*ends, np.exp(1.5), 1e-5, *tables))
    # used while built from the current sources, else numba's
    _kernels.load.cache_clear()
    try:
        assert joint._kernel().search is aot.search
        monkeypatch.setattr(_kernels, "source_hash", lambda: "edited since")
        _kernels.load.cache_clear()
        assert joint._kernel().search is jit.search
        monkeypatch.undo()
        monkeypatch.setenv("EPSAUDIT_KERNEL", "jit")
        _kernels.load.cache_clear()
        assert joint._kernel().search is jit.search
    finally:
        monkeypatch.undo()
        _kernels.load.cache_clear()


def test_root_estimates_that_creep_along_the_maximum_still_end_at_the_root():
    """108 + 439 errors in 300 + 1,000 rows at alpha 1e-3: each root estimate's look finds the maximum a
    hair higher, and the estimates creep for all their restarts; the last one is still decided before the
    fallback root search on the looser proven limit (which stopped at 0.25202)."""
    from scipy import stats
    mu = joint_mu(108, 300, 439, 1000, 1e-3)
    assert mu == pytest.approx(0.2526571711, abs=1e-8)
    tail = joint._tail("gdp", 108, 300, 439, 1000, 1e-3)
    x, z = np.arange(tail.c.size), np.linspace(-12, 12, 20001)
    for value, below in ((mu, True), (mu + 1e-3, False)):  # the exact p-value on the boundary, brute force
        p, q = stats.norm.sf(z)[:, None], stats.norm.cdf(z - value)[:, None]
        sup = (stats.binom.pmf(x, 300, p) * stats.binom.cdf(tail.c, 1000, q)).sum(axis=1).max()
        assert (sup <= 1e-3) == below
