"""unitxt's binary-classification metrics of float scores: ``binary_accuracy``,
``binary_max_accuracy`` and ``binary_max_f1`` (``metrics.accuracy_binary``,
``metrics.max_accuracy_binary``, ``metrics.max_f1_binary``), and ``matthews_correlation``."""

from __future__ import annotations

from typing import Any

from assay.metrics import GlobalMetric, InstanceMetric
from assay.validation import undefined_metric
from assay_unitxt.catalog.classification import BinaryF1, no_nan
from assay_unitxt.catalog.inputs import CheckedInputs

__all__ = ["BinaryAccuracy", "BinaryMaxAccuracy", "BinaryMaxF1", "MatthewsCorrelation"]


class BinaryAccuracy(CheckedInputs, InstanceMetric):
    """unitxt's ``BinaryAccuracy``: 1.0 when ``int(prediction > 0.5) == int(reference)``."""

    input_type = "number"

    examples = [{"predictions": [0.9, 0.2, 0.6, 0.4], "references": [[1.0], [0.0], [0.0], [1.0]]}]

    main_score = "accuracy_binary"
    ci_scores = ["accuracy_binary"]
    prediction_type = float
    single_reference_per_prediction = True

    def compute_instance(self, prediction: Any, references: Any, task_data: Any = None) -> float:
        return float(int(no_nan(self, prediction) > 0.5) == int(references[0]))


class BinaryMaxAccuracy(CheckedInputs, GlobalMetric):
    """unitxt's ``BinaryMaxAccuracy``: the best accuracy of the rule ``prediction >= threshold`` over
    every threshold, ``max_accuracy_binary``, and the smallest threshold reaching it,
    ``best_thr_max_acc`` (the thresholds tried are the distinct predictions in increasing order,
    then 1.0, or the largest prediction + 0.01 when that is not below 1); no instance scores."""

    input_type = "number"

    examples = [{"predictions": [0.9, 0.2, 0.6, 0.4], "references": [[1.0], [0.0], [0.0], [1.0]]}]

    main_score = "max_accuracy_binary"
    per_instance = False
    prediction_type = float
    single_reference_per_prediction = True

    def compute_global(self, predictions: list[Any], references: list[Any], task_data: list[Any]) -> dict[str, float]:
        if not references:
            return {self.main_score: undefined_metric(f"{self.main_score}: no instances; NaN.")}
        predictions = [no_nan(self, p) for p in predictions]
        refs = [int(r[0]) for r in references]
        n = len(predictions)
        values = sorted(set(predictions))
        rightmost = 1.0 if values[-1] < 1 else values[-1] + 0.01
        best_acc, best_thr = -1, values[0]
        for thr in [*values, rightmost]:
            acc = sum((p >= thr) == (r == 1) for p, r in zip(predictions, refs))
            if acc > best_acc:
                best_acc, best_thr = acc, thr
        return {"max_accuracy_binary": best_acc / n, "best_thr_max_acc": float(best_thr)}


class BinaryMaxF1(CheckedInputs, GlobalMetric):
    """unitxt's ``BinaryMaxF1``: for every threshold among the predictions rounded to 3 decimals
    (``prediction >= threshold`` is positive), ``BinaryF1``'s scores; reports the best positive-class
    F1 ``max_f1_binary`` and the best negative-class F1 ``max_f1_binary_neg``, each with its
    threshold (``best_thr_maxf1[_neg]``) and its recall and precision (``recall_at_max_f1[_neg]``,
    ``precision_at_max_f1[_neg]``); ties keep the threshold unitxt meets first (its set order)."""

    input_type = "number"

    examples = [{"predictions": [0.9, 0.2, 0.6, 0.4], "references": [[1.0], [0.0], [0.0], [1.0]]}]

    main_score = "max_f1_binary"
    per_instance = False
    prediction_type = float
    single_reference_per_prediction = True
    ci_scores = ["max_f1_binary", "max_f1_binary_neg"]

    def compute_global(self, predictions: list[Any], references: list[Any], task_data: list[Any]) -> dict[str, float]:
        if not references:
            return {self.main_score: undefined_metric(f"{self.main_score}: no instances; NaN.")}
        predictions = [no_nan(self, p) for p in predictions]
        f1 = BinaryF1()
        best: dict[str, float] = {"f1_binary": -1}
        best_neg: dict[str, float] = {"f1_binary_neg": -1}
        best_thr = best_thr_neg = -1.0
        for thr in {round(p, 3) for p in predictions}:  # unitxt's iteration order: the same set
            res = f1.compute_global([1.0 if p >= thr else 0.0 for p in predictions], references, task_data)
            if res["f1_binary"] > best["f1_binary"]:
                best, best_thr = res, thr
            if res["f1_binary_neg"] > best_neg["f1_binary_neg"]:
                best_neg, best_thr_neg = res, thr
        return {"max_f1_binary": best["f1_binary"], "best_thr_maxf1": float(best_thr),
                "max_f1_binary_neg": best_neg["f1_binary_neg"], "best_thr_maxf1_neg": float(best_thr_neg),
                "recall_at_max_f1": best["recall_binary"], "recall_at_max_f1_neg": best_neg["recall_binary_neg"],
                "precision_at_max_f1": best["precision_binary"],
                "precision_at_max_f1_neg": best_neg["precision_binary_neg"]}


class MatthewsCorrelation(CheckedInputs, GlobalMetric):
    """unitxt's ``MatthewsCorrelation`` (``metrics.matthews_correlation``): scikit-learn's Matthews
    correlation of the label strings (what ``evaluate``'s ``matthews_correlation`` module computes;
    assay computes it offline)."""

    input_type = "label"

    examples = [{"predictions": ["a", "b", "a", "c"], "references": [["a"], ["a"], ["b"], ["c"]]}]

    requirements = {"sklearn": "scikit-learn"}
    main_score = "matthews_correlation"
    prediction_type = str
    single_reference_per_prediction = True

    def compute_global(self, predictions: list[Any], references: list[Any], task_data: list[Any]) -> float:
        from sklearn.metrics import matthews_corrcoef  # type: ignore[import-untyped]  # deferred: heavy optional import

        if not references:
            return undefined_metric("matthews_correlation: no instances; NaN.")
        ids: dict[Any, int] = {}
        y_true = [ids.setdefault(r[0], len(ids)) for r in references]
        y_pred = [ids.setdefault(p, len(ids)) for p in predictions]
        return float(matthews_corrcoef(y_true, y_pred))
