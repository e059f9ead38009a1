"""Optional compiled kernels (numba, the ``fast`` extra): the row checks, the argmax and the tallies in one pass.

``pip install "assay[fast]"`` installs numba; without it every function here returns
``None`` and the callers run their numpy code, which stays the reference (the same values,
the same errors). numba is imported on the first call of a kernel, never by ``import assay``.

What a kernel does, per row of probabilities: one read of the row gives the checks of
:func:`assay.validation.probability_error` (finite, not negative, the row sum within
``atol`` of 1), ``np.argmax`` (the first maximum; a NaN counts as the maximum) and what the
caller accumulates. numpy needs three passes for that (argmax, a row sum, a minimum), which is
why the checked calls cost 1.7x one ``np.argmax`` pass before.

How errors stay the numpy path's: a kernel never builds a message. It stops at the first row
its screen flags and the wrapper returns ``None``; the caller then runs its numpy path on the
whole input, which raises the error that names the problem and the place (the same message as
without numba, by construction) or, for a row that only came near the tolerance, accepts it.
The screen flags a superset of the rows numpy refuses: a NaN or an infinity makes the row sum
non-finite, a negative value is seen by its sign, and the row sum (float64, any order) is
compared with ``atol`` minus a margin that bounds the rounding of both sums, numpy's in the
input's dtype and the kernel's: ``1.01 (g(dtype) + g(float64)) (1 + atol)`` with
``g = (C - 1) u / (1 - (C - 1) u)`` (Higham's bound for a sum of ``C`` non-negative terms in
any order, ``u`` the unit roundoff). Where that margin leaves no threshold (float32 rows of
more than about 1,600 classes), or the dtype is not float32 / float64, or there are no
classes, the wrappers return ``None`` as well.

First use: numba compiles each kernel for the input's dtype (about 1-2 s per kernel and dtype,
once per machine) and caches the machine code on disk (``cache=True``: ``__pycache__`` next to
this file, else numba's user-wide cache directory, or ``NUMBA_CACHE_DIR``). Where no location
is writable the kernels compile in every process instead (``_kernels.CACHED`` is then False).

A process loads numba only for an input of at least :data:`LOAD_MIN_VALUES` values (or when
:func:`kernels` was called); smaller inputs take the numpy path until then, so that a script
computing one ECE on a test set does not pay numba's start-up for a millisecond's work.

The selector is :func:`kernels`; the tests replace it to run both paths.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["LOAD_MIN_VALUES", "backend", "kernels", "threshold", "top_label", "top_label_tallies", "vote_pairs"]

_loaded: list[ModuleType | None] = []  # empty until the first call of kernels()

#: the fewest values (``p.size``) for which a call loads numba and the kernels in a process that has not yet:
#: loading costs about 0.4 s (numba's import and the cached machine code; 1-2 s the first time on a machine),
#: which the one pass saves only on large inputs or over many calls (a bootstrap, a grid). Once loaded, every
#: size uses them. 2**22 values: a (420,000, 10) probability matrix.
LOAD_MIN_VALUES = 1 << 22

#: per float dtype: the integer dtype of its bit patterns and the pattern of +inf
_BITS = {np.dtype(np.float64): (np.int64, 0x7FF0000000000000), np.dtype(np.float32): (np.int32, 0x7F800000)}


def kernels() -> ModuleType | None:
    """The compiled kernels, or ``None`` when numba cannot be imported (imported once, on first call)."""
    if not _loaded:
        try:
            importlib.import_module("numba")
        except ImportError:
            _loaded.append(None)
        else:
            _loaded.append(importlib.import_module("assay.compiled._kernels"))
    return _loaded[0]


def backend() -> str:
    """``"numba X.Y"`` when the compiled kernels are used, else ``"numpy"`` (imports numba if installed)."""
    if kernels() is None:
        return "numpy"
    import numba

    return f"numba {numba.__version__}"


def threshold(dtype: np.dtype, n_classes: int, atol: float) -> float:
    """The screen's bound on ``|row sum - 1|``: ``atol`` less the rounding margin (module docstring); may be <= 0."""
    def g(u: float) -> float:
        k = (n_classes - 1) * u
        return k / (1.0 - k) if k < 1 else np.inf

    margin = 1.01 * (g(float(np.finfo(dtype).eps) / 2) + g(2.0**-53)) * (1.0 + atol) + 2.0**-50
    return float(atol - margin)


