"""Sharded evaluation equals sequential evaluation, for any shard count, worker count and executor."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay import DataPool, EvaluatorBase

# empty pools and all-zero gold counts are part of the space; their NaN warning is tested elsewhere
pytestmark = pytest.mark.filterwarnings("ignore::assay.core.result.UndefinedMetricWarning")

tallies = st.lists(st.tuples(st.integers(0, 50), st.integers(0, 50)).map(lambda p: (min(p), max(p))), max_size=60)


def pair_evaluator(sent, w_vector):
    return sent


def sequential(items):
    ev = EvaluatorBase()
    return ev.sequentialEvaluate(DataPool(items), None, pair_evaluator)


def check(items, num_shards, executor):
    expected = sequential(items)
    ev = EvaluatorBase()
    r = ev.parallelEvaluate(DataPool(items), None, pair_evaluator, executor=executor, num_shards=num_shards)
    # independent reference: plain sums
    assert (r.correct_num, r.gold_set_size, r.sentence_num) == (
        sum(c for c, _ in items), sum(g for _, g in items), len(items))
    assert (r.correct_num, r.gold_set_size, r.sentence_num) == (
        expected.correct_num, expected.gold_set_size, expected.sentence_num)
    assert (ev.correct_num, ev.gold_set_size) == (r.correct_num, r.gold_set_size)
    assert len(r.shards) == num_shards
    # shard results are the tallies of contiguous slices, in order
    start = 0
    for shard in r.shards:
        part = items[start:start + shard.sentence_num]
        assert (shard.correct_num, shard.gold_set_size) == (sum(c for c, _ in part), sum(g for _, g in part))
        start += shard.sentence_num
    assert start == len(items)


@settings(max_examples=60, deadline=None)
@given(items=tallies, num_shards=st.integers(1, 80), workers=st.integers(1, 4),
       executor=st.sampled_from(["serial", "threads"]))
def test_in_process_executors_equal_sequential(items, num_shards, workers, executor):
    check(items, num_shards, f"{executor}[workers={workers}]")


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=tallies, num_shards=st.integers(1, 12), workers=st.integers(1, 3))
def test_process_executor_equals_sequential(items, num_shards, workers):
    check(items, num_shards, f"processes[workers={workers}]")
