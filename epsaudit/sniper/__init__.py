"""DP-Sniper for one fixed input pair: a classifier-based threshold attack and its certificate.

DP-Sniper (Bichsel, Steffen, Bogunovic & Vechev, "DP-Sniper: Black-Box Discovery of Differential
Privacy Violations using Classifiers", IEEE S&P 2021; the comparison of *Picture the Epsilon*, Appendix Table 5) audits
a mechanism ``M`` on a fixed input pair ``(a, b)`` and direction ``a -> b``:

1. **train** a probabilistic classifier on outputs of ``M(a)`` (label 1) and ``M(b)`` (label 0);
2. **threshold**: on fresh outputs of ``M(b)``, choose a threshold ``t`` and a tie probability
   ``q`` so that the randomised attack ``S`` -- fire when the score exceeds ``t``, fire with
   probability ``q`` when it equals ``t`` -- fires with probability exactly ``c`` on that sample;
3. **final estimate**: on fresh outputs of ``M(a)`` and ``M(b)`` count how often ``S`` fires and
   report ``log(CP_lower(P[S(M(a))]) / CP_upper(P[S(M(b))]))`` with one-sided Clopper-Pearson
   bounds joined by a union bound. A certificate: with the stated confidence, ``M`` is not
   ``eps``-DP for any smaller ``eps`` (pure DP).

What this implementation does, and where it departs from the original code (whose behaviour is
described in the project's issue 4 and in the book, chapter "DP-Sniper"):

* **Both directions.** One call tests ``a -> b`` and ``b -> a`` and returns a certificate for
  each. They share the classifier (trained once on both inputs' outputs; the reverse direction
  scores with the negated score) and the final samples; each direction has its own threshold
  sample (``M(b)`` for ``a -> b``, ``M(a)`` for ``b -> a``). All ``2 x 2`` one-sided bounds form
  one Bonferroni family of ``n_certificates`` (default 2) certificates at ``confidence``.
* **Ties are drawn.** ``S`` is a randomised test: each tied output fires with probability ``q``,
  drawn with the seeded generator (the number of tied outputs that fire is drawn as
  ``Binomial(n_tied, q)``, the same law as one Bernoulli per output). Counts are then integers
  and exactly binomial, so Clopper-Pearson is exact. ``ties="expected"`` reproduces the original's
  expected fraction ``n_above + q * n_tied``; such fractional counts are rounded conservatively
  (down for the lower bound, *up* for the upper bound -- the original truncates both).
* **Scores without artificial ties.** A linear classifier is scored by its decision function
  (the log-odds, a strictly increasing transform of its probability, so the same attack family)
  instead of probabilities rounded to 3 decimals, which tie heavily in ``d = 512``. The default
  classifier, :func:`epsaudit.scorers.logistic_regression` (a ``StandardScaler`` and logistic
  regression pipeline), is folded into one linear map for this fast path; pass
  :func:`epsaudit.scorers.paper_logistic_regression` for the plain learner of *Picture the
  Epsilon*.
* **Checked scores.** A ``score_function`` (or a classifier without the fast path) must return
  one real score per row; NaN or a wrong shape is refused with a message naming the first bad
  row. ``+inf``/``-inf`` are valid scores (a likelihood ratio is infinite where one input
  cannot produce the output): they order like any other value and ties at an infinite
  threshold are broken with ``q``.
* **Fresh samples.** A certificate is void if the threshold or final sample reuses training
  rows. For a callable mechanism every threshold and final row is compared with the training
  and threshold rows (``check_reuse``); the library's own mechanisms draw each stage on an
  independent stream and are not checked. ``settings["freshness"]`` records which applies.
* **c is enforced in the final estimate.** The denominator is ``max(CP_upper, c)``: raising an
  upper confidence bound keeps it valid, and it bounds the c-restricted attack DP-Sniper
  targets, so no certificate exceeds ``log(1 / c)`` (4.6 at ``c = 0.01``). ``raw`` keeps the
  unclamped log ratio (negative values occur, as the paper's -0.03); the certificate is
  ``max(0, raw)``. ``enforce_c=False`` gives the unenforced bound.
* **Streamed batches, bounded memory.** Threshold and final stages draw and score mechanism
  calls in batches of about ``2**18`` values; the threshold stage keeps only the top tail of the
  scores it needs (``floor(c n) + 1`` values plus ties). Training uses at most ``max_train``
  outputs per input (the surplus goes to the final estimate).
* **Seeded.** Every draw derives from ``seed`` through :mod:`epsaudit.seeds`: seven independent
  streams per call, ``stream("dp-sniper", seed, stage)`` for the stages of
  :data:`epsaudit.sniper.attack._STAGES` (or ``stream(*seed, stage)`` for a key seed), so a
  call depends on its seed only and many calls can run in parallel in any order.

Mechanisms. Any :class:`epsaudit.mechanisms.Mechanism` (inputs are identity indices), with fast
paths for :class:`~epsaudit.mechanisms.ProductLaplace` (the same float-safe grid mechanism,
drawn by the Laplace inverse CDF of float64 uniforms, scored on float32 features) and
:class:`~epsaudit.mechanisms.RandomizedResponse` (integer codes; the
classifier sees one-hot rows, and because the attack depends on a call's output only through its
category, per-category counts of the drawn calls are scored once per category), or a callable
``mechanism(input, n, rng) -> (n, d) array`` with arbitrary inputs.

Modules
-------
- :mod:`~epsaudit.sniper.budget` -- constants, :class:`SniperBudget`, :func:`split_budget`;
- :mod:`~epsaudit.sniper.threshold` -- :func:`sniper_threshold`, :func:`sniper_bound`,
  :func:`attack_cap`, :func:`design_cap` (pure functions of scores and counts);
- :mod:`~epsaudit.sniper.sources` -- the mechanism adapters (batched draws, reuse checks);
- :mod:`~epsaudit.sniper.attack` -- :func:`dp_sniper`, stage by stage.
"""

from __future__ import annotations

from .attack import dp_sniper
from .budget import (BATCH_VALUES, DEFAULT_C, DEFAULT_MAX_TRAIN, DEFAULT_SPLIT, DIRECTIONS, ROUTE, TIES, SniperBudget,
                     split_budget)
from .threshold import attack_cap, design_cap, sniper_bound, sniper_threshold

__all__ = [
    "BATCH_VALUES",
    "DEFAULT_C",
    "DEFAULT_MAX_TRAIN",
    "DEFAULT_SPLIT",
    "DIRECTIONS",
    "ROUTE",
    "SniperBudget",
    "TIES",
    "attack_cap",
    "design_cap",
    "dp_sniper",
    "sniper_bound",
    "sniper_threshold",
    "split_budget",
]
