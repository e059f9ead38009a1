"""Uncertainty estimation contracts: the bases plugins implement, and the statistics graph.

Orientation contract: estimators return uncertainty (higher = more uncertain), quality is
higher = better, failure labels are 1 = failure. The core keeps only the contracts
(:class:`Estimator`, :class:`StatCalculator`, :class:`GenerationMetric`, :class:`UEMetric`,
``LEVELS`` and the checks, the statistics dependency graph) and the live view of the
registered generation metrics (``GENERATION_METRICS``). The plugin ``assay-uncertainty``
registers the estimators, stat calculators, UE metrics, calibration and ensemble metrics, and
owns LM-Polygraph's manager: ``UEManager`` with its persistence, tables, plots and
comparisons, and the ``assay ue`` command (:mod:`assay_uncertainty.manager`).

``UEManager``, ``UEDataError``, ``load_ue_data`` and ``records_to_columns`` still import
from here: they are looked up in ``assay_uncertainty.manager`` on first access, and raise
:class:`~assay.errors.MissingDependencyError` (``pip install assay-uncertainty``) when that
plugin is not installed.

>>> from assay.uncertainty import UEManager                      # doctest: +SKIP
>>> man = UEManager("outputs.jsonl", estimators=["msp"], gen_metrics=["accuracy"],
...                 ue_metrics=["prr", "roc_auc"])               # doctest: +SKIP
>>> man()                                                        # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay._relocated import alias_module
from assay.uncertainty.base import (
                                    LEVELS,
                                    Estimator,
                                    GenerationMetric,
                                    StatCalculator,
                                    UEMetric,
                                    check_level,
                                    check_ue_inputs,
)
from assay.uncertainty.gen_metrics import GENERATION_METRICS
from assay.uncertainty.graph import StatDependencyError, plan_calculators

#: names that live in the plugin assay-uncertainty: name -> its module there (a string, so the core
#: imports no plugin; the import-linter contract "core-imports-no-plugin" checks that)
MOVED: dict[str, str] = {
    "UEManager": "assay_uncertainty.manager",
    "UEDataError": "assay_uncertainty.manager",
    "load_ue_data": "assay_uncertainty.manager",
    "records_to_columns": "assay_uncertainty.manager",
}

__all__ = [
    "GENERATION_METRICS",
    "LEVELS",
    "Estimator",
    "GenerationMetric",
    "StatCalculator",
    "StatDependencyError",
    "UEDataError",
    "UEManager",
    "UEMetric",
    "check_level",
    "check_ue_inputs",
    "load_ue_data",
    "plan_calculators",
    "records_to_columns",
]


if TYPE_CHECKING:  # pragma: no cover - the moved names, for type checkers (read through __getattr__ at run time)
    UEManager: Any
    UEDataError: Any
    load_ue_data: Any
    records_to_columns: Any

__getattr__, __dir__ = alias_module(__name__, MOVED, "assay-uncertainty", own=globals())
