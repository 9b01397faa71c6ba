"""Chapter 4's modules (*Toward Interpretable Privacy Guarantees in Face-Swapping Anonymization*,
Sections VI-VIII): loading and verifying the corpora, scores on a hand-computed gallery, recovery of a
known affine operator from a synthetic corpus written in the on-disk format of
:mod:`epsaudit.data.corpora`, model predictions, verdict rules, extrapolation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from epsaudit.data import corpora as fmt
from epsaudit.operator import (AffineOperator, baseline_predictions, fit_affine_operator, penalty_determination,
                               penalty_sensitivity, prediction_quality, spectral_summary, weak_directions)
from epsaudit.studies import cascade_measured as cs
from epsaudit.studies import cascade as c4

# -------------------------------------------------------------------------------------------------
# writing a corpus in the on-disk schema


def _embedding_frame(keys: dict, vectors: np.ndarray, path: str = "hog") -> pd.DataFrame:
    frame = pd.DataFrame(keys)
    frame["path"] = path
    vec = pd.DataFrame(np.asarray(vectors, dtype=np.float32), columns=[f"e{j}" for j in range(vectors.shape[1])])
    return pd.concat([frame, vec], axis=1)


def write_corpus(folder: Path, frames: dict[str, pd.DataFrame], passes: int, encoder: str = "dlib",
                 lost: list | None = None) -> Path:
    """Write ``originals``, ``cascade``, ``operator`` (parquet) and ``chains``, ``galleries``,
    ``triplets`` (CSV) with a manifest holding their SHA-256, by the format module's writers."""
    folder.mkdir(parents=True, exist_ok=True)
    for key in fmt.EMBEDDING_KINDS:
        fmt.write_embedding_table(folder, encoder, key, frames[key])
    fmt.write_designs(folder, chains=frames["chains"], galleries=frames["galleries"], triplets=frames["triplets"])
    fmt.write_corpora_manifest(folder, {"cascade": {"passes": passes, "lost": lost or []}}, {})
    return folder


# -------------------------------------------------------------------------------------------------
# a synthetic corpus generated from a known affine model


def true_operator(dim: int, rho: float, seed: int):
    rng = np.random.default_rng(seed)
    v = np.eye(dim) + 0.3 * rng.normal(size=(dim, dim)) / np.sqrt(dim)  # mildly non-normal B
    lam = np.r_[rho, np.linspace(rho - 0.15, 0.3, dim - 1)]
    B = v @ np.diag(lam) @ np.linalg.inv(v)
    A = 0.3 * np.eye(dim) + 0.03 * rng.normal(size=(dim, dim))
    return A, B


