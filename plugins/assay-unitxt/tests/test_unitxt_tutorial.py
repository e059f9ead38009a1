"""unitxt's metrics tutorial (docs/docs/adding_metric.rst) runs on assay with only the imports changed.

The two classes and the ``test_metric`` call below are the tutorial's code; the import
lines are the only change (``unitxt.metrics`` -> ``assay.metrics``,
``unitxt.test_utils.metrics`` -> ``assay.testing``). Expected values are the tutorial's
own (0.33 for 1/3, the interval [0.0, 1.0]) or derived by hand in each test.
The tutorial's code keeps its typing.List / Dict spelling and long comments, as written.
"""
# ruff: noqa: UP006, UP035, E501

from __future__ import annotations

from math import isclose
from typing import Dict, List

import pytest

import assay
from assay.metrics import GlobalMetric, InstanceMetric  # was: from unitxt.metrics import ...
from assay.testing import test_metric  # was: from unitxt.test_utils.metrics import test_metric


# ----------------------------------------------------------------- the tutorial's code, as written
class SumAccuracy(InstanceMetric):

    main_score = "sum_accuracy" # name of the main score
    reduction_map = {"mean": ["sum_accuracy"]} # defines that the global score is a mean of the instance scores
    ci_scores = ["sum_accuracy"] # define that confidence internal should be calculated on the score
    prediction_type = int      # the metric expect the prediction as an int

    # Relation tolerance for errors by default it is 0, but can be changed for approximate comparison
    relative_tolerance : float = 0

    def compute(
        self, references: List[int], prediction: int, task_data: List[Dict]
    ) -> dict:
        actual_sum = task_data["num1"] + task_data["num2"]
        isclose_enough =  isclose(actual_sum, prediction, rel_tol=self.relative_tolerance)
        result = { self.main_score : 1.0 if isclose_enough else 0.0}
        return result


class SensitivityToNumericMagnitude(GlobalMetric):
    """
    SensitiveToNumericMagnitude is a reference-based metric that calculates if accuracy depends
    on the numeric magnitude of the reference value.  It receives integer prediction values and integer reference values
    and calculates the correlation between the number of digits in the reference values and the accuracy
    (whether predictions=references).
    """
    prediction_type = int
    main_score="sensitivity_to_numeric_magnitude"
    single_reference_per_prediction = True  # validates only one reference is passed per prediction

    def compute(
        self, references: List[List[int]], predictions: List[int], task_data: List[Dict]
    ) -> dict:
        import scipy.stats as stats  # Note the local import to ensure import is required only if metric is actually used
        magnitude = [ len(str(abs(reference[0]))) for reference in references ]
        accuracy = [ reference[0] == prediction  for (reference, prediction) in zip(references, predictions) ]
        spearman_coeff, p_value =  stats.spearmanr(magnitude, accuracy)
        result = { self.main_score :  spearman_coeff }
        return result


PREDICTIONS = [3, 799 , 50]
REFERENCES = [[5],[800],[50]]
TASK_DATA = [{"num1" : 2, "num2" : 3}, {"num1" : 300, "num2" : 500}, {"num1" : -25, "num2" : 75}]


def test_sum_accuracy_tutorial_test_metric_passes():
    metric = SumAccuracy()

    predictions = [3, 799 , 50]
    references = [[5],[800],[50]]
    task_data = [{"num1" : 2, "num2" : 3}, {"num1" : 300, "num2" : 500}, {"num1" : -25, "num2" : 75}]
    instance_targets = [
        {"sum_accuracy": 0.0, "score": 0.0, "score_name": "sum_accuracy"},
        {"sum_accuracy": 0.0, "score": 0.0, "score_name": "sum_accuracy"},
        {"sum_accuracy": 1.0, "score": 1.0, "score_name": "sum_accuracy"},
    ]

    global_target = {
        "sum_accuracy": 0.33,
        "score": 0.33,
        "score_name": "sum_accuracy",
        "sum_accuracy_ci_low": 0.0,
        "sum_accuracy_ci_high": 1.0,
        "score_ci_low": 0.0,
        "score_ci_high": 1.0,
    }

    outputs = test_metric(
        metric=metric,
        predictions=predictions,
        references=references,
        instance_targets=instance_targets,
        global_target=global_target,
        task_data=task_data
    )
    # by hand: sums 5, 800, 50 against 3, 799, 50 -> only the third is exact: 1/3
    g = outputs[0]["score"]["global"]
    assert g["sum_accuracy"] == pytest.approx(1 / 3)
    # the interval was computed: a resample of three 0/1 scores is all zeros with
    # probability (2/3)^3 = 0.30 and all ones with (1/3)^3 = 0.037, both above 0.025,
    # so the 95% percentile interval is [0, 1]
    assert (g["score_ci_low"], g["score_ci_high"]) == (0.0, 1.0)


