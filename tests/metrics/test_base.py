"""Metric bases: map/reduce, streaming state, prediction_type, requirements, pipelines."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from assay_metric_samples import (
    SampleAbsError,
    SampleAccuracy,
    SampleAUC,
    SampleExactMatch,
    SampleF1,
    SampleMedianAE,
)

from assay.errors import EvaluationError, InvalidParameterError, MissingDependencyError, UndefinedMetricWarning
from assay.metrics import Metric, divide


class NeedsMissing(SampleAccuracy):
    requirements = {"assay_no_such_module_xyz": "assay-no-such-dist"}


def test_divide_defines_zero_denominators():
    assert divide(1, 4) == 0.25
    assert math.isnan(divide(1, 0))
    assert divide(1, 0, zero_division=0.0) == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(divide(np.array([1.0, 2.0]), np.array([0.0, 4.0]), 1.0), [1.0, 0.5])


def test_additive_update_merge_compute():
    m = SampleAccuracy().update([1, 2, 3], [[1], [3], [3]])
    assert m.compute_scores() == {"accuracy": 2 / 3, "score": 2 / 3, "score_name": "accuracy"}
    other = SampleAccuracy().update([4, 5], [[4], [0]])
    assert m.merge(other).compute_scores()["accuracy"] == 3 / 5   # (2 + 1) / (3 + 2), by hand
    assert m.state.n == 5
    m.reset()
    with pytest.warns(UndefinedMetricWarning, match="no data"):
        assert math.isnan(m.compute_scores()["accuracy"])


def test_merge_rejects_another_metric():
    with pytest.raises(InvalidParameterError, match="same metric"):
        SampleAccuracy().merge(SampleF1())


def test_score_prefix_and_main_score():
    m = SampleF1(score_prefix="m_").update([1, 0, 1], [[1], [1], [1]])
    out = m.compute_scores()
    # tp = 2, fp = 0, fn = 1: F1 = 4 / 5
    assert out["m_f1"] == pytest.approx(0.8) and out["score"] == pytest.approx(0.8)
    assert out["score_name"] == "m_f1" and "m_precision" in out and "f1" not in out


def test_prediction_type_error_names_the_instance():
    with pytest.raises(InvalidParameterError, match=r"instance 2 has a prediction of type str"):
        SampleF1().update([1, 0, "1"], [[1], [0], [1]])
    with pytest.raises(InvalidParameterError, match=r"instance 4 "):  # offset of earlier updates counts
        SampleF1().update([1, 0, 1], [[1], [0], [1]]).update([1, "x"], [[1], [1]])
    SampleAbsError().update(np.array([1.0, 2.0]), [[1.0], [1.0]])  # numpy float arrays pass the dtype check
    with pytest.raises(InvalidParameterError, match="instance 0"):
        SampleAbsError().update(np.array(["a"]), [[1.0]])


def test_requirements_checked_lazily_with_install_hint():
    m = NeedsMissing()  # constructing is fine
    with pytest.raises(MissingDependencyError, match="pip install assay-no-such-dist"):
        m.update([1], [[1]])


def test_length_mismatch_is_an_error():
    with pytest.raises(InvalidParameterError, match="references .* one entry per prediction"):
        SampleAccuracy().update([1, 2], [[1]])


def test_instance_metric_mean_skips_nan():
    m = SampleExactMatch().update(["a", "bb", "c"], [["a"], ["b"], [""]])
    out = m.compute_scores()
    assert out["em"] == pytest.approx(1 / 3)
    assert out["len_ratio"] == pytest.approx((1 + 2) / 2)  # the NaN instance is left out
    inter = m.map_all(["a", "bb", "c"], [["a"], ["b"], [""]])
    inst = m.instance_scores(inter)
    assert inst[1] == {"em": 0.0, "len_ratio": 2.0} and math.isnan(inst[2]["len_ratio"])


def test_instance_metric_all_nan_is_nan():
    out = SampleExactMatch().update(["a"], [[""]]).compute_scores()
    assert math.isnan(out["len_ratio"]) and out["em"] == 0.0


def test_bulk_and_global_metrics():
    preds, refs = [1.0, 2.5, 0.0, 4.0], [[1.0], [2.0], [3.0], [4.0]]
    assert SampleAbsError().update(preds, refs).compute_scores()["abs_error"] == pytest.approx(3.5 / 4)
    # |errors| = 0, 0.5, 3, 0 -> median 0.25
    g = SampleMedianAE().update(preds[:2], refs[:2]).merge(SampleMedianAE().update(preds[2:], refs[2:]))
    assert g.compute_scores()["median_ae"] == pytest.approx(0.25)


def test_non_additive_array_intermediates():
    m = SampleAUC().update([0.9, 0.4], [[1], [1]]).update([0.4, 0.1], [[0], [0]])
    assert isinstance(m.state.intermediates(), np.ndarray)
    assert m.compute_scores()["auc"] == pytest.approx(3.5 / 4)


def test_reduce_must_return_main_score():
    class Wrong(SampleAccuracy):
        main_score = "acc"

    with pytest.raises(EvaluationError, match="main_score 'acc'"):
        Wrong().update([1], [[1]]).compute_scores()


def test_vectorized_and_row_wise_reduce_agree():
    totals = np.array([[3.0, 4.0], [0.0, 0.0], [1.0, 2.0]])
    many = SampleAccuracy().reduce_totals_many(totals)["accuracy"]
    np.testing.assert_allclose(many, [0.75, np.nan, 0.5])
    f1 = SampleF1().reduce_totals_many(np.array([[2.0, 1.0, 1.0], [0.0, 0.0, 0.0]]))["f1"]
    np.testing.assert_allclose(f1, [4 / 6, 0.0])


def test_clone_has_empty_state_and_same_options():
    m = SampleF1(positive=0).update([0], [[0]])
    c = m.clone()
    assert c.positive == 0 and c.state.n == 0 and m.state.n == 1


def test_map_must_return_fixed_length_stats():
    class Ragged(Metric):
        additive = True
        main_score = "x"

        def map(self, prediction, references, task_data=None):
            return [1.0] * prediction

        def reduce(self, totals):
            return {"x": totals[0]}

    with pytest.raises((EvaluationError, ValueError)):
        Ragged().update([1, 2], [[0], [0]])
