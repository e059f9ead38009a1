"""torch-uncertainty 0.13.0's conformal and binned-calibration classes run live beside assay's (issue 24).

``CoverageRate`` and ``SetSize`` (prediction sets), ``CalibrationError`` (top-label, by norm) and
``ClasswiseCalibrationError``, on random inputs (continuous probabilities: no confidence on a bin
edge, the one place the binnings differ); the peers run with float64 as the default dtype. Each
family also checks that shards merged equal one pass, and that ``assay.evaluate`` gives an interval.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import assay
from assay.errors import InvalidParameterError
from assay_uncertainty.classwise import CalibrationError, ClasswiseCalibrationError
from assay_uncertainty.conformal import CoverageRate, SetSize


def peer(cls, *args, **options):
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        m = cls(**options)
        m.update(*[torch.as_tensor(a) for a in args])
        out = m.compute()
        return out.numpy() if out.ndim else float(out)
    finally:
        torch.set_default_dtype(old)


def sets_and_labels(seed: int):
    rng = np.random.default_rng(seed)
    n, c = int(rng.integers(10, 200)), int(rng.integers(2, 7))
    sets = rng.random((n, c)) < rng.uniform(0.2, 0.8)
    y = rng.integers(0, c, n)
    if seed % 3 == 0:
        y[y == c - 1] = 0  # a class with no example: macro counts it as coverage 0, as torch-uncertainty
    return sets, y, c


@pytest.mark.parametrize("seed", range(9))
def test_coverage_rate_micro_and_macro(tu_classification, seed):
    sets, y, c = sets_and_labels(seed)
    tu = tu_classification["coverage_rate"].CoverageRate
    # its `total` state is float32 whatever the default dtype: the ratio carries float32 rounding
    theirs = peer(tu, sets.astype(np.int64), y)
    assert CoverageRate().update(sets, y).compute() == pytest.approx(theirs, rel=1e-7)
    theirs = peer(tu, sets.astype(np.int64), y, num_classes=c, average="macro")
    assert CoverageRate(num_classes=c, average="macro").update(sets, y).compute() == pytest.approx(theirs, rel=1e-7)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_set_size(tu_classification, seed, reduction):
    sets, _, _ = sets_and_labels(seed)
    theirs = peer(tu_classification["set_size"].SetSize, sets.astype(np.int64), reduction=reduction)
    ours = SetSize(reduction=reduction).update(sets).compute()
    np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=0)  # its mean divides in float32 (_safe_divide)


def probs_and_labels(seed: int):
    rng = np.random.default_rng(50 + seed)
    n, c = int(rng.integers(30, 400)), int(rng.integers(2, 7))
    p = rng.dirichlet(np.ones(c) * 0.6, n)
    y = np.array([rng.choice(c, p=row) for row in p]) if seed % 2 else rng.integers(0, c, n)
    return p, y, c


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
@pytest.mark.parametrize("n_bins", [10, 15])
def test_calibration_error_by_norm(tu_classification, seed, norm, n_bins):
    p, y, c = probs_and_labels(seed)
    tu = tu_classification["calibration_error"].CalibrationError
    theirs = peer(tu, p, y, task="multiclass", num_classes=c, num_bins=n_bins, norm=norm)
    # torchmetrics casts the confidences to float32 and sums in float32: agreement to its rounding
    ours = CalibrationError(n_bins=n_bins, norm=norm).update(p, y).compute()
    assert ours == pytest.approx(theirs, rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_classwise_calibration_error(tu_classification, seed, norm, reduction):
    p, y, c = probs_and_labels(seed)
    tu = tu_classification["classwise_calibration_error"].ClasswiseCalibrationError
    theirs = peer(tu, p, y, num_classes=c, num_bins=10, norm=norm, reduction=reduction)
    ours = ClasswiseCalibrationError(num_classes=c, n_bins=10, norm=norm, reduction=reduction).update(p, y).compute()
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)  # float32 in torchmetrics, as above
    # num_classes=None (assay's default) takes C from the probabilities' columns
    inferred = ClasswiseCalibrationError(n_bins=10, norm=norm, reduction=reduction).update(p, y).compute()
    np.testing.assert_array_equal(inferred, ours)


def test_by_hand():
    # sets {0, 1}, {2}, {}: labels 1, 0, 2 -> covered 1, 0, 0; sizes 2, 1, 0
    sets = [[1, 1, 0], [0, 0, 1], [0, 0, 0]]
    assert CoverageRate().update(sets, [1, 0, 2]).compute() == pytest.approx(1 / 3)
    # macro over 3 classes: class 0 0/1, class 1 1/1, class 2 0/1 -> 1/3
    assert CoverageRate(num_classes=3, average="macro").update(sets, [1, 0, 2]).compute() == pytest.approx(1 / 3)
    assert SetSize().update(sets).compute() == pytest.approx(1.0)
    # class-wise, 2 bins, two classes: p_0 = .9, .2 with outcomes 1, 0: bins {.2: gap -.2}, {.9: gap .1}
    # -> class 0: (.2 + .1) / 2 = .15; class 1: p_1 = .1, .8, outcomes 0, 1: the same, .15
    m = ClasswiseCalibrationError(num_classes=2, n_bins=2, reduction="none").update([[0.9, 0.1], [0.2, 0.8]], [0, 1])
    np.testing.assert_allclose(m.compute(), [0.15, 0.15], atol=1e-12)


CASES = [
    (CoverageRate, {}, "sets"), (CoverageRate, {"num_classes": 4, "average": "macro"}, "sets"),
    (SetSize, {}, "sets"), (CalibrationError, {"norm": "l2"}, "probs"),
    (ClasswiseCalibrationError, {"num_classes": 4}, "probs"),
]


@pytest.mark.parametrize(("cls", "options", "kind"), CASES, ids=[f"{c[0].__name__}{c[1]}" for c in CASES])
def test_shards_merged_equal_one_pass_and_intervals_exist(cls, options, kind):
    rng = np.random.default_rng(7)
    y = rng.integers(0, 4, 120)
    x = (rng.random((120, 4)) < 0.5).astype(np.int64) if kind == "sets" else rng.dirichlet(np.ones(4), 120)
    one = cls(**options).update(x, y).compute()
    parts = [cls(**options).update(x[a:b], y[a:b]) for a, b in ((0, 5), (5, 70), (70, 120))]
    assert parts[0].merge(*parts[1:]).compute() == pytest.approx(one, rel=1e-14, abs=1e-15)
    g = assay.evaluate(list(x), list(y), metrics=[cls(**options)], n_resamples=50, seed=0).global_scores
    assert g[cls.name] == pytest.approx(one)
    assert g[f"{cls.name}_ci_low"] < g[f"{cls.name}_ci_high"]


def test_bad_options_and_inputs_are_errors():
    with pytest.raises(InvalidParameterError, match="num_classes"):
        CoverageRate(average="macro")
    with pytest.raises(InvalidParameterError, match=r"sets\[0, 1\]"):
        CoverageRate().update([[1, 2]], [0])
    with pytest.raises(InvalidParameterError, match="norm"):
        CalibrationError(norm="l3")
    with pytest.raises(InvalidParameterError, match=r"\(N, 3\)"):
        ClasswiseCalibrationError(num_classes=3).update([[0.5, 0.5]], [0])
