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
# # The known-epsilon benchmark
#
# Four audit routes return a number called "epsilon". Here every number is compared with the
# *exact* epsilon of a mechanism built to have it (*Picture the Epsilon*, Tables 4 and 6, Figures 2 and 3):
# identity prototypes on the unit sphere in $d = 512$, released through product Laplace noise
# (pure DP, $\varepsilon_{AB} = \lVert\mu_A - \mu_B\rVert_1 / b$), isotropic Gaussian noise
# (approximate DP, the analytic Gaussian mechanism at $\delta = 10^{-5}$ {cite}`balle2018improving`),
# anisotropic Gaussian noise, and the exact null where every identity releases the same distribution.
# The noise is calibrated so that the worst pair of a 20-identity prototype set has the requested
# global epsilon; the reference for a setting is the median exact pairwise epsilon over the 40
# audited pairs.
#
# What this chapter reproduces, each beside the paper's numbers: Table 4 (the null), Figure 2 (each
# route against the exact epsilon), Figure 3 (how often the reserved test certifies anything) and
# Table 6 (the anisotropic gap between a learned and the exact test), with a shrinkage-LDA scorer
# added as a third test.
#
# Choices the paper leaves open, made here: 20 identities per prototype set; the "face-like" set
# spreads prototypes along five dominant directions so pairwise distances vary widely; the
# reserved test draws $n$ fresh *development* rows and $n$ fresh *test* rows per identity, so
# $n$ is the test size; the threshold maximises the bound on the development scores.

# %% tags=["parameters"]
profile = "full"  # "smoke" (CI, about a minute), "full" (the book), "paper" (3 repetitions everywhere)
seed = 0  # base seed: prototypes, pair order and every draw derive from it
n_jobs = 2  # settings run in parallel (joblib); tables do not depend on it

# %%
import time

from IPython.display import display
from myst_nb import glue

from epsaudit import plotting
from epsaudit.studies import synthetic as study

P = study.profile_settings(profile)  # the settings of each profile: epsaudit.studies.synthetic.PROFILES
plotting.set_style()
started = time.perf_counter()
print(f"profile={profile}: {P}")


def glue_all(numbers):
    """Glue every named number a study function returns (the prose cites them by name)."""
    for name, value in numbers.items():
        glue(name, value, display=False)


glue("pairs_per_setting", P["pairs"], display=False)

# %% [markdown]
# ## Table 4: the exact null
#
# Every identity releases the same distribution, so the true pairwise epsilon is zero. At the
# null the two prototype geometries coincide (all prototypes are the same point), so one geometry
# is run; the table averages the per-setting medians over both noise mechanisms and the repetitions.

# %%
null_summary = study.null_summary(P, seed, n_jobs)
table4, numbers = study.table4(null_summary, P["pairs"])
display(table4.round(3))
glue_all(numbers)

# %% [markdown]
# At $n = ${glue:text}`t4_n0` per class, GaussMech gives {glue:text}`t4_gaussmech_30:.1f` (paper
# 28.60) and KDE-LR at $\alpha = 0.01$ gives {glue:text}`t4_kde_30:.0f` (paper 1526) although the true
# epsilon is zero; the out-of-fold ROC conversion is $+\infty$ on {glue:text}`t4_div_30:.1f` of 40
# pairs (paper 29.3) while the AUC is {glue:text}`t4_auc_30:.3f`, i.e. chance.
#
# **What carries over and why numbers differ.** GaussMech agrees to within a few percent: at the
# null it is $\approx \sqrt{2d/(n-1)} \cdot 4.845$ whatever the noise. The AUCs are at chance in both.
# The count of $+\infty$ conversions agrees at $n = 30$ but not at larger $n$ (paper 24.7 and 20.8):
# with continuous out-of-fold scores and no ties, the top score comes from identity A (an operating
# point with FPR = 0, TPR > 0) or the bottom one from identity B (TPR = 1, FPR < 1) with probability
# $1 - 1/4 = 3/4$ at the null, i.e. about 30 of 40 pairs at *any* $n$, which is what we see. The
# paper's decline with $n$ points to ties among its scores (e.g. probabilities saturating at 0 or 1),
# which hide such corners; its code is not available to check. Our KDE-LR is 10-20% below the paper's
# (1526 / 1210 / 962): an independent reference implementation gives 1100-1400 / 850-1200 / 650-950, and the value is
# dominated by grid and tail details that the text does not pin down (the KDE-LR test checks the
# reference band and agreement with scipy's `gaussian_kde` to $10^{-4}$).
# MMD-TV is of order $10^{-3}$ at the null in both.

