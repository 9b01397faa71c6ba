# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (epsaudit)
#     language: python
#     name: epsaudit
# ---

# %% [markdown]
# # Face case study: LFW, two encoders, three generators
#
# Paper 001 applies the four audit routes to face embeddings of FaceFusion and InstantID outputs
# (Tables 2 and 3, Figures 4 and 5; paper 000, Section 4 for the protocol and diagnostics), and
# paper 002 measures how much target identity a face swap leaves for a membership adversary
# (Section V, Table I). This chapter runs both on conditions we can build and ship: photographs of
# Labeled Faces in the Wild {cite}`huang2007lfw`, passed through a generator in image space and
# embedded by a face encoder.
#
# **Conditions.** Encoders: dlib's ResNet {cite}`king2009dlib` and SFace {cite}`zhong2021sface`,
# both 128-dimensional (the paper's ArcFace and FaceNet are 512-dimensional). Regimes: identities
# with at least 20 photographs (at most 100 kept) play VGGFace2's role (the paper: 90-100 generated
# embeddings per identity), identities with 10-19 photographs play CelebA's (26-35). Generators:
# `none` (the photograph itself: no privacy at all), `swap` (a classical landmark face swap with
# *one fixed donor image* for every target, the label being the target identity: the stand-in for
# the paper's FaceFusion protocol) and `dp-pix` (Fan's differentially private pixelisation
# {cite}`fan2018pixelization`: 6-pixel cells, Laplace noise on the cell means, $\varepsilon = 1$ for
# neighbouring images that differ in one pixel). That makes 12 conditions. The generated data, their
# provenance and every detection fallback are in `data/manifest.json` (`make data`).
#
# **Choices made here** where the papers leave room. (i) All 60 reserved-test certificates of the
# chapter (5 per condition) form one Bonferroni family, so they hold together at 95%; the paper's
# 40 used $0.05/80$ per one-sided bound, ours use $0.05/120$. (ii) The five pairs of a condition are
# the best of the first 100 by out-of-fold AUC on development rows; ties in that AUC go to the pair
# whose *test sizes* allow the larger certificate. The sizes follow from the split alone, so this
# costs no validity, and it matters because LFW identities have very different numbers of
# photographs. (iii) Membership-inference cosines are taken after subtracting the mean of the
# original photographs' unit embeddings (see the data section). (iv) Non-members come from the
# other regime, so they are disjoint from the targets by construction.

# %% tags=["parameters"]
profile = "full"  # "smoke" (CI: run_smoke on 2 x 10 photographs per regime through every stage; ~50 s on 2 cores)
# or "full" (the book: every committed condition; ~2.5 min on 2 idle cores, ~7 min on a loaded machine)
seed = 0  # pair shuffle, folds, dev/test split, permutations, non-member assignment, examples
n_jobs = 2  # joblib workers; the numbers do not depend on it

# %%
import json
import tempfile
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import Markdown, display
from myst_nb import glue

from epsaudit import diagnostics as dg
from epsaudit import face_study as fs
from epsaudit import faces
from epsaudit import paper_values, plotting
from epsaudit.audits import mmd_tv_pairs
from epsaudit.bounds import bonferroni_alpha
from epsaudit.condition import audit_condition
from epsaudit.data import EmbeddingTable, load_embeddings
from epsaudit.faces import images as faces_images
from epsaudit.pairs import identity_pairs

PROFILES = {
    # smoke: identities x photographs per regime for run_smoke; audit: pair counts; rf_pairs: random-forest
    # sensitivity pairs per condition; split_permutations: per split-half MMD test; perm_pairs x
    # permutations: inter-identity MMD permutation tests; examples: target/donor/swap rows in the figure
    "smoke": dict(smoke=(2, 10), audit=dict(pairs=1, kde_pairs=1, roc_pairs=1, selection_pool=1, certificates=1),
                  rf_pairs=1, split_permutations=200, perm_pairs=1, permutations=1000, examples=2),
    "full": dict(smoke=None, audit={}, rf_pairs=20, split_permutations=1000, perm_pairs=100, permutations=10_000,
                 examples=4),
}
if profile not in PROFILES:
    raise ValueError(f"profile must be one of {sorted(PROFILES)}, got {profile!r}")
P = PROFILES[profile]
HAVE_IMAGES = faces_images.images_available()
CONDITIONS = fs.condition_names()
ENCODER_LABEL = {"dlib": "dlib", "sface": "SFace"}
REGIME_LABEL = {"large": "LFW >=20 (VGGFace2 role)", "small": "LFW 10-19 (CelebA role)"}
plotting.set_style()
started = time.perf_counter()
timings = {}


def span(values, fmt="{:.3f}"):
    """'a' when all values agree at this precision, else 'min-max' (ranges in the prose)."""
    lo, hi = fmt.format(float(np.min(values))), fmt.format(float(np.max(values)))
    return lo if lo == hi else f"{lo}-{hi}"  # a str: glue shows it verbatim


def label(name):
    c = fs.parse_condition(name)
    return ENCODER_LABEL[c["encoder"]], REGIME_LABEL[c["regime"]], c["generator"]


def subset_table(table, n_ids, n_rows):
    """The first n_ids identities (sorted) of a table, n_rows rows each (smoke without images)."""
    keep = np.zeros(table.n_rows, bool)
    for lab in sorted(set(table.labels))[:n_ids]:
        keep[np.flatnonzero(table.labels == lab)[:n_rows]] = True
    return EmbeddingTable.from_arrays(table.labels[keep], table.embeddings[keep], table.image_ids[keep],
                                      source=f"{table.source} (first {n_ids} identities)")


t0 = time.perf_counter()
smoke_dir = None
if P["smoke"] is None:
    data_dir = Path("..") / "data"
    source_note = "the committed tables in `data/`"
elif HAVE_IMAGES:
    smoke_dir = tempfile.TemporaryDirectory(prefix="epsaudit-faces-")  # removed when the kernel exits
    data_dir = Path(smoke_dir.name)
    faces.run_smoke(data_dir, n_identities=P["smoke"][0], n_images=P["smoke"][1], n_jobs=n_jobs, donor_gallery=True)
    source_note = (f"`run_smoke`: {P['smoke'][0]} identities x {P['smoke'][1]} photographs per regime, detected, "
                   "generated, encoded and written to a temporary folder")
else:
    data_dir = Path("..") / "data"
    source_note = "the first identities of the committed tables (the LFW images are absent, so `run_smoke` cannot run)"
manifest = json.loads((data_dir / "manifest.json").read_text())
tables = {name: load_embeddings(data_dir / f"{name}.csv") for name in CONDITIONS}
donors = {e: load_embeddings(data_dir / f"{e}_donor_none.csv", min_identities=0) for e in fs.ENCODERS}
if P["smoke"] is not None and not HAVE_IMAGES:
    tables = {k: subset_table(t, *P["smoke"]) for k, t in tables.items()}
