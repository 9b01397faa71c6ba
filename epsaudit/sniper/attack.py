"""DP-Sniper's attack: train a classifier, set the thresholds, count the final firings, certify.

:func:`dp_sniper` runs the stages for one fixed input pair in both directions; the package
docstring (:mod:`epsaudit.sniper`) says where this departs from the original code.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Callable, Sequence

import numpy as np

from ..bounds import bonferroni_alpha
from ..results import EpsilonResult
from ..scorers import check_classifier, check_scores, classifier_name, count_convergence_warnings, positive_scores
from ..seeds import generators
from .budget import (BATCH_VALUES, DEFAULT_C, DEFAULT_MAX_TRAIN, DEFAULT_SPLIT, DIRECTIONS, ROUTE, TIES, SniperBudget,
                     _check_split, split_budget)
from .sources import _freshness, _LaplaceSource, _Source, _source
from .threshold import _check_c, _TopTail, attack_cap, sniper_bound

#: The independent random streams of one DP-Sniper call (training, threshold and final draws of
#: each input, and the tie-breaking draw).
_STAGES = ("train-a", "train-b", "threshold-a", "threshold-b", "final-a", "final-b", "ties")


# ---------------------------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------------------------


def _linear_parts(fitted) -> tuple[np.ndarray, float] | None:
    """``(w, b)`` with ``x @ w + b`` equal to the decision function (log-odds) of a fitted binary linear classifier.

    A :class:`~sklearn.pipeline.Pipeline` of :class:`~sklearn.preprocessing.StandardScaler` steps
    (or ``"passthrough"``) ending in a linear classifier -- the default
    :func:`epsaudit.scorers.logistic_regression` -- is folded into one linear map:
    ``((x - m) / s) @ w + b = x @ (w / s) + (b - (m / s) @ w)``, applied from the last scaler back.
    ``None`` for anything else (scored through :func:`epsaudit.scorers.positive_scores`).

    Raises
    ------
    ValueError
        If the fitted weights are not finite (the fit diverged).
    """
    from sklearn.linear_model._base import LinearClassifierMixin  # sklearn is imported when first needed
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    steps = [step for _, step in fitted.steps] if isinstance(fitted, Pipeline) else [fitted]
    *transforms, last = steps
    if not isinstance(last, LinearClassifierMixin):
        return None
    coef = np.asarray(getattr(last, "coef_", None))
    classes = list(getattr(last, "classes_", []))
    if coef.ndim != 2 or coef.shape[0] != 1 or classes != [0, 1]:
        return None
    intercept = np.ravel(getattr(last, "intercept_", [0.0]))
    w = np.asarray(coef[0], dtype=np.float64)
    b0 = float(intercept[0]) if intercept.size else 0.0
    for step in reversed(transforms):
        if step is None or (isinstance(step, str) and step == "passthrough"):
            continue
        if not isinstance(step, StandardScaler):
            return None
        if step.with_std and step.scale_ is not None:
            w = w / step.scale_
        if step.with_mean and step.mean_ is not None:
            b0 = b0 - float(step.mean_ @ w)
    if not (np.all(np.isfinite(w)) and np.isfinite(b0)):
        raise ValueError(f"the fitted classifier {classifier_name(fitted)} has non-finite weights; cannot score")
    return w, b0


def _batch_size(source: _Source, batch: int | None) -> int:
    if batch is not None:
        return batch
    if source.dim is not None:
        return max(1, BATCH_VALUES // source.dim)
    return 1024  # a callable whose output dimension is not known yet


def _fit(source: _Source, classifier, n: int, rngs, batch: int | None):
    """Draw ``n`` training calls per input and fit ``classifier`` on ``a`` (label 1) against ``b`` (0).

    Outputs are drawn in batches straight into one ``(2 n, d)`` training matrix (no second copy).
    Returns ``(fitted, convergence warnings)``.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.utils.validation import has_fit_parameter

    estimator = check_classifier(classifier)
    if source.discrete:
        codes = [np.concatenate([source.draw(i, size, rngs[i]) for size in _sizes(source, n, batch)]) for i in (0, 1)]
        if isinstance(estimator, LogisticRegression) and has_fit_parameter(estimator, "sample_weight"):
            # A finite output space: the weighted distinct rows give logistic regression the same
            # loss as the duplicated rows, at cost O(K) instead of O(n).
            k = source.n_outputs
            counts = np.r_[np.bincount(codes[0], minlength=k), np.bincount(codes[1], minlength=k)]
            rows = np.arange(2 * k) % k
            y = np.r_[np.ones(k), np.zeros(k)]
            keep = counts > 0
            x = source.features(rows[keep])
            return count_convergence_warnings(lambda: estimator.fit(x, y[keep], sample_weight=counts[keep]))
        x = source.features(np.concatenate(codes))
    else:
        x = None
        row = 0
        for i in (0, 1):
            for size in _sizes(source, n, batch):
                out = source.features(source.draw(i, size, rngs[i]))
                if x is None:
                    x = np.empty((2 * n, out.shape[1]), dtype=out.dtype)
                x[row:row + size] = out
                row += size
    y = np.r_[np.ones(n), np.zeros(n)]
    return count_convergence_warnings(lambda: estimator.fit(x, y))