def simulate(seed: int = 0, dim: int = 10, n_targets: int = 10, chains_per: int = 8, photos: int = 14,
             n_train: int = 800, n_test: int = 200, passes: int = 5, rhos=(("hull", 0.85), ("inner", 0.7)),
             noise: float = 0.05):
    """Frames of a corpus where every swap is ``A d + B t + c + e`` exactly (per variant)."""
    rng = np.random.default_rng(seed)
    m0 = rng.normal(size=dim)
    m0 *= 4.0 / np.linalg.norm(m0)  # a common offset, as in raw dlib vectors

    def identity(name: str, n: int, between: float, within: float):
        mu = m0 + between * rng.normal(size=dim)
        return [f"{name}/{name}_{i + 1:04d}.jpg" for i in range(n)], mu + within * rng.normal(size=(n, dim))

    orig_ids, orig_idn, orig_vec = [], [], []

    def add(name: str, n: int, between: float = 1.0, within: float = 0.35):
        ids, vec = identity(name, n, between, within)
        orig_ids.extend(ids)
        orig_idn.extend([name] * n)
        orig_vec.append(vec)
        return ids, vec

    targets = {f"T{j:02d}": add(f"T{j:02d}", photos) for j in range(n_targets)}
    nonmembers = [f"N{j}" for j in range(4)]
    for nm in nonmembers:
        add(nm, 8)
    chains, gal, starts = [], [], []
    for name, (ids, vec) in targets.items():
        for i in range(chains_per):
            ch = len(chains)
            chains.append({"chain": ch, "identity": name, "start": ids[i], "nonmember": nonmembers[ch % 4],
                           **{f"donor_{k + 1}": f"D{ch}_{k}/D{ch}_{k}_0001.jpg" for k in range(passes)}})
            gal += [{"chain": ch, "role": "target", "image_id": g} for g in ids if g != ids[i]]
            nm = nonmembers[ch % 4]
            gal += [{"chain": ch, "role": "nonmember", "image_id": f"{nm}/{nm}_{q + 1:04d}.jpg"} for q in range(8)]
            starts.append(vec[i])
    part_ids = {}
    for part, n_id in (("train", 120), ("test", 40)):
        # donor-pool identities lie near the mean face (cascade donors are drawn from the same law)
        part_ids[part] = [add(f"{part[:2].upper()}{j:03d}", 3, 0.3, 0.1)[0] for j in range(n_id)]
    originals = _embedding_frame({"image_id": orig_ids, "identity": orig_idn}, np.vstack(orig_vec))
    lookup = dict(zip(orig_ids, np.vstack(orig_vec)))
    trip = []
    for part, n in (("train", n_train), ("test", n_test)):
        people = part_ids[part]
        for _ in range(n):
            a, b = rng.choice(len(people), 2, replace=False)
            d, t = people[a][rng.integers(3)], people[b][rng.integers(3)]
            trip.append({"triplet": len(trip), "partition": part, "donor": d, "target": t,
                         "donor_identity": d.split("/")[0], "target_identity": t.split("/")[0]})
    triplets = pd.DataFrame(trip)
    truth, casc_rows, casc_vec, op_rows, op_vec = {}, [], [], [], []
    start = np.array(starts)
    for vi, (variant, rho) in enumerate(rhos):
        A, B = true_operator(dim, rho, seed + 10 + vi)
        c = (np.eye(dim) - B) @ m0 - A @ m0  # the fixed point of the mean donor is m0
        truth[variant] = (A, B, c)
        d = np.stack([lookup[x] for x in triplets["donor"]])
        t = np.stack([lookup[x] for x in triplets["target"]])
        op_vec.append(d @ A.T + t @ B.T + c + noise * rng.normal(size=d.shape))
        op_rows += [{"variant": variant, "triplet": i} for i in triplets["triplet"]]
        s = start
        for k in range(1, passes + 1):
            donors = m0 + 0.3 * rng.normal(size=start.shape) + 0.1 * rng.normal(size=start.shape)
            s = donors @ A.T + s @ B.T + c + noise * rng.normal(size=start.shape)
            casc_rows += [{"variant": variant, "chain": ch, "pass": k} for ch in range(len(start))]
            casc_vec.append(s)
    frames = {"originals": originals, "cascade": _embedding_frame(pd.DataFrame(casc_rows), np.vstack(casc_vec)),
              "operator": _embedding_frame(pd.DataFrame(op_rows), np.vstack(op_vec)),
              "chains": pd.DataFrame(chains), "galleries": pd.DataFrame(gal), "triplets": triplets}
    return frames, truth


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    frames, truth = simulate()
    folder = write_corpus(tmp_path_factory.mktemp("synthetic") / "corpora", frames, passes=5)
    return fmt.load_corpora("dlib", folder), truth, frames


@pytest.fixture(scope="module")
def fits(synthetic):
    """The operator of each variant, fitted as the chapter's page fits it."""
    corpora, _, _ = synthetic
    return {v: fit_affine_operator(*cs.operator_arrays(corpora, v, "train"), seed=0) for v in ("hull", "inner")}


# -------------------------------------------------------------------------------------------------
# loading


