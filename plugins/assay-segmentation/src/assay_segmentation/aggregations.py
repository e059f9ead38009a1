"""Aggregations of a pixel / voxel uncertainty map to one score per image (ValUES).

Registered as ``image_mean``, ``image_sum``, ``patch_max[patch_size=10, mean=false]`` and
``threshold_mean[threshold=...]``. Each is a callable ``(uncertainty_map) -> float`` for
2-D and 3-D maps. :func:`find_threshold` derives ``threshold_mean``'s threshold from the
validation split.
"""

from __future__ import annotations

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


def _buffer(name: str, shape: list[int]) -> np.ndarray:
    """A float64 scratch array of ``shape``, reused across calls in this thread.

    Fresh arrays of a map's size are allocated with ``mmap`` and page-faulted in on every
    call, which costs more than the arithmetic; reusing the memory avoids that.
    """
    store = _WORKSPACE.__dict__.setdefault("buffers", {})
    size = int(np.prod(shape))
    flat = store.get(name)
    if flat is None or flat.size < size:
        flat = store[name] = np.empty(size, dtype=np.float64)
    return flat[:size].reshape(shape)


def _window_sums(x: np.ndarray, k: int, axis: int, out: str) -> np.ndarray:
    """Sums of ``k`` consecutive values along ``axis`` ("valid" positions), by doubling.

    Windows of 1, 2, 4, ... values are built by adding shifted slices, and the binary
    digits of ``k`` pick which ones make up the window: about ``2 log2(k)`` array
    additions into reused buffers (numpy's cumsum is an order of magnitude slower than
    an addition). The result is a view of the scratch buffer ``out``.
    """
    n_out = x.shape[axis] - k + 1

    def sl(start: int, stop: int) -> tuple[slice, ...]:
        index = [slice(None)] * x.ndim
        index[axis] = slice(start, stop)
        return tuple(index)

    def shape_with(length: int) -> list[int]:
        shape = list(x.shape)
        shape[axis] = length
        return shape

    result = _buffer(out, shape_with(n_out))
    started = False
    power, width, offset, remaining, ping = x, 1, 0, k, 0
    while remaining:
        if remaining & 1:
            part = power[sl(offset, offset + n_out)]
            if started:
                np.add(result, part, out=result)
            else:
                np.copyto(result, part)
                started = True
            offset += width
        remaining >>= 1
        if remaining:
            m = power.shape[axis]
            nxt = _buffer(f"power{ping}", shape_with(m - width))
            np.add(power[sl(0, m - width)], power[sl(width, m)], out=nxt)
            power, ping, width = nxt, 1 - ping, width * 2
    return result


def _sliding_sum(u: np.ndarray, size: tuple[int, ...]) -> np.ndarray:
    """Sums over every 'valid' window of ``size`` (float64), one axis after the other (a scratch view)."""
    x = _buffer("input", list(u.shape))
    np.copyto(x, u, casting="unsafe")
    for axis, k in enumerate(size):
        x = _window_sums(x, k, axis, out=f"result{axis % 2}")
    return x


@attrs.frozen
class PatchMax:
    """Patch-level aggregation: the maximum over patch positions of the patch sum (or mean).

    A patch has side ``patch_size`` in every dimension and takes only "valid" positions
    (entirely inside the map). A dimension shorter than ``patch_size`` uses its full
    length there (the patch is clipped to the map). ``mean=True`` divides by the patch's
    voxel count. ValUES' ``patch_level`` is ``patch_max`` with ``mean=False``.

    Computed separably, one axis at a time, by adding shifted slices of doubling width
    (about ``2 log2(patch_size)`` additions per axis, float64): written for speed instead
    of ValUES' ``scipy.signal.convolve`` (see ``bench/bench_segmentation.py``).
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
        sums = _sliding_sum(u, size)
        best = float(sums.max())
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
