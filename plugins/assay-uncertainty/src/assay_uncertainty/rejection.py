"""Prediction-rejection ratio (PRR), LM-Polygraph's rejection-curve metric, with a closed-form random baseline.

Definition (CONVENTIONS.md, "Rejection"): normalise quality by min-max (``q~``); order the
examples by increasing uncertainty; ``M_k`` = mean of ``q~`` over the ``k`` most confident
(interpolated inside tie groups, so ties never depend on the input order); with
``R = floor(max_rejection * N)`` rejection levels,

    PRR_raw = mean of M_k for k = N - R + 1 .. N        (rejecting 0 .. R - 1 examples)

The oracle is the same area with the examples ordered by decreasing quality; the random
baseline is ``mean(q~)`` exactly (the expected ``M_k`` of a random order, for every ``k``;
LM-Polygraph estimates it from sampled permutations). Normalised:
``(raw - random) / (oracle - random)``, and the raw value when oracle equals random.

Reference: Malinin & Gales 2021 (PRR); Vashurin et al. 2024 (LM-Polygraph benchmark).
"""

from __future__ import annotations

import math

import attrs
import numpy as np

from assay.validation import check_bool, check_number, undefined_metric
from assay_uncertainty._curves import cumulative_at, group_ends, is_binary, minmax_normalize
from assay_uncertainty._xp import TensorUEMetric, check_ue_tensors, device, is_tensor, mean, namespace

__all__ = ["PRR", "PRRScores", "prr_scores"]


@attrs.frozen
class PRRScores:
    """The areas of one PRR computation: model (``raw``), ``oracle``, ``random``, and ``normalized``."""

    raw: float
    oracle: float
    random: float
    normalized: float


def prr_scores(u: np.ndarray, q: np.ndarray, *, max_rejection: float = 1.0) -> PRRScores:
    """Raw, oracle, random and normalised PRR of validated 1-D arrays or tensors (NaN + warning when undefined)."""
    n = u.shape[0]
    nan = PRRScores(math.nan, math.nan, math.nan, math.nan)
    if n == 0:
        undefined_metric("prr: empty input; NaN.")
        return nan
    qn = minmax_normalize(q)
    if qn is None:
        undefined_metric("prr: quality is constant, so rejection cannot change it (min-max normalisation "
                         "is undefined); NaN.")
        return nan
    levels = math.floor(max_rejection * n + 1e-9)
    if levels == 0:
        undefined_metric(f"prr: max_rejection={max_rejection} leaves no rejection level for {n} examples; NaN.")
        return nan
    binary = is_binary(qn)
    xp = namespace(qn)
    k = xp.arange(n - levels + 1, n + 1, dtype=xp.float64, device=device(qn))
    K, S = group_ends(u, qn, binary=binary)
    cum = S[n - levels:] if K.shape[0] == n else cumulative_at(k, K, S)  # no ties: S holds every k
    raw = float(mean(cum / k))
    if binary:
        ones = float(S[-1])
        oracle = float(mean(xp.clip(k, max=ones) / k))
    else:
        # the k best = the total minus the n - k worst (ascending cumulative sums, read backwards)
        asc = xp.cumulative_sum(xp.sort(qn))
        # sum of the n - k smallest, for n - k = levels - 1 .. 0
        worst = xp.concat((xp.flip(asc[:levels - 1]), xp.zeros(1, dtype=asc.dtype, device=device(asc))))
        oracle = float(mean((asc[-1] - worst) / k))
    random = float(mean(qn))
    if abs(oracle - random) <= 1e-12 * max(1.0, abs(random)):
        normalized = raw
    else:
        normalized = (raw - random) / (oracle - random)
    return PRRScores(raw, oracle, random, normalized)


class PRR(TensorUEMetric):
    r"""Prediction-rejection area (LM-Polygraph); higher is better.

    Parameters
    ----------
    max_rejection : float, default 1.0
        The largest fraction of examples rejected; ``R = floor(max_rejection * N)``
        rejection levels (0 .. R - 1 examples rejected).
    normalize : bool, default False
        False: the raw area ``mean_{k=N-R+1..N} M_k`` (LM-Polygraph's ``prr`` before
        normalisation). True: ``(raw - random) / (oracle - random)`` (the raw value when
        oracle equals random), with ``random = mean(q~)`` in closed form.

    Notes
    -----
    Constant quality or ``R = 0`` gives NaN with a warning. The metric returns two named
    scores (``extra_scores``): ``prr`` (raw, or normalised with ``normalize=True``) and
    ``prr_normalized``; ``UEManager`` stores both, with their intervals.

    Examples
    --------
    >>> round(PRR(normalize=True)([0.1, 0.2, 0.3, 0.4], [1, 1, 1, 0]), 6)
    1.0
    >>> sorted(PRR().all_scores([0.1, 0.2, 0.3, 0.4], [1, 1, 1, 0]))
    ['prr', 'prr_normalized']
    """

    name = "prr"
    higher_is_better = True
    extra_scores = ("prr_normalized",)

    def __init__(self, *, max_rejection: float = 1.0, normalize: bool = False) -> None:
        super().__init__()
        self.max_rejection = check_number(max_rejection, "max_rejection", low=0.0, high=1.0, closed="right",
                                          owner=self.name)
        self.normalize = check_bool(normalize, "normalize", owner=self.name)

    def scores(self, uncertainty, quality) -> PRRScores:
        """All four areas at once: ``raw``, ``oracle``, ``random`` and ``normalized``."""
        from assay.uncertainty.base import check_ue_inputs

        if is_tensor(uncertainty) or is_tensor(quality):
            u, q = check_ue_tensors(uncertainty, quality, name=self.name)
        else:
            u, q = check_ue_inputs(uncertainty, quality, name=self.name)
        return prr_scores(u, q, max_rejection=self.max_rejection)

    def _scores(self, u: np.ndarray, q: np.ndarray) -> dict[str, float]:
        s = prr_scores(u, q, max_rejection=self.max_rejection)
        return {self.main_score: s.normalized if self.normalize else s.raw, "prr_normalized": s.normalized}
