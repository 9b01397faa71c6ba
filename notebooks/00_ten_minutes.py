# ---
# jupyter:
#   jupytext:
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
# **What you will learn.** Why a number called "epsilon" means nothing until you know its
# {term}`kind`; how to turn a test into a {term}`certificate` in a few lines, with
# {term}`development rows` for fitting and fresh {term}`test rows` for counting; and why the number
# of test rows puts a {term}`cap` on what any certificate can show, and how to plan for it.
#
# A mechanism releases a random output for each identity; it is $\varepsilon$-differentially
# private for a {term}`pair` of identities $A, B$ when no event is more than $e^{\varepsilon}$ times
# as likely under one as under the other. An *audit* draws outputs of both identities and returns a
# number called "epsilon". This page runs every kind of audit in this book on one pair whose
# $\varepsilon$ is known exactly, and shows why only one kind of number is evidence.
#
# **The mechanism.** Each identity releases its mean plus {glue:text}`qs_mechanism_words`; the means
# are set so that the pair is exactly $\varepsilon = $ {glue:text}`qs_epsilon:g`-DP
# ({doc}`../methods`). With $\varepsilon = 0$ both identities release the same distribution: the
# {term}`exact null`. Every audit below uses $n = $ {glue:text}`qs_n` rows per identity. The
# parameters below are what you change to run the page again (profile {glue:text}`qs_profile`; run
# times are on the {doc}`../execution_statistics` page).

# %% tags=["parameters"]
profile: str = "full"  # run profile: "smoke", "full" or "paper"
epsilon: float = 1.0  # exact epsilon of the pair, nats (0 to 8)
n: int = None  # dev and test rows per identity (10-10000; None: profile's)
mechanism: str = "laplace"  # noise: "laplace" or "gaussian"
seed: int = 0  # base seed of every draw

# %% tags=["remove-cell"]
from epsaudit.studies import parameters
from epsaudit.studies import quickstart as study

parameters.check(globals(), study.PARAMETERS, "Audit a mechanism in ten minutes")

# %% tags=["remove-cell"]
from IPython.display import Markdown
from myst_nb import glue

from epsaudit import plotting
from epsaudit.audits import gaussmech_epsilon, kde_lr_epsilon, mmd_tv_epsilon, reserved_test_certificate, roc_oof_epsilon
from epsaudit.bounds import bonferroni_alpha, certifiable_cap, required_test_size
from epsaudit.results import results_frame

P = study.settings(profile, n)
n = P["n"]
plotting.set_style()
glue("qs_profile", profile, display=False)
glue("qs_n", n, display=False)
glue("qs_epsilon", epsilon, display=False)
glue("qs_mechanism_words", study.MECHANISMS[mechanism], display=False)

# %% [markdown]
# ## Four numbers called epsilon
#
# The four {term}`routes <route>` of *Picture the Epsilon* (Section III), each on $n$ outputs of the
# pair and of the exact null:

# %%
def four_routes(x_a, x_b):
    return [gaussmech_epsilon(x_a, x_b),
            kde_lr_epsilon(x_a, x_b, alpha=0.01),
            mmd_tv_epsilon(x_a, x_b),
            roc_oof_epsilon(x_a, x_b, seed=seed)]


pair = study.pair_mechanism(epsilon, mechanism=mechanism)  # epsilon-DP
null = study.pair_mechanism(0.0, mechanism=mechanism)  # the exact null
x = pair.sample_groups(n, seed=("quickstart", seed, "routes"))
x0 = null.sample_groups(n, seed=("quickstart", seed, "routes"))
routes = {"exact null (ε = 0)": four_routes(x0[0], x0[1]),
          f"this pair (ε = {epsilon:g})": four_routes(x[0], x[1])}

# %% tags=["remove-input"]
route_frame = study.route_frame(routes)
study.route_view(route_frame, n)

# %% tags=["remove-cell"]
high = study.route_table(epsilons=(0.0,), n=n, seed=seed, dim=512, mechanism=mechanism)
for name, value in study.route_numbers(route_frame, high, epsilon).items():
    glue(name, value, display=False)