def _sizes(source: _Source, n: int, batch: int | None):
    done = 0
    while done < n:
        size = min(_batch_size(source, batch), n - done)
        done += size
        yield size


def _scorer(source: _Source, fitted=None, score_function=None) -> Callable[[np.ndarray], np.ndarray]:
    """Score function on *drawn batches*; higher means "more like input a".

    ``score_function`` sees the mechanism's outputs (one-hot rows for randomized response), a
    classifier sees :meth:`_Source.features` (float32 for product Laplace). A user's
    ``score_function`` and a classifier without a linear fast path are checked on every batch
    (:func:`epsaudit.scorers.check_scores`): one real score per row, no NaN; ``+inf`` and ``-inf``
    are valid scores (ties at an infinite threshold are broken with ``q`` like any tie).
    """
    if score_function is not None:
        def on_outputs(x):
            return check_scores(score_function(x), len(x), "score_function", allow_infinite=True)
    else:
        parts = _linear_parts(fitted)
        if parts is not None:
            w, b0 = parts
            if isinstance(source, _LaplaceSource):
                w, b0 = w.astype(np.float32), np.float32(b0)

            def on_features(f):
                return f @ w + b0
        else:
            def on_features(f):
                return check_scores(positive_scores(fitted, f), len(f), f"classifier {classifier_name(fitted)}",
                                    allow_infinite=True)

        def on_outputs(x):
            return on_features(source.features(x))

    if source.discrete:
        table = np.asarray(on_outputs(np.arange(source.n_outputs)) if score_function is None
                           else on_outputs(source.features(np.arange(source.n_outputs))), dtype=np.float64)
        return lambda codes: table[codes]
    return on_outputs


# ---------------------------------------------------------------------------------------------
# The attack
# ---------------------------------------------------------------------------------------------


def _stream_scores(source: _Source, which: int, n: int, rng, score, batch: int | None, per_batch: Callable) -> None:
    """Draw ``n`` calls of one input in batches and hand each batch's scores to ``per_batch``.

    For a finite output space the scores of the distinct outputs and their counts are passed
    (``per_batch(values, counts)``); otherwise one score per call (``per_batch(scores, None)``).
    """
    for size in _sizes(source, n, batch):
        out = source.draw(which, size, rng)
        if source.discrete:
            counts = np.bincount(out, minlength=source.n_outputs)
            per_batch(score(np.arange(source.n_outputs)), counts)
        else:
            per_batch(score(out), None)


class _Counter:
    """Final-stage firing counts of one attack ``score > t`` (ties at ``t`` counted apart)."""

    def __init__(self, t: float) -> None:
        self.t, self.above, self.equal = t, 0, 0

    def add(self, s: np.ndarray, counts: np.ndarray | None) -> None:
        above, equal = s > self.t, s == self.t
        if counts is None:
            self.above += int(np.count_nonzero(above))
            self.equal += int(np.count_nonzero(equal))
        else:
            self.above += int(counts[above].sum())
            self.equal += int(counts[equal].sum())

    def fired(self, q: float, ties: str, rng: np.random.Generator) -> float:
        if ties == "draw":
            return float(self.above + rng.binomial(self.equal, q))
        return self.above + q * self.equal


