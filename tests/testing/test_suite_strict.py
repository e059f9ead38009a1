"""The common suite (:mod:`assay.testing.suite`) and the invariances it added: each catches what it promises.

Every broken object in ``assay_suite_samples`` breaks one invariance; the test names the
check that must fail. Expected relations are derived by hand in the comments.
"""

from __future__ import annotations

import assay_conformance_samples
import assay_suite_samples
import pytest

from assay import hookimpl
from assay.plugins import PluginSystem
from assay.testing.conformance import check_entry
from assay.testing.suite import assert_conforms, conformance_test, registered_entries, with_overrides


@pytest.fixture(scope="module")
def system():
    system = PluginSystem(entry_points=False)
    system.register_plugin(assay_conformance_samples)
    system.register_plugin(assay_suite_samples)
    return system


def _results(system, kind, name):
    return {r.check: r for r in check_entry(system.registry(kind).get(name), system)}


def _problems(results):
    """Checks that failed or could not run (a skip that does not apply is no problem)."""
    return {c for c, r in results.items() if r.status == "FAIL" or (r.status == "SKIP" and r.applies)}


def _fails(system, kind, name, match):
    with pytest.raises(AssertionError, match=match) as info:
        assert_conforms(system.registry(kind).get(name), system)
    return str(info.value)


# ------------------------------------------------------------------------------------------ UE metrics
def test_a_declared_complement_holds_for_an_auc(system):
    # AUC(-u) counts the pairs where the failure is *less* uncertain, ties 1/2: 1 - AUC(u)
    results = _results(system, "ue_metric", "complement_auc")
    assert results["orientation"].status == "PASS"
    assert not _problems(results)


def test_a_wrong_relation_fails_orientation(system):
    results = _results(system, "ue_metric", "wrong_complement")
    assert _problems(results) == {"orientation"}
    assert "orientation 'negate' promises f(-u, q) = -f(u, q)" in results["orientation"].reason


def test_a_tie_order_metric_that_declares_it_is_not_tie_checked(system):
    results = _results(system, "ue_metric", "declared_tie_order")
    assert results["ties"].status == "SKIP" and not results["ties"].applies
    assert not _problems(results)
    # undeclared, the same metric fails the tie check (and only that)
    assert _problems(_results(system, "ue_metric", "first_tie_wins")) == {"ties"}


def test_streaming_needs_update_and_is_a_plain_capability_check(system):
    results = _results(system, "ue_metric", "failure_auc")
    metric = system.registry("ue_metric").get("failure_auc").create()
    if hasattr(metric, "update"):  # UE metrics that are metrics: the metric invariances ran
        assert results["streaming"].status == "PASS"
    else:
        assert results["streaming"].status == "SKIP" and not results["streaming"].applies


# ------------------------------------------------------------------------------------------ other kinds
def test_an_estimator_that_depends_on_the_batch_fails_chunking_only(system):
    # 0.5, 2, 1, 4 over max 4 -> .125, .5, .25, 1; the halves over 2 and 4 -> .25, 1, .25, 1
    results = _results(system, "estimator", "batch_normalized")
    assert _problems(results) == {"chunking"}
    assert "example 0 gives 0.25 instead of 0.125" in results["chunking"].reason
    assert not _problems(_results(system, "estimator", "plain_entropy"))


def test_a_stateful_sentence_evaluator_fails_the_tally_invariances(system):
    results = _results(system, "sentence_evaluator", "call_counter")
    assert {"order", "shard-merge", "one-at-a-time"} & _problems(results)
    assert "pickling" not in _problems(results)


def test_a_read_only_format_reads_its_sample_and_needs_no_round_trip(system):
    results = _results(system, "data_format", "read_only_pairs")
    assert results["parse"].status == "PASS"
    assert results["round-trip"].status == "SKIP" and not results["round-trip"].applies
    assert_conforms(system.registry("data_format").get("read_only_pairs"), system)


def test_a_format_without_a_sample_fails_the_suite(system):
    message = _fails(system, "data_format", "unsampled_pairs", "does not conform")
    assert "data_format 'unsampled_pairs'" in message and "parse: SKIP(no sample" in message