# %% [markdown]
# None of these numbers is evidence about the pair:
#
# - **GaussMech** and **KDE-LR** are {term}`diagnostics <diagnostic>`: formulas that would be an
#   $\varepsilon$ if the outputs were a Gaussian mechanism (GaussMech) or if per-coordinate
#   log-ratios composed (KDE-LR). KDE-LR says {glue:text}`qs_kde_null:.3f` at the exact null and
#   {glue:text}`qs_kde_one:.3f` for this pair: {glue:text}`qs_kde_phrase`. In $d = 512$ dimensions,
#   where face embeddings live, the same null gives GaussMech {glue:text}`qs_gm_null_512:.1f` and
#   KDE-LR {glue:text}`qs_kde_null_512:.0f`.
# - **MMD-TV** is an {term}`estimate`: a valid population inequality ($\varepsilon \ge
#   2\,\mathrm{artanh}(\mathrm{MMD}/2)$) with a sample value plugged in. It is
#   {glue:text}`qs_mmd_one:.3f` for this pair, with no statement of how wrong the sample value can be.
# - **ROC-HT out-of-fold** is an estimate too, and {glue:text}`qs_roc_phrase`: with a finite sample
#   some threshold separates a few outputs perfectly, and the conversion $\log(\mathrm{TPR}/\mathrm{FPR})$
#   divides by a false-positive rate of zero.
#
# ## One certificate
#
# A {term}`certificate` is a lower confidence bound. A test (score and threshold) is fixed on
# development rows; its errors are counted on fresh test rows; and an exact test of both error
# rates together, the {term}`joint certificate`, gives an $\varepsilon$ that the pair exceeds with at
# least 95% probability ({doc}`../methods`). Here with the mechanism's exact likelihood-ratio score
# (the most powerful test at every threshold; on a finite sample a learned test can still come out
# ahead by chance) and with a logistic regression learned on the development rows:

# %%
dev = pair.sample_groups(n, seed=("quickstart", seed, "dev"))  # fit here
test = pair.sample_groups(n, seed=("quickstart", seed, "test"))  # count here
fresh = not pair.repeated_outputs  # fresh draws; grid values may repeat
exact = reserved_test_certificate(  # the mechanism's exact likelihood ratio
    dev[0], dev[1], test[0], test[1], score_function=pair.exact_score(0, 1),
    delta=pair.delta, check_reuse=fresh)
learned = reserved_test_certificate(  # a logistic regression fitted on dev
    dev[0], dev[1], test[0], test[1], delta=pair.delta, check_reuse=fresh)
columns = ["kind", "bound", "value", "n_a", "n_b", "tp", "fp", "cap"]
frame = results_frame([exact, learned])[columns]
frame.set_axis(["exact score", "learned"]).round(3)

# %% [markdown]
# The pair's exact $\varepsilon$ is {glue:text}`qs_epsilon:g`; the exact score certifies
# {glue:text}`qs_cert_this:.2f` and the learned test {glue:text}`qs_cert_this_learned:.2f`. The
# paper's certificate, two one-sided {term}`Clopper-Pearson` bounds at half the error level each
# (`bound="clopper-pearson"`), certifies {glue:text}`qs_cert_this_cp:.2f` on the same rows:
# {glue:text}`qs_joint_gain_phrase`. The table below repeats the audit, on
# {glue:text}`qs_n` development and test rows per identity, for pairs of several exact
# $\varepsilon$: the joint certificate of the exact score and of the learned test, the paper's
# Clopper-Pearson certificate of the exact score, and each bound's cap.

# %% tags=["remove-input"]
certs = study.certificate_table(tuple(sorted({0.0, 1.0, 2.0, 4.0, epsilon})), n=n, seed=seed, mechanism=mechanism)
for name, value in study.certificate_numbers(certs, this=epsilon).items():
    glue(name, value, display=False)
study.certificate_view(certs, n)

# %% [markdown]
# {glue:text}`qs_above_phrase` ({glue:text}`qs_above` of the {glue:text}`qs_count` joint
# certificates exceed it): {glue:text}`qs_cert_one:.2f` for the pair whose $\varepsilon$ is 1 and
# {glue:text}`qs_cert_four:.2f` for $\varepsilon = 4$ with the exact score. That is the promise of a
# certificate: it may be loose, it is not wrong more often than 5% of the time. It is also the only
# one of these numbers that refutes a claim: {glue:text}`qs_refute_phrase`.
#
# ## The cap set by sample size
#
# Even a perfect test cannot certify more than the test size allows. With zero errors on $n$ test
# rows per identity the joint certificate stops at a {term}`cap`, {glue:text}`qs_cap:.2f` here
# ({glue:text}`qs_cap_cp:.2f` for the paper's bound); reporting several certificates together, a
# {term}`family`, lowers it further:

