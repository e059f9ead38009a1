"""The registered aggregations and find_threshold against hand-derived values."""

from __future__ import annotations

import math

import numpy as np
import pytest

import assay
from assay.errors import InvalidParameterError, UndefinedMetricWarning
from assay_segmentation import find_threshold


def agg(spec):
    return assay.load_aggregation(spec)


def test_image_mean_and_sum():
    u = [[0.1, 0.2], [0.3, 0.4]]
    assert agg("image_mean")(u) == pytest.approx(0.25)
    assert agg("image_sum")(u) == pytest.approx(1.0)
    vol = np.full((2, 3, 4), 0.5)
    assert agg("image_mean")(vol) == pytest.approx(0.5)
    assert agg("image_sum")(vol) == pytest.approx(12.0)


def test_patch_max_2d():
    u = np.array([[1.0, 0, 0], [0, 0, 0], [0, 0, 5]])
    # 2x2 windows: top-left 1, top-right 0, bottom-left 0, bottom-right 5
    assert agg("patch_max[patch_size=2]")(u) == pytest.approx(5.0)
    assert agg("patch_max[patch_size=2, mean=true]")(u) == pytest.approx(5.0 / 4)


def test_patch_max_3d():
    u = np.zeros((3, 3, 3))
    u[0, 0, 0] = 1
    u[1, 1, 1] = 1
    u[2, 2, 2] = 7
    # the window at (1,1,1) covers (1,1,1) and (2,2,2): 8; the one at (0,0,0): 2
    assert agg("patch_max[patch_size=2]")(u) == pytest.approx(8.0)


def test_patch_max_matches_brute_force():
    from numpy.lib.stride_tricks import sliding_window_view

    rng = np.random.default_rng(1)
    for shape, k in (((17, 23), 5), ((6, 7, 8), 3)):
        u = rng.random(shape)
        brute = sliding_window_view(u, (k,) * u.ndim).sum(axis=tuple(range(u.ndim, 2 * u.ndim))).max()
        assert agg(f"patch_max[patch_size={k}]")(u) == pytest.approx(brute)


def test_patch_max_larger_than_image_is_clipped():
    u = [[1.0, 2.0], [3.0, 4.0]]
    assert agg("patch_max")(u) == pytest.approx(10.0)  # default patch_size=10, clipped to 2x2
    assert agg("patch_max[mean=true]")(u) == pytest.approx(2.5)


def test_constant_map():
    u = np.full((12, 12), 0.2)
    assert agg("patch_max")(u) == pytest.approx(0.2 * 100)
    assert agg("threshold_mean[threshold=0.1]")(u) == pytest.approx(0.2)
    assert agg("image_mean")(u) == pytest.approx(0.2)


def test_patch_size_validation():
    with pytest.raises(InvalidParameterError, match="patch_size"):
        agg("patch_max[patch_size=0]")


def test_threshold_mean():
    u = [[0.1, 0.5], [0.7, 0.9]]
    assert agg("threshold_mean[threshold=0.5]")(u) == pytest.approx((0.5 + 0.7 + 0.9) / 3)  # at or above
    assert agg("threshold_mean[threshold=1.0]")(u) == 0.0  # none reach it
    with pytest.raises(InvalidParameterError, match="threshold"):
        agg("threshold_mean")(u)


def test_threshold_mean_fit_uses_find_threshold():
    fitted = agg("threshold_mean").fit([[[0.0, 1.0], [2.0, 3.0]]], [[[1, 0], [0, 0]]])
    assert fitted.threshold == pytest.approx(2.25)
    assert fitted([[0.0, 2.0], [2.5, 3.0]]) == pytest.approx((2.5 + 3.0) / 2)


def test_find_threshold_hand():
    # background fraction 3/4 -> 0.75-quantile of [0, 1, 2, 3]: position 0.75 * 3 = 2.25
    assert find_threshold([[[0.0, 1.0], [2.0, 3.0]]], [[[1, 0], [0, 0]]]) == pytest.approx(2.25)
    # fractions 0.5 and 1.0 -> q = 0.75 over the pooled values 0..7: position 0.75 * 7 = 5.25
    maps = [np.array([[0.0, 1], [2, 3]]), np.array([[4.0, 5], [6, 7]])]
    preds = [np.array([[1, 1], [0, 0]]), np.zeros((2, 2))]
    assert find_threshold(maps, preds) == pytest.approx(5.25)


def test_find_threshold_errors():
    with pytest.raises(InvalidParameterError):
        find_threshold([], [])


