"""The catalog's one input check (assay_unitxt.catalog.inputs): a value of the wrong kind is an
InvalidParameterError naming its place, before any computation; good values are scored."""

from __future__ import annotations

import math

import pytest

import assay
from assay.errors import InvalidParameterError
from assay_unitxt.catalog.inputs import check_inputs


def _score(name, preds, refs, task_data=None):
    res = assay.evaluate(preds, refs, metrics=[name], n_resamples=0, task_data=task_data)
    return float(res.global_scores["score"])


@pytest.mark.parametrize(("name", "preds", "refs", "place"), [
    ("metrics.accuracy", ["a", math.nan], [["a"], ["b"]], r"predictions\[1\] is nan"),
    ("metrics.accuracy", ["a", "b"], [["a"], [{"x": 1}]], r"references\[1\]\[0\] is \{'x': 1\}"),
    ("metrics.accuracy", ["a", ["b"]], [["a"], ["b"]], r"predictions\[1\] is \['b'\]"),
    ("metrics.f1_micro", ["a", "b"], [["a"], [None]], r"references\[1\]\[0\] is None"),
    ("metrics.f1_binary", [0.9, math.inf], [[1.0], [0.0]], r"predictions\[1\] is inf"),
    ("metrics.f1_binary", [0.9, 0.1], [[1.0], [1 + 2j]], r"references\[1\]\[0\] is \(1\+2j\)"),
    ("metrics.spearman", [1.0, 2.0, "3"], [[1.0], [2.0], [3.0]], r"predictions\[2\] is '3'"),
    ("metrics.map", [["a", "b"], ["c", math.nan]], [[["a"]], [["c"]]], r"predictions\[1\]\[1\] is nan"),
    ("metrics.map", [["a", "b"], ["c"]], [[["a"]], [b"c"]], r"references\[1\]\[0\] is b'c'"),
    ("metrics.ner", [[("J", "PER")], [("I", 3)]], [[[("J", "PER")]], [[("I", "ORG")]]],
     r"predictions\[1\]\[0\]\[1\] is 3"),
    ("metrics.wer", ["a b", 7], [["a b"], ["c"]], r"predictions\[1\] is 7"),
    ("metrics.key_value_extraction.accuracy", [{"a": "1"}, {"a": 1}], [[{"a": "1"}], [{"a": "1"}]],
     r"predictions\[1\] is \{'a': 1\}"),
    ("metrics.tool_calling.key_value.accuracy", [{"arguments": {"a": "1"}}], [[{"name": "f", "arguments": {}}]],
     r"predictions\[0\] is \{'arguments'"),
    ("metrics.fuzzyner", [[("J", "PER")], [("I", None)]], [[[("J", "PER")]], [[("I", "ORG")]]],
     r"predictions\[1\]\[0\]\[1\] is None"),
    ("metrics.kpa", ["yes", 1.5], [["yes"], ["none"]], r"predictions\[1\] is 1.5"),
    ("metrics.relaxed_correctness", ["1", "2"], [["1"], [2]], r"references\[1\]\[0\] is 2"),
])
def test_a_bad_value_is_named(name, preds, refs, place):
    with pytest.raises(InvalidParameterError, match=place):
        _score(name, preds, refs)


def test_good_values_of_each_kind_are_scored():
    # hand-derived: 1 of 2 labels right; a ranking with its relevant id first (AP 1) and second (AP 1/2)
    assert _score("metrics.accuracy", ["a", 1], [["a"], ["b"]]) == 0.5
    assert _score("metrics.map", [["a", "b"], ["x", "c"]], [[["a"]], [["c"]]]) == 0.75
    assert _score("metrics.mean_squared_error", [1, 2.0, 1.5], [[1.0], [4], [1]]) == pytest.approx((4 + 0.25) / 3)
    with pytest.raises(InvalidParameterError, match=r"predictions\[2\] is True"):
        _score("metrics.mean_squared_error", [1, 2.0, True], [[1.0], [4], [1]])


@pytest.mark.parametrize(("name", "field"), [("metrics.kpa", "keypoint"), ("metrics.relaxed_correctness", "type"),
                                           ("metrics.websrc_squad_f1", "domain")])
def test_a_missing_task_data_field_is_named(name, field):
    with pytest.raises(InvalidParameterError, match=f"{name} needs task_data with a '{field}'"):
        _score(name, ["a", "b"], [["a"], ["b"]], task_data=[{field: "x"}, {"other": 1}])


def test_the_position_counts_from_the_batch_offset():
    metric = assay.load_metric("metrics.accuracy")
    with pytest.raises(InvalidParameterError, match=r"predictions\[11\]") as info:
        check_inputs(metric, ["a", None], [["a"], ["b"]], offset=10)
    assert info.value.item == 11
