"""Percentile, BCa and Wilson intervals against hand formulas, scipy and published values."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from assay.metrics.intervals import bca_interval, percentile_interval, wilson_interval


def test_percentile_is_linear_interpolation():
    theta = np.arange(1.0, 101.0)  # 1..100
    lo, hi, note = percentile_interval(theta, 0.9)
    # numpy 'linear': position (B - 1) * q -> 99 * 0.05 = 4.95 -> 5 + 0.95 = 5.95
    assert lo == pytest.approx(5.95) and hi == pytest.approx(95.05) and note is None


def test_percentile_reports_undefined_and_one_point():
    lo, hi, note = percentile_interval(np.array([1.0, np.nan, 2.0]), 0.95)
    assert math.isnan(lo) and math.isnan(hi) and "1 of 3" in note
    lo, hi, note = percentile_interval(np.full(10, 0.5), 0.95)
    assert lo == hi == 0.5 and "equal" in note


def _bca_by_hand(theta_b, theta_hat, jack, level):
    nd = NormalDist()
    z0 = nd.inv_cdf((np.sum(theta_b < theta_hat) + 0.5 * np.sum(theta_b == theta_hat)) / len(theta_b))
    d = jack.mean() - jack
    a = np.sum(d**3) / (6 * np.sum(d**2) ** 1.5)
    alpha = 1 - level
    qs = [nd.cdf(z0 + (z0 + z) / (1 - a * (z0 + z))) for z in (nd.inv_cdf(alpha / 2), nd.inv_cdf(1 - alpha / 2))]
    return np.percentile(theta_b, [100 * q for q in qs])


def test_bca_matches_hand_formula():
    rng = np.random.default_rng(0)
    x = rng.exponential(size=40)
    theta_b = x[rng.integers(0, 40, size=(2000, 40))].mean(axis=1)
    jack = (x.sum() - x) / 39
    lo, hi, note = bca_interval(theta_b, x.mean(), jack, 0.95)
    np.testing.assert_allclose([lo, hi], _bca_by_hand(theta_b, x.mean(), jack, 0.95))
    assert note is None


def test_bca_degenerate_cases_are_nan_with_reason():
    lo, hi, note = bca_interval(np.full(20, 1.0), 1.0, np.full(5, 1.0), 0.95)
    assert math.isnan(lo) and "jackknife" in note
    lo, hi, note = bca_interval(np.arange(20.0), -1.0, np.arange(5.0), 0.95)
    assert math.isnan(hi) and "one side" in note


def test_bca_close_to_scipy():
    import scipy.stats as scipy_stats
    from assay_metric_samples import SampleAbsError

    import assay

    rng = np.random.default_rng(5)
    x = rng.exponential(size=60)
    ours = assay.evaluate(list(x), [[0.0]] * 60, metrics=[SampleAbsError()], n_resamples=20_000,
                          ci_method="bca", seed=1).global_scores
    ref = scipy_stats.bootstrap((x,), np.mean, n_resamples=20_000, method="BCa", random_state=2,
                                vectorized=True).confidence_interval
    # two independent Monte Carlo draws of the same interval: agree to Monte Carlo error
    assert ours["abs_error_ci_low"] == pytest.approx(ref.low, abs=0.02)
    assert ours["abs_error_ci_high"] == pytest.approx(ref.high, abs=0.03)


@pytest.mark.parametrize(("k", "n", "low", "high"), [
    # Newcombe (1998), Statistics in Medicine 17:857-872, Table I, method 3 (Wilson score)
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0, 0.1611),
    (1, 29, 0.0061, 0.1718),
])
def test_wilson_published_values(k, n, low, high):
    lo, hi, note = wilson_interval(k, n, 0.95)
    assert lo == pytest.approx(low, abs=1e-4) and hi == pytest.approx(high, abs=1e-4) and note is None


def test_wilson_no_trials():
    lo, hi, note = wilson_interval(0, 0, 0.95)
    assert math.isnan(lo) and "no trials" in note