# %% [markdown]
# ## Figure 2: each route against the exact epsilon
#
# Both geometries, both mechanisms, every requested epsilon, at one sample size. Lines are means over
# geometries and repetitions; bands span them. MMD-TV is a pure-DP route and is drawn for the
# Laplace mechanism only, with the tighter hockey-stick form dashed. The ROC panel shows the
# population-optimal AUC of the exact likelihood-ratio test for the median-epsilon pair (closed form
# for Gaussian noise, Monte Carlo for Laplace).

# %%
fig2_summary, auc_reference = study.figure2_runs(P, null_summary, seed, n_jobs)
fig = plotting.synthetic.routes_against_reference(fig2_summary, auc_reference)

# %%
fig2_table, numbers = study.figure2_table(fig2_summary, null_summary, P)  # the paper's Figure 2 is a plot only
display(fig2_table.round(3))
glue_all(numbers)

# %% [markdown]
# The diagnostics start high at the null (GaussMech {glue:text}`f2_gm_null:.1f`) and barely
# respond until the signal is large; MMD-TV rises with the exact epsilon but stays far below it
# (median {glue:text}`f2_mmd_top:.3f` against an exact median of {glue:text}`f2_ref_top:.1f` at the
# largest setting for Laplace noise). This is the paper's picture: MMD-TV is a valid population
# inequality evaluated at a sample value, not an estimate of epsilon. The out-of-fold AUC tracks
# the population-optimal AUC from below for Gaussian noise; for product Laplace noise in $d = 512$
# even the optimal test has modest AUC, because the privacy loss is spread over 512 bounded terms.

# %% [markdown]
# ## Figure 3: how often does the reserved test certify anything?
#
# Dispersed prototype set; the learned test (logistic regression, solid) against the exact
# likelihood-ratio test with a threshold chosen on development data (dashed), at three sample sizes.
# All certificates of a setting hold together at 95%; with the paper's 40 pairs each one-sided
# bound is at $0.05 / 80 = $ {glue:text}`alpha40:.2e`, so a test of $n$ rows per class can certify
# at most the cap {glue:text}`cap30:.3f` ($n = 30$), {glue:text}`cap100:.3f` ($n = 100$),
# {glue:text}`cap300:.3f` ($n = 300$). The paper gives Figures 2 and 3 as plots only, so the
# tables below list our values without a paper column; the shapes to compare are described in
# the text.

# %%
glue_all(study.figure3_caps())
fig3_runs = study.certify_grid(["dispersed"], study.MECHANISMS, ("logistic", "exact"), P, seed, n_jobs, "Figure 3")
fig3 = study.certification_summary(fig3_runs)
fig = plotting.synthetic.certification_curves(fig3)

# %%
fig3_table, numbers = study.figure3_table(fig3)
display(fig3_table.round(2))
glue_all(numbers)

# %% [markdown]
# More samples raise both the fraction of positive bounds and their largest possible value, as in
# the paper. With Gaussian noise the exact test certifies up to {glue:text}`f3_exact_max:.2f` of the
# pairs and the learned logistic test up to {glue:text}`f3_learned_max:.2f`. Product Laplace noise
# in 512 dimensions is hard for both: its exact epsilon is an $L_1$ quantity that no single
# threshold test at these sample sizes comes near. Certified values never exceed the cap of their
# test size; the paper's curves have the same ceiling.

