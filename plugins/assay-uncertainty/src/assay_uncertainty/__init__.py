"""assay-uncertainty: estimators, UE metrics, calibration and ensemble metrics for assay.

Registered through the entry point ``assay.uncertainty`` (:mod:`assay_uncertainty.plugin`);
load them by name (``assay.load_metric("disagreement[reduction=sum]")``,
``assay.load_ue_metric("prr")``) or import the classes directly::

    from assay_uncertainty import Disagreement
    d = Disagreement(reduction="mean")
    d.update(probs)          # (B, N, C) probabilities
    d.compute()

The classes are imported on first access, so importing the package stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "Disagreement": "assay_uncertainty.ensemble",
    "Entropy": "assay_uncertainty.ensemble",
    "MutualInformation": "assay_uncertainty.ensemble",
    "VariationRatio": "assay_uncertainty.ensemble",
    "ECE": "assay_uncertainty.calibration",
    "MCE": "assay_uncertainty.calibration",
    "RMSCE": "assay_uncertainty.calibration",
    "AdaptiveECE": "assay_uncertainty.calibration",
    "BrierScore": "assay_uncertainty.calibration",
    "NLL": "assay_uncertainty.calibration",
    "CalibrationError": "assay_uncertainty.classwise",
    "ClasswiseCalibrationError": "assay_uncertainty.classwise",
    "SmoothCalibrationError": "assay_uncertainty.smooth_ece",
    "GroupingLoss": "assay_uncertainty.grouping",
    "CoverageRate": "assay_uncertainty.conformal",
    "SetSize": "assay_uncertainty.conformal",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'assay_uncertainty' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
