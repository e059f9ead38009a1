"""assay's plugin system: hook specs, safe entry-point loading on demand, registries, ``name[k=v]`` lookup.

A lookup imports only the plugins that declare the name (:mod:`assay.plugins.declarations`).

>>> import assay
>>> assay.load_executor("threads[workers=2]").workers
2
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay.plugins.declarations import DECLARATION_GROUPS, NAMESPACE_DECLARATION_GROUPS
from assay.plugins.hookspecs import hookimpl, hookspec
from assay.plugins.manager import (
    BUILTIN_DECLARATIONS,
    BUILTIN_PLUGINS,
    COMMAND_GROUP,
    ENTRY_POINT_GROUP,
    PluginInfo,
    PluginSystem,
    get_plugin_system,
    problems_summary,
    set_plugin_system,
    use_plugin_system,
    warns_about_plugin_problems,
)
from assay.plugins.names import format_name, parse_name
from assay.plugins.registry import KINDS, Entry, Registry

__all__ = [
    "add_to_catalog",
    "register_local_catalog",
    "BUILTIN_DECLARATIONS",
    "BUILTIN_PLUGINS",
    "COMMAND_GROUP",
    "DECLARATION_GROUPS",
    "ENTRY_POINT_GROUP",
    "NAMESPACE_DECLARATION_GROUPS",
    "KINDS",
    "Entry",
    "PluginInfo",
    "PluginSystem",
    "Registry",
    "format_name",
    "get_plugin_system",
    "get_registry",
    "hookimpl",
    "hookspec",
    "load",
    "load_aggregation",
    "load_data_format",
    "load_estimator",
    "load_executor",
    "load_generation_metric",
    "load_metric",
    "load_model_backend",
    "load_sentence_evaluator",
    "load_stat_calculator",
    "load_task",
    "load_ue_metric",
    "parse_name",
    "problems_summary",
    "set_plugin_system",
    "use_plugin_system",
    "warns_about_plugin_problems",
]


def __getattr__(name: str) -> Any:
    # the catalog (inspect, file writing) is imported on first use: 'assay NAME' does not need it
    if name in ("add_to_catalog", "register_local_catalog"):
        from assay.plugins import catalog

        value = getattr(catalog, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'assay.plugins' has no attribute {name!r}")


if TYPE_CHECKING:  # pragma: no cover - for type checkers
    from assay.plugins.catalog import add_to_catalog, register_local_catalog


def get_registry(kind: str) -> Registry:
    """The registry of one kind, e.g. ``get_registry("metric").names()``."""
    return get_plugin_system().registry(kind)


def load(kind: str, spec: str, /, **overrides: Any) -> Any:
    """Create the ``kind`` object registered as ``spec`` (``"name[key=value, ...]"``)."""
    return get_plugin_system().load(kind, spec, **overrides)


def load_metric(spec: str, /, **overrides: Any) -> Any:
    """A metric by registered name: ``load_metric("f1[average=macro]")`` or ``load_metric("f1", average="macro")``.

    A name two plugins registered is ambiguous (:class:`~assay.errors.AmbiguousNameError`);
    qualify it with the distribution: ``load_metric("assay-classic:accuracy")``. The same
    holds for every ``load_<kind>``.
    """
    return load("metric", spec, **overrides)


def load_estimator(spec: str, /, **overrides: Any) -> Any:
    """An uncertainty estimator by registered name."""
    return load("estimator", spec, **overrides)


def load_stat_calculator(spec: str, /, **overrides: Any) -> Any:
    """A statistic calculator by registered name."""
    return load("stat_calculator", spec, **overrides)


def load_ue_metric(spec: str, /, **overrides: Any) -> Any:
    """An uncertainty-estimation metric by registered name: ``load_ue_metric("prr[max_rejection=0.5]")``."""
    return load("ue_metric", spec, **overrides)


def load_sentence_evaluator(spec: str, /, **overrides: Any) -> Any:
    """A sentence evaluator ``(sent, w_vector) -> (correct_num, gold_set_size)`` by registered name."""
    return load("sentence_evaluator", spec, **overrides)


def load_executor(spec: str, /, **overrides: Any) -> Any:
    """An executor by registered name: ``load_executor("processes[workers=4]")``."""
    return load("executor", spec, **overrides)


def load_data_format(spec: str, /, **overrides: Any) -> Any:
    """A data format by registered name: ``load_data_format("jsonl")``."""
    return load("data_format", spec, **overrides)


def load_task(spec: str, /, **overrides: Any) -> Any:
    """A downstream task by registered name."""
    return load("task", spec, **overrides)


def load_aggregation(spec: str, /, **overrides: Any) -> Any:
    """An uncertainty-map aggregation by registered name: ``load_aggregation("patch_max[patch_size=10]")``."""
    return load("aggregation", spec, **overrides)


def load_generation_metric(spec: str, /, **overrides: Any) -> Any:
    """A generation metric (:class:`assay.uncertainty.GenerationMetric`) by registered name:
    ``load_generation_metric("accuracy")``. ``UEManager(gen_metrics=[...])`` resolves names the same way."""
    return load("generation_metric", spec, **overrides)


def load_model_backend(spec: str, /, **overrides: Any) -> Any:
    """A model backend by registered name: ``load_model_backend("transformers", model="path/to/model")``."""
    return load("model_backend", spec, **overrides)
