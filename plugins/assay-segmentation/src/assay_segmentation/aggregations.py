"""Aggregations of a pixel / voxel uncertainty map to one score per image (ValUES).

Registered as ``image_mean``, ``image_sum``, ``patch_max[patch_size=10, mean=false]`` and
``threshold_mean[threshold=...]``. Each is a callable ``(uncertainty_map) -> float`` for
2-D and 3-D maps. :func:`find_threshold` derives ``threshold_mean``'s threshold from the
validation split.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Iterable, Iterator
from typing import Any

import attrs
import numpy as np

from assay.errors import InvalidParameterError
from assay.validation import check_array, check_bool, check_int, check_number, undefined_metric

__all__ = ["ImageMean", "ImageSum", "PatchMax", "ThresholdMean", "find_threshold"]


def _as_map(x: Any, who: str) -> np.ndarray:
    """A 2-D or 3-D real map, every value finite (:func:`assay.validation.check_array`; the dtype is kept).

    The finiteness screen is one sum over the map; a NaN or inf is an error naming its
    position (a NaN would otherwise vanish from ``threshold_mean`` and ``patch_max``).
    """
    return check_array(x, "uncertainty_map", owner=who, ndim=(2, 3), shape="2-D or 3-D", dtype=None,
                       what="uncertainty values")


def _empty(who: str) -> float:
    return undefined_metric(f"{who}: empty uncertainty map; returning NaN.", stacklevel=4)


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

# Blocks of rows are sized so that one scratch buffer holds 256 KiB: a block's buffers then
# stay in a typical per-core L2 cache, where the additions ran about 1.5x faster per value
# than on the buffers of a whole 256x256 float64 map, which spill to L3.
_BLOCK_BYTES = 262144
# Where blocks that small would be too thin (large planes of a 3-D volume), a block is at
# most this big instead, so memory stays bounded on large volumes; buffers above
# _KEEP_BYTES are not kept for the next call.
_MAX_BLOCK_BYTES = 64 * 2**20
_KEEP_BYTES = 16 * 2**20


def _buffers(name: str, size: int, dtype: Any, count: int = 1) -> tuple[np.ndarray, ...]:
    """``count`` flat scratch arrays of at least ``size`` values, reused across calls in this thread.

    Fresh arrays of a map's size are allocated with ``mmap`` and page-faulted in on every
    call, which costs more than the arithmetic; reusing the memory avoids that. Arrays
    above ``_KEEP_BYTES`` are not kept, so a large volume leaves no memory behind.
    """
    store = _WORKSPACE.__dict__.setdefault("buffers", {})
    key = (name, np.dtype(dtype).str)
    arrays = store.get(key)
    if arrays is None or arrays[0].size < size:
        arrays = tuple(np.empty(size, dtype=dtype) for _ in range(count))
        if arrays[0].nbytes <= _KEEP_BYTES:
            store[key] = arrays
    return arrays


def _n_additions(k: int) -> int:
    """Additions :func:`_window_sums` makes for a window of ``k``: ``floor(log2 k) + popcount(k) - 1``."""
    return k.bit_length() + bin(k).count("1") - 2


def _window_sums(
    x: np.ndarray, k: int, step: int, spare: tuple[np.ndarray, np.ndarray], last_out: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``y[i] = x[i] + x[i + step] + ... + x[i + (k-1) step]`` for a flat ``x``, ``k >= 2``.

    With ``step`` the stride (in values) of one axis of the array ``x`` flattens, these are
    the sums of ``k`` consecutive values along that axis. ``y`` is shorter than ``x`` by
    ``(k-1) step``; where a window runs past the end of its axis it wraps into the next
    row and ``y`` holds garbage, which the caller never reads.

    Windows are built by the left-to-right binary method over the bits of ``k``: double the
    width (add ``w`` to itself shifted by ``width`` steps, into the other spare buffer),
    and on a 1 bit add one more value of ``x`` (in place: writing into an operand's own
    memory ran about 1.5x faster than into a third buffer); e.g. widths 1, 2, 4, 5, 10 for
    ``k = 10``. That is :func:`_n_additions` (4 for ``k = 10``) contiguous 1-D additions,
    never writing into ``x``. With ``last_out``, the last addition writes there instead.
    Returns ``(y, the buffer whose head is y, a free buffer)``, the last two being the
    ``spare`` buffers unless ``last_out`` holds ``y``. :func:`_tree_sums` makes the same
    additions in the same order for single boxes.
    """
    ops = _doubling_ops(k)
    w, width = x, 1
    holder, free = spare
    for i, op in enumerate(ops):
        final = last_out if i == len(ops) - 1 else None  # where the last addition writes, if anywhere
        if op == "double":
            target = free if final is None else final
            m = w.size - width * step
            np.add(w[:m], w[width * step :], out=target[:m])
            width *= 2
            if final is None:
                holder, free = free, holder
        else:
            target = holder if final is None else final
            m = w.size - step
            np.add(w[:m], x[width * step : width * step + m], out=target[:m])
            width += 1
        w = target[:m]
    return (w, last_out, free) if last_out is not None else (w, holder, free)


