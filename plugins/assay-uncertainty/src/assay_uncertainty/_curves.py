"""Sort-based kernels shared by the risk-coverage, rejection and ranking metrics (own numpy).

Everything here works on *tie groups*: examples with equal uncertainty enter a curve as a
whole. :func:`group_ends` returns, for each distinct uncertainty value in increasing
order, the number of examples at or below it (``K``) and the sum of ``values`` over them
(``S``). Where a quantity is needed at every ``k = 1..N`` (not just at group ends), the
cumulative sum is interpolated linearly inside a tie group (:func:`cumulative_at`): that
is the expectation over all orders of the tied examples, so no result depends on the
input order.

Speed (the reason this is our own code, see bench/bench_ue.py): for 0 / 1 values the
curve is built from two value sorts and one linear merge (no ``argsort`` of the whole
input); otherwise one ``argsort`` (any kind: ties are grouped afterwards), two gathers
and one cumulative sum.
"""

from __future__ import annotations

import numpy as np

__all__ = ["cumulative_at", "group_ends", "is_binary", "minmax_normalize"]


def is_binary(values: np.ndarray) -> bool:
    """True when every value is 0 or 1."""
    return bool(np.all((values == 0) | (values == 1)))


def group_ends(u: np.ndarray, values: np.ndarray, *, binary: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Tie-group ends of ``u`` in increasing order, with cumulative counts and sums of ``values``.

    Returns
    -------
    K : int64 array, shape (G,)
        ``K[g]`` = number of examples with ``u <= v_g`` (the ``g``-th distinct value).
    S : float64 array, shape (G,)
        ``S[g]`` = sum of ``values`` over those examples.
    """
    n = u.size
    if binary is None:
        binary = is_binary(values)
    if binary:
        us = np.sort(u)
        starts = np.flatnonzero(us[1:] != us[:-1]) + 1  # first index of every group but the first
        K = np.empty(starts.size + 1, dtype=np.int64)
        K[:-1] = starts
        K[-1] = n
        uf = np.sort(u[values.astype(bool)])
        nf = uf.size
        if nf == 0:
            return K, np.zeros(K.size)
        if nf == n:
            return K, K.astype(np.float64)
        # Stable merge of two sorted runs: an entry of `us` lands after every smaller entry
        # of `uf` and before the equal ones, so (merged position - own index) counts the
        # ones strictly below it.
        merged = np.argsort(np.concatenate((us, uf)), kind="stable")
        pos = np.flatnonzero(merged < n)
        S = np.empty(K.size, dtype=np.float64)
        S[:-1] = pos[starts] - starts
        S[-1] = nf
        return K, S
    order = np.argsort(u)  # any kind: the ties are grouped just below
    us = u[order]
    cum = np.cumsum(values[order], dtype=np.float64)
    starts = np.flatnonzero(us[1:] != us[:-1]) + 1
    K = np.empty(starts.size + 1, dtype=np.int64)
    K[:-1] = starts
    K[-1] = n
    return K, cum[K - 1]


def cumulative_at(k: np.ndarray, K: np.ndarray, S: np.ndarray) -> np.ndarray:
    """Expected cumulative sum over the ``k`` most confident examples (linear inside tie groups)."""
    return np.interp(k, np.concatenate(([0], K)), np.concatenate(([0.0], S)))


def minmax_normalize(q: np.ndarray) -> np.ndarray | None:
    """``(q - min) / (max - min)``; None for a constant ``q`` (the caller decides: NaN + warning)."""
    lo, hi = q.min(), q.max()
    if hi == lo:
        return None
    if lo == 0 and hi == 1:
        return q
    return (q - lo) / (hi - lo)