# Over 80 lines only through its docstring (14 options); the body is ~45 lines calling the stages below.
def dp_sniper(
    mechanism,
    a,
    b,
    calls: int,
    *,
    c: float = DEFAULT_C,
    classifier: Any = None,
    score_function: Callable[[np.ndarray], np.ndarray] | None = None,
    confidence: float = 0.95,
    n_certificates: int = 2,
    split: Sequence[float] = DEFAULT_SPLIT,
    max_train: int = DEFAULT_MAX_TRAIN,
    ties: str = "draw",
    enforce_c: bool = True,
    batch_size: int | None = None,
    check_reuse: bool = True,
    seed=0,
) -> tuple[EpsilonResult, EpsilonResult]:
    """DP-Sniper certificates for the fixed input pair ``(a, b)`` in both directions.

    Parameters
    ----------
    mechanism : Mechanism or callable
        An :class:`epsaudit.mechanisms.Mechanism` (``a``, ``b`` identity indices), or a callable
        ``mechanism(input, n, rng) -> array`` of shape ``(n, d)`` (or ``(n,)`` for ``d = 1``) with
        any inputs ``a``, ``b``; ``rng`` is a :class:`numpy.random.Generator` it must use for all
        randomness.
    a, b : input
        The two inputs (must differ).
    calls : int
        Budget: mechanism calls for the pair in total, both inputs and both directions
        (:func:`split_budget`). *Picture the Epsilon*, Appendix Table 5 uses 6.5e6 per row.
    c : float in (0, 1), default 0.01
        Target firing probability of the attack under the reference input.
    classifier : scikit-learn estimator, optional
        Probabilistic classifier (``predict_proba`` or ``decision_function``); default
        :func:`epsaudit.scorers.logistic_regression` (standardised features, then C = 1,
        lbfgs). Linear classifiers, and pipelines of ``StandardScaler`` steps ending in one, are
        scored by their decision function folded into one linear map (same ordering as their
        probability, no saturation).
    score_function : callable, optional
        A fixed score ``(n, d) -> (n,)`` (higher = more like ``a``), e.g. a mechanism's
        ``exact_score(a, b)`` or :func:`epsaudit.mechanisms.reachability_score`; then nothing is
        trained and the training budget goes to the final estimate. For randomized response it
        receives one-hot rows. Its output is checked on every batch: shape ``(n,)``, real, no
        NaN; ``+inf``/``-inf`` are allowed and order like any score.
    confidence : float in (0, 1), default 0.95
        Family-wise confidence of the ``n_certificates`` certificates reported together.
    n_certificates : int, default 2
        Bonferroni family size; each of the two one-sided bounds of a certificate is at
        ``(1 - confidence) / (2 n_certificates)``. The default covers the two directions of this
        call, so both hold together (and so does their maximum).
    split : (float, float, float)
        Budget fractions for training, threshold and final stages (see :func:`split_budget`).
    max_train : int
        Most training calls per input.
    ties : {"draw", "expected"}
        ``"draw"``: tied outputs fire with probability ``q``, drawn (integer, exactly binomial
        counts). ``"expected"``: the original's fractional count ``n_above + q n_tied``, rounded
        conservatively in the bounds; that count is not binomial (its variance is smaller), so the
        Clopper-Pearson level is not exact for it, though conservative in our simulations.
    enforce_c : bool, default True
        Floor the denominator's upper bound at ``c`` (caps the certificate at ``log(1/c)``).
    batch_size : int, optional
        Mechanism calls per streamed batch; default ``max(1, 2**18 // d)``.
    check_reuse : bool, default True
        For a callable mechanism: refuse (:class:`epsaudit.validation.ReusedRowsError`, a
        ``ValueError`` saying how many rows of which stage, input and batch) when threshold rows
        repeat training rows or final rows repeat training or threshold rows, exactly or (for
        ``d >= 4``) after L2-normalisation, and when rows repeat within the first stage -- a
        callable that ignores its ``rng`` returns the same rows every call, and a certificate
        from reused rows is void. Set False to declare that outputs repeat by design (a discrete
        or low-resolution mechanism) while every call draws fresh outputs from its ``rng``. The
        library's own mechanisms are never checked: their stages draw on independent child
        streams of ``seed``, and their outputs may repeat by design (one-hot rows, grid values in
        one dimension). ``settings["freshness"]`` records which applies.
    seed : int, stream key (tuple) or numpy.random.Generator
        Seed of every draw (seven independent child streams: training, threshold and final
        outputs of each input, and the tie draws).

    Returns
    -------
    (EpsilonResult, EpsilonResult)
        Certificates for ``a -> b`` and ``b -> a`` (route ``"dp_sniper"``, ``kind="certificate"``,
        ``delta=0``: pure DP; ``n`` = final calls per input). ``value = max(0, raw)``. Details:
        ``direction``, ``raw`` (unclamped log ratio, c floor applied when enforced),
        ``raw_without_c``, ``k_num``/``k_den`` (firings under the detected / reference input),
        ``n_num``/``n_den``, ``p_num_hat``/``p_den_hat``, ``num_lower``/``den_upper`` (the
        Clopper-Pearson bounds), ``threshold``, ``q``, ``threshold_tied``, ``calls``,
        ``n_train``/``n_threshold``/``n_final`` (per input), ``cap`` (:func:`attack_cap` at this
        size), ``convergence_warnings``.

    Raises
    ------
    ValueError
        If ``c`` or ``confidence`` is outside (0, 1), the budget is too small to split, ``ties``
        is unknown, ``a == b`` or an identity is invalid, the mechanism's outputs for ``a`` and
        ``b`` have mismatched shapes (or wrong row counts, complex or non-numeric values, NaN or
        inf), a callable mechanism does not take ``(input, n, rng)``, ``score_function`` (or the
        classifier's scores) is not one real number per row or holds NaN, the classifier is
        unusable, ``batch_size < 1``, ``check_reuse`` is not a bool or ``seed`` is invalid.
    epsaudit.validation.ReusedRowsError
        (a ``ValueError``) With ``check_reuse``: a callable mechanism's threshold or final rows
        repeat earlier rows, or its first stage repeats values; the message gives how many rows
        of which batch, stage and input, and of which earlier stage.

    References
    ----------
    Bichsel, Steffen, Bogunovic & Vechev (2021), "DP-Sniper: Black-Box Discovery of Differential
    Privacy Violations using Classifiers", IEEE S&P. *Picture the Epsilon*, Appendix Table 5.

    Examples
    --------
    >>> from epsaudit.mechanisms import RandomizedResponse
    >>> ab, ba = dp_sniper(RandomizedResponse(16, 2.0), 0, 1, 100_000, seed=0)  # exact epsilon 2
    >>> ab.details["direction"], ab.details["n_final"], round(ab.value, 3), round(ba.value, 3)
    ('a->b', 42500, 1.861, 1.948)
    """
    c = _check_c(c)
    _check_options(confidence, n_certificates, ties, batch_size, check_reuse, score_function, classifier)
    budget = split_budget(calls, split, max_train, train=score_function is None)
    alpha = bonferroni_alpha(int(n_certificates), float(confidence)) / 2  # each of a certificate's two one-sided bounds
    source = _source(mechanism, a, b, bool(check_reuse))
    streams = generators(seed, "dp-sniper", _STAGES)
    batch = int(batch_size) if batch_size is not None else None

    # 1. training (materialised: at most max_train calls per input)
    fitted, warned = None, 0
    if score_function is None:
        fitted, warned = _fit(source, classifier, budget.train, streams[0:2], batch)
    score = _scorer(source, fitted, score_function)
    # 2. thresholds, 3. final counts on fresh calls of both inputs
    thresholds = _thresholds(source, score, c, budget.threshold, streams[2:4], batch)
    counters = _final_counts(source, score, thresholds, budget.final, streams[4:6], batch)

    test_name = "fixed score function" if score_function is not None else classifier_name(check_classifier(classifier))
    settings = {"test": test_name, "c": c, "ties": ties, "enforce_c": bool(enforce_c), "split": tuple(_check_split(split)),
                "max_train": int(max_train), "calls": int(calls),
                "batch_size": _batch_size(source, batch),
                "seed": seed if isinstance(seed, numbers.Integral) else repr(seed), "n_certificates": int(n_certificates),
                "freshness": _freshness(source)}
    floor = c if enforce_c else None
    return _certificates(a, b, thresholds, counters, budget, ties=ties, tie_rng=streams[6], alpha=alpha, floor=floor,
                         confidence=float(confidence), n_certificates=int(n_certificates), settings=settings,
                         warned=warned)