# %%
alpha = bonferroni_alpha(1)  # one certificate at 95%: error level 0.05
joint = certifiable_cap(n, n, alpha, delta=0.0)
paper = certifiable_cap(n, n, alpha, delta=0.0, bound="clopper-pearson")
print(f"cap at n = {n}: {joint:.2f} (joint), {paper:.2f} (paper)")
need = required_test_size(epsilon, alpha, delta=0.0)  # a perfect test's rows
print(f"rows per identity to certify more than {epsilon:g}: {need}")

# %% tags=["remove-cell"]
caps = study.cap_comparison(P["sizes"], families=(1, 40))
fig = plotting.quickstart.cap_against_test_size(study.cap_table(P["sizes"], families=(1, 40)),
                                                truth=epsilon if epsilon > 0 else None,
                                                paper=study.cap_table(P["sizes"], families=(1, 40), bound="clopper-pearson"))
plotting.style.glue_figure("ch0-cap-against-test-size", fig, caps)
glue("qs_caps", study.cap_comparison_view(caps), display=False)
sizes = study.smallest_certifying_sizes((1, 40), epsilon=epsilon)
glue("qs_need_one", int(sizes.iloc[0]), display=False)
glue("qs_need_forty", int(sizes.iloc[1]), display=False)
glue("qs_need_one_cp", int(study.smallest_certifying_sizes((1,), epsilon=epsilon, bound="clopper-pearson").iloc[0]),
     display=False)

# %% [markdown]
# ```{glue:figure} ch0-cap-against-test-size
# :name: fig-ch0-cap
#
# **What a reserved test of this size can ever certify.** The cap (largest certifiable
# $\varepsilon$, nats, 95%, zero test errors) against the test rows per identity, for one
# certificate and for a family of 40 reported together; solid: the joint certificate, dashed: the
# paper's Clopper-Pearson bound. The dashed black line is the page's exact $\varepsilon$ (none at the
# exact null).
# ```
#
# {glue:md}`ch0-cap-against-test-size-files:myst`
#
# {numref}`fig-ch0-cap` shows the cap growing only like $\log n$: a large $\varepsilon$ can only be
# certified by a large test. To certify more than $\varepsilon = $ {glue:text}`qs_epsilon:g` even
# a perfect test needs {glue:text}`qs_need_one` test rows per identity with the joint certificate
# ({glue:text}`qs_need_one_cp` with the paper's), and {glue:text}`qs_need_forty` when 40
# certificates are reported together. A real test makes errors, and needs more.
# {glue:md}`qs_errors_sentence` `epsaudit plan` answers the same question from the command line
# (`--tpr` and `--fpr` give a test's error rates):
#
# ```bash
# .venv/bin/epsaudit plan --epsilon 4 --confidence 0.95 --family 1
# ```
#
# ````{dropdown} All numbers: the caps drawn in the figure above
# ```{glue} qs_caps
# ```
# ````
#
# ## What to try next
#
# Run the page again with other parameters, from the repository root (the first cell stops with a
# message if a value is not allowed; `-p profile smoke` keeps a run to seconds), and open `out.ipynb`
# in Jupyter (`.venv/bin/jupyter lab out.ipynb`):
#
# ```bash
# .venv/bin/papermill notebooks/00_ten_minutes.ipynb out.ipynb \
#     -p profile smoke -p epsilon 2 -p n 30
# ```
#
# :::{exercise}
# :label: ex-quick-size
# **Change a parameter.** Run the page with `-p n 30` (30 development and 30 test rows per
# identity). What happens to the certificate of the $\varepsilon = 4$ pair in the certificate
# table, and to the cap? Which of the two holds the certificate down at 30 rows?
# :::
#
# :::{solution} ex-quick-size
# :class: dropdown
# The page computes it with the same calls at both sizes:
#
# ```python
# for rows in (30, default_n):  # default_n: the profile's own n
#     study.certificate_table((4.0,), n=rows, seed=seed,
#                             mechanism=mechanism)
# ```
#
# {glue:md}`qs_ex_size_sentence`
# :::
#
# :::{exercise}
# :label: ex-quick-bound
# **Change a line.** Run the page with `-p epsilon 4` (at $\varepsilon = 1$ and few rows both bounds
# may certify nothing). Then, in the certificate cell, add `bound="clopper-pearson"` to the call that
# makes `exact`, and run the cell again. Compare the paper's certificate and its cap with the joint
# certificate's: which is larger, and where in {numref}`fig-ch0-cap` do you see why?
# :::
#
# :::{solution} ex-quick-bound
# :class: dropdown
# ```python
# exact = reserved_test_certificate(
#     dev[0], dev[1], test[0], test[1], score_function=pair.exact_score(0, 1),
#     delta=pair.delta, check_reuse=fresh, bound="clopper-pearson")
# ```
#
# On this page's pair ($\varepsilon = $ {glue:text}`qs_epsilon:g`) it certifies
# {glue:text}`qs_cert_this_cp:.2f` where the joint certificate gives {glue:text}`qs_cert_this:.2f`:
# {glue:text}`qs_joint_gain_phrase`. The split bound spends half its error level on each rate and
# joins them by a union bound; the joint test uses the whole level on both rates together, so its
# cap ({glue:text}`qs_cap:.2f` at $n = $ {glue:text}`qs_n`) is above the paper's
# ({glue:text}`qs_cap_cp:.2f`): the dashed curves of {numref}`fig-ch0-cap` lie below the solid ones.
# :::
#
# :::{exercise}
# :label: ex-quick-mechanism
# **Change the mechanism.** Run the page with `-p mechanism gaussian`. How do the four routes'
# numbers at the exact null move? Does any of them change its kind, and does the certificate still
# stay below the exact $\varepsilon$?
# :::
#
# :::{solution} ex-quick-mechanism
# :class: dropdown
# ```python
# gauss = study.route_table(epsilons=(0.0,), n=n, seed=seed, mechanism="gaussian")
# cert = study.certificate(epsilon, n, seed, mechanism="gaussian")
# ```
#
# At the exact null, Laplace noise against Gaussian noise ({glue:text}`qs_n` rows per identity):
# {glue:text}`qs_ex_mech_moves`. Every number moves, but no route changes its kind: a diagnostic
# stays a diagnostic and an estimate an estimate, whatever the noise, and none of them is evidence.
# The joint certificate of the $\varepsilon = $ {glue:text}`qs_epsilon:g` Gaussian pair is
# {glue:text}`qs_ex_gauss_cert:.2f`, a bound on its $\varepsilon$ at $\delta = 10^{-5}$.
# :::
#
# :::{exercise}
# :label: ex-quick-learned
# **Change a line.** How far below the exact-score certificate is the learned test's? In the
# certificate cell, draw ten times as many development rows (`dev = pair.sample_groups(10 * n, ...)`)
# and run the cell again: does the learned test get closer?
# :::
#
# :::{solution} ex-quick-learned
# :class: dropdown
# ```python
# dev = pair.sample_groups(10 * n, seed=("quickstart", seed, "dev"))
# ```
#
# {glue:md}`qs_ex_learned_sentence` The certificate lives in the tail of the score: for product Laplace noise the exact score is constant,
# at likelihood ratio $e^{\varepsilon}$, on the whole quadrant beyond both means, while a linear
# score ranks outputs by $x_1 + x_2$ and mixes into its top outputs some whose likelihood ratio is
# smaller. More development rows help the learner find the direction, not change its shape, and
# the test size still sets the cap. Chapter {doc}`01_synthetic_benchmark` shows a case where a
# learned test loses nearly all of its power (anisotropic noise).
# :::
#
# Next: {doc}`../methods` defines each route; the chapters that follow calibrate them on
# known-$\varepsilon$ mechanisms in 512 dimensions and then run them on face embeddings. The
# {doc}`../glossary` collects the terms.

