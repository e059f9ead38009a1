"""Uncertainty estimation over stored model outputs (LM-Polygraph's manager, torch-uncertainty's metrics).

Orientation contract: estimators return uncertainty (higher = more uncertain), quality is
higher = better, failure labels are 1 = failure. The plugin ``assay-uncertainty``
registers the estimators, stat calculators, UE metrics, calibration and ensemble metrics.

>>> from assay.uncertainty import UEManager                      # doctest: +SKIP
>>> man = UEManager("outputs.jsonl", estimators=["msp"], gen_metrics=["accuracy"],
...                 ue_metrics=["prr", "roc_auc"])               # doctest: +SKIP
>>> man()                                                        # doctest: +SKIP
"""

from __future__ import annotations

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
from assay.uncertainty.inputs import UEDataError, load_ue_data, records_to_columns
from assay.uncertainty.manager import UEManager

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
