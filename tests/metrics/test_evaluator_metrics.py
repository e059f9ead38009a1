"""Metrics carried through EvaluatorBase: sharded runs give the sequential scores."""

from __future__ import annotations

import pytest
from assay_evaluator_samples import ExactEvaluator, NoInputsEvaluator, flaky_inputs
from assay_metric_samples import SampleAccuracy

import assay
from assay import DataPool
from assay.errors import EvaluationError, InvalidParameterError

ITEMS = [([1, 2, 3], [1, 2, 0]), ([4], [4]), ([5, 6], [0, 0]), ([7, 8, 9], [7, 8, 9]), ([1], [2])]


# per sentence (tokens right, tokens): (2, 3) (1, 1) (0, 2) (3, 3) (0, 1)
# sample_accuracy = sentences entirely right = 2 / 5; median |right - total| = median(1, 0, 2, 0, 1) = 1


def test_sequential_run_with_metrics_by_name_and_object(samples_system):
    r = ExactEvaluator().sequentialEvaluate(DataPool(ITEMS, num_shards=2), None, metrics=["sample_accuracy"])
    assert r.correct_num == 2 + 1 + 0 + 3 + 0 and r.gold_set_size == 10  # the tally is unchanged
    assert r.metrics["accuracy"] == pytest.approx(2 / 5) and r.metrics["score_name"] == "accuracy"
    assert r.metrics["score"] == pytest.approx(2 / 5)


@pytest.mark.parametrize("executor", ["serial", "threads[workers=2]", "processes[workers=2]"])
def test_sharded_run_equals_sequential(executor, samples_system):
    seq = ExactEvaluator().sequentialEvaluate(ITEMS, None, metrics=[SampleAccuracy(), "sample_median_ae"])
    par = ExactEvaluator().parallelEvaluate(ITEMS, None, executor=executor, num_shards=3,
                                            metrics=[SampleAccuracy(), "sample_median_ae"])
    assert dict(par.metrics) == dict(seq.metrics)
    assert par.metrics["median_ae"] == 1.0 and par.metrics["accuracy"] == pytest.approx(2 / 5)
    assert len(par.shards) == 3
    # each shard reports its own scores; together they count the 2 sentences that are entirely right
    assert sum(s.metrics["accuracy"] * s.sentence_num for s in par.shards) == pytest.approx(2)


def test_metrics_need_metric_inputs():
    with pytest.raises(InvalidParameterError, match="metric_inputs"):
        NoInputsEvaluator().sequentialEvaluate(ITEMS, None, metrics=[SampleAccuracy()])


def test_metric_inputs_failure_names_the_item():
    ev = ExactEvaluator()
    ev.metric_inputs = flaky_inputs
    with pytest.raises(EvaluationError, match="metric_inputs") as info:
        ev.sequentialEvaluate(ITEMS, None, metrics=[SampleAccuracy()])
    assert info.value.item == 2


def test_without_metrics_nothing_changes():
    r = ExactEvaluator().parallelEvaluate(ITEMS, None, executor="serial")
    assert dict(r.metrics) == {} and r.accuracy == 0.6
    assert isinstance(r, assay.EvaluationResult)
