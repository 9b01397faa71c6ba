"""Chapter 4, the operator: fit study, residual checks, fold designs and the cascade predicted from
the fit alone (*Toward Interpretable Privacy Guarantees in Face-Swapping Anonymization*, Sections
VI-VII and Appendix D).

The affine operator ``s = A d + B t + c + e`` (:mod:`epsaudit.operator`) is fitted on the operator
corpus's single swaps (:func:`fit_operator_study`), checked on its identity-disjoint test partition
(quality against baselines, :func:`residual_checks`) and then rolled forward from the cascade's
start photographs (:func:`model_predictions`); no cascade output enters the fit or the prediction.

Model floors. The excess of a *model* rollout is taken above the model's own asymptote, the level
its leakage statistic converges to: for the noiseless rollout the fixed point
``mu = (I - B)^-1 (A E[d] + c)`` scored against each chain's target gallery, for the Monte Carlo
rollout draws from the stationary law (:func:`epsaudit.operator.stationary_law`) scored against the
target galleries. Only then do the model's excess ratios tend to ``rho(B)``: finite galleries put
the target-gallery and non-member-gallery scores of one stationary point at different levels
(markedly so for the noiseless fixed point, which lies close to the centre, where centred cosines
are unstable). The *Lyapunov floor* of prediction 2 is the same stationary draws scored against the
non-member galleries, which is what the measured ``floor`` is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import linalg, stats

from ...corpora import Corpora, embedding_file
from ...leakage import membership_metrics
from ...operator import (AffineOperator, baseline_predictions, fit_affine_operator, lyapunov_residual,
                        penalty_determination, penalty_sensitivity, prediction_quality, rollout, spectral_summary,
                        stationary_law, weak_directions)
from ...ridge import DEFAULT_ALPHAS, MAX_WIDENINGS
from ...seeds import generator
from ...validation import unit_rows
from .scores import centred_unit, chain_embeddings, centred_scores, excess_ratios, reference_centre

__all__ = ["OperatorStudy", "operator_arrays", "residual_checks", "fit_operator_study", "CV_DESIGNS",
           "cv_design_comparison", "model_predictions", "dominant_subspace", "persistent_directions",
           "SURVIVAL_MIN_PASS1"]

#: Prediction 4: survival is ``target_K / target_1`` per chain, over chains whose pass-1 target
#: score exceeds this (a ratio of near-zero scores carries no information).
SURVIVAL_MIN_PASS1 = 0.05


def operator_arrays(corpora: Corpora, variant: str, partition: str
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Donor, target and swap embeddings of one partition's triplets (raw float64).

    Returns
    -------
    d, t, s : ndarray, shape (n, d)
    groups : ndarray of str, shape (n, 2)
        Donor identity (column 0) and target identity (column 1) of each triplet: the keys of the
        identity-disjoint folds (:func:`epsaudit.ridge.cv_folds`).

    Raises
    ------
    ValueError
        An unknown partition or a variant with no operator rows for it.
    """
    if partition not in ("train", "test"):
        raise ValueError(f"partition must be 'train' or 'test', got {partition!r}")
    key = ("operator_arrays", variant, partition)
    if key not in corpora.cache:
        trip = corpora.triplets[corpora.triplets["partition"] == partition]
        swaps = corpora.operator[corpora.operator["variant"] == variant]
        rows = trip.merge(swaps, on="triplet", how="inner")
        if rows.empty:
            raise ValueError(f"{embedding_file(corpora.encoder, 'operator')}: no {partition} swaps for variant "
                             f"{variant!r} (variants present: {sorted(corpora.operator['variant'].unique())})")
        cols = corpora.embedding_columns
        corpora.cache[key] = (corpora.embeddings(rows["donor"]), corpora.embeddings(rows["target"]),
                              rows[cols].to_numpy(dtype=np.float64),
                              rows[["donor_identity", "target_identity"]].astype(str).to_numpy())
    return tuple(a.copy() for a in corpora.cache[key])  # type: ignore[return-value]


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
    eigenvalues : ndarray of complex, shape (d,)
        Of ``B``, by decreasing modulus.
    residuals : dict
        :func:`residual_checks` on the test partition.
    sensitivity : pandas.DataFrame
        :func:`epsaudit.operator.penalty_sensitivity`: the quantities at every penalty searched.
    determination : pandas.DataFrame
        :func:`epsaudit.operator.penalty_determination`: which quantities the data determine.
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