def test_bad_maps():
    with pytest.raises(InvalidParameterError, match="2-D or 3-D"):
        agg("image_mean")([0.1, 0.2])
    with pytest.warns(UndefinedMetricWarning, match="empty"):
        assert math.isnan(agg("image_sum")(np.zeros((0, 3))))


def test_patch_max_property_against_sliding_window_view():
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from numpy.lib.stride_tricks import sliding_window_view

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.integers(1, 9), min_size=2, max_size=3), st.integers(1, 12), st.booleans(),
           st.integers(0, 2**32 - 1))
    def check(shape, k, mean, seed):
        u = np.random.default_rng(seed).normal(size=shape).astype(np.float32)
        size = tuple(min(k, n) for n in shape)
        windows = sliding_window_view(u.astype(np.float64), size).sum(axis=tuple(range(len(shape), 2 * len(shape))))
        expected = windows.max() / (np.prod(size) if mean else 1)
        assert agg(f"patch_max[patch_size={k}, mean={str(mean).lower()}]")(u) == pytest.approx(expected, abs=1e-9)

    check()


# patch_max's float32 screen (_screened_max) must never pick a box whose float64 sum is not
# the largest: boxes that tie in float32 but differ in float64 are the cases that matter.


@pytest.mark.parametrize("first_larger", [True, False])
@pytest.mark.parametrize("background", [0.0, -0.5])
def test_patch_max_separates_boxes_that_tie_in_float32(first_larger, background):
    small, large = 0.25 + 1e-10, 0.25 + 2e-10
    assert np.float32(4 * small) == np.float32(4 * large)  # indistinguishable in float32
    u = np.full((6, 7), background)
    u[0:2, 0:2] = large if first_larger else small
    u[4:6, 5:7] = small if first_larger else large
    # every box sum here is a sum of equal-valued pairs, so the float64 sum is exact
    assert agg("patch_max[patch_size=2]")(u) == 4 * large
    assert agg("patch_max[patch_size=2, mean=true]")(u) == 4 * large / 4


def test_patch_max_near_ties_across_a_3d_volume():
    rng = np.random.default_rng(7)
    u = np.round(rng.random((12, 13, 14)), 2)  # many exact and near ties
    u[3, 4, 5] += 1e-12  # one box family ahead of its float32 twin by far less than float32 resolves
    best = max(math.fsum(u[i:i + 3, j:j + 3, k:k + 3].ravel())
               for i in range(10) for j in range(11) for k in range(12))
    assert agg("patch_max[patch_size=3]")(u) == pytest.approx(best, rel=1e-15, abs=0)


def test_patch_max_screen_is_used_and_agrees_bit_for_bit():
    from assay_segmentation.aggregations import _box_sums, _screened_max, _valid

    rng = np.random.default_rng(3)
    for u in (rng.random((256, 256), dtype=np.float32), rng.normal(size=(40, 50)),
              rng.random((9, 20, 30)).astype(np.float32), np.asfortranarray(rng.random((30, 31)))):
        size = tuple(min(10, n) for n in u.shape)
        screened = _screened_max(u, size)
        assert screened is not None, "the float32 screen fell back on a map with no near-ties"
        assert screened == float(_valid(_box_sums(u, size, np.float64), u.shape, size).max())


def test_patch_max_falls_back_on_ties_and_non_finite_maps():
    from assay_segmentation.aggregations import _screened_max

    assert _screened_max(np.full((30, 30), 0.2, dtype=np.float32), (10, 10)) is None  # 441 tied boxes
    assert agg("patch_max")(np.full((30, 30), 0.25)) == 25.0
    u = np.ones((20, 20))
    u[3, 3] = np.nan
    assert _screened_max(u, (10, 10)) is None
    # a NaN or inf in the map is an error naming its position (it was NaN / inf, silently)
    with pytest.raises(InvalidParameterError, match=r"`uncertainty_map\[3, 3\]` is NaN; expected finite"):
        agg("patch_max")(u)
    u[3, 3] = np.inf
    with pytest.raises(InvalidParameterError, match=r"`uncertainty_map\[3, 3\]` is inf"):
        agg("patch_max")(u)