def _prepare(p: np.ndarray, atol: float) -> tuple[ModuleType, np.ndarray, np.ndarray, float, Any] | None:
    """The kernels, ``p`` C-contiguous, its bit patterns, the threshold and +inf's pattern; None: use numpy."""
    if p.dtype not in _BITS or p.shape[-1] == 0:
        return None
    thr = threshold(p.dtype, p.shape[-1], atol)
    if not thr > 0:
        return None
    if not _loaded and p.size < LOAD_MIN_VALUES:
        return None  # not worth numba's import and the kernels' load for this input (LOAD_MIN_VALUES)
    k = kernels()
    if k is None:
        return None
    p = np.ascontiguousarray(p)
    int_type, inf_bits = _BITS[p.dtype]
    return k, p, p.view(int_type), thr, int_type(inf_bits)


def top_label_tallies(p: np.ndarray, y: np.ndarray, n_bins: int, *, edges: np.ndarray, rows: int, validate: bool,
                      atol: float) -> np.ndarray | None:
    """``(2, n_bins + 1)``: per equal-width bin ``((m - 1) / M, m / M]`` of the top-label confidence of
    ``(N, C)`` ``p`` (:func:`assay.functional.equal_width_bins`), the count and the sum of
    ``[argmax == y] - conf`` (the last column is a spare, empty, for the caller to fold),
    accumulated chunk by chunk of ``rows`` rows as ``np.bincount`` does. ``edges``: the caller's
    :func:`assay.functional.bin_edges` (``n_bins + 1`` values; converted to ``p``'s dtype).
    ``None``: no kernel, or a row the caller's numpy path must judge."""
    y = np.asarray(y)
    if p.ndim != 2 or y.dtype.kind not in "iu" or y.shape != p.shape[:1]:
        return None
    prep = _prepare(p, atol)
    if prep is None:
        return None
    k, p, bits, thr, inf_bits = prep
    t = p.dtype.type
    out, bad = k.top_label_tallies(p, bits, y.astype(np.int64, copy=False), int(n_bins), t(n_bins), t(1), t(0),
                                   np.asarray(edges, dtype=p.dtype), int(rows), bool(validate), thr, inf_bits)
    return None if bad >= 0 else out


def top_label(p: np.ndarray, *, validate: bool, atol: float) -> tuple[np.ndarray, np.ndarray] | None:
    """``(argmax, top probability)`` of each row of ``(N, C)`` ``p``; ``None`` as :func:`top_label_tallies`."""
    if p.ndim != 2:
        return None
    prep = _prepare(p, atol)
    if prep is None:
        return None
    k, p, bits, thr, inf_bits = prep
    pred, conf, bad = k.top_label(p, bits, bool(validate), thr, inf_bits)
    return None if bad >= 0 else (pred, conf)


def vote_pairs(p: np.ndarray, *, validate: bool, atol: float) -> np.ndarray | None:
    """Per example of ``(B, N, C)`` ``p``, ``sum_c C(n_c, 2)`` (int64), ``n_c`` the members voting ``c``
    (their argmax); ``None`` as :func:`top_label_tallies`."""
    if p.ndim != 3 or p.shape[1] == 0:
        return None
    prep = _prepare(p, atol)
    if prep is None:
        return None
    k, p, bits, thr, inf_bits = prep
    c = p.shape[2]
    pairs, bad = k.vote_pairs(p.reshape(-1, c), bits.reshape(-1, c), p.shape[1], bool(validate), thr, inf_bits)
    return None if bad >= 0 else pairs
