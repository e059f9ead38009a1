"""Small module-level metrics for the metrics tests, and a plugin registering them.

Not a test module: the tests put this folder on ``sys.path`` so that the classes pickle
by reference. Each covers one kind of metric; expected values in the tests are derived
by hand.
"""

from __future__ import annotations

import math

import numpy as np

from assay import hookimpl
from assay.metrics import BulkInstanceMetric, GlobalMetric, InstanceMetric, Metric, divide


class SampleAccuracy(Metric):
    """correct / total, additive and vectorized; a proportion (Wilson applies)."""

    main_score = "accuracy"
    additive = True
    vectorized = True
    n_stats = 2
    examples = [{"predictions": [1, 2, 3, 1], "references": [[1], [2], [1], [3]],
                 "global_target": {"accuracy": 0.5}}]

    def map(self, prediction, references, task_data=None):
        return [float(prediction in references), 1.0]

    def reduce(self, totals):
        return {"accuracy": divide(totals[..., 0], totals[..., 1])}

    def proportions(self, intermediates):
        s = np.asarray(intermediates).sum(axis=0)
        return {"accuracy": (float(s[0]), float(s[1]))}


class SampleF1(Metric):
    """Binary F1 from (tp, fp, fn), not vectorized (reduce runs per row)."""

    main_score = "f1"
    additive = True
    n_stats = 3
    prediction_type = int

    def __init__(self, *, positive: int = 1, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.positive = positive

    def map(self, prediction, references, task_data=None):
        p, r = prediction == self.positive, references[0] == self.positive
        return [float(p and r), float(p and not r), float(r and not p)]

    def reduce(self, totals):
        tp, fp, fn = totals
        precision = divide(tp, tp + fp, 0.0)
        recall = divide(tp, tp + fn, 0.0)
        return {"f1": divide(2 * tp, 2 * tp + fp + fn, 0.0), "precision": precision, "recall": recall}


class SampleExactMatch(InstanceMetric):
    """Exact match and a length ratio per instance (NaN for an empty reference)."""

    main_score = "em"
    score_names = ["em", "len_ratio"]
    prediction_type = str
    ci_scores = ["em", "len_ratio"]

    def compute_instance(self, prediction, references, task_data=None):
        ref = references[0]
        return {"em": float(prediction == ref), "len_ratio": len(prediction) / len(ref) if ref else math.nan}


class SampleAbsError(BulkInstanceMetric):
    """Absolute error per instance, computed for the batch at once."""

    main_score = "abs_error"
    higher_is_better = False
    prediction_type = float

    def compute_bulk(self, predictions, references, task_data):
        return np.abs(np.asarray(predictions, dtype=float) - np.asarray([r[0] for r in references], dtype=float))


class SampleMedianAE(GlobalMetric):
    """Median absolute error of the collection (not additive)."""

    main_score = "median_ae"
    higher_is_better = False
    prediction_type = float

    def compute_global(self, predictions, references, task_data):
        if not predictions:
            return math.nan
        return float(np.median(np.abs(np.asarray(predictions) - np.asarray([r[0] for r in references]))))


class SampleAUC(Metric):
    """Probability that a random positive outscores a random negative (ties 1/2); not additive.

    ``map_batch`` returns an ``(n, 2)`` array of (score, label).
    """

    main_score = "auc"
    per_instance = False
    prediction_type = float

    def map_batch(self, predictions, references, task_data):
        return np.column_stack([np.asarray(predictions, dtype=float), [float(r[0]) for r in references]])

    def reduce(self, rows):
        rows = np.asarray(rows).reshape(-1, 2)
        pos, neg = rows[rows[:, 1] == 1, 0], rows[rows[:, 1] == 0, 0]
        if len(pos) == 0 or len(neg) == 0:
            return {"auc": math.nan}
        wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
        return {"auc": wins / (len(pos) * len(neg))}


def lowercase(instance):
    return {**instance, "prediction": instance["prediction"].lower()}


@hookimpl
def assay_register_metrics(register):
    register("sample_accuracy", SampleAccuracy, description="correct / total")
    register("sample_f1", SampleF1, description="binary F1",
             examples=[{"predictions": [1, 0, 1, 1, 0], "references": [[1], [1], [0], [1], [0]],
                        "global_target": {"f1": 4 / 6, "precision": 2 / 3, "recall": 2 / 3}},
                       {"predictions": [0, 1], "references": [[0], [0]], "overrides": {"positive": 0},
                        "global_target": {"f1": 2 / 3}}])
    register("sample_em", SampleExactMatch, description="exact match",
             examples=[{"predictions": ["a", "bb", "c"], "references": [["a"], ["b"], [""]],
                        "global_target": {"em": 1 / 3, "len_ratio": 1.5}}])
    register("sample_abs_error", SampleAbsError, description="absolute error",
             examples=[{"predictions": [1.0, 2.5, 0.0], "references": [[1.0], [2.0], [3.0]],
                        "global_target": {"abs_error": 3.5 / 3}}])
    register("sample_median_ae", SampleMedianAE, description="median absolute error",
             examples=[{"predictions": [1.0, 2.5, 0.0], "references": [[1.0], [2.0], [3.0]],
                        "global_target": {"median_ae": 0.5}}])
    register("sample_auc", SampleAUC, description="ROC AUC by pair counting",
             examples=[{"predictions": [0.9, 0.4, 0.4, 0.1], "references": [[1], [1], [0], [0]],
                        "global_target": {"auc": 3.5 / 4}}])
