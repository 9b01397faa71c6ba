"""The fast paths of GaussMech and MMD-TV give the numbers of the direct computation: the GaussMech
statistics from one pass and a Gram matrix, MMD-TV pairs grouped by identity, its median without the square
roots, its exact blocked computation in bounded memory, and results made in bulk. Values only; the timings
are in ``benchmarks/bench_routes.py``."""

from __future__ import annotations

import numpy as np
import pytest

from epsaudit.audits import (
    gaussmech_epsilon,
    gaussmech_pairs,
    mmd,
    mmd_tv_epsilon,
    mmd_tv_pairs,
)
from epsaudit.audits.gaussmech import GaussMechStatistics
from epsaudit.audits.mmd import _mmd_statistics as mmd_statistics
from epsaudit.results import EpsilonResult
from epsaudit.protocol import stream


def groups_of(sizes, d: int, key: str, offset: float = 0.0) -> dict[str, np.ndarray]:
    rng = stream("test-route-speed", key)
    return {f"id{i}": offset + rng.normal(0.2 * i, 1.0, size=(n, d)) for i, n in enumerate(sizes)}


def test_results_made_in_bulk_equal_results_made_one_by_one():
    stats = [GaussMechStatistics(mean_distance=float(k), sigma_a=0.5, sigma_b=0.25) for k in range(3)]
    common = {"kind": "diagnostic", "route": "gaussmech", "delta": 1e-5, "settings": {"delta": 1e-5}}
    bulk = EpsilonResult.many([1.0, 2.0, 3.5], [("a", "b"), ("a", "c"), ("b", "c")], [(4, 5), (4, 6), (5, 6)],
                              stats, **common)
    single = [EpsilonResult(value=v, pair=p, n=n, statistics=s, **common)
              for v, p, n, s in zip([1.0, 2.0, 3.5], [("a", "b"), ("a", "c"), ("b", "c")], [(4, 5), (4, 6), (5, 6)],
                                    stats)]
    assert bulk == single and [r.details for r in bulk] == [r.details for r in single]
    with pytest.raises(ValueError, match="infinite value is only documented for estimates"):
        EpsilonResult.many([1.0, float("inf")], [None, None], [(2, 2), (2, 2)], [None, None], **common)
    with pytest.raises(ValueError, match="value is NaN"):
        EpsilonResult.many([1.0, float("nan")], [None, None], [(2, 2), (2, 2)], [None, None], **common)
    with pytest.raises(ValueError, match="without free details"):
        EpsilonResult.many([1.0], [None], [(2, 2)], [None], details={"x": 1}, **common)


def test_gaussmech_pairs_equal_the_one_pair_formula_also_with_offsets_and_constant_identities():
    for offset in (0.0, 1e4):  # a large offset: the one-pass residual sum falls back to two passes
        groups = groups_of([12, 30, 7, 20], 16, "gm", offset)
        groups["flat"] = np.full((5, 16), 3.0)
        pairs = [("id0", "id1"), ("id2", "id3"), ("id1", "id3"), ("id0", "flat"), ("flat", "id2")]
        for (a, b), r in zip(pairs, gaussmech_pairs(groups, pairs)):
            ref = gaussmech_epsilon(groups[a], groups[b])
            assert r.value == pytest.approx(ref.value, rel=1e-12, abs=0)
            assert r.statistics.sigma_a == pytest.approx(ref.statistics.sigma_a, rel=1e-12)
    both_flat = {"p": np.zeros((3, 2)), "q": np.ones((3, 2))}
    assert gaussmech_pairs(both_flat, [("p", "q")])[0].not_computed.startswith("both identities' samples are constant")
    bad = {"p": np.zeros((3, 2)), "q": np.array([[0.0, np.nan], [1.0, 1.0], [2.0, 2.0]])}
    with pytest.raises(ValueError, match=r"groups\['q'\] holds 1 NaN/inf value\(s\); first at row 0, column 1"):
        gaussmech_pairs(bad, [("p", "q")])


@pytest.mark.parametrize("k", [2, 5, 6, 101, 1000])
def test_the_median_distance_is_numpys_median_of_the_distances(k):
    d2 = stream("test-route-speed", "median", k).random(k) * 4.0
    assert mmd._median_distance(d2) == np.median(np.sqrt(d2))


def test_mmd_tv_pairs_grouped_by_identity_equal_one_pair_at_a_time():
    groups = groups_of([15, 22, 9, 15, 30], 6, "mmd")
    pairs = [("id0", "id1"), ("id0", "id2"), ("id3", "id4"), ("id0", "id4"), ("id2", "id1"), ("id1", "id3")]
    for (a, b), r in zip(pairs, mmd_tv_pairs(groups, pairs)):
        ref = mmd_tv_epsilon(groups[a], groups[b])
        assert r.value == pytest.approx(ref.value, rel=1e-12, abs=1e-15)
        assert r.statistics.bandwidth == pytest.approx(ref.statistics.bandwidth, rel=1e-14)


def test_large_pairs_are_computed_in_blocks_with_the_same_numbers(monkeypatch):
    groups = groups_of([70, 90, 40], 5, "blocked")
    pairs = [("id0", "id1"), ("id1", "id2"), ("id0", "id2")]
    in_memory = mmd_tv_pairs(groups, pairs)
    monkeypatch.setattr(mmd, "MAX_IN_MEMORY", 3000)  # pairs above 3000 pooled distances go in blocks
    monkeypatch.setattr(mmd, "BLOCK_ROWS", 32)
    monkeypatch.setattr(mmd, "MAX_CANDIDATES", 50)  # forces the refining passes of the median
    blocked = mmd_tv_pairs(groups, pairs)
    assert mmd._too_large(70, 90) and not mmd._too_large(40, 30)
    for r, ref in zip(blocked, in_memory):
        assert r.value == pytest.approx(ref.value, rel=1e-10, abs=1e-12)
        assert r.statistics.mmd2_u == pytest.approx(ref.statistics.mmd2_u, rel=1e-10, abs=1e-14)
        assert r.statistics.bandwidth == pytest.approx(ref.statistics.bandwidth, rel=1e-12)
    a, b = groups["id0"], groups["id1"]
    assert mmd_statistics(a, b)["mmd2_u"] == pytest.approx(in_memory[0].statistics.mmd2_u, rel=1e-10)
    with pytest.raises(ValueError, match="permutation test needs the pooled kernel matrix"):
        mmd_statistics(a, b, permutations=10)
    # many equal distances (repeated rows): the median is still exact
    rep = {"a": np.repeat(groups["id2"][:4], 20, axis=0), "b": np.repeat(groups["id1"][:5], 15, axis=0)}
    monkeypatch.setattr(mmd, "MAX_IN_MEMORY", 10**9)
    ref = mmd_tv_pairs(rep, [("a", "b")])[0]
    monkeypatch.setattr(mmd, "MAX_IN_MEMORY", 100)
    assert mmd_tv_pairs(rep, [("a", "b")])[0].value == pytest.approx(ref.value, rel=1e-10)
