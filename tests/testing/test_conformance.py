"""The per-kind conformance checks behind ``assay check-plugin``: each catches what it promises.

The plugin objects live in ``assay_conformance_samples`` (module level, so they pickle);
each broken one breaks exactly one promise, and the test names the check that must fail.
"""

from __future__ import annotations

import assay_conformance_samples
import numpy as np
import pytest

from assay.plugins import PluginSystem
from assay.testing.conformance import CHECKS_BY_KIND, check_entry
from assay.testing.metric_checks import bad_input_outcome
from assay.testing.samples import generate_metric_sample, ue_sample


@pytest.fixture(scope="module")
def system():
    system = PluginSystem(entry_points=False)
    system.register_plugin(assay_conformance_samples)
    return system


def _results(system, kind, name):
    entry = system.registry(kind).get(name)
    results = check_entry(entry, system)
    assert [r.check for r in results] == list(CHECKS_BY_KIND[kind]), "every check is reported, none omitted"
    return {r.check: r for r in results}


def _statuses(results):
    """Check -> status; a skip that does not apply (e.g. streaming a UE metric without update) reads N/A."""
    return {check: ("N/A" if r.status == "SKIP" and not r.applies else r.status) for check, r in results.items()}


def test_good_ue_metric_passes(system):
    assert set(_statuses(_results(system, "ue_metric", "failure_auc")).values()) <= {"PASS", "N/A"}


def test_inverted_orientation_fails_orientation_only(system):
    results = _results(system, "ue_metric", "inverted_auc")
    assert {c for c, s in _statuses(results).items() if s not in ("PASS", "N/A")} == {"orientation"}
    # perfect ranking: every failure more uncertain than every success -> inverted AUC 0; shuffled -> in between
    assert results["orientation"].reason.startswith("a perfect ranking scores 0.0 and a shuffled one")


def test_tie_dependent_ue_metric_fails_order_ties(system):
    results = _results(system, "ue_metric", "first_tie_wins")
    assert {c for c, s in _statuses(results).items() if s not in ("PASS", "N/A")} == {"ties"}


def test_estimator_checks(system):
    assert set(_statuses(_results(system, "estimator", "max_prob")).values()) == {"PASS"}
    bad = _results(system, "estimator", "bad_level")
    assert bad["declaration"].status == "FAIL" and "got 'paragraph'" in bad["declaration"].reason
    assert {bad[c].status for c in ("pickling", "dependencies", "run")} == {"SKIP"}


def test_a_dependency_cycle_fails_dependencies(system):
    for kind, name in (("estimator", "needs_entropy"), ("stat_calculator", "entropy_cycle")):
        results = _results(system, kind, name)
        assert results["dependencies"].status == "FAIL"
        assert "cycle" in results["dependencies"].reason
        assert results["run"].status == "SKIP" and "examples=[{'stats'" in results["run"].reason


def test_sentence_evaluator_checks(system):
    assert set(_statuses(_results(system, "sentence_evaluator", "token_match")).values()) == {"PASS"}
    miss = _results(system, "sentence_evaluator", "miss_count")
    assert _statuses(miss) == {"instantiate": "PASS", "pickling": "PASS", "tally": "FAIL", "order": "SKIP",
                               "shard-merge": "SKIP", "one-at-a-time": "SKIP"}
    assert miss["tally"].reason.startswith("item 0: returned (-1, 2)")
    # correct above total: (3, 2) on the first item was a PASS before issue 27, item 9
    over = _results(system, "sentence_evaluator", "over_count")
    assert over["tally"].status == "FAIL" and {over[c].status for c in ("order", "shard-merge")} == {"SKIP"}
    assert over["tally"].reason.startswith("item 0: returned (3, 2); correct_num 3 is above gold_set_size 2")
    local = _results(system, "sentence_evaluator", "no_sample_match")
    assert local["pickling"].status == "FAIL" and "cannot be pickled" in local["pickling"].reason
    assert local["tally"].status == "SKIP"


