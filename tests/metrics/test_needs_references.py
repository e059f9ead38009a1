"""A metric that needs references gets a clear error without them (issue 10), whatever its kind."""

from __future__ import annotations

import pytest

import assay
from assay.errors import InvalidParameterError
from assay.metrics import InstanceMetric, Metric, divide


class Lenient(InstanceMetric):
    """Scores 0 when references are missing, as classic ``accuracy`` did: the silent case."""

    main_score = "hit"

    def compute_instance(self, prediction, references, task_data=None):
        return float(prediction in (references or []))


class Length(Metric):
    """Mean prediction length: needs no references."""

    main_score = "length"
    additive = True
    vectorized = True
    n_stats = 2
    needs_references = False

    def map(self, prediction, references, task_data=None):
        return [float(len(prediction)), 1.0]

    def reduce(self, totals):
        return {"length": divide(totals[..., 0], totals[..., 1])}


def test_registered_accuracy_without_references_is_an_error_not_zero():
    # before: the global accuracy was 0.0 and no error
    with pytest.raises(InvalidParameterError, match=r"'accuracy' needs references.*references=None for 3 predictions"):
        assay.evaluate([1, 2, 3], None, metrics=["accuracy"], n_resamples=0)


@pytest.mark.parametrize("call", ["evaluate", "update"])
def test_any_metric_needing_references_says_so(call):
    with pytest.raises(InvalidParameterError, match="needs references"):
        if call == "evaluate":
            assay.evaluate(["a", "b"], None, metrics=[Lenient()], n_resamples=0)
        else:
            Lenient().update(["a", "b"])


@pytest.mark.parametrize("refs,n_refs", [([["a"]], 1), ([["a"], ["b"], ["c"]], 3)])
def test_length_mismatch_names_both_lengths(refs, n_refs):
    with pytest.raises(InvalidParameterError, match=rf"got 2 predictions and {n_refs} references"):
        assay.evaluate(["a", "b"], refs, metrics=[Lenient()], n_resamples=0)


def test_references_as_a_mapping_are_rejected():
    with pytest.raises(InvalidParameterError, match="references .* sequence"):
        Lenient().update(["a", "b"], {0: ["a"], 1: ["b"]})


def test_a_metric_that_declares_it_needs_no_references_still_runs():
    res = assay.evaluate(["ab", "abcd"], None, metrics=[Length()], n_resamples=0)
    assert res[0]["score"]["global"]["length"] == 3.0  # (2 + 4) / 2


def test_an_instance_without_references_is_named():
    # before: Lenient scored the instance 0 (accuracy 1/3 instead of an error)
    with pytest.raises(InvalidParameterError, match="instance 1 has references None"):
        assay.evaluate(["a", "b", "c"], [["a"], None, ["x"]], metrics=[Lenient()], n_resamples=0)
    m = Lenient().update(["a"], [["a"]])
    with pytest.raises(InvalidParameterError, match="instance 2 has references None"):  # counts across updates
        m.update(["b", "c"], [["b"], None])
