"""unitxt's ``group_mean`` reduction, as unitxt's own test (``test_grouped_instance_metrics``) runs it.

The inputs, the metric classes and the expected global scores are those of unitxt's
``tests/library/test_metrics.py`` (IBM/unitxt): 15 instances in 4 groups (sizes 5, 5, 4, 1), with
an "original" and "paraphrase" variant type. The classes are written as unitxt defines them,
with only the imports changed; ``Accuracy`` and ``StringContainmentOld`` are unitxt's two
instance metrics, re-declared here as in unitxt.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import assay
from assay import DataPool, EvaluatorBase
from assay.errors import InvalidParameterError
from assay.metrics import InstanceMetric
from assay_classic.text import UnitxtTokenOverlap as TokenOverlap
from assay_unitxt.group_aggregations import (
    mean_subgroup_score,
    nan_mean,
    normalized_cohens_h,
    normalized_hedges_g,
    performance_drop_rate,
)

PREDICTIONS = ["A B", "BC D", "C", "123", "BCD", "10", "  BD", "AB", "I am a dog", "AB C", "AB 1", "GMA", "0.123",
               "BD", "abc"]
REFERENCES = [["B", "AB", "A"], ["A", "BC D", "BC DF"], ["c", " C"], ["13", "23", "234"], ["  ", " BD", " BDA"],
              ["1", "10", "100"], ["A", "B", "BD"], ["ABC", "ab", "BC"], ["I am a person", "I AM A DOG", "ABC"],
              ["AB CD", "AB", "ab"], ["AB 1", "AB1"], [" GMA 123", "GMA"], ["123", "0.12"], ["BDE", "BCE", "bdefs"],
              [" abcdefg", "AB", "abcd"]]
TASK_DATA = [{"group_id": g, "variant_type": v} for g, v in
             [("group1", "original")] + [("group1", "paraphrase")] * 4
             + [("group2", "original")] + [("group2", "paraphrase")] * 4
             + [("group3", "original")] + [("group3", "paraphrase")] * 3 + [("group4", "original")]]


class Accuracy(InstanceMetric):
    reduction_map = {"mean": ["accuracy"]}
    main_score = "accuracy"
    ci_scores = ["accuracy"]

    def compute(self, references, prediction, task_data):
        return {self.main_score: float(str(prediction) in [str(reference) for reference in references])}


class StringContainmentOld(InstanceMetric):
    reduction_map = {"mean": ["string_containment"]}
    main_score = "string_containment"
    ci_scores = ["string_containment"]

    def compute(self, references, prediction, task_data):
        return {self.main_score: float(any(str(reference) in str(prediction) for reference in references))}


def _subgroup(name, fn, absval=False):
    def agg(scd):
        value = fn(subgroup_scores_dict=scd, control_subgroup_types=["original"],
                   comparison_subgroup_types=["paraphrase"])
        return np.abs(value) if absval else value
    return {"group_mean": {"agg_func": [name, agg, True]}}


class GroupMeanAccuracy(Accuracy):
    reduction_map = {"group_mean": {"agg_func": ["mean", nan_mean, False]}}


class FixedGroupMeanAccuracy(Accuracy):
    reduction_map = {"group_mean": {"agg_func": ["mean", nan_mean, True]}}


class GroupMeanStringContainment(StringContainmentOld):
    reduction_map = {"group_mean": {"agg_func": ["mean", nan_mean, False]}}


class FixedGroupMeanStringContainment(StringContainmentOld):
    reduction_map = {"group_mean": {"agg_func": ["mean", nan_mean, True]}}


def _baseline(scd):
    return mean_subgroup_score(subgroup_scores_dict=scd, subgroup_types=["original"])


def _paraphrase(scd):
    return mean_subgroup_score(subgroup_scores_dict=scd, subgroup_types=["paraphrase"])


class FixedGroupMeanBaselineAccuracy(Accuracy):
    subgroup_column = "variant_type"
    reduction_map = {"group_mean": {"agg_func": ["mean_baseline", _baseline, True]}}


class FixedGroupMeanParaphraseAccuracy(Accuracy):
    subgroup_column = "variant_type"
    reduction_map = {"group_mean": {"agg_func": ["mean_paraphrase", _paraphrase, True]}}


class FixedGroupMeanBaselineStringContainment(StringContainmentOld):
    subgroup_column = "variant_type"
    reduction_map = {"group_mean": {"agg_func": ["mean_baseline", _baseline, True]}}


class FixedGroupMeanParaphraseStringContainment(StringContainmentOld):
    subgroup_column = "variant_type"
    reduction_map = {"group_mean": {"agg_func": ["mean_paraphrase", _paraphrase, True]}}


class GroupMeanTokenOverlap(TokenOverlap):
    reduction_map = {"group_mean": {"agg_func": ["mean", nan_mean, False],
                                    "score_fields": ["f1", "precision", "recall"]}}


def _classes():
    out = []
    for base in (Accuracy, StringContainmentOld):
        for name, fn, absval in (("norm_cohens_h_paraphrase", normalized_cohens_h, False),
                                 ("pdr_paraphrase", performance_drop_rate, False),
                                 ("norm_hedges_g_paraphrase", normalized_hedges_g, False),
                                 ("absval_norm_cohens_h_paraphrase", normalized_cohens_h, True),
                                 ("absval_norm_hedges_g_paraphrase", normalized_hedges_g, True)):
            out.append((f"{name}:{base.__name__}", type(f"Fixed_{name}_{base.__name__}", (base,),
                                                          {"subgroup_column": "variant_type",
                                                           "reduction_map": _subgroup(name, fn, absval)})))
    return dict(out)


SUBGROUP = _classes()

# unitxt's global_targets, in unitxt's order of metrics
CASES = [
    (FixedGroupMeanAccuracy, 0.225), (GroupMeanAccuracy, 0.225), (FixedGroupMeanStringContainment, 0.4875),
    (GroupMeanStringContainment, 0.4875), (FixedGroupMeanBaselineAccuracy, 0.5),
    (FixedGroupMeanParaphraseAccuracy, 0.19444444444444442), (FixedGroupMeanBaselineStringContainment, 0.75),
    (FixedGroupMeanParaphraseStringContainment, 0.5555555555555555), (GroupMeanTokenOverlap, 0.5083333333333333),
    (SUBGROUP["norm_cohens_h_paraphrase:Accuracy"], -0.4249467048786864),
    (SUBGROUP["norm_cohens_h_paraphrase:StringContainmentOld"], -0.4639421840102023),
    (SUBGROUP["pdr_paraphrase:Accuracy"], 0.8333333333333334),
    (SUBGROUP["pdr_paraphrase:StringContainmentOld"], 0.4444444444444445),
    (SUBGROUP["norm_hedges_g_paraphrase:Accuracy"], -0.34565986391520215),
    (SUBGROUP["norm_hedges_g_paraphrase:StringContainmentOld"], -0.08060156608173413),
    (SUBGROUP["absval_norm_cohens_h_paraphrase:Accuracy"], 0.6471689271009087),
    (SUBGROUP["absval_norm_cohens_h_paraphrase:StringContainmentOld"], 0.4639421840102023),
    (SUBGROUP["absval_norm_hedges_g_paraphrase:Accuracy"], 0.3832160660602437),
    (SUBGROUP["absval_norm_hedges_g_paraphrase:StringContainmentOld"], 0.08060156608173413),
]


@pytest.mark.parametrize("cls, target", CASES, ids=[c.__name__ for c, _ in CASES])
@pytest.mark.parametrize("score_prefix", ["my_", ""])
def test_unitxt_grouped_instance_metrics(cls, target, score_prefix):
    metric = cls(score_prefix=score_prefix)
    results = assay.evaluate(PREDICTIONS, REFERENCES, metrics=[metric], task_data=TASK_DATA, n_resamples=0)
    g = results[0]["score"]["global"]
    assert g["score"] == pytest.approx(target, abs=1e-12)
    # unitxt's name of the group score, [fixed_]group_<agg name>_<main score>; assay puts a score_prefix in
    # front of every score name (unitxt puts it before the main score's name)
    agg, _, fixed = cls.reduction_map["group_mean"]["agg_func"]
    name = f"{score_prefix}{'fixed_' if fixed else ''}group_{agg}_{cls.main_score}"
    assert g[name] == g["score"] == g[score_prefix + cls.main_score]
    assert g["score_name"] == score_prefix + cls.main_score


def test_group_mean_by_hand_and_fixed_groups_resample_groups():
    per_instance = [float(str(p) in [str(r) for r in refs]) for p, refs in zip(PREDICTIONS, REFERENCES)]
    groups = {}
    for s, td in zip(per_instance, TASK_DATA):
        groups.setdefault(td["group_id"], []).append(s)
    expected = float(np.mean([np.mean(v) for v in groups.values()]))
    assert expected == pytest.approx(0.225)
    fixed = assay.evaluate(PREDICTIONS, REFERENCES, metrics=[FixedGroupMeanAccuracy()], task_data=TASK_DATA,
                           n_resamples=200, seed=3)
    by_groups = assay.evaluate(PREDICTIONS, REFERENCES, metrics=[FixedGroupMeanAccuracy()], task_data=TASK_DATA,
                               n_resamples=200, seed=3, groups=[td["group_id"] for td in TASK_DATA])
    loose = assay.evaluate(PREDICTIONS, REFERENCES, metrics=[GroupMeanAccuracy()], task_data=TASK_DATA,
                           n_resamples=200, seed=3)
    gf, gg, gl = (r[0]["score"]["global"] for r in (fixed, by_groups, loose))
    # "fixed": the groups are the resampling units, as an explicit cluster bootstrap on group_id
    assert (gf["score_ci_low"], gf["score_ci_high"]) == (gg["score_ci_low"], gg["score_ci_high"])
    assert (gf["score_ci_low"], gf["score_ci_high"]) != (gl["score_ci_low"], gl["score_ci_high"])
    # instance scores are unchanged by the reduction
    assert [r["score"]["instance"]["accuracy"] for r in fixed] == per_instance


@pytest.mark.parametrize("task_data, match", [
    (None, "group_id"), ([{"variant_type": "original"}] * 15, "group_id"),
    ([{"group_id": "g"}] * 15, "variant_type"),
])
def test_missing_group_fields_are_errors_naming_the_instance(task_data, match):
    with pytest.raises(InvalidParameterError, match=match):
        assay.evaluate(PREDICTIONS, REFERENCES, metrics=[FixedGroupMeanBaselineAccuracy()], task_data=task_data,
                       n_resamples=0)


@pytest.mark.parametrize("rmap, match", [
    ({"group_mean": {"func": ["mean", nan_mean]}}, "unknown key"),
    ({"group_mean": {"agg_func": ["mean", "some string", False]}}, "agg_func"),
    ({"group_mean": {"agg_func": ["mean", nan_mean]}}, "agg_func"),
    ({"group_mean": {"agg_func": ["mean", nan_mean, "yes"]}}, "agg_func"),
    ({"group_mean": {"agg_func": ["mean", nan_mean, False], "score_fields": "accuracy"}}, "score_fields"),
    ({"group_mean": ["accuracy"]}, "dict"),
    ({"group_mean": {"agg_func": ["mean", nan_mean, False]}, "mean": ["accuracy"]}, "cannot be combined"),
    ({"some_other_func": ["accuracy"]}, "not supported"),
])
def test_malformed_group_mean_is_an_error_at_class_creation(rmap, match):
    with pytest.raises(InvalidParameterError, match=match):
        type("Bad", (Accuracy,), {"reduction_map": rmap})


def test_aggregations_edge_cases():
    assert math.isnan(nan_mean([math.nan, math.nan]))
    assert performance_drop_rate({"original": [0.0], "paraphrase": [0.0]}, ["original"], ["paraphrase"]) == 0
    assert math.isnan(performance_drop_rate({"original": [0.0], "paraphrase": [1.0]}, ["original"], ["paraphrase"]))
    assert math.isnan(normalized_hedges_g({"original": [1.0], "paraphrase": [0.0]}, ["original"], ["paraphrase"]))
    # no spread and a difference: an infinite effect, clipped (the small-sample factor cannot shrink infinity)
    assert normalized_hedges_g({"original": [1.0, 1.0], "paraphrase": [0.0, 0.0]}, ["original"], ["paraphrase"]) == -1
    # by hand: control .2 .4 .6, comparison .5 .7 .9 (n = 6): pooled sd .2, g = 1.5 times the factor
    g = normalized_hedges_g({"original": [0.2, 0.4, 0.6], "paraphrase": [0.5, 0.7, 0.9]}, ["original"], ["paraphrase"])
    assert g == pytest.approx(1.5 * (3 / 3.75) * math.sqrt(4 / 6) / 5)
    h = normalized_cohens_h({"original": [1.0], "paraphrase": [0.0]}, ["original"], ["paraphrase"], interpret=True)
    assert h == (-1.0, "huge")
    with pytest.raises(InvalidParameterError, match=r"\[0, 1\]"):
        normalized_cohens_h({"original": [2.0], "paraphrase": [0.0]}, ["original"], ["paraphrase"])


class Grouped(EvaluatorBase):
    def sentence_evaluator(self, sent, w_vector):
        return 1, 1

    def metric_inputs(self, sent, w_vector):
        return PREDICTIONS[sent], REFERENCES[sent], TASK_DATA[sent]


def test_sharded_evaluators_reject_group_resampling_and_agree_without_intervals():
    pool = DataPool(list(range(15)), num_shards=4)
    with pytest.raises(InvalidParameterError, match="resample their task_data groups"):
        Grouped().sequentialEvaluate(pool, None, metrics=[FixedGroupMeanAccuracy()])
    res = Grouped().sequentialEvaluate(pool, None, metrics=[FixedGroupMeanAccuracy()], n_resamples=0)
    assert res.metrics["accuracy"] == pytest.approx(0.225)
    # instance resampling (agg_func[2] False) is what the Poisson bootstrap does: allowed
    loose = Grouped().sequentialEvaluate(pool, None, metrics=[GroupMeanAccuracy()], n_resamples=50)
    assert loose.metrics["accuracy"] == pytest.approx(0.225)