def test_load_round_trips_and_checks(synthetic):
    corpora, _, frames = synthetic
    assert corpora.encoder == "dlib" and corpora.dim == 10 and corpora.passes == 5
    assert corpora.variants == ["hull", "inner"]
    assert list(corpora.originals.index) == list(frames["originals"]["image_id"])
    np.testing.assert_array_equal(corpora.originals["e3"].to_numpy(), frames["originals"]["e3"].to_numpy())
    emb, chains = cs.chain_embeddings(corpora, "hull")
    assert emb.shape == (6, 80, 10) and list(chains["chain"]) == list(range(80))
    np.testing.assert_allclose(emb[0], corpora.embeddings(frames["chains"]["start"]))
    casc = frames["cascade"]
    row = casc[(casc["variant"] == "hull") & (casc["chain"] == 7) & (casc["pass"] == 3)]
    np.testing.assert_allclose(emb[3, 7], row[[f"e{j}" for j in range(10)]].to_numpy(dtype=np.float64)[0])
    groups = cs.pass_groups(corpora, "hull", 2)
    assert len(groups) == 10 and all(g.shape == (8, 10) for g in groups.values())
    np.testing.assert_allclose(np.linalg.norm(groups["T03"], axis=1), 1.0)
    d, t, s, g = cs.operator_arrays(corpora, "inner", "test")
    assert d.shape == t.shape == s.shape == (200, 10) and g.shape == (200, 2)
    test_rows = corpora.triplets[corpora.triplets["partition"] == "test"]
    assert list(g[:, 0]) == list(test_rows["donor_identity"]) and list(g[:, 1]) == list(test_rows["target_identity"])
    train = corpora.triplets[corpora.triplets["partition"] == "train"]
    ids = sorted(set(train["donor"]) | set(train["target"]))
    x = corpora.embeddings(ids)
    np.testing.assert_allclose(cs.reference_centre(corpora), (x / np.linalg.norm(x, axis=1, keepdims=True)).mean(0))


def test_tampered_file_is_named(tmp_path):
    frames, _ = simulate(n_targets=2, chains_per=2, n_train=60, n_test=20, passes=2)
    folder = write_corpus(tmp_path / "corpora", frames, passes=2)
    with open(folder / "cascade_galleries.csv", "a") as fh:
        fh.write("0,target,T00/T00_0002.jpg\n")
    with pytest.raises(ValueError, match="cascade_galleries.csv.*SHA-256"):
        fmt.load_corpora("dlib", folder)
    assert len(fmt.load_corpora("dlib", folder, verify=False).galleries) == len(frames["galleries"]) + 1
    with pytest.raises(FileNotFoundError, match="sface"):
        fmt.load_corpora("sface", folder)


def test_missing_gallery_image_is_named(tmp_path):
    frames, _ = simulate(n_targets=2, chains_per=2, n_train=60, n_test=20, passes=2)
    extra = pd.DataFrame([{"chain": 1, "role": "nonmember", "image_id": "Nobody/Nobody_0001.jpg"}])
    frames["galleries"] = pd.concat([frames["galleries"], extra], ignore_index=True)
    folder = write_corpus(tmp_path / "corpora", frames, passes=2)  # the manifest matches: the hash check passes
    with pytest.raises(ValueError, match=r"1 gallery image id\(s\) not in dlib_originals.parquet.*Nobody/Nobody_0001"):
        fmt.load_corpora("dlib", folder)


def test_incomplete_chain_and_bad_values_are_rejected(tmp_path):
    frames, _ = simulate(n_targets=2, chains_per=2, n_train=60, n_test=20, passes=2)
    casc = frames["cascade"]
    frames["cascade"] = casc[~((casc["chain"] == 1) & (casc["pass"] == 2) & (casc["variant"] == "hull"))]
    folder = write_corpus(tmp_path / "a", dict(frames), passes=2)
    with pytest.raises(ValueError, match="passes other than 1..2"):
        fmt.load_corpora("dlib", folder)
    frames["cascade"] = casc[~((casc["chain"] == 1) & (casc["variant"] == "hull"))]  # lost, but not said so
    folder = write_corpus(tmp_path / "c", dict(frames), passes=2)
    with pytest.raises(ValueError, match=r"1 chain\(s\) missing but not listed as lost"):
        fmt.load_corpora("dlib", folder)
    folder = write_corpus(tmp_path / "d", dict(frames), passes=2, lost=[{"variant": "hull", "chain": 1, "pass": 2}])
    emb, chains = cs.chain_embeddings(fmt.load_corpora("dlib", folder), "hull")
    assert list(chains["chain"]) == [0, 2, 3] and emb.shape == (3, 3, 10)
    frames["cascade"] = casc.copy()
    frames["cascade"].loc[3, "e2"] = np.nan
    folder = write_corpus(tmp_path / "b", frames, passes=2)
    with pytest.raises(ValueError, match="dlib_cascade.parquet.*NaN"):
        fmt.load_corpora("dlib", folder)


