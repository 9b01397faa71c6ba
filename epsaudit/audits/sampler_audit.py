"""Samplers in the loop: an anytime-valid certificate that draws test rows until a stop rule fires.

:func:`certify_sampler` counts the errors of a test fixed on development draws (:func:`fit_sequential_test`) on
fresh draws of A and B, one at a time, until the running bound of a :class:`~epsaudit.bounds.SequentialCertificate`
stops; it is valid at whatever row it stops (Ville's inequality). Definitions: the book's methods chapter, section
"The anytime-valid certificate: test rows as they arrive".
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..bounds import SequentialCertificate
from .scorers import check_classifier, classifier_name
from ..protocol import generator
from ..validation import as_draw_ids, as_pair
from .roc_reserved import choose_threshold, fixed_score

__all__ = ["ALLOCATIONS", "FittedTest", "MechanismSampler", "certify_sampler", "fit_sequential_test"]

#: How :func:`certify_sampler` chooses the side of the next row (from the past alone).
ALLOCATIONS = ("alternate", "random")
Sampler = Callable[[], tuple[Any, Hashable]]


@dataclass(frozen=True)
class FittedTest:
    """A test fixed on development draws: a score, a threshold ("A" when score > threshold) and its hash.

    Attributes
    ----------
    score : callable ``(rows, part) -> numpy.ndarray``
        Scores of ``(r, d)`` rows, higher meaning "more A".
    threshold : float
    name : str
        The classifier's name, or ``"fixed score function"``.
    test_hash : str
        SHA-256 of the name, the threshold and the development scores, recorded before the first row.
    dev_ids : tuple of two arrays or None
        Draw ids of the development rows of A and of B.
    n_dev : tuple of int

    See Also
    --------
    fit_sequential_test, certify_sampler : fix it on development draws, certify it on fresh test draws.

    Examples
    --------
    >>> t = fit_sequential_test(np.ones((3, 1)), np.zeros((3, 1)), score_function=lambda x: x[:, 0])
    >>> t.threshold, t.says_a(np.array([[1.0], [0.0]])).tolist()
    (0.5, [True, False])
    """

    score: Callable[[np.ndarray, str], np.ndarray] = field(repr=False)
    threshold: float
    name: str
    test_hash: str
    dev_ids: tuple | None = field(default=None, repr=False)
    n_dev: tuple[int, int] = (0, 0)

    def says_a(self, rows: Any) -> np.ndarray:
        """Whether the test says "A" for each row, shape ``(r, d) -> (r,)`` bool."""
        x = np.asarray(rows, dtype=np.float64)
        return self.score(x.reshape(1, -1) if x.ndim == 1 else x, "test rows") > self.threshold


def fit_sequential_test(dev_a, dev_b, *, classifier: Any = None, score_function: Callable | None = None,
                        alpha: float = 0.05, delta: float = 0.0, dev_ids: tuple | None = None) -> FittedTest:
    """Fix a test on development draws the way the reserved-test certificate does.

    Parameters
    ----------
    dev_a, dev_b : array_like, shapes (n_A, d), (n_B, d)
        Development outputs of A and of B (never test rows).
    classifier : scikit-learn estimator, default=None
        Fitted on the development rows (default logistic regression); ignored with ``score_function``.
    score_function : callable ``(n, d) -> (n,)``, default=None
        A fixed score (e.g. a mechanism's exact likelihood ratio); nothing is learned.
    alpha : float, default=0.05
        Level of the split bound the threshold maximises on development scores (power only).
    delta : float, default=0.0
        Its delta.
    dev_ids : pair of array_like, default=None
        Draw ids of ``dev_a`` and ``dev_b``: test draws that repeat them are refused.

    Returns
    -------
    FittedTest

    Raises
    ------
    ValueError
        Bad samples (fewer than 2 rows, NaN, dimensions that differ), a bad classifier or score, draw ids not one
        per row.

    See Also
    --------
    certify_sampler : certifies the test on fresh draws.
    epsaudit.audits.roc_reserved.fixed_score, epsaudit.audits.choose_threshold : the reserved test's two steps.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> t = fit_sequential_test(rng.normal(3, 1, (40, 2)), rng.normal(0, 1, (40, 2)))
    >>> t.name, len(t.test_hash)
    ('StandardScaler() -> LogisticRegression(max_iter=1000)', 64)
    """
    da, db = as_pair(dev_a, dev_b)
    ids = None
    if dev_ids is not None:
        ids = (as_draw_ids(dev_ids[0], len(da), "dev_ids[0] (A)"), as_draw_ids(dev_ids[1], len(db), "dev_ids[1] (B)"))
    score, _ = fixed_score(da, db, classifier, score_function)
    sa, sb = score(da, "development rows of A"), score(db, "development rows of B")
    threshold = choose_threshold(sa, sb, alpha, delta)
    name = "fixed score function" if score_function is not None else classifier_name(check_classifier(classifier))
    digest = hashlib.sha256()
    for part in (name.encode(), np.float64(threshold).tobytes(), np.ascontiguousarray(sa, float).tobytes(),
                 np.ascontiguousarray(sb, float).tobytes()):
        digest.update(part)
    return FittedTest(score, float(threshold), name, digest.hexdigest(), ids, (len(da), len(db)))


class MechanismSampler:
    """Fresh outputs of one identity of a synthetic mechanism, one at a time, each with its draw id.

    Draw ``k`` is ``mechanism.sample(identity, 1, seed=(label, k))[0]``, ``label = "<name>:<identity>:<seed>"``,
    with draw id ``"<label>:<k>"``; calling the sampler returns the next ``(row, draw_id)``.

    Parameters
    ----------
    mechanism : epsaudit.mechanisms.Mechanism
    identity : int
    seed : int, default=0

    See Also
    --------
    certify_sampler : draws test rows from two of them.

    Examples
    --------
    >>> from epsaudit.audits import MechanismSampler
    >>> from epsaudit.mechanisms import RandomizedResponse
    >>> MechanismSampler(RandomizedResponse(4, 1.0), 2, seed=0)()[1]
    'randomized_response:2:0:0'
    """

    def __init__(self, mechanism: Any, identity: int, seed: int = 0) -> None:
        self.mechanism, self.identity, self.seed = mechanism, int(identity), int(seed)
        self.label = f"{getattr(mechanism, 'name', type(mechanism).__name__)}:{self.identity}:{self.seed}"
        self.drawn = 0

    def __call__(self) -> tuple[np.ndarray, str]:
        k = self.drawn
        self.drawn += 1
        return self.mechanism.sample(self.identity, 1, seed=(self.label, k))[0], f"{self.label}:{k}"

    def draw(self, n: int) -> tuple[np.ndarray, list[str]]:
        """``n`` fresh draws: rows ``(n, d)`` and their ids (e.g. development draws)."""
        pairs = [self() for _ in range(int(n))]
        return np.stack([p[0] for p in pairs]), [p[1] for p in pairs]


def _says_a(test: Any, threshold: float | None) -> Callable[[np.ndarray], bool]:
    if isinstance(test, FittedTest):
        if threshold is not None:
            raise ValueError("the threshold of a FittedTest was fixed on development draws; do not pass threshold")
        return lambda row: bool(test.says_a(row)[0])
    if not callable(test) or threshold is None:
        raise ValueError("test must be a FittedTest (fit_sequential_test), or a score function with a threshold")
    return lambda row: bool(np.asarray(test(np.asarray(row, float).reshape(1, -1))).reshape(-1)[0] > threshold)


def certify_sampler(sample_a: Sampler, sample_b: Sampler, test: Any, threshold: float | None = None, *,
                    alpha: float = 0.05, delta: float = 0.0, prior: Any = None, family: int = 1,
                    target: float | None = None, budget: int = 10_000, claim: float | None = None,
                    seed: int = 0, allocation: str = "alternate", dev_ids: Any = None, test_hash: str | None = None,
                    progress: bool = True) -> SequentialCertificate:
    """Draw test rows from two samplers until a stop rule fires; the anytime-valid certificate.

    Parameters
    ----------
    sample_a, sample_b : callable ``() -> (output, draw_id)``
        Fresh outputs of A (positives) and B (negatives), shape ``(d,)``, each with a hashable draw id
        (:class:`MechanismSampler` for a synthetic mechanism).
    test : FittedTest or callable
        The test fixed on development draws (:func:`fit_sequential_test`), or a score function
        ``(r, d) -> (r,)`` with ``threshold`` ("A" when score > threshold).
    threshold : float, default=None
        Only with a score function.
    alpha : float, default=0.05
        Family-wise error level (confidence ``1 - alpha``).
    delta : float, default=0.0
    prior : str, default=None
        The certificate's prior (default ``"B"``); fixed before the first row.
    family : int, default=1
        Pairs certified together (this one at ``alpha / family``).
    target, claim : float, default=None
        Stop when the bound reaches ``target`` / exceeds ``claim``.
    budget : int, default=10_000
        Most test rows to draw (both sides).
    seed : int, default=0
        Seed of the side allocation (``"random"``).
    allocation : {"alternate", "random"}, default="alternate"
        A then B then A ..., or a fair coin per row.
    dev_ids : pair of array_like, default=None
        Development draw ids (default: the FittedTest's); test draws repeating them are refused.
    test_hash : str, default=None
        Default: the FittedTest's hash.
    progress : bool, default=True
        A tqdm bar on stderr showing rows and the running bound.

    Returns
    -------
    SequentialCertificate
        With ``stop_reason``, ``bound``, ``result()`` and ``record()`` (every draw id, side, error and bound).

    Raises
    ------
    ValueError
        Bad options (no budget, an unknown allocation); a test that is neither a FittedTest nor a score function
        with a threshold.
    epsaudit.validation.ReusedRowsError
        A test draw that is a development draw or repeats an earlier test draw.

    See Also
    --------
    fit_sequential_test : the test it certifies, fixed on development draws.
    epsaudit.bounds.SequentialCertificate : what it returns.
    epsaudit.audits.reserved_test_certificate : the same test on a fixed number of test rows.

    Examples
    --------
    >>> from epsaudit.audits import MechanismSampler, certify_sampler, fit_sequential_test
    >>> from epsaudit.mechanisms import RandomizedResponse
    >>> rr = RandomizedResponse(4, 3.0)  # every pair exactly 3-DP: certify 2 with the exact score
    >>> a, b = MechanismSampler(rr, 0, seed=1), MechanismSampler(rr, 1, seed=2)
    >>> (xa, ia), (xb, ib) = a.draw(40), b.draw(40)                        # development draws
    >>> test = fit_sequential_test(xa, xb, score_function=rr.exact_score(0, 1), dev_ids=(ia, ib))
    >>> cert = certify_sampler(a, b, test, target=2.0, budget=3000, progress=False)
    >>> cert.stop_reason, cert.rows, round(cert.bound, 3)
    ('target reached', 385, 2.0)
    """
    if allocation not in ALLOCATIONS:
        raise ValueError(f"allocation must be one of {ALLOCATIONS}, got {allocation!r}")
    if budget is None:
        raise ValueError("certify_sampler needs a budget (most test rows to draw): the loop must end")
    says_a = _says_a(test, threshold)
    if isinstance(test, FittedTest):
        test_hash = test.test_hash if test_hash is None else test_hash
        if dev_ids is None and test.dev_ids is not None:
            dev_ids = {"A": test.dev_ids[0], "B": test.dev_ids[1]}
    cert = SequentialCertificate(alpha=alpha, delta=delta, prior="B" if prior is None else prior, family=family,
                                 target=target, budget=budget, claim=claim, test_hash=test_hash, dev_ids=dev_ids)
    rng = generator(seed, "sequential-allocation")
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=budget, desc="sequential certificate", unit="row")
    try:
        while cert.stop_reason is None:
            side = ("A" if cert.rows % 2 == 0 else "B") if allocation == "alternate" else "AB"[int(rng.integers(2))]
            output, draw_id = (sample_a if side == "A" else sample_b)()
            erred = says_a(output) != (side == "A")
            cert.update(side, erred, draw_id)
            if bar is not None:
                bar.update(1)
                bar.set_postfix(bound=f"{cert.bound:.3f}", fp=cert.fp, fn=cert.fn, refresh=False)
    finally:
        if bar is not None:
            bar.set_postfix(bound=f"{cert.bound:.3f}", stop=cert.stop_reason)
            bar.close()
    return cert
