"""Class-attribute handlers: how a plugin gives meaning to a metric class attribute (assay.metrics._attributes).

The handlers here are throwaway functions registered in the process; the installed plugins' handlers are
hidden (an empty entry-point table), so each test sees exactly the handlers it registers.
"""

from __future__ import annotations

import pytest

from assay.errors import InvalidParameterError, MissingDependencyError
from assay.metrics import GlobalMetric, InstanceMetric, Metric, _attributes


@pytest.fixture
def no_plugin_handlers(monkeypatch):
    """No handler registered in the process and none declared by an installed plugin."""
    monkeypatch.setattr(_attributes, "_handlers", {})
    monkeypatch.setattr(_attributes, "_declared", {})


def _instance(body: dict, name: str = "Ported"):
    def compute_instance(self, prediction, references, task_data=None):
        return float(prediction in references)

    return type(name, (InstanceMetric,), {"main_score": "match", "compute_instance": compute_instance, **body})


@pytest.mark.parametrize("attr,value", [
    ("reduction_map", {"max": ["match"]}),
    ("subgroup_column", "variant"),
    ("_requirements_list", ["nltk>=3.6.6"]),
])
def test_a_plugin_attribute_without_its_plugin_names_the_install(no_plugin_handlers, attr, value):
    with pytest.raises(MissingDependencyError, match=r"pip install assay-unitxt") as info:
        _instance({attr: value})
    assert repr(attr) in str(info.value) and "Ported" in str(info.value)


def test_process_single_instances_without_the_plugin_names_the_install(no_plugin_handlers):
    with pytest.raises(MissingDependencyError, match=r"'process_single_instances'.*pip install assay-unitxt"):
        type("G", (GlobalMetric,), {"main_score": "s", "process_single_instances": False,
                                    "compute_global": lambda self, p, r, t: 1.0})


def test_unitxt_compute_without_the_plugin_names_the_install(no_plugin_handlers):
    def compute(self, references, prediction, task_data):
        return 1.0

    with pytest.raises(MissingDependencyError, match=r"'compute'.*pip install assay-unitxt"):
        type("U", (InstanceMetric,), {"main_score": "s", "compute": compute})


def test_the_streaming_compute_needs_no_plugin(no_plugin_handlers):
    class Streaming(InstanceMetric):
        main_score = "match"

        def compute_instance(self, prediction, references, task_data=None):
            return float(prediction in references)

        def compute(self):  # assay's streaming compute, overridden: not unitxt's
            return 2 * super().compute()

    # instance scores 1, 0, 1: mean 2/3, doubled
    assert Streaming().update(["a", "b", "c"], [["a"], ["x"], ["c"]]).compute() == pytest.approx(4 / 3)


def test_a_registered_handler_sees_the_class_and_may_adapt_it(no_plugin_handlers):
    seen = []

    def handler(cls, attr, value):
        seen.append((cls.__name__, attr, value))
        cls.per_instance = False

    _attributes.register_attribute_handler("reduction_map", handler)
    cls = _instance({"reduction_map": {"max": ["match"]}})
    assert seen == [("Ported", "reduction_map", {"max": ["match"]})]
    assert cls.per_instance is False and cls.reduction_map == {"max": ["match"]}
    # a subclass that does not declare it again is not handled again (it inherits what the handler did)
    type("Sub", (cls,), {})
    assert len(seen) == 1


def test_a_handler_is_asked_about_an_attribute_no_rule_accepts(no_plugin_handlers):
    def refuse(cls, attr, value):
        raise InvalidParameterError(f"{cls.__name__} declares {attr!r}: use the constructor instead")

    with pytest.raises(InvalidParameterError, match=r"not supported by assay: no base class knows it"):
        _instance({"confidence_level": 0.9})  # no handler: the generic error
    _attributes.register_attribute_handler("confidence_level", refuse)
    with pytest.raises(InvalidParameterError, match=r"Ported declares 'confidence_level': use the constructor"):
        _instance({"confidence_level": 0.9})
    # a name a method reads is the class's own option: no handler is asked
    _instance({"confidence_level": 0.9, "helper": lambda self: self.confidence_level})


def test_a_broken_handler_is_named(monkeypatch):
    class Broken:
        name = "reduction_map"
        value = "broken_plugin.attributes:reduction_map"

        def load(self):
            raise ImportError("No module named 'broken_plugin'")

    monkeypatch.setattr(_attributes, "_handlers", {})
    monkeypatch.setattr(_attributes, "_declared", {"reduction_map": Broken()})
    with pytest.raises(InvalidParameterError, match=r"broken_plugin\.attributes:reduction_map.*failed to load: "
                                                    r"ImportError: No module named 'broken_plugin'"):
        _instance({"reduction_map": {"max": ["match"]}})


def test_register_attribute_handler_checks_its_arguments():
    with pytest.raises(InvalidParameterError, match="attribute name and a callable"):
        _attributes.register_attribute_handler("not a name", lambda cls, attr, value: None)
    with pytest.raises(InvalidParameterError, match="attribute name and a callable"):
        _attributes.register_attribute_handler("reduction_map", "not callable")


def test_assay_own_bases_declare_no_plugin_attribute():
    # the core's bases are usable with no plugin: none of them declares what a plugin handles
    for base in (Metric, InstanceMetric, GlobalMetric):
        for klass in base.__mro__:
            assert not set(vars(klass)) & set(_attributes.PLUGIN_ATTRIBUTES) - {"compute"}, klass
