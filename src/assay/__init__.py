"""assay: a plugin-based evaluation framework.

One small core owns the accounting of an evaluation (``correct_num`` out of
``gold_set_size``, or any additive tally) and runs it sequentially or sharded in
parallel; metrics, estimators, evaluators, executors and data formats arrive as plugins.

Every public name is re-exported here. Names are imported on first access, so
``import assay`` stays cheap and imports no plugin.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # core
    "EvaluatorBase": "assay.core.evaluator",
    "EvaluationResult": "assay.core.result",
    "Tally": "assay.core.tally",
    "DataPool": "assay.core.pool",
    "logger": "assay.core.log",
    "DataFormat": "assay.core.formats",
    "DataFormatError": "assay.core.formats",
    # executors
    "Executor": "assay.executors.base",
    # plugins
    "hookimpl": "assay.plugins",
    "PluginSystem": "assay.plugins",
    "get_plugin_system": "assay.plugins",
    "get_registry": "assay.plugins",
    "load_metric": "assay.plugins",
    "add_to_catalog": "assay.plugins",
    "register_local_catalog": "assay.plugins",
    "load_estimator": "assay.plugins",
    "load_stat_calculator": "assay.plugins",
    "load_ue_metric": "assay.plugins",
    "load_sentence_evaluator": "assay.plugins",
    "load_executor": "assay.plugins",
    "load_data_format": "assay.plugins",
    "load_task": "assay.plugins",
    "load_aggregation": "assay.plugins",
    "load_generation_metric": "assay.plugins",
    "load_model_backend": "assay.plugins",
    # errors
    "AmbiguousNameError": "assay.errors",
    "AssayError": "assay.errors",
    "ConfigError": "assay.errors",
    "DuplicateRegistrationError": "assay.errors",
    "EvaluationError": "assay.errors",
    "EvaluationTimeoutError": "assay.errors",
    "InvalidParameterError": "assay.errors",
    "MissingDependencyError": "assay.errors",
    "PluginLoadError": "assay.errors",
    "SaveFormatError": "assay.errors",
    "SignatureMismatchError": "assay.errors",
    "UndefinedMetricWarning": "assay.errors",
    "UnknownNameError": "assay.errors",
    "WorkerDiedError": "assay.errors",
    # metrics (issue: metrics)
    "evaluate": "assay.metrics.api",
    "compare": "assay.metrics.api",
    # provenance (issue 16)
    "Signature": "assay.provenance",
    # uncertainty and downstream tasks
    "UEManager": "assay.uncertainty",
    "run_experiments": "assay.downstream",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'assay' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    # Every name of _EXPORTS, imported from the module _EXPORTS names (tests/test_init.py checks both).
    from assay.core.evaluator import EvaluatorBase
    from assay.core.formats import DataFormat, DataFormatError
    from assay.core.log import logger
    from assay.core.pool import DataPool
    from assay.core.result import EvaluationResult
    from assay.core.tally import Tally
    from assay.downstream import run_experiments
    from assay.errors import (
        AmbiguousNameError,
        AssayError,
        ConfigError,
        DuplicateRegistrationError,
        EvaluationError,
        EvaluationTimeoutError,
        InvalidParameterError,
        MissingDependencyError,
        PluginLoadError,
        SaveFormatError,
        SignatureMismatchError,
        UndefinedMetricWarning,
        UnknownNameError,
        WorkerDiedError,
    )
    from assay.executors.base import Executor
    from assay.metrics.api import compare, evaluate
    from assay.plugins import (
        PluginSystem,
        add_to_catalog,
        get_plugin_system,
        get_registry,
        hookimpl,
        load_aggregation,
        load_data_format,
        load_estimator,
        load_executor,
        load_generation_metric,
        load_metric,
        load_model_backend,
        load_sentence_evaluator,
        load_stat_calculator,
        load_task,
        load_ue_metric,
        register_local_catalog,
    )
    from assay.provenance import Signature
    from assay.uncertainty import UEManager
