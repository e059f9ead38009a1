"""MAE / MSE / RMSE against hand values and scikit-learn; correlations against hand values and scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats as scipy_stats
import sklearn.metrics as sklearn_metrics

from assay.errors import InvalidParameterError
from assay_classic.functional import UndefinedMetricWarning
from assay_classic.regression import (
    KendallTau,
    MeanAbsoluteError,
    MeanSquaredError,
    Pearson,
    RootMeanSquaredError,
    Spearman,
)

ATOL = 1e-9


def compute(metric, predictions, references):
    return metric.update(predictions, references).compute_scores()


def test_errors_hand():
    # e = pred - ref = [-0.5, 0.5, 0, 1]: |e| sums to 2, e^2 to 1.5
    preds, refs = [2.5, 0.0, 2, 8], [3, -0.5, 2, 7]
    assert compute(MeanAbsoluteError(), preds, refs)["mae"] == pytest.approx(0.5, abs=ATOL)
    assert compute(MeanSquaredError(), preds, refs)["mse"] == pytest.approx(0.375, abs=ATOL)
    assert compute(RootMeanSquaredError(), preds, refs)["rmse"] == pytest.approx(math.sqrt(0.375), abs=ATOL)
    assert MeanAbsoluteError().additive and MeanAbsoluteError().vectorized


@pytest.mark.parametrize("seed", range(3))
def test_errors_equal_sklearn(seed):
    rng = np.random.default_rng(seed)
    refs, preds = rng.normal(size=200), rng.normal(size=200) * 3
    assert compute(MeanAbsoluteError(), preds, refs)["mae"] == pytest.approx(
        sklearn_metrics.mean_absolute_error(refs, preds), abs=ATOL)
    assert compute(MeanSquaredError(), preds, refs)["mse"] == pytest.approx(
        sklearn_metrics.mean_squared_error(refs, preds), abs=ATOL)
    assert compute(RootMeanSquaredError(), preds, refs)["rmse"] == pytest.approx(
        sklearn_metrics.root_mean_squared_error(refs, preds), abs=ATOL)


def test_errors_reject_nan_and_empty_is_nan():
    with pytest.raises(InvalidParameterError, match="NaN at instance 1"):
        MeanAbsoluteError().update([1.0, math.nan], [1.0, 2.0])
    with pytest.warns(UndefinedMetricWarning, match="no data"):
        assert math.isnan(MeanSquaredError().compute_scores()["mse"])


def test_correlations_hand():
    # x = 1 2 3, y = 1 2 4: sum dx dy = 3, sum dx^2 = 2, sum dy^2 = 14 / 3
    assert compute(Pearson(), [1.0, 2.0, 3.0], [1.0, 2.0, 4.0])["pearson"] == pytest.approx(
        3 / math.sqrt(2 * 14 / 3), abs=ATOL)
    # ranks 1 2 3 4 vs 1 2 4 3: sum d^2 = 2 -> 1 - 6 * 2 / (4 * 15) = 0.8
    assert compute(Spearman(), [1, 2, 3, 4], [10, 20, 40, 30])["spearman"] == pytest.approx(0.8, abs=ATOL)
    # 5 concordant, 1 discordant pair, no ties -> (5 - 1) / 6
    assert compute(KendallTau(), [1, 2, 3, 4], [10, 20, 40, 30])["kendall_tau"] == pytest.approx(4 / 6, abs=ATOL)


@pytest.mark.parametrize("seed", range(3))
def test_correlations_equal_scipy(seed):
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(size=80), 1)  # ties
    y = np.round(x + rng.normal(size=80), 1)
    for metric, ref in [
        (Pearson(), scipy_stats.pearsonr(x, y)),
        (Spearman(), scipy_stats.spearmanr(x, y)),
        (KendallTau(), scipy_stats.kendalltau(x, y)),
        (KendallTau(variant="c"), scipy_stats.kendalltau(x, y, variant="c")),
    ]:
        out = compute(metric, x.tolist(), y.tolist())
        assert out[metric.main_score] == pytest.approx(ref.statistic, abs=ATOL)
        assert out[metric.main_score + "_p_value"] == pytest.approx(ref.pvalue, abs=ATOL)


def test_correlation_degenerate_cases():
    with pytest.warns(UndefinedMetricWarning, match="at least two"):
        assert math.isnan(compute(Spearman(), [1.0], [2.0])["spearman"])
    with pytest.warns(Warning):  # scipy's ConstantInputWarning
        assert math.isnan(compute(Pearson(), [1.0, 1.0, 1.0], [1.0, 2.0, 3.0])["pearson"])
    with pytest.raises(InvalidParameterError, match="variant"):
        KendallTau(variant="a")
    assert Spearman().per_instance is False


def test_sharded_correlation_equals_one_pass():
    rng = np.random.default_rng(4)
    x, y = rng.normal(size=60), rng.normal(size=60)
    parts = [Spearman().update(x[i:i + 20].tolist(), y[i:i + 20].tolist()) for i in (0, 20, 40)]
    merged = parts[0].merge(*parts[1:]).compute_scores()["spearman"]
    assert merged == pytest.approx(scipy_stats.spearmanr(x, y).statistic, abs=ATOL)
