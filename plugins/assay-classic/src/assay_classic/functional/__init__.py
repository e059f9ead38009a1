"""The numeric kernels of assay-classic as plain functions: sufficient statistics, then value.

The registered metrics wrap these; they are usable on their own::

    >>> from assay_classic.functional import roc_auc
    >>> roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
"""

from __future__ import annotations

from assay_classic.functional._common import UndefinedMetricWarning, check_zero_division
from assay_classic.functional.bleu import bleu_from_stats, bleu_scorer, bleu_segment_stats, corpus_bleu
from assay_classic.functional.classification import (
    label_counts,
    matthews_from_counts,
    multilabel_counts,
    precision_recall_fscore,
    sorted_labels,
)
from assay_classic.functional.correlation import correlation
from assay_classic.functional.ranking import binary_labels, roc_auc, roc_auc_from_split
from assay_classic.functional.regression import error_stats, errors_from_stats, mae, mse, rmse
from assay_classic.functional.text import char_edit_distance, exact_match, normalize_answer, token_overlap

__all__ = [
    "UndefinedMetricWarning",
    "binary_labels",
    "bleu_from_stats",
    "bleu_scorer",
    "bleu_segment_stats",
    "char_edit_distance",
    "check_zero_division",
    "corpus_bleu",
    "correlation",
    "error_stats",
    "errors_from_stats",
    "exact_match",
    "label_counts",
    "mae",
    "matthews_from_counts",
    "mse",
    "multilabel_counts",
    "normalize_answer",
    "precision_recall_fscore",
    "rmse",
    "roc_auc",
    "roc_auc_from_split",
    "sorted_labels",
    "token_overlap",
]
