"""assay.core.tally.Tally: declared merge kinds, order, pickling, equality."""

from __future__ import annotations

import pickle

import attrs
import numpy as np
import pytest

import assay
from assay.core.tally import Tally, additive, gathered, kept, merged_by
from assay.errors import InvalidParameterError
from assay.metrics import MetricState


@attrs.frozen
class Example(Tally):
    count: int = additive(0)
    sums: np.ndarray | None = additive(None)
    rows: tuple = gathered(())
    first: str = kept("")
    longest: str = kept("", fn=lambda a, b: max(a, b, key=len))
    labels: frozenset = merged_by(lambda a, b: a | b, default=frozenset())
    unit: str = "x"


def test_each_kind_merges_as_declared():
    a = Example(1, np.array([1.0, 2.0]), ("a",), "A", "ab", frozenset({1}))
    b = Example(2, np.array([0.5, 0.5]), ("b", "c"), "B", "abc", frozenset({2}))
    m = a + b
    assert m.count == 3 and np.array_equal(m.sums, [1.5, 2.5])
    assert m.rows == ("a", "b", "c") and m.first == "A" and m.longest == "abc" and m.labels == {1, 2}


def test_merge_order_is_operand_order_and_sum_works():
    parts = [Example(i, None, (i,)) for i in range(4)]
    assert sum(parts) == parts[0].merge(*parts[1:]) == Example.total(parts)
    assert sum(parts).rows == (0, 1, 2, 3) and sum(parts).count == 6
    assert (parts[1] + parts[0]).rows == (1, 0)


def test_none_is_the_additive_zero_and_shapes_must_agree():
    a = Example(sums=np.ones(2))
    assert np.array_equal((Example() + a).sums, [1, 1]) and np.array_equal((a + Example()).sums, [1, 1])
    with pytest.raises(InvalidParameterError, match="'sums'.*shapes"):
        a + Example(sums=np.ones(3))


def test_undeclared_fields_must_agree():
    with pytest.raises(InvalidParameterError, match="'unit' differs"):
        Example(unit="x") + Example(unit="y")


def test_equality_by_value_and_pickling():
    a = Example(1, np.array([1.0, np.nan]), ("a",))
    assert a == Example(1, np.array([1.0, np.nan]), ("a",))
    assert a != Example(1, np.array([1.0, 0.0]), ("a",))
    assert pickle.loads(pickle.dumps(a)) == a


def test_metric_state_is_a_tally():
    a = MetricState(totals=np.array([1.0, 2.0]), n=2, chunks=[], start=0)
    b = MetricState(totals=np.array([3.0, 4.0]), n=1, chunks=[], start=2)
    m = a + b
    assert np.array_equal(m.totals, [4.0, 6.0]) and m.n == 3 and m.start == 0
    g = MetricState(chunks=[[1, 2]], n=2) + MetricState(chunks=[[3]], n=1)
    assert g.intermediates() == [1, 2, 3]
    assert pickle.loads(pickle.dumps(m)) == m


def test_evaluation_result_is_a_tally():
    assert isinstance(assay.EvaluationResult(1, 2), Tally)
    kinds = assay.EvaluationResult.tally_fields()
    assert kinds["correct_num"] == kinds["gold_set_size"] == kinds["sentence_num"] == "additive"
    assert assay.Tally is Tally and "Tally" in assay.__all__
