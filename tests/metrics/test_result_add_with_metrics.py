"""Results that carry metrics add with ``+`` (issue 12): the metric states merge, the scores follow."""

from __future__ import annotations

import pickle

import pytest
from assay_evaluator_samples import ExactEvaluator
from assay_metric_samples import SampleAccuracy, SampleMedianAE

from assay import DataPool

# per sentence (tokens right, tokens): (2, 3) (1, 1) (0, 2) (3, 3) (0, 1)
ITEMS = [([1, 2, 3], [1, 2, 0]), ([4], [4]), ([5, 6], [0, 0]), ([7, 8, 9], [7, 8, 9]), ([1], [2])]


def _run(items, **options):
    options.setdefault("n_resamples", 0)
    return ExactEvaluator().sequentialEvaluate(DataPool(items), None, metrics=[SampleAccuracy(), SampleMedianAE()],
                                               **options)


def test_results_with_metrics_add():
    r1, r2 = _run(ITEMS[:2]), _run(ITEMS[2:])
    assert r1.metrics["accuracy"] == 0.5 and r2.metrics["accuracy"] == pytest.approx(1 / 3)  # they differ
    total = r1 + r2
    # by hand: sentences entirely right 2 of 5; |right - total| = 1, 0, 2, 0, 1 -> median 1
    assert total.metrics["accuracy"] == pytest.approx(2 / 5)
    assert total.metrics["median_ae"] == 1.0
    assert total.metrics["score"] == pytest.approx(2 / 5) and total.metrics["score_name"] == "accuracy"
    assert (total.correct_num, total.gold_set_size, total.sentence_num) == (6, 10, 5)
    assert dict(total.metrics) == dict(_run(ITEMS).metrics)


def test_sum_of_results_with_metrics():
    parts = [_run([item]) for item in ITEMS]
    total = sum(parts)
    assert total.metrics["accuracy"] == pytest.approx(2 / 5) and total.metrics["median_ae"] == 1.0
    assert len(total.shards) == 5


def test_result_with_metrics_pickles_and_still_adds():
    r1, r2 = _run(ITEMS[:2]), _run(ITEMS[2:])
    again = pickle.loads(pickle.dumps(r1))
    assert again == r1
    assert (again + r2).metrics["accuracy"] == pytest.approx(2 / 5)


def test_adding_separate_runs_with_intervals_drops_the_intervals():
    # two runs over different pools both start at position 0: their Poisson weights are the same
    # draws, so the sum must not pretend to have intervals; the scores still add
    r1, r2 = _run(ITEMS[:2], n_resamples=50), _run(ITEMS[2:], n_resamples=50)
    assert "score_ci_low" in r1.metrics
    with pytest.warns(UserWarning, match="no confidence intervals"):
        total = r1 + r2
    assert "score_ci_low" not in total.metrics and total.metrics["accuracy"] == pytest.approx(2 / 5)


def test_a_shard_returns_one_state():
    r = ExactEvaluator().parallelEvaluate(DataPool(ITEMS), None, executor="serial", num_shards=2,
                                          metrics=[SampleAccuracy()], n_resamples=0)
    assert "__metric_states__" not in r.metrics
    assert all(s.metric_tally is not None for s in r.shards)
    assert sum(r.shards).metrics["accuracy"] == r.metrics["accuracy"] == pytest.approx(2 / 5)
