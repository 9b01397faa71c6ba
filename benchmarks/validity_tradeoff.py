"""Validity and power of the trade-off and MMD certificates (larger runs than the unit tests).

Sections (``--sections``, all by default):

``bands``
    Vectorised validity of the simultaneous bands on exactly known score distributions: the
    standardised Gaussian likelihood-ratio scores (mu-GDP, curve ``Phi(Phi^-1(1 - a) - mu)``),
    the 1-D Laplace pair (pure epsilon, ``eps(delta) = eps + 2 log(1 - delta)``) and 4-ary
    randomized response (``eps(delta) = log((p_true - delta) / p_other)``). Per cell ``--reps``
    bands for the Bonferroni band with 4 development thresholds, the single-threshold band (the
    reserved test itself, the near-tight case) and the DKW band. A band *fails* when some
    threshold has a true FPR or FNR above its upper limit; "below" counts bands with a certified
    point strictly below the true curve; "mu"/"eps" count bounds above the truth. Tolerance: the
    0.999 quantile of Binomial(reps, 0.05).
``pipeline``
    The whole API (:func:`tradeoff_certificate` with the default learned scorer) on an isotropic
    Gaussian pair in d = 5; the fitted linear score is refitted (deterministically) to compute the
    exact error rates at the certified thresholds.
``power``
    Mean certified epsilon(1e-5) and mu for k = 1, 2, 4, 8, 16 thresholds and the DKW band, and
    the cost of the extra correction at the single-threshold test's threshold.
``mmd``
    MMD certificate validity at the null and at known separation (closed-form population MMD of
    two Gaussians under the chosen RBF kernel), and its power against the reserved-test and
    trade-off certificates on the same rows (learned scorer).
``faces``
    ``data/dlib_small_swap.csv`` (and ``dlib_large_swap.csv``): each identity split once
    (:func:`epsaudit.condition.split_identities`), pairs chosen on development data as in
    :func:`epsaudit.condition.audit_condition` (top 5 of the first 100 shuffled pairs by
    development out-of-fold AUC) and, separately, all 100 pool pairs as one family; reserved-test,
    trade-off and MMD certificates on the same test rows.

Usage::

    python benchmarks/validity_tradeoff.py [--reps 2000] [--sections bands,pipeline,power,mmd,faces]
                                           [--out benchmarks/results/validity_tradeoff.csv] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import special, stats

try:  # run from a checkout without installing
    import epsaudit  # noqa: F401
except ImportError:  # pragma: no cover
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sklearn.base import clone

from epsaudit.audits.mmd import mmd_certificate, mmd_certificate_pairs
from epsaudit.audits.roc_oof import pair_design
from epsaudit.audits.roc_reserved import reserved_test_pairs
from epsaudit.audits.tradeoff import (
    development_thresholds,
    epsilon_curve,
    mu_lower_bound,
    tradeoff_band,
    tradeoff_certificate,
    tradeoff_certificate_pairs,
)
from epsaudit.bounds import gaussian_epsilon, gaussian_tradeoff
from epsaudit.condition import select_pairs, split_identities
from epsaudit.data import load_embeddings
from epsaudit.mechanisms import IsotropicGaussian, ProductLaplace, RandomizedResponse
from epsaudit.protocol import identity_pairs
from epsaudit.audits.scorers import logistic_regression

DELTAS = np.array([1e-6, 1e-5, 1e-3, 1e-1])
ROOT = Path(__file__).resolve().parents[1]
rows_out: list[dict] = []


def tolerance(trials: int) -> int:
    return int(stats.binom.ppf(0.999, trials, 0.05))


def record(section: str, **values) -> None:
    rows_out.append({"section": section, **values})
    print("  " + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in values.items()), flush=True)


# ---------------------------------------------------------------------------------------------
# Exact score distributions
# ---------------------------------------------------------------------------------------------


def gaussian_case(mu):
    draw = lambda rng, reps, n: (rng.normal(mu / 2, 1, (reps, n)), rng.normal(-mu / 2, 1, (reps, n)))  # noqa: E731
    fpr = lambda t: stats.norm.sf(t + mu / 2)  # noqa: E731
    fnr = lambda t: stats.norm.cdf(t - mu / 2)  # noqa: E731
    curve = lambda a: gaussian_tradeoff(a, mu)  # noqa: E731
    exact = np.array([gaussian_epsilon(mu, d) if mu > 0 else 0.0 for d in DELTAS])
    return draw, fpr, fnr, curve, exact, np.inf if mu > 0 else 0.0, mu


def laplace_case(eps):
    mech = ProductLaplace(np.array([[eps], [0.0]]), scale=1.0)
    score = mech.exact_score(0, 1)

    def draw(rng, reps, n):
        return (score(mech.sample(0, reps * n, seed=rng)).reshape(reps, n),
                score(mech.sample(1, reps * n, seed=rng)).reshape(reps, n))

    def fpr(t):
        return np.where(t < -eps, 1.0, np.where(t >= eps, 0.0, 0.5 * np.exp(-(np.clip(t, -eps, eps) + eps) / 2)))

    def fnr(t):
        return np.where(t < -eps, 0.0, np.where(t >= eps, 1.0, 0.5 * np.exp(-(eps - np.clip(t, -eps, eps)) / 2)))

    def curve(a):
        a = np.asarray(a, dtype=float)
        mid = np.exp(-eps) / (4 * np.maximum(a, 1e-300))
        return np.where(a < np.exp(-eps) / 2, 1 - np.exp(eps) * a, np.where(a <= 0.5, mid, np.exp(-eps) * (1 - a)))

    return draw, fpr, fnr, curve, np.maximum(eps + 2 * np.log1p(-DELTAS), 0.0), eps, None


def rr_case(eps):
    mech = RandomizedResponse(4, eps)
    score = mech.exact_score(0, 1)
    pt, po = mech.p_true, mech.p_other

    def draw(rng, reps, n):
        return (score(mech.sample(0, reps * n, seed=rng)).reshape(reps, n),
                score(mech.sample(1, reps * n, seed=rng)).reshape(reps, n))

    def fpr(t):
        return np.where(t < -eps, 1.0, np.where(t < 0, 1 - pt, np.where(t < eps, po, 0.0)))

    def fnr(t):
        return np.where(t < -eps, 0.0, np.where(t < 0, po, np.where(t < eps, 1 - pt, 1.0)))

    def curve(a):
        return np.interp(a, [0.0, po, 1 - pt, 1.0], [1.0, 1 - pt, po, 0.0])

    exact = np.log(np.maximum(pt - DELTAS, po) / po)
    return draw, fpr, fnr, curve, exact, eps, None


def bands(draw, rng, reps, n, method, k):
    test_a, test_b = draw(rng, reps, n)
    if method == "dkw":
        return tradeoff_band(test_a, test_b, alpha=0.025, method="dkw")
    dev_a, dev_b = draw(rng, reps, n)
    chosen = [development_thresholds(a, b, k, alpha=0.025) for a, b in zip(dev_a, dev_b)]
    ks = np.array([len(t) for t in chosen])
    width = ks.max()
    thr = np.array([np.r_[t, np.full(width - len(t), t[-1])] for t in chosen])
    return tradeoff_band(test_a, test_b, alpha=0.05 / (2 * ks), thresholds=thr)


def section_bands(reps: int, seed: int) -> None:
    print(f"\n== bands: {reps} bands per cell; tolerance {tolerance(reps)} ==")
    cases = [("gaussian", mu, gaussian_case(mu)) for mu in (0.0, 0.5, 1.0, 2.0, 4.0)]
    cases += [("laplace", e, laplace_case(e)) for e in (0.5, 1.5, 4.0)]
    cases += [("rr4", e, rr_case(e)) for e in (0.5, 1.5, 4.0)]
    for name, param, (draw, fpr, fnr, curve, exact, pure, mu) in cases:
        for n in (30, 100, 300):
            for method, k in (("bonferroni", 4), ("bonferroni", 1), ("dkw", None)):
                rng = np.random.default_rng([seed, n, int(10 * param), k or 0])
                band = bands(draw, rng, reps, n, method, k)
                t = band["thresholds"]
                fail = np.any((fpr(t) > band["fpr_upper"] + 1e-12) | (fnr(t) > band["fnr_upper"] + 1e-12), axis=-1)
                below = np.any(curve(band["fpr_upper"]) > band["fnr_upper"] + 1e-12, axis=-1)
                eps_lo = epsilon_curve(band["fpr_upper"], band["fnr_upper"], np.r_[0.0, DELTAS])
                mu_lo = mu_lower_bound(band["fpr_upper"], band["fnr_upper"])
                record("bands", case=name, param=param, n=n, method=method, k=k or "all", reps=reps,
                       fail=int(fail.sum()), below=int(below.sum()),
                       eps_over=int(np.sum(np.any(eps_lo[:, 1:] > exact + 1e-9, axis=1) | (eps_lo[:, 0] > pure + 1e-9))),
                       mu_over=int(np.sum(mu_lo > mu + 1e-9)) if mu is not None else -1,
                       mean_eps_1e5=float(eps_lo[:, 2].mean()), mean_mu=float(mu_lo.mean()),
                       tolerance=tolerance(reps))


# ---------------------------------------------------------------------------------------------
# Whole pipeline with a learned scorer
# ---------------------------------------------------------------------------------------------


def linear_score(dev_a, dev_b):
    """Refit the default scorer (deterministic) and return its affine decision function (w, b)."""
    x, y = pair_design(dev_a, dev_b)
    model = clone(logistic_regression()).fit(x, y)
    scaler, lr = model.steps[0][1], model.steps[-1][1]
    w = lr.coef_[0] / scaler.scale_
    return w, float(lr.intercept_[0] - np.sum(lr.coef_[0] * scaler.mean_ / scaler.scale_))


def section_pipeline(reps: int, seed: int) -> None:
    reps = min(reps, 1000)
    print(f"\n== pipeline: tradeoff_certificate with the learned scorer, {reps} runs per cell ==")
    d, sigma = 5, 1.0
    for mu in (0.0, 1.0, 2.0):
        for n in (30, 100):
            proto = np.zeros((2, d))
            proto[0, 0] = mu * sigma
            mech = IsotropicGaussian(proto, sigma=sigma)
            exact = np.array([gaussian_epsilon(mu, dd) if mu > 0 else 0.0 for dd in DELTAS])
            rng = np.random.default_rng([seed, n, int(10 * mu)])
            fail = below = mu_over = eps_over = 0
            best = []
            for _ in range(reps):
                dev_a, dev_b, test_a, test_b = (mech.sample(i, n, seed=rng) for i in (0, 1, 0, 1))
                cert = tradeoff_certificate(dev_a, dev_b, test_a, test_b, deltas=DELTAS)
                w, b = linear_score(dev_a, dev_b)
                scale = sigma * np.linalg.norm(w)
                with np.errstate(divide="ignore"):
                    cut = special.logit(np.clip(cert.thresholds, 0.0, 1.0)) - b  # score > t  <=>  w.x > cut
                fpr = stats.norm.sf((cut - w @ proto[1]) / scale)
                fnr = stats.norm.cdf((cut - w @ proto[0]) / scale)
                fail += bool(np.any((fpr > cert.fpr_upper + 1e-12) | (fnr > cert.fnr_upper + 1e-12)))
                below += bool(np.any(gaussian_tradeoff(cert.fpr_upper, mu) > cert.fnr_upper + 1e-12))
                mu_over += cert.mu_lower > mu + 1e-9
                eps_over += bool(np.any(cert.epsilon(DELTAS) > exact + 1e-9))
                best.append(cert.best_epsilon)
            record("pipeline", mu=mu, n=n, reps=reps, fail=int(fail), below=int(below), mu_over=int(mu_over),
                   eps_over=int(eps_over), mean_best_eps=float(np.mean(best)), tolerance=tolerance(reps))


# ---------------------------------------------------------------------------------------------
# Power
# ---------------------------------------------------------------------------------------------


def section_power(reps: int, seed: int) -> None:
    reps = min(reps, 500)
    print(f"\n== power: Gaussian exact scores, mean over {reps} bands ==")
    for n in (30, 100, 300):
        for mu in (0.5, 1.0, 2.0, 4.0):
            draw = gaussian_case(mu)[0]
            rng = np.random.default_rng([seed, n, int(10 * mu), 99])
            dev_a, dev_b = draw(rng, reps, n)
            test_a, test_b = draw(rng, reps, n)
            row = {}
            for k in (1, 2, 4, 8, 16):
                chosen = [development_thresholds(a, b, k, alpha=0.025) for a, b in zip(dev_a, dev_b)]
                ks = np.array([len(t) for t in chosen])
                thr = np.array([np.r_[t, np.full(ks.max() - len(t), t[-1])] for t in chosen])
                band = tradeoff_band(test_a, test_b, alpha=0.05 / (2 * ks), thresholds=thr)
                row[f"eps_k{k}"] = float(epsilon_curve(band["fpr_upper"], band["fnr_upper"], [1e-5])[:, 0].mean())
                row[f"mu_k{k}"] = float(mu_lower_bound(band["fpr_upper"], band["fnr_upper"]).mean())
                if k == 4:  # cost of the correction at the single-threshold test's threshold (first chosen)
                    single = np.array([t[0] for t in [development_thresholds(a, b, 1, alpha=0.025)
                                                       for a, b in zip(dev_a, dev_b)]])
                    one = tradeoff_band(test_a, test_b, alpha=0.025, thresholds=single[:, None])
                    same = tradeoff_band(test_a, test_b, alpha=0.05 / (2 * ks), thresholds=single[:, None])
                    e1 = epsilon_curve(one["fpr_upper"], one["fnr_upper"], [1e-5])[:, 0]
                    e4 = epsilon_curve(same["fpr_upper"], same["fnr_upper"], [1e-5])[:, 0]
                    row["cost_k4"] = float(np.mean(e1 - e4))
            band = tradeoff_band(test_a, test_b, alpha=0.025, method="dkw")
            row["eps_dkw"] = float(epsilon_curve(band["fpr_upper"], band["fnr_upper"], [1e-5])[:, 0].mean())
            row["mu_dkw"] = float(mu_lower_bound(band["fpr_upper"], band["fnr_upper"]).mean())
            record("power", n=n, mu=mu, reps=reps, **row)


# ---------------------------------------------------------------------------------------------
# MMD certificate
# ---------------------------------------------------------------------------------------------


def gaussian_mmd2(s, sigma, d, dist):
    c = (s**2 / (s**2 + 2 * sigma**2)) ** (d / 2)
    return 2 * c * (1 - np.exp(-dist**2 / (2 * (s**2 + 2 * sigma**2))))


def section_mmd(reps: int, seed: int) -> None:
    reps_v = min(reps, 2000)
    d = 5
    print(f"\n== mmd: validity ({reps_v} certificates per cell, d = {d}) ==")
    for dist in (0.0, 2.0, 4.0, 8.0):
        for n in (30, 100, 300):
            if n == 300 and reps_v > 500:
                reps_n = 500  # O(n^2) per certificate
            else:
                reps_n = reps_v
            rng = np.random.default_rng([seed, n, int(dist)])
            over_mmd = over_eps = 0
            eps = []
            exact = gaussian_epsilon(dist, 1e-5) if dist > 0 else 0.0
            for _ in range(reps_n):
                rows = [rng.normal(size=(n, d)) + np.eye(d)[0] * dist * (i % 2 == 0) for i in range(4)]
                cert = mmd_certificate(*rows, check_reuse=False)
                over_mmd += cert.mmd2_lower > gaussian_mmd2(cert.bandwidth, 1.0, d, dist) + 1e-12
                over_eps += cert.epsilon > exact + 1e-9
                eps.append(cert.epsilon)
            record("mmd_validity", separation=dist, n=n, reps=reps_n, mmd2_over=int(over_mmd), eps_over=int(over_eps),
                   positive=int(np.sum(np.array(eps) > 0)), median_eps=float(np.median(eps)), exact_eps=float(exact),
                   tolerance=tolerance(reps_n))
    reps_p = min(reps, 200)
    print(f"\n== mmd: power against the reserved-test and trade-off certificates (learned scorer, {reps_p} runs) ==")
    for dist in (1.0, 2.0, 4.0, 8.0):
        for n in (30, 100, 300):
            rng = np.random.default_rng([seed, n, int(dist), 7])
            single, band, mmd = [], [], []
            for _ in range(reps_p):
                rows = [rng.normal(size=(n, d)) + np.eye(d)[0] * dist * (i % 2 == 0) for i in range(4)]
                cert = tradeoff_certificate(*rows)
                single.append(cert.single_threshold_epsilon)
                band.append(cert.best_epsilon)
                mmd.append(mmd_certificate(*rows, check_reuse=False).epsilon)
            record("mmd_power", separation=dist, n=n, reps=reps_p, exact_eps=float(gaussian_epsilon(dist, 1e-5)),
                   reserved_median=float(np.median(single)), tradeoff_median=float(np.median(band)),
                   mmd_median=float(np.median(mmd)), mmd_positive=int(np.sum(np.array(mmd) > 0)),
                   reserved_positive=int(np.sum(np.array(single) > 0)))


# ---------------------------------------------------------------------------------------------
# Faces
# ---------------------------------------------------------------------------------------------


def section_faces(seed: int) -> None:
    for name in ("dlib_small_swap", "dlib_large_swap"):
        path = ROOT / "data" / f"{name}.csv"
        if not path.exists():
            print(f"\n== faces: {path} missing, skipped ==")
            continue
        table = load_embeddings(path)
        groups = table.groups(min_rows=5)
        dev, test, too_small = split_identities(groups, test_size=0.3, seed=seed)
        shuffled = [p for p in identity_pairs(groups, seed=seed) if p[0] in dev and p[1] in dev]
        pool = shuffled[:100]
        t0 = time.time()
        selected, _ = select_pairs(dev, pool, 5, seed=seed)
        print(f"\n== faces: {name}: {len(groups)} identities, median test rows "
              f"{np.median([len(v) for v in test.values()]):.0f}; selection {time.time() - t0:.0f} s ==")
        for label, pairs in (("top5", selected), ("pool100", pool)):
            reserved = reserved_test_pairs(dev, pairs, test_groups=test, seed=seed)
            band = tradeoff_certificate_pairs(dev, pairs, test_groups=test, seed=seed)
            dkw = tradeoff_certificate_pairs(dev, pairs, test_groups=test, seed=seed, method="dkw")
            mmd = mmd_certificate_pairs(dev, pairs, test_groups=test, seed=seed)
            frame = pd.DataFrame({
                "pair": [f"{a}|{b}" for a, b in pairs],
                "n_test": [f"{r.n[0]}/{r.n[1]}" for r in reserved],
                "reserved": [r.value for r in reserved],
                "tradeoff": [c.best_epsilon for c in band],
                "tradeoff_single_alone": [c.single_threshold_epsilon for c in band],
                "cost": [c.correction_cost for c in band],
                "mu": [c.mu_lower for c in band],
                "dkw": [c.best_epsilon for c in dkw],
                "mmd": [c.epsilon for c in mmd],
                "mmd2_u": [c.mmd2_u for c in mmd],
                "mmd_deviation": [c.deviation for c in mmd],
                "test_auc": [c.details.get("test_auc", np.nan) for c in band],
            })
            if label == "top5":
                print(frame.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
            record("faces", condition=name, pairs=label, m=len(pairs),
                   computed=int(sum(c.computed for c in band)),
                   reserved_max=float(np.nanmax(frame["reserved"])), reserved_positive=int(np.sum(frame["reserved"] > 0)),
                   tradeoff_max=float(np.nanmax(frame["tradeoff"])), tradeoff_positive=int(np.sum(frame["tradeoff"] > 0)),
                   mu_max=float(np.nanmax(frame["mu"])), dkw_max=float(np.nanmax(frame["dkw"])),
                   mmd_max=float(np.nanmax(frame["mmd"])), mmd_positive=int(np.sum(frame["mmd"] > 0)),
                   max_mmd2_u=float(np.nanmax(frame["mmd2_u"])), median_deviation=float(np.nanmedian(frame["mmd_deviation"])),
                   median_cost=float(np.nanmedian(frame["cost"])))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sections", default="bands,pipeline,power,mmd,faces")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "validity_tradeoff.csv"))
    args = parser.parse_args(argv)
    sections = args.sections.split(",")
    unknown = set(sections) - {"bands", "pipeline", "power", "mmd", "faces"}
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}")
    start = time.time()
    if "bands" in sections:
        section_bands(args.reps, args.seed)
    if "pipeline" in sections:
        section_pipeline(args.reps, args.seed)
    if "power" in sections:
        section_power(args.reps, args.seed)
    if "mmd" in sections:
        section_mmd(args.reps, args.seed)
    if "faces" in sections:
        section_faces(args.seed)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows_out).to_csv(out, index=False)
    print(f"\nwrote {out} ({len(rows_out)} rows) in {time.time() - start:.0f} s")
    bad = [r for r in rows_out if r["section"] in ("bands", "pipeline", "mmd_validity")
           and max(r.get("fail", 0), r.get("eps_over", 0), r.get("mu_over", 0), r.get("mmd2_over", 0)) > r["tolerance"]]
    if bad:
        print(f"{len(bad)} cell(s) exceed the binomial tolerance")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
