"""Metric class attributes assay would ignore are errors at class creation (issue 10).

unitxt's attributes (reduction_map, _requirements_list ...) are tested with the plugin that honours them,
plugins/assay-unitxt/tests/test_unitxt_class_attributes.py; the handler mechanism in test_attribute_handlers.py.
"""

from __future__ import annotations

import pytest

import assay
from assay.errors import InvalidParameterError
from assay.metrics import BulkInstanceMetric, InstanceMetric, Metric


def _make(base, body: dict, name="SumAccuracy"):
    def compute_instance(self, prediction, references, task_data=None):
        return {"sum_accuracy": float(sum(prediction) == references[0]), "extra": 1.0}

    ns = {"main_score": "sum_accuracy", "compute_instance": compute_instance, **body}
    return type(name, (base,), ns)


@pytest.mark.parametrize("attr,value,expect", [
    # options of every metric are type-checked
    ("single_reference_per_prediction", "yes", r"it must be a bool"),
    ("n_resamples", -1, r"it must be None or an int >= 0"),
    ("main_scroe", "x", r"did you mean 'main_score'"),
    ("higher_is_beter", False, r"did you mean 'higher_is_better'"),
    ("tolerance", 0.1, r"not supported by assay.*annotate it"),
])
def test_unsupported_or_misspelt_attribute_is_an_error(attr, value, expect):
    with pytest.raises(InvalidParameterError, match=expect) as info:
        _make(InstanceMetric, {attr: value})
    msg = str(info.value)
    assert "SumAccuracy" in msg and repr(attr) in msg


@pytest.mark.parametrize("attr,value", [("main_score", 3), ("main_score", ""), ("higher_is_better", "yes"),
                                        ("ci_scores", "sum_accuracy"), ("requirements", ["numpy"]),
                                        ("n_stats", 0), ("prediction_type", "floaty"), ("needs_references", 1)])
def test_known_attribute_with_a_wrong_type_is_an_error(attr, value):
    with pytest.raises(InvalidParameterError, match=rf"SumAccuracy .*declares {attr!r}: it must be"):
        _make(InstanceMetric, {attr: value})


def test_own_options_are_allowed_when_annotated_or_read():
    # annotated (dataclass-like field) and read by compute_instance
    class Close(InstanceMetric):
        main_score = "close"
        relative_tolerance: float = 0.5

        def compute_instance(self, prediction, references, task_data=None):
            return float(abs(prediction - references[0]) <= self.relative_tolerance * abs(references[0]))

    assert Close().update([1.4, 2.0], [[1.0], [1.0]]).compute_scores()["close"] == 0.5  # |0.4| <= 0.5, |1| > 0.5

    # read by a method, not annotated (as assay_classic's _Correlation.method)
    class Thresholded(BulkInstanceMetric):
        main_score = "above"
        threshold = 0.5

        def compute_bulk(self, predictions, references, task_data):
            return [float(p > self.threshold) for p in predictions]

    assert Thresholded(score_prefix="").update([0.2, 0.9], [[0], [0]]).compute_scores()["above"] == 0.5

    # private helpers, constants and methods are the class's own business
    class Helpers(Metric):
        main_score = "s"
        _cache = {}
        LIMIT = 3

        def helper(self):
            return 1


def test_every_registered_metric_class_is_valid():
    # importing the registered classes goes through __init_subclass__; creating each must work
    from assay.plugins import get_registry

    names = get_registry("metric").names()
    assert "accuracy" in names and "disagreement" in names
    for name in names:
        assert isinstance(assay.load_metric(name), Metric)
