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
# # Audit a mechanism in ten minutes
#
# *This page was executed with the **{glue:text}`qs_profile`** profile ({glue:text}`qs_n` outputs
# per identity) and ran in {glue:text}`qs_minutes:.1f` minutes.*
#
# A mechanism releases a random output for each identity; it is $\varepsilon$-differentially
# private for a pair of identities $A, B$ when no event is more than $e^{\varepsilon}$ times as
# likely under one as under the other. An *audit* draws outputs of both identities and returns a
# number called "epsilon". This chapter runs every kind of audit in this book on one pair whose
# $\varepsilon$ is known exactly, and shows why only one kind of number is evidence. It runs in a
# few seconds on a laptop.
#
# **The mechanism.** Each identity releases its mean plus independent Laplace noise of scale 1 in
# each of two coordinates; the means differ by $\varepsilon / 2$ in each coordinate, so the pair
# is exactly $\varepsilon$-DP (the privacy loss of product Laplace noise is bounded by
# $\lVert\mu_A - \mu_B\rVert_1 / b$ and reaches it; {doc}`../methods`). With $\varepsilon = 0$ both
# identities release the same distribution: the *exact null*.

# %% tags=["parameters"]
profile = "full"  # "smoke", "full" or "paper"
seed = 0  # base seed of every draw

# %% tags=["remove-cell"]
import time

from IPython.display import Markdown
from myst_nb import glue

from epsaudit import plotting
from epsaudit.studies import quickstart as study

started = time.perf_counter()
P = study.profile_settings(profile)
plotting.set_style()
glue("qs_profile", profile, display=False)
glue("qs_n", P["n"], display=False)

# %% [markdown]
# ## Four numbers called epsilon
#
# The four routes of *Picture the Epsilon* (Section III), each on the same outputs of the pair at
# the exact null and at $\varepsilon = 1$:

# %%
routes = study.route_table(epsilons=(0.0, 1.0), n=P["n"], seed=seed)

# %% tags=["hide-input"]
study.route_view(routes)

# %% tags=["remove-cell"]
high = study.route_table(epsilons=(0.0,), n=P["n"], seed=seed, dim=512)
for name, value in study.route_numbers(routes, high).items():
    glue(name, value, display=False)

# %% [markdown]
# None of these numbers is evidence about the pair:
#
# - **GaussMech** and **KDE-LR** are *diagnostics*: formulas that would be an $\varepsilon$ if the
#   outputs were a Gaussian mechanism (GaussMech) or if per-coordinate log-ratios composed
#   (KDE-LR). KDE-LR says {glue:text}`qs_kde_null:.3f` at the exact null and
#   {glue:text}`qs_kde_one:.3f` at $\varepsilon = 1$: {glue:text}`qs_kde_phrase`. In
#   $d = 512$ dimensions, where face embeddings live, the same null gives GaussMech
#   {glue:text}`qs_gm_null_512:.1f` and KDE-LR {glue:text}`qs_kde_null_512:.0f`.
# - **MMD-TV** is an *estimate*: a valid population inequality ($\varepsilon \ge 2\,\mathrm{artanh}
#   (\mathrm{MMD}/2)$) with a sample value plugged in. It is small here ({glue:text}`qs_mmd_one:.3f`
#   at $\varepsilon = 1$) but comes with no statement of how wrong the sample value can be.
# - **ROC-HT out-of-fold** is an *estimate* too, and {glue:text}`qs_roc_phrase`: with a
#   finite sample some threshold separates a few outputs perfectly, and the conversion
#   $\log(\mathrm{TPR}/\mathrm{FPR})$ divides by a false-positive rate of zero.
#
# ## One certificate
#
# A *certificate* is a lower confidence bound: a test (score and threshold) is fixed on
# *development* outputs, then its error rates are counted on *fresh test* outputs, and one-sided
# Clopper-Pearson bounds on those rates give an $\varepsilon$ that the pair exceeds with at least
# 95% probability (*Picture the Epsilon*, Section IV-C; {doc}`../methods`). With the mechanism's
# exact likelihood-ratio score (the best test there is) and with a logistic regression learned on
# the development outputs:

# %%
certs = study.certificate_table((0.0, 1.0, 2.0, 4.0), n=P["n"], seed=seed)

# %% tags=["remove-cell"]
for name, value in study.certificate_numbers(certs).items():
    glue(name, value, display=False)

# %% tags=["hide-input"]
study.certificate_view(certs)

