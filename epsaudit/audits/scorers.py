"""Classifiers that score one embedding for "came from identity A" (ROC-HT routes, DP-Sniper).

Any scikit-learn estimator with ``predict_proba`` or ``decision_function`` may be passed to the
routes that learn a test. The default, :func:`logistic_regression`, standardises every feature
before the paper's logistic regression, so the learned test does not depend on the units of the
embedding: an L2 penalty with ``C = 1`` on raw features is scale-dependent, and rows rescaled by
1e-12 would leave it predicting 0.5 everywhere (no power at all). :func:`paper_logistic_regression`
is the paper's exact learner (no standardisation), which the known-epsilon benchmark uses where it
reproduces the paper's learned-test numbers; :func:`shrinkage_lda` is a whitening alternative.

The two logistic regressions are fitted by the ROC-HT routes for many pairs at once
(:mod:`epsaudit.audits._batched_logistic`: scikit-learn's objective and L-BFGS-B iterations, vectorised over
folds and pairs, the same scores to rounding); ``solver="sklearn"`` on a route, or
``epsaudit.audits._batched_logistic.use_solver("sklearn")``, fits them one by one with scikit-learn.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
from sklearn.base import clone
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler

T = TypeVar("T")


def paper_logistic_regression() -> LogisticRegression:
    """The paper's learner: ``LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000)`` on raw features.

    *Picture the Epsilon*, Section IV ("ROC-HT configuration") fits it on L2-normalised
    embeddings. Its L2 penalty is not scale-free: on rows rescaled by a small factor it predicts
    0.5 everywhere. Use :func:`logistic_regression` unless reproducing the paper's numbers.

    See Also
    --------
    logistic_regression : the default: the same learner after standardising each feature.
    shrinkage_lda : a linear alternative with a shrunk covariance.

    Examples
    --------
    >>> paper_logistic_regression()
    LogisticRegression(max_iter=1000)
    """
    return LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000)


def logistic_regression() -> Pipeline:
    """The default learned test: standardise each feature, then the paper's logistic regression.

    ``make_pipeline(StandardScaler(), LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000))``:
    the scaler is fitted on the training rows of each fit (development rows, or the training
    folds), so nothing of the test rows enters. Standardising makes the test invariant to the
    scale of the embedding (per feature), unlike :func:`paper_logistic_regression`.

    See Also
    --------
    paper_logistic_regression : the paper's learner on raw features.
    shrinkage_lda : a linear alternative with a shrunk covariance.
    check_classifier : the check that falls back to this learner.

    Examples
    --------
    >>> classifier_name(logistic_regression())
    'StandardScaler() -> LogisticRegression(max_iter=1000)'
    """
    return make_pipeline(StandardScaler(), paper_logistic_regression())


def shrinkage_lda() -> LinearDiscriminantAnalysis:
    """Linear discriminant analysis with Ledoit-Wolf shrinkage of the pooled covariance.

    ``LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto")`` (Ledoit & Wolf 2004): it
    estimates the whitening direction ``S^-1 (mu_A - mu_B)`` that the exact test of an
    anisotropic Gaussian uses, which plain logistic regression with an L2 penalty does not.
    Scale-free as it is: scikit-learn standardises the features before the Ledoit-Wolf estimate
    and scales the covariance back.

    See Also
    --------
    logistic_regression : the default learned test.
    paper_logistic_regression : the paper's learner.

    Examples
    --------
    >>> shrinkage_lda()
    LinearDiscriminantAnalysis(shrinkage='auto', solver='lsqr')
    """
    return LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto")


def check_classifier(classifier: Any) -> Any:
    """Return an unfitted clone of ``classifier`` (default: :func:`logistic_regression`).

    Parameters
    ----------
    classifier : scikit-learn estimator or None

    Returns
    -------
    scikit-learn estimator
        Unfitted; the caller's object is never modified.

    Raises
    ------
    ValueError
        If the estimator has neither ``predict_proba`` nor ``decision_function``.

    See Also
    --------
    logistic_regression : the default it falls back to.
    classifier_name : the name a result records.
    positive_scores : the scores of a fitted classifier.

    Examples
    --------
    >>> classifier_name(check_classifier(None))
    'StandardScaler() -> LogisticRegression(max_iter=1000)'
    """
    if classifier is None:
        return logistic_regression()
    if not (hasattr(classifier, "predict_proba") or hasattr(classifier, "decision_function")):
        raise ValueError(
            f"classifier {classifier!r} has neither predict_proba nor decision_function; "
            "pass a scikit-learn probabilistic or decision-function estimator"
        )
    return clone(classifier)


def positive_scores(fitted: Any, x: np.ndarray) -> np.ndarray:
    """Scores of ``x`` for the positive class (label 1 = identity A), higher meaning "more A".

    Uses ``predict_proba[:, 1]`` when available, else ``decision_function``.

    Parameters
    ----------
    fitted : fitted scikit-learn estimator trained with labels {0, 1}
    x : ndarray, shape (n, d)

    Returns
    -------
    ndarray, shape (n,)

    Raises
    ------
    ValueError
        If the scores are not one finite number per row (:func:`check_scores`).

    See Also
    --------
    check_scores : the check of its output.
    check_classifier : the classifier it scores with.

    Examples
    --------
    >>> x = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> fitted = paper_logistic_regression().fit(x, [0, 0, 1, 1])
    >>> bool(positive_scores(fitted, np.array([[3.0]]))[0] > 0.5)
    True
    """
    if hasattr(fitted, "predict_proba"):
        classes = list(fitted.classes_)
        scores = fitted.predict_proba(x)[:, classes.index(1)]
    else:
        scores = fitted.decision_function(x)
    return check_scores(scores, len(x), f"classifier {classifier_name(fitted)}")


def check_scores(scores: Any, n_rows: int, what: str, *, allow_infinite: bool = False) -> np.ndarray:
    """Check the output of a scorer (a classifier or a user's ``score_function``): one finite score per row.

    Parameters
    ----------
    scores : array_like
        What the scorer returned for ``n_rows`` rows.
    n_rows : int
        Rows it was given.
    what : str
        What produced the scores, for the message (e.g. ``"score_function on the test rows of
        identity 'A'"``).
    allow_infinite : bool, default=False
        Accept ``+inf``/``-inf`` (a likelihood ratio may be infinite where one distribution has
        no mass); NaN is never accepted.

    Returns
    -------
    numpy.ndarray, shape (n_rows,), float64

    Raises
    ------
    ValueError
        If the output is not numeric, does not have shape ``(n_rows,)``, or holds NaN (or an
        infinite value when ``allow_infinite`` is False); the message names the first bad row.

    See Also
    --------
    positive_scores : the scores of a fitted classifier.
    check_classifier : the check of the classifier itself.

    Examples
    --------
    >>> check_scores([0.2, 0.7], 2, "demo")
    array([0.2, 0.7])
    >>> check_scores([[0.2], [0.7]], 2, "demo")
    Traceback (most recent call last):
    ...
    ValueError: demo returned an array of shape (2, 1); expected shape (2,): one score per row
    """
    try:
        arr = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} returned {type(scores).__name__} values that are not numbers ({exc}); "
                         f"expected an array of shape ({n_rows},): one score per row") from None
    if arr.shape != (n_rows,):
        raise ValueError(f"{what} returned an array of shape {arr.shape}; expected shape ({n_rows},): "
                         "one score per row")
    bad = np.isnan(arr) if allow_infinite else ~np.isfinite(arr)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        kind = "NaN" if allow_infinite else "NaN or infinite"
        raise ValueError(f"{what} returned {int(bad.sum())} {kind} score(s) (first at row {row}: {arr[row]}); "
                         f"expected {'numbers (+/-inf allowed)' if allow_infinite else 'finite numbers'}")
    return arr


def classifier_name(classifier: Any) -> str:
    """Short printable name of an estimator: its repr on one line; a Pipeline's steps joined by ``->``.

    See Also
    --------
    check_classifier : the check of the classifier it names.

    Examples
    --------
    >>> classifier_name(paper_logistic_regression())
    'LogisticRegression(max_iter=1000)'
    """
    if isinstance(classifier, Pipeline):
        return " -> ".join(classifier_name(step) for _, step in classifier.steps)
    return " ".join(repr(classifier).split())


def count_convergence_warnings(fn: Callable[[], T]) -> tuple[T, int]:
    """Run ``fn()`` and count the scikit-learn ``ConvergenceWarning``s it raises, without printing them.

    The paper's logistic regression stops at ``max_iter=1000``; on badly scaled data (the
    anisotropic benchmark) lbfgs may stop there. We keep the paper's setting and report the count
    in each result's statistics (``convergence_warnings``) instead of flooding the output.

    Parameters
    ----------
    fn : callable ``() -> T``

    Returns
    -------
    value : T
        What ``fn`` returned.
    count : int
        How many ``ConvergenceWarning`` were raised (other warnings are re-emitted).

    See Also
    --------
    logistic_regression : the default learner whose fits may not converge.
    check_classifier : the classifier that is fitted.

    Examples
    --------
    >>> count_convergence_warnings(lambda: 42)
    (42, 0)
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        value = fn()
    relevant = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    for w in caught:  # re-emit anything else
        if not issubclass(w.category, ConvergenceWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return value, len(relevant)
