"""assay-uncertainty: estimators, UE metrics, calibration and ensemble metrics for assay.

Registered through the entry point ``assay.uncertainty`` (:mod:`assay_uncertainty.plugin`).
"""

__version__ = "0.1.0"
