"""EvaluationResult: immutable, additive, defined on zero denominators."""

from __future__ import annotations

import math
import pickle

import attrs
import pytest

from assay import EvaluationResult, InvalidParameterError
from assay.core.result import UndefinedMetricWarning


def test_ratios_by_hand():
    r = EvaluationResult(26659, 32853, 1346, feature_count=668751)
    assert r.accuracy == 26659 / 32853
    assert r.attachment_accuracy == (26659 + 1346) / (32853 + 1346)
    assert f"{r.accuracy:.12f}" == "0.811463184488"
    assert f"{r.attachment_accuracy:.12f}" == "0.818883593088"


def test_results_add_tallies_and_concatenate_shards():
    a = EvaluationResult(3, 4, 1)
    b = EvaluationResult(5, 6, 2)
    c = EvaluationResult(0, 0, 0)
    total = a + b + c
    assert (total.correct_num, total.gold_set_size, total.sentence_num) == (8, 10, 3)
    assert total.shards == (a, b, c)
    assert sum([a, b, c]) == total
    # adding two sharded results keeps every shard, in order
    assert (total + total).shards == (a, b, c, a, b, c)


def test_from_shards_keeps_order_and_feature_count():
    parts = [EvaluationResult(1, 2, 1), EvaluationResult(2, 2, 1)]
    r = EvaluationResult.from_shards(parts, feature_count=9)
    assert r.shards == tuple(parts) and r.feature_count == 9
    assert (r.correct_num, r.gold_set_size, r.sentence_num) == (3, 4, 2)
    with pytest.raises(InvalidParameterError, match="'shards'"):
        EvaluationResult.from_shards([parts[0], (1, 2)])


def test_feature_count_when_adding():
    fc = lambda a, b: (EvaluationResult(0, 0, feature_count=a) + EvaluationResult(0, 0, feature_count=b)).feature_count  # noqa: E731
    assert fc(5, 5) == 5
    assert fc(None, 5) == 5 and fc(5, None) == 5
    assert fc(4, 5) is None


def test_frozen():
    r = EvaluationResult(1, 2)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        r.correct_num = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        r.metrics["x"] = 1  # type: ignore[index]


@pytest.mark.parametrize("kwargs, name", [
    ({"correct_num": -1, "gold_set_size": 2}, "correct_num"),
    ({"correct_num": True, "gold_set_size": 2}, "correct_num"),
    ({"correct_num": 1, "gold_set_size": 2.0}, "gold_set_size"),
    ({"correct_num": 1, "gold_set_size": 2, "sentence_num": -3}, "sentence_num"),
    ({"correct_num": 1, "gold_set_size": 2, "feature_count": "many"}, "feature_count"),
])
def test_invalid_fields_name_the_field(kwargs, name):
    with pytest.raises(InvalidParameterError, match=f"'{name}'"):
        EvaluationResult(**kwargs)


def test_correct_may_not_exceed_gold():
    with pytest.raises(InvalidParameterError, match="correct_num <= gold_set_size"):
        EvaluationResult(3, 2)


def test_zero_denominators_give_nan_and_a_warning():
    empty = EvaluationResult(0, 0, 0)
    with pytest.warns(UndefinedMetricWarning, match="gold_set_size == 0"):
        assert math.isnan(empty.accuracy)
    with pytest.warns(UndefinedMetricWarning, match="empty evaluation"):
        assert math.isnan(empty.attachment_accuracy)
    no_gold = EvaluationResult(0, 0, 2)  # two sentences without gold items: only their roots
    with pytest.warns(UndefinedMetricWarning):
        assert math.isnan(no_gold.accuracy)
    assert no_gold.attachment_accuracy == 1.0


def test_pickle_round_trip_with_shards_and_metrics():
    r = EvaluationResult.from_shards([EvaluationResult(1, 1, 1), EvaluationResult(0, 1, 1)], feature_count=3,
                                     metrics={"f1": 0.5})
    back = pickle.loads(pickle.dumps(r))
    assert back == r and back.shards == r.shards and dict(back.metrics) == {"f1": 0.5}


def test_metrics_default_empty_and_merge_only_when_consistent():
    a = EvaluationResult(1, 1, metrics={"x": 1})
    assert dict(EvaluationResult(1, 1).metrics) == {}
    assert dict((a + EvaluationResult(0, 1)).metrics) == {"x": 1}
    assert dict((a + EvaluationResult(0, 1, metrics={"x": 1, "y": 2})).metrics) == {"x": 1, "y": 2}
    with pytest.raises(InvalidParameterError, match=r"metrics\['x'\] differ"):
        a + EvaluationResult(0, 1, metrics={"x": 2})


def test_to_dict_is_plain():
    d = EvaluationResult(0, 0, 0).to_dict()
    assert d["accuracy"] is None and d["shards"] == [] and d["metrics"] == {}