# %% [markdown]
# ## Table 6: the anisotropic gap, and how much shrinkage closes it
#
# Anisotropic Gaussian noise with a diagonal covariance whose variances span four orders of
# magnitude; the signal lives mostly in the low-variance coordinates. The exact test scores along
# the whitening direction $S^{-1}(\mu_A - \mu_B)$; the learned logistic test (L2 penalty, $C = 1$)
# is dominated by the high-variance coordinates. The third row is linear discriminant analysis with
# a Ledoit-Wolf-shrunk covariance {cite}`ledoit2004well`, which estimates the whitening direction.

# %%
t6_runs = study.certify_grid(study.GEOMETRIES, ["anisotropic_gaussian"], ("exact", "logistic", "shrinkage_lda"), P, seed,
                             n_jobs, "Table 6")
t6 = study.certification_summary(t6_runs)
table6, table6_side = study.table6(t6)
# "n/a": the paper has no such row (it reports no learned test at n = 300 and no shrinkage LDA)
display(table6_side)

# %%
by_geometry, numbers = study.table6_by_geometry(t6, t6_runs, table6, P)
print(f"fraction certified > 0 at n = {numbers['t6_n']}, by prototype geometry:")
display(by_geometry.round(2))
glue_all(numbers)

# %% [markdown]
# At requested $\varepsilon = $ {glue:text}`t6_eps:.0f` and $n = $ {glue:text}`t6_n` the exact test
# certifies {glue:text}`t6_exact:.2f` of the pairs (paper {glue:text}`t6_paper_exact:.2f`), the learned logistic test
# {glue:text}`t6_logistic:.2f` (paper 0.00-0.02 at every setting), and shrinkage LDA
# {glue:text}`t6_shrinkage_lda:.2f`: it closes {glue:text}`t6_gap_closed:.0f`% of the gap. A learned
# test is only as good as its scorer; a certificate from a weak scorer is valid but says little.
#
# **Why our numbers differ from the paper's.** The paper's covariance and prototype sets are not
# published; ours are documented in `epsaudit.mechanisms`. By geometry, the exact test certifies
# {glue:text}`t6_exact_dispersed:.2f` of the dispersed pairs but {glue:text}`t6_exact_face:.2f` of
# the face-like pairs at this setting: our face-like set spreads pairwise distances widely (largest
# to median distance about 4.5), so most of its pairs are far weaker than the worst pair that fixes
# the noise; the paper's average of 0.88 implies a less spread second set. The ordering (exact far
# above learned logistic; both zero at small epsilon; more samples certify more) is what carries
# over. Logistic regression keeps the paper's `max_iter=1000`; on this badly scaled data
# {glue:text}`t6_stopped` of {glue:text}`t6_learned` learned fits stopped there (counted in each
# certificate's `convergence_warnings`), which is part of why the learned test is weak.

