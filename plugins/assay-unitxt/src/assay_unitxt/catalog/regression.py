"""unitxt's numeric metrics: ``kendall_tau_metric`` (``metrics.kendalltau_b``), ``spearmanr``,
``pearsonr``, ``mean_squared_error`` and ``root_mean_squared_error``."""

from __future__ import annotations

import math
from typing import Any

from assay.metrics import GlobalMetric, Metric

__all__ = ["Correlation", "KendallTau", "MeanSquaredError"]


class KendallTau(GlobalMetric):
    """unitxt's ``KendallTauMetric``: ``kendalltau_b`` and ``kendalltau_b_p_val`` from
    ``scipy.stats.kendalltau(references, predictions, variant="b")``; no instance scores."""

    main_score = "kendalltau_b"
    per_instance = False

    def compute_global(self, predictions: list[Any], references: list[Any], task_data: list[Any]) -> dict[str, float]:
        from scipy.stats import kendalltau  # deferred: heavy optional import

        refs = [r[0] for r in references] if isinstance(references[0], list) else list(references)
        res = kendalltau(refs, list(predictions), variant="b")
        return {"kendalltau_b": float(res.correlation), "kendalltau_b_p_val": float(res.pvalue)}


class Correlation(Metric):
    """unitxt's ``Spearmanr`` / ``Pearsonr`` (``metrics.spearman``, ``metrics.pearson``): scipy's
    coefficient of predictions against the first references, and its ``<name>_p_value``; the
    instance scores are NaN (``reduce_one`` in unitxt)."""

    prediction_type = float

    def __init__(self, *, kind: str, n_resamples: int | None = None, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.kind = kind
        self.main_score = {"spearman": "spearmanr", "pearson": "pearsonr"}[kind]
        self.ci_scores = [self.main_score]
        if n_resamples is not None:
            self.n_resamples = n_resamples

    def map(self, prediction: Any, references: Any, task_data: Any = None) -> tuple[float, float]:
        return (prediction, references[0])

    def reduce(self, intermediates: Any) -> dict[str, float]:
        import warnings

        from scipy import stats  # deferred: heavy optional import

        if len(intermediates) <= 1:
            return {self.main_score: math.nan}
        a = [x for x, _ in intermediates]
        b = [y for _, y in intermediates]
        with warnings.catch_warnings():  # a constant input: NaN, as unitxt (scipy warns)
            warnings.simplefilter("ignore")
            res = stats.spearmanr(a, b) if self.kind == "spearman" else stats.pearsonr(a, b)
        return {self.main_score: float(res[0]), f"{self.main_score}_p_value": float(res[1])}


class MeanSquaredError(Metric):
    """unitxt's ``MeanSquaredError`` / ``RootMeanSquaredError``: the NaN-ignoring mean of
    ``(reference - prediction) ** 2`` (its square root for ``root=True``)."""

    prediction_type = float
    single_reference_per_prediction = True
    higher_is_better = False

    def __init__(self, *, root: bool = False, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.root = bool(root)
        self.main_score = "root_mean_squared_error" if root else "mean_squared_error"
        self.ci_scores = [self.main_score]

    def map(self, prediction: Any, references: Any, task_data: Any = None) -> float:
        return float((references[0] - prediction) ** 2)

    def reduce(self, intermediates: Any) -> dict[str, float]:
        vals = [v for v in intermediates if not math.isnan(v)]
        mean = sum(vals) / len(vals) if vals else math.nan
        return {self.main_score: mean ** 0.5 if self.root else mean}