@functools.lru_cache(maxsize=64)
def _doubling_ops(k: int) -> tuple[str, ...]:
    """The steps of :func:`_window_sums` for ``k``.

    One "double" per bit after the leading one, then "one" on a 1 bit.
    """
    return tuple(op for bit in bin(k)[3:] for op in (("double", "one") if bit == "1" else ("double",)))


@attrs.frozen
class _BoxPlan:
    """How :func:`_box_sums` walks a map of one shape: strides, blocks of rows, summed axes."""

    steps: tuple[int, ...]  # values between neighbours along each axis of the C-order flat map
    n_valid: int  # valid box origins along axis 0
    n_block: int  # values in the largest block
    blocks: tuple[tuple[int, int, tuple[int, ...]], ...]  # (first, last + 1 valid row, block shape)
    summed_axes: tuple[int, ...]  # axes whose box side is above 1


@functools.lru_cache(maxsize=64)
def _box_plan(shape: tuple[int, ...], size: tuple[int, ...], itemsize: int) -> _BoxPlan:
    steps = _c_steps(shape)
    row, k0 = steps[0], size[0]
    n_valid = shape[0] - k0 + 1
    rows = _BLOCK_BYTES // itemsize // row
    if rows < 4 * (k0 - 1):  # thin blocks would mostly recompute their overlap: bigger ones
        rows = max(4 * (k0 - 1), _MAX_BLOCK_BYTES // itemsize // row - (k0 - 1))
    rows = max(1, min(rows, n_valid))
    blocks = tuple(
        (start, min(n_valid, start + rows), (min(n_valid, start + rows) - start + k0 - 1, *shape[1:]))
        for start in range(0, n_valid, rows)
    )
    summed = tuple(a for a, k in enumerate(size) if k > 1)
    return _BoxPlan(steps, n_valid, (rows + k0 - 1) * row, blocks, summed)


def _box_sums(u: np.ndarray, size: tuple[int, ...], dtype: Any) -> np.ndarray:
    """The sums of every ``size`` box of ``u``, computed in ``dtype``, flat by the box's origin.

    The returned flat array is laid out by box origin in ``u``'s C order over the
    ``shape[0] - size[0] + 1`` valid rows (:func:`_valid`); positions that are not valid
    along the inner axes hold garbage. With one block (:func:`_box_sum_blocks`) it is that
    block's scratch buffer; with several, each block's last addition writes straight into
    one map-sized buffer. Either is reused: read it before the next call.
    """
    dtype = np.dtype(dtype)
    plan = _box_plan(u.shape, size, dtype.itemsize)
    n = plan.n_valid * plan.steps[0]
    if len(plan.blocks) == 1:
        for _, _, sums in _box_sum_blocks(u, size, dtype):
            return sums[:n]
    (result,) = _buffers("box_sums", n, dtype)
    for _ in _box_sum_blocks(u, size, dtype, into=result):
        pass
    return result[:n]


def _box_sum_blocks(
    u: np.ndarray, size: tuple[int, ...], dtype: np.dtype, into: np.ndarray | None = None
) -> Iterator[tuple[int, int, np.ndarray]]:
    """``(start, stop, sums)`` per block of rows: the box sums for origin rows ``start .. stop - 1``.

    Blocks of whole rows (slices along axis 0, overlapping by ``size[0] - 1``) are taken as
    flat ``dtype`` arrays (a view of ``u`` when it already is a C-contiguous ``dtype``
    array, else a converted copy); a box sum is separable, so each axis's window sums are
    then :func:`_window_sums` along the flat block with that axis's stride. Flat, every
    addition is one contiguous 1-D numpy loop, where shifted slices of the n-D array
    would run one short row at a time along the last axis (2.5-4x slower, measured).
    Axes are done outermost first, so the block shrinks by ``size[0] - 1`` rows before
    the inner axes. ``sums`` is flat by origin, like :func:`_box_sums`' output for the
    block; with ``into``, the block's last addition writes into ``into`` at the block's
    offset (and ``sums`` is that part of it). A position valid along every axis only ever
    reads values valid along the other axes, so wrapped garbage never reaches it.
    """
    plan = _box_plan(u.shape, size, dtype.itemsize)
    row = plan.steps[0]
    direct = u.dtype == dtype and u.flags.c_contiguous
    flat_u = u.reshape(-1) if direct else None
    scratch = _buffers("scratch", plan.n_block, dtype, 3)
    for start, stop, block_shape in plan.blocks:
        n = block_shape[0] * row
        holder, spare = scratch[0], (scratch[1], scratch[2])
        if flat_u is not None:  # direct
            x = flat_u[start * row : start * row + n]
        else:
            x = holder[:n]
            np.copyto(x.reshape(block_shape), u[start : start + block_shape[0]], casting="unsafe")
        target = None if into is None else into[start * row :]
        if target is not None and not plan.summed_axes:
            np.copyto(target[: (stop - start) * row], x[: (stop - start) * row])
        for axis in plan.summed_axes:
            last = target if axis == plan.summed_axes[-1] else None
            x, new_holder, free = _window_sums(x, size[axis], plan.steps[axis], spare, last)
            holder, spare = new_holder, (holder, free)
        if target is not None:
            yield start, stop, target[: (stop - start) * row]
        elif plan.summed_axes or not direct:
            yield start, stop, holder[: (stop - start) * row]
        else:
            yield start, stop, x[: (stop - start) * row]


def _valid(sums: np.ndarray, shape: tuple[int, ...], size: tuple[int, ...]) -> np.ndarray:
    """The view of :func:`_box_sums`' flat output at the origins of boxes inside the map."""
    n_valid = shape[0] - size[0] + 1
    return sums.reshape(n_valid, *shape[1:])[tuple(slice(0, n - k + 1) for n, k in zip(shape, size))]


def _tree_sums(u: np.ndarray, origins: np.ndarray | list[int], size: tuple[int, ...]) -> np.ndarray:
    """Float64 sums of the ``size`` boxes of ``u`` at flat C-order ``origins``, as :func:`_box_sums` makes them.

    The boxes are gathered with the box axes first and the doubling recurrence of
    :func:`_window_sums` runs along each box axis in the same order (outermost first), so
    each sum is bit-identical to the float64 one :func:`_box_sums` computes for that box.
    """
    if len(origins) == 1:  # the usual case, without fancy indexing
        rest, corner = int(origins[0]), []
        for step in _c_steps(u.shape):
            index, rest = divmod(rest, step)
            corner.append(index)
        w = u[tuple(slice(c, c + k) for c, k in zip(corner, size))]
    elif u.flags.c_contiguous:
        w = u.reshape(-1)[_box_offsets(u.shape, size) + np.asarray(origins, dtype=np.intp)]
    else:
        coords = np.unravel_index(np.asarray(origins, dtype=np.intp), u.shape)
        index = _box_offsets(u.shape, size, by_axis=True)
        w = u[tuple(i + c for i, c in zip(index, coords))]
    w = w.astype(np.float64)  # shape (*size) or (*size, len(origins))
    for k in size:
        x, width = w, 1
        for op in _doubling_ops(k):
            if op == "double":
                w = w[:-width] + w[width:]
                width *= 2
            else:
                w = w[:-1] + x[width:]
                width += 1
        w = w[0]
    return w.reshape(-1)


@functools.lru_cache(maxsize=64)
def _c_steps(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Values between neighbours along each axis of a C-order array of ``shape``."""
    return tuple(math.prod(shape[a + 1 :]) for a in range(len(shape)))


@functools.lru_cache(maxsize=32)
def _box_offsets(shape: tuple[int, ...], size: tuple[int, ...], by_axis: bool = False) -> Any:
    """Offsets of a box's values from its origin, shaped ``(*size, 1)``: flat C-order, or one array per axis."""
    d = len(size)
    per_axis = [np.arange(k).reshape((1,) * a + (k,) + (1,) * (d - a)) for a, k in enumerate(size)]
    if by_axis:
        return tuple(per_axis)
    return sum(p * step for p, step in zip(per_axis, _c_steps(shape)))


def _gamma(n: int, unit: float) -> float:
    """Higham's ``gamma_n = n u / (1 - n u)``: the relative error bound of ``n`` rounded operations."""
    return n * unit / (1 - n * unit)


_U32 = 2.0**-24
_U64 = 2.0**-53


def _screened_max(u: np.ndarray, size: tuple[int, ...]) -> float | None:
    """``max`` of :func:`_box_sums` in float64, from float32 sums and a float64 re-sum of the top boxes.

    Float32 box sums move half the bytes of float64 ones. Each differs from the float64 sum
    of its box by at most ``(gamma_D(u32) + gamma_D(u64)) * S`` (Higham's bound for a
    summation tree of depth ``D``, the additions plus one conversion; ``S`` is the sum of
    the box's absolute values: the box sum itself when the map has no negative value, else
    at most ``box size * max|u|``). Every box whose float64 sum can be the maximum
    therefore has a float32 sum within twice that of the float32 maximum (plus the
    rounding of values below float32's normal range when the map is converted); those
    boxes, taken with three times that margin, are summed again by
    :func:`_tree_sums`, which gives the float64 value bit for bit. Returns None (the caller
    then sums every box in float64) for non-finite maps, or when more than about one map's
    worth of values would have to be re-summed (near-ties, such as constant maps).
    """
    n_box, c = _screen_constants(size)
    if n_box == 1:
        return None
    if len(_box_plan(u.shape, size, 4).blocks) > 1 and u.size * 4 > _MAX_BLOCK_BYTES:
        return None  # the screen keeps every box's sum: not for maps this large
    low = float(u.min())  # first, while a freshly loaded map is still in the cache
    if not math.isfinite(low):
        return None
    if low >= 0:
        margin = lambda top: 3 * c * top  # noqa: E731  S <= top / (1 - gamma): a relative bound
    else:
        high = float(u.max())
        if not math.isfinite(high):
            return None
        margin = lambda top: 3 * c * n_box * max(-low, high)  # noqa: E731
    sums = _box_sums(u, size, np.float32)
    # The flat array's argmax is contiguous and fast, but wrapped boxes and stale values
    # outside the valid positions take part in it: it stands only at a valid position.
    at = int(sums.argmax())
    if not _is_valid(at, u.shape, size):
        valid = _valid(sums, u.shape, size)
        at = int(np.ravel_multi_index(np.unravel_index(valid.argmax(), valid.shape), (len(valid), *u.shape[1:])))
    top = float(sums[at])
    if not math.isfinite(top):
        return None
    threshold = top - margin(top) - n_box * 2.0**-148  # conversion to float32 may lose 2**-150 to underflow
    t32 = np.float32(threshold - abs(threshold) * 2.0**-22)  # rounds to at most ``threshold``
    hits = (sums >= t32).nonzero()[0]  # garbage positions (wrapped or stale) may hit too: dropped here
    budget = max(sums.size, 4096) // n_box  # re-sum at most about one map's worth of values
    if len(hits) <= 16:  # usually one or two: Python beats numpy's per-call overhead
        hits = [h for h in hits.tolist() if _is_valid(h, u.shape, size)]
    else:
        steps = _c_steps(u.shape)
        for axis in range(1, u.ndim):
            hits = hits[(hits // steps[axis]) % u.shape[axis] <= u.shape[axis] - size[axis]]
    if len(hits) > budget:
        return None
    return float(_tree_sums(u, hits, size).max()) if len(hits) > 1 else float(_tree_sums(u, hits, size)[0])


@functools.lru_cache(maxsize=64)
def _screen_constants(size: tuple[int, ...]) -> tuple[int, float]:
    """``(box size, 2 (gamma_D(u32) + gamma_D(u64)))`` for :func:`_screened_max`."""
    depth = sum(_n_additions(k) for k in size) + 1
    return math.prod(size), 2 * (_gamma(depth, _U32) + _gamma(depth, _U64))


def _is_valid(origin: int, shape: tuple[int, ...], size: tuple[int, ...]) -> bool:
    """Whether the flat C-order ``origin`` starts a box inside the map along every axis but the first."""
    steps = _c_steps(shape)
    return all((origin // steps[axis]) % shape[axis] <= shape[axis] - size[axis] for axis in range(1, len(shape)))


def _max_window_sum(u: np.ndarray, size: tuple[int, ...]) -> float:
    """The maximum over every "valid" position of the float64 sum of a ``size`` box of ``u``.

    The float32 screen (:func:`_screened_max`) when it applies, else every box summed in
    float64, block by block (:func:`_box_sum_blocks`), keeping each block's maximum; both
    give the same value to the last bit.
    """
    screened = _screened_max(u, size)
    if screened is not None:
        return screened
    best = -math.inf
    for start, stop, sums in _box_sum_blocks(u, size, np.dtype(np.float64)):
        block_best = float(_valid(sums, (stop - start + size[0] - 1, *u.shape[1:]), size).max())
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
    of rows whose scratch buffers stay in the CPU cache (:func:`_box_sums`). Patches are
    first screened with float32 sums and a proven error bound, and only those that can be
    the maximum are summed in float64 (:func:`_screened_max`); the value is the same to the
    last bit as summing every patch in float64.
    """

    patch_size: int = attrs.field(default=10)
    mean: bool = attrs.field(default=False)

    @patch_size.validator
    def _check(self, attribute: Any, value: Any) -> None:
        check_int(value, "patch_size", low=1, owner="patch_max")

    @mean.validator
    def _check_mean(self, attribute: Any, value: Any) -> None:
        check_bool(value, "mean", owner="patch_max")

    def __call__(self, uncertainty_map: Any) -> float:
        u = _as_map(uncertainty_map, "patch_max")
        if u.size == 0:
            return _empty("patch_max")
        size = tuple(min(int(self.patch_size), n) for n in u.shape)
        best = _max_window_sum(u, size)
        return best / math.prod(size) if self.mean else best


@attrs.frozen
class ThresholdMean:
    """Threshold-based aggregation: the mean of the values at or above ``threshold``.

    ``mean(u[u >= t])``, and 0 when no value reaches ``t`` (ValUES). Without an explicit
    ``threshold``, :mod:`assay_segmentation.downstream` finds one per prediction model and uncertainty
    type on the validation split with :func:`find_threshold` and calls
    :meth:`with_threshold`.
    """

    threshold: float | None = attrs.field(default=None)

    @threshold.validator
    def _check(self, attribute: Any, value: Any) -> None:
        check_number(value, "threshold", owner="threshold_mean", allow_none=True)

    def with_threshold(self, threshold: float) -> ThresholdMean:
        return ThresholdMean(threshold=float(threshold))

    @property
    def needs_fit(self) -> bool:
        """True without an explicit threshold: the runner then calls :meth:`fit` on validation data."""
        return self.threshold is None

    def fit(self, val_maps: Iterable[Any], val_predictions: Iterable[Any]) -> ThresholdMean:
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
    maps = [check_array(m, f"val_maps[{i}]", owner="find_threshold", what="uncertainty values").ravel()
            for i, m in enumerate(val_maps)]
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
