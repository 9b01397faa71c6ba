"""Analysis of the cascade and operator corpora (*Toward Interpretable Privacy Guarantees in
Face-Swapping Anonymization*, Sections VI-VIII).

The corpora (:mod:`epsaudit.faces.corpora`, ``data/corpora/``) hold, per encoder, the raw embeddings
of every original photograph, of every pass of every complete cascade chain (a target photograph
re-swapped ``K`` times, a fresh donor each pass) and of every single-swap operator triplet. This
module reads them (:func:`load_corpora`, verifying SHA-256 against the manifest), measures the
cascade (:func:`cascade_series`, :func:`per_pass_audits`), fits the affine operator
``s = A d + B t + c + e`` on the operator corpus (:func:`fit_operator_study`), predicts the cascade
from the fit alone (:func:`model_predictions`, :func:`persistent_directions`) and states the verdict
on each of the paper's five predictions (:func:`prediction_verdicts`).

Scores. Every cosine here is *centred*: an embedding is unit-normalised, the reference centre is
subtracted and the result re-normalised (as in :func:`epsaudit.face_study.swap_membership`: raw
dlib vectors share a large common offset). The centre (:func:`reference_centre`) is the mean of the
unit-normalised operator *train* photographs, so it is independent of the cascade, of the galleries
and of the operator test partition. A chain's *target score* at pass ``k`` is the median centred
cosine of its pass-``k`` embedding to its target gallery (up to 30 other photographs of its
identity, never its start); its *non-member score* the median to its non-member identity's
photographs.

Series (:func:`cascade_series`, one row per pass ``k = 0..K``; pass 0 is the start photograph):
``leakage`` = median over chains of the target scores, ``floor`` = median over chains of this
pass's non-member scores, ``floor_pooled`` = median non-member score over passes 1..K (paper 002's
Table III floor, 0.006 there), ``excess = leakage - floor_pooled`` and ``excess_ratio`` =
``excess_k / excess_{k-1}`` as in Table III; ``excess_per_pass`` / ``excess_ratio_per_pass`` use
each pass's own floor instead.

Model floors. The excess of a *model* rollout (:func:`model_predictions`) is taken above the
model's own asymptote, the level its leakage statistic converges to: for the noiseless rollout the
fixed point ``mu = (I - B)^-1 (A E[d] + c)`` scored against each chain's target gallery, for the
Monte Carlo rollout draws from the stationary law (:func:`epsaudit.operator.stationary_law`)
scored against the target galleries. Only then do the model's excess ratios tend to ``rho(B)``:
finite galleries put the target-gallery and non-member-gallery scores of one stationary point at
different levels (markedly so for the noiseless fixed point, which lies close to the centre, where
centred cosines are unstable). The *Lyapunov floor* of prediction 2 is the same stationary draws
scored against the non-member galleries, which is what the measured ``floor`` is.

Verdicts (:func:`prediction_verdicts`) use the explicit numeric rules of the module constants
(``RATE_*``, ``FLOOR_*``, ``DOMINANCE_*``, ``PERSIST_*``), fixed before the corpora are analysed.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import linalg, stats

from .bounds import bonferroni_alpha
from .data import sha256_file
from .face_study import _unit, reference_centre as _mean_unit_direction
from .leakage import cmc, membership_metrics
from .operator import (DEFAULT_ALPHAS, MAX_WIDENINGS, AffineOperator, baseline_predictions, fit_affine_operator,
                       penalty_determination, penalty_sensitivity, prediction_quality, rollout, spectral_summary,
                       lyapunov_residual, stationary_law, weak_directions)
from .seeds import generator, stream

MANIFEST = "corpora_manifest.json"
ENCODERS = ("dlib", "sface")
DESIGN_FILES = ("cascade_chains.csv", "cascade_galleries.csv", "operator_triplets.csv")
ROLES = ("target", "nonmember")

# ---- verdict rules (paper 002, Sections VII-C and VIII-B); fixed before looking at the corpora ----
#: Prediction 1: the first excess ratio must lie within this absolute distance of ``b_u``.
RATE_FIRST_TOL = 0.10
#: Prediction 1: the late excess ratio must lie within this absolute distance of ``rho(B)``.
RATE_LATE_TOL = 0.05
#: Prediction 1 and 5: the late ratio is the mean of the excess ratios of the last this-many passes.
LATE_RATIO_PASSES = 2
#: Prediction 2: ``|measured floor - Lyapunov floor|`` as a fraction of the pass-0 excess, for
#: "confirmed" and for "partly".
FLOOR_TOL_CONFIRMED = 0.05
FLOOR_TOL_PARTLY = 0.15
#: Prediction 3: (drop at pass 1) / (drop over passes 2..K) at least this, and the first pass
#: removing at least :data:`DOMINANCE_FIRST_SHARE` of the pass-0 excess, for "confirmed"; a ratio
#: above ``DOMINANCE_PARTLY`` (the first pass removes more than all later ones together) for "partly".
DOMINANCE_CONFIRMED = 3.0
DOMINANCE_PARTLY = 1.0
DOMINANCE_FIRST_SHARE = 0.5
#: Prediction 4: Spearman correlations of target alignment with pass-1 leakage and with survival
#: must be positive at this one-sided-in-sign, two-sided-in-p significance level ...
PERSIST_ALPHA = 0.05
#: ... and at least this large for "confirmed" (paper 002: 0.21 and 0.11, "weak support only").
PERSIST_MIN_RHO = 0.3
#: Prediction 4: survival is ``target_K / target_1`` per chain, over chains whose pass-1 target
#: score exceeds this (a ratio of near-zero scores carries no information).
SURVIVAL_MIN_PASS1 = 0.05
VERDICTS = ("confirmed", "partly", "not confirmed")

EMBEDDING_PREFIX = "e"


# -------------------------------------------------------------------------------------------------
# loading


@dataclass(frozen=True, eq=False)
class Corpora:
    """One encoder's view of the cascade and operator corpora (:func:`load_corpora`).

    Attributes
    ----------
    encoder : str
    originals : pandas.DataFrame
        Index ``image_id``; columns ``identity``, ``path``, ``e0 .. e{d-1}`` (raw float32).
    cascade : pandas.DataFrame
        ``variant``, ``chain``, ``pass`` (1..K), ``path``, ``e0 ..`` (complete chains only).
    operator : pandas.DataFrame
        ``variant``, ``triplet``, ``path``, ``e0 ..`` (the swap output of a triplet).
    chains : pandas.DataFrame
        ``chain``, ``identity``, ``start``, ``nonmember``, ``donor_1 .. donor_K``.
    galleries : pandas.DataFrame
        ``chain``, ``role`` (``target``/``nonmember``), ``image_id``.
    triplets : pandas.DataFrame
        ``triplet``, ``partition``, ``donor``, ``target``, ``donor_identity``, ``target_identity``.
    manifest : dict
        ``corpora_manifest.json``.
    directory : pathlib.Path
    """

    encoder: str
    originals: pd.DataFrame
    cascade: pd.DataFrame
    operator: pd.DataFrame
    chains: pd.DataFrame
    galleries: pd.DataFrame
    triplets: pd.DataFrame
    manifest: dict
    directory: Path
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def embedding_columns(self) -> list[str]:
        """``["e0", ..., "e{d-1}"]``."""
        return _embedding_columns(self.originals, "originals")

    @property
    def dim(self) -> int:
        return len(self.embedding_columns)

    @property
    def variants(self) -> list[str]:
        """Variants with cascade rows, sorted."""
        return sorted(self.cascade["variant"].unique())

    @property
    def passes(self) -> int:
        """``K``, the number of swap passes per chain."""
        return int(self.manifest.get("design", {}).get("cascade", {}).get("passes", self.cascade["pass"].max()))

    def embeddings(self, image_ids: Sequence[str]) -> np.ndarray:
        """Raw float64 embeddings of original photographs, shape (n, d).

        Raises
        ------
        KeyError
            Naming the image ids absent from the originals.
        """
        ids = pd.Index(image_ids)
        missing = ids[~ids.isin(self.originals.index)]
        if len(missing):
            raise KeyError(f"{len(missing)} image id(s) not in {self.encoder}_originals.parquet, "
                           f"e.g. {list(missing[:5])}")
        return self.originals.loc[ids, self.embedding_columns].to_numpy(dtype=np.float64)


def _embedding_columns(frame: pd.DataFrame, name: str) -> list[str]:
    cols = [c for c in frame.columns if isinstance(c, str) and c.startswith(EMBEDDING_PREFIX) and c[1:].isdigit()]
    if not cols:
        raise ValueError(f"{name}: no embedding columns e0, e1, ...")
    expected = [f"{EMBEDDING_PREFIX}{j}" for j in range(len(cols))]
    if sorted(cols, key=lambda c: int(c[1:])) != expected:
        raise ValueError(f"{name}: embedding columns must be e0..e{len(cols) - 1} without gaps")
    return expected


def _require(frame: pd.DataFrame, columns: Sequence[str], name: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{name}: missing column(s) {missing}; has {list(frame.columns)[:12]}")


def _check_unique(frame: pd.DataFrame, keys: Sequence[str], name: str) -> None:
    dup = frame.duplicated(list(keys), keep=False)
    if dup.any():
        example = frame.loc[dup, list(keys)].head(3).to_dict(orient="records")
        raise ValueError(f"{name}: {int(dup.sum())} rows repeat a key {list(keys)}, e.g. {example}")


def _check_finite(frame: pd.DataFrame, cols: list[str], name: str) -> None:
    values = frame[cols].to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise ValueError(f"{name}: {int(bad.any(axis=1).sum())} row(s) hold NaN/inf, first at row {r} column {cols[c]}")
    norms = np.linalg.norm(values, axis=1)
    if np.any(norms <= 1e-6):
        raise ValueError(f"{name}: {int(np.sum(norms <= 1e-6))} row(s) have (near) zero norm, first at row "
                         f"{int(np.argmax(norms <= 1e-6))}")


def _check_present(ids: pd.Series | pd.Index, universe: pd.Index, what: str, where: str) -> None:
    ids = pd.Index(pd.unique(pd.Series(ids)))
    missing = ids[~ids.isin(universe)]
    if len(missing):
        raise ValueError(f"{len(missing)} {what} not in {where}: {list(missing[:5])}"
                         + (" ..." if len(missing) > 5 else ""))


def load_corpora(encoder: str, directory: str | Path = "data/corpora", *, verify: bool = True) -> Corpora:
    """Read one encoder's corpora from ``directory`` and check them.

    Parameters
    ----------
    encoder : str
        ``"dlib"`` or ``"sface"`` (any prefix with the three parquet files is accepted).
    directory : path-like
        Folder holding ``corpora_manifest.json``, ``<encoder>_{originals,cascade,operator}.parquet``
        and the design CSVs (:mod:`epsaudit.faces.corpora`).
    verify : bool
        Compare the SHA-256 of every file read with the manifest.

    Returns
    -------
    Corpora

    Raises
    ------
    FileNotFoundError
        A missing file (named).
    ValueError
        A SHA-256 mismatch or a file the manifest does not list (named); missing columns,
        repeated keys, NaN/inf or zero-norm embeddings, embedding dimensions that differ; a
        gallery, start, donor or target image id absent from the originals (the ids and their
        count are named); cascade or operator rows without a design row; an incomplete chain; a
        chain that is neither complete nor listed in the manifest's ``design.cascade.lost``; a
        chain without a target or non-member gallery.
    """
    folder = Path(directory)
    mpath = folder / MANIFEST
    if not mpath.is_file():
        raise FileNotFoundError(f"{mpath}: no corpora manifest (build the corpora with `make corpora`)")
    manifest = json.loads(mpath.read_text(encoding="utf-8"))
    names = {"originals": f"{encoder}_originals.parquet", "cascade": f"{encoder}_cascade.parquet",
             "operator": f"{encoder}_operator.parquet", "chains": DESIGN_FILES[0], "galleries": DESIGN_FILES[1],
             "triplets": DESIGN_FILES[2]}
    for key, name in names.items():
        path = folder / name
        if not path.is_file():
            have = sorted(p.name for p in folder.glob("*_originals.parquet"))
            raise FileNotFoundError(f"{path}: missing (encoder {encoder!r}; originals present: {have})")
        if verify:
            entry = manifest.get("files", {}).get(name)
            if entry is None or "sha256" not in entry:
                raise ValueError(f"{path}: not listed with a sha256 in {mpath}")
            digest = sha256_file(path)
            if digest != entry["sha256"]:
                raise ValueError(f"{path}: SHA-256 {digest[:12]}... does not match {MANIFEST} "
                                 f"({entry['sha256'][:12]}...); the file changed after the manifest was written")
    frames = {k: (pd.read_parquet(folder / n) if n.endswith(".parquet")
                  else pd.read_csv(folder / n, keep_default_na=False,
                                   dtype={"image_id": str, "start": str, "donor": str, "target": str, "identity": str,
                                          "nonmember": str, "donor_identity": str, "target_identity": str}))
              for k, n in names.items()}
    orig, casc, oper = frames["originals"], frames["cascade"], frames["operator"]
    chains, gal, trip = frames["chains"], frames["galleries"], frames["triplets"]

    _require(orig, ["image_id", "identity"], names["originals"])
    _require(casc, ["variant", "chain", "pass"], names["cascade"])
    _require(oper, ["variant", "triplet"], names["operator"])
    passes = int(manifest.get("design", {}).get("cascade", {}).get("passes", casc["pass"].max()))
    _require(chains, ["chain", "identity", "start", "nonmember"] + [f"donor_{k}" for k in range(1, passes + 1)],
             names["chains"])
    _require(gal, ["chain", "role", "image_id"], names["galleries"])
    _require(trip, ["triplet", "partition", "donor", "target", "donor_identity", "target_identity"], names["triplets"])
    dims = {}
    for key in ("originals", "cascade", "operator"):
        cols = _embedding_columns(frames[key], names[key])
        dims[names[key]] = len(cols)
        _check_finite(frames[key], cols, names[key])
    if len(set(dims.values())) != 1:
        raise ValueError(f"embedding dimensions differ between files: {dims}")
    _check_unique(orig, ["image_id"], names["originals"])
    _check_unique(casc, ["variant", "chain", "pass"], names["cascade"])
    _check_unique(oper, ["variant", "triplet"], names["operator"])
    _check_unique(chains, ["chain"], names["chains"])
    _check_unique(trip, ["triplet"], names["triplets"])
    bad_roles = set(gal["role"]) - set(ROLES)
    if bad_roles:
        raise ValueError(f"{names['galleries']}: unknown role(s) {sorted(bad_roles)}; expected {ROLES}")
    bad_parts = set(trip["partition"]) - {"train", "test"}
    if bad_parts:
        raise ValueError(f"{names['triplets']}: unknown partition(s) {sorted(bad_parts)}")

    ids = pd.Index(orig["image_id"].astype(str))
    where = names["originals"]
    _check_present(gal["image_id"], ids, "gallery image id(s)", where)
    _check_present(chains["start"], ids, "chain start image id(s)", where)
    _check_present(trip["donor"], ids, "operator donor image id(s)", where)
    _check_present(trip["target"], ids, "operator target image id(s)", where)
    _check_present(gal["chain"], pd.Index(chains["chain"]), "gallery chain(s)", names["chains"])
    _check_present(casc["chain"], pd.Index(chains["chain"]), "cascade chain(s)", names["chains"])
    _check_present(oper["triplet"], pd.Index(trip["triplet"]), "operator triplet(s)", names["triplets"])
    for role in ROLES:
        has = pd.Index(gal.loc[gal["role"] == role, "chain"].unique())
        _check_present(chains["chain"], has, f"chain(s) without a {role} gallery", names["galleries"])
    starts = dict(zip(chains["chain"], chains["start"]))
    own = gal[(gal["role"] == "target") & (gal["image_id"] == gal["chain"].map(starts))]
    if len(own):
        raise ValueError(f"{names['galleries']}: {len(own)} chain(s) have their own start in the target gallery, "
                         f"e.g. chain {int(own['chain'].iloc[0])}")

    passes = manifest.get("design", {}).get("cascade", {}).get("passes")
    passes = int(passes) if passes is not None else int(casc["pass"].max()) if len(casc) else 0
    counts = casc.groupby(["variant", "chain"])["pass"].agg(["count", "min", "max"])
    incomplete = counts[(counts["count"] != passes) | (counts["min"] != 1) | (counts["max"] != passes)]
    if len(incomplete):
        raise ValueError(f"{names['cascade']}: {len(incomplete)} (variant, chain) with passes other than 1..{passes}, "
                         f"e.g. {list(incomplete.index[:3])}")
    lost = manifest.get("design", {}).get("cascade", {}).get("lost")
    if lost is not None:  # every chain is complete or listed as lost, per variant
        listed = {(str(r["variant"]), int(r["chain"])) for r in lost}
        present = set(zip(casc["variant"].astype(str), casc["chain"].astype(int)))
        variants = manifest.get("design", {}).get("variants") or sorted(casc["variant"].unique())
        absent = {(v, int(ch)) for v in variants for ch in chains["chain"]} - present
        if absent != listed:
            unexplained, extra = sorted(absent - listed), sorted(listed & present)
            raise ValueError(f"{names['cascade']}: {len(unexplained)} chain(s) missing but not listed as lost in "
                             f"{MANIFEST} (e.g. {unexplained[:3]}); {len(extra)} listed as lost but present "
                             f"(e.g. {extra[:3]})")

    orig = orig.assign(image_id=orig["image_id"].astype(str)).set_index("image_id")
    casc = casc.sort_values(["variant", "chain", "pass"], kind="stable").reset_index(drop=True)
    oper = oper.sort_values(["variant", "triplet"], kind="stable").reset_index(drop=True)
    return Corpora(encoder=encoder, originals=orig, cascade=casc, operator=oper,
                   chains=chains.sort_values("chain", kind="stable").reset_index(drop=True),
                   galleries=gal.reset_index(drop=True), triplets=trip.sort_values("triplet").reset_index(drop=True),
                   manifest=manifest, directory=folder)


# -------------------------------------------------------------------------------------------------
# centring and chain embeddings


def subset_corpora(corpora: Corpora, *, identities: int | None = None, chains_per_identity: int | None = None,
                   train: int | None = None, test: int | None = None) -> Corpora:
    """A slice of the corpora (smoke profiles): the first ``identities`` target identities (sorted),
    the first ``chains_per_identity`` chains of each (by chain id), and the first ``train`` / ``test``
    operator triplets of each partition (the design's seeded order). ``None`` keeps everything.
    Originals and the manifest (which describes the whole corpus) are kept.

    Raises
    ------
    ValueError
        A limit below 1.
    """
    for name, value in (("identities", identities), ("chains_per_identity", chains_per_identity),
                        ("train", train), ("test", test)):
        if value is not None and int(value) < 1:
            raise ValueError(f"{name} must be >= 1 or None, got {value}")
    chains = corpora.chains.sort_values("chain")
    if identities is not None:
        chains = chains[chains["identity"].isin(sorted(chains["identity"].unique())[:int(identities)])]
    if chains_per_identity is not None:
        chains = chains.groupby("identity", sort=False).head(int(chains_per_identity))
    keep = set(chains["chain"])
    trip = corpora.triplets
    parts = []
    for part, limit in (("train", train), ("test", test)):
        rows = trip[trip["partition"] == part].sort_values("triplet")
        parts.append(rows if limit is None else rows.head(int(limit)))
    trip = pd.concat(parts)
    return Corpora(encoder=corpora.encoder, originals=corpora.originals,
                   cascade=corpora.cascade[corpora.cascade["chain"].isin(keep)],
                   operator=corpora.operator[corpora.operator["triplet"].isin(set(trip["triplet"]))],
                   chains=chains.reset_index(drop=True),
                   galleries=corpora.galleries[corpora.galleries["chain"].isin(keep)],
                   triplets=trip.reset_index(drop=True), manifest=corpora.manifest, directory=corpora.directory)


def _centred(x: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """Unit-normalise the last axis, subtract ``centre``, re-normalise (the module's cosine space)."""
    return _unit(_unit(np.asarray(x, dtype=np.float64)) - centre)


def reference_centre(corpora: Corpora) -> np.ndarray:
    """Mean of the unit-normalised originals of the operator *train* photographs, shape (d,).

    Every photograph that is a donor or a target of a train triplet counts once. The centre is thus
    independent of the cascade, its galleries and the operator test partition
    (:func:`epsaudit.face_study.reference_centre` computes the mean).

    Raises
    ------
    ValueError
        If the operator design has no train triplet.
    """
    train = corpora.triplets[corpora.triplets["partition"] == "train"]
    if train.empty:
        raise ValueError(f"{corpora.directory / DESIGN_FILES[2]}: no train triplets, so no reference centre")
    ids = sorted(set(train["donor"]) | set(train["target"]))
    return _mean_unit_direction(corpora.embeddings(ids))


def _variant_cascade(corpora: Corpora, variant: str) -> pd.DataFrame:
    part = corpora.cascade[corpora.cascade["variant"] == variant]
    if part.empty:
        raise ValueError(f"{corpora.encoder}_cascade.parquet: no rows for variant {variant!r}; "
                         f"variants present: {corpora.variants}")
    return part


def chain_embeddings(corpora: Corpora, variant: str) -> tuple[np.ndarray, pd.DataFrame]:
    """Raw embeddings of every complete chain of ``variant``, pass 0 (the start photograph) to ``K``.

    Returns
    -------
    embeddings : ndarray, shape (K + 1, m, d), float64
    chains : pandas.DataFrame
        The ``m`` complete chains' rows of ``cascade_chains.csv``, in chain order (the order of axis 1).

    Raises
    ------
    ValueError
        An unknown variant.
    """
    key = ("chain_embeddings", variant)
    if key not in corpora._cache:
        part = _variant_cascade(corpora, variant)
        ids = np.sort(part["chain"].unique())
        chains = corpora.chains.set_index("chain").loc[ids].reset_index()
        k = corpora.passes
        cols = corpora.embedding_columns
        swaps = part.sort_values(["pass", "chain"])[cols].to_numpy(dtype=np.float64).reshape(k, len(ids), len(cols))
        start = corpora.embeddings(chains["start"])
        corpora._cache[key] = (np.concatenate([start[None], swaps]), chains)
    emb, chains = corpora._cache[key]
    return emb.copy(), chains.copy()


def _pass_embeddings(corpora: Corpora, variant: str, k: int) -> tuple[np.ndarray, pd.DataFrame]:
    """Raw pass-``k`` embeddings ``(m, d)`` of the complete chains and their rows; ``ValueError``
    for ``k`` outside ``0..K``."""
    emb, chains = chain_embeddings(corpora, variant)
    if not 0 <= int(k) < emb.shape[0]:
        raise ValueError(f"pass k={k} outside 0..{emb.shape[0] - 1}")
    return emb[int(k)], chains


def pass_groups(corpora: Corpora, variant: str, k: int) -> dict[str, np.ndarray]:
    """Pass-``k`` embeddings of the complete chains grouped by target identity (the input of
    :func:`epsaudit.condition.audit_condition`).

    Returns
    -------
    dict identity -> ndarray, shape (n_i, d)
        Unit-normalised (uncentred, like the tables of notebook 03), one row per chain; pass 0 gives
        the start photographs.

    Raises
    ------
    ValueError
        ``k`` outside ``0..K`` or an unknown variant.
    """
    raw, chains = _pass_embeddings(corpora, variant, k)
    x = _unit(raw)
    labels = chains["identity"].astype(str).to_numpy()
    return {lab: x[labels == lab] for lab in sorted(set(labels))}


def write_pass_csv(corpora: Corpora, variant: str, k: int, path: str | Path) -> Path:
    """Write pass ``k`` of the complete chains in the exchange format (``identity, image_id, e0 ..``).

    Raw embeddings (as stored), one row per chain labelled by its target identity; the image id is
    ``<start image>|<variant>|pass<k>``. ``epsaudit audit FILE.csv`` then audits that pass as
    :func:`per_pass_audits` does (its loader L2-normalises the rows, as :func:`pass_groups` does).

    Raises
    ------
    ValueError
        ``k`` outside ``0..K`` or an unknown variant.
    """
    from .data import write_embeddings

    raw, chains = _pass_embeddings(corpora, variant, k)
    ids = [f"{s}|{variant}|pass{int(k)}" for s in chains["start"]]
    return write_embeddings(path, chains["identity"].astype(str).tolist(), ids, raw)


# -------------------------------------------------------------------------------------------------
# scoring against galleries


@dataclass(frozen=True)
class _Galleries:
    """Centred originals and padded gallery indices of one variant's complete chains."""

    vectors: np.ndarray          # (n_orig, d) centred unit originals
    target: np.ndarray           # (m, g_t) int indices, -1 = padding
    nonmember: np.ndarray        # (m, g_n)
    candidates: list[str]        # closed-set identities, sorted
    union: np.ndarray            # (C, g_u) indices of each candidate's union gallery, -1 = padding
    truth: np.ndarray            # (m,) candidate index of each chain's identity
    start: np.ndarray            # (m,) originals index of each chain's start


def _padded(groups: Sequence[np.ndarray]) -> np.ndarray:
    width = max(len(g) for g in groups)
    out = np.full((len(groups), width), -1, dtype=np.int64)
    for i, g in enumerate(groups):
        out[i, :len(g)] = g
    return out


def _galleries(corpora: Corpora, chains: pd.DataFrame, centre: np.ndarray) -> _Galleries:
    pos = {iid: i for i, iid in enumerate(corpora.originals.index)}
    vectors = _centred(corpora.originals[corpora.embedding_columns].to_numpy(dtype=np.float64), centre)
    gal = corpora.galleries.assign(pos=corpora.galleries["image_id"].map(pos))
    idx = {}
    for role in ROLES:
        lists = gal[gal["role"] == role].groupby("chain")["pos"].agg(list)
        idx[role] = _padded([lists.loc[c] for c in chains["chain"]])
    # closed set over every chain of the design (the candidates do not depend on which chains completed)
    tg = gal[gal["role"] == "target"].merge(corpora.chains[["chain", "identity"]], on="chain")
    union = tg.groupby(tg["identity"].astype(str))["pos"].agg(lambda x: sorted(set(x)))
    candidates = sorted(union.index)
    where = {c: j for j, c in enumerate(candidates)}
    return _Galleries(vectors=vectors, target=idx["target"], nonmember=idx["nonmember"], candidates=candidates,
                      union=_padded([union.loc[c] for c in candidates]),
                      truth=np.array([where[str(i)] for i in chains["identity"]]),
                      start=np.array([pos[i] for i in chains["start"]]))


def _nan_median(x: np.ndarray) -> np.ndarray:
    """Median over the last axis ignoring NaN padding (every row holds at least one number)."""
    srt = np.sort(x, axis=-1)  # NaN sorts last
    n = np.sum(~np.isnan(x), axis=-1, keepdims=True)
    lo = np.take_along_axis(srt, (n - 1) // 2, axis=-1)
    hi = np.take_along_axis(srt, n // 2, axis=-1)
    return ((lo + hi) / 2.0)[..., 0]


def _median_scores(probes: np.ndarray, vectors: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Median cosine of probes (P, m, d) to per-chain galleries ``vectors[index[i]]`` -> (P, m)."""
    gallery = vectors[np.where(index < 0, 0, index)]  # (m, g, d)
    sims = np.einsum("pmd,mgd->pmg", probes, gallery)
    pad = index < 0
    if pad.any():
        return _nan_median(np.where(pad[None], np.nan, sims))
    return np.median(sims, axis=2)


def _closed_set_rank1(probes: np.ndarray, g: _Galleries) -> np.ndarray:
    """Closed-set rank-1 rate per pass: probes (P, m, d) against every candidate's union gallery."""
    columns, pos = np.unique(g.union[g.union >= 0], return_inverse=True)
    where = np.zeros(g.union.shape, dtype=np.int64)
    where[g.union >= 0] = pos
    # padding and each probe's own start photograph are left out
    mask = (g.union[None] < 0) | (g.union[None] == g.start[:, None, None])  # (m, C, u)
    out = np.empty(probes.shape[0])
    for p in range(probes.shape[0]):
        sims = probes[p] @ g.vectors[columns].T  # (m, n_union)
        block = np.where(mask, np.nan, sims[:, where])  # (m, C, u)
        out[p] = cmc(_nan_median(block), g.truth, max_rank=1)[0]
    return out


def _scores(corpora: Corpora, variant: str, embeddings: np.ndarray | None, centre: np.ndarray | None
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, _Galleries, pd.DataFrame, np.ndarray]:
    measured, chains = chain_embeddings(corpora, variant)
    emb = measured if embeddings is None else np.asarray(embeddings, dtype=np.float64)
    if emb.ndim != 3 or emb.shape[1:] != measured.shape[1:]:
        raise ValueError(f"embeddings must have shape (passes + 1, {measured.shape[1]}, {measured.shape[2]}) "
                         f"(the complete chains of {variant!r}); got {emb.shape}")
    if not np.all(np.isfinite(emb)):
        raise ValueError("embeddings hold NaN or inf")
    c = reference_centre(corpora) if centre is None else np.asarray(centre, dtype=np.float64)
    key = ("galleries", variant, c.tobytes())
    if key not in corpora._cache:
        corpora._cache[key] = _galleries(corpora, chains, c)
    g = corpora._cache[key]
    probes = _centred(emb, c)
    return (_median_scores(probes, g.vectors, g.target), _median_scores(probes, g.vectors, g.nonmember),
            probes, g, chains, emb)


def chain_scores(corpora: Corpora, variant: str, *, embeddings: np.ndarray | None = None,
                 centre: np.ndarray | None = None) -> pd.DataFrame:
    """Per-chain target and non-member scores at every pass (long format).

    Parameters
    ----------
    corpora : Corpora
    variant : str
    embeddings : ndarray, shape (P, m, d), optional
        Embeddings to score instead of the measured chain (e.g. a model rollout), chains in the
        order of :func:`chain_embeddings`.
    centre : ndarray, shape (d,), optional
        Default :func:`reference_centre`.

    Returns
    -------
    pandas.DataFrame
        ``chain``, ``identity``, ``pass``, ``target``, ``nonmember`` (median centred cosines).
    """
    tgt, non, _, _, chains, _ = _scores(corpora, variant, embeddings, centre)
    p, m = tgt.shape
    return pd.DataFrame({"chain": np.tile(chains["chain"].to_numpy(), p),
                         "identity": np.tile(chains["identity"].astype(str).to_numpy(), p),
                         "pass": np.repeat(np.arange(p), m), "target": tgt.ravel(), "nonmember": non.ravel()})


def _ratios(excess: np.ndarray) -> pd.Series:
    ratio = pd.Series(pd.NA, index=range(len(excess)), dtype="Float64")
    if len(excess) > 1:
        ratio.iloc[1:] = excess[1:] / excess[:-1]
    return ratio


def cascade_series(corpora: Corpora, variant: str, *, centre: np.ndarray | None = None,
                   embeddings: np.ndarray | None = None) -> pd.DataFrame:
    """Leakage, floor, excess and membership metrics per pass (paper 002, Table III; module docstring).

    Parameters
    ----------
    corpora : Corpora
    variant : str
    centre : ndarray, shape (d,), optional
        Default :func:`reference_centre` (operator train photographs).
    embeddings : ndarray, shape (P, m, d), optional
        Score these (e.g. a model rollout from the chains' starts) with exactly the same galleries
        and centring instead of the measured chain; ``P - 1`` passes.

    Returns
    -------
    pandas.DataFrame
        One row per pass ``0..P-1``: ``pass``, ``chains``, ``leakage``, ``floor`` (this pass's
        median non-member score), ``floor_pooled`` (median non-member score over passes >= 1, the
        same in every row: Table III's floor), ``excess`` (leakage minus the pooled floor, as in
        Table III: ``(0.091 - 0.006) / (0.616 - 0.006) = 0.139``), ``excess_ratio`` (its ratio between
        consecutive passes; ``<NA>`` at pass 0), ``excess_per_pass`` and ``excess_ratio_per_pass``
        (the same with each pass's own floor), ``auc``, ``tpr_at_fpr_1pct``, ``tpr_at_fpr_0.1pct`` (positives:
        per-chain target scores; negatives: per-chain non-member scores;
        :func:`epsaudit.leakage.membership_metrics`), ``cmc_rank1`` (closed set over all target
        identities; a candidate's gallery is the union of its chains' target galleries minus the
        probe's own start) and ``norm_median`` (median raw L2 norm).

    Raises
    ------
    ValueError
        An unknown variant or embeddings of the wrong shape.
    """
    tgt, non, probes, g, _, emb = _scores(corpora, variant, embeddings, centre)
    leakage, floor = np.median(tgt, axis=1), np.median(non, axis=1)
    pooled = float(np.median(non[1:])) if len(non) > 1 else float(np.median(non))
    metrics = [membership_metrics(tgt[p], non[p]) for p in range(len(tgt))]
    frame = pd.DataFrame({
        "pass": np.arange(len(tgt)), "chains": tgt.shape[1], "leakage": leakage, "floor": floor,
        "floor_pooled": pooled, "excess": leakage - pooled, "excess_ratio": _ratios(leakage - pooled),
        "excess_per_pass": leakage - floor, "excess_ratio_per_pass": _ratios(leakage - floor),
        "auc": [m["auc"] for m in metrics], "tpr_at_fpr_1pct": [m["tpr_at_fpr_1pct"] for m in metrics],
        "tpr_at_fpr_0.1pct": [m["tpr_at_fpr_0.1pct"] for m in metrics],
        "cmc_rank1": _closed_set_rank1(probes, g),
        "norm_median": np.median(np.linalg.norm(emb, axis=2), axis=1),
    })
    return frame


# -------------------------------------------------------------------------------------------------
# per-pass audits (paper 001, Tables 7 and 8)


def per_pass_audits(corpora: Corpora, variant: str, *, passes: Sequence[int] = range(0, 6), pairs: int = 500,
                    kde_pairs: int = 100, roc_pairs: int = 100, permutations: int = 10_000,
                    permutation_pairs: int = 100, certificates: int = 50,
                    certificate_passes: Sequence[int] = range(1, 6), selection_pool: int = 100,
                    test_size: float = 0.3, prefer_certifiable: bool = True, confidence: float = 0.95,
                    delta: float = 1e-5, seed: int = 0, n_jobs: int | None = 2,
                    progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Audit the identities' pass-``k`` embeddings with the four routes and reserved-test certificates.

    Each pass ``k`` is one condition: :func:`pass_groups` (one unit-normalised row per complete
    chain, grouped by target identity) through :func:`epsaudit.condition.audit_condition` with the
    same pair shuffle (``seed``) at every pass. Descriptive routes use all rows (notebook 03's
    convention; paper 001 Table 8 used its development rows). The MMD permutation test is run on
    the first ``permutation_pairs`` pairs only (:func:`epsaudit.audits.mmd_tv_pairs` with the same
    seeds, so its statistics equal the audit's). Certificates: at each pass of
    ``certificate_passes``, ``certificates`` pairs chosen on development rows among the first
    ``selection_pool`` (audit_condition's development-only selection), certified on the untouched
    test rows; all ``certificates * len(certificate_passes)`` bounds form one Bonferroni family
    (``family_size``), so each one-sided bound is at ``(1 - confidence) / (2 * family)`` and all
    hold together at ``confidence``. Unlike paper 001 the selected pairs may share identities.

    Parameters
    ----------
    passes : sequence of int
        Passes to audit (0 = start photographs).
    pairs, kde_pairs, roc_pairs : int
        GaussMech/MMD-TV, KDE-LR and ROC-HT OOF prefixes of the shuffled pair list.
    permutations, permutation_pairs : int
        MMD permutation count (0 = no test) and the prefix it is run on.
    certificates, certificate_passes, selection_pool, confidence, delta
        See above.
    test_size, prefer_certifiable
        As in :func:`epsaudit.condition.audit_condition`. With ~27 rows per identity the default
        0.3 leaves 8 test rows per identity, whose cap at the paper's family (250 bounds,
        ``alpha = 1e-4``) is 0: nothing can be certified (``cap_max`` says so); e.g. 5 certificates
        per pass (``alpha = 1e-3``) with ``test_size=0.5`` (13-14 rows) caps at 0.36-0.45.
    seed, n_jobs, progress
        As in :func:`epsaudit.condition.audit_condition`.

    Returns
    -------
    descriptive : pandas.DataFrame
        Table 8 analog, one row per pass: ``pass``, ``identities``, ``rows``, ``gaussmech``,
        ``mmd_tv`` (medians over ``pairs``), ``kde_lr_<alpha>`` (medians over ``kde_pairs``),
        ``oof_auc`` (median), ``exact_corners``, ``raw_infinite``, ``roc_pairs`` (counts over
        ``roc_pairs``), ``mmd_rejections`` (p < 0.05), ``mmd_tested``, ``seconds``.
    certified : pandas.DataFrame
        Table 7 analog, one row per pass of ``certificate_passes``: ``pass``, ``certificates``,
        ``positive`` (> 0), ``above_1``, ``median_bound``, ``min_bound``, ``max_bound``,
        ``censored`` (zero test errors: the bound equals its cap), ``cap_min``/``cap_max`` (what the
        test sizes can certify, :func:`epsaudit.bounds.certifiable_cap`), ``n_test_min``/
        ``n_test_max`` (test rows per identity), ``alpha_per_bound``, ``family_size``.

    Raises
    ------
    ValueError
        A pass outside ``0..K``, a certificate pass not in ``passes``, or audit_condition's errors.
    """
    from .audits.mmd_tv import mmd_tv_pairs
    from .condition import audit_condition
    from .pairs import identity_pairs

    passes = [int(p) for p in passes]
    cert_passes = [int(p) for p in certificate_passes] if certificates > 0 else []
    if not set(cert_passes) <= set(passes):
        raise ValueError(f"certificate_passes {cert_passes} must be among passes {passes}")
    family = certificates * len(cert_passes)
    desc_rows, cert_rows = [], []
    for k in passes:
        groups = pass_groups(corpora, variant, k)
        t0 = time.perf_counter()
        certify = certificates if k in cert_passes else 0
        audit = audit_condition(groups, pairs=pairs, kde_pairs=kde_pairs, roc_pairs=roc_pairs, certificates=certify,
                                family_size=family if certify else None, selection_pool=selection_pool,
                                test_size=test_size, prefer_certifiable=prefer_certifiable,
                                confidence=confidence, delta=delta, seed=seed, permutations=0, n_jobs=n_jobs,
                                progress=progress)
        kept = {lab: x for lab, x in groups.items() if len(x) >= audit.settings["min_rows"]}
        rejections, tested = pd.NA, 0
        if permutations > 0 and permutation_pairs > 0:
            chosen = identity_pairs(kept, seed=seed)[:permutation_pairs]
            res = mmd_tv_pairs(kept, chosen, permutations=permutations, seed=seed, n_jobs=n_jobs, progress=progress)
            pvals = np.array([r.details["p_value"] for r in res], dtype=float)
            rejections, tested = int(np.sum(pvals < 0.05)), len(pvals)
        seconds = time.perf_counter() - t0
        s, per = audit.summary, audit.per_pair
        row: dict[str, Any] = {"pass": k, "identities": audit.counts["identities"],
                               "rows": int(sum(len(x) for x in kept.values()))}
        for route in ("gaussmech", "mmd_tv"):
            r = s[s["route"] == route]
            row[route] = float(r["value"].iloc[0]) if len(r) else pd.NA
        for _, r in s[s["route"] == "kde_lr"].iterrows():
            row[f"kde_lr_{float(r['kde_alpha']):g}"] = float(r["value"])
        roc = per[per["route"] == "roc_oof"]
        row.update({"oof_auc": float(roc["auc"].astype(float).median()) if len(roc) else pd.NA,
                    "exact_corners": int(roc["exact_corner"].astype(bool).sum()) if len(roc) else 0,
                    "raw_infinite": int(roc["infinite"].astype(bool).sum()) if len(roc) else 0,
                    "roc_pairs": len(roc), "mmd_rejections": rejections, "mmd_tested": tested,
                    "seconds": round(seconds, 1)})
        desc_rows.append(row)
        if certify:
            cert = per[per["route"] == "roc_reserved"]
            values = cert["value"].astype(float).to_numpy()
            sizes = np.r_[cert["n_a"].astype(int), cert["n_b"].astype(int)]
            n = len(values)
            cert_rows.append({
                "pass": k, "certificates": n, "positive": int(np.sum(values > 0)), "above_1": int(np.sum(values > 1)),
                "median_bound": float(np.median(values)) if n else pd.NA,
                "min_bound": float(np.min(values)) if n else pd.NA,
                "max_bound": float(np.max(values)) if n else pd.NA,
                "censored": int(cert["censored"].astype(bool).sum()) if n else 0,
                "cap_min": float(cert["cap"].astype(float).min()) if n else pd.NA,
                "cap_max": float(cert["cap"].astype(float).max()) if n else pd.NA,
                "n_test_min": int(sizes.min()) if n else pd.NA, "n_test_max": int(sizes.max()) if n else pd.NA,
                "alpha_per_bound": bonferroni_alpha(family, confidence), "family_size": family})
    desc = pd.DataFrame(desc_rows)
    for col in desc.columns:
        if desc[col].dtype == object:
            dtype = "Int64" if col == "mmd_rejections" else "Float64"
            desc[col] = pd.to_numeric(desc[col], errors="coerce").astype(dtype)
    certs = pd.DataFrame(cert_rows, columns=["pass", "certificates", "positive", "above_1", "median_bound",
                                             "min_bound", "max_bound", "censored", "cap_min", "cap_max",
                                             "n_test_min", "n_test_max", "alpha_per_bound", "family_size"])
    certs = certs.astype({"median_bound": "Float64", "min_bound": "Float64", "max_bound": "Float64",
                          "cap_min": "Float64", "cap_max": "Float64", "n_test_min": "Int64", "n_test_max": "Int64"})
    return desc, certs


# -------------------------------------------------------------------------------------------------
# the operator


def operator_arrays(corpora: Corpora, variant: str, partition: str
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Donor, target and swap embeddings of one partition's triplets (raw float64).

    Returns
    -------
    d, t, s : ndarray, shape (n, d)
    groups : ndarray of str, shape (n, 2)
        Donor identity (column 0) and target identity (column 1) of each triplet: the keys of the
        identity-disjoint folds (:func:`epsaudit.operator.cv_folds`).

    Raises
    ------
    ValueError
        An unknown partition or a variant with no operator rows for it.
    """
    if partition not in ("train", "test"):
        raise ValueError(f"partition must be 'train' or 'test', got {partition!r}")
    key = ("operator_arrays", variant, partition)
    if key not in corpora._cache:
        trip = corpora.triplets[corpora.triplets["partition"] == partition]
        swaps = corpora.operator[corpora.operator["variant"] == variant]
        rows = trip.merge(swaps, on="triplet", how="inner")
        if rows.empty:
            raise ValueError(f"{corpora.encoder}_operator.parquet: no {partition} swaps for variant {variant!r} "
                             f"(variants present: {sorted(corpora.operator['variant'].unique())})")
        cols = corpora.embedding_columns
        corpora._cache[key] = (corpora.embeddings(rows["donor"]), corpora.embeddings(rows["target"]),
                               rows[cols].to_numpy(dtype=np.float64),
                               rows[["donor_identity", "target_identity"]].astype(str).to_numpy())
    return tuple(a.copy() for a in corpora._cache[key])  # type: ignore[return-value]


@dataclass(frozen=True, eq=False)
class OperatorStudy:
    """What :func:`fit_operator_study` computed for one variant.

    Attributes
    ----------
    variant : str
    op : AffineOperator
        Fit on every train triplet (penalty by identity-disjoint 5-fold CV; ``op.search`` is the
        penalty's :class:`epsaudit.grids.GridSearchRecord`, ``op.cv`` the folds).
    quality : pandas.DataFrame
        Index ``affine``, ``copy-donor``, ``kNN``; columns ``mean_cosine``, ``r2``,
        ``residual_fraction`` on the test partition.
    spectra : dict
        :func:`epsaudit.operator.spectral_summary` (``rho_B``, ``sigma_max_B``, ``b_u`` over the
        unit test targets, ``rho_A``) plus ``n_train``, ``n_test``, ``alpha``, ``alpha_edge``
        (``op.search.edge``), ``alpha_determined``, ``widenings`` and ``weak_directions``
        (:func:`epsaudit.operator.weak_directions` of the train inputs).
    size_curve : pandas.DataFrame
        ``n_train``, ``rho_B``, ``sigma_max_B``, ``b_u``, ``r2_test``, ``alpha``, ``alpha_edge``
        for nested seeded train subsets (each with its own widened penalty search).
    sensitivity : pandas.DataFrame
        :func:`epsaudit.operator.penalty_sensitivity`: the quantities at every penalty searched.
    determination : pandas.DataFrame
        :func:`epsaudit.operator.penalty_determination`: which quantities the data determine.
    eigenvalues : ndarray of complex, shape (d,)
        Of ``B``, by decreasing modulus.
    residuals : dict
        :func:`residual_checks` on the test partition.
    """

    variant: str
    op: AffineOperator
    quality: pd.DataFrame
    spectra: dict
    size_curve: pd.DataFrame
    eigenvalues: np.ndarray
    residuals: dict
    sensitivity: pd.DataFrame
    determination: pd.DataFrame


def residual_checks(op: AffineOperator, d, t, s, *, same_person: Mapping[Hashable, np.ndarray] | None = None,
                    top: int = 10, seed: int = 0) -> dict[str, Any]:
    """Adequacy checks of the residual ``r = s - (A d + B t + c)`` (paper 002, Section VI-B, Appendix D).

    Parameters
    ----------
    op : AffineOperator
    d, t, s : array_like, shape (n, dim)
        Triplets to check (pass the held-out test partition).
    same_person : mapping identity -> ndarray (n_i, dim), optional
        Raw embeddings of original photographs per identity, for ``residual_to_same_person``.
    top : int
        Principal directions in ``top_share``.
    seed : int
        Subsampling seed of the Shapiro-Wilk tests when ``n > 5000``.

    Returns
    -------
    dict
        ``n``; ``isotropy``: ``top_over_mean`` (largest eigenvalue of the residual covariance over
        the mean eigenvalue; 1 if isotropic) and ``top_share`` (variance share of the ``top``
        principal directions; ``top / dim`` if isotropic); ``gaussianity``: ``non_gaussian``
        (coordinates with Shapiro-Wilk p < 1e-3, :func:`scipy.stats.shapiro`) out of ``tested``;
        ``target_correlation``: ``mean_abs`` and ``max_abs`` of the Pearson correlation of residual
        coordinate j with target coordinate j' over all (j, j') (paper: mean <= 0.023);
        ``donor_correlation`` likewise; ``bias``: mean residual norm over the RMS residual norm;
        ``residual_to_same_person``: median residual norm over the median pairwise distance of two
        photographs of one identity (``<NA>`` without ``same_person``).
    """
    d, t, s = (np.asarray(x, dtype=np.float64) for x in (d, t, s))
    r = s - op.predict(d, t)
    n, dim = r.shape
    eig = np.clip(np.linalg.eigvalsh(np.cov(r, rowvar=False))[::-1], 0, None)
    rng = stream("residual-subsample", seed)
    sub = r if n <= 5000 else r[rng.choice(n, 5000, replace=False)]
    pvals = np.array([stats.shapiro(sub[:, j]).pvalue for j in range(dim)])

    def cross(a: np.ndarray) -> dict[str, float]:
        za = (r - r.mean(0)) / np.where(r.std(0) > 0, r.std(0), np.inf)
        zb = (a - a.mean(0)) / np.where(a.std(0) > 0, a.std(0), np.inf)
        corr = np.abs(za.T @ zb / n)
        return {"mean_abs": float(corr.mean()), "max_abs": float(corr.max())}

    ratio: Any = pd.NA
    if same_person is not None:
        dists = []
        for x in same_person.values():
            x = np.asarray(x, dtype=np.float64)
            if len(x) >= 2:
                iu = np.triu_indices(len(x), 1)
                dists.append(np.linalg.norm(x[:, None] - x[None], axis=2)[iu])
        if dists:
            ratio = float(np.median(np.linalg.norm(r, axis=1)) / np.median(np.concatenate(dists)))
    return {
        "n": n,
        "isotropy": {"top_over_mean": float(eig[0] / eig.mean()), "top_share": float(eig[:top].sum() / eig.sum()),
                     "top": int(min(top, dim))},
        "gaussianity": {"non_gaussian": int(np.sum(pvals < 1e-3)), "tested": dim, "rows": len(sub)},
        "target_correlation": cross(t),
        "donor_correlation": cross(d),
        "bias": float(np.linalg.norm(r.mean(0)) / np.sqrt(np.mean(np.sum(r**2, axis=1)))),
        "residual_to_same_person": ratio,
    }


def fit_operator_study(corpora: Corpora, variant: str, *, sizes: Sequence[int] = (1000, 2000, 4000, 8000),
                       seed: int = 0, alphas: Sequence[float] = DEFAULT_ALPHAS, knn_k: int = 10,
                       folds: int = 5, roles: str = "both", widen: int = MAX_WIDENINGS) -> OperatorStudy:
    """Fit ``s = A d + B t + c + e`` on the train partition and check it on the test partition.

    Parameters
    ----------
    corpora : Corpora
    variant : str
    sizes : sequence of int
        Train-set sizes of the size curve (nested subsets of one seeded permutation); sizes above
        the train partition are dropped.
    seed : int
        Size-curve subsets, identity-to-fold assignment, residual-check subsampling.
    alphas : sequence of float
        Initial ridge penalty grid, widened while the best penalty is at an edge
        (:func:`epsaudit.operator.ridge_penalty_search`).
    knn_k : int
        Neighbours of the kNN baseline.
    folds : int
    roles : ``"both"`` or ``"target"``
        Fold design (:func:`epsaudit.operator.cv_folds`): identity-disjoint in donor and target
        role (default), or grouped by target identity only (the earlier design, for comparison).
    widen : int
        Maximum widenings of the penalty grid (0: ``alphas`` only).

    Returns
    -------
    OperatorStudy

    Raises
    ------
    ValueError
        No train/test swaps for the variant, or too few identities for the folds. A size-curve
        subset too small for the folds is skipped, never silently: it gets a row with NaN
        quantities and ``alpha_edge`` holding the reason.
    """
    d, t, s, groups = operator_arrays(corpora, variant, "train")
    d_te, t_te, s_te, groups_te = operator_arrays(corpora, variant, "test")
    fit_args = dict(alphas=alphas, folds=folds, roles=roles, seed=seed, widen=widen)
    op = fit_affine_operator(d, t, s, groups, **fit_args)
    preds = {"affine": op.predict(d_te, t_te)}
    base = baseline_predictions((d, t, s), (d_te, t_te, s_te), k=knn_k)
    preds["copy-donor"], preds["kNN"] = base["copy_donor"], base["knn"]
    quality = pd.DataFrame({k: prediction_quality(v, s_te) for k, v in preds.items()}).T.rename_axis("predictor")
    spectra = {**spectral_summary(op, t_te), "n_train": len(d), "n_test": len(d_te), "alpha": op.alpha,
               "alpha_edge": op.search.edge, "alpha_determined": op.search.determined,
               "widenings": op.search.widenings, "weak_directions": weak_directions(d, t)}
    order = stream("size-curve-order", seed).permutation(len(d))
    rows = []
    for n in sorted({int(x) for x in sizes if int(x) <= len(d)}):
        sub = order[:n]
        try:
            op_n = op if n == len(d) else fit_affine_operator(d[sub], t[sub], s[sub], groups[sub], **fit_args)
        except ValueError as exc:  # too few identities for the folds in a small subset: say so
            rows.append({"n_train": n, "rho_B": np.nan, "sigma_max_B": np.nan, "b_u": np.nan, "r2_test": np.nan,
                         "alpha": np.nan, "alpha_edge": f"not fitted: {str(exc).splitlines()[0]}"})
            continue
        sp = spectral_summary(op_n, t_te)
        rows.append({"n_train": n, "rho_B": sp["rho_B"], "sigma_max_B": sp["sigma_max_B"], "b_u": sp["b_u"],
                     "r2_test": prediction_quality(op_n.predict(d_te, t_te), s_te)["r2"], "alpha": op_n.alpha,
                     "alpha_edge": op_n.search.edge})
    size_curve = pd.DataFrame(rows, columns=["n_train", "rho_B", "sigma_max_B", "b_u", "r2_test", "alpha",
                                             "alpha_edge"])
    eigenvalues = linalg.eigvals(op.B)
    eigenvalues = eigenvalues[np.argsort(-np.abs(eigenvalues), kind="stable")]
    test_ids = set(groups_te.ravel())
    orig = corpora.originals[corpora.originals["identity"].isin(test_ids)]
    same = {k: v[corpora.embedding_columns].to_numpy(dtype=np.float64) for k, v in orig.groupby("identity")}
    residuals = residual_checks(op, d_te, t_te, s_te, same_person=same, seed=seed)
    sensitivity = penalty_sensitivity(op, (d, t, s), (d_te, t_te, s_te))
    determination = penalty_determination(sensitivity)
    return OperatorStudy(variant=variant, op=op, quality=quality, spectra=spectra, size_curve=size_curve,
                         eigenvalues=eigenvalues, residuals=residuals, sensitivity=sensitivity,
                         determination=determination)


#: The fold designs :func:`cv_design_comparison` compares: (label, roles, widen).
CV_DESIGNS = (("target folds, initial grid", "target", 0), ("target folds, widened grid", "target", MAX_WIDENINGS),
              ("both-role folds, widened grid", "both", MAX_WIDENINGS))


def cv_design_comparison(corpora: Corpora, variant: str, *, designs: Sequence[tuple[str, str, int]] = CV_DESIGNS,
                         alphas: Sequence[float] = DEFAULT_ALPHAS, folds: int = 5, seed: int = 0) -> pd.DataFrame:
    """The chosen penalty and the headline numbers under different fold designs and grids.

    The first design of :data:`CV_DESIGNS` is the operator fit as it was (folds grouped by target
    identity, penalty grid 1e-3 ... 1e4 not widened), the last the current one (identity-disjoint
    in both roles, widened grid).

    Parameters
    ----------
    corpora : Corpora
    variant : str
    designs : sequence of (label, roles, widen)
        ``roles`` and ``widen`` as in :func:`fit_operator_study`.
    alphas, folds, seed
        As in :func:`fit_operator_study`.

    Returns
    -------
    pandas.DataFrame
        One row per design: ``design``, ``held_out`` (:attr:`epsaudit.operator.CVFolds.held_out`),
        ``validated`` (triplets validated over all folds), ``train_per_fold`` and
        ``excluded_per_fold`` (means), ``shared_identities`` (mean per fold: validation identities
        also in that fold's training triplets, either role), ``alpha``, ``edge``, ``widenings``,
        ``one_se_low``, ``one_se_high``, ``rho_B``, ``sigma_max_B``, ``b_u``, ``r2`` and
        ``mean_cosine`` (test partition).
    """
    d, t, s, groups = operator_arrays(corpora, variant, "train")
    d_te, t_te, s_te, _ = operator_arrays(corpora, variant, "test")
    rows = []
    for label, roles, widen in designs:
        op = fit_affine_operator(d, t, s, groups, alphas=alphas, folds=folds, roles=roles, seed=seed, widen=widen)
        rec, tab = op.search, op.cv.table
        sp, q = spectral_summary(op, t_te), prediction_quality(op.predict(d_te, t_te), s_te)
        rng = rec.one_se_range
        rows.append({"design": label, "held_out": op.cv.held_out, "validated": op.cv.validated,
                     "train_per_fold": float(tab["train"].mean()), "excluded_per_fold": float(tab["excluded"].mean()),
                     "shared_identities": float(tab["shared_identities"].astype(float).mean()),
                     "alpha": op.alpha, "edge": rec.edge, "widenings": rec.widenings,
                     "one_se_low": rng[0], "one_se_high": rng[1],
                     **{k: sp[k] for k in ("rho_B", "sigma_max_B", "b_u")}, "r2": q["r2"],
                     "mean_cosine": q["mean_cosine"]})
    return pd.DataFrame(rows)


# -------------------------------------------------------------------------------------------------
# model predictions


def _train_donors(corpora: Corpora, variant: str) -> np.ndarray:
    d, _, _, _ = operator_arrays(corpora, variant, "train")
    return d


def model_predictions(study_or_op: OperatorStudy | AffineOperator, corpora: Corpora, variant: str, *,
                      passes: int = 5, mc_reps: int = 20, seed: int = 0,
                      centre: np.ndarray | None = None) -> pd.DataFrame:
    """The cascade predicted from the operator fit alone (paper 002, Section VII, Figure 5).

    Rollouts (:func:`epsaudit.operator.rollout`) start from the complete chains' pass-0 photographs;
    no cascade output is used. Scores use the same galleries and centring as
    :func:`cascade_series`.

    - ``noiseless``: donor = mean operator-train donor embedding at every pass, no noise; its
      floor is the fixed point ``(I - B)^-1 (A mean(d) + c)`` scored against each chain's target
      gallery (median over chains).
    - ``monte_carlo``: each chain draws a donor per pass from the operator-train donor embeddings
      (with replacement) and noise ``e ~ N(0, residual_cov)``; ``mc_reps`` seeded replicates; its
      floor is one draw per chain and replicate from the stationary law (train donor mean and
      covariance, :func:`epsaudit.operator.stationary_law`) scored against the target galleries.
      Leakage, non-member score, floor, excess and AUC are medians over replicates.
    - ``carrier``: median over chains of the raw ``cos(B^k t0, t0)``.
    - ``lyapunov_floor``: the stationary draws scored against the *non-member* galleries (median
      over chains and replicates) - prediction 2's floor, comparable with the measured ``floor``.

    Parameters
    ----------
    study_or_op : OperatorStudy or AffineOperator
    corpora : Corpora
    variant : str
        Which complete chains (starts) and which variant's operator-train donors to use.
    passes : int
        ``K`` passes to predict (may exceed the measured cascade).
    mc_reps : int
    seed : int
    centre : ndarray, shape (d,), optional

    Returns
    -------
    pandas.DataFrame
        One row per pass ``0..K``: ``pass``; for ``model`` in ``noiseless``, ``monte_carlo``:
        ``<model>_leakage``, ``<model>_nonmember``, ``<model>_floor``, ``<model>_excess``,
        ``<model>_excess_ratio`` (``<NA>`` at pass 0; ratio of the reported excesses);
        ``monte_carlo_auc``; ``carrier``; ``lyapunov_floor``; ``lyapunov_residual`` (accuracy
        of the stationary covariance, :func:`epsaudit.operator.lyapunov_residual`).

    Raises
    ------
    ValueError
        ``passes < 1``, ``mc_reps < 1``, or ``rho(B) >= 1`` (no stationary law).
    """
    op = study_or_op.op if isinstance(study_or_op, OperatorStudy) else study_or_op
    if int(passes) < 1 or int(mc_reps) < 1:
        raise ValueError(f"passes and mc_reps must be >= 1, got {passes} and {mc_reps}")
    c = reference_centre(corpora) if centre is None else np.asarray(centre, dtype=np.float64)
    measured, _ = chain_embeddings(corpora, variant)
    start = measured[0]
    m, dim = start.shape
    donors = _train_donors(corpora, variant)
    d_mean, d_cov = donors.mean(axis=0), np.cov(donors, rowvar=False)
    mu, cov = stationary_law(op, d_mean, d_cov)
    lyap_res = lyapunov_residual(op.B, cov, op.A @ d_cov @ op.A.T + op.residual_cov)
    fixed = np.linalg.solve(np.eye(dim) - op.B, op.A @ d_mean + op.c)

    def scored(emb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        tgt, non, _, _, _, _ = _scores(corpora, variant, emb, c)
        return tgt, non

    out = pd.DataFrame({"pass": np.arange(passes + 1)})
    noiseless = rollout(op, start, np.broadcast_to(d_mean, (passes, dim)), noise=False)
    tgt, non = scored(noiseless)
    floor = float(np.median(scored(np.broadcast_to(fixed, (1, m, dim)))[0]))
    lk = np.median(tgt, axis=1)
    out["noiseless_leakage"], out["noiseless_nonmember"] = lk, np.median(non, axis=1)
    out["noiseless_floor"], out["noiseless_excess"] = floor, lk - floor
    out["noiseless_excess_ratio"] = _ratios(lk - floor)

    rng = generator(seed, "model-monte-carlo")
    reps = {"leakage": [], "nonmember": [], "floor": [], "excess": [], "auc": [], "lyapunov": []}
    for _ in range(int(mc_reps)):
        draws = donors[rng.integers(0, len(donors), size=(passes, m))]
        emb = rollout(op, start, draws, noise=True, seed=rng)
        tgt, non = scored(emb)
        stat = rng.multivariate_normal(mu, cov, size=m, method="eigh")
        st_t, st_n = scored(stat[None])
        lk = np.median(tgt, axis=1)
        fl = float(np.median(st_t))
        reps["leakage"].append(lk)
        reps["nonmember"].append(np.median(non, axis=1))
        reps["floor"].append(fl)
        reps["excess"].append(lk - fl)
        reps["auc"].append([membership_metrics(tgt[p], non[p])["auc"] for p in range(passes + 1)])
        reps["lyapunov"].append(st_n.ravel())
    excess = np.median(np.array(reps["excess"]), axis=0)
    out["monte_carlo_leakage"] = np.median(np.array(reps["leakage"]), axis=0)
    out["monte_carlo_nonmember"] = np.median(np.array(reps["nonmember"]), axis=0)
    out["monte_carlo_floor"] = float(np.median(reps["floor"]))
    out["monte_carlo_excess"] = excess
    out["monte_carlo_excess_ratio"] = _ratios(excess)
    out["monte_carlo_auc"] = np.median(np.array(reps["auc"]), axis=0)

    carrier = [start]
    for _ in range(passes):
        carrier.append(carrier[-1] @ op.B.T)
    cstack = np.stack(carrier)
    out["carrier"] = np.median(np.einsum("kmd,md->km", _unit(cstack), _unit(start)), axis=1)
    out["lyapunov_floor"] = float(np.median(np.concatenate(reps["lyapunov"])))
    out["lyapunov_residual"] = lyap_res
    return out


def _dominant_subspace(B: np.ndarray, top: int) -> np.ndarray:
    """Orthonormal basis (dim, q) of B's invariant subspace of its ``top`` largest-modulus eigenvalues
    (real Schur form; ``q`` may be ``top + 1`` when a complex pair straddles the cut)."""
    ev = linalg.eigvals(B)
    mags = np.sort(np.abs(ev))[::-1]
    top = int(min(max(top, 1), len(ev)))
    cut = mags[top - 1] * (1 - 1e-9)
    _, z, sdim = linalg.schur(B, output="real", sort=lambda re, im: np.hypot(re, im) >= cut)
    return z[:, :max(int(sdim), 1)]


def persistent_directions(op: AffineOperator | OperatorStudy, corpora: Corpora, variant: str, *, top: int = 10,
                          centre: np.ndarray | None = None) -> dict[str, Any]:
    """Prediction 4: do targets aligned with B's dominant eigenspace leak more and survive longer?

    Alignment of chain ``i`` is ``||Q^T u_i||^2`` (in [0, 1]) with ``u_i`` the unit raw pass-0
    embedding and ``Q`` an orthonormal basis of the invariant subspace of B's ``top``
    largest-modulus eigenvalues (real Schur form: handles complex pairs and non-normal B).
    ``alignment_centred`` uses the centred unit start instead (the identity-specific direction).

    Returns
    -------
    dict
        ``n`` (chains), ``subspace_dim``, ``rho_pass1``/``p_pass1`` (Spearman of alignment with the
        pass-1 target score, :func:`scipy.stats.spearmanr`), ``rho_survival``/``p_survival``/
        ``n_survival`` (with ``target_K / target_1`` over chains whose pass-1 score exceeds
        :data:`SURVIVAL_MIN_PASS1`), ``rho_last``/``p_last`` (with the pass-K score), the same three
        correlations for the centred alignment (``centred_`` prefix), and ``alignment`` (per-chain
        DataFrame: chain, identity, alignment, alignment_centred, target_1, target_K).
    """
    op = op.op if isinstance(op, OperatorStudy) else op
    c = reference_centre(corpora) if centre is None else np.asarray(centre, dtype=np.float64)
    tgt, _, _, _, chains, emb = _scores(corpora, variant, None, c)
    q = _dominant_subspace(op.B, top)
    align = np.sum((_unit(emb[0]) @ q) ** 2, axis=1)
    align_c = np.sum((_centred(emb[0], c) @ q) ** 2, axis=1)
    t1, tk = tgt[1], tgt[-1]
    keep = t1 > SURVIVAL_MIN_PASS1
    survival = np.where(keep, tk / np.where(keep, t1, 1.0), np.nan)

    def spear(x: np.ndarray, y: np.ndarray) -> tuple[Any, Any]:
        ok = np.isfinite(y)
        if ok.sum() < 3 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
            return pd.NA, pd.NA
        res = stats.spearmanr(x[ok], y[ok])
        return float(res.statistic), float(res.pvalue)

    out: dict[str, Any] = {"n": len(align), "subspace_dim": q.shape[1], "top": top, "n_survival": int(keep.sum())}
    for prefix, a in (("", align), ("centred_", align_c)):
        out[f"{prefix}rho_pass1"], out[f"{prefix}p_pass1"] = spear(a, t1)
        out[f"{prefix}rho_survival"], out[f"{prefix}p_survival"] = spear(a, survival)
        out[f"{prefix}rho_last"], out[f"{prefix}p_last"] = spear(a, tk)
    out["alignment"] = pd.DataFrame({"chain": chains["chain"].to_numpy(), "identity": chains["identity"].to_numpy(),
                                     "alignment": align, "alignment_centred": align_c, "target_1": t1,
                                     "target_K": tk})
    return out


# -------------------------------------------------------------------------------------------------
# verdicts


def _late_ratio(frame: pd.DataFrame, column: str = "excess_ratio") -> float:
    r = frame[column].dropna().astype(float).to_numpy()
    return float(np.mean(r[-LATE_RATIO_PASSES:])) if len(r) else float("nan")


def _count_verdict(hits: int, total: int) -> str:
    return "confirmed" if hits == total else ("partly" if hits >= total - 1 and hits > 0 else "not confirmed")


def prediction_verdicts(measured: Mapping[str, pd.DataFrame], predicted: Mapping[str, pd.DataFrame],
                        spectra: Mapping[str, Mapping[str, float]], persistent: Mapping[str, Mapping[str, Any]]
                        ) -> pd.DataFrame:
    """The paper's five predictions (paper 002, Sections VII-C and VIII-B), one verdict each.

    Parameters
    ----------
    measured : mapping variant -> DataFrame
        :func:`cascade_series` of the measured cascade.
    predicted : mapping variant -> DataFrame
        :func:`model_predictions` (its ``lyapunov_floor`` is used).
    spectra : mapping variant -> dict
        With ``rho_B`` and ``b_u`` (:class:`OperatorStudy` ``.spectra``).
    persistent : mapping variant -> dict
        :func:`persistent_directions`.

    Rules (module constants; ``r_1`` the first excess ratio, ``r_late`` the mean of the last
    :data:`LATE_RATIO_PASSES` ratios, ``L_k`` leakage, ``E_k`` excess):

    1. two-rate decay: three checks - (a) ``|r_1 - b_u| <= RATE_FIRST_TOL``, (b)
       ``|r_late - rho(B)| <= RATE_LATE_TOL``, (c) shape: ``r_1 < r_late`` and every ratio in (0, 1)
       (the excess falls at every pass and stays positive). All three: confirmed; two: partly;
       otherwise not confirmed.
    2. floor: ``|floor_pooled - lyapunov_floor| <= FLOOR_TOL_CONFIRMED * E_0`` confirmed,
       ``<= FLOOR_TOL_PARTLY * E_0`` partly, else not confirmed (``floor_pooled``: the measured
       median non-member score over passes >= 1).
    3. first-pass dominance: ``D = (L_0 - L_1) / (L_1 - L_K)`` (``inf`` when later passes remove
       nothing while the first does) and ``f = (L_0 - L_1) / E_0``; ``D >= DOMINANCE_CONFIRMED`` and
       ``f >= DOMINANCE_FIRST_SHARE`` confirmed, ``D > DOMINANCE_PARTLY`` partly, else not
       confirmed.
    4. persistent directions: Spearman of alignment with pass-1 leakage and with survival; both
       positive with p < PERSIST_ALPHA and >= PERSIST_MIN_RHO: confirmed; at least one positive with
       p < PERSIST_ALPHA: partly; else not confirmed.
    5. tool ordering (one row over all variants; needs two or more): for every pair of variants
       the sign of the ``rho(B)`` difference must match (a) the sign of the ``r_late`` difference and
       (b) the sign of the tail-survival difference ``E_K / E_1``. Both for every pair: confirmed;
       one: partly; else not confirmed.

    Returns
    -------
    pandas.DataFrame
        ``prediction``, ``variant``, ``expected``, ``measured``, ``verdict`` (one of
        :data:`VERDICTS`), ``rule``.

    Raises
    ------
    ValueError
        Variants missing from ``predicted``/``spectra``/``persistent``.
    """
    rows = []
    variants = list(measured)
    for name, mapping in (("predicted", predicted), ("spectra", spectra), ("persistent", persistent)):
        missing = [v for v in variants if v not in mapping]
        if missing:
            raise ValueError(f"{name} lacks variant(s) {missing}")
    for v in variants:
        m, sp = measured[v].sort_values("pass"), spectra[v]
        rho, bu = float(sp["rho_B"]), float(sp["b_u"])
        ratios = m["excess_ratio"].dropna().astype(float).to_numpy()
        r1, rl = (float(ratios[0]) if len(ratios) else float("nan")), _late_ratio(m)
        checks = [abs(r1 - bu) <= RATE_FIRST_TOL, abs(rl - rho) <= RATE_LATE_TOL,
                  bool(len(ratios) and r1 < rl and np.all((ratios > 0) & (ratios < 1)))]
        rows.append({"prediction": "1 two-rate decay", "variant": v,
                     "expected": f"first ratio ~ b_u = {bu:.3f}; late ratio -> rho(B) = {rho:.3f}",
                     "measured": f"ratios {', '.join(f'{x:.3f}' for x in ratios)}; first {r1:.3f}, late {rl:.3f}",
                     "verdict": _count_verdict(sum(map(bool, checks)), 3),
                     "rule": f"(a) |r1 - b_u| <= {RATE_FIRST_TOL}, (b) |late - rho(B)| <= {RATE_LATE_TOL} "
                             f"(late = mean of last {LATE_RATIO_PASSES} ratios), (c) r1 < late, all ratios in (0, 1); "
                             "3/3 confirmed, 2/3 partly"})
        e0 = float(m["excess"].iloc[0])
        measured_floor = float(m["floor_pooled"].iloc[0])
        lyap = float(predicted[v]["lyapunov_floor"].iloc[0])
        gap = abs(measured_floor - lyap)
        verdict = ("confirmed" if gap <= FLOOR_TOL_CONFIRMED * abs(e0) else
                   "partly" if gap <= FLOOR_TOL_PARTLY * abs(e0) else "not confirmed")
        aucs = m["auc"].astype(float).to_numpy()
        rows.append({"prediction": "2 floor", "variant": v,
                     "expected": f"non-member floor = Lyapunov floor {lyap:.4f}",
                     "measured": f"floor {measured_floor:.4f} (gap {gap:.4f} = {gap / abs(e0):.1%} of pass-0 excess "
                                 f"{e0:.3f}); pass-{int(m['pass'].iloc[-1])} excess {float(m['excess'].iloc[-1]):.4f}; "
                                 f"AUC {aucs[1] if len(aucs) > 1 else aucs[0]:.3f} -> {aucs[-1]:.3f}",
                     "verdict": verdict,
                     "rule": f"|floor - Lyapunov| <= {FLOOR_TOL_CONFIRMED} x pass-0 excess confirmed, "
                             f"<= {FLOOR_TOL_PARTLY} x partly"})
        lk = m["leakage"].astype(float).to_numpy()
        first, later = lk[0] - lk[1], lk[1] - lk[-1]
        ratio = first / later if later > 0 else (float("inf") if first > 0 else float("nan"))
        share = first / e0 if e0 > 0 else float("nan")
        verdict = ("confirmed" if ratio >= DOMINANCE_CONFIRMED and share >= DOMINANCE_FIRST_SHARE else
                   "partly" if ratio > DOMINANCE_PARTLY else "not confirmed")
        rows.append({"prediction": "3 first-pass dominance", "variant": v,
                     "expected": "the first pass removes most similarity; later passes combined far less",
                     "measured": f"pass 1 removes {first:.3f} ({share:.0%} of the pass-0 excess), passes "
                                 f"2..{len(lk) - 1} remove {later:.3f} (ratio {ratio:.1f})",
                     "verdict": verdict,
                     "rule": f"D = (L0 - L1) / (L1 - LK) >= {DOMINANCE_CONFIRMED} and (L0 - L1) / E0 >= "
                             f"{DOMINANCE_FIRST_SHARE} confirmed; D > {DOMINANCE_PARTLY} partly"})
        pr = persistent[v]

        def sig(rho_key: str, p_key: str) -> tuple[bool, bool]:
            r_, p_ = pr.get(rho_key), pr.get(p_key)
            if r_ is None or p_ is None or r_ is pd.NA or p_ is pd.NA:
                return False, False
            ok = float(r_) > 0 and float(p_) < PERSIST_ALPHA
            return ok, ok and float(r_) >= PERSIST_MIN_RHO

        s1, strong1 = sig("rho_pass1", "p_pass1")
        s2, strong2 = sig("rho_survival", "p_survival")
        verdict = "confirmed" if strong1 and strong2 else ("partly" if s1 or s2 else "not confirmed")

        def fmt(x: Any) -> str:
            return "NA" if x is None or x is pd.NA else f"{float(x):.3g}"

        rows.append({"prediction": "4 persistent directions", "variant": v,
                     "expected": "targets aligned with B's dominant eigenspace leak more and survive longer",
                     "measured": f"Spearman pass-1 {fmt(pr.get('rho_pass1'))} (p {fmt(pr.get('p_pass1'))}), "
                                 f"survival {fmt(pr.get('rho_survival'))} (p {fmt(pr.get('p_survival'))}), "
                                 f"n {pr.get('n')}",
                     "verdict": verdict,
                     "rule": f"both rho > 0 with p < {PERSIST_ALPHA} and rho >= {PERSIST_MIN_RHO} confirmed; "
                             f"one rho > 0 with p < {PERSIST_ALPHA} partly"})
    if len(variants) >= 2:
        rho = {v: float(spectra[v]["rho_B"]) for v in variants}
        late = {v: _late_ratio(measured[v].sort_values("pass")) for v in variants}
        surv = {}
        for v in variants:
            e = measured[v].sort_values("pass")["excess"].astype(float).to_numpy()
            surv[v] = e[-1] / e[1] if len(e) > 1 and e[1] != 0 else float("nan")
        pairs = [(a, b) for i, a in enumerate(variants) for b in variants[i + 1:]]
        agree_late = all(np.sign(rho[a] - rho[b]) == np.sign(late[a] - late[b]) for a, b in pairs)
        agree_surv = all(np.sign(rho[a] - rho[b]) == np.sign(surv[a] - surv[b]) for a, b in pairs)
        hits = int(agree_late) + int(agree_surv)
        order = sorted(variants, key=lambda v: -rho[v])
        rows.append({"prediction": "5 tool ordering", "variant": ", ".join(variants),
                     "expected": "slower tail for larger rho(B): " + " > ".join(f"{v} ({rho[v]:.3f})" for v in order),
                     "measured": "late ratio " + ", ".join(f"{v} {late[v]:.3f}" for v in order)
                                 + "; tail survival E_K/E_1 " + ", ".join(f"{v} {surv[v]:.3f}" for v in order),
                     "verdict": "confirmed" if hits == 2 else ("partly" if hits == 1 else "not confirmed"),
                     "rule": "for every pair of variants sign(d rho) = sign(d late ratio) and = sign(d E_K/E_1); "
                             "both confirmed, one partly"})
    return pd.DataFrame(rows, columns=["prediction", "variant", "expected", "measured", "verdict", "rule"])


def verdict_sensitivity(measured: Mapping[str, pd.DataFrame], determination: Mapping[str, pd.DataFrame]
                        ) -> pd.DataFrame:
    """Would prediction 1's checks (a) and (b) come out the same at every penalty the cross-validation
    cannot tell apart from the chosen one?

    Check (a) compares the first measured excess ratio with ``b_u``, check (b) the late ratio with
    ``rho(B)`` (:func:`prediction_verdicts`); both fitted numbers move with the ridge penalty. Over
    the one-standard-error range ``[low, high]`` of the fitted number
    (:func:`epsaudit.operator.penalty_determination`) the distance to the measured ratio ranges over
    ``[min, max]``; the check *holds throughout* if ``max <= tol``, *fails throughout* if
    ``min > tol``, and otherwise *depends on the penalty*: the data do not decide it (*no measured
    ratio* when the cascade has too few passes for the ratio).

    Parameters
    ----------
    measured : mapping variant -> DataFrame
        :func:`cascade_series`.
    determination : mapping variant -> DataFrame
        :attr:`OperatorStudy.determination`.

    Returns
    -------
    pandas.DataFrame
        ``variant``, ``check``, ``measured`` (the ratio), ``quantity``, ``low``, ``high``,
        ``distance_min``, ``distance_max``, ``tolerance``, ``outcome``.

    Raises
    ------
    ValueError
        Variants missing from ``determination``.
    """
    missing = [v for v in measured if v not in determination]
    if missing:
        raise ValueError(f"determination lacks variant(s) {missing}")
    rows = []
    for v, m in measured.items():
        m = m.sort_values("pass")
        ratios = m["excess_ratio"].dropna().astype(float).to_numpy()
        checks = (("(a) first ratio ~ b_u", float(ratios[0]) if len(ratios) else float("nan"), "b_u", RATE_FIRST_TOL),
                  ("(b) late ratio ~ rho(B)", _late_ratio(m), "rho_B", RATE_LATE_TOL))
        for name, ratio, quantity, tol in checks:
            low, high = (float(determination[v].loc[quantity, k]) for k in ("low", "high"))
            near = 0.0 if low <= ratio <= high else min(abs(ratio - low), abs(ratio - high))
            far = max(abs(ratio - low), abs(ratio - high))
            outcome = ("no measured ratio" if not np.isfinite(ratio) else "holds throughout" if far <= tol
                       else "fails throughout" if near > tol else "depends on the penalty")
            rows.append({"variant": v, "check": name, "measured": ratio, "quantity": quantity, "low": low,
                         "high": high, "distance_min": near, "distance_max": far, "tolerance": tol,
                         "outcome": outcome})
    return pd.DataFrame(rows)


def passes_to_excess(excess_last: float, last_pass: int, rate: float, threshold: float = 0.01) -> int:
    """First pass ``k >= last_pass`` with ``excess_last * rate ** (k - last_pass) < threshold``.

    The paper's extrapolation of the confirmed tail rate (paper 002, Section VIII-B: ~18-20 passes
    for FaceFusion). E.g. excess 0.05 at pass 5 with rate 0.9 falls below 0.01 at pass 21.

    Parameters
    ----------
    excess_last : float
        Excess leakage at ``last_pass`` (> 0).
    last_pass : int
    rate : float in (0, 1)
        Per-pass ratio of the tail (e.g. the late excess ratio or ``rho(B)``).
    threshold : float > 0

    Returns
    -------
    int
        ``last_pass`` if the excess is already below the threshold.

    Raises
    ------
    ValueError
        ``rate`` outside (0, 1), a non-positive or non-finite ``excess_last`` or ``threshold``.
    """
    if not (np.isfinite(rate) and 0.0 < rate < 1.0):
        raise ValueError(f"rate must lie in (0, 1) for the excess to vanish, got {rate}")
    if not (np.isfinite(excess_last) and excess_last > 0):
        raise ValueError(f"excess_last must be positive and finite, got {excess_last}")
    if not (np.isfinite(threshold) and threshold > 0):
        raise ValueError(f"threshold must be positive, got {threshold}")
    if excess_last < threshold:
        return int(last_pass)
    n = max(int(np.floor(np.log(threshold / excess_last) / np.log(rate))), 0)
    while excess_last * rate ** n >= threshold:  # guard floating point at exact powers
        n += 1
    while n > 0 and excess_last * rate ** (n - 1) < threshold:
        n -= 1
    return int(last_pass) + n
