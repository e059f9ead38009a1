from __future__ import annotations

import types

import pytest

import assay
from assay import hookimpl
from assay.errors import (
    AmbiguousNameError,
    DuplicateRegistrationError,
    InvalidParameterError,
    PluginLoadError,
    UnknownNameError,
)
from assay.plugins import PluginSystem, use_plugin_system
from assay.plugins.registry import Registry


class Scaled:
    def __init__(self, factor: float = 1.0, *, label: str = "x") -> None:
        self.factor = factor
        self.label = label


def make_plugin(**hooks):
    module = types.ModuleType("fake_plugin")
    for name, fn in hooks.items():
        setattr(module, name, hookimpl(fn))
    return module


@pytest.fixture
def system():
    system = PluginSystem(entry_points=False)

    def assay_register_metrics(register):
        register("scaled", Scaled, description="Scales things")
        register("scaled_up", Scaled)

    def assay_register_aggregations(register):
        register("anything", lambda **kw: kw)

    system.register_plugin(make_plugin(assay_register_metrics=assay_register_metrics,
                                       assay_register_aggregations=assay_register_aggregations), "fake")
    with use_plugin_system(system):
        yield system


def test_load_with_overrides_in_the_name_and_as_keywords(system):
    m = assay.load_metric("scaled[factor=2.5, label=a]")
    assert (m.factor, m.label) == (2.5, "a")
    m = assay.load_metric("scaled", factor=4)
    assert m.factor == 4
    m = assay.load_metric("scaled[factor=4]", factor=4)  # same value twice is fine
    assert m.factor == 4


def test_conflicting_override_is_an_error(system):
    with pytest.raises(InvalidParameterError, match="given twice"):
        assay.load_metric("scaled[factor=4]", factor=5)


def test_unknown_name_lists_close_matches(system):
    with pytest.raises(UnknownNameError, match=r"No metric named 'scaledd'\. Did you mean: scaled"):
        assay.load_metric("scaledd")


def test_unknown_key_lists_close_matches_and_accepted_keys(system):
    with pytest.raises(InvalidParameterError, match=r"Unknown override 'factr'.*Did you mean: factor\?.*"
                                                     r"Accepted keys: factor, label"):
        assay.load_metric("scaled[factr=2]")


def test_factory_with_kwargs_accepts_any_key(system):
    assert assay.load_aggregation("anything[a=1, b=[x]]") == {"a": 1, "b": ["x"]}


def test_empty_registry_says_to_install_a_plugin(system):
    with pytest.raises(UnknownNameError, match="No estimator is registered"):
        assay.load_estimator("msp")


def test_entry_metadata_and_description(system):
    entry = system.registry("metric").get("scaled")
    assert entry.plugin == "fake" and entry.description == "Scales things"
    assert system.registry("metric").get("scaled_up").description == ""
    assert entry.accepted_keys() == ["factor", "label"]


# Changed for issue 10: registering a name another plugin has used to raise and drop the plugin;
# now both stay, the name is ambiguous and the lookup says how to choose.
def test_register_plugin_clash_keeps_both_and_makes_the_name_ambiguous(system):
    def assay_register_metrics(register):
        register("fresh", Scaled)
        register("scaled", dict)

    info = system.register_plugin(make_plugin(assay_register_metrics=assay_register_metrics), "other",
                                  distribution="other-dist")
    assert info.status == "loaded" and info.clashes == {"metric": {"scaled": ("fake",)}}
    assert "fresh" in system.registry("metric")
    with pytest.raises(AmbiguousNameError, match=r"'scaled' is ambiguous.*'fake'.*'other' \(distribution other-dist\)"
                                                 r".*'fake:scaled' or 'other-dist:scaled'"):
        assay.load_metric("scaled")
    assert assay.load_metric("fake:scaled[factor=3]").factor == 3
    assert assay.load_metric("other-dist:scaled[factor=3]") == {"factor": 3}
    assert assay.load_metric("other:scaled") == {}
    assert "scaled" in system.registry("metric") and "fake:scaled" in system.registry("metric")
    assert [e.name for e in system.registry("metric")] == ["fresh", "scaled_up"]  # iteration skips ambiguous
    assert system.problems_summary() == (
        "assay: warning: 1 name clash (metric 'scaled': fake and other) (run 'assay plugins' for details)")


