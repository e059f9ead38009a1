"""The numba kernels behind :mod:`assay.compiled` (this module imports numba; nothing imports it at start-up).

Each kernel reads every row of probabilities once: the row checks (a row sum and the sign of
every value), the argmax (``np.argmax``'s: the first maximum, the first NaN) and what the
caller accumulates. A kernel never builds an error message: it returns the index of the first
row its screen flags (or -1), and the caller then runs the numpy reference path, which raises
the error that names the problem and the place (or, for a row that only came near the
tolerance, accepts it). See :mod:`assay.compiled` for why the screen flags every row the
numpy checks would refuse.

The argmax of a row without a set sign bit and without NaN compares the bit patterns as
integers (for non-negative floats their order is the order of the values, and equal values
have equal patterns): a maximum and a search for its first occurrence that the compiler
vectorises. Any other row (a negative value, -0.0, NaN) takes the exact scalar loop of
``np.argmax``. The row sum is accumulated in float64 with reassociation allowed (so it
vectorises); its rounding is covered by the margin of the threshold.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np
from numba import njit

#: whether the compiled code is cached on disk (False: no writable cache location was found,
#: so each process compiles on first use; NUMBA_CACHE_DIR names a writable one)
CACHED = True


def _jit(fastmath: bool | set[str] = False, inline: Literal["never", "always"] = "never",
         ) -> Callable[[Callable[..., Any]], Any]:
    """``njit(cache=True, nogil=True)``; without the disk cache where numba finds no writable place for it."""

    def wrap(fn: Callable[..., Any]) -> Any:
        global CACHED
        try:
            return njit(cache=True, nogil=True, fastmath=fastmath, inline=inline)(fn)
        except RuntimeError as exc:  # "cannot cache function ...: no locator available" (read-only install and home)
            if "cannot cache" not in str(exc):
                raise
            CACHED = False
            return njit(nogil=True, fastmath=fastmath, inline=inline)(fn)

    return wrap


@_jit(fastmath={"reassoc"})
def _row_sum(p, i):
    s = 0.0
    for j in range(p.shape[1]):
        s += p[i, j]
    return s


@_jit()
def _bit_stats(bits, i):
    """The bitwise OR (is a sign bit set anywhere?) and the largest pattern of row ``i``."""
    o = bits[i, 0]
    mx = bits[i, 0]
    for j in range(1, bits.shape[1]):
        x = bits[i, j]
        o |= x
        mx = max(mx, x)
    return o, mx


@_jit()
def _first(bits, i, key):
    for j in range(bits.shape[1]):
        if bits[i, j] == key:
            return j
    return 0  # unreachable: key is one of the patterns


@_jit()
def _exact_argmax(p, i):
    """``np.argmax`` of row ``i``: the first maximum; a NaN is the maximum (the first NaN)."""
    mx = p[i, 0]
    k = 0
    if mx != mx:
        return 0
    for j in range(1, p.shape[1]):
        v = p[i, j]
        if not (v <= mx):
            mx = v
            k = j
            if v != v:
                break
    return k


@_jit(inline="always")
def _top(p, bits, i, validate, thr, nan_bits):
    """The argmax of row ``i``, or -1 where ``validate`` and the screen flags the row.

    (The helpers take the 2-D arrays and a row index: a row view kept in a variable costs
    numba a reference count update per row, more than the rest of the row's work.)
    """
    o, mx = _bit_stats(bits, i)
    # the sum also without validate: measured, unchecked Disagreement then takes 1.02x an argmax pass
    # instead of 1.17x (the sum's read of the row seems to help the memory pipeline; the reason is a guess)
    s = _row_sum(p, i)
    if validate and not (abs(s - 1.0) <= thr):  # NaN and inf fail too
        return -1
    if o >= 0 and mx <= nan_bits:  # no sign bit set, no NaN: integer order is value order
        return _first(bits, i, mx)
    if validate:
        for j in range(p.shape[1]):
            if p[i, j] < 0:
                return -1
    return _exact_argmax(p, i)


@_jit()
def top_label_tallies(p, bits, y, n_bins, nbf, one, zero, edges, rows, validate, thr, nan_bits):
    """Per equal-width bin ``((m - 1) / M, m / M]`` (``n_bins + 1`` columns: the last, a spare the
    caller folds, stays empty), the count and the sum of ``acc - conf`` of the top label; and the
    first flagged row.

    The arithmetic is the numpy path's: ``acc - conf`` and ``conf * n_bins`` in the input's
    dtype (``one``, ``zero``, ``nbf`` and the ``n_bins + 1`` ``edges`` are of that dtype),
    truncated, then moved one bin down where ``conf <= edges[b]`` (a confidence on an edge, or
    just below one where the product rounded up; 0.0 stays in bin 0); the sums start
    from zero for every chunk of ``rows`` rows, add the rows in order, and then add to the
    totals (``np.bincount`` per chunk), so the totals are the same to the last bit. A bin
    outside ``0 .. n_bins`` (unchecked input outside [0, 1]) is flagged like a bad row.
    """
    n = p.shape[0]
    out = np.zeros((2, n_bins + 1))
    count = np.zeros(n_bins + 1, dtype=np.int64)
    gap = np.zeros(n_bins + 1)
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        count[:] = 0
        gap[:] = 0.0
        for i in range(start, stop):
            k = _top(p, bits, i, validate, thr, nan_bits)
            if k < 0:
                return out, i
            conf = p[i, k]
            f = one if k == y[i] else zero
            w = f - conf
            x = conf * nbf
            if not (x >= 0 and x < n_bins + 1):
                return out, i
            b = int(x)
            if b > 0 and conf <= edges[b]:
                b -= 1
            count[b] += 1
            gap[b] += np.float64(w)
        for b in range(n_bins + 1):
            out[0, b] += count[b]
            out[1, b] += gap[b]
    return out, -1


@_jit()
def top_label(p, bits, validate, thr, nan_bits):
    """The argmax and the top probability of every row; and the first flagged row (or -1)."""
    n = p.shape[0]
    pred = np.zeros(n, dtype=np.intp)
    conf = np.zeros(n, dtype=p.dtype)
    for i in range(n):
        k = _top(p, bits, i, validate, thr, nan_bits)
        if k < 0:
            return pred, conf, i
        pred[i] = k
        conf[i] = p[i, k]
    return pred, conf, -1


@_jit()
def vote_pairs(p, bits, members, validate, thr, nan_bits):
    """Per example of ``members`` consecutive rows (``(B, N, C)`` probabilities reshaped to
    ``(B * N, C)``), the pairs of members with the same argmax, ``sum_c C(n_c, 2)``; and the
    first example with a flagged member row (or -1)."""
    b_ = p.shape[0] // members
    pairs = np.zeros(b_, dtype=np.int64)
    seen = np.zeros(p.shape[1], dtype=np.int64)
    votes = np.zeros(members, dtype=np.intp)
    for e in range(b_):
        agree = 0
        for m in range(members):
            k = _top(p, bits, e * members + m, validate, thr, nan_bits)
            if k < 0:
                return pairs, e
            agree += seen[k]  # each earlier member with the same vote makes one more pair
            seen[k] += 1
            votes[m] = k
        for m in range(members):
            seen[votes[m]] = 0
        pairs[e] = agree
    return pairs, -1
