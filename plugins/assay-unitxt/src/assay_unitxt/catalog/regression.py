"""unitxt's numeric metrics: ``kendall_tau_metric`` (``metrics.kendalltau_b``), ``spearmanr``,
``pearsonr``, ``mean_squared_error`` and ``root_mean_squared_error``."""

from __future__ import annotations

import math
from typing import Any

from assay.metrics import GlobalMetric, Metric
from assay.validation import check_number, undefined_metric
from assay_unitxt.catalog.inputs import CheckedInputs


def _pair(metric: Metric, prediction: Any, references: Any) -> tuple[float, float]:
    """The prediction and the first reference as finite numbers (unitxt skips NaN; assay rejects it)."""
    owner = metric.name or type(metric).__name__
    return (check_number(prediction, "prediction", owner=owner), check_number(references[0], "reference", owner=owner))

__all__ = ["Correlation", "KendallTau", "MeanSquaredError"]


class KendallTau(CheckedInputs, GlobalMetric):
    """unitxt's ``KendallTauMetric``: ``kendalltau_b`` and ``kendalltau_b_p_val`` from
    ``scipy.stats.kendalltau(references, predictions, variant="b")``; no instance scores."""

    input_type = "number"

    examples = [{"predictions": [1.0, 2.0, 3.5, 4.0, 2.5], "references": [[1.0], [3.0], [2.0], [4.0], [2.0]]}]

    requirements = {"scipy": "scipy"}
    main_score = "kendalltau_b"
    prediction_type = float
    per_instance = False

    def compute_global(self, predictions: list[Any], references: list[Any], task_data: list[Any]) -> dict[str, float]:
        from scipy.stats import kendalltau  # deferred: heavy optional import

        if len(references) < 2:
            return {"kendalltau_b": undefined_metric("kendalltau_b: fewer than two instances; NaN.")}
        pairs = [_pair(self, p, r) for p, r in zip(predictions, references)]
        res = kendalltau([r for _, r in pairs], [p for p, _ in pairs], variant="b")
        value = float(res.correlation)
        if math.isnan(value):
            value = undefined_metric("kendalltau_b: undefined for a constant input; NaN.")
        return {"kendalltau_b": value, "kendalltau_b_p_val": float(res.pvalue)}


class Correlation(CheckedInputs, Metric):
    """unitxt's ``Spearmanr`` / ``Pearsonr`` (``metrics.spearman``, ``metrics.pearson``): scipy's
    coefficient of predictions against the first references, and its ``<name>_p_value``; the
    instance scores are NaN (``reduce_one`` in unitxt). A NaN or infinite value is an error; a
    constant input gives NaN with an ``UndefinedMetricWarning``."""

    input_type = "number"

    examples = [{"predictions": [1.0, 2.0, 3.5, 4.0, 2.5], "references": [[1.0], [3.0], [2.0], [4.0], [2.0]]}]

    requirements = {"scipy": "scipy"}
    prediction_type = float

    def __init__(self, *, kind: str, n_resamples: int | None = None, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.kind = kind
        self.main_score = {"spearman": "spearmanr", "pearson": "pearsonr"}[kind]
        self.ci_scores = [self.main_score]
        if n_resamples is not None:
            self.n_resamples = n_resamples

    def map(self, prediction: Any, references: Any, task_data: Any = None) -> tuple[float, float]:
        return _pair(self, prediction, references)

    def reduce(self, intermediates: Any) -> dict[str, float]:
        import warnings

        from scipy import stats  # deferred: heavy optional import

        if len(intermediates) <= 1:  # unitxt's instance score (reduce_one): NaN
            return {self.main_score: math.nan}
        a = [x for x, _ in intermediates]
        b = [y for _, y in intermediates]
        with warnings.catch_warnings():  # a constant input: NaN, as unitxt; assay's warning below, not scipy's
            warnings.simplefilter("ignore")
            res = stats.spearmanr(a, b) if self.kind == "spearman" else stats.pearsonr(a, b)
        value, p_value = float(res[0]), float(res[1])
        if math.isnan(value):
            value = undefined_metric(f"{self.main_score}: undefined for a constant input; NaN.")
        return {self.main_score: value, f"{self.main_score}_p_value": p_value}


class MeanSquaredError(CheckedInputs, Metric):
    """unitxt's ``MeanSquaredError`` / ``RootMeanSquaredError``: the mean of
    ``(reference - prediction) ** 2`` (its square root for ``root=True``). unitxt leaves NaN
    values out of the mean; assay rejects a NaN or infinite value, naming it."""

    input_type = "number"

    examples = [{"predictions": [1.0, 2.0, 4.0], "references": [[1.0], [3.0], [2.0]]}]

    prediction_type = float
    single_reference_per_prediction = True
    higher_is_better = False

    def __init__(self, *, root: bool = False, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.root = bool(root)
        self.main_score = "root_mean_squared_error" if root else "mean_squared_error"
        self.ci_scores = [self.main_score]

    def map(self, prediction: Any, references: Any, task_data: Any = None) -> float:
        p, r = _pair(self, prediction, references)
        return (r - p) ** 2

    def reduce(self, intermediates: Any) -> dict[str, float]:
        vals = list(intermediates)
        mean = sum(vals) / len(vals) if vals else undefined_metric(f"{self.main_score}: no instances; NaN.")
        return {self.main_score: mean ** 0.5 if self.root else mean}