def _check_options(confidence, n_certificates, ties, batch_size, check_reuse, score_function, classifier) -> None:
    """Refuse invalid options of :func:`dp_sniper` (in the order of its signature)."""
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real) or not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if isinstance(n_certificates, bool) or not isinstance(n_certificates, numbers.Integral) or n_certificates < 1:
        raise ValueError(f"n_certificates must be an integer >= 1, got {n_certificates!r}")
    if ties not in TIES:
        raise ValueError(f"ties must be one of {TIES}, got {ties!r}")
    if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) or batch_size < 1):
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if not isinstance(check_reuse, (bool, np.bool_)):
        raise ValueError(f"check_reuse must be True or False, got {check_reuse!r}")
    if score_function is not None and not callable(score_function):
        raise ValueError("score_function must be callable: (n, d) array -> (n,) scores")
    if score_function is None:
        check_classifier(classifier)


def _thresholds(source: _Source, score, c: float, n: int, rngs, batch: int | None) -> list[tuple[float, float, int, int]]:
    """Stage 2: ``(t, q, n_above, n_equal)`` per direction from ``n`` fresh calls of the reference input.

    ``a -> b`` is thresholded on ``M(b)`` with the score, ``b -> a`` on ``M(a)`` with the negated
    score (``rngs`` = the threshold streams of ``a`` and ``b``).
    """
    m = int(math.floor(c * n)) + 1
    tails = (_TopTail(m), _TopTail(m))  # index = direction
    source.stage = "threshold"
    _stream_scores(source, 1, n, rngs[1], score, batch, lambda s, k: tails[0].update(s, k))
    _stream_scores(source, 0, n, rngs[0], score, batch, lambda s, k: tails[1].update(-s, k))
    return [tail.threshold(c) for tail in tails]