# -------------------------------------------------------------------------------------------------
# scores on a hand-computed gallery


def tiny_corpus(tmp_path: Path) -> fmt.Corpora:
    """Two chains (identities P, Q), two passes, 3-D vectors whose cosines are 0, 0.48, 0.6, 0.8, 1."""
    e1, e2, e3 = np.eye(3)
    vectors = {
        "P/P_0001.jpg": 2 * e1, "P/P_0002.jpg": e1, "P/P_0003.jpg": 3 * np.array([0.6, 0.8, 0]), "P/P_0004.jpg": e2,
        "Q/Q_0001.jpg": e3, "Q/Q_0002.jpg": 2 * e3, "Q/Q_0003.jpg": np.array([0, 0.8, 0.6]),
        "Q/Q_0004.jpg": np.array([0.8, 0, 0.6]),
        "N/N_0001.jpg": e2, "N/N_0002.jpg": e3, "N/N_0003.jpg": np.array([0.8, 0, 0.6]),
        "M/M_0001.jpg": e1, "M/M_0002.jpg": e2, "M/M_0003.jpg": np.array([0.6, 0.8, 0]),
        "O/O_0001.jpg": np.array([1.0, 1, 1]), "R/R_0001.jpg": np.array([1.0, -1, 0]),
    }
    ids = list(vectors)
    originals = _embedding_frame({"image_id": ids, "identity": [i.split("/")[0] for i in ids]},
                                 np.stack([vectors[i] for i in ids]))
    chains = pd.DataFrame([{"chain": 0, "identity": "P", "start": "P/P_0001.jpg", "nonmember": "N",
                            "donor_1": "X/X_0001.jpg", "donor_2": "Y/Y_0001.jpg"},
                           {"chain": 1, "identity": "Q", "start": "Q/Q_0001.jpg", "nonmember": "M",
                            "donor_1": "Z/Z_0001.jpg", "donor_2": "W/W_0001.jpg"}])
    gal = [{"chain": 0, "role": "target", "image_id": f"P/P_000{i}.jpg"} for i in (2, 3, 4)]
    gal += [{"chain": 0, "role": "nonmember", "image_id": f"N/N_000{i}.jpg"} for i in (1, 2, 3)]
    gal += [{"chain": 1, "role": "target", "image_id": f"Q/Q_000{i}.jpg"} for i in (2, 3, 4)]
    gal += [{"chain": 1, "role": "nonmember", "image_id": f"M/M_000{i}.jpg"} for i in (1, 2, 3)]
    passes = {(0, 1): 3 * e3, (0, 2): 0.5 * e2, (1, 1): 2 * np.array([0, 0.6, 0.8]), (1, 2): e1}
    cascade = _embedding_frame({"variant": ["hull"] * 4, "chain": [k[0] for k in passes],
                                "pass": [k[1] for k in passes]}, np.stack(list(passes.values())))
    triplets = pd.DataFrame([{"triplet": 0, "partition": "train", "donor": "O/O_0001.jpg", "target": "R/R_0001.jpg",
                              "donor_identity": "O", "target_identity": "R"}])
    operator = _embedding_frame({"variant": ["hull"], "triplet": [0]}, np.array([[1.0, 0, 1]]))
    folder = write_corpus(tmp_path / "tiny", {"originals": originals, "cascade": cascade, "operator": operator,
                                              "chains": chains, "galleries": pd.DataFrame(gal), "triplets": triplets},
                          passes=2)
    return fmt.load_corpora("dlib", folder)


