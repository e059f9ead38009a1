"""assay-interop: other libraries' metrics and machinery as assay metrics.

- torchmetrics and scikit-learn metrics by name:
  ``assay.load_metric("torchmetrics:MulticlassAveragePrecision[num_classes=5]")`` and
  ``assay.load_metric("sklearn:balanced_accuracy_score")`` (see
  :mod:`assay_interop.torch_metrics` and :mod:`assay_interop.sklearn_metrics`);
- Hugging Face ``evaluate``'s common modules by name, computed offline with evaluate's keys and
  scales: ``assay.load_metric("evaluate:bleu")`` (see :mod:`assay_interop.evaluate_modules`);
- :class:`~assay_interop.huggingface.HuggingfaceMetric`: a Hugging Face ``evaluate`` module,
  loaded offline (also importable as ``assay.metrics.HuggingfaceMetric``);
- :class:`~assay_interop.torch_module.AssayTorchMetric`: any assay metric as a
  ``torchmetrics.Metric`` (``forward``, ``MetricCollection``, torchmetrics' distributed sync,
  Lightning's ``self.log``);
- :func:`~assay_interop.distributed.sync`: merge streaming metric states across
  ``torch.distributed`` processes (also importable as ``assay.distributed.sync``).

The libraries are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from assay_interop.sklearn_metrics import SklearnMetric
from assay_interop.torch_metrics import TorchMetric

if TYPE_CHECKING:
    from assay_interop.distributed import sync
    from assay_interop.huggingface import HuggingfaceMetric
    from assay_interop.torch_module import AssayTorchMetric

__all__ = ["AssayTorchMetric", "HuggingfaceMetric", "SklearnMetric", "TorchMetric", "sync"]

# imported on first use: the plugin's entry point (assay_interop.plugin) imports this package
# (AssayTorchMetric derives from torchmetrics.Metric: its module imports torch and torchmetrics)
_LAZY = {"AssayTorchMetric": "assay_interop.torch_module", "HuggingfaceMetric": "assay_interop.huggingface",
         "sync": "assay_interop.distributed"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'assay_interop' has no attribute {name!r}")
    return getattr(importlib.import_module(_LAZY[name]), name)
