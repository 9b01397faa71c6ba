"""Classifiers that score one embedding for "came from identity A" (ROC-HT routes, DP-Sniper), and their checks.

Any scikit-learn estimator with ``predict_proba`` or ``decision_function`` may be passed. The default,
:func:`logistic_regression`, standardises every feature first, so the learned test does not depend on the
embedding's units (an L2 penalty with ``C = 1`` on raw features is scale-dependent);
:func:`paper_logistic_regression` is the paper's exact learner; :func:`shrinkage_lda` a whitening alternative.
The ROC-HT routes fit the two logistic regressions for many pairs at once
(:mod:`epsaudit.audits._batched_logistic`; ``solver="sklearn"`` fits them one by one).
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

    *Picture the Epsilon*, Section IV ("ROC-HT configuration"). Not scale-free: on rows rescaled by a small
    factor it predicts 0.5 everywhere; use :func:`logistic_regression` unless reproducing the paper's numbers.

    See Also
    --------
    logistic_regression, shrinkage_lda : the default (standardised features) and a linear alternative.

    Examples
    --------
    >>> paper_logistic_regression()
    LogisticRegression(max_iter=1000)
    """
    return LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000)


def logistic_regression() -> Pipeline:
    """The default learned test: ``make_pipeline(StandardScaler(), paper_logistic_regression())``.

    The scaler is fitted on each fit's training rows only; the test is invariant to each feature's scale.

    See Also
    --------
    paper_logistic_regression, shrinkage_lda : the paper's learner on raw features and a linear alternative.

    Examples
    --------
    >>> classifier_name(logistic_regression())
    'StandardScaler() -> LogisticRegression(max_iter=1000)'
    """
    return make_pipeline(StandardScaler(), paper_logistic_regression())


def shrinkage_lda() -> LinearDiscriminantAnalysis:
    """``LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto")``: Ledoit-Wolf shrinkage (Ledoit & Wolf 2004).

    It estimates the whitening direction ``S^-1 (mu_A - mu_B)`` of an anisotropic Gaussian's exact test, which
    an L2-penalised logistic regression does not; scale-free as it is.

    See Also
    --------
    logistic_regression, paper_logistic_regression : the default learned test and the paper's learner.

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
    """Scores of ``x`` for label 1 (identity A): ``predict_proba[:, 1]``, else ``decision_function``.

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
        What produced the scores, for the message.
    allow_infinite : bool, default=False
        Accept ``+inf``/``-inf`` (a likelihood ratio may be infinite); NaN is never accepted.

    Returns
    -------
    numpy.ndarray, shape (n_rows,), float64

    Raises
    ------
    ValueError
        If the output is not numeric, not of shape ``(n_rows,)``, or holds NaN (or inf unless ``allow_infinite``);
        the message names the first bad row.

    See Also
    --------
    positive_scores : the scores of a fitted classifier.

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
    """Run ``fn()`` and count the scikit-learn ``ConvergenceWarning``s it raises, without printing them (results
    report the count as ``convergence_warnings``: lbfgs may stop at the paper's ``max_iter=1000``).

    Parameters
    ----------
    fn : callable ``() -> T``

    Returns
    -------
    (T, int)
        What ``fn`` returned and how many ``ConvergenceWarning`` it raised (other warnings are re-emitted).

    See Also
    --------
    logistic_regression : the default learner whose fits may not converge.

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
