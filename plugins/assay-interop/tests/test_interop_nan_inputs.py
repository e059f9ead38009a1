"""``torchmetrics:`` and ``sklearn:`` metrics get assay's input checks: NaN and infinity are errors (issue 27, item 7).

Before, the wrapped metrics passed them through: torchmetrics' ``BinaryAccuracy`` on
``[nan, 1.0, 0.0]`` gave 0.667 (NaN thresholded as a wrong 0) and ``BinaryAUROC`` with a NaN
score 1.0. The tests run torchmetrics live to show the number the check now prevents, then
assay's metric by name, streaming and through ``assay.evaluate``.
"""

from __future__ import annotations

import math

import pytest
import torch
import torchmetrics.functional.classification as tmf

import assay
from assay.errors import InvalidParameterError
from assay.plugins import load_metric

NAN, INF = math.nan, math.inf


def test_torchmetrics_by_itself_scores_nan_as_a_number():
    # what the wrapper used to report: the library's own values on these inputs
    acc = float(tmf.binary_accuracy(torch.tensor([NAN, 1.0, 0.0]), torch.tensor([1, 1, 0])))
    assert acc == pytest.approx(2 / 3)
    auroc = float(tmf.binary_auroc(torch.tensor([NAN, 0.4, 0.2, 0.9]), torch.tensor([1, 0, 0, 1])))
    assert auroc == 1.0


@pytest.mark.parametrize("name, preds, refs, where", [
    ("torchmetrics:BinaryAccuracy", [NAN, 1.0, 0.0], [[1], [1], [0]], r"`predictions\[0\]` is NaN"),
    ("torchmetrics:BinaryAUROC", [0.3, NAN, 0.2, 0.9], [[1], [0], [0], [1]], r"`predictions\[1\]` is NaN"),
    ("torchmetrics:MeanSquaredError", [1.0, INF], [[1.0], [0.0]], r"`predictions\[1\]` is inf"),
    ("torchmetrics:MeanSquaredError", [1.0, 2.0], [[NAN], [0.0]], r"`references\[0\]` is NaN"),
    ("sklearn:accuracy_score", [NAN, 1.0, 0.0], [[1], [1], [0]], r"`predictions\[0\]` is NaN"),
    ("sklearn:roc_auc_score", [0.3, NAN, 0.2, 0.9], [[1], [0], [0], [1]], r"`predictions\[1\]` is NaN"),
    ("sklearn:mean_absolute_error", [1.0, 2.0], [[1.0], [-INF]], r"`references\[1\]` is -inf"),
])
def test_nan_and_infinity_are_errors_naming_the_metric_and_the_position(name, preds, refs, where):
    with pytest.raises(InvalidParameterError, match=rf"{name.split('[')[0]}.*{where}"):
        load_metric(name).update(preds, refs).compute()
    with pytest.raises(InvalidParameterError, match=where):
        assay.evaluate(preds, refs, [name], n_resamples=20)


def test_finite_inputs_still_give_the_libraries_values():
    preds, refs = [0.3, 0.6, 0.2, 0.9], [[1], [0], [0], [1]]
    expect = float(tmf.binary_auroc(torch.tensor([0.3, 0.6, 0.2, 0.9]), torch.tensor([1, 0, 0, 1])))
    assert load_metric("torchmetrics:BinaryAUROC").update(preds, refs).compute() == pytest.approx(expect)
    assert load_metric("sklearn:roc_auc_score").update(preds, refs).compute() == pytest.approx(0.75)


def test_an_aggregation_metric_keeps_its_own_nan_strategy():
    # MeanMetric(nan_strategy="ignore") drops NaN by its own option: the check leaves it to it
    m = load_metric("torchmetrics:MeanMetric[nan_strategy=ignore]")
    assert m.update([1.0, NAN, 3.0]).compute() == pytest.approx(2.0)
