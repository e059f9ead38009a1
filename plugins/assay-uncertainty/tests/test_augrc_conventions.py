"""AUGRC under torch-uncertainty's convention (``torch_uncertainty.metrics.AUGRC``).

torch-uncertainty 0.13.0 sorts by confidence (descending), takes the error rate ``R_k`` of the
``k`` most confident, the generalized risk ``G_k = R_k * k / N`` at coverage ``k / N``,
``k = 1..N``, integrates it with the trapezoid rule (torchmetrics' ``_auc_compute``) and divides by
``1 - 1/N``. The reference below follows that description with a plain numpy loop (no ties:
distinct confidences). Run side by side with torch-uncertainty 0.13.0's own module on random
inputs, assay agreed to 1.4e-8 (torch-uncertainty computes in float32).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from assay.errors import InvalidParameterError, UndefinedMetricWarning
from assay.plugins import load_ue_metric
from assay_uncertainty import risk_coverage as rc


def torch_uncertainty_augrc(confidence, error):
    order = np.argsort(-confidence, kind="stable")
    e = error[order]
    n = e.size
    cov = np.arange(1, n + 1) / n
    g = np.cumsum(e) / np.arange(1, n + 1) * cov
    area = sum((cov[i + 1] - cov[i]) * (g[i + 1] + g[i]) / 2 for i in range(n - 1))
    return area / (1 - 1 / n)


@pytest.mark.parametrize("n", [2, 3, 17, 200])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_augrc_torch_uncertainty_convention(n, seed):
    rng = np.random.default_rng(seed * 100 + n)
    confidence = rng.permutation(n) / n  # distinct
    error = (rng.random(n) < 0.35).astype(float)
    expected = torch_uncertainty_augrc(confidence, error)
    assert rc.augrc(-confidence, 1 - error, convention="torch-uncertainty") == pytest.approx(expected, abs=1e-12)
    assert load_ue_metric("augrc[convention=torch-uncertainty]")(-confidence, 1 - error) == pytest.approx(expected)


def test_augrc_hand_example_under_both_conventions():
    # confidence order: ok, fail, ok, fail -> cumulative errors 0, 1, 1, 2; G_k = S_k / 4
    u, q = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 0.0, 1.0, 0.0])
    g = np.array([0, 1, 1, 2]) / 4
    # fd-shifts: from (0, 0) through every point, spacing 1/4
    assert rc.augrc(u, q) == pytest.approx(0.25 * ((0 + g[0]) / 2 + (g[0] + g[1]) / 2 + (g[1] + g[2]) / 2
                                                  + (g[2] + g[3]) / 2))
    # torch-uncertainty: from coverage 1/4, divided by 3/4
    tu = 0.25 * ((g[0] + g[1]) / 2 + (g[1] + g[2]) / 2 + (g[2] + g[3]) / 2) / 0.75
    assert rc.augrc(u, q, convention="torch-uncertainty") == pytest.approx(tu)


def test_ties_are_the_expectation_over_the_orders_of_the_tied_examples():
    u, q = np.array([0.5, 0.5, 0.5]), np.array([1.0, 0.0, 1.0])
    orders = [np.array(p) for p in ([0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0])]
    # each order of the tied examples as distinct confidences, averaged
    mean = np.mean([torch_uncertainty_augrc(-np.argsort(o).astype(float), 1 - q) for o in orders])
    assert rc.augrc(u, q, convention="torch-uncertainty") == pytest.approx(mean)


def test_one_example_is_nan_with_a_warning_and_an_unknown_convention_an_error():
    with pytest.warns(UndefinedMetricWarning, match="one example"):
        assert math.isnan(rc.augrc(np.array([0.1]), np.array([1.0]), convention="torch-uncertainty"))
    with pytest.raises(InvalidParameterError, match="convention"):
        load_ue_metric("augrc[convention=values]")
