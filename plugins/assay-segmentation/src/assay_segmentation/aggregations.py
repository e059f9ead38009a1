"""Aggregations of a pixel / voxel uncertainty map to one score per image (ValUES).

Registered as ``image_mean``, ``image_sum``, ``patch_max[patch_size=10, mean=false]`` and
``threshold_mean[threshold=...]``. Each is a callable ``(uncertainty_map) -> float`` for
2-D and 3-D maps. :func:`find_threshold` derives ``threshold_mean``'s threshold from the
validation split.
"""

from __future__ import annotations

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


def _sliding_sum(u: np.ndarray, size: tuple[int, ...]) -> np.ndarray:
    """Sums over every 'valid' window of ``size``, separably, one axis at a time (cumulative sums)."""
    out = u.astype(np.float64, copy=False)
    for axis, k in enumerate(size):
        c = np.cumsum(out, axis=axis)
        zero = np.zeros_like(np.take(c, [0], axis=axis))
        c = np.concatenate([zero, c], axis=axis)
        n = c.shape[axis]
        out = np.take(c, np.arange(k, n), axis=axis) - np.take(c, np.arange(0, n - k), axis=axis)
    return out


@attrs.frozen
class PatchMax:
    """Patch-level aggregation: the maximum over patch positions of the patch sum (or mean).

    A patch has side ``patch_size`` in every dimension and takes only "valid" positions
    (entirely inside the map). A dimension shorter than ``patch_size`` uses its full
    length there (the patch is clipped to the map). ``mean=True`` divides by the patch's
    voxel count. ValUES' ``patch_level`` is ``patch_max`` with ``mean=False``.

    Computed with cumulative sums along each axis (``O(voxels)`` per axis), so the cost
    does not grow with the patch size.
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
