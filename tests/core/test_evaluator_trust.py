"""Tallies that are not pairs, BaseExceptions in sentence evaluators, pool positions in metric errors (issue 10)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from assay import DataPool, EvaluationError, EvaluatorBase
from assay.errors import InvalidParameterError

sys.path.insert(0, str(Path(__file__).parents[1] / "metrics"))
from assay_metric_samples import SampleF1

EXECUTORS = ["serial", "threads[workers=2]"]


class Returns(EvaluatorBase):
    """Returns a fixed value for item 4 and (1, 1) for every other item."""

    def __init__(self, value):
        super().__init__()
        self.value = value

    def sentence_evaluator(self, sent, w_vector):
        return self.value if sent == 4 else (1, 1)


BAD_TALLIES = [
    {0: 1, 1: 2},            # before: read as its keys, (0, 1)
    {1, 2},                  # a set has no order
    "12", b"12",             # strings of length 2
    (1.0, 2.0), (1, 2.5),    # floats
    (True, 1), (1, np.True_),
    (2, 1), (-1, 3), (1, -1),
    (1, 2, 3), (1,), (), None, 3, 2.0,
    np.array([[1, 2], [3, 4]]), np.array([1, 2, 3]),
    iter([1, 2]), range(1, 3), frozenset({1, 3}),
    (1, "2"), (None, 2),
]


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("value", BAD_TALLIES, ids=lambda v: type(v).__name__ + repr(v)[:20])
def test_a_bad_tally_names_the_pool_item_and_the_shard(value, executor):
    pool = DataPool(list(range(6)), num_shards=2)   # shards: items 0..2, 3..5: item 4 is in shard 1
    with pytest.raises(EvaluationError, match=r"item 4 \(shard 1\)") as info:
        Returns(value).parallelEvaluate(pool, None, executor=executor)
    assert (info.value.item, info.value.shard) == (4, 1)


@pytest.mark.parametrize("value,expected", [((2, 3), (7, 8)), ([2, 3], (7, 8)), (np.array([2, 3]), (7, 8)),
                                            ((np.int64(0), np.int32(5)), (5, 10))])
def test_pairs_as_tuple_list_or_array_are_accepted(value, expected):
    r = Returns(value).sequentialEvaluate(DataPool(list(range(6)), num_shards=2), None)
    # five items give (1, 1) each, item 4 gives the value
    assert (r.correct_num, r.gold_set_size) == expected


class Raises(EvaluatorBase):
    def __init__(self, exc):
        super().__init__()
        self.exc = exc

    def sentence_evaluator(self, sent, w_vector):
        if sent == 4:
            raise self.exc
        return 1, 1


class CustomBase(BaseException):
    pass


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("exc", [SystemExit(3), SystemExit(), CustomBase("odd"), GeneratorExit(), ValueError("bad")],
                         ids=repr)
def test_system_exit_and_other_base_exceptions_become_evaluation_errors(exc, executor):
    pool = DataPool(list(range(6)), num_shards=2)
    expected = rf"sentence_evaluator raised {type(exc).__name__} on item 4 \(shard 1\)"
    with pytest.raises(EvaluationError, match=expected) as info:
        Raises(exc).parallelEvaluate(pool, None, executor=executor)
    assert info.value.__cause__ is exc and (info.value.item, info.value.shard) == (4, 1)


def test_keyboard_interrupt_still_interrupts_and_names_the_item():
    pool = DataPool(list(range(6)), num_shards=2)
    with pytest.raises(KeyboardInterrupt) as info:
        Raises(KeyboardInterrupt()).sequentialEvaluate(pool, None)
    assert any("item 4 (shard 1)" in note for note in getattr(info.value, "__notes__", []))


# ------------------------------------------------------------------ metric errors name pool positions
class WithMetric(EvaluatorBase):
    def sentence_evaluator(self, sent, w_vector):
        return 1, 1

    def metric_inputs(self, sent, w_vector):
        # SampleF1 wants int predictions: pool item 4 gives a str
        return ("four" if sent == 4 else sent % 2), [1]


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_metric_error_in_a_sharded_run_names_the_pool_position(executor):
    pool = DataPool(list(range(6)), num_shards=2)   # item 4 is the second item of shard 1
    with pytest.raises((EvaluationError, InvalidParameterError)) as info:
        WithMetric().parallelEvaluate(pool, None, executor=executor, metrics=[SampleF1()])
    msg = str(info.value)
    # before: "instance 1" (its position inside shard 1)
    assert "instance 4 " in msg and "shard 1" in msg and "instance 1 " not in msg
    assert info.value.item == 4


class LocalCount(SampleF1):
    """A metric whose own check names positions within the batch it is given (as plugins' checks do)."""

    def map_batch(self, predictions, references, task_data):
        for i, p in enumerate(predictions):
            if p == 99:
                raise ValueError(f"bad value at instance {i}")
        return super().map_batch(predictions, references, task_data)


class With99(WithMetric):
    def metric_inputs(self, sent, w_vector):
        return (99 if sent == 4 else sent % 2), [1]


def test_a_metric_s_own_message_is_anchored_to_the_shard_start():
    with pytest.raises(EvaluationError) as info:
        With99().sequentialEvaluate(DataPool(list(range(6)), num_shards=2), None, metrics=[LocalCount()])
    msg = str(info.value)
    # "instance 1" of shard 1 is pool item 3 + 1 = 4: the message names that pool position (issue 27, item 18)
    assert "shard 1 (pool items 3..5)" in msg
    assert "bad value at instance 1 (pool position 4)" in msg and info.value.shard == 1


class BadInputs(WithMetric):
    def __init__(self, value):
        super().__init__()
        self.value = value

    def metric_inputs(self, sent, w_vector):
        if sent == 4:
            if isinstance(self.value, BaseException):
                raise self.value
            return self.value
        return sent % 2, [1]


@pytest.mark.parametrize("value", [SystemExit(2), {"prediction": 1, "references": [1]}, "ab", (1,), (1, [1], None, 4),
                                   None])
def test_bad_metric_inputs_name_the_item(value):
    pool = DataPool(list(range(6)), num_shards=2)
    with pytest.raises(EvaluationError, match=r"metric_inputs .*item 4 \(shard 1\)") as info:
        BadInputs(value).sequentialEvaluate(pool, None, metrics=[SampleF1()])
    assert (info.value.item, info.value.shard) == (4, 1)
