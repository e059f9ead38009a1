"""Sort-based kernels shared by the risk-coverage, rejection and ranking metrics (own numpy).

Everything here works on *tie groups*: examples with equal uncertainty enter a curve as a
whole. :func:`group_ends` returns, for each distinct uncertainty value in increasing
order, the number of examples at or below it (``K``) and the sum of ``values`` over them
(``S``). Where a quantity is needed at every ``k = 1..N`` (not just at group ends), the
cumulative sum is interpolated linearly inside a tie group (:func:`cumulative_at`): that
is the expectation over all orders of the tied examples, so no result depends on the
input order.

Torch tensors (on any device) take :func:`assay_uncertainty._xp.group_ends_sorted`, a
stable sort on the device; everything after the sort is written once against the array
namespace (``_xp``) and runs on either.

Speed (the reason this is our own code, see bench/bench_ue.py): for 0 / 1 values the
curve is built from two value sorts and one linear merge (no ``argsort`` of the whole
input); otherwise one value sort of 64-bit keys carrying the index (no ``argsort``, see
:func:`_group_ends_keyed`), one gather and one cumulative sum.
"""

from __future__ import annotations

import numpy as np

from assay_uncertainty._xp import device, f64, group_ends_sorted, interp, is_tensor, namespace, scalar

__all__ = ["cumulative_at", "group_ends", "is_binary", "minmax_normalize"]


def is_binary(values: np.ndarray) -> bool:
    """True when every value is 0 or 1 (NaN is not)."""
    xp = namespace(values)
    return int(xp.count_nonzero(values)) == int(xp.count_nonzero(values == 1))