# %% tags=["remove-cell"]
default_n = study.settings(profile, None)["n"]
sizes_ex = {rows: study.certificate_table((4.0,), n=rows, seed=seed, mechanism=mechanism).iloc[0]
            for rows in dict.fromkeys((30, default_n))}
glue("qs_ex_size_sentence", Markdown(study.size_exercise_sentence(sizes_ex)), display=False)
dev_more = pair.sample_groups(10 * n, seed=("quickstart", seed, "dev"))
learned_more = reserved_test_certificate(dev_more[0], dev_more[1], test[0], test[1], delta=pair.delta,
                                         check_reuse=fresh)
glue("qs_ex_learned_sentence", Markdown(study.learned_exercise_sentence(
    exact.value, learned.value, learned_more.value, n, epsilon)), display=False)
moves = {m: study.route_table(epsilons=(0.0,), n=n, seed=seed, mechanism=m).iloc[:, 0] for m in ("laplace", "gaussian")}
glue("qs_ex_mech_moves", study.route_moves(moves["laplace"], moves["gaussian"]), display=False)
glue("qs_ex_gauss_cert", study.certificate(epsilon, n, seed, mechanism="gaussian").value, display=False)
glue("qs_errors_sentence", Markdown(study.errors_sentence(exact, n)), display=False)
