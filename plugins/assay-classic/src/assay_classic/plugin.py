"""The assay-classic plugin: registers the classic metrics by name.

Loaded through the entry point ``classic = "assay_classic.plugin"`` (group ``assay``).
Importing this module imports no heavy library: scipy, rapidfuzz, sacrebleu and
rouge-score are imported inside the metrics that use them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay import hookimpl

#: registered name -> (module, class, description); classes are imported on first load
METRICS: dict[str, tuple[str, str, str]] = {
    "accuracy": ("classification", "Accuracy", "Share of predictions found among the references"),
    "exact_match": ("text", "ExactMatch", "Share of predicted strings equal to a reference"),
    "precision": ("classification", "Precision", "Precision tp / (tp + fp), binary / micro / macro / weighted"),
    "recall": ("classification", "Recall", "Recall tp / (tp + fn), binary / micro / macro / weighted"),
    "f1": ("classification", "F1", "F-beta (F1) score, binary / micro / macro / weighted, multi-label"),
    "matthews_corrcoef": ("classification", "MatthewsCorrcoef", "Matthews correlation coefficient (multiclass)"),
    "token_overlap": ("text", "TokenOverlap", "Token precision / recall / F1 against the best reference"),
    "metrics.token_overlap": ("text", "UnitxtTokenOverlap",
                              "unitxt's TokenOverlap: f1 / precision / recall, each the best over the references"),
    "char_edit_distance": ("text", "CharEditDistance", "Normalized character Levenshtein distance (rapidfuzz)"),
    "bleu": ("text", "Bleu", "Corpus BLEU with sacreBLEU's tokenizer, from additive segment statistics"),
    "chrf": ("reference_text", "Chrf", "chrF / chrF++ (sacreBLEU), from additive segment statistics"),
    "ter": ("reference_text", "Ter", "Translation Edit Rate (sacreBLEU), from additive segment statistics"),
    "rouge": ("reference_text", "Rouge", "ROUGE-1/2/L/Lsum F-measures (rouge-score), mean over instances"),
    "spearman": ("regression", "Spearman", "Spearman's rank correlation (scipy.stats)"),
    "kendall_tau": ("regression", "KendallTau", "Kendall's tau-b (scipy.stats)"),
    "pearson": ("regression", "Pearson", "Pearson's correlation (scipy.stats)"),
    "mae": ("regression", "MeanAbsoluteError", "Mean absolute error"),
    "mse": ("regression", "MeanSquaredError", "Mean squared error"),
    "rmse": ("regression", "RootMeanSquaredError", "Root mean squared error"),
    "roc_auc": ("ranking", "RocAuc", "Area under the ROC curve of scores against binary labels"),
    "roc_auc_multiclass": ("ranking", "MulticlassRocAuc",
                           "One-vs-rest ROC AUC of class scores, macro / weighted / micro (sklearn, torchmetrics)"),
    "roc_auc_multilabel": ("ranking", "MultilabelRocAuc",
                           "ROC AUC per label of indicator rows, macro / weighted / micro (sklearn, torchmetrics)"),
    # depth estimation (torch-uncertainty 0.13.0's metrics/regression/depth.py)
    "silog": ("depth", "SILog", "Scale-invariant log error of depths (sqrt=true: its root)"),
    "log10": ("depth", "Log10", "Mean absolute error of base-10 log depths"),
    "threshold_accuracy": ("depth", "ThresholdAccuracy", "Share of depths within a factor lmbda**power (delta_k)"),
    "abs_rel": ("depth", "MeanGTRelativeAbsoluteError", "Mean |prediction - truth| / truth (AbsRel)"),
    "sq_rel": ("depth", "MeanGTRelativeSquaredError", "Mean (prediction - truth)^2 / truth (SqRel)"),
    "msle": ("depth", "MeanSquaredLogError", "Mean squared error of natural log depths"),
    "imae": ("depth", "MeanAbsoluteErrorInverse", "Mean absolute error of inverse depths (unit=km by default)"),
    "imse": ("depth", "MeanSquaredErrorInverse", "Mean squared error of inverse depths (unit=km by default)"),
}

#: registered name -> further names of the same class (the peer's class name: torch-uncertainty's)
OTHER_NAMES: dict[str, tuple[str, ...]] = {
    name: (cls,) for name, (module, cls, _) in METRICS.items() if module == "depth"
}


def metric_class(name: str) -> type:
    """The class registered as ``name`` (imports its module)."""
    import importlib

    module, cls, _ = METRICS[name]
    return getattr(importlib.import_module(f"assay_classic.{module}"), cls)


@hookimpl
def assay_register_metrics(register: Callable[..., Any]) -> None:
    """Register every classic metric under its name (see ``docs/classic-metrics.md``)."""
    for name, (_, _, description) in METRICS.items():
        register(name, metric_class(name), description=description, other_names=OTHER_NAMES.get(name, ()))
