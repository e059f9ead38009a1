"""unitxt's class attributes on assay's metric bases, honoured by assay-unitxt's class-attribute handlers.

(Moved from tests/metrics/test_class_attributes.py with the code they test.)
"""

from __future__ import annotations

import pytest

import assay
from assay.errors import InvalidParameterError
from assay.metrics import GlobalMetric, InstanceMetric


def _make(base, body: dict, name="SumAccuracy"):
    def compute_instance(self, prediction, references, task_data=None):
        return {"sum_accuracy": float(sum(prediction) == references[0]), "extra": 1.0}

    ns = {"main_score": "sum_accuracy", "compute_instance": compute_instance, **body}
    return type(name, (base,), ns)


@pytest.mark.parametrize("attr,value,expect", [
    # a reduction assay does not implement: the error names what is honoured
    ("reduction_map", {"group_max": {"agg_func": ["var", len, True]}},
     r"'group_max' are not supported.*'mean', 'max', 'median', 'weighted_win_rate', 'group_mean'"),
    ("reduction_map", {"mean": ["sum_accuracy"], "median": ["sum_accuracy"]}, r"listed under both 'mean' and 'median'"),
    ("reduction_map", ["mean"], r"must be a dict"),
    ("reduction_map", {"mean": ["other"]}, r"main_score 'sum_accuracy' is not among"),
    ("reduction_map", {"max": ["other"]}, r"main_score 'sum_accuracy' is not among"),
    # unitxt options assay honours are type-checked; those it does not implement say what to do instead
    ("_requirements_list", "sacrebleu", r"it must be a list of pip requirements"),
    ("process_single_instances", False, r"only a GlobalMetric honours it"),
    ("implemented_reductions", ["mean", "max"], r"not supported by assay.*'weighted_win_rate'"),
    ("score_prefix", "m_", r"not supported by assay.*constructor"),
    ("subgroup_column", 3, r"it must be a task_data field name"),
    ("aggregator", "mean", r"not supported by assay.*reduce\(\)"),
])
def test_unsupported_or_wrong_unitxt_attribute_is_an_error(attr, value, expect):
    with pytest.raises(InvalidParameterError, match=expect) as info:
        _make(InstanceMetric, {attr: value})
    msg = str(info.value)
    assert "SumAccuracy" in msg and repr(attr) in msg


def test_reduction_map_mean_is_honoured():
    # unitxt's tutorial form: reduction_map = {"mean": [...]}; both listed scores are averaged
    cls = _make(InstanceMetric, {"reduction_map": {"mean": ["sum_accuracy", "extra"]}})
    res = assay.evaluate([[1, 2], [2, 2], [0, 0]], [[3], [3], [0]], metrics=[cls()], n_resamples=0)
    g = res[0]["score"]["global"]
    assert g["sum_accuracy"] == pytest.approx(2 / 3) and g["extra"] == 1.0  # hits: 3, 4 != 3, 0


def test_process_single_instances_on_a_global_metric_is_type_checked():
    with pytest.raises(InvalidParameterError, match=r"'process_single_instances': it must be a bool"):
        type("G", (GlobalMetric,), {"main_score": "s", "process_single_instances": 0})


def test_reduction_map_on_a_global_metric_is_rejected():
    with pytest.raises(InvalidParameterError, match="not an InstanceMetric"):
        type("G", (GlobalMetric,), {"main_score": "s", "reduction_map": {"mean": ["s"]}})
