"""Dice, GED, NCC and AL improvement against hand-derived values (and scipy for NCC)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from assay.errors import InvalidParameterError, UndefinedMetricWarning
from assay_segmentation import al_improvement, dice, ged, ncc


def test_dice_hand():
    # |P & R| = 1, |P| = 2, |R| = 1 -> 2 * 1 / 3
    assert dice([[1, 1], [0, 0]], [[1, 0], [0, 0]]) == pytest.approx(2 / 3)


def test_dice_empty_masks():
    empty = np.zeros((3, 3))
    assert dice(empty, empty) == 0.0  # ValUES' choice
    assert dice(empty, empty, empty_value=1.0) == 1.0
    one = empty.copy()
    one[1, 1] = 1
    assert dice(one, empty) == 0.0  # 2 * 0 / (1 + 0)


def test_dice_3d_volume():
    pred = np.zeros((4, 4, 4), dtype=bool)
    pred[:2, :2, :2] = True  # 8 voxels
    ref = np.zeros((4, 4, 4), dtype=np.uint8)
    ref[:2, :2, :1] = 7  # 4 voxels, all inside pred; non-zero = foreground
    assert dice(pred, ref) == pytest.approx(2 * 4 / (8 + 4))


def test_dice_shape_mismatch():
    with pytest.raises(InvalidParameterError, match="same shape"):
        dice(np.zeros((2, 2)), np.zeros((3, 3)))


def test_ged_forms_agree_on_symmetric_example():
    # d(S,Y) pairs: (s,y1) = 0, (s,y2) = 1; d(Y,Y) over 4 ordered pairs = 0.5 -> 2*0.5 - 0 - 0.5
    assert ged([[1, 0]], [[1, 0], [0, 1]], distance="iou") == pytest.approx(0.5)
    # pooled: S-Y TP=1 FP=1 FN=1 -> d=0.5; S-S d=0; Y-Y TP=2 FP=2 FN=2 -> d=0.5
    assert ged([[1, 0]], [[1, 0], [0, 1]], distance="dice_pooled") == pytest.approx(0.5)


def test_ged_forms_differ_with_an_empty_reference():
    preds = [[1, 1, 0, 0]]
    refs = [[1, 0, 0, 0], [0, 0, 0, 0]]
    # iou: d(s,y1) = 1 - 1/2, d(s,y2) = 1 - 0/2 -> E = 0.75; Y-Y: 0, 1, 1, 0 (empty-empty = 0) -> 0.5
    assert ged(preds, refs, distance="iou") == pytest.approx(2 * 0.75 - 0 - 0.5)
    # pooled: S-Y TP=1, FP=1+2, FN=0 -> 1 - 2/5 = 0.6; Y-Y TP=1, FP=1, FN=1 -> 1 - 2/4 = 0.5
    assert ged(preds, refs, distance="dice_pooled") == pytest.approx(2 * 0.6 - 0 - 0.5)


def test_ged_identical_sets_and_3d():
    refs = np.zeros((2, 2, 3, 3), dtype=int)
    refs[0, 0, 0, 0] = 1
    refs[1, 1, 1, 1] = 1
    for distance in ("iou", "dice_pooled"):
        assert ged(refs, refs, distance=distance) == pytest.approx(0.0)


def test_ged_all_empty_is_zero():
    z = np.zeros((2, 4, 4))
    assert ged(z, z, distance="iou") == 0.0
    assert ged(z, z, distance="dice_pooled") == 0.0


def test_ged_bad_distance():
    with pytest.raises(InvalidParameterError, match="'distance'"):
        ged([[1]], [[1]], distance="hausdorff")


def test_ncc_hand():
    refs = np.array([[[1, 1], [0, 0]], [[1, 0], [0, 0]]])  # per-voxel variance: [0, .25, 0, 0]
    u = np.array([[0.1, 0.9], [0.2, 0.2]])
    # g - mean = [-.0625, .1875, -.0625, -.0625]; u - mean = [-.25, .55, -.15, -.15]
    cross, sgg, suu = 0.1375, 0.046875, 0.41
    expected = (3 / 4) * cross / math.sqrt(sgg * suu)
    assert ncc(u, refs) == pytest.approx(expected)


def test_ncc_values_convention_uses_raw_labels():
    # two raters label 3 voxels with classes {0, 1, 2}: raw-label variances [0, 1, .25] (ddof 0);
    refs = np.array([[0, 2, 1], [0, 0, 2]])
    u = np.array([0.0, 0.8, 0.3])
    g = np.array([0.0, 1.0, 0.25])
    gc, uc = g - g.mean(), u - u.mean()
    expected = (2 / 3) * (gc * uc).sum() / math.sqrt((gc * gc).sum() * (uc * uc).sum())
    assert ncc(u, refs, convention="values") == pytest.approx(expected, rel=1e-12)
    # binarised: voxel 1 disagrees (1 vs 0) -> variance .25, voxels 0 and 2 agree
    gb = np.array([0.0, 0.25, 0.0])
    gc = gb - gb.mean()
    expected_binary = (2 / 3) * (gc * uc).sum() / math.sqrt((gc * gc).sum() * (uc * uc).sum())
    assert ncc(u, refs) == pytest.approx(expected_binary, rel=1e-12)
    # on binary references the conventions agree
    binary_refs = refs != 0
    assert ncc(u, binary_refs, convention="values") == ncc(u, binary_refs)


def test_ncc_unknown_convention_is_an_error():
    from assay.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="convention"):
        ncc(np.zeros(3), np.zeros((2, 3)), convention="ValUES")


def test_ambiguity_task_passes_its_convention():
    from assay.errors import InvalidParameterError
    from assay_segmentation.tasks import AmbiguityModeling

    assert AmbiguityModeling(ncc_convention="values").ncc_convention == "values"
    with pytest.raises(InvalidParameterError, match="ncc_convention"):
        AmbiguityModeling(ncc_convention="raw")


def test_ncc_matches_scaled_pearson():
    from scipy.stats import pearsonr

    rng = np.random.default_rng(0)
    refs = rng.random((3, 6, 5, 4)) > 0.5
    u = rng.random((6, 5, 4))
    g = refs.astype(float).var(axis=0).ravel()
    n = u.size
    assert ncc(u, refs) == pytest.approx((n - 1) / n * pearsonr(g, u.ravel())[0])


def test_ncc_constant_map_is_nan_with_warning():
    refs = np.array([[[1, 0]], [[0, 0]]])
    with pytest.warns(UndefinedMetricWarning, match="constant"):
        assert math.isnan(ncc(np.full((1, 2), 0.3), refs))
    with pytest.warns(UndefinedMetricWarning, match="constant"):  # raters agree everywhere
        assert math.isnan(ncc(np.array([[0.1, 0.2]]), np.array([[[1, 0]], [[1, 0]]])))


def test_ncc_shape_error():
    with pytest.raises(InvalidParameterError, match="refs"):
        ncc(np.zeros((2, 2)), np.zeros((2, 3, 3)))


def test_al_improvement_equals_values_form():
    # ValUES: (du / d1 - 1) - (dr / d1 - 1)
    assert al_improvement(0.5, 0.7, 0.6) == pytest.approx((0.7 / 0.5 - 1) - (0.6 / 0.5 - 1))
    assert al_improvement(0.8, 0.6, 0.8) == pytest.approx(-0.25)


def test_al_improvement_zero_first_cycle():
    with pytest.warns(UndefinedMetricWarning):
        assert math.isnan(al_improvement(0.0, 0.5, 0.4))
