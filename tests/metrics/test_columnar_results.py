"""assay.evaluate keeps columns and builds each instance's dict on first access; the caller sees a list of dicts."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import assay
from assay.metrics.results import load_results


def eager_view(predictions, references, hits, g):
    """The unitxt view built by hand: what a plain list of dicts holds."""
    return [{"prediction": p, "references": r,
             "score": {"instance": {"accuracy": h, "score": h, "score_name": "accuracy"}, "global": g}}
            for p, r, h in zip(predictions, references, hits)]


def test_the_sequence_behaves_as_the_list_of_dicts(tmp_path):
    preds, refs = [1, 2, 3, 4], [1, 0, 3, 0]
    res = assay.evaluate(preds, refs, metrics=["accuracy"], n_resamples=0)
    g = res.global_scores
    expected = eager_view(preds, refs, [1.0, 0.0, 1.0, 0.0], g)
    assert len(res) == 4 and res == expected and list(res) == expected
    assert res[-1] == expected[-1] and res[1:3] == expected[1:3] and res[::-2] == expected[::-2]
    with pytest.raises(IndexError, match="out of range"):
        res[4]
    with pytest.raises(TypeError, match="integers or slices"):
        res["0"]
    assert res[0]["score"]["global"] is g  # one global dict shared by every instance
    # an edit to an instance stays (the dict is built once)
    res[2]["note"] = "checked"
    assert res[2]["note"] == "checked" and "note" in list(res)[2]
    assert json.loads(json.dumps(list(res)))[0]["score"]["instance"] == {"accuracy": 1.0, "score": 1.0,
                                                                          "score_name": "accuracy"}
    with pytest.raises(TypeError):  # not silently written as []: the encoder refuses a non-list
        json.dumps(res)
    back = load_results(res.save(tmp_path / "r.json"))
    assert [b["score"]["instance"] for b in back] == [r["score"]["instance"] for r in res]
    assert res.predictions == preds and res.references == refs and res.task_data is None


def test_numpy_inputs_read_back_as_python_values():
    res = assay.evaluate(np.array([1, 2]), np.array([[1], [3]]), metrics=["accuracy"], n_resamples=0)
    assert res[0]["prediction"] == 1 and type(res[0]["prediction"]) is int
    assert res[1]["references"] == [3] and res.predictions == [1, 2]


def test_two_metrics_and_first_precedence_build_the_same_dicts_as_before():
    preds, refs = ["a", "b", "c"], [["a"], ["x"], ["c", "d"]]
    res = assay.evaluate(preds, refs, metrics=["accuracy", "exact_match"], n_resamples=0)
    inst = res[2]["score"]["instance"]
    assert inst["accuracy"] == 1.0 and inst["exact_match"] == 1.0 and inst["score_name"] == "accuracy"
    twice = assay.evaluate(preds, refs, metrics=["accuracy", "accuracy"], n_resamples=0, score_collisions="first")
    assert twice[1]["score"]["instance"] == {"accuracy": 0.0, "score": 0.0, "score_name": "accuracy"}


SCALARS = st.one_of(st.integers(-2, 2), st.sampled_from([0.0, 1.0, 1.5, True, False]), st.sampled_from(["1", "a", "b"]))


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_the_vectorized_accuracy_equals_python_equality(data):
    n = data.draw(st.integers(1, 12))
    preds = data.draw(st.lists(SCALARS, min_size=n, max_size=n))
    wrap = data.draw(st.booleans())
    refs = data.draw(st.lists(SCALARS, min_size=n, max_size=n))
    refs_in = [[r] for r in refs] if wrap else refs
    res = assay.evaluate(preds, refs_in, metrics=["accuracy"], n_resamples=0)
    expected = [float(p == r) for p, r in zip(preds, refs)]
    assert [x["score"]["instance"]["accuracy"] for x in res] == expected
    assert math.isclose(res.global_scores["accuracy"], sum(expected) / n)


def test_editing_the_inputs_afterwards_does_not_change_the_results():
    preds, refs = [1, 2, 3], [[1], [2], [0]]
    arr = np.array([1, 2, 3])
    res = assay.evaluate(preds, refs, metrics=["accuracy"], n_resamples=0)
    res_arr = assay.evaluate(arr, refs, metrics=["accuracy"], n_resamples=0)
    preds[0] = 99
    refs[1] = [42]
    arr[2] = 77
    assert res[0]["prediction"] == 1 and res[1]["references"] == [2] and res.predictions == [1, 2, 3]
    assert res_arr[2]["prediction"] == 3