def test_one_plugin_registering_a_name_twice_fails_that_plugin(system):
    def assay_register_metrics(register):
        register("fresh", Scaled)
        register("fresh", Scaled)

    with pytest.raises(PluginLoadError, match="registered metric 'fresh' twice"):
        system.register_plugin(make_plugin(assay_register_metrics=assay_register_metrics), "other")
    assert "fresh" not in system.registry("metric")


@pytest.mark.parametrize("bad_name", ["has space", "", "a/b", 3])
def test_invalid_registered_names_are_rejected(bad_name):
    system = PluginSystem(entry_points=False)

    def assay_register_metrics(register):
        register(bad_name, Scaled)

    with pytest.raises(PluginLoadError, match="invalid metric name"):
        system.register_plugin(make_plugin(assay_register_metrics=assay_register_metrics), "bad")


def test_non_callable_factory_is_rejected():
    system = PluginSystem(entry_points=False)

    def assay_register_metrics(register):
        register("n", 42)

    with pytest.raises(PluginLoadError, match="not callable"):
        system.register_plugin(make_plugin(assay_register_metrics=assay_register_metrics), "bad")


def test_unknown_kind_lists_close_matches():
    with pytest.raises(InvalidParameterError, match="Did you mean: metric"):
        Registry("metrik")


def test_duplicate_error_type():
    assert issubclass(DuplicateRegistrationError, PluginLoadError)


def test_builtin_executors_and_formats_register_through_hooks():
    system = PluginSystem(entry_points=False)
    builtins = {p.name: p for p in system.plugins}
    assert builtins["assay.core.formats"].registered["data_format"] == ("jsonl",)
    assert {"serial", "threads", "processes"} <= set(builtins["assay.executors.builtin"].registered["executor"])


def test_qualified_names_work_for_unambiguous_names_and_builtins(system):
    assert assay.load_metric("fake:scaled[factor=2]").factor == 2
    assert assay.load_executor("assay:threads[workers=2]").workers == 2
    registry = system.registry("executor")
    assert registry.get("assay.executors.builtin:serial").plugin == "assay.executors.builtin"
    assert "assay:serial" in registry and "nobody:serial" not in registry
    with pytest.raises(UnknownNameError, match=r"no plugin 'fake' registered 'serial'.*Load it as 'assay:serial'"):
        registry.get("fake:serial")
    with pytest.raises(UnknownNameError, match=r"No metric named 'fake:scaledd'\. Did you mean: scaled"):
        assay.load_metric("fake:scaledd")


def test_an_alias_loads_the_same_factory_and_says_whose_alias_it_is(system):
    def assay_register_metrics(register):
        register("peer_metric", Scaled, description="Scales like the peer", other_names=("PeerMetric", "peer.metric"))

    system.register_plugin(make_plugin(assay_register_metrics=assay_register_metrics), "peer")
    by_alias = assay.load_metric("PeerMetric[factor=3]")
    assert isinstance(by_alias, Scaled) and by_alias.factor == 3
    assert isinstance(assay.load_metric("peer.metric"), Scaled)
    registry = assay.get_registry("metric")
    assert registry.get("PeerMetric").description == "alias of peer_metric: Scales like the peer"
    assert registry.get("peer_metric").metadata["other_names"] == ("PeerMetric", "peer.metric")
    assert "alias_of" not in registry.get("peer_metric").metadata


@pytest.mark.parametrize("aliases, message", [
    ("PeerMetric", "give a tuple of names"),
    (("bad name!",), "invalid alias 'bad name!'"),
    (("peer_metric",), "invalid alias 'peer_metric'"),
    (("Other", "Other"), "which repeat a name"),
    (None, "given as other_names="),
])
def test_a_bad_alias_fails_that_plugin_with_the_reason(system, aliases, message):
    def assay_register_metrics(register):
        if aliases is None:  # the tuple of names under the key tasks use for their {dotted.path: factory} map
            register("peer_metric", Scaled, aliases=("PeerMetric",))
        else:
            register("peer_metric", Scaled, other_names=aliases)

    with pytest.raises(PluginLoadError, match=message):
        system.register_plugin(make_plugin(assay_register_metrics=assay_register_metrics), "peer")


def test_an_alias_of_another_plugins_name_is_a_clash_like_any_name(system):
    def assay_register_metrics(register):
        register("mine", Scaled, other_names=("scaled",))

    system.register_plugin(make_plugin(assay_register_metrics=assay_register_metrics), "other")
    with pytest.raises(AmbiguousNameError, match="scaled"):
        assay.load_metric("scaled")