timings["data (smoke: run_smoke)" if P["smoke"] and HAVE_IMAGES else "load"] = time.perf_counter() - t0
donor_info = manifest["generation"]["donor"]
print(f"profile={profile}: {P}\nconditions from {data_dir}; images available: {HAVE_IMAGES}")

# %% [markdown]
# ## The data
#
# One row per condition: rows and identities kept by the loader (rows with a missing value or a norm
# $\le 10^{-6}$ are dropped, the others L2-normalised, as in the paper), photographs per identity,
# candidate identity pairs, rows whose encoder fell back from its face detector to the whole image,
# swaps whose target had to be found by dlib's slower CNN detector, and mean cosines of same- and
# different-identity rows before (raw) and after subtracting the mean unit embedding (centred).

# %%
rows = {}
for name in CONDITIONS:
    t, e = tables[name], manifest["files"][f"{name}.csv"]
    per_id = t.rows_per_identity()
    primary = {"dlib": "hog", "sface": "yunet"}[e["encoder"]]
    rows[label(name)] = {
        "rows": t.n_rows, "identities": len(t.identities), "rows/identity": f"{per_id.min()}-{per_id.max()}",
        "pairs": len(t.identities) * (len(t.identities) - 1) // 2,
        "detector fallbacks": sum(v for k, v in e["detection_paths"].items() if k != primary),
        "swap flags": sum(len(v) for v in e["generator_flags"].values()),
        "cos same raw": e["cosine"]["raw"]["same_mean"], "cos diff raw": e["cosine"]["raw"]["different_mean"],
        "cos same centred": e["cosine"]["centred"]["same_mean"],
        "cos diff centred": e["cosine"]["centred"]["different_mean"],
        "|mean unit vector|": e["cosine"]["norm_of_mean_unit_vector"],
    }