def test_executor_checks(system):
    assert set(_statuses(_results(system, "executor", "backwards")).values()) == {"PASS"}
    wrong = _results(system, "executor", "completion_order")
    assert {c for c, s in _statuses(wrong).items() if s != "PASS"} == {"run-order", "same-result"}
    assert "expected [10, 11, 14, 19, 26, 35, 46]" in wrong["run-order"].reason


@pytest.mark.parametrize("name", ["serial", "threads", "processes"])
def test_builtin_executors_pass(name):
    system = PluginSystem(entry_points=False)
    assert set(_statuses(_results(system, "executor", name)).values()) == {"PASS"}


def test_data_format_checks(system):
    assert set(_statuses(_results(system, "data_format", "pairs")).values()) == {"PASS"}
    lossy = _results(system, "data_format", "lossy_pairs")
    assert {c for c, s in _statuses(lossy).items() if s != "PASS"} == {"round-trip"}
    jsonl = _results(PluginSystem(entry_points=False), "data_format", "jsonl")
    assert jsonl["round-trip"].status == "PASS"  # on the sample the jsonl registration declares


def test_aggregation_checks(system):
    assert set(_statuses(_results(system, "aggregation", "checked_mean")).values()) == {"PASS"}
    nan = _results(system, "aggregation", "map_max")
    assert {c for c, s in _statuses(nan).items() if s != "PASS"} == {"nan-map"}
    assert nan["nan-map"].reason == "a map holding NaN: returned NaN without an UndefinedMetricWarning"
    needs = _results(system, "aggregation", "needs_size")
    assert set(_statuses(needs).values()) == {"SKIP"}
    assert needs["instantiate"].reason.startswith("the factory needs size")


def test_bad_input_outcomes():
    from assay.errors import InvalidParameterError
    from assay.validation import undefined_metric

    def raises(exc):
        def run():
            raise exc
        return run

    assert bad_input_outcome(raises(InvalidParameterError("bad"))) is None
    assert bad_input_outcome(lambda: undefined_metric("empty")) is None
    assert bad_input_outcome(raises(IndexError("index 3"))).startswith("raw IndexError instead of an assay error")
    assert bad_input_outcome(lambda: float("nan")) == "returned NaN without an UndefinedMetricWarning"
    assert bad_input_outcome(lambda: 0.25) == "returned 0.25 instead of raising an assay error"


def test_generated_metric_samples_follow_prediction_type():
    class Typed:
        needs_references = True

        def __init__(self, tp):
            self.prediction_type = tp

    floats = generate_metric_sample(Typed(float))
    assert all(isinstance(p, float) for p in floats["predictions"])
    assert all(len(r) == 1 and isinstance(r[0], float) for r in floats["references"])
    tokens = generate_metric_sample(Typed(list[str]))
    assert all(isinstance(p, list) and all(isinstance(t, str) for t in p) for p in tokens["predictions"])
    assert generate_metric_sample(Typed(None)) is None
    assert generate_metric_sample(Typed(np.ndarray)) is None
    n = len(floats["predictions"])
    agree = [p == r[0] for p, r in zip(floats["predictions"], floats["references"])]
    thirds = [sum(agree[s * n // 3:(s + 1) * n // 3]) for s in range(3)]
    assert len(set(thirds)) > 1, "the thirds must score differently, or a merge that drops shards goes unseen"


def test_ue_sample_has_ties_and_both_outcomes():
    s = ue_sample()
    assert len(np.unique(s["uncertainty"])) < len(s["uncertainty"])
    assert set(s["quality"].tolist()) == {0.0, 1.0}


def test_malformed_examples_fail_the_examples_check():
    from assay_metric_samples import SampleAccuracy

    from assay import hookimpl

    class Plugin:
        @staticmethod
        @hookimpl
        def assay_register_metrics(register):
            register("bad_examples", SampleAccuracy, examples="predictions=[1]")

    system = PluginSystem(entry_points=False)
    system.register_plugin(Plugin, "bad_examples_plugin")
    results = _results(system, "metric", "bad_examples")
    assert results["instantiate"].status == "PASS"
    assert results["examples"].status == "FAIL"
    assert results["examples"].reason == "examples of metric 'bad_examples' must be a list of dicts; got str"
    assert {results[c].status for c in CHECKS_BY_KIND["metric"][2:]} == {"SKIP"}
