"""unitxt's answer checks of single benchmarks: ``relaxed_correctness`` (ChartQA), ``websrc_squad_f1``
(WebSRC) and ``prediction_length``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from assay.errors import InvalidParameterError
from assay.metrics import GlobalMetric, InstanceMetric
from assay.validation import undefined_metric
from assay_unitxt.catalog.inputs import CheckedInputs

__all__ = ["PredictionLength", "RelaxedCorrectness", "WebsrcSquadF1"]


def _field(task_data: Any, key: str, owner: str) -> Any:
    if not isinstance(task_data, Mapping) or key not in task_data:
        raise InvalidParameterError(f"{owner} needs task_data with a {key!r} per instance; got {task_data!r:.80}.")
    return task_data[key]


class PredictionLength(CheckedInputs, InstanceMetric):
    """unitxt's ``PredictionLength`` (``metrics.prediction_length``): the prediction's length in characters,
    mean over instances."""

    input_type = "text"
    examples = [{"predictions": ["abc", "", "hello"], "references": [["x"], ["y"], ["z"]],
                 "global_target": {"prediction_length": 8 / 3}}]

    main_score = "prediction_length"
    ci_scores: list[str] = []  # unitxt's PredictionLength declares no ci_scores: no interval
    prediction_type = str
    single_reference_per_prediction = True

    def compute_instance(self, prediction: Any, references: Any, task_data: Any = None) -> float:
        return float(len(prediction))


class RelaxedCorrectness(CheckedInputs, GlobalMetric):
    """unitxt's ``RelaxedCorrectness`` (``metrics.relaxed_correctness``, ChartQA's relaxed accuracy).

    A prediction is correct when it is within 5% of the first reference, both read as numbers
    (``"12%"`` reads as 0.12; a reference of 0 is compared as text), and otherwise when the texts
    are equal ignoring case. ``relaxed_overall`` (main) is the mean over instances;
    ``relaxed_human_split`` / ``relaxed_augmented_split`` the means over the instances whose
    ``task_data["type"]`` is ``"human_test"`` / anything else (a split with no instance is not
    reported). No intervals (the catalog's ``n_resamples`` is None).
    """

    input_type = "text"
    examples = [{"predictions": ["10.4", "cat", "5%"], "references": [["10"], ["Cat"], ["0.06"]],
                 "task_data": [{"type": "human_test"}, {"type": "augmented_test"}, {"type": "human_test"}],
                 "global_target": {"relaxed_overall": 2 / 3}}]

    main_score = "relaxed_overall"
    prediction_type = str

    @staticmethod
    def _to_float(text: str) -> float | None:
        try:
            return float(text.rstrip("%")) / 100.0 if text.endswith("%") else float(text)
        except ValueError:
            return None

    @classmethod
    def correct(cls, prediction: str, target: str, max_relative_change: float = 0.05) -> bool:
        p, t = cls._to_float(prediction), cls._to_float(target)
        if p is not None and t:
            return abs(p - t) / abs(t) <= max_relative_change
        return prediction.lower() == target.lower()

    def compute_global(self, predictions: list[Any], references: list[Any], task_data: list[Any]) -> dict[str, float]:
        splits: dict[str, list[float]] = {"relaxed_overall": [], "relaxed_human_split": [],
                                          "relaxed_augmented_split": []}
        for pred, refs, td in zip(predictions, references, task_data):
            kind = _field(td, "type", "metrics.relaxed_correctness")
            score = 1.0 if self.correct(pred, refs[0]) else 0.0
            splits["relaxed_overall"].append(score)
            splits["relaxed_human_split" if kind == "human_test" else "relaxed_augmented_split"].append(score)
        if not predictions:
            return {"relaxed_overall": undefined_metric("metrics.relaxed_correctness: no instances; NaN.")}
        return {k: sum(v) / len(v) for k, v in splits.items() if v}


class WebsrcSquadF1(CheckedInputs, GlobalMetric):
    """unitxt's ``WebsrcSquadF1`` (``metrics.websrc_squad_f1``): the token-set F1 of each prediction against its
    first reference (lower-cased, stripped, words and single punctuation marks as tokens; 0 when either is
    empty), averaged over instances and rounded to 3 decimals as unitxt reports it. unitxt groups the
    instances by ``task_data["domain"]`` and weighs each domain's mean by its size: the same mean. No
    intervals (the catalog's ``n_resamples`` is None)."""

    input_type = "text"
    examples = [{"predictions": ["the red car", "blue"], "references": [["a red car"], ["green"]],
                 "task_data": [{"domain": "auto"}, {"domain": "auto"}]}]

    main_score = "websrc_squad_f1"
    prediction_type = str

    @staticmethod
    def _tokens(text: str) -> set[str]:
        return set(re.findall(r"\w+|[^\w\s]", text.lower().strip()))

    @classmethod
    def f1(cls, reference: str, prediction: str) -> float:
        ref, pred = cls._tokens(reference), cls._tokens(prediction)
        if not ref or not pred:
            return 0.0
        same = len(ref & pred)
        prec, rec = same / len(pred), same / len(ref)
        return 2 * prec * rec / (prec + rec) if prec + rec > 0 else 0.0

    def compute_global(self, predictions: list[Any], references: list[Any], task_data: list[Any]) -> float:
        for td in task_data:
            _field(td, "domain", "metrics.websrc_squad_f1")
        scores = [self.f1(refs[0], pred) for pred, refs in zip(predictions, references)]
        if not scores:
            return undefined_metric("metrics.websrc_squad_f1: no instances; NaN.")
        return round(sum(scores) / len(scores), 3)
