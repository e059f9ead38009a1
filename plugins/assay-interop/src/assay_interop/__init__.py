"""assay-interop: torchmetrics and scikit-learn metrics as assay metrics, by name.

``assay.load_metric("torchmetrics:MulticlassAveragePrecision[num_classes=5]")`` and
``assay.load_metric("sklearn:balanced_accuracy_score")``; the libraries are imported on
first use (see :mod:`assay_interop.torch_metrics` and :mod:`assay_interop.sklearn_metrics`).
"""

from __future__ import annotations

from assay_interop.sklearn_metrics import SklearnMetric
from assay_interop.torch_metrics import TorchMetric

__all__ = ["SklearnMetric", "TorchMetric"]