data_table = pd.DataFrame(rows).T.rename_axis(["encoder", "data", "generator"])
display(data_table.round(3))
print(f"Conditions read from {source_note}.")
none_rows = data_table.xs("none", level="generator")
glue("n_rows_large", int(data_table.xs(("dlib", REGIME_LABEL["large"], "none"))["rows"]), display=False)
glue("n_ids_large", int(data_table.xs(("dlib", REGIME_LABEL["large"], "none"))["identities"]), display=False)
glue("n_rows_small", int(data_table.xs(("dlib", REGIME_LABEL["small"], "none"))["rows"]), display=False)
glue("n_ids_small", int(data_table.xs(("dlib", REGIME_LABEL["small"], "none"))["identities"]), display=False)
for regime in ("large", "small"):
    k = int(data_table.xs(("dlib", REGIME_LABEL[regime], "none"))["identities"])
    glue(f"cand_pairs_{regime}", k * (k - 1) // 2, display=False)
glue("dlib_mean_norm", float(none_rows.xs("dlib")["|mean unit vector|"].mean()), display=False)
glue("sface_mean_norm", float(none_rows.xs("SFace")["|mean unit vector|"].mean()), display=False)
glue("dlib_diff_raw", float(none_rows.xs("dlib")["cos diff raw"].mean()), display=False)
glue("dlib_diff_centred", float(none_rows.xs("dlib")["cos diff centred"].mean()), display=False)
glue("sface_diff_raw", float(none_rows.xs("SFace")["cos diff raw"].mean()), display=False)
glue("dppix_fallbacks", int(data_table.xs("dp-pix", level="generator")["detector fallbacks"].sum()), display=False)
glue("dppix_rows", int(data_table.xs("dp-pix", level="generator")["rows"].sum()), display=False)
glue("donor_id", donor_info["image_id"], display=False)
glue("donor_photos", int(len(donors["dlib"].labels)), display=False)

# %% [markdown]
# The large-$n$ regime has {glue:text}`n_ids_large` identities and {glue:text}`n_rows_large` rows,
# the small-$n$ regime {glue:text}`n_ids_small` identities and {glue:text}`n_rows_small` rows (both
# per condition; the full profile reads the committed tables). With the committed tables both
# regimes have more than 500 candidate pairs ({glue:text}`cand_pairs_large` and
# {glue:text}`cand_pairs_small` in this run), so every route gets its full prefix of the shuffled
# pair list, but far fewer rows per identity than the paper's data sets: this is what limits the
# certificates below.
# Pixelised images defeat both face detectors: {glue:text}`dppix_fallbacks` of
# {glue:text}`dppix_rows` `dp-pix` rows were encoded from the whole image, as the manifest records.
#
# **dlib's vectors are far from zero-mean.** The mean of the unit-normalised original dlib embeddings
# has norm {glue:text}`dlib_mean_norm:.2f` (SFace: {glue:text}`sface_mean_norm:.2f`), so two
# photographs of *different* people have raw cosine {glue:text}`dlib_diff_raw:.2f` on average
# (SFace {glue:text}`sface_diff_raw:.2f`); after subtracting the mean it is
# {glue:text}`dlib_diff_centred:.3f`. The loader L2-normalises the raw vectors, as the paper's
# protocol does, and for the audit routes this is harmless: all unit vectors lie in a narrow cap
# around one direction, but every route is unchanged by a common offset (GaussMech uses mean
# differences over residual scales, MMD-TV kernel distances with a median-heuristic bandwidth,
# ROC-HT a logistic regression with an intercept, KDE-LR one coordinate at a time) and by a common
# scale. Cosine scores are neither: a membership adversary thresholding raw dlib cosines works on
# a compressed, offset scale, so the membership section centres both encoders' embeddings on the
# mean of the original photographs (an adversary can estimate it from any public faces) and also
# reports the raw-cosine AUC.

# %% [markdown]
# ## The audits
#
# Every condition is audited by `audit_condition`, the function behind `epsaudit audit`, with the
# paper's protocol: all identity pairs shuffled once with the seed; GaussMech and MMD-TV on the first
# 500, KDE-LR on the first 100, out-of-fold ROC-HT on the first 200; 5 reserved-test certificates
# per condition chosen on development rows among the first 100 pairs (70% of each identity's rows;
# the other 30% are the untouched test rows). The same numbers come from the command line:

# %%
settings = fs.audit_settings(len(CONDITIONS), seed=seed, **P["audit"])
print("epsaudit audit data/<condition>.csv " + " ".join(settings.cli_args()))
audits, audit_seconds = {}, {}
for name in CONDITIONS:
    t0 = time.perf_counter()
    audits[name] = audit_condition(tables[name], settings, n_jobs=n_jobs)
    audit_seconds[name] = time.perf_counter() - t0
timings["audits (12 conditions)"] = sum(audit_seconds.values())
print(f"audits: {timings['audits (12 conditions)']:.0f} s ({np.mean(list(audit_seconds.values())):.1f} s per condition)")

# %% [markdown]
# ## Table 2: the four routes on face embeddings
#
# Medians over the same first 100 pairs of each condition (GaussMech at $\delta = 10^{-5}$, KDE-LR at
# $\alpha = 0$ and $0.01$, the MMD-TV sample value), the number of those 100 pairs whose out-of-fold
# ROC-HT value is $+\infty$, and the median out-of-fold AUC; the paper's six conditions below ours.
# None of these numbers is a confidence bound.

# %%
t2 = pd.DataFrame({label(n): fs.table2_row(audits[n]) for n in CONDITIONS}).T.rename_axis(["encoder", "data", "generator"])
cols2 = ["pairs", "GaussMech", "KDE-LR a=0", "KDE-LR a=.01", "MMD-TV", "ROC-HT +inf", "ROC AUC"]
paper2 = paper_values.TABLE2.assign(pairs=paper_values.TABLE2_PAIRS).rename_axis(["encoder", "data", "generator"])
side2 = pd.concat({"ours: LFW, 128-D": t2[cols2], "paper 001: 512-D": paper2[cols2]}, names=["source"])
display(side2.astype(float).round(3))
t2 = t2.astype({c: float for c in t2.columns if c != "pairs"})
kde_ratio = t2["KDE-LR a=0"] / t2["KDE-LR a=.01"]
dim = tables[CONDITIONS[0]].dim
for col, key, fmt in (("GaussMech", "gm", "{:.1f}"), ("KDE-LR a=0", "kde0", "{:,.0f}"), ("KDE-LR a=.01", "kde1", "{:,.0f}"),
                      ("MMD-TV", "mmd", "{:.3f}"), ("ROC-HT +inf", "inf", "{:.0f}"), ("ROC AUC", "auc", "{:.3f}"),
                      ("exact corners", "corners", "{:.0f}")):
    for part, gen in (("", None), ("_none", "none"), ("_swap", "swap"), ("_dp", "dp-pix")):
        rows_ = t2 if gen is None else t2.xs(gen, level="generator")
        glue(f"t2_{key}{part}", span(rows_[col], fmt), display=False)
glue("t2_pairs", int(t2["pairs"].min()), display=False)
glue("dim", int(dim), display=False)
glue("t2_kde1_per_coord", float((t2["KDE-LR a=.01"] / dim).median()), display=False)
glue("paper_kde1_per_coord", float((paper_values.TABLE2["KDE-LR a=.01"] / 512).median()), display=False)
glue("t2_gm_scaled", float(t2["GaussMech"].xs("swap", level="generator").median() * np.sqrt(512 / dim)), display=False)
glue("t2_mmd500_max_none", float(t2.xs("none", level="generator")["MMD-TV max (500)"].max()), display=False)
glue("t2_mmd500_max_count", int((t2["MMD-TV max (500)"] > 1).sum()), display=False)

# %% [markdown]
# **What carries over.** Every conclusion the paper draws from its Table 2 holds on LFW. The two
# diagnostics are large everywhere, including for `dp-pix`, a mechanism with a proven pure-DP
# guarantee ($\varepsilon = 1$ per changed pixel): GaussMech medians span {glue:text}`t2_gm`
# (paper 44.2-93.1) and KDE-LR {glue:text}`t2_kde0` at $\alpha = 0$ and {glue:text}`t2_kde1` at
# $\alpha = 0.01$. The out-of-fold ROC conversion is $+\infty$ on {glue:text}`t2_inf_none` of
# {glue:text}`t2_pairs` pairs for the original photographs and on {glue:text}`t2_inf_swap` for the
# swaps, whose median AUC is {glue:text}`t2_auc_swap` (paper: 100 of 100, AUC 0.937-1.000): a swap
# with one fixed donor leaves the target identity separable, as FaceFusion does in the paper. The
# median MMD-TV sample value stays below one: {glue:text}`t2_mmd` (paper 0.217-0.475).
#
# **What does not.** The magnitudes are not comparable one to one. The embeddings have
# {glue:text}`dim` coordinates, not 512: KDE-LR sums one term per coordinate (per coordinate our
# median at $\alpha = 0.01$ is {glue:text}`t2_kde1_per_coord:.2f` against the paper's
# {glue:text}`paper_kde1_per_coord:.2f`), and GaussMech grows like $\sqrt{d}$ for a given geometry
# (scaled to 512 coordinates the swap conditions' median would be {glue:text}`t2_gm_scaled:.0f`).
# MMD-TV is higher than the paper's for `none` and `swap` ({glue:text}`t2_mmd_none` and
# {glue:text}`t2_mmd_swap`): identities lie further apart relative to their spread here, with real
# photographs instead of generated faces and other encoders, so the comparison says nothing about
# the generators. It is lower for `dp-pix` ({glue:text}`t2_mmd_dp`), where the out-of-fold AUC falls
# to {glue:text}`t2_auc_dp` and yet {glue:text}`t2_inf_dp` of the 100 conversions are still
# $+\infty$: a single extreme out-of-fold score suffices, as at the null of chapter 1. The exact
# corner $(\mathrm{FPR}, \mathrm{TPR}) = (0, 1)$, a complete out-of-fold separation, is reached by
# {glue:text}`t2_corners_none` of the 100 pairs for `none`, {glue:text}`t2_corners_swap` for `swap`
# and {glue:text}`t2_corners_dp` for `dp-pix`.
#
# GaussMech and MMD-TV were also run on the first 500 pairs (the paper's prefix for these two
# routes); their medians barely move. MMD-TV's maximum over the 500, the number paper 000 reports
# for its bandwidth sweep, is in the last column: it exceeds one in {glue:text}`t2_mmd500_max_count`
# conditions (up to {glue:text}`t2_mmd500_max_none:.3f` for original photographs), where the paper
# notes that every value it reports is below one.

# %%
display(t2[["pairs (500)", "GaussMech", "GaussMech (500)", "MMD-TV", "MMD-TV (500)", "MMD-TV max (500)"]].round(3))

# %% [markdown]
# ## Table 3: certificates on untouched test rows
#
# Five pairs per condition, chosen on development rows only, certified on the reserved 30%. All
# 60 bounds of the chapter hold together with at least 95% confidence under the iid row model: each
# one-sided Clopper–Pearson bound {cite}`clopper1934binomial` is at $0.05/120 =$
# {glue:text}`alpha60:.2e` (the paper: 40 bounds, $0.05/80$). A test of $n$ rows per identity with
# zero errors certifies at most the cap below; a bound is "censored" when it reaches its cap.

# %%
family = settings.family_size
alpha_family = bonferroni_alpha(family)
glue("alpha60", alpha_family, display=False)
glue("family", int(family), display=False)
caps = pd.DataFrame({f"{family} certificates (ours)": fs.cap_table(range(3, 31), family),
                     "40 certificates (paper)": fs.cap_table(range(3, 31), 40)}).rename_axis("test rows per identity")
display(caps.loc[[3, 5, 6, 9, 10, 11, 12, 15, 20, 25, 30]].T.round(3))
first_positive = int(caps.index[caps.iloc[:, 0] > 0][0])
glue("first_positive_n", first_positive, display=False)
glue("first_above_one_n", int(caps.index[caps.iloc[:, 0] > 1][0]) if (caps.iloc[:, 0] > 1).any() else 0, display=False)
glue("cap30_ours", float(caps.iloc[:, 0].loc[30]), display=False)
glue("cap30_paper", float(caps.iloc[:, 1].loc[30]), display=False)

t3 = pd.DataFrame({label(n): fs.table3_row(audits[n]) for n in CONDITIONS}).T.rename_axis(["encoder", "data", "generator"])
cols3 = ["n/class", "AUC", "Pos.", ">1", "eps_LB"]
paper3 = paper_values.TABLE3.rename_axis(["encoder", "data", "generator"])
side3 = pd.concat({"ours: LFW, 128-D": t3[cols3 + ["cap", "censored"]], "paper 001: 512-D": paper3[cols3]}, names=["source"])
display(side3.astype(object).where(side3.notna(), "n/a"))
large3 = t3.xs(REGIME_LABEL["large"], level="data", drop_level=False)
small3 = t3.xs(REGIME_LABEL["small"], level="data", drop_level=False)
certs = pd.concat([a.summary[a.summary.route == "roc_reserved"].assign(condition=n) for n, a in audits.items()])
glue("n_certs", int(len(certs)), display=False)
glue("pos_large", int(large3["Pos."].sum()), display=False)
glue("above1_large", int(large3[">1"].sum()), display=False)
glue("certs_large", int(large3["certificates"].sum()), display=False)
glue("pos_small", int(small3["Pos."].sum()), display=False)
glue("certs_small", int(small3["certificates"].sum()), display=False)
glue("cert_max", float(certs["value"].max()), display=False)
glue("n_test_small_max", int(certs[certs.condition.str.contains("_small_")][["n_test_a", "n_test_b"]].max().max()), display=False)
large_tests = certs[certs.condition.str.contains("_large_")][["n_test_a", "n_test_b"]]
glue("n_test_large_min", int(large_tests.min().min()), display=False)
glue("n_test_large_max", int(large_tests.max().max()), display=False)
large_sizes = tables["dlib_large_none"].rows_per_identity()
glue("large_q1", int(large_sizes.quantile(0.25)), display=False)
glue("large_q3", int(large_sizes.quantile(0.75)), display=False)
glue("large_cap_rows", int(large_sizes.max()), display=False)
glue("censored_total", int(t3["censored"].sum()), display=False)
pos_dp, n_dp = int(t3.xs("dp-pix", level="generator")["Pos."].sum()), int(t3.xs("dp-pix", level="generator")["certificates"].sum())
glue("dp_cert_phrase", f"{pos_dp} of {n_dp} certificates {'is' if pos_dp == 1 else 'are'} positive", display=False)

# %% [markdown]
# With {glue:text}`family` certificates at 95%, a zero-error test needs {glue:text}`first_positive_n`
# rows per identity to certify anything and {glue:text}`first_above_one_n` to certify more than
# one; at 30 rows the cap is {glue:text}`cap30_ours:.3f` (paper: {glue:text}`cap30_paper:.3f` with 40
# certificates).
#
# **What carries over.** The paper's sample-size story reappears exactly. In the small-$n$ regime
# (the CelebA role) the test parts have at most {glue:text}`n_test_small_max` rows per identity, so
# {glue:text}`pos_small` of {glue:text}`certs_small` certificates are positive, even for the pairs that
# separate perfectly on development data, just as the paper's CelebA conditions certify 0 of 5. In
# the large-$n$ regime {glue:text}`pos_large` of {glue:text}`certs_large` bounds are positive and
# {glue:text}`above1_large` exceed one; the largest of all {glue:text}`n_certs` is
# {glue:text}`cert_max:.3f`. {glue:text}`censored_total` certificates made no test error at all and
# sit at their cap: there the test size, not the generator, sets the number, as in the paper.
#
# **What does not.** The paper's VGGFace2 conditions have 29-30 test rows for every pair, and 15 of
# their 20 bounds exceed one. LFW's large regime keeps at most {glue:text}`large_cap_rows`
# photographs of an identity and half of its identities have
# {glue:text}`large_q1`-{glue:text}`large_q3`, so the selected pairs have
# {glue:text}`n_test_large_min`-{glue:text}`n_test_large_max` test rows and several caps are below
# one; the size-aware tie-break is what gives them the largest tests available. For `dp-pix`,
# {glue:text}`dp_cert_phrase`: its guarantee is $\varepsilon = 1$ for images differing in *one
# pixel*, whereas two identities differ in every pixel, so a separable pair and a positive
# certificate contradict nothing, and neither would a certificate above one.

# %% [markdown]
# ## Diagnostics (paper 000, Section 4)
#
# ### Gaussianity of the residuals (GaussMech)
#
# Shapiro–Wilk tests {cite}`shapiro1965normality` per coordinate of the pooled within-identity
# residuals (every row of a condition; the paper draws 5,000 of about 40,000), counting rejections
# at $p < 10^{-3}$, and Q-Q plots of the four least Gaussian coordinates of the condition with the
# most rejections.

# %%
t0 = time.perf_counter()
groups = {n: tables[n].groups(min_rows=5) for n in CONDITIONS}
shapiro = {n: dg.shapiro_wilk(groups[n], seed=seed) for n in CONDITIONS}
sw = pd.DataFrame({label(n): {"residual rows": sum(len(g) for g in groups[n].values()),
                              "rejections (p<1e-3)": int((shapiro[n].p_value < 1e-3).sum()),
                              "coordinates": dim,
                              "min W": float(shapiro[n].W.min())} for n in CONDITIONS}).T
sw["fraction"] = sw["rejections (p<1e-3)"] / sw["coordinates"]
sw.index.names = ["encoder", "data", "generator"]
display(sw.round(3))
worst = max(CONDITIONS, key=lambda n: (shapiro[n].p_value < 1e-3).sum())
fig = plotting.faces.qq_panels(dg.pooled_residuals(groups[worst]), shapiro[worst]["coordinate"].head(4),
                         title=f"Least Gaussian residual coordinates, {' / '.join(label(worst))}")
plt.show()
timings["Shapiro-Wilk"] = time.perf_counter() - t0
D = paper_values.DIAGNOSTICS
glue("sw_min", int(sw["rejections (p<1e-3)"].min()), display=False)
glue("sw_max", int(sw["rejections (p<1e-3)"].max()), display=False)
glue("sw_frac_max", float(sw["fraction"].max()), display=False)
glue("sw_paper_frac_min", D["shapiro_rejections_min"] / D["shapiro_dimensions"], display=False)
glue("sw_worst", " / ".join(label(worst)), display=False)
glue("sw_rows_max", int(sw["residual rows"].max()), display=False)

# %% [markdown]
# Gaussianity is rejected on {glue:text}`sw_min`-{glue:text}`sw_max` of {glue:text}`dim` coordinates
# (at most {glue:text}`sw_frac_max:.0%`), against 296-512 of 512 in the paper (at least
# {glue:text}`sw_paper_frac_min:.0%`), most often for dlib and for swaps. Part of the gap is power:
# our pooled samples have at most {glue:text}`sw_rows_max:,` rows, the paper's 5,000. The departures
# sit in the tails: in the worst condition ({glue:text}`sw_worst`) the four least Gaussian
# coordinates follow the Gaussian line in the middle and bend away in one tail (skew) or both. So
# GaussMech's Gaussian model is less visibly wrong here than in the paper; its other assumptions
# (isotropic noise, a known sensitivity) are not what this tests and remain unmet, so it stays a
# diagnostic.
#
# ### KDE-LR's smoothing weight, MMD-TV's bandwidth and the classifier witness

# %%
t0 = time.perf_counter()
pair_lists = {n: identity_pairs(groups[n], seed=seed) for n in CONDITIONS}
# the paper's scales 0.5-2; where the maximum peaks at an edge scale, up to two more scales beyond it
sweep = {n: dg.bandwidth_sweep(groups[n], pair_lists[n][:settings.pairs], widen=2, n_jobs=n_jobs) for n in CONDITIONS}
paper_scales = {n: sweep[n][~sweep[n]["added"]] for n in CONDITIONS}
sweep_max = pd.DataFrame({label(n): paper_scales[n].set_index("bandwidth_scale")["max"] for n in CONDITIONS}).T
sweep_max.columns = [f"{s:g} x median" for s in sweep_max.columns]
paper_sweep = pd.DataFrame([D["bandwidth_max_facefusion"], D["bandwidth_max_instantid"]], columns=sweep_max.columns,
                           index=pd.MultiIndex.from_tuples([("ArcFace", "VGGFace2", "FF"), ("ArcFace", "VGGFace2", "ID")]))
side_sweep = pd.concat({"ours": sweep_max, "paper 000": paper_sweep}, names=["source", "encoder", "data", "generator"])
display(side_sweep.round(3))
# edge status of the peak: on the paper's scales, and after widening
sweep_rec = {n: (dg.bandwidth_sweep_record(paper_scales[n]), dg.bandwidth_sweep_record(sweep[n])) for n in CONDITIONS}
sweep_edges = pd.DataFrame({label(n): {"peak (paper's scales)": a.chosen, "edge (paper's scales)": a.edge,
                                       "scales added": ", ".join(f"{s:g}" for s in b.grid if s not in a.grid) or "none",
                                       "peak after widening": b.chosen, "edge after widening": b.edge,
                                       "max at peak": round(b.best_score, 3)}
                            for n, (a, b) in sweep_rec.items()}).T
sweep_edges.index.names = ["encoder", "data", "generator"]
display(sweep_edges)
witness = pd.DataFrame({label(n): dg.witness_gap(audits[n].per_pair) for n in CONDITIONS}).T
witness["KDE-LR ratio a=0 / a=.01"] = kde_ratio
witness.index.names = ["encoder", "data", "generator"]
# "n/a": MMD is zero on every pair of the condition, so the ratio is undefined
display(witness[["pairs", "mean_tv_witness", "mean_half_mmd", "mean_ratio", "KDE-LR ratio a=0 / a=.01"]]
        .astype(float).round(3).astype(object).where(lambda f: f.notna(), "n/a"))
timings["bandwidth sweep and witness"] = time.perf_counter() - t0
best_scale = sweep_max.idxmax(axis=1)
glue("sweep_best_075", int((best_scale == "0.75 x median").sum()), display=False)
glue("sweep_best_05", int((best_scale == "0.5 x median").sum()), display=False)
glue("sweep_min_positive", float(sweep_max.min().min()), display=False)
edge_before = sweep_edges[sweep_edges["edge (paper's scales)"] != "interior"]
glue("sweep_n_edge", len(edge_before), display=False)
glue("sweep_n_edge_fixed", int((edge_before["edge after widening"] == "interior").sum()), display=False)
still = sweep_edges[sweep_edges["edge after widening"] != "interior"]
glue("sweep_still_phrase", "in none of them" if still.empty else "in " + "; ".join(
    f"{' / '.join(map(str, idx))} (peak at {r['peak after widening']:g}, the {r['edge after widening']} edge)"
    for idx, r in still.iterrows()), display=False)
glue("kde_ratio_min", float(kde_ratio.min()), display=False)
glue("kde_ratio_max", float(kde_ratio.max()), display=False)
glue("witness_ratio_min", float(witness["mean_ratio"].min()), display=False)
glue("witness_ratio_max", float(witness["mean_ratio"].max()), display=False)
glue("witness_tv_min", float(witness["mean_tv_witness"].min()), display=False)
glue("witness_tv_max", float(witness["mean_tv_witness"].max()), display=False)
glue("n_conditions", len(CONDITIONS), display=False)

# %% [markdown]
# **KDE-LR.** The ratio of the $\alpha = 0$ to the $\alpha = 0.01$ median is
# {glue:text}`kde_ratio_min:.1f`-{glue:text}`kde_ratio_max:.1f` across conditions (paper 4.8-6.4):
# the smoothing weight, which nothing in the construction pins down, changes the "epsilon" four- to
# fivefold here and five- to sixfold there. The ratio is lowest for `dp-pix`, whose pixelised
# inputs leave the marginals closer together.
#
# **MMD-TV bandwidth.** The maximum over the 500 pairs peaks at $0.75\,\sigma^\star$ in
# {glue:text}`sweep_best_075` of the {glue:text}`n_conditions` conditions and at $0.5\,\sigma^\star$ in
# {glue:text}`sweep_best_05` (the paper: $0.75\,\sigma^\star$ in both of its), and stays positive
# throughout (smallest maximum {glue:text}`sweep_min_positive:.3f`). A peak at $0.5\,\sigma^\star$ sits at
# the edge of the swept scales, where the sweep has not found the peak: a smaller bandwidth might
# give a larger value. The second table records the edge status of every peak
# (`epsaudit.diagnostics.bandwidth_sweep_record`) and, where the peak sat at an edge, adds up to two
# scales beyond it (halving, or doubling, the outermost one). {glue:text}`sweep_n_edge` conditions
# peaked at an edge of the paper's scales; after widening {glue:text}`sweep_n_edge_fixed` of them peak
# inside the swept range, and the peak is still at an edge {glue:text}`sweep_still_phrase`. Either way
# the value depends on a bandwidth chosen by a heuristic, one more reason not to read the sample
# maximum as a certificate.
#
# **Classifier witness.** On the pairs both routes audited, the out-of-fold witness
# $\max_t[\mathrm{TPR}(t) - \mathrm{FPR}(t)]$, itself a lower bound on total variation, averages
# {glue:text}`witness_tv_min:.3f`-{glue:text}`witness_tv_max:.3f` (paper 0.735-0.992) and is
# {glue:text}`witness_ratio_min:.1f`-{glue:text}`witness_ratio_max:.1f` times $\mathrm{MMD}/2$ on
# average (paper 4.39-7.52). Our ratios are lower where MMD is larger; the direction is the same: the
# TV bound that MMD-TV inverts is far from the separation a linear classifier finds.

# %% [markdown]
# ### Classifier sensitivity, split-half controls and permutation tests
#
# A random forest (100 trees) against the logistic regression on identical folds, on the first
# {glue:text}`rf_pairs` pairs of each condition (the paper: 200; a forest costs about
# {glue:text}`rf_per_pair:.1f` s per pair here, so the full prefix would take
# {glue:text}`rf_full_minutes:.0f` minutes). Same-identity split-half controls: every
# identity with at least 10 rows is split at random into two halves treated as two "identities",
# where the null holds by construction; MMD permutation tests (at 0.05, with
# {glue:text}`split_perm:,` permutations) and the out-of-fold ROC on each. Inter-identity MMD
# permutation tests {cite}`phipson2010permutation` with {glue:text}`perm_b:,` permutations on the
# first {glue:text}`perm_pairs` pairs of each condition, as in the paper.

# %%
t0 = time.perf_counter()
rf = {n: dg.classifier_sensitivity(groups[n], pair_lists[n][:P["rf_pairs"]], seed=seed, n_jobs=n_jobs) for n in CONDITIONS}
timings["random forest"] = time.perf_counter() - t0
t0 = time.perf_counter()
split = {n: dg.split_half_controls(groups[n], permutations=P["split_permutations"], seed=seed, n_jobs=n_jobs)
         for n in CONDITIONS}
timings["split-half controls"] = time.perf_counter() - t0
t0 = time.perf_counter()
perm = {n: np.array([r.details["p_value"] for r in mmd_tv_pairs(groups[n], pair_lists[n][:P["perm_pairs"]],
                                                                  permutations=P["permutations"], seed=seed, n_jobs=n_jobs)])
        for n in CONDITIONS}
timings["permutation tests"] = time.perf_counter() - t0
p_floor = 1 / (P["permutations"] + 1)
checks = pd.DataFrame({label(n): {
    "RF pairs": len(rf[n]), "AUC logistic": rf[n]["auc_logistic"].mean(), "AUC forest": rf[n]["auc_alternative"].mean(),
    "logistic - forest": rf[n]["difference"].mean(),
    "split-half controls": split[n]["controls"], "split MMD rejections": split[n]["mmd_rejections"],
    "split mean MMD2_u": split[n]["mean_mmd2_u"], "split mean AUC": split[n]["mean_auc"],
    "split exact corners": split[n]["exact_corners"], "split +inf": split[n]["infinite_roc"],
    "perm tests": len(perm[n]), "perm reject 0.05": int((perm[n] <= 0.05).sum()),
    "perm at floor": int(np.isclose(perm[n], p_floor).sum()),
} for n in CONDITIONS}).T
checks.index.names = ["encoder", "data", "generator"]
display(checks.astype(float).round(3))
glue("rf_pairs", int(P["rf_pairs"]), display=False)
rf_per_pair = timings["random forest"] / sum(len(v) for v in rf.values())
glue("rf_per_pair", rf_per_pair, display=False)
glue("rf_full_minutes", rf_per_pair * settings.roc_pairs * len(CONDITIONS) / 60, display=False)
glue("split_perm", int(P["split_permutations"]), display=False)
glue("perm_b", int(P["permutations"]), display=False)
glue("perm_pairs", int(P["perm_pairs"]), display=False)
glue("rf_diff_min", float(checks["logistic - forest"].min()), display=False)
glue("rf_diff_max", float(checks["logistic - forest"].max()), display=False)
rf_dp = checks.xs("dp-pix", level="generator")["logistic - forest"]
glue("rf_diff_dp_min", float(rf_dp.min()), display=False)
glue("rf_diff_dp_max", float(rf_dp.max()), display=False)
rf_rest = checks.drop("dp-pix", level="generator")["logistic - forest"]
glue("rf_diff_rest_max_abs", float(rf_rest.abs().max()), display=False)
glue("split_controls", int(checks["split-half controls"].sum()), display=False)
glue("split_rejections", int(checks["split MMD rejections"].sum()), display=False)
glue("split_rate", float(checks["split MMD rejections"].sum() / checks["split-half controls"].sum()), display=False)
glue("split_auc_min", float(checks["split mean AUC"].min()), display=False)
glue("split_auc_max", float(checks["split mean AUC"].max()), display=False)
glue("split_corners", int(checks["split exact corners"].sum()), display=False)
glue("split_inf", int(checks["split +inf"].sum()), display=False)
glue("split_worst_rate", float((checks["split MMD rejections"] / checks["split-half controls"]).max()), display=False)
split_rate_by = checks["split MMD rejections"] / checks["split-half controls"]
glue("split_worst", " / ".join(split_rate_by.idxmax()), display=False)
glue("perm_tests", int(checks["perm tests"].sum()), display=False)
glue("perm_reject", int(checks["perm reject 0.05"].sum()), display=False)
glue("perm_floor", int(checks["perm at floor"].sum()), display=False)
perm_dp = checks.xs("dp-pix", level="generator")
glue("perm_reject_dp", int(perm_dp["perm reject 0.05"].sum()), display=False)
glue("perm_tests_dp", int(perm_dp["perm tests"].sum()), display=False)
glue("p_floor", p_floor, display=False)
glue("perm_needed", int(np.ceil(checks["perm tests"].sum() / 0.05)), display=False)

# %% [markdown]
# **Classifier sensitivity.** Outside `dp-pix` the two classifiers' mean AUCs agree to within
# {glue:text}`rf_diff_rest_max_abs:.3f` (paper: within 0.013 everywhere, difference -0.002 to
# +0.013): both separate nearly every pair completely. On `dp-pix`, where neither does, they
# disagree in both directions, from {glue:text}`rf_diff_dp_min:.3f` to
# {glue:text}`rf_diff_dp_max:.3f` (logistic minus forest; the forest is better for dlib, the
# logistic regression for SFace): once the separation is partial, which scorer is chosen changes the
# out-of-fold ROC, and hence any epsilon read from it, by more than the paper's check would suggest.
# Neither is a certificate; with {glue:text}`rf_pairs` pairs per condition these means are also
# noisier than the paper's over 200.
#
# **Split-half controls.** Same-identity halves are rejected by the MMD test in
# {glue:text}`split_rejections` of {glue:text}`split_controls` controls
# ({glue:text}`split_rate:.1%`; the paper 16 of 400 at 0.05), their out-of-fold AUC averages
# {glue:text}`split_auc_min:.3f`-{glue:text}`split_auc_max:.3f` per condition, below rather than at
# 0.5 as is usual for cross-validated AUC at the null with small classes, and
# {glue:text}`split_corners` of them reach the exact corner (the paper: none), while
# {glue:text}`split_inf` give a $+\infty$ out-of-fold value: the same divergence as in Table 2
# without any signal. The most frequent rejections are in {glue:text}`split_worst`
# ({glue:text}`split_worst_rate:.0%`).
#
# **Permutation tests.** {glue:text}`perm_reject` of {glue:text}`perm_tests` inter-identity tests
# reject at 0.05 (the paper 799 of 800), {glue:text}`perm_floor` with the smallest attainable
# $p = 1/(B + 1) =$ {glue:text}`p_floor:.1e`; for `dp-pix`, {glue:text}`perm_reject_dp` of
# {glue:text}`perm_tests_dp`. With {glue:text}`perm_tests:,` tests a Bonferroni level of
# $0.05/${glue:text}`perm_tests:,` lies below $1/(B+1)$, so a family-wise claim over all of them would
# need at least {glue:text}`perm_needed:,` permutations per test; within one condition
# ($0.05/${glue:text}`perm_pairs`) the floor suffices.

# %% [markdown]
# ## Membership inference on the swaps (paper 002)
#
# For each encoder, every swap of the large-$n$ regime is scored against three galleries by the
# cosine similarity of its embedding to each photograph, aggregated by the median (and the max): its
# target's other original photographs (the swap's own source photograph excluded), the photographs
# of one non-member (an identity of the small-$n$ regime, assigned by a seeded permutation, cycled),
# and the donor's photographs. The adversary flags a swap as "this target is in the release" when the
# target score exceeds a threshold; targets are the positives and non-members the negatives, so the
# ROC, its AUC and the TPR at FPR $\le 1\%$ and $\le 0.1\%$ measure membership inference
# {cite}`carlini2022membership`; closed-set identification ranks the true target among all target
# identities. The max aggregate favours the larger gallery, and target galleries here are larger
# ({glue:text}`gal_t_min`-{glue:text}`gal_t_max` photographs) than non-member galleries
# ({glue:text}`gal_n_min`-{glue:text}`gal_n_max`), so the table repeats everything with every
# gallery cut to {glue:text}`matched` photographs.
#
# **The donor gallery has one photograph.** The swap's donor, {glue:text}`donor_id`, was drawn from
# identities with at most 9 photographs (outside both regimes), and this identity has
# {glue:text}`donor_photos` in LFW. Its gallery (`data/<encoder>_donor_none.csv`) is therefore the
# donor image itself, the very image swapped in, not "other photographs of the donor" as in paper
# 002, and the donor scores below are an upper reference for donor transfer, not a like-for-like
# comparison.

# %%
t0 = time.perf_counter()
MATCHED = 10
mia, mia_matched = {}, {}
for enc in fs.ENCODERS:
    args = (tables[f"{enc}_large_swap"], tables[f"{enc}_large_none"], tables[f"{enc}_small_none"], donors[enc].embeddings)
    mia[enc] = fs.swap_membership(*args, seed=seed)
    mia_matched[enc] = fs.swap_membership(*args, seed=seed, gallery_size=MATCHED)
timings["membership inference"] = time.perf_counter() - t0
glue("matched", MATCHED, display=False)
sizes = pd.concat([mia[e].scores for e in fs.ENCODERS])
for col, key in (("n_target", "t"), ("n_non_member", "n")):
    glue(f"gal_{key}_min", int(sizes[col].min()), display=False)
    glue(f"gal_{key}_max", int(sizes[col].max()), display=False)
parts = {}
for enc in fs.ENCODERS:
    for galleries, m in (("full", mia[enc]), (f"{MATCHED} per gallery", mia_matched[enc])):
        s = m.summary()
        s["AUC (raw cosines)"] = [m.metrics(a, raw=True)["auc"] if a == "median" else np.nan for a in s.index]
        parts[(ENCODER_LABEL[enc], galleries)] = s
mia_table = pd.concat(parts, names=["encoder", "galleries"])
pct = ["TPR @ FPR<=1%", "TPR @ FPR<=0.1%", "max balanced accuracy"]
ours_i = (mia_table[pct] * 100).rename(columns=lambda c: c + " (%)")
# "n/a": raw-cosine AUC is reported for median aggregation only
display(pd.concat([ours_i, mia_table[["AUC", "AUC (raw cosines)", "CMC rank-1", "CMC rank-5"]]], axis=1)
        .astype(float).round(3).astype(object).where(lambda f: f.notna(), "n/a"))
paper_i = paper_values.MIA_TABLE_I_FACEFUSION.T
paper_i.index.names = ["recognizer", "aggregate"]
print("Paper 002, Table I, FaceFusion (VGGFace2, 947 swaps):")
display(paper_i)
scores_t = pd.concat({ENCODER_LABEL[e]: mia[e].summary()[["mean target", "mean non-member", "mean donor", "donor > target"]]
                      .assign(**{"mean genuine (before the swap)": mia[e].scores["genuine_median"].mean()})
                      for e in fs.ENCODERS}, names=["encoder"])
display(scores_t.astype(float).round(3))

# %%
panels = {}
for enc in fs.ENCODERS:
    m, s = mia[enc], mia[enc].scores
    panels[f"{ENCODER_LABEL[enc]}, swap, {REGIME_LABEL['large']}"] = {
        "scores": s, "auc": {a: m.metrics(a)["auc"] for a in ("median", "max")},
        "roc": {a: fs.roc_curve_points(s[f"target_{a}"], s[f"non_member_{a}"]) for a in ("median", "max")}}
fig = plotting.faces.membership_figure(panels)
plt.show()
M = paper_values.MIA
for enc in fs.ENCODERS:
    s = parts[(ENCODER_LABEL[enc], "full")]
    sm = parts[(ENCODER_LABEL[enc], f"{MATCHED} per gallery")]
    sc = scores_t.loc[ENCODER_LABEL[enc]]
    for agg in ("median", "max"):
        glue(f"mia_{enc}_auc_{agg}", float(s.loc[agg, "AUC"]), display=False)
        glue(f"mia_{enc}_tpr1_{agg}", float(s.loc[agg, "TPR @ FPR<=1%"]), display=False)
        glue(f"mia_{enc}_tpr01_{agg}", float(s.loc[agg, "TPR @ FPR<=0.1%"]), display=False)
        glue(f"mia_{enc}_r1_{agg}", float(s.loc[agg, "CMC rank-1"]), display=False)
        glue(f"mia_{enc}_r5_{agg}", float(s.loc[agg, "CMC rank-5"]), display=False)
        glue(f"mia_{enc}_matched_auc_{agg}", float(sm.loc[agg, "AUC"]), display=False)
        glue(f"mia_{enc}_matched_tpr01_{agg}", float(sm.loc[agg, "TPR @ FPR<=0.1%"]), display=False)
    glue(f"mia_{enc}_raw_auc", float(s.loc["median", "AUC (raw cosines)"]), display=False)
    glue(f"mia_{enc}_genuine", float(sc.loc["median", "mean genuine (before the swap)"]), display=False)
    glue(f"mia_{enc}_target", float(sc.loc["median", "mean target"]), display=False)
    glue(f"mia_{enc}_nonmember", float(sc.loc["median", "mean non-member"]), display=False)
    glue(f"mia_{enc}_donor", float(sc.loc["median", "mean donor"]), display=False)
    glue(f"mia_{enc}_donor_wins", float(sc.loc["median", "donor > target"]), display=False)
    glue(f"mia_{enc}_drop", float(1 - sc.loc["median", "mean target"] / sc.loc["median", "mean genuine (before the swap)"]),
         display=False)
glue("mia_swaps", int(mia["dlib"].scores.shape[0]), display=False)
glue("mia_candidates", int(mia["dlib"].candidates), display=False)
glue("mia_chance_r1", 1 / mia["dlib"].candidates, display=False)
glue("paper_drop", 1 - M["facefusion_target_swap"] / M["facefusion_target_genuine"], display=False)

# %% [markdown]
# **What carries over.** A single swap suppresses the target's similarity but does not erase it, and
# a thresholding adversary exploits what is left, exactly paper 002's finding. Over
# {glue:text}`mia_swaps` swaps, the mean target score falls from {glue:text}`mia_dlib_genuine:.3f`
# (a genuine photograph against its own gallery) to {glue:text}`mia_dlib_target:.3f` under dlib and
# from {glue:text}`mia_sface_genuine:.3f` to {glue:text}`mia_sface_target:.3f` under SFace, by
# {glue:text}`mia_dlib_drop:.0%` and {glue:text}`mia_sface_drop:.0%` (paper, FaceFusion under
# ArcFace: 0.616 to 0.098, by {glue:text}`paper_drop:.0%`; our classical swap suppresses less), while
# non-members score {glue:text}`mia_dlib_nonmember:.3f` and {glue:text}`mia_sface_nonmember:.3f`
# (paper about 0.008). With median aggregation the adversary reaches AUC
# {glue:text}`mia_dlib_auc_median:.3f` (dlib) and {glue:text}`mia_sface_auc_median:.3f` (SFace),
# against 0.874 for FaceFusion and 0.73-0.95 for the paper's five donor-retaining tools; at FPR
# $\le 1\%$ it flags {glue:text}`mia_dlib_tpr1_median:.1%` and {glue:text}`mia_sface_tpr1_median:.1%`
# of the targets (FaceFusion 30.2% under ArcFace, 15.5% under Facenet512), at FPR $\le 0.1\%$
# {glue:text}`mia_dlib_tpr01_median:.1%` and {glue:text}`mia_sface_tpr01_median:.1%` (14.6% and
# 3.6%). Closed-set rank-1 identification among {glue:text}`mia_candidates` targets (chance
# {glue:text}`mia_chance_r1:.1%`) succeeds for {glue:text}`mia_dlib_r1_median:.1%` (dlib) and
# {glue:text}`mia_sface_r1_median:.1%` (SFace) of the swaps, rank-5 for
# {glue:text}`mia_dlib_r5_median:.1%` and {glue:text}`mia_sface_r5_median:.1%` (paper: up to 34%
# rank-1 among 948). Centring matters for dlib: on raw cosines its AUC is
# {glue:text}`mia_dlib_raw_auc:.3f`.
#
# **What does not.** Our swap is a classical landmark warp, not a learned swapper, and how much donor
# identity it transfers depends on the encoder. Under dlib the swap is mostly donor-dominated
# ({glue:text}`mia_dlib_donor_wins:.0%` of swaps score higher against the donor than against their
# target), if less so than the paper's five anonymising tools (over 93%). Under SFace only
# {glue:text}`mia_sface_donor_wins:.0%` do: SFace evidently reads identity largely from what the warp
# keeps of the target (face outline, landmark geometry, skin tone after blending), so by paper 002's working
# definition this swap fails as an anonymiser for SFace, like DiffSwap and FaceShifter there, and its
# near-perfect membership numbers belong beside those two tools (DiffSwap: 96.7% TPR at 1% FPR), not
# beside FaceFusion. (The one-photograph donor gallery inflates donor scores, so these fractions
# overstate donor transfer, if anything.) The max aggregate looks stronger than the median with full
# galleries (dlib AUC {glue:text}`mia_dlib_auc_max:.3f` against {glue:text}`mia_dlib_auc_median:.3f`)
# only because target galleries are larger: with {glue:text}`matched` photographs per gallery it
# drops to {glue:text}`mia_dlib_matched_auc_max:.3f` and median aggregation is the stronger attack
# at FPR $\le 0.1\%$ ({glue:text}`mia_dlib_matched_tpr01_median:.1%` against
# {glue:text}`mia_dlib_matched_tpr01_max:.1%`), as in the paper. Finally, non-members here are LFW
# identities with fewer photographs, not matched to the targets; paper 002's harder, attribute-matched
# non-members raised the baseline without removing the gap, which we do not test.

# %% [markdown]
# ## Examples: target, donor, swap
#
# A few targets of the large-$n$ regime, the fixed donor and the swap the generator made from them
# (recomputed from the photographs; the generator is deterministic, so these are the encoded images).

# %%
t0 = time.perf_counter()
if HAVE_IMAGES:
    triplets = fs.example_triplets(tables["sface_large_swap"], donor_info["image_id"], k=P["examples"], seed=seed)
    fig = plotting.faces.image_triplets(triplets)
    plt.show()
else:
    display(Markdown("*The LFW images are not available on this machine (`data/lfw/images`; `make data-link`), so the "
                     "example figure is not drawn. Every number of this chapter comes from the committed embedding "
                     "tables.*"))
timings["examples"] = time.perf_counter() - t0

# %% [markdown]
# The swap keeps the target's hair, pose, outline and lighting and replaces the inner face with the
# donor's, warped to the target's landmarks: exactly the attributes that the donor-retaining tools of
# paper 002 also preserve, and through which target identity leaks.
#
# ## Timing

# %%
elapsed = time.perf_counter() - started
timing = pd.Series(timings, name="seconds").round(1)
timing["notebook total"] = round(elapsed, 1)
display(timing.to_frame())
glue("elapsed_minutes", elapsed / 60, display=False)
glue("audit_seconds", float(np.mean(list(audit_seconds.values()))), display=False)
glue("rf_seconds", float(timings["random forest"]), display=False)

# %% [markdown]
# Each condition's audit took {glue:text}`audit_seconds:.1f` s on average (two workers); the random
# forest sensitivity check took {glue:text}`rf_seconds:.0f` s in all. This chapter ran in
# {glue:text}`elapsed_minutes:.1f` minutes.

# %%
if smoke_dir is not None:  # the smoke profile's generated tables are not kept
    smoke_dir.cleanup()
