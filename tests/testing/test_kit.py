"""assay.testing.test_metric catches what it promises to catch; the fixtures isolate plugins."""

from __future__ import annotations

import sys
import types

import pytest
from assay_kit_samples import FirstPrediction, ForgetfulMatch
from assay_metric_samples import SampleAccuracy, SampleExactMatch, SampleF1

import assay
from assay import hookimpl
from assay.errors import UnknownNameError
from assay.testing import check_invariances, test_metric


def test_passes_a_correct_metric_and_returns_results():
    res = test_metric(SampleF1(), [1, 0, 1, 1, 0], [[1], [1], [0], [1], [0]],
                      instance_targets=[{"f1": 1.0}, {"f1": 0.0}, {"f1": 0.0}, {"f1": 1.0}, {"f1": 0.0}],
                      global_target={"f1": 4 / 6, "score_name": "f1"})
    assert res.global_scores["recall"] == pytest.approx(2 / 3)


def test_wrong_targets_fail():
    with pytest.raises(AssertionError, match="global scores differ: 'accuracy': got 0.5"):
        test_metric(SampleAccuracy(), [1, 2], [[1], [3]], None, {"accuracy": 0.6})
    with pytest.raises(AssertionError, match="instance 1 scores differ"):
        test_metric(SampleExactMatch(), ["a", "b"], [["a"], ["b"]], [{"em": 1.0}, {"em": 0.0}], {"em": 1.0})
    with pytest.raises(AssertionError, match="missing"):
        test_metric(SampleAccuracy(), [1], [[1]], None, {"acc": 1.0})


def test_nan_target_matches_nan():
    test_metric(SampleExactMatch(), ["a"], [[""]], [{"len_ratio": float("nan")}], {"len_ratio": float("nan")})


def test_order_dependence_is_caught():
    with pytest.raises(AssertionError, match="shuffling the instances changed the scores"):
        test_metric(FirstPrediction(), [1, 2, 3, 4], [[0]] * 4, None, {"first": 1.0})


def test_broken_streaming_is_caught():
    with pytest.raises(AssertionError, match="chunks of 1, 2, 3"):
        check_invariances(ForgetfulMatch(), ["a", "b", "c", "d"], [["a"], ["x"], ["c"], ["d"]])


def test_unpicklable_metric_is_caught():
    class Local(SampleAccuracy):  # defined in a function: cannot be pickled by reference
        pass

    with pytest.raises(AssertionError, match="cannot be pickled"):
        check_invariances(Local(), [1, 2], [[1], [2]])


def test_by_registered_name(register_assay_plugin):
    import assay_metric_samples

    register_assay_plugin(assay_metric_samples)
    test_metric("sample_f1[positive=0]", [0, 1], [[0], [0]], None, {"f1": 2 / 3})


def test_fixture_gives_a_fresh_system(register_assay_plugin, assay_plugin_system):
    plugin = types.ModuleType("throwaway_kit_plugin")

    @hookimpl
    def assay_register_metrics(register):
        register("throwaway_accuracy", SampleAccuracy)

    plugin.assay_register_metrics = assay_register_metrics
    info = register_assay_plugin(plugin)
    assert info.registered == {"metric": ("throwaway_accuracy",)}
    assert assay.get_plugin_system() is assay_plugin_system
    res = assay.evaluate([1, 0], [[1], [1]], metrics=["throwaway_accuracy"], n_resamples=0)
    assert res.global_scores["accuracy"] == 0.5


def test_fresh_system_is_gone_after_the_test():
    from assay.plugins import get_plugin_system

    with pytest.raises(UnknownNameError):
        get_plugin_system().registry("metric").get("throwaway_accuracy")


def test_test_metric_is_not_collected_as_a_test():
    assert test_metric.__test__ is False
    assert "test_metric" in dir(sys.modules[__name__])