def test_cascade_series_on_a_hand_computed_gallery(tmp_path):
    corpora = tiny_corpus(tmp_path)
    series = cs.cascade_series(corpora, "hull", centre=np.zeros(3))
    # chain 0 target scores 0.6, 0, 0.8; non-member 0, 0.6, 0. chain 1: 0.6, 0.8, 0; non-member 0, 0.48, 0.6
    np.testing.assert_allclose(series["leakage"], [0.6, 0.4, 0.4], atol=1e-6)
    np.testing.assert_allclose(series["floor"], [0.0, 0.54, 0.3], atol=1e-6)
    assert series["excess_ratio"].isna().iloc[0]
    np.testing.assert_allclose(series["floor_pooled"], 0.54, atol=1e-6)
    np.testing.assert_allclose(series["excess"], [0.06, -0.14, -0.14], atol=1e-6)  # Table III: pooled floor
    np.testing.assert_allclose(series["excess_ratio"].iloc[1:].astype(float), [-0.14 / 0.06, 1.0], atol=1e-6)
    np.testing.assert_allclose(series["auc"], [1.0, 0.5, 0.625])
    np.testing.assert_allclose(series["cmc_rank1"], [1.0, 0.5, 0.5])
    np.testing.assert_allclose(series["norm_median"], [1.5, 2.5, 0.75], atol=1e-6)
    assert list(series["chains"]) == [2, 2, 2]
    scores = c4.centred_scores(corpora, "hull", centre=np.zeros(3))
    np.testing.assert_allclose(scores.target.T.ravel(), [0.6, 0, 0.8, 0.6, 0.8, 0], atol=1e-6)
    # predicted embeddings are scored with the same galleries: feeding the measured chain back is a no-op
    emb, _ = cs.chain_embeddings(corpora, "hull")
    again = c4.centred_scores(corpora, "hull", emb, centre=np.zeros(3))
    np.testing.assert_array_equal(scores.target, again.target)
    with pytest.raises(ValueError, match="embeddings must have shape"):
        c4.centred_scores(corpora, "hull", emb[:, :1])
    with pytest.raises(ValueError, match="no rows for variant 'inner'"):
        cs.cascade_series(corpora, "inner")
    # the default centre: the operator train photographs O and R
    centre = np.mean([[1, 1, 1] / np.sqrt(3), [1, -1, 0] / np.sqrt(2)], axis=0)
    np.testing.assert_allclose(cs.reference_centre(corpora), centre)


# -------------------------------------------------------------------------------------------------
# operator and predictions on the synthetic corpus


def test_the_pages_fit_recovers_the_known_operator(synthetic, fits):
    corpora, truth, _ = synthetic
    for variant, op in fits.items():
        train, test = cs.operator_arrays(corpora, variant, "train"), cs.operator_arrays(corpora, variant, "test")
        spectra = spectral_summary(op, test[1])
        true_rho = np.max(np.abs(np.linalg.eigvals(truth[variant][1])))
        assert spectra["rho_B"] == pytest.approx(true_rho, abs=0.05)
        base = baseline_predictions(train[:3], test[:3], k=10)
        affine = prediction_quality(op.predict(*test[:2]), test[2])
        assert affine["r2"] > 0.9 and affine["r2"] > prediction_quality(base["copy_donor"], test[2])["r2"]
        assert affine["mean_cosine"] > prediction_quality(base["knn"], test[2])["mean_cosine"]
        # the penalty: identity-disjoint folds in both roles, interior after widening, every quantity determined
        cv = op.cv
        assert cv.roles == "both" and cv.validated == 142 and (cv.table["shared_identities"] == 0).all()
        assert (cv.table["train"] + cv.table["validation"] + cv.table["excluded"] == 800).all()
        assert op.search.edge == "interior" and weak_directions(train[0], train[1]) == 0
        det = penalty_determination(penalty_sensitivity(op, train[:3], test[:3]))
        assert det["determined"].all() and det.loc["rho_B", "relative_range"] < 0.05
        assert det.loc["rho_B", "value"] == pytest.approx(spectra["rho_B"], rel=1e-9)
        photos = c4.same_person_photos(corpora, test[3])
        res = c4.residual_checks(op, *test[:3], same_person=photos)
        assert res["n"] == 200 and res["tested"] == 10
        assert res["non_gaussian"] <= 1  # Gaussian noise
        assert res["target_mean_abs"] < 0.1
        assert 0 < res["same_person"] < 0.5  # noise 0.05 vs same-person spread 0.35


