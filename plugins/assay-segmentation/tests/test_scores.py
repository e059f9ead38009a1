"""AUROC, FPR@95, Platt scaling, ValUES ACE and adaptive ECE: hand values and scikit-learn / scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from assay.errors import InvalidParameterError, UndefinedMetricWarning
from assay_segmentation.scores import adaptive_ece, auroc, fit_platt, fpr_at_tpr, platt_confidence, values_ace


def test_auroc_hand():
    # positives .35 (beats .1, loses to .4) and .8 (beats both): 3 of 4 pairs
    assert auroc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]) == pytest.approx(0.75)
    # one tie between a positive and a negative counts one half
    assert auroc([0.5, 0.5], [0, 1]) == pytest.approx(0.5)


def test_auroc_matches_sklearn_with_ties():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(0)
    s = rng.integers(0, 5, 200) / 4
    y = rng.integers(0, 2, 200)
    assert auroc(s, y) == pytest.approx(roc_auc_score(y, s))


def test_auroc_one_class():
    with pytest.warns(UndefinedMetricWarning, match="one class"):
        assert math.isnan(auroc([0.1, 0.2], [1, 1]))


def test_fpr_at_95_hand():
    # TPR reaches 1 only at threshold .5, where both negatives are flagged
    assert fpr_at_tpr([0.9, 0.8, 0.7, 0.6, 0.5], [1, 0, 1, 0, 1]) == pytest.approx(1.0)
    # TPR reaches 1 at .6: one of two negatives (.7) flagged
    assert fpr_at_tpr([0.9, 0.8, 0.7, 0.6, 0.5], [1, 1, 0, 1, 0]) == pytest.approx(0.5)


def test_fpr_at_95_matches_sklearn_curve():
    from sklearn.metrics import roc_curve

    rng = np.random.default_rng(3)
    s = np.round(rng.random(300), 2)
    y = (rng.random(300) < s).astype(int)
    fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)
    assert fpr_at_tpr(s, y) == pytest.approx(fpr[np.argmax(tpr >= 0.95)])


def test_fit_platt_matches_sklearn_sigmoid_calibration():
    from sklearn.calibration import _sigmoid_calibration

    rng = np.random.default_rng(7)
    f = rng.normal(size=500)
    y = (rng.random(500) < 1 / (1 + np.exp(-2 * f + 0.3))).astype(int)
    a_ref, b_ref = _sigmoid_calibration(f, y)
    a, b = fit_platt(f, y)
    assert a == pytest.approx(a_ref, abs=1e-4)
    assert b == pytest.approx(b_ref, abs=1e-4)


def test_fit_platt_matches_scipy_minimize_of_the_smoothed_loss():
    from scipy.optimize import minimize

    rng = np.random.default_rng(8)
    f = rng.normal(size=300)
    y = (rng.random(300) < 0.7).astype(int)
    n_pos, n_neg = y.sum(), (1 - y).sum()
    t = np.where(y == 1, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

    def loss(p):
        prob = 1 / (1 + np.exp(p[0] * f + p[1]))
        return -np.sum(t * np.log(prob) + (1 - t) * np.log(1 - prob))

    ref = minimize(loss, [0.0, 0.0], method="Nelder-Mead", options={"xatol": 1e-9, "fatol": 1e-12}).x
    assert fit_platt(f, y) == pytest.approx(tuple(ref), abs=1e-4)


def test_platt_confidence():
    # 1 / (1 + exp(a * (-u) + b)) with a = 2, b = 1, u = 0.5 -> 1 / (1 + e^0)
    assert platt_confidence(0.5, 2.0, 1.0) == pytest.approx(0.5)


def test_values_ace_hand():
    conf = [0.1, 0.12, 0.9, 0.95]
    correct = [0, 1, 1, 1]
    # 10 bins: bin 1 holds .1 and .12 (conf .11, acc .5); bin 9 holds .9, .95 (conf .925, acc 1)
    assert values_ace(conf, correct, n_bins=10) == pytest.approx((0.39 + 0.075) / 2)


def test_values_ace_is_unweighted():
    # bin 0: 3 samples conf .05 acc 0 (gap .05); bin 9: 1 sample conf .95 acc 0 (gap .95)
    assert values_ace([0.05, 0.05, 0.05, 0.95], [0, 0, 0, 0], n_bins=10) == pytest.approx((0.05 + 0.95) / 2)
    assert values_ace([1.0], [1], n_bins=20) == pytest.approx(0.0)  # 1.0 falls in the last bin


def test_adaptive_ece_hand():
    # 2 equal-mass bins: {.2, .4} acc .5 conf .3 -> .2; {.6, .8} acc 1 conf .7 -> .3
    assert adaptive_ece([0.6, 0.2, 0.8, 0.4], [1, 0, 1, 1], n_bins=2) == pytest.approx(0.25)
    # 5 samples in 2 bins: sizes 3 and 2; {.1,.2,.3} acc 1/3 conf .2 -> 2/15; {.4,.5} acc 1 conf .45 -> .55
    assert adaptive_ece([0.1, 0.2, 0.3, 0.4, 0.5], [0, 0, 1, 1, 1], n_bins=2) == pytest.approx(
        (3 * (1 / 3 - 0.2) + 2 * 0.55) / 5)


def test_calibration_errors():
    with pytest.raises(InvalidParameterError, match="fewer than n_bins"):
        adaptive_ece([0.5], [1], n_bins=2)
    with pytest.raises(InvalidParameterError, match=r"\[0, 1\]"):
        values_ace([1.5], [1])
    with pytest.raises(InvalidParameterError, match="binary"):
        values_ace([0.5], [2])
