"""DP-Sniper's call budget: constants and the split into training, threshold and final stages."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Sequence

ROUTE = "dp_sniper"
#: Target firing probability of the attack under the reference input (Bichsel et al. default).
DEFAULT_C = 0.01
#: Fractions of the call budget for training, threshold and final stages (each split evenly
#: between the two inputs).
DEFAULT_SPLIT: tuple[float, float, float] = (0.1, 0.05, 0.85)
#: Most training outputs per input; beyond it the budget goes to the final estimate
#: (at d = 512 this bounds the training matrix to 2 * 1e5 * 512 float32 values, 410 MB).
DEFAULT_MAX_TRAIN = 100_000
#: Values (calls x output dimension) per streamed batch: 2**18 float32 values = 1 MiB (stays in
#: cache across the sampling passes; larger batches were slower).
BATCH_VALUES = 2**18
TIES = ("draw", "expected")
DIRECTIONS = ("a->b", "b->a")



@dataclass(frozen=True)
class SniperBudget:
    """Mechanism calls per input and stage; ``calls`` is the total over both inputs.

    Attributes
    ----------
    train, threshold, final : int
        Calls of *each* input in the training, threshold and final stages.
    calls : int
        ``2 * (train + threshold + final)`` (one call is left unused when the budget is odd).

    Examples
    --------
    >>> SniperBudget(train=50, threshold=25, final=425).calls
    1000
    """

    train: int
    threshold: int
    final: int

    @property
    def calls(self) -> int:
        return 2 * (self.train + self.threshold + self.final)


def split_budget(calls: int, split: Sequence[float] = DEFAULT_SPLIT, max_train: int = DEFAULT_MAX_TRAIN,
                 *, train: bool = True) -> SniperBudget:
    """Split a budget of mechanism calls into training, threshold and final stages.

    Each input gets ``calls // 2`` calls: ``floor(split[0] * calls/2)`` for training (at most
    ``max_train``; the surplus goes to the final stage), ``floor(split[1] * calls/2)`` for the
    threshold and the rest for the final estimate.

    Parameters
    ----------
    calls : int
        Total mechanism calls for the pair, both inputs and both directions together.
    split : (float, float, float)
        Positive fractions for training, threshold and final stages, summing to 1.
    max_train : int, >= 2
        Most training calls per input.
    train : bool, keyword-only
        False when a fixed score function replaces the classifier: no training calls, and the
        training fraction goes to the final stage.

    Returns
    -------
    SniperBudget

    Raises
    ------
    ValueError
        If ``calls`` is not a positive integer, ``split`` is not three positive fractions summing
        to 1, ``max_train < 2``, or the budget is too small to split (fewer than 2 training, 1
        threshold or 1 final call per input).

    Examples
    --------
    >>> split_budget(1_000_000)  # 10% / 5% / 85% of the 500,000 calls per input
    SniperBudget(train=50000, threshold=25000, final=425000)
    >>> split_budget(1_000, train=False)  # a fixed score: no training stage
    SniperBudget(train=0, threshold=25, final=475)
    """
    if isinstance(calls, bool) or not isinstance(calls, numbers.Integral) or calls < 1:
        raise ValueError(f"calls must be a positive integer (mechanism calls for the pair), got {calls!r}")
    fractions = _check_split(split)
    if isinstance(max_train, bool) or not isinstance(max_train, numbers.Integral) or max_train < 2:
        raise ValueError(f"max_train must be an integer >= 2, got {max_train!r}")
    per_input = int(calls) // 2
    n_train = int(math.floor(fractions[0] * per_input)) if train else 0
    n_threshold = int(math.floor(fractions[1] * per_input))
    n_final = per_input - n_train - n_threshold
    if (train and n_train < 2) or n_threshold < 1 or n_final < 1:
        need = "2 training, " if train else ""
        raise ValueError(
            f"calls = {calls} is too small to split with split = {tuple(fractions)}: each input gets "
            f"{per_input} calls -> {n_train} training, {n_threshold} threshold and {n_final} final "
            f"calls; need at least {need}1 threshold and 1 final call per input"
        )
    if n_train > max_train:
        n_final += n_train - int(max_train)
        n_train = int(max_train)
    return SniperBudget(n_train, n_threshold, n_final)


def _check_split(split) -> tuple[float, float, float]:
    try:
        fractions = tuple(float(s) for s in split)
    except (TypeError, ValueError):
        raise ValueError(f"split must be three fractions (train, threshold, final), got {split!r}") from None
    if len(fractions) != 3 or any(not (0.0 < s < 1.0) for s in fractions) or abs(sum(fractions) - 1.0) > 1e-9:
        raise ValueError(
            f"split must be three fractions in (0, 1) for (train, threshold, final) summing to 1, got {split!r}"
        )
    return fractions  # type: ignore[return-value]