def test_residual_checks_see_anisotropy_and_target_leaks():
    rng = np.random.default_rng(3)
    dim, n = 6, 600
    op = AffineOperator(A=np.zeros((dim, dim)), B=np.zeros((dim, dim)), c=np.zeros(dim),
                           residual_cov=np.eye(dim), alpha=0.0)
    d, t = rng.normal(size=(n, dim)), rng.normal(size=(n, dim))
    iso = c4.residual_checks(op, d, t, rng.normal(size=(n, dim)))
    aniso = c4.residual_checks(op, d, t, rng.normal(size=(n, dim)) * np.r_[5.0, np.ones(dim - 1)] + 0.8 * t[:, [2]])
    assert iso["top_over_mean"] < 1.5 < aniso["top_over_mean"]
    assert iso["target_max_abs"] < 0.2 < aniso["target_max_abs"]
    skew = c4.residual_checks(op, d, t, rng.exponential(size=(n, dim)))
    assert iso["non_gaussian"] == 0 and skew["non_gaussian"] == dim
    assert np.isnan(iso["same_person"])


def test_simulated_cascade_leakage_decreases(synthetic):
    corpora, _, _ = synthetic
    for variant in ("hull", "inner"):
        series = cs.cascade_series(corpora, variant)
        assert list(series["pass"]) == list(range(6))
        assert np.all(np.diff(series["leakage"]) < 0), series["leakage"].tolist()
        assert series["auc"].iloc[0] > 0.95 and series["cmc_rank1"].iloc[0] > 0.9
        assert series["floor"].iloc[0] < series["leakage"].iloc[0] - 0.5  # a start against a stranger's gallery


def test_noiseless_ratios_approach_rho_and_persistent_directions(synthetic, fits):
    corpora, truth, _ = synthetic
    op = fits["hull"]
    rho = spectral_summary(op, cs.operator_arrays(corpora, "hull", "test")[1])["rho_B"]
    true_rho = np.max(np.abs(np.linalg.eigvals(truth["hull"][1])))
    pred = cs.model_predictions(op, corpora, "hull", passes=40, mc_reps=2, seed=1)
    assert list(pred["pass"]) == list(range(41))  # the median chain settles after ~25 passes here
    late = pred["noiseless_excess_ratio"].astype(float).iloc[-3:].to_numpy()
    np.testing.assert_allclose(late, rho, atol=0.02)
    np.testing.assert_allclose(late, true_rho, atol=0.05)
    measured = cs.cascade_series(corpora, "hull")
    assert pred["noiseless_leakage"].iloc[0] == pytest.approx(measured["leakage"].iloc[0])
    assert np.all(np.diff(pred["carrier"].iloc[:5]) < 0)
    assert pred["lyapunov_floor"].nunique() == 1 and abs(pred["lyapunov_floor"].iloc[0]) < 0.3
    # the Monte Carlo rollout of the true model follows the measured leakage of the simulated cascade
    np.testing.assert_allclose(pred["monte_carlo_leakage"].iloc[:6], measured["leakage"], atol=0.12)
    pers = cs.persistent_directions(op, corpora, "hull", top=1)
    assert pers["n"] == 80 and pers["subspace_dim"] == 1 and pers["n_survival"] <= 80
    assert -1 <= pers["rho_pass1"] <= 1 and 0 <= pers["p_pass1"] <= 1
    with pytest.raises(ValueError, match="passes and mc_reps"):
        cs.model_predictions(op, corpora, "hull", passes=0)


