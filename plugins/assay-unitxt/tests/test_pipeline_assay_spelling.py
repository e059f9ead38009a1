"""MetricPipeline in assay's spelling (``preprocess=[callable]``, ``rename={...}``), its option checks and its
reference rule. (Moved from tests/metrics/test_base.py, test_evaluate.py, test_params.py and
test_needs_references.py with the class; the metrics are written out here.)"""

from __future__ import annotations

import math
import pickle

import pytest

import assay
from assay.errors import InvalidParameterError
from assay.metrics import InstanceMetric, Metric, divide
from assay_unitxt.pipeline import MetricPipeline


class ExactMatch(InstanceMetric):
    """Exact match and a length ratio per instance (NaN for an empty reference)."""

    main_score = "em"
    score_names = ["em", "len_ratio"]
    prediction_type = str
    ci_scores = ["em", "len_ratio"]

    def compute_instance(self, prediction, references, task_data=None):
        ref = references[0]
        return {"em": float(prediction == ref), "len_ratio": len(prediction) / len(ref) if ref else math.nan}


class BinaryF1(Metric):
    """Binary F1 from (tp, fp, fn)."""

    main_score = "f1"
    additive = True
    n_stats = 3
    prediction_type = int

    def map(self, prediction, references, task_data=None):
        p, r = prediction == 1, references[0] == 1
        return [float(p and r), float(p and not r), float(r and not p)]

    def reduce(self, totals):
        tp, fp, fn = totals
        return {"f1": divide(2 * tp, 2 * tp + fp + fn, 0.0)}


class Hit(InstanceMetric):
    """Scores 0 when references are missing (the silent case the reference rule guards)."""

    main_score = "hit"

    def compute_instance(self, prediction, references, task_data=None):
        return float(prediction in (references or []))


def lowercase(instance):
    return {**instance, "prediction": instance["prediction"].lower()}


def test_pipeline_preprocess_and_rename():
    p = MetricPipeline(ExactMatch(), preprocess=[lowercase], rename={"em": "em_lower"})
    out = p.update(["A", "B"], [["a"], ["c"]]).compute_scores()
    assert out["em_lower"] == 0.5 and out["score_name"] == "em_lower"  # "a" == "a", "b" != "c"
    assert p.ci_scores == ["em_lower", "len_ratio"]
    p2 = pickle.loads(pickle.dumps(p))
    assert p2.compute_scores()["em_lower"] == 0.5
    with pytest.raises(InvalidParameterError, match="must be a Metric"):
        MetricPipeline(object())


def test_pipeline_checks_wrapped_prediction_type_after_preprocess():
    p = MetricPipeline(BinaryF1(), preprocess=[lambda i: {**i, "prediction": int(i["prediction"])}])
    # predictions 1, 0 against 1, 1: tp 1, fn 1, F1 2/3
    assert p.update(["1", "0"], [[1], [1]]).compute_scores()["f1"] == pytest.approx(2 / 3)
    with pytest.raises(InvalidParameterError, match="instance 0"):
        MetricPipeline(BinaryF1()).update(["1"], [[1]])


def test_pipeline_in_evaluate_renames_scores_and_intervals():
    p = MetricPipeline(ExactMatch(), preprocess=[lowercase], rename={"em": "em_lower"})
    res = assay.evaluate(["A", "B", "c", "D"], [["a"], ["x"], ["c"], ["d"]], metrics=[p], n_resamples=300, seed=0)
    g = res.global_scores
    assert g["score_name"] == "em_lower" and g["em_lower"] == 0.75  # 'B' vs 'x' is the only miss
    assert {"em_lower_ci_low", "em_lower_ci_high", "len_ratio_ci_low"} <= set(g) and "em" not in g
    assert res[1]["score"]["instance"]["em_lower"] == 0.0


@pytest.mark.parametrize("kwargs", [{"main_score": 5}, {"main_score": ""}, {"rename": {"em": 1}},
                                    {"rename": ["em"]}, {"score_prefix": 0}])
def test_pipeline_options_are_checked(kwargs):
    with pytest.raises(InvalidParameterError):
        MetricPipeline(ExactMatch(), **kwargs)


def test_pipeline_with_preprocess_defers_the_check_to_the_wrapped_metric():
    copy_refs = lambda inst: {**inst, "references": inst["task_data"]["gold"]}  # noqa: E731
    plain = MetricPipeline(Hit())
    assert plain.needs_references
    with pytest.raises(InvalidParameterError, match="needs references"):
        plain.update(["a"])
    with_step = MetricPipeline(Hit(), preprocess=[copy_refs])
    assert not with_step.needs_references
    # a step that sets the references feeds them to the wrapped metric (unitxt's RAG pipelines copy them from
    # task_data); a step that does not leaves references=None: the wrapped metric's clear error, not 0.0
    assert with_step.update(["a", "b"], None, [{"gold": ["a"]}, {"gold": ["c"]}]).compute_scores()["hit"] == 0.5
    other = MetricPipeline(Hit(), preprocess=[lambda inst: inst])
    with pytest.raises(InvalidParameterError, match="needs references"):
        other.update(["a"], None, [{"gold": ["a"]}])
