"""unitxt's ``WeightedWinRateCorrelation`` (``metrics.weighted_win_rate_correlation``).

Each instance is a battle between ``task_data["model_a"]`` and ``task_data["model_b"]``; the
prediction and the (integer) reference say who won and by how much: a positive value ``v`` is
``v`` wins for model a, a negative one ``-v`` wins for model b, 0 one win each. Summed over
battles, a model's win rate is its wins over the wins of all its battles (both sides). The scores
are scipy's Pearson (``pearson_corr``) and Spearman (``spearman_corr``, main) correlations of the
models' predicted and reference win rates. No instance scores (unitxt's are None).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any

from assay.errors import InvalidParameterError
from assay.metrics import GlobalMetric
from assay.validation import undefined_metric
from assay_unitxt.catalog.inputs import CheckedInputs

__all__ = ["WeightedWinRateCorrelation"]


def _wins(value: float) -> tuple[float, float]:
    if value > 0:
        return value, 0
    if value < 0:
        return 0, -value
    return 1, 1


def _win_rates(battles: list[tuple[str, str, float]]) -> dict[str, float]:
    pairs: dict[tuple[str, str], list[float]] = {}
    for a, b, value in battles:
        wa, wb = _wins(value)
        if b < a:  # unitxt sorts each pair's models
            a, b, wa, wb = b, a, wb, wa
        row = pairs.setdefault((a, b), [0.0, 0.0])
        row[0] += wa
        row[1] += wb
    wins: dict[str, float] = {}
    total: dict[str, float] = {}
    for (a, b), (wa, wb) in pairs.items():
        for model, won in ((a, wa), (b, wb)):
            wins[model] = wins.get(model, 0.0) + won
            total[model] = total.get(model, 0.0) + wa + wb
    return {m: (wins[m] / total[m] if total[m] else math.nan) for m in sorted(wins)}


class WeightedWinRateCorrelation(CheckedInputs, GlobalMetric):
    """Correlation of the models' win rates by the predictions with those by the references."""

    input_type = "number"
    examples = [{"predictions": [2.0, -1.0, 0.0, 1.0], "references": [[1], [-2], [0], [3]],
                 "task_data": [{"model_a": "x", "model_b": "y"}, {"model_a": "y", "model_b": "z"},
                               {"model_a": "x", "model_b": "z"}, {"model_a": "w", "model_b": "x"}]}]

    main_score = "spearman_corr"
    per_instance = False
    ci_scores = ["spearman_corr"]
    requirements = {"scipy": "scipy"}

    @staticmethod
    def _models(task_data: Any) -> tuple[str, str]:
        if not isinstance(task_data, Mapping) or not all(isinstance(task_data.get(k), str)
                                                         for k in ("model_a", "model_b")):
            raise InvalidParameterError("metrics.weighted_win_rate_correlation needs task_data with the str fields "
                                        f"'model_a' and 'model_b' per instance; got {task_data!r:.80}.")
        return task_data["model_a"], task_data["model_b"]

    def compute_global(self, predictions: list[Any], references: list[Any], task_data: list[Any]) -> dict[str, float]:
        from scipy.stats import pearsonr, spearmanr  # deferred: heavy optional import

        models = [self._models(td) for td in task_data]
        pred = _win_rates([(a, b, float(p)) for (a, b), p in zip(models, predictions)])
        ref = _win_rates([(a, b, int(r[0])) for (a, b), r in zip(models, references)])
        x, y = [pred[m] for m in pred], [ref[m] for m in pred]
        if len(x) < 2:
            nan = undefined_metric("metrics.weighted_win_rate_correlation: fewer than two models; NaN.")
            return {"pearson_corr": nan, "spearman_corr": nan}
        with warnings.catch_warnings():  # a constant input: NaN, as unitxt
            warnings.simplefilter("ignore")
            return {"pearson_corr": float(pearsonr(x, y)[0]), "spearman_corr": float(spearmanr(x, y)[0])}