def _final_counts(source: _Source, score, thresholds, n: int, rngs, batch: int | None) -> dict:
    """Stage 3: firing counts ``{(direction, input): _Counter}`` on ``n`` fresh calls of each input.

    Each direction's attack is counted on the outputs of both inputs (the final samples are shared).
    """
    counters = {(d, i): _Counter(thresholds[d][0]) for d in (0, 1) for i in (0, 1)}

    def counter_for(i):
        def add(s, k):
            counters[(0, i)].add(s, k)
            counters[(1, i)].add(-s, k)
        return add

    source.stage = "final"
    for i in (0, 1):
        _stream_scores(source, i, n, rngs[i], score, batch, counter_for(i))
    return counters


def _certificates(a, b, thresholds, counters, budget: SniperBudget, *, ties: str, tie_rng, alpha: float,
                  floor: float | None, confidence: float, n_certificates: int, settings: dict,
                  warned: int) -> tuple[EpsilonResult, EpsilonResult]:
    """Stage 4: break the ties, bound each direction (:func:`sniper_bound`) and build the two results.

    The tie draws come from ``tie_rng`` in a fixed order (``a -> b`` numerator, denominator, then
    ``b -> a``); ``floor`` is ``c`` when it is enforced, else ``None``.
    """
    cap = float(attack_cap(budget.final, alpha, floor))
    n = budget.final
    results = []
    for d, (num, den) in enumerate(((0, 1), (1, 0))):
        t, q, n_above, n_equal = thresholds[d]
        k_num = counters[(d, num)].fired(q, ties, tie_rng)
        k_den = counters[(d, den)].fired(q, ties, tie_rng)
        bound = sniper_bound(k_num, n, k_den, n, alpha, floor)
        unenforced = sniper_bound(k_num, n, k_den, n, alpha, None)
        details = {
            "direction": DIRECTIONS[d], "raw": bound["raw"], "raw_without_c": unenforced["raw"],
            "k_num": k_num, "k_den": k_den, "n_num": n, "n_den": n,
            "p_num_hat": k_num / n, "p_den_hat": k_den / n,
            "num_lower": bound["num_lower"], "den_upper": bound["den_upper"],
            "threshold": t, "q": q, "threshold_tied": n_equal, "calls": budget.calls,
            "n_train": budget.train, "n_threshold": budget.threshold, "n_final": n,
            "cap": cap, "convergence_warnings": warned,
        }
        results.append(EpsilonResult(
            value=bound["certificate"], kind="certificate", route=ROUTE, n=(n, n), pair=(a, b), delta=0.0,
            confidence=confidence, alpha_per_bound=alpha, bound="clopper-pearson",
            correction=f"bonferroni (union bound): 2 one-sided Clopper-Pearson bounds x {n_certificates} certificate(s)",
            settings=settings, details=details,
        ))
    return results[0], results[1]
