"""unitxt's metric options on assay: reduction_map reductions, GlobalMetric options,
_requirements_list, n_resamples and the score-collision rule (issue 13).

Expected values are derived by hand in each test.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import assay
from assay.errors import InvalidParameterError, MissingDependencyError
from assay.metrics import BulkInstanceMetric, GlobalMetric, InstanceMetric
from assay.testing import test_metric


class Echo(InstanceMetric):
    """Instance scores read from the prediction dict; the reductions under test."""

    main_score = "best"
    reduction_map = {"max": ["best"], "median": ["middle"], "mean": ["avg"]}

    def compute(self, references: list[Any], prediction: dict, task_data: dict) -> dict:
        return {"best": prediction["v"], "middle": prediction["v"], "avg": prediction["v"]}


class WinRate(BulkInstanceMetric):
    main_score = "win"
    reduction_map = {"weighted_win_rate": ["win"]}

    def compute(self, references: list[list[Any]], predictions: list[float], task_data: list[dict]) -> list[dict]:
        return [{"win": p} for p in predictions]


VALUES = [0.2, math.nan, 0.9, 0.5]
PREDS = [{"v": v} for v in VALUES]
REFS = [[0]] * 4


def test_max_median_mean_reductions():
    # NaN left out: max(0.2, 0.9, 0.5) = 0.9; median = 0.5; mean = 1.6 / 3
    res = test_metric(metric=Echo(), predictions=PREDS, references=REFS, instance_targets=None,
                      global_target={"best": 0.9, "score": 0.9, "score_name": "best", "middle": 0.5,
                                     "avg": 1.6 / 3}, decimals=None)
    inst = res[2]["score"]["instance"]
    assert (inst["best"], inst["score"]) == (0.9, 0.9)  # instance scores are the raw values
    assert not Echo.additive  # max and median are reductions of the collection, not of sums


def test_max_reduction_gets_an_interval():
    # 4 instances 0, 0, 0, 1: the max of a resample is 1 unless the 1 is missed,
    # probability (3/4)^4 = 0.32 > 0.025, so the 95% interval is [0, 1]
    preds = [{"v": 0.0}, {"v": 0.0}, {"v": 0.0}, {"v": 1.0}]
    res = assay.evaluate(preds, REFS, [Echo()], n_resamples=500, seed=1)
    g = res[0]["score"]["global"]
    assert (g["best"], g["best_ci_low"], g["best_ci_high"]) == (1.0, 0.0, 1.0)


def test_weighted_win_rate():
    # unitxt's rule: s > 0 wins s of s battles, s < 0 loses |s|, 0 is a tie (1 of 2):
    # 2, -1, 0, 3 -> wins 2 + 1 + 3 = 6 of 2 + 1 + 2 + 3 = 8 battles
    test_metric(metric=WinRate(), predictions=[2.0, -1.0, 0.0, 3.0], references=REFS, instance_targets=None,
                global_target={"win": 0.75, "score": 0.75}, decimals=None)


def test_group_mean_with_unitxt_variance_example_and_unknown_reductions_rejected():
    # unitxt's docstring example: reduction_map = {'group_mean': {'agg_func': ['variance', np.var, True]}}
    cls = type("Grouped", (InstanceMetric,), {"main_score": "s",
                                              "reduction_map": {"group_mean": {"agg_func": ["variance", np.var, True]}},
                                              "compute_instance": lambda self, p, r, t=None: float(p)})
    preds = [1.0, 3.0, 0.0, 4.0, 8.0]
    tds = [{"group_id": g} for g in "aabbb"]
    g = assay.evaluate(preds, [[0]] * 5, metrics=[cls()], task_data=tds, n_resamples=0)[0]["score"]["global"]
    expected = (np.var([1.0, 3.0]) + np.var([0.0, 4.0, 8.0])) / 2
    assert g["s"] == g["fixed_group_variance_s"] == pytest.approx(expected)
    with pytest.raises(InvalidParameterError, match=r"'some_other_func'.*'mean', 'max', 'median', 'weighted_win_rate', "
                                                    r"'group_mean'"):
        type("Other", (InstanceMetric,), {"main_score": "s", "reduction_map": {"some_other_func": ["s"]}})


# ------------------------------------------------------------------ GlobalMetric options
class Corpus(GlobalMetric):
    main_score = "hits"
    n_resamples = 0
    process_single_instances = False

    def compute(self, references: list[list[int]], predictions: list[int], task_data: list[dict]) -> dict:
        return {"hits": float(sum(r[0] == p for r, p in zip(references, predictions)))}


def test_process_single_instances_and_n_resamples_zero():
    res = assay.evaluate([1, 2, 3], [[1], [0], [3]], [Corpus()], n_resamples=200)
    g = res[0]["score"]["global"]
    assert g["hits"] == 2.0  # a sum over the collection: 1 == 1, 3 == 3
    assert not any(k.endswith(("_ci_low", "_ci_high")) for k in g)  # n_resamples = 0: no interval
    assert "hits" not in res[0]["score"]["instance"]  # process_single_instances = False: no instance scores
    assert Corpus.per_instance is False


class NoneResamples(InstanceMetric):
    main_score = "acc"
    n_resamples = None  # unitxt: None disables the intervals

    def compute(self, references, prediction, task_data):
        return {"acc": float(prediction in references)}


class FewResamples(InstanceMetric):
    main_score = "acc2"
    n_resamples = 7

    def compute(self, references, prediction, task_data):
        return {"acc2": float(prediction in references)}


def test_n_resamples_none_and_own_count():
    res = assay.evaluate([1, 2], [[1], [3]], [NoneResamples(), FewResamples()], n_resamples=100)
    g = res[0]["score"]["global"]
    assert "acc_ci_low" not in g and "acc2_ci_low" in g
    # with 7 resamples the interval is a pair of resample means of two 0/1 scores: multiples of 1/2
    assert g["acc2_ci_low"] in (0.0, 0.5, 1.0) and g["acc2_ci_high"] in (0.0, 0.5, 1.0)
    off = assay.evaluate([1, 2], [[1], [3]], [FewResamples()], n_resamples=0)  # the call's 0 wins
    assert "acc2_ci_low" not in off[0]["score"]["global"]


def test_process_single_instances_on_an_instance_metric_is_rejected():
    with pytest.raises(InvalidParameterError, match="only a GlobalMetric honours it"):
        type("I", (InstanceMetric,), {"main_score": "s", "process_single_instances": False})


# ------------------------------------------------------------------ _requirements_list
class NeedsMissing(InstanceMetric):
    main_score = "s"
    _requirements_list = {"assay_no_such_module_x": "Please install it with 'pip install no-such-module-x'"}

    def compute(self, references, prediction, task_data):
        return {"s": 1.0}


class NeedsNewNumpy(InstanceMetric):
    main_score = "s"
    _requirements_list = ["numpy>=999"]

    def compute(self, references, prediction, task_data):
        return {"s": 1.0}


class NeedsNumpy(InstanceMetric):
    main_score = "s"
    _requirements_list = ["numpy>=1.0"]

    def compute(self, references, prediction, task_data):
        return {"s": 1.0}


def test_requirements_list_gives_the_install_hint():
    with pytest.raises(MissingDependencyError, match=r"assay_no_such_module_x.*pip install no-such-module-x"):
        NeedsMissing().update([1], [[1]])
    with pytest.raises(MissingDependencyError, match=r"numpy .* is installed but .* requires numpy>=999.*pip install"):
        NeedsNewNumpy().update([1], [[1]])
    with pytest.raises(MissingDependencyError, match=r"pip install assay-no-such-dist"):
        type("M", (InstanceMetric,), {"main_score": "s", "_requirements_list": ["assay-no-such-dist"],
                                      "compute_instance": lambda self, p, r, t=None: 1.0})().update([1], [[1]])
    assert NeedsNumpy().update([1], [[1]]).state.n == 1  # installed and recent enough


# ------------------------------------------------------------------ score-name collisions
class AccA(InstanceMetric):
    main_score = "acc"

    def compute(self, references, prediction, task_data):
        return {"acc": float(prediction == references[0])}


class AccB(InstanceMetric):
    main_score = "acc"

    def compute(self, references, prediction, task_data):
        return {"acc": 1.0}


def test_collisions_are_an_error_by_default():
    with pytest.raises(InvalidParameterError, match="both report the score 'acc'"):
        assay.evaluate([1, 2], [[1], [3]], [AccA(), AccB()], n_resamples=0)


def test_first_metric_wins_when_asked():
    res = assay.evaluate([1, 2], [[1], [3]], [AccA(), AccB()], n_resamples=50, score_collisions="first")
    g = res[0]["score"]["global"]
    assert g["acc"] == 0.5 and g["score"] == 0.5  # AccA's (1 of 2), not AccB's 1.0
    assert res[1]["score"]["instance"]["acc"] == 0.0  # AccA's instance score for 2 vs 3
    swapped = assay.evaluate([1, 2], [[1], [3]], [AccB(), AccA()], n_resamples=0, score_collisions="first")
    assert swapped[0]["score"]["global"]["acc"] == 1.0
    assert res.info["score_collisions"] == "first"


def test_bad_collision_rule():
    with pytest.raises(InvalidParameterError, match=r"'score_collisions' .* 'error', 'first'; got 'last'"):
        assay.evaluate([1], [[1]], [AccA()], n_resamples=0, score_collisions="last")