def _correlations(r: np.ndarray, a: np.ndarray) -> dict[str, float]:
    """Mean and largest absolute Pearson correlation of residual coordinate j with coordinate j' of ``a``."""
    n = len(r)
    za = (r - r.mean(0)) / np.where(r.std(0) > 0, r.std(0), np.inf)
    zb = (a - a.mean(0)) / np.where(a.std(0) > 0, a.std(0), np.inf)
    corr = np.abs(za.T @ zb / n)
    return {"mean_abs": float(corr.mean()), "max_abs": float(corr.max())}


def _same_person_ratio(r: np.ndarray, same_person: Mapping[Hashable, np.ndarray] | None) -> Any:
    """Median residual norm over the median distance of two photographs of one identity."""
    if same_person is None:
        return pd.NA
    dists = []
    for x in same_person.values():
        x = np.asarray(x, dtype=np.float64)
        if len(x) >= 2:
            iu = np.triu_indices(len(x), 1)
            dists.append(np.linalg.norm(x[:, None] - x[None], axis=2)[iu])
    return float(np.median(np.linalg.norm(r, axis=1)) / np.median(np.concatenate(dists))) if dists else pd.NA


def residual_checks(op: AffineOperator, d, t, s, *, same_person: Mapping[Hashable, np.ndarray] | None = None,
                    top: int = 10, seed: Any = 0) -> dict[str, Any]:
    """Adequacy checks of the residual ``r = s - (A d + B t + c)`` (paper, Section VI-B, Appendix D).

    Parameters
    ----------
    op : AffineOperator
    d, t, s : array_like, shape (n, dim)
        Triplets to check (pass the held-out test partition).
    same_person : mapping identity -> ndarray (n_i, dim), optional
        Raw embeddings of original photographs per identity, for ``residual_to_same_person``.
    top : int
        Principal directions in ``top_share``.
    seed : int or tuple
        Subsampling of the Shapiro-Wilk tests when ``n > 5000`` (stream ``("residual-subsample", seed)``).

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
    rng = generator(seed, "residual-subsample")
    sub = r if n <= 5000 else r[rng.choice(n, 5000, replace=False)]
    pvals = np.array([stats.shapiro(sub[:, j]).pvalue for j in range(dim)])
    return {
        "n": n,
        "isotropy": {"top_over_mean": float(eig[0] / eig.mean()), "top_share": float(eig[:top].sum() / eig.sum()),
                     "top": int(min(top, dim))},
        "gaussianity": {"non_gaussian": int(np.sum(pvals < 1e-3)), "tested": dim, "rows": len(sub)},
        "target_correlation": _correlations(r, t),
        "donor_correlation": _correlations(r, d),
        "bias": float(np.linalg.norm(r.mean(0)) / np.sqrt(np.mean(np.sum(r**2, axis=1)))),
        "residual_to_same_person": _same_person_ratio(r, same_person),
    }


def _size_curve(op: AffineOperator, train: tuple, test: tuple, sizes: Sequence[int], fit_args: dict,
                seed: Any) -> pd.DataFrame:
    """Spectra and held-out R^2 of fits on nested seeded subsets of the train triplets."""
    d, t, s, groups = train
    d_te, t_te, s_te = test
    order = generator(seed, "size-curve-order").permutation(len(d))
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
    return pd.DataFrame(rows, columns=["n_train", "rho_B", "sigma_max_B", "b_u", "r2_test", "alpha", "alpha_edge"])


def fit_operator_study(corpora: Corpora, variant: str, *, sizes: Sequence[int] = (1000, 2000, 4000, 8000),
                       seed: Any = 0, alphas: Sequence[float] = DEFAULT_ALPHAS, knn_k: int = 10,
                       folds: int = 5, roles: str = "both", widen: int = MAX_WIDENINGS) -> OperatorStudy:
    """Fit ``s = A d + B t + c + e`` on the train partition and check it on the test partition
    (the paper's Table II and Figure 14 analogs).

    Parameters
    ----------
    corpora : Corpora
    variant : str
    sizes : sequence of int
        Train-set sizes of the size curve (nested subsets of one seeded permutation); sizes above
        the train partition are dropped.
    seed : int or tuple
        Size-curve subsets, identity-to-fold assignment, residual-check subsampling.
    alphas : sequence of float
        Initial ridge penalty grid, widened while the best penalty is at an edge
        (:func:`epsaudit.ridge.ridge_penalty_search`).
    knn_k : int
        Neighbours of the kNN baseline.
    folds : int
    roles : ``"both"`` or ``"target"``
        Fold design (:func:`epsaudit.ridge.cv_folds`): identity-disjoint in donor and target
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
    size_curve = _size_curve(op, (d, t, s, groups), (d_te, t_te, s_te), sizes, fit_args, seed)
    eigenvalues = linalg.eigvals(op.B)
    eigenvalues = eigenvalues[np.argsort(-np.abs(eigenvalues), kind="stable")]
    orig = corpora.originals[corpora.originals["identity"].isin(set(groups_te.ravel()))]
    same = {k: v[corpora.embedding_columns].to_numpy(dtype=np.float64) for k, v in orig.groupby("identity")}
    residuals = residual_checks(op, d_te, t_te, s_te, same_person=same, seed=seed)
    sensitivity = penalty_sensitivity(op, (d, t, s), (d_te, t_te, s_te))
    return OperatorStudy(variant=variant, op=op, quality=quality, spectra=spectra, size_curve=size_curve,
                         eigenvalues=eigenvalues, residuals=residuals, sensitivity=sensitivity,
                         determination=penalty_determination(sensitivity))


#: The fold designs :func:`cv_design_comparison` compares: (label, roles, widen).
CV_DESIGNS = (("target folds, initial grid", "target", 0), ("target folds, widened grid", "target", MAX_WIDENINGS),
              ("both-role folds, widened grid", "both", MAX_WIDENINGS))


def cv_design_comparison(corpora: Corpora, variant: str, *, designs: Sequence[tuple[str, str, int]] = CV_DESIGNS,
                         alphas: Sequence[float] = DEFAULT_ALPHAS, folds: int = 5, seed: Any = 0) -> pd.DataFrame:
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
        One row per design: ``design``, ``held_out`` (:attr:`epsaudit.ridge.CVFolds.held_out`),
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
# model predictions (paper, Section VII)


def _noiseless(op: AffineOperator, scored, start: np.ndarray, d_mean: np.ndarray, passes: int) -> dict[str, Any]:
    """Columns of the noiseless rollout: donor at its mean, no noise; floor at the fixed point."""
    m, dim = start.shape
    fixed = np.linalg.solve(np.eye(dim) - op.B, op.A @ d_mean + op.c)
    tgt, non = scored(rollout(op, start, np.broadcast_to(d_mean, (passes, dim)), noise=False))
    floor = float(np.median(scored(np.broadcast_to(fixed, (1, m, dim)))[0]))
    lk = np.median(tgt, axis=1)
    return {"noiseless_leakage": lk, "noiseless_nonmember": np.median(non, axis=1), "noiseless_floor": floor,
            "noiseless_excess": lk - floor, "noiseless_excess_ratio": excess_ratios(lk - floor)}


def _monte_carlo(op: AffineOperator, scored, start: np.ndarray, donors: np.ndarray, law: tuple, passes: int,
                 mc_reps: int, seed: Any) -> tuple[dict[str, Any], float]:
    """Columns of the Monte Carlo rollout (medians over replicates) and the Lyapunov floor."""
    mu, cov = law
    m = len(start)
    rng = generator(seed, "model-monte-carlo")
    reps: dict[str, list] = {"leakage": [], "nonmember": [], "floor": [], "excess": [], "auc": [], "lyapunov": []}
    for _ in range(int(mc_reps)):
        draws = donors[rng.integers(0, len(donors), size=(passes, m))]
        tgt, non = scored(rollout(op, start, draws, noise=True, seed=rng))
        st_t, st_n = scored(rng.multivariate_normal(mu, cov, size=m, method="eigh")[None])
        lk, fl = np.median(tgt, axis=1), float(np.median(st_t))
        reps["leakage"].append(lk)
        reps["nonmember"].append(np.median(non, axis=1))
        reps["floor"].append(fl)
        reps["excess"].append(lk - fl)
        reps["auc"].append([membership_metrics(tgt[p], non[p])["auc"] for p in range(passes + 1)])
        reps["lyapunov"].append(st_n.ravel())
    excess = np.median(np.array(reps["excess"]), axis=0)
    columns = {"monte_carlo_leakage": np.median(np.array(reps["leakage"]), axis=0),
               "monte_carlo_nonmember": np.median(np.array(reps["nonmember"]), axis=0),
               "monte_carlo_floor": float(np.median(reps["floor"])), "monte_carlo_excess": excess,
               "monte_carlo_excess_ratio": excess_ratios(excess),
               "monte_carlo_auc": np.median(np.array(reps["auc"]), axis=0)}
    return columns, float(np.median(np.concatenate(reps["lyapunov"])))


def model_predictions(study_or_op: OperatorStudy | AffineOperator, corpora: Corpora, variant: str, *,
                      passes: int = 5, mc_reps: int = 20, seed: Any = 0,
                      centre: np.ndarray | None = None) -> pd.DataFrame:
    """The cascade predicted from the operator fit alone (paper, Section VII, Figure 5).

    Rollouts (:func:`epsaudit.operator.rollout`) start from the complete chains' pass-0 photographs;
    no cascade output is used. Scores use the same galleries and centring as
    :func:`~epsaudit.studies.cascade.scores.cascade_series` (module docstring: model floors).

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
    seed : int or tuple
        Of the Monte Carlo rollouts (stream ``("model-monte-carlo", seed)``).
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
    start = chain_embeddings(corpora, variant)[0][0]
    donors = operator_arrays(corpora, variant, "train")[0]
    d_mean, d_cov = donors.mean(axis=0), np.cov(donors, rowvar=False)
    law = stationary_law(op, d_mean, d_cov)
    lyap_res = lyapunov_residual(op.B, law[1], op.A @ d_cov @ op.A.T + op.residual_cov)

    def scored(emb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        sc = centred_scores(corpora, variant, emb, c)
        return sc.target, sc.nonmember

    out = pd.DataFrame({"pass": np.arange(passes + 1)})
    for name, column in _noiseless(op, scored, start, d_mean, passes).items():
        out[name] = column
    monte_carlo, lyapunov_floor = _monte_carlo(op, scored, start, donors, law, passes, mc_reps, seed)
    for name, column in monte_carlo.items():
        out[name] = column
    carrier = [start]
    for _ in range(passes):
        carrier.append(carrier[-1] @ op.B.T)
    out["carrier"] = np.median(np.einsum("kmd,md->km", unit_rows(np.stack(carrier)), unit_rows(start)), axis=1)
    out["lyapunov_floor"] = lyapunov_floor
    out["lyapunov_residual"] = lyap_res
    return out


def dominant_subspace(B: np.ndarray, top: int) -> np.ndarray:
    """Orthonormal basis (dim, q) of B's invariant subspace of its ``top`` largest-modulus eigenvalues
    (real Schur form; ``q`` may be ``top + 1`` when a complex pair straddles the cut).

    Examples
    --------
    >>> dominant_subspace(np.diag([0.2, 0.9, 0.5]), 1).round(6).ravel().tolist()
    [0.0, 1.0, 0.0]
    """
    ev = linalg.eigvals(B)
    mags = np.sort(np.abs(ev))[::-1]
    top = int(min(max(top, 1), len(ev)))
    cut = mags[top - 1] * (1 - 1e-9)
    _, z, sdim = linalg.schur(B, output="real", sort=lambda re, im: np.hypot(re, im) >= cut)
    return z[:, :max(int(sdim), 1)]


def _spearman(x: np.ndarray, y: np.ndarray) -> tuple[Any, Any]:
    """Spearman correlation and p-value over the finite ``y`` (``<NA>`` when undefined)."""
    ok = np.isfinite(y)
    if ok.sum() < 3 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
        return pd.NA, pd.NA
    res = stats.spearmanr(x[ok], y[ok])
    return float(res.statistic), float(res.pvalue)


def persistent_directions(op: AffineOperator | OperatorStudy, corpora: Corpora, variant: str, *, top: int = 10,
                          centre: np.ndarray | None = None) -> dict[str, Any]:
    """Prediction 4: do targets aligned with B's dominant eigenspace leak more and survive longer?

    Alignment of chain ``i`` is ``||Q^T u_i||^2`` (in [0, 1]) with ``u_i`` the unit raw pass-0
    embedding and ``Q`` an orthonormal basis of the invariant subspace of B's ``top``
    largest-modulus eigenvalues (:func:`dominant_subspace`: handles complex pairs and non-normal B).
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
    sc = centred_scores(corpora, variant, None, c)
    q = dominant_subspace(op.B, top)
    align = np.sum((unit_rows(sc.embeddings[0]) @ q) ** 2, axis=1)
    align_c = np.sum((centred_unit(sc.embeddings[0], c) @ q) ** 2, axis=1)
    t1, tk = sc.target[1], sc.target[-1]
    keep = t1 > SURVIVAL_MIN_PASS1
    survival = np.where(keep, tk / np.where(keep, t1, 1.0), np.nan)
    out: dict[str, Any] = {"n": len(align), "subspace_dim": q.shape[1], "top": top, "n_survival": int(keep.sum())}
    for prefix, a in (("", align), ("centred_", align_c)):
        out[f"{prefix}rho_pass1"], out[f"{prefix}p_pass1"] = _spearman(a, t1)
        out[f"{prefix}rho_survival"], out[f"{prefix}p_survival"] = _spearman(a, survival)
        out[f"{prefix}rho_last"], out[f"{prefix}p_last"] = _spearman(a, tk)
    out["alignment"] = pd.DataFrame({"chain": sc.chains["chain"].to_numpy(), "identity": sc.chains["identity"].to_numpy(),
                                     "alignment": align, "alignment_centred": align_c, "target_1": t1,
                                     "target_K": tk})
    return out