# %% [markdown]
# {glue:text}`qs_above_phrase` ({glue:text}`qs_above` of the {glue:text}`qs_count` exceed it):
# {glue:text}`qs_cert_one:.2f` for the pair whose $\varepsilon$ is 1 and
# {glue:text}`qs_cert_four:.2f` for $\varepsilon = 4$ with the exact score. That is the promise of a
# certificate: it may be loose, it is not wrong more often than 5% of the time. It is also the
# only one of these numbers that refutes a claim: {glue:text}`qs_refute_phrase`.
#
# ## The cap set by sample size
#
# Even a perfect test cannot certify more than the test size allows: with zero errors on $n$
# test outputs per identity the Clopper-Pearson bounds stop at a *cap*
# ({glue:text}`qs_cap:.2f` here), and reporting several certificates together (a Bonferroni
# family) lowers it further.

# %%
caps = study.cap_table(P["sizes"])

# %% tags=["hide-input"]
study.cap_view(caps)

# %% tags=["hide-input"]
fig = plotting.quickstart.cap_against_test_size(caps, truth=4.0)

# %% tags=["remove-input"]
Markdown(plotting.save_figure(fig, "ch0-cap-against-test-size", caps))

# %% tags=["hide-input"]
study.sizes_view(study.smallest_certifying_sizes())

# %% [markdown]
# The last table gives the smallest test size per identity that can certify anything above zero. A
# large $\varepsilon$ can only be certified by a large test: $\varepsilon = 4$ needs a few hundred
# test outputs per identity even with no errors at all. `epsaudit plan` answers the inverse
# question from the command line:
#
# ```bash
# epsaudit plan --epsilon 4 --confidence 0.95 --family 1
# ```
#
# ## What to try next
#
# :::{exercise}
# :label: ex-quick-size
# Fewer outputs. Rerun the certificates with 30 outputs per identity instead of
# {glue:text}`qs_n`. What happens to the certificate of the $\varepsilon = 4$ pair, and why?
# :::
#
# :::{solution} ex-quick-size
# :class: dropdown
# With 30 development and 30 test outputs per identity the exact-score certificate of the
# $\varepsilon = 4$ pair is {glue:text}`qs_ex_small:.2f` (it was {glue:text}`qs_cert_four:.2f`).
# The cap of a 30-row test is {glue:text}`qs_ex_small_cap:.2f`: the test size, not the
# mechanism, now bounds what can be certified.
# :::
#
# :::{exercise}
# :label: ex-quick-learned
# A learned test. The table above also shows certificates from a logistic regression fitted on
# the development outputs. How far below the exact-score certificate is it for $\varepsilon = 2$,
# and would more development outputs help?
# :::
#
# :::{solution} ex-quick-learned
# :class: dropdown
# For $\varepsilon = 2$ the learned test certifies {glue:text}`qs_ex_learned:.2f` against
# {glue:text}`qs_ex_exact:.2f` with the exact score ({glue:text}`qs_ex_share:.0f`% of it). The
# certificate lives in the tail of the score: the exact score is constant, at likelihood ratio
# $e^{\varepsilon}$, on the whole quadrant beyond both means, while a linear score ranks outputs by
# $x_1 + x_2$ and so mixes into its top outputs some with one coordinate far out and the other not,
# whose likelihood ratio is smaller. More development outputs help the learner find the direction,
# not change its shape, and the test size still sets the cap. Chapter
# {doc}`01_synthetic_benchmark` shows a case where a learned test loses nearly all of its power
# (anisotropic noise).
# :::
#
# Next: {doc}`../methods` defines each route; the chapters that follow calibrate them on
# known-$\varepsilon$ mechanisms in 512 dimensions and then run them on face embeddings.

# %% tags=["remove-cell"]
small = study.certificate_table((4.0,), n=30, seed=seed)
glue("qs_ex_small", float(small["certificate (exact score)"].iloc[0]), display=False)
glue("qs_ex_small_cap", float(small["cap"].iloc[0]), display=False)
row = certs[certs["exact epsilon"] == 2.0].iloc[0]
glue("qs_ex_learned", float(row["certificate (learned)"]), display=False)
glue("qs_ex_exact", float(row["certificate (exact score)"]), display=False)
glue("qs_ex_share", float(100 * row["certificate (learned)"] / max(row["certificate (exact score)"], 1e-12)), display=False)
glue("qs_minutes", (time.perf_counter() - started) / 60, display=False)
