"""The assay-interop plugin: the ``torchmetrics`` and ``sklearn`` metric namespaces.

Loaded through the entry point ``interop = "assay_interop.plugin"`` (group ``assay``).
Importing it imports neither torch, torchmetrics nor scikit-learn: the resolvers import
them when a namespaced metric is loaded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay import hookimpl
from assay_interop import sklearn_metrics, torch_metrics


@hookimpl
def assay_register_metric_namespaces(register: Callable[..., Any]) -> None:
    """Register ``torchmetrics:<ClassName>`` and ``sklearn:<function_name>``."""
    register("torchmetrics", torch_metrics.resolve,
             description="Any torchmetrics Metric class by name: torchmetrics:MulticlassAccuracy[num_classes=3]",
             install="pip install torchmetrics")
    register("sklearn", sklearn_metrics.resolve,
             description="Any scikit-learn scoring function by name: sklearn:f1_score[average=macro]",
             install="pip install scikit-learn")