def test_an_aggregation_with_state_between_calls_fails_call_order(system):
    # maps: 16x16 then 4x8x8 random in [0, 1); the running max after both calls differs from the first alone
    results = _results(system, "aggregation", "running_max")
    assert "call-order" in _problems(results)


def test_an_executor_that_reorders_results_fails_same_result(system):
    results = _results(system, "executor", "completion_order")
    assert results["same-result"].status == "FAIL"
    assert results["same-result"].reason.startswith("parallelEvaluate on 13 items in 4 shards gives")


def test_an_object_whose_checks_cannot_run_fails_naming_it(system):
    message = _fails(system, "aggregation", "needs_size", "aggregation 'needs_size'")
    assert "instantiate: SKIP(the factory needs size" in message


def test_with_overrides_feeds_the_factory(system):
    # the factory of needs_size takes a size: given, every aggregation check runs (and map_max's NaN check fails)
    entry = with_overrides(system.registry("aggregation").get("needs_size"), size=3)
    assert {r.check: r.status for r in check_entry(entry, system)}["instantiate"] == "PASS"


# ------------------------------------------------------------------------------------------ the test factory
def test_conformance_test_parametrises_over_the_registered_names(system):
    test = conformance_test("assay_suite_samples", system=system, exempt={("aggregation", "running_max"): "why"})
    (mark,) = [m for m in test.pytestmark if m.name == "parametrize"]
    ids = [p.id for p in mark.args[1]]
    assert ids == [f"{e.kind}:{e.name}" for e in registered_entries(system, distribution="assay_suite_samples")
                   if e.name != "running_max"]
    assert "ue_metric:complement_auc" in ids and "data_format:unsampled_pairs" in ids


def test_conformance_test_of_a_plugin_that_registers_nothing_fails(system):
    test = conformance_test("assay_suite_samples", system=system, kinds=["task"])
    (mark,) = [m for m in test.pytestmark if m.name == "parametrize"]
    (param,) = mark.args[1]
    with pytest.raises(AssertionError, match="registers no name to check"):
        test(*param.values)


def test_an_exemption_needs_a_reason(system):
    with pytest.raises(ValueError, match="reason"):
        conformance_test(system=system, exempt={("executor", "dask"): ""})



# ------------------------------------------------------------------------------------------ the pytest fixture
def test_the_assay_conformance_fixture_passes_a_conforming_plugin(register_assay_plugin, assay_conformance):
    register_assay_plugin(assay_suite_samples.GoodOnly(), "good_only")
    assert [e.name for e in assay_conformance("good_only")] == ["plain_entropy"]


def test_the_assay_conformance_fixture_names_what_fails(register_assay_plugin, assay_conformance):
    register_assay_plugin(assay_suite_samples, "suite_samples")
    with pytest.raises(AssertionError) as info:
        assay_conformance(kinds=["estimator"])
    assert "estimator 'batch_normalized'" in str(info.value) and "chunking: FAIL" in str(info.value)
    assert "plain_entropy" not in str(info.value)


def test_the_assay_conformance_fixture_needs_something_registered(assay_conformance):
    with pytest.raises(AssertionError, match="no name registered"):
        assay_conformance()


def test_samples_without_expected_scores_or_generated_ones_are_enough_for_a_metric():
    # the 'examples' check compares declared expected scores; a metric that declares none (generated samples,
    # or samples without global_target) still runs every invariance, so that check does not apply
    system = PluginSystem(entry_points=False)
    system.register_plugin(_MeanPlugin(), "mean_plugin")
    for name in ("generated_mean", "untargeted_mean"):
        results = {r.check: r for r in assert_conforms(system.registry("metric").get(name), system)}
        assert results["examples"].status == "SKIP" and not results["examples"].applies
        assert results["order"].status == "PASS" and results["evaluate"].status == "PASS"


class _MeanPlugin:
    @hookimpl
    def assay_register_metrics(self, register):
        from assay_suite_samples import MeanPrediction

        register("generated_mean", MeanPrediction)
        register("untargeted_mean", MeanPrediction, examples=[{"predictions": [1.0, 2.0, 4.0], "references": None}])