def test_test_metric_still_fails_on_a_wrong_target():
    with pytest.raises(AssertionError, match="sum_accuracy"):
        test_metric(metric=SumAccuracy(), predictions=PREDICTIONS, references=REFERENCES,
                    instance_targets=None, global_target={"sum_accuracy": 0.34}, task_data=TASK_DATA)
    with pytest.raises(AssertionError, match="score_ci_high"):  # the interval is really compared
        test_metric(metric=SumAccuracy(), predictions=PREDICTIONS, references=REFERENCES,
                    instance_targets=None, global_target={"score_ci_high": 0.67}, task_data=TASK_DATA)
    # a target written with full precision is compared with atol, not rounded
    with pytest.raises(AssertionError):
        test_metric(metric=SumAccuracy(), predictions=PREDICTIONS, references=REFERENCES,
                    instance_targets=None, global_target={"sum_accuracy": 0.333}, task_data=TASK_DATA)
    with pytest.raises(AssertionError):  # decimals=None: atol only
        test_metric(metric=SumAccuracy(), predictions=PREDICTIONS, references=REFERENCES,
                    instance_targets=None, global_target={"sum_accuracy": 0.33}, task_data=TASK_DATA,
                    decimals=None)


def test_relative_tolerance_from_the_constructor():
    # 799 is within 10% of 800 and 3 is not within 10% of 5 (|3 - 5| = 2 > 0.5): 2/3
    test_metric(metric=SumAccuracy(relative_tolerance=0.1), predictions=PREDICTIONS, references=REFERENCES,
                instance_targets=[{"sum_accuracy": 0.0}, {"sum_accuracy": 1.0}, {"sum_accuracy": 1.0}],
                global_target={"sum_accuracy": 0.67, "score_name": "sum_accuracy"}, task_data=TASK_DATA)
    assert SumAccuracy().relative_tolerance == 0  # the class default is untouched


def test_relative_tolerance_from_a_catalog_name(register_assay_plugin):
    class Plugin:
        @assay.hookimpl
        def assay_register_metrics(self, register):
            register("sum_accuracy", SumAccuracy)

    register_assay_plugin(Plugin())
    m = assay.load_metric("sum_accuracy[relative_tolerance=0.1]")
    assert isinstance(m, SumAccuracy) and m.relative_tolerance == 0.1
    res = assay.evaluate(PREDICTIONS, REFERENCES, ["sum_accuracy[relative_tolerance=0.5]"], TASK_DATA,
                         n_resamples=0)
    # 50% tolerance: |3 - 5| = 2 <= 2.5, 799, 50: all three
    assert res[0]["score"]["global"]["sum_accuracy"] == 1.0
    with pytest.raises(assay.errors.InvalidParameterError, match="relative_tolerence"):
        assay.load_metric("sum_accuracy[relative_tolerence=0.1]")


def test_constructor_rejects_unknown_and_mistyped_fields():
    with pytest.raises(assay.errors.InvalidParameterError, match=r"unexpected keyword 'tolerance'.*relative_tolerance"):
        SumAccuracy(tolerance=0.1)
    with pytest.raises(assay.errors.InvalidParameterError, match=r"'relative_tolerance' parameter .* must be float"):
        SumAccuracy(relative_tolerance="ten percent")


def test_streaming_compute_stays_reachable():
    # the tutorial's compute(references, prediction, task_data) became compute_instance;
    # update() / compute() are assay's streaming pair
    m = SumAccuracy().update(PREDICTIONS, REFERENCES, TASK_DATA)
    out = m.compute()
    value = out["sum_accuracy"] if isinstance(out, dict) else float(out)
    assert value == pytest.approx(1 / 3)
    assert SumAccuracy().compute_instance(5, [5], {"num1": 2, "num2": 3}) == {"sum_accuracy": 1.0}


def test_sensitivity_to_numeric_magnitude_runs_as_written():
    predictions = [1, 7, 123, 4567, 10]
    references = [[1], [7], [124], [4568], [10]]
    res = assay.evaluate(predictions, references, [SensitivityToNumericMagnitude()], n_resamples=0)
    # by hand: magnitudes 1, 1, 3, 4, 2 (ranks 1.5, 1.5, 4, 5, 3) and accuracies 1, 1, 0, 0, 1
    # (ranks 4, 4, 1.5, 1.5, 4); deviations from the mean rank 3: (-1.5, -1.5, 1, 2, 0) and
    # (1, 1, -1.5, -1.5, 1): Spearman = -7.5 / sqrt(9.5 * 7.5)
    g = res[0]["score"]["global"]
    assert g["sensitivity_to_numeric_magnitude"] == pytest.approx(-7.5 / (9.5 * 7.5) ** 0.5)
    assert (g["score_name"], g["num_of_instances"]) == ("sensitivity_to_numeric_magnitude", 5)


def test_single_reference_per_prediction_is_checked():
    with pytest.raises(assay.errors.InvalidParameterError, match=r"exactly one reference.*instance 1 has 2 references"):
        assay.evaluate([1, 2], [[1], [2, 3]], [SensitivityToNumericMagnitude()], n_resamples=0)
