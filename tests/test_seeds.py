"""One seed scheme: every stream is stream(*key), and streams of different keys never coincide."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from epsaudit.protocol import check_seed, generator, generators, key_int, seed_key, sklearn_seed, stream


def test_streams_of_different_keys_never_coincide():
    keys = [(purpose, seed, *rest) for purpose in ("pair-order", "dev-test-split", "mmd-permutations")
            for seed in range(5) for rest in ((), ("A",), ("B",), ("A", "B"), ("B", "A"), (0,), (1,), (2,))]
    firsts = {key: stream(*key).integers(0, 2**63, size=4).tobytes() for key in keys}
    assert len(set(firsts.values())) == len(keys)  # no two keys share their first draws
    assert len({key_int(*key) for key in keys}) == len(keys)


def test_seed_plus_k_overlap_is_gone():
    # with "seed + k", pair k at seed 0 and pair k - 1 at seed 1 used the same stream
    for k in range(1, 20):
        a = stream("mmd-permutations", 0, f"pair{k}").random(8)
        b = stream("mmd-permutations", 1, f"pair{k - 1}").random(8)
        assert not np.any(a == b)


def test_a_stream_depends_only_on_its_key():
    first = stream("demo", 7, "A").random(5)
    for _ in range(3):
        stream("demo", 7, "B").random(100)  # other streams drawn in between change nothing
    np.testing.assert_array_equal(stream("demo", 7, "A").random(5), first)
    # the SHA-256 of the key, as the face-data designs have always used (committed data depend on it)
    assert key_int("select", 0, "George_W_Bush") == 7568531401081415134


def test_seed_arguments_are_ints_keys_or_generators():
    assert seed_key(4, "x") == ("x", 4) and seed_key(("k", 1), "x") == ("k", 1)
    gen = np.random.default_rng(0)
    assert generator(gen, "x") is gen
    a, b = generators(3, "draws", [0, 1])
    np.testing.assert_array_equal(a.random(3), stream("draws", 3, 0).random(3))
    for bad in (-1, 1.5, True, None, "3", ()):
        with pytest.raises(ValueError, match="seed must be a non-negative integer"):
            seed_key(bad, "x")
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        check_seed(-2)
    assert 0 <= sklearn_seed("roc-folds", 0) < 2**32


def test_the_library_draws_through_the_scheme():
    from epsaudit.audits.mmd import mmd_tv_pairs
    from epsaudit.protocol import identity_pairs
    from epsaudit.protocol import split_identities

    labels = [f"id{i}" for i in range(6)]
    pairs = list(itertools.combinations(sorted(labels), 2))
    order = stream("pair-order", 0).permutation(len(pairs))
    assert identity_pairs(labels, seed=0) == [pairs[i] for i in order]
    rng = np.random.default_rng(1)
    groups = {label: rng.normal(size=(10, 4)) for label in labels}
    dev, test, _ = split_identities(groups, seed=5)
    perm = stream("dev-test-split", 5, "id3").permutation(10)
    np.testing.assert_array_equal(test["id3"], groups["id3"][np.sort(perm[:3])])
    # MMD permutations of a pair do not depend on where the pair sits in the list
    one = mmd_tv_pairs(groups, [("id0", "id1"), ("id2", "id3")], permutations=50, seed=2)
    two = mmd_tv_pairs(groups, [("id2", "id3")], permutations=50, seed=2)
    assert one[1].details["p_value"] == two[0].details["p_value"]