def test_patch_max_screen_property_against_exact_sums():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=80, deadline=None)
    @given(st.lists(st.integers(1, 14), min_size=2, max_size=3), st.integers(1, 12),
           st.sampled_from(["float32", "float64", "int16", "uint8"]), st.sampled_from(["uniform", "normal", "coarse"]),
           st.integers(0, 2**32 - 1))
    def check(shape, k, dtype, kind, seed):
        rng = np.random.default_rng(seed)
        raw = {"uniform": rng.random(shape), "normal": rng.normal(size=shape) * 50,
               "coarse": rng.integers(0, 3, size=shape).astype(float)}[kind]
        u = raw.astype(dtype)
        size = tuple(min(k, n) for n in shape)
        exact = max(math.fsum(u[tuple(slice(o, o + s) for o, s in zip(origin, size))].astype(float).ravel())
                    for origin in np.ndindex(*(n - s + 1 for n, s in zip(shape, size))))
        # Floating-point sums of signed values carry an error bounded by the sum of absolute values (Higham:
        # gamma_D * sum|u| for a summation tree of depth D), not by the result: with cancelling values
        # the error relative to the (small) patch sum can pass 1e-14. Bound it by the whole map's sum|u|.
        depth = math.ceil(math.log2(max(2, math.prod(size)))) + 2
        bound = 4 * depth * np.finfo(float).eps * float(np.abs(u.astype(float)).sum())
        assert agg(f"patch_max[patch_size={k}]")(u) == pytest.approx(exact, rel=1e-14, abs=max(bound, 1e-300))

    check()


def test_patch_max_screen_property_bit_for_bit_against_the_float64_path():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from assay_segmentation.aggregations import _box_sums, _screened_max, _valid

    @settings(max_examples=80, deadline=None)
    @given(st.lists(st.integers(1, 30), min_size=2, max_size=3), st.integers(2, 12),
           st.sampled_from(["float16", "float32", "float64", "int32", "uint8"]),
           st.sampled_from(["uniform", "signed", "coarse", "huge", "tiny"]), st.booleans(), st.integers(0, 2**32 - 1))
    def check(shape, k, dtype, kind, fortran, seed):
        rng = np.random.default_rng(seed)
        raw = {"uniform": rng.random(shape), "signed": rng.normal(size=shape) * 50,
               "coarse": rng.integers(0, 3, size=shape).astype(float), "huge": rng.random(shape) * 1e30,
               "tiny": rng.random(shape) * 1e-40}[kind]
        if np.dtype(dtype).kind == "f":
            with np.errstate(over="ignore"):  # "huge" overflows float16 to inf: the screen must step aside
                u = raw.astype(dtype)
        else:
            u = rng.integers(-100 if dtype == "int32" else 0, 100, size=shape).astype(dtype)
        if fortran:
            u = np.asfortranarray(u)
        size = tuple(min(k, n) for n in shape)
        screened = _screened_max(u, size)
        if screened is not None:  # None: the caller sums every box in float64 instead
            expected = float(_valid(_box_sums(u, size, np.float64), u.shape, size).max())
            assert screened == expected or (math.isnan(screened) and math.isnan(expected))

    check()


def test_patch_max_large_volumes_in_bounded_blocks(monkeypatch):
    from assay_segmentation import aggregations as A

    rng = np.random.default_rng(11)
    maps = [rng.random((40, 30, 20), dtype=np.float32), rng.normal(size=(60, 70)), rng.random((200, 9))]
    expected = [agg("patch_max[patch_size=5]")(u) for u in maps]  # default limits: one block each here
    assert all(len(A._box_plan(u.shape, (5, 5, 5)[: u.ndim], 8).blocks) == 1 for u in maps[:2])
    # Limits small enough that these maps count as "large volumes": several bounded blocks, the
    # screen steps aside (it would keep every box's sum), buffers are not kept between calls.
    monkeypatch.setattr(A, "_BLOCK_BYTES", 256)
    monkeypatch.setattr(A, "_MAX_BLOCK_BYTES", 8192)
    monkeypatch.setattr(A, "_KEEP_BYTES", 1024)
    monkeypatch.setattr(A, "_WORKSPACE", type(A._WORKSPACE)())
    A._box_plan.cache_clear()
    try:
        for u, value in zip(maps, expected):
            size = tuple(min(5, n) for n in u.shape)
            blocks = A._box_plan(u.shape, size, 8).blocks
            assert len(blocks) > 1
            row_bytes = math.prod(u.shape[1:]) * 8  # rows per block: the byte cap, or 4 overlaps' worth
            assert max(b[2][0] for b in blocks) <= max(8192 // row_bytes, 5 * (size[0] - 1))
            assert agg("patch_max[patch_size=5]")(u) == value  # bit for bit
        assert not A._WORKSPACE.__dict__.get("buffers")  # nothing above _KEEP_BYTES was kept
    finally:
        A._box_plan.cache_clear()