def test_dominant_subspace_handles_complex_pairs():
    rot = np.array([[0.0, -0.9], [0.9, 0.0]])  # eigenvalues +-0.9i
    B = np.zeros((4, 4))
    B[:2, :2] = rot
    B[2, 2], B[3, 3] = 0.5, 0.2
    q = cs.dominant_subspace(B, 1)  # the cut falls inside the complex pair: both are kept
    assert q.shape == (4, 2)
    np.testing.assert_allclose(np.abs(q[2:]), 0, atol=1e-12)
    q = cs.dominant_subspace(B, 3)
    np.testing.assert_allclose(q.T @ q, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(q[3], 0, atol=1e-12)


# -------------------------------------------------------------------------------------------------
# verdicts and extrapolation


def test_passes_to_excess():
    assert cs.passes_to_excess(0.05, 5, 0.9) == 21  # 0.05 * 0.9**16 = 0.00926 < 0.01 <= 0.05 * 0.9**15
    assert 0.05 * 0.9**16 < 0.01 <= 0.05 * 0.9**15
    assert cs.passes_to_excess(0.041, 5, 0.893) == 18  # Toward Interpretable Privacy Guarantees: "~18-20 passes"
    assert cs.passes_to_excess(0.005, 5, 0.9) == 5
    assert cs.passes_to_excess(0.02, 0, 0.5) == 2  # 0.02 * 0.5 = 0.01 is not below 0.01
    for excess, rate in ((0.3, 0.7), (0.011, 0.99), (1.0, 0.1)):
        k = cs.passes_to_excess(excess, 3, rate)
        assert excess * rate ** (k - 3) < 0.01 <= excess * rate ** (k - 4)
    for rate in (0.0, 1.0, 1.2, -0.5, float("nan")):
        with pytest.raises(ValueError, match="rate"):
            cs.passes_to_excess(0.05, 5, rate)
    for excess in (0.0, -0.1):
        with pytest.raises(ValueError, match="excess_last"):
            cs.passes_to_excess(excess, 5, 0.9)


def test_per_pass_audit_and_mmd_rejections(synthetic):
    from epsaudit.audits import mmd_tv_pairs
    from epsaudit.condition import audit_condition
    from epsaudit.protocol import identity_pairs

    corpora, _, _ = synthetic
    groups = cs.pass_groups(corpora, "hull", 1)
    assert len(groups) == 10 and sum(len(x) for x in groups.values()) == 80
    rejected, tested = cs.mmd_rejections(groups, min_rows=5, permutations=40, pairs=3, seed=0, n_jobs=1)
    assert tested == 3 and 0 <= rejected <= 3
    # the same pairs and seeds as mmd_tv_pairs on the audit's shuffle
    ref = mmd_tv_pairs(groups, identity_pairs(groups, seed=0)[:3], permutations=40, seed=0, n_jobs=1)
    assert rejected == sum(r.details["p_value"] < 0.05 for r in ref)
    assert cs.mmd_rejections(groups, min_rows=5, permutations=0, pairs=3) == (0, 0)
    # two certificates per pass over five passes: each at 0.05 / 10, the split bound at half of that
    audit = audit_condition(groups, pairs=0, kde_pairs=0, roc_pairs=0, certificates=2, family_size=10,
                            selection_pool=6, prefer_certifiable=True, seed=0, bound="clopper-pearson")
    cert = audit.per_pair[audit.per_pair["route"] == "roc_reserved"]
    assert len(cert) == 2
    np.testing.assert_allclose(cert["alpha_per_bound"].astype(float), 0.05 / 20)


def test_write_pass_csv_round_trips_to_the_audit_groups(synthetic, tmp_path):
    from epsaudit.data import load_embeddings

    corpora, _, _ = synthetic
    path = cs.write_pass_csv(corpora, "hull", 3, tmp_path / "pass3.csv")
    table = load_embeddings(path)
    groups = cs.pass_groups(corpora, "hull", 3)
    assert sorted(groups) == sorted(set(table.labels))
    for label, x in groups.items():
        np.testing.assert_allclose(table.embeddings[table.labels == label], x, atol=1e-6)
    assert all(i.endswith("|hull|pass3") for i in table.image_ids)
    with pytest.raises(ValueError, match="outside 0..5"):
        cs.write_pass_csv(corpora, "hull", 6, tmp_path / "bad.csv")
