"""The assay-interop plugin: the ``torchmetrics``, ``sklearn`` and ``evaluate`` metric namespaces.

Loaded through the entry point ``interop = "assay_interop.plugin"`` (group ``assay``).
Importing it imports none of torch, torchmetrics, scikit-learn, sacrebleu, rouge-score, jiwer
or NLTK: the resolvers and metrics import them when a namespaced metric is loaded or computed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay import hookimpl
from assay_interop import evaluate_modules, sklearn_metrics, torch_metrics


@hookimpl
def assay_register_metric_namespaces(register: Callable[..., Any]) -> None:
    """Register ``torchmetrics:<ClassName>``, ``sklearn:<function_name>`` and ``evaluate:<module>``."""
    register("torchmetrics", torch_metrics.resolve,
             description="Any torchmetrics Metric class by name: torchmetrics:MulticlassAccuracy[num_classes=3]",
             install="pip install torchmetrics")
    register("sklearn", sklearn_metrics.resolve,
             description="Any scikit-learn scoring function by name: sklearn:f1_score[average=macro]",
             install="pip install scikit-learn")
    register("evaluate", evaluate_modules.resolve,
             description="Hugging Face evaluate's common modules, computed offline with evaluate's keys and scales: "
                         "evaluate:bleu, evaluate:rouge[use_stemmer=true], evaluate:glue[config_name=mrpc]",
             install="pip install scikit-learn scipy sacrebleu rouge-score jiwer nltk")