# %% [markdown]
# ## Floating point: a textbook Laplace implementation is not $\varepsilon$-DP
#
# Every exact epsilon in this chapter is a statement about a real-valued mechanism. The
# computer releases float64 numbers, and the textbook implementation of the Laplace mechanism,
# $\mathrm{fl}(\mu + L)$ with $L$ numpy's Laplace draw, is not $\varepsilon$-DP for *any*
# $\varepsilon$ {cite}`mironov2012significance`: numpy's noise takes only the values
# $\pm b \log(2k\,2^{-53})$, a sparse subset of the doubles, so most doubles reachable as
# $\mathrm{fl}(\mu_a + L)$ are unreachable as $\mathrm{fl}(\mu_b + L)$, and an output reachable
# from one mean only has likelihood ratio $+\infty$. Here both audits of this book are pointed at
# that flaw: one pair in one dimension with means 0.3 and 0 and $b = 1$, so the nominal epsilon
# is 0.3. Two fixed attacks (score functions, nothing learned) are certified with the reserved
# test ({glue:text}`fp_n:,` development and {glue:text}`fp_n:,` test outputs per input) and with
# DP-Sniper ({glue:text}`fp_calls:,` calls, both directions, $c = 0.01$), each at 95%:
#
# * **reachability** (Mironov's support test, `reachability_score`): $+1$ when an output cannot
#   be produced from $\mu_b$ by the sampler (replayed bit for bit), $-1$ when it cannot be
#   produced from $\mu_a$;
# * **log-likelihood ratio**: for the textbook mechanism computed the textbook way,
#   $|x - \mu_b| - |x - \mu_a|$, whose last bits on the clipped tails depend on the input; for
#   the fixed mechanism computed without cancellation.
#
# The fixed mechanism is the one every other section uses (`ProductLaplace`): the same draw,
# rounded to a grid of spacing $2^{\lfloor \log_2 b \rfloor - 20}$. Rounding is post-processing,
# and cells beyond both means keep the exact ratio $e^{|\mu_a - \mu_b|/b}$, so its epsilon is
# exactly the nominal one; every output moves by at most $2^{-21}$ noise scales, far below the
# precision of any table here.

# %%
fp_table, numbers = study.floating_point_table(P, seed)
display(fp_table.round(3))
glue_all(numbers)

# %% [markdown]
# Against the textbook implementation the reachability attack certifies
# $\varepsilon \ge$ {glue:text}`fp_tb_reach_reserved:.2f` with the reserved test and
# {glue:text}`fp_tb_reach_sniper:.2f` with DP-Sniper, against a nominal 0.3: with 95% confidence
# the float64 mechanism as sampled is not 0.3-DP. DP-Sniper stops near its cap
# $\log(1/c) =$ {glue:text}`fp_cap:.2f`; the reserved test is limited only by its test size. The
# naive log-ratio score leaks too: the reserved test certifies {glue:text}`fp_tb_lr_reserved:.2f`
# by thresholding between two values of $|x| - |x - 0.3|$ that differ in the last bit
# ({glue:text}`fp_tb_lr_sniper:.2f` for DP-Sniper, whose threshold sits in the top 1% of scores,
# where the pattern helps little). Against the grid mechanism the same attacks certify
# {glue:text}`fp_grid_reach_reserved:.2f` and {glue:text}`fp_grid_reach_sniper:.2f`
# (reachability: every grid cell near the means is reachable from both) and
# {glue:text}`fp_grid_lr_reserved:.2f` and {glue:text}`fp_grid_lr_sniper:.2f` (log-ratio):
# {glue:text}`fp_grid_phrase`. The papers do not run this check, so there is no paper value to set beside
# these; it is why the benchmark's certificates can be compared with exact epsilons at all. The
# test suite counts certificates above the exact epsilon for means that are not exactly
# representable (0.3, 0.1, 1/3; in one and three dimensions) against the binomial tolerance.

# %% [markdown]
# ## Validity: no certificate above the truth more often than promised
#
# Every certificate in this chapter is compared with the exact epsilon of its pair. Within a
# setting the {glue:text}`pairs_per_setting` certificates form one Bonferroni family at 95%; the
# family-wise error rate may be at most 5%. The test suite (`tests/test_validity.py`) runs a larger, dedicated simulation.

# %%
validity, numbers = study.validity_table(fig3_runs, t6_runs)
display(validity.to_frame("count"))
glue_all(numbers)
elapsed = time.perf_counter() - started
glue("elapsed_minutes", elapsed / 60, display=False)
print(f"notebook time: {elapsed:.0f} s")

# %% [markdown]
# Of {glue:text}`v_certs` certificates, {glue:text}`v_viol` exceed the exact epsilon of their pair,
# and {glue:text}`v_fam_viol` of {glue:text}`v_fam` families contain any violation. The paper
# reports none of 324 DP-Sniper bounds above the truth; the same holds here for the reserved test.
# This chapter ran in {glue:text}`elapsed_minutes:.1f` minutes.
