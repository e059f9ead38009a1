"""Metric namespaces (``assay_register_metric_namespaces``): ``"ns:name[k=v]"`` resolved on demand."""

from __future__ import annotations

import types

import pytest

import assay
from assay import hookimpl
from assay.errors import PluginLoadError, UnknownNameError
from assay.metrics import InstanceMetric
from assay.plugins import PluginSystem, use_plugin_system


class Threshold(InstanceMetric):
    main_score = "above"

    def __init__(self, cut: float = 0.5, *, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.cut = cut

    def compute_instance(self, prediction, references, task_data=None):
        return float((prediction > self.cut) == references[0])


CALLS: list[tuple[str, dict]] = []


def resolve(name, **options):
    CALLS.append((name, dict(options)))
    if name != "threshold":
        raise UnknownNameError(f"No toy metric named {name!r}.")
    return Threshold(**options)


def plugin(module_name="toy_plugin", **hooks):
    module = types.ModuleType(module_name)
    for name, fn in hooks.items():
        setattr(module, name, hookimpl(fn))
    return module


def namespaces(register):
    register("toy", resolve, description="Toy metrics")


def metrics(register):
    register("threshold", lambda **kw: Threshold(cut=0.9, **kw))


@pytest.fixture
def system():
    ps = PluginSystem(entry_points=False)
    ps.register_plugin(plugin(assay_register_metric_namespaces=namespaces), "toy-ns")
    with use_plugin_system(ps):
        yield ps


def test_namespaced_name_calls_the_resolver_with_options(system):
    CALLS.clear()
    m = assay.load_metric("toy:threshold[cut=0.25]")
    assert isinstance(m, Threshold) and m.cut == 0.25
    assert CALLS == [("threshold", {"cut": 0.25})]
    assert "toy:threshold" in system.registry("metric")
    assert system.registry("metric").namespaces()["toy"].plugin == "toy-ns"
    info = next(p for p in system.plugins if p.name == "toy-ns")
    assert info.registered == {"metric_namespace": ("toy",)}


def test_evaluate_and_score_prefix(system):
    res = assay.evaluate([0.3, 0.8, 0.6], [[1], [1], [0]], metrics=["toy:threshold[cut=0.5, score_prefix=t_]"],
                         n_resamples=0)
    assert res.global_scores["t_above"] == pytest.approx(1 / 3)  # only 0.8 > 0.5 agrees with its label 1


def test_namespace_wins_over_a_plugin_qualifier():
    ps = PluginSystem(entry_points=False)
    ps.register_plugin(plugin("toy", assay_register_metrics=metrics), "toy")  # entry point named like the namespace
    ps.register_plugin(plugin(assay_register_metric_namespaces=namespaces), "toy-ns")
    assert ps.load("metric", "threshold").cut == 0.9            # the plain name: plugin 'toy'
    assert ps.load("metric", "toy:threshold").cut == 0.5        # the namespace, tried first


def test_unknown_names_come_from_the_resolver_and_typos_list_namespaces(system):
    with pytest.raises(UnknownNameError, match="No toy metric named 'treshold'"):
        assay.load_metric("toy:treshold")
    with pytest.raises(UnknownNameError, match="Registered metric namespaces: toy"):
        assay.load_metric("tyo:threshold")


def test_a_namespace_belongs_to_one_plugin(system):
    with pytest.raises(PluginLoadError, match="namespace 'toy', which plugin 'toy-ns' registered already"):
        system.register_plugin(plugin("other", assay_register_metric_namespaces=namespaces), "other")
    assert system.registry("metric").namespaces()["toy"].plugin == "toy-ns"


def test_bad_namespace_registrations_fail_the_plugin():
    ps = PluginSystem(entry_points=False)
    with pytest.raises(PluginLoadError, match="invalid metric namespace name 'a:b'"):
        ps.register_plugin(plugin(assay_register_metric_namespaces=lambda register: register("a:b", resolve)), "bad")
    with pytest.raises(PluginLoadError, match="not callable"):
        ps.register_plugin(plugin(assay_register_metric_namespaces=lambda register: register("x", 3)), "bad2")
    assert ps.registry("metric").namespaces() == {}
