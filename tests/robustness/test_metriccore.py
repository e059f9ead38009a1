"""Bad inputs per public entry point of the metric core and the evaluator (issue 10).

Every case must end in an assay error (``InvalidParameterError`` or ``EvaluationError``)
whose message names the parameter, the item or the attribute -- never a wrong number,
never a numpy or Python traceback from deep inside. The counts per entry point are in
``docs/reliability.md`` (``test_counts_match_the_reliability_doc`` keeps
them honest).
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import assay
from assay import DataPool, EvaluatorBase
from assay.errors import AssayError, EvaluationError, InvalidParameterError
from assay.metrics import InstanceMetric

sys.path.insert(0, str(Path(__file__).parents[1] / "metrics"))
from assay_metric_samples import SampleAccuracy

PREDS, REFS = [1, 2, 3, 1], [[1], [2], [1], [3]]
NAN = float("nan")

# ------------------------------------------------------------------ assay.evaluate
EVALUATE_CASES = [
    # (keyword arguments over the defaults, what the message must name)
    ({"references": None, "metrics": ["accuracy"]}, "needs references"),
    ({"references": [[1]]}, "4 predictions and 1 references"),
    ({"references": REFS + [[1]]}, "4 predictions and 5 references"),
    ({"references": {0: [1]}}, "references"),
    ({"references": "1213"}, "references"),
    ({"predictions": "1213"}, "'predictions'"),
    ({"predictions": 5}, "'predictions'"),
    ({"predictions": None}, "'predictions'"),
    ({"task_data": [{}]}, "task_data"),
    ({"metrics": []}, "'metrics'"),
    ({"metrics": [5]}, "'metrics'"),
    ({"metrics": ["nope_metric"]}, "nope_metric"),
    ({"metrics": ["accuracy[score_prefix=123]"]}, "'score_prefix'"),
    ({"metrics": ["accuracy[score_prefix=1.5]"]}, "'score_prefix'"),
    ({"metrics": ["accuracy[bogus=1]"]}, "bogus"),
    ({"seed": 1.9}, "'seed'"), ({"seed": 1.0}, "'seed'"), ({"seed": -1}, "'seed'"), ({"seed": True}, "'seed'"),
    ({"seed": "0"}, "'seed'"), ({"seed": np.float32(3)}, "'seed'"), ({"seed": [0, 1]}, "'seed'"),
    ({"n_resamples": -1}, "'n_resamples'"), ({"n_resamples": 10.0}, "'n_resamples'"),
    ({"n_resamples": True}, "'n_resamples'"), ({"n_resamples": None}, "'n_resamples'"),
    ({"confidence_level": 0}, "'confidence_level'"), ({"confidence_level": 1.0}, "'confidence_level'"),
    ({"confidence_level": 95}, "'confidence_level'"), ({"confidence_level": NAN}, "'confidence_level'"),
    ({"confidence_level": "0.95"}, "'confidence_level'"), ({"confidence_level": True}, "'confidence_level'"),
    ({"ci_method": "normal"}, "'ci_method'"), ({"ci_method": "bogus", "n_resamples": 0}, "'ci_method'"),
    ({"groups": [1, 1]}, "'groups'"), ({"groups": [1, 1], "n_resamples": 0}, "'groups'"),
    ({"strata": "ab"}, "'strata'"), ({"groups": 3}, "'groups'"),
]


@pytest.mark.parametrize("kwargs,names", EVALUATE_CASES, ids=lambda x: repr(x)[:60])
def test_evaluate_bad_inputs(kwargs, names):
    args = {"predictions": PREDS, "references": REFS, "metrics": [SampleAccuracy()], "n_resamples": 20, **kwargs}
    with pytest.raises(AssayError, match=re.escape(names)):
        assay.evaluate(args.pop("predictions"), args.pop("references"), **args)


# ------------------------------------------------------------------ load_metric overrides
LOAD_METRIC_CASES = [
    ("accuracy[score_prefix=123]", {}, "'score_prefix'"),
    ("accuracy", {"score_prefix": 123}, "'score_prefix'"),
    ("accuracy", {"score_prefix": None}, "'score_prefix'"),
    ("accuracy[score_prefix=true]", {}, "'score_prefix'"),
    ("accuracy[score_prefix=[m]]", {}, "'score_prefix'"),
    ("accuracy", {"score_prefix": b"m_"}, "'score_prefix'"),
    ("accuracy[main_score=x]", {}, "main_score"),
    ("accuracy[scor_prefix=m_]", {}, "score_prefix"),     # typo: the close match is named
    ("accuracy[score_prefix=a]", {"score_prefix": "b"}, "given twice"),
]


@pytest.mark.parametrize("spec,kwargs,names", LOAD_METRIC_CASES, ids=lambda x: repr(x)[:40])
def test_load_metric_bad_overrides(spec, kwargs, names):
    with pytest.raises(AssayError, match=re.escape(names)):
        assay.load_metric(spec, **kwargs)


# ------------------------------------------------------------------ assay.compare
def _results(preds, refs=REFS):
    return assay.evaluate(preds, refs, metrics=[SampleAccuracy()], n_resamples=0)


COMPARE_CASES = [
    ({"seed": 0.5}, "'seed'"), ({"seed": -2}, "'seed'"), ({"seed": False}, "'seed'"), ({"seed": "1"}, "'seed'"),
    ({"n_resamples": 0}, "'n_resamples'"), ({"n_resamples": -5}, "'n_resamples'"),
    ({"n_resamples": 2.5}, "'n_resamples'"),
    ({"confidence_level": 1.5}, "'confidence_level'"), ({"confidence_level": NAN}, "'confidence_level'"),
    ({"b": "short"}, "same instances"),
    ({"b": "other_refs"}, "different references"),
    ({"metric": "nope_metric"}, "nope_metric"),
    ({"score": "nope_score"}, "nope_score"),
]


@pytest.mark.parametrize("kwargs,names", COMPARE_CASES, ids=lambda x: repr(x)[:40])
def test_compare_bad_inputs(kwargs, names):
    a = _results(PREDS)
    b = {"short": _results(PREDS[:3], REFS[:3]), "other_refs": _results(PREDS, [[2]] * 4)}.get(kwargs.pop("b", None),
                                                                                              _results([1, 1, 1, 1]))
    kwargs.setdefault("n_resamples", 20)
    with pytest.raises((AssayError, KeyError), match=re.escape(names)):
        assay.compare(a, b, **kwargs)


# ------------------------------------------------------------------ sequentialEvaluate / parallelEvaluate
BAD_TALLIES = [
    {0: 1, 1: 2}, {1, 2}, frozenset({1, 3}), "12", b"12", (1.0, 2.0), (1, 2.5), (True, 1), (1, np.True_),
    (2, 1), (-1, 3), (1, -1), (1, 2, 3), (1,), (), None, 3, 2.0, np.array([[1, 2], [3, 4]]), np.array([1, 2, 3]),
    range(1, 3), (1, "2"), (None, 2), (NAN, 1), (1, math.inf), SystemExit(1), KeyError("x"),
]


class _Tally(EvaluatorBase):
    def __init__(self, value):
        super().__init__()
        self.value = value

    def sentence_evaluator(self, sent, w_vector):
        if sent != 2:
            return 1, 1
        if isinstance(self.value, BaseException):
            raise self.value
        return self.value


@pytest.mark.parametrize("method", ["sequentialEvaluate", "parallelEvaluate"])
@pytest.mark.parametrize("value", BAD_TALLIES, ids=lambda v: type(v).__name__ + repr(v)[:16])
def test_evaluator_bad_tallies(value, method):
    ev = _Tally(value)
    kwargs = {"executor": "threads[workers=2]"} if method == "parallelEvaluate" else {}
    with pytest.raises(EvaluationError, match=r"item 2 \(shard 1\)") as info:
        getattr(ev, method)(DataPool([0, 1, 2, 3], num_shards=2), None, **kwargs)
    assert (info.value.item, info.value.shard) == (2, 1)
    assert (ev.correct_num, ev.gold_set_size) == (0, 0)   # a failed run leaves the counters alone


# ------------------------------------------------------------------ Metric class creation
BAD_CLASS_BODIES = [
    {"reduction_map": {"group_max": {"agg_func": ["v", len, True]}}},
    {"reduction_map": {"mean": ["s"], "weighted_win_rate": ["s"]}},
    {"reduction_map": "mean"}, {"single_reference_per_prediction": 1}, {"_requirements_list": [3]},
    {"process_single_instances": "no"}, {"implemented_reductions": ["mean"]}, {"n_resamples": 1.5},
    {"confidence_level": 0.9}, {"reference_field": "refs"}, {"score_prefix": "p_"}, {"main_scroe": "s"},
    {"prediciton_type": int}, {"ci_score": ["s"]}, {"my_option": 3}, {"main_score": 1}, {"higher_is_better": 1},
    {"ci_scores": "s"}, {"prediction_type": "number"},
]


@pytest.mark.parametrize("body", BAD_CLASS_BODIES, ids=lambda b: next(iter(b)))
def test_metric_class_bad_attributes(body):
    attr = next(iter(body))
    with pytest.raises(InvalidParameterError, match=rf"Metric class Bad \(module .*\) declares {attr!r}"):
        type("Bad", (InstanceMetric,), {"main_score": "s", **body})


# ------------------------------------------------------------------ property: seeds
@settings(max_examples=40, deadline=None)
@given(st.one_of(st.floats(allow_nan=True), st.integers(max_value=-1), st.booleans(), st.text(max_size=3)))
def test_any_non_int_or_negative_seed_is_rejected(seed):
    with pytest.raises(InvalidParameterError, match="'seed'"):
        assay.evaluate(PREDS, REFS, metrics=[SampleAccuracy()], n_resamples=5, seed=seed)


@settings(max_examples=15, deadline=None)
@given(st.integers(min_value=0, max_value=2**63 - 1))
def test_any_non_negative_int_seed_is_accepted_and_recorded(seed):
    res = assay.evaluate(PREDS, REFS, metrics=[SampleAccuracy()], n_resamples=5, seed=seed)
    assert res.info["seed"] == seed


def test_counts_match_the_reliability_doc():
    doc = (Path(__file__).parents[2] / "docs" / "reliability.md").read_text()
    counts = {
        "assay.evaluate": len(EVALUATE_CASES),
        "load_metric": len(LOAD_METRIC_CASES),
        "assay.compare": len(COMPARE_CASES),
        "sequentialEvaluate / parallelEvaluate": 2 * len(BAD_TALLIES),
        "Metric subclass creation": len(BAD_CLASS_BODIES),
    }
    for entry, n in counts.items():
        assert re.search(rf"\| `?{re.escape(entry)}`? \| {n} \|", doc), (entry, n)
