"""The shared kernels of assay.functional against independent references and the implementations they replace.

The old implementations (the rank-based AUROC of assay-segmentation, the tie-group AUROC of
assay-uncertainty's ROC-AUC, the array_split adaptive ECE of assay-segmentation, the core's
and assay-classic's two ``divide``) are copied here verbatim as references: the kernel must
give the same bits wherever the old code was right.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from assay.errors import InvalidParameterError, UndefinedMetricWarning
from assay.functional import (
    adaptive_ece,
    check_zero_division,
    divide,
    equal_mass_bins,
    equal_width_bins,
    roc_auc_from_split,
)
from assay.metrics import divide as metrics_divide

# ----------------------------------------------------------------------------- old implementations


def _old_average_ranks(s):
    order = np.argsort(s, kind="stable")
    sorted_s = s[order]
    starts = np.r_[0, np.nonzero(np.diff(sorted_s))[0] + 1]
    ends = np.r_[starts[1:], s.size]
    group_rank = (starts + ends + 1) / 2.0
    ranks = np.empty(s.size)
    ranks[order] = np.repeat(group_rank, ends - starts)
    return ranks


def old_segmentation_auroc(s, y):
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    ranks = _old_average_ranks(s)
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def old_uncertainty_rocauc(u, q):
    fail = 1.0 - q
    order = np.argsort(u, kind="stable")
    us, fs = u[order], fail[order]
    ends = np.r_[np.nonzero(np.diff(us))[0], us.size - 1]
    K = ends + 1
    S = np.cumsum(fs)[ends]
    n_pos = float(S[-1])
    n_neg = u.size - n_pos
    pos = np.diff(S, prepend=0.0)
    neg = np.diff(K, prepend=0).astype(np.float64) - pos
    neg_below = np.cumsum(neg) - neg
    return float(np.sum(pos * (neg_below + neg / 2.0)) / (n_pos * n_neg))


def old_segmentation_adaptive_ece(c, y, n_bins):
    order = np.argsort(c, kind="stable")
    total = 0.0
    for chunk in np.array_split(order, n_bins):
        total += chunk.size * abs(y[chunk].mean() - c[chunk].mean())
    return float(total / c.size)


def old_uncertainty_adaptive_ece(conf, acc, n_bins):
    n = conf.size
    order = np.lexsort((acc, conf))
    c, a = conf[order], acc[order]
    sizes = np.full(n_bins, n // n_bins)
    sizes[: n % n_bins] += 1
    bounds = np.concatenate(([0], np.cumsum(sizes)))
    return float(np.sum(np.abs(np.add.reduceat(a, bounds[:-1]) - np.add.reduceat(c, bounds[:-1]))) / n)


def old_core_divide(num, den, zero_division=np.nan):
    num_a = np.asarray(num, dtype=float)
    den_a = np.asarray(den, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(den_a == 0, zero_division, num_a / np.where(den_a == 0, 1.0, den_a))
    return float(out) if out.ndim == 0 else out


def old_classic_divide(numerator, denominator, zero_division):
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    mask = denominator == 0
    result = numerator / np.where(mask, 1.0, denominator)
    if mask.any():
        result = np.where(mask, 0.0 if zero_division == "warn" else float(zero_division), result)
    return result


# ----------------------------------------------------------------------------- inputs


def _scores_labels(seed: int, n: int, ties: bool):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 5, n).astype(np.float64) if ties else rng.normal(size=n)
    y = rng.random(n) < 0.4
    y[0], y[1] = True, False  # both classes
    return s, y


# ----------------------------------------------------------------------------- ROC AUC


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 300), ties=st.booleans())
def test_roc_auc_kernel_equals_sklearn_and_both_old_implementations(seed, n, ties):
    s, y = _scores_labels(seed, n, ties)
    got = roc_auc_from_split(s[y], s[~y])
    assert got == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert got == old_segmentation_auroc(s, y)  # bit-identical
    assert got == old_uncertainty_rocauc(s, (~y).astype(np.float64))  # failure = quality 0


def test_roc_auc_kernel_hand_values():
    # pairs (pos, neg): (1, 1) tie = 1/2, (1, 0) = 1, (2, 1) = 1, (2, 0) = 1 -> 3.5 / 4
    assert roc_auc_from_split(np.array([1.0, 2.0]), np.array([1.0, 0.0])) == 0.875
    assert roc_auc_from_split(np.array([-np.inf]), np.array([np.inf])) == 0.0
    assert roc_auc_from_split(np.array([5.0, 5.0]), np.array([5.0])) == 0.5


def test_roc_auc_kernel_empty_class_is_nan_with_warning():
    with pytest.warns(UndefinedMetricWarning, match="one class"):
        assert math.isnan(roc_auc_from_split(np.array([]), np.array([1.0])))


def test_the_three_roc_auc_entry_points_use_the_kernel():
    from assay_classic.functional import roc_auc
    from assay_segmentation.scores import auroc
    from assay_uncertainty.ranking import ROCAUC

    s, y = _scores_labels(7, 200, True)
    want = roc_auc_score(y, s)
    assert roc_auc(y, s) == pytest.approx(want, abs=1e-12)
    assert auroc(s, y.astype(int)) == roc_auc(y, s)
    assert ROCAUC()(s, (~y).astype(float)) == roc_auc(y, s)


# ----------------------------------------------------------------------------- bins


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 400), n_bins=st.integers(1, 30))
def test_equal_width_bins_equal_numpy_histogram(seed, n, n_bins):
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    x[0] = 1.0
    x[-1] = 0.0
    b = equal_width_bins(x, n_bins)
    counts, _ = np.histogram(x, bins=n_bins, range=(0.0, 1.0))  # last bin closed on the right, like ours
    # numpy's edges and our product can round apart for a value on an edge; random floats are not on one
    np.testing.assert_array_equal(np.bincount(b, minlength=n_bins), counts)
    assert b.min() >= 0 and b.max() <= n_bins - 1


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 400), n_bins=st.integers(1, 30))
def test_calibration_fast_paths_bin_as_the_kernel(seed, n, n_bins):
    from assay_uncertainty.calibration import binned_tallies, multiclass_tallies

    rng = np.random.default_rng(seed)
    conf = rng.random(n)
    conf[0] = 1.0
    acc = (rng.random(n) < conf).astype(np.float64)
    b = equal_width_bins(conf, n_bins)
    t = binned_tallies(conf, acc, n_bins)
    np.testing.assert_array_equal(t[0], np.bincount(b, minlength=n_bins))
    np.testing.assert_allclose(t[1], np.bincount(b, weights=acc - conf, minlength=n_bins), atol=1e-12)
    p = rng.dirichlet(np.ones(3), size=n)
    y = rng.integers(0, 3, n)
    bt = equal_width_bins(p.max(axis=1), n_bins)
    np.testing.assert_array_equal(multiclass_tallies(p, y, n_bins)[0], np.bincount(bt, minlength=n_bins))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 200), n_bins=st.integers(1, 20))
def test_equal_mass_bins_have_array_split_sizes_and_sort(seed, n, n_bins):
    if n < n_bins:
        with pytest.raises(InvalidParameterError, match="n_bins"):
            equal_mass_bins(np.zeros(n), n_bins)
        return
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, n).astype(np.float64)
    key = rng.integers(0, 2, n)
    order, starts = equal_mass_bins(x, n_bins, tiebreak=key)
    sizes = [len(c) for c in np.array_split(np.arange(n), n_bins)]
    np.testing.assert_array_equal(np.diff(np.append(starts, n)), sizes)
    pairs = list(zip(x[order], key[order]))
    assert pairs == sorted(zip(x, key))
    plain, _ = equal_mass_bins(x, n_bins)
    np.testing.assert_array_equal(plain, np.argsort(x, kind="stable"))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 300), n_bins=st.integers(1, 20), ties=st.booleans())
def test_adaptive_ece_kernel_equals_both_old_implementations(seed, n, n_bins, ties):
    if n < n_bins:
        return
    rng = np.random.default_rng(seed)
    conf = rng.integers(0, 5, n) / 4.0 if ties else rng.random(n)
    acc = (rng.random(n) < conf).astype(np.float64)
    got = adaptive_ece(conf, acc, n_bins)
    assert got == old_uncertainty_adaptive_ece(conf, acc, n_bins)  # bit-identical
    if not ties:  # the old segmentation one kept tied confidences in input order; sums a mean times a size
        assert got == pytest.approx(old_segmentation_adaptive_ece(conf, acc, n_bins), rel=1e-12, abs=1e-15)


def test_adaptive_ece_no_longer_depends_on_the_order_of_tied_confidences():
    from assay_segmentation.scores import adaptive_ece as seg_adaptive_ece

    conf = np.array([0.5, 0.5, 0.5, 0.5])
    acc = np.array([1.0, 1.0, 0.0, 0.0])
    # two bins; incorrect-first: (0, 0) and (1, 1) -> (|0 - 1| + |2 - 1|) / 4 = 0.5
    assert seg_adaptive_ece(conf, acc, n_bins=2) == 0.5
    assert seg_adaptive_ece(conf[[0, 2, 1, 3]], acc[[0, 2, 1, 3]], n_bins=2) == 0.5  # the old code gave 0
    # the old one gave 0.5 in one order and 0 in the other
    assert old_segmentation_adaptive_ece(conf, acc, 2) != old_segmentation_adaptive_ece(conf[[0, 2, 1, 3]],
                                                                                       acc[[0, 2, 1, 3]], 2)


def test_bins_refuse_bad_n_bins():
    for bad in (0, -1, 1.5, True, "3"):
        with pytest.raises(InvalidParameterError, match="n_bins"):
            equal_width_bins(np.array([0.5]), bad)


# ----------------------------------------------------------------------------- divide


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 50),
       zero_division=st.sampled_from([0.0, 1.0, math.nan, "warn"]))
def test_divide_equals_both_old_implementations(seed, n, zero_division):
    rng = np.random.default_rng(seed)
    num = rng.integers(-3, 4, n).astype(np.float64)
    den = rng.integers(0, 3, n).astype(np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        got = divide(num, den, zero_division)
    np.testing.assert_array_equal(got, old_classic_divide(num, den, zero_division))
    if zero_division != "warn":
        np.testing.assert_array_equal(got, old_core_divide(num, den, zero_division))
    expected = [z if d == 0 else a / d for a, d in zip(num, den)
                for z in [0.0 if zero_division == "warn" else zero_division]]
    np.testing.assert_array_equal(got, np.array(expected, dtype=np.float64).reshape(got.shape))


def test_divide_scalars_warn_and_quiet():
    assert divide(1, 4) == 0.25 and isinstance(divide(1, 4), float)
    assert math.isnan(divide(1, 0))
    with pytest.warns(UndefinedMetricWarning, match="Recall is ill-defined"):
        assert divide([1.0], [0.0], "warn", what="Recall")[0] == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert divide([1.0], [0.0], "warn", warn=False)[0] == 0.0
        assert math.isnan(divide(np.inf, np.inf))  # no RuntimeWarning


def test_divide_is_the_same_function_everywhere():
    from assay_classic import functional as classic_functional
    from assay_classic.functional import classification as classic_classification

    assert metrics_divide is divide and classic_classification.divide is divide
    assert classic_functional.check_zero_division is check_zero_division


@pytest.mark.parametrize("bad", ["maybe", 2, -1.0, True, None])
def test_check_zero_division_refuses(bad):
    with pytest.raises(InvalidParameterError, match="zero_division"):
        check_zero_division(bad)
