"""Aggregations of a pixel / voxel uncertainty map to one score per image (ValUES).

Registered as ``image_mean``, ``image_sum``, ``patch_max[patch_size=10, mean=false]`` and
``threshold_mean[threshold=...]``. Each is a callable ``(uncertainty_map) -> float`` for
2-D and 3-D maps. :func:`find_threshold` derives ``threshold_mean``'s threshold from the
validation split.
"""

from __future__ import annotations

import math
import threading
import warnings
from typing import Any, Iterable

import attrs
import numpy as np

from assay.errors import InvalidParameterError

__all__ = ["ImageMean", "ImageSum", "PatchMax", "ThresholdMean", "find_threshold"]


def _as_map(x: Any, who: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim not in (2, 3):
        raise InvalidParameterError(f"{who}: expected a 2-D or 3-D uncertainty map, got shape {arr.shape}.")
    if not np.issubdtype(arr.dtype, np.number) and arr.dtype != bool:
        raise InvalidParameterError(f"{who}: expected a numeric uncertainty map, got dtype {arr.dtype}.")
    return arr


def _empty(who: str) -> float:
    warnings.warn(f"{who}: empty uncertainty map; returning NaN.", RuntimeWarning, stacklevel=3)
    return float("nan")


@attrs.frozen
class ImageMean:
    """Image-level aggregation: the mean of the map, ``sum(u) / size``."""

    def __call__(self, uncertainty_map: Any) -> float:
        u = _as_map(uncertainty_map, "image_mean")
        return _empty("image_mean") if u.size == 0 else float(u.mean(dtype=np.float64))


@attrs.frozen
class ImageSum:
    """Image-level aggregation: the sum of the map (ValUES' ``image_level``)."""

    def __call__(self, uncertainty_map: Any) -> float:
        u = _as_map(uncertainty_map, "image_sum")
        return _empty("image_sum") if u.size == 0 else float(u.sum(dtype=np.float64))


_WORKSPACE = threading.local()

# Scratch buffers of this many float64 values (256 KiB) keep a block's three buffers in a
# typical per-core L2 cache; the additions ran about 1.5x faster per value there than on
# the buffers of a whole 256x256 map, which spill to L3 (see _max_window_sum).
_BLOCK_VALUES = 32768


def _buffer(name: str, size: int) -> np.ndarray:
    """A flat float64 scratch array of at least ``size`` values, reused across calls in this thread.

    Fresh arrays of a map's size are allocated with ``mmap`` and page-faulted in on every
    call, which costs more than the arithmetic; reusing the memory avoids that.
    """
    store = _WORKSPACE.__dict__.setdefault("buffers", {})
    flat = store.get(name)
    if flat is None or flat.size < size:
        flat = store[name] = np.empty(size, dtype=np.float64)
    return flat


def _window_sums(
    x: np.ndarray, k: int, step: int, spare: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``y[i] = x[i] + x[i + step] + ... + x[i + (k-1) step]`` for a flat ``x``, ``k >= 2``.

    With ``step`` the stride (in values) of one axis of the array ``x`` flattens, these are
    the sums of ``k`` consecutive values along that axis. ``y`` is shorter than ``x`` by
    ``(k-1) step``; where a window runs past the end of its axis it wraps into the next
    row and ``y`` holds garbage, which the caller never reads.

    Windows are built by the left-to-right binary method over the bits of ``k``: double the
    width (add ``w`` to itself shifted by ``width`` steps), and on a 1 bit add one more
    value of ``x``; e.g. 1, 2, 4, 5, 10 for ``k = 10``. That is ``floor(log2 k) +
    popcount(k) - 1`` contiguous 1-D additions (4 for ``k = 10``), each writing into one of
    the two ``spare`` buffers (never ``x``'s). Returns ``(y, buffer holding y, the other
    spare buffer)``; ``y`` starts at the buffer's first value.
    """
    w, width = x, 1
    out, other = spare
    for bit in bin(k)[3:]:
        m = w.size - width * step
        np.add(w[:m], w[width * step :], out=out[:m])
        w, width, out, other = out[:m], 2 * width, other, out
        if bit == "1":
            m -= step
            np.add(w[:m], x[width * step : width * step + m], out=out[:m])
            w, width, out, other = out[:m], width + 1, other, out
    return w, other, out


def _max_window_sum(u: np.ndarray, size: tuple[int, ...]) -> float:
    """The maximum over every "valid" position of the float64 sum of a ``size`` box of ``u``.

    Blocks of whole rows (slices along axis 0, overlapping by ``size[0] - 1``) are copied
    to float64 and flattened; a box sum is separable, so each axis's window sums are then
    :func:`_window_sums` along the flat block with that axis's stride. Flat, every
    addition is one contiguous 1-D numpy loop, where shifted slices of the 2-D array
    would run one short row at a time along the last axis (2.5-4x slower, measured). Axes are done
    outermost first, so the block shrinks by ``size[0] - 1`` rows before the inner axes.
    A position valid along every axis only ever reads values valid along the other axes,
    so wrapped garbage never reaches it; the maximum is taken over the valid positions.
    """
    shape = u.shape
    steps = [math.prod(shape[a + 1 :]) for a in range(u.ndim)]
    row, k0 = steps[0], size[0]
    n_valid = shape[0] - k0 + 1
    rows = _BLOCK_VALUES // row
    if rows < 4 * (k0 - 1):  # thin blocks would mostly recompute their overlap: one block
        rows = n_valid
    rows = max(1, min(rows, n_valid))
    n_block = (rows + k0 - 1) * row
    scratch = [_buffer(f"scratch{i}", n_block) for i in range(3)]
    inner_valid = tuple(slice(0, n - k + 1) for n, k in zip(shape[1:], size[1:]))
    best = -math.inf
    for start in range(0, n_valid, rows):
        stop = min(n_valid, start + rows)
        block_shape = (stop - start + k0 - 1, *shape[1:])
        n = block_shape[0] * row
        holder, spare = scratch[0], (scratch[1], scratch[2])
        x = holder[:n]
        np.copyto(x.reshape(block_shape), u[start : stop + k0 - 1], casting="unsafe")
        for axis, k in enumerate(size):
            if k > 1:
                x, new_holder, free = _window_sums(x, k, steps[axis], spare)
                holder, spare = new_holder, (holder, free)
        sums = holder[:n].reshape(block_shape)[(slice(0, stop - start), *inner_valid)]
        block_best = float(sums.max())
        if not block_best <= best and best == best:  # a NaN stays, as in numpy's max
            best = block_best
    return best


@attrs.frozen
class PatchMax:
    """Patch-level aggregation: the maximum over patch positions of the patch sum (or mean).

    A patch has side ``patch_size`` in every dimension and takes only "valid" positions
    (entirely inside the map). A dimension shorter than ``patch_size`` uses its full
    length there (the patch is clipped to the map). ``mean=True`` divides by the patch's
    voxel count. ValUES' ``patch_level`` is ``patch_max`` with ``mean=False``.

    Computed in float64, separably, one axis at a time, by adding shifted slices of
    doubling width (``floor(log2 k) + popcount(k) - 1`` additions per axis, 4 for
    ``k = 10``): written for speed instead of ValUES' ``scipy.signal.convolve`` (see
    ``bench/bench_segmentation.py``). Every sum adds values only (no running sum with
    subtractions), so it is as exact as a direct sum. For speed, the map is flattened so
    each addition is one contiguous 1-D loop (:func:`_window_sums`) and processed in blocks
    of rows whose scratch buffers stay in the CPU cache (:func:`_max_window_sum`).
    """

    patch_size: int = attrs.field(default=10)
    mean: bool = attrs.field(default=False)

    @patch_size.validator
    def _check(self, attribute: Any, value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise InvalidParameterError(
                f"The 'patch_size' parameter of patch_max must be a positive integer. Got {value!r} instead."
            )

    def __call__(self, uncertainty_map: Any) -> float:
        u = _as_map(uncertainty_map, "patch_max")
        if u.size == 0:
            return _empty("patch_max")
        size = tuple(min(int(self.patch_size), n) for n in u.shape)
        best = _max_window_sum(u, size)
        return best / float(np.prod(size)) if self.mean else best


@attrs.frozen
class ThresholdMean:
    """Threshold-based aggregation: the mean of the values at or above ``threshold``.

    ``mean(u[u >= t])``, and 0 when no value reaches ``t`` (ValUES). Without an explicit
    ``threshold``, :mod:`assay.downstream` finds one per prediction model and uncertainty
    type on the validation split with :func:`find_threshold` and calls
    :meth:`with_threshold`.
    """

    threshold: float | None = attrs.field(default=None)

    def with_threshold(self, threshold: float) -> "ThresholdMean":
        return ThresholdMean(threshold=float(threshold))

    @property
    def needs_fit(self) -> bool:
        """True without an explicit threshold: the runner then calls :meth:`fit` on validation data."""
        return self.threshold is None

    def fit(self, val_maps: Iterable[Any], val_predictions: Iterable[Any]) -> "ThresholdMean":
        """This aggregation with the threshold :func:`find_threshold` gives on validation data."""
        return self.with_threshold(find_threshold(val_maps, val_predictions))

    def fit_info(self) -> dict[str, Any]:
        return {"threshold": self.threshold}

    def __call__(self, uncertainty_map: Any) -> float:
        if self.threshold is None:
            raise InvalidParameterError(
                "threshold_mean needs a threshold: give threshold_mean[threshold=...] or let assay run "
                "find it on the 'val' split (a 'val' dataset split is required for that)."
            )
        u = _as_map(uncertainty_map, "threshold_mean")
        if u.size == 0:
            return _empty("threshold_mean")
        sel = u[u >= self.threshold]
        return float(sel.mean(dtype=np.float64)) if sel.size else 0.0


def find_threshold(val_maps: Iterable[Any], val_predictions: Iterable[Any]) -> float:
    """The threshold of ``threshold_mean`` from validation maps and predictions (ValUES).

    ``q`` is the mean background fraction of the validation predictions
    (``1 - count_nonzero(p) / p.size``, averaged over predictions); the threshold is the
    ``q``-quantile, with linear interpolation (``numpy.quantile``'s default), of all
    validation uncertainty values pooled. ValUES pools the maps and predictions of every
    version (seed) of one prediction model, per uncertainty type.

    Parameters
    ----------
    val_maps : iterable of array_like
        Uncertainty maps of the validation images (any shapes).
    val_predictions : iterable of array_like
        Predicted segmentations of the validation images.

    Returns
    -------
    float

    Examples
    --------
    >>> find_threshold([[[0.0, 1.0], [2.0, 3.0]]], [[[1, 0], [0, 0]]])
    2.25
    """
    preds = [np.asarray(p) for p in val_predictions]
    maps = [np.asarray(m, dtype=np.float64).ravel() for m in val_maps]
    if not preds or not maps:
        raise InvalidParameterError(
            f"find_threshold needs at least one validation map and prediction, got {len(maps)} maps and "
            f"{len(preds)} predictions."
        )
    if any(p.size == 0 for p in preds):
        raise InvalidParameterError("find_threshold: a validation prediction is empty (size 0).")
    q = float(np.mean([1.0 - np.count_nonzero(p) / p.size for p in preds]))
    values = np.concatenate(maps)
    if values.size == 0:
        raise InvalidParameterError("find_threshold: the validation uncertainty maps hold no values.")
    return float(np.quantile(values, q))