def group_ends(u: np.ndarray, values: np.ndarray, *, binary: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Tie-group ends of ``u`` in increasing order, with cumulative counts and sums of ``values``.

    Returns
    -------
    K : int64 array, shape (G,)
        ``K[g]`` = number of examples with ``u <= v_g`` (the ``g``-th distinct value).
    S : float64 array, shape (G,)
        ``S[g]`` = sum of ``values`` over those examples.
    """
    if is_tensor(u):  # torch, on u's device: one stable sort (the same groups and sums, see _xp)
        return group_ends_sorted(u, values)
    n = u.size
    if binary is None:
        binary = is_binary(values)
    if binary and n:
        lo = u.min()
        if lo >= 0:
            return _group_ends_packed(u, values)
        if u.max() <= 0:  # u = -confidence (torch-uncertainty's users): the packed sort of -u, read backwards
            return _mirrored(*_group_ends_packed(-u, values), n)
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
    if n > 1:
        out = _group_ends_keyed(u, values)
        if out is not None:
            return out
    order = np.argsort(u)  # any kind: the ties are grouped just below
    us = u[order]
    cum = np.cumsum(values[order], dtype=np.float64)
    starts = np.flatnonzero(us[1:] != us[:-1]) + 1
    K = np.empty(starts.size + 1, dtype=np.int64)
    K[:-1] = starts
    K[-1] = n
    return K, cum[K - 1]


_SIGN = np.uint64(1 << 63)


def _group_ends_keyed(u: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`group_ends` for any values with one value sort instead of an ``argsort``.

    The 64-bit key of an example is the order-preserving bit pattern of its ``u`` with the
    low ``b`` bits replaced by its index (``2**b >= N``). Sorted (SIMD), the keys order the
    examples by ``u`` except inside runs of equal high bits: ties, and distinct values that
    agree in all but the low ``b`` bits. Only the runs are looked at again: ``u`` is gathered
    for them, runs out of order are sorted exactly (``lexsort``), and tie groups are split
    where ``u`` changes. So the order is that of ``u`` (ties in index order) and ``values``
    are summed in it, as after an ``argsort``. None when ``u`` holds NaN (the caller argsorts).
    """
    n = u.size
    u = np.ascontiguousarray(u, dtype=np.float64)
    b = max(1, (n - 1).bit_length())
    low = (1 << b) - 1
    lo = u.min()
    if lo >= 0:  # non-negative: the bits order like the values once the sign bit (-0.0) is cleared
        key = u.view(np.uint64) & np.uint64(~low & ((1 << 63) - 1))
    elif np.isnan(lo):
        return None
    else:  # flip every bit of a negative number, only the sign bit of a non-negative one
        u = u + 0.0  # -0.0 -> 0.0, so that equal values get equal keys
        key = (u.view(np.int64) >> 63).view(np.uint64)
        key |= _SIGN
        key ^= u.view(np.uint64)
        key &= np.uint64(~low & ((1 << 64) - 1))
    key |= np.arange(n, dtype=np.uint64)
    key.sort()
    order = key.view(np.int64) & low
    key >>= np.uint64(b)  # the high bits
    eq = key[1:] == key[:-1]
    if eq.any():
        run = np.zeros(n, dtype=bool)
        run[1:] = eq
        run[:-1] |= eq
        pos = np.flatnonzero(run)  # the members of the runs, run after run
        us = u[order[pos]]
        same = key[pos[1:]] == key[pos[:-1]]  # consecutive members of one run
        bad = same & (us[1:] < us[:-1])
        if bad.any():  # sort the runs out of order by u (stable: ties keep the index order)
            rid = np.cumsum(np.concatenate(([0], ~same)))
            fix = np.zeros(rid[-1] + 1, dtype=bool)
            fix[rid[1:][bad]] = True
            sel = np.flatnonzero(fix[rid])
            sub = sel[np.lexsort((us[sel], rid[sel]))]
            order[pos[sel]] = order[pos[sub]]
            us[sel] = us[sub]
        eq[pos[:-1][same]] = us[1:][same] == us[:-1][same]  # inside a run: a boundary where u changes
    cum = np.cumsum(values[order], dtype=np.float64)
    starts = np.flatnonzero(~eq)
    if starts.size == n - 1:  # no ties: a group per example
        return np.arange(1, n + 1, dtype=np.int64), cum
    K = np.empty(starts.size + 1, dtype=np.int64)
    K[:-1] = starts + 1
    K[-1] = n
    return K, cum[K - 1]


def _group_ends_packed(u: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Binary values, non-negative ``u``: one value sort of 64-bit keys ``(bits(u) << 1) | value``.

    For non-negative floats the IEEE bit pattern orders like the number, and its sign bit
    is free (``-0.0`` and ``0.0`` both become key 0 after the shift), so the low bit can
    carry the 0 / 1 value and a plain (SIMD) sort replaces an ``argsort``.
    """
    n = u.size
    key = np.ascontiguousarray(u, dtype=np.float64).view(np.uint64) << np.uint64(1)
    key |= (values != 0).view(np.uint8)  # the 0 / 1 value in the low bit (a bool test: no float -> int cast)
    key.sort()
    ones = key.view(np.int64) & 1  # (a view, not astype: the uint64 -> int64 cast is slow)
    key >>= np.uint64(1)
    new_group = key[1:] != key[:-1]
    if new_group.all():  # no ties: a group per example (the float64 counts are exact below 2**53)
        return np.arange(1, n + 1, dtype=np.int64), np.cumsum(ones, dtype=np.float64)
    starts = np.flatnonzero(new_group) + 1
    K = np.empty(starts.size + 1, dtype=np.int64)
    K[:-1] = starts
    K[-1] = n
    cum = np.cumsum(ones)
    return K, cum[K - 1].astype(np.float64)


def _mirrored(Kw: np.ndarray, Sw: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The group ends of ``u`` from those of ``w = -u``: group ``j`` of ``u`` is group ``G - 1 - j`` of ``w``.

    The examples with ``u <= v_j`` are those with ``w >= w_{G-1-j}``: all but the ``Kw[G-2-j]``
    below it (0 for the lowest), and likewise for the sums. Counts and sums of 0 / 1 values are
    whole numbers, so these are exactly the values the other paths give.
    """
    below_k = np.concatenate(([0], Kw[:-1]))[::-1]
    below_s = np.concatenate(([0.0], Sw[:-1]))[::-1]
    return n - below_k, Sw[-1] - below_s


def cumulative_at(k: np.ndarray, K: np.ndarray, S: np.ndarray) -> np.ndarray:
    """Expected cumulative sum over the ``k`` most confident examples (linear inside tie groups)."""
    xp = namespace(K, S)
    if K.shape[0] == int(K[-1]):  # no ties: K = 1..N, read S directly
        return xp.take(S, xp.astype(k, xp.int64) - 1)
    zero = xp.zeros(1, dtype=xp.float64, device=device(S))
    return interp(k, xp.concat((zero, f64(K))), xp.concat((zero, S)))


def minmax_normalize(q: np.ndarray) -> np.ndarray | None:
    """``(q - min) / (max - min)``; None for a constant ``q`` (the caller decides: NaN + warning)."""
    xp = namespace(q)
    lo, hi = scalar(xp.min(q)), scalar(xp.max(q))
    if hi == lo:
        return None
    if lo == 0 and hi == 1:
        return q
    return (q - lo) / (hi - lo)
