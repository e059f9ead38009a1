"""Regression metrics: MAE, MSE, RMSE (additive) and Pearson, Spearman, Kendall (scipy.stats).

Predictions and references are real numbers (a reference may be ``x`` or ``[x]``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from assay.deferred import np
from assay.errors import InvalidParameterError
from assay.functional import divide
from assay.metrics import Metric
from assay.validation import check_array, check_choice, check_same_length
from assay_classic._inputs import one_reference_each
from assay_classic.functional.correlation import KENDALL_VARIANTS, correlation
from assay_classic.functional.regression import error_stats

__all__ = ["KendallTau", "MeanAbsoluteError", "MeanSquaredError", "Pearson", "RootMeanSquaredError", "Spearman"]


def _pairs(metric: Metric, predictions: Sequence[Any], references: Sequence[Any] | None) -> np.ndarray:
    """``(n, 2)`` float array of ``(prediction, reference)``, checked by :mod:`assay.validation`.

    Real numbers only (no strings, objects, complex numbers); NaN or infinity is an error
    naming the instance (remove or impute missing values first).
    """
    name = metric.main_score
    refs = one_reference_each(references, metric=name)
    p = check_array(predictions, "predictions", owner=name, ndim=1, shape="(n,) (one real number per instance)",
                    finite=False, what="numbers")
    r = check_array(refs, "references", owner=name, ndim=1, shape="(n,) (one real number per instance)",
                    finite=False, what="numbers")
    check_same_length(name, predictions=p, references=r)
    arr = np.column_stack([p, r])
    if not np.isfinite(arr).all():
        i = int(np.flatnonzero(~np.isfinite(arr).all(axis=1))[0])
        what = "NaN" if np.isnan(arr[i]).any() else "infinity"
        raise InvalidParameterError(
            f"{name} got {what} at instance {i} (prediction {arr[i, 0]}, reference {arr[i, 1]}); "
            "expected finite numbers: remove or impute missing values first."
        )
    return arr.reshape(-1, 2)


class _ErrorMetric(Metric):
    """Additive statistics ``(|e|, e^2, 1)`` with ``e = prediction - reference``."""

    prediction_type = float
    higher_is_better = False
    additive = True
    vectorized = True
    n_stats = 3

    def map_batch(self, predictions: Sequence[Any], references: Sequence[Any] | None, task_data: Any) -> np.ndarray:
        pairs = _pairs(self, predictions, references)
        return error_stats(pairs[:, 1], pairs[:, 0])

    def _parts(self, totals: Any) -> tuple[Any, Any, Any]:
        t = np.asarray(totals, dtype=np.float64)
        n = t[..., 2]
        mae, mse = divide(t[..., 0], n), divide(t[..., 1], n)  # no instance (n = 0): NaN
        return mae, mse, np.sqrt(mse)


class MeanAbsoluteError(_ErrorMetric):
    r"""Mean absolute error, :math:`\frac1n \sum_i |\hat y_i - y_i|` (``sklearn.metrics.mean_absolute_error``).

    Examples
    --------
    >>> MeanAbsoluteError().update([2.5, 0.0, 2, 8], [3, -0.5, 2, 7]).compute_scores()["mae"]
    0.5

    References: scikit-learn ``mean_absolute_error``; Willmott & Matsuura (2005).
    """

    main_score = "mae"
    examples = [{"predictions": [2.5, 0.0, 2.0, 8.0], "references": [[3.0], [-0.5], [2.0], [7.0]],
                 "global_target": {"mae": 0.5}}]

    def reduce(self, totals: Any) -> dict[str, Any]:
        return {"mae": self._parts(totals)[0]}


class MeanSquaredError(_ErrorMetric):
    r"""Mean squared error, :math:`\frac1n \sum_i (\hat y_i - y_i)^2` (``sklearn.metrics.mean_squared_error``).

    References: scikit-learn ``mean_squared_error``.
    """

    main_score = "mse"
    examples = [{"predictions": [2.5, 0.0, 2.0, 8.0], "references": [[3.0], [-0.5], [2.0], [7.0]],
                 "global_target": {"mse": 0.375}}]

    def reduce(self, totals: Any) -> dict[str, Any]:
        return {"mse": self._parts(totals)[1]}


class RootMeanSquaredError(_ErrorMetric):
    r"""Root mean squared error, :math:`\sqrt{MSE}` (``sklearn.metrics.root_mean_squared_error``).

    The instance score is the absolute error (the root of one squared error).

    References: scikit-learn ``root_mean_squared_error``.
    """

    main_score = "rmse"
    examples = [{"predictions": [2.5, 0.0, 2.0, 8.0], "references": [[3.0], [-0.5], [2.0], [7.0]],
                 "global_target": {"rmse": math.sqrt(0.375)}}]

    def reduce(self, totals: Any) -> dict[str, Any]:
        return {"rmse": self._parts(totals)[2]}


class _Correlation(Metric):
    """Correlation of predictions with references on the gathered (or resampled) pairs."""

    prediction_type = float
    per_instance = False
    method = "pearson"
    requirements = {"scipy": "scipy"}

    def map_batch(self, predictions: Sequence[Any], references: Sequence[Any] | None, task_data: Any) -> np.ndarray:
        return _pairs(self, predictions, references)

    def map(self, prediction: Any, references: Any, task_data: Any = None) -> np.ndarray:
        return self.map_batch([prediction], [references], None)[0]

    def _value(self, intermediates: Any, **options: Any) -> dict[str, float]:
        arr = np.asarray(intermediates, dtype=np.float64).reshape(-1, 2)
        r, p = correlation(arr[:, 0], arr[:, 1], method=self.method, **options)
        return {self.main_score: r, f"{self.main_score}_p_value": p}


class Pearson(_Correlation):
    r"""Pearson's correlation of predictions and references (``scipy.stats.pearsonr``).

    .. math:: r = \frac{\sum_i (x_i - \bar x)(y_i - \bar y)}{\sqrt{\sum_i (x_i - \bar x)^2 \sum_i (y_i - \bar y)^2}}

    Also reports ``pearson_p_value`` (two-sided). Constant input or fewer than two pairs:
    NaN with a warning.

    References: Pearson (1895); ``scipy.stats.pearsonr``.
    """

    main_score = "pearson"
    method = "pearson"
    examples = [{"predictions": [1.0, 2.0, 3.0], "references": [[1.0], [2.0], [4.0]],
                 "global_target": {"pearson": 3 / math.sqrt(28 / 3)}}]

    def reduce(self, intermediates: Any) -> dict[str, float]:
        return self._value(intermediates)


class Spearman(_Correlation):
    r"""Spearman's rank correlation (``scipy.stats.spearmanr``): Pearson's r of the average ranks.

    .. math:: \rho = r\big(\mathrm{rank}(x), \mathrm{rank}(y)\big)

    Also reports ``spearman_p_value``. Constant input: NaN with a warning.

    References: Spearman (1904); ``scipy.stats.spearmanr``.
    """

    main_score = "spearman"
    method = "spearman"
    examples = [{"predictions": [1.0, 2.0, 3.0, 4.0], "references": [[10.0], [20.0], [40.0], [30.0]],
                 "global_target": {"spearman": 0.8}}]

    def reduce(self, intermediates: Any) -> dict[str, float]:
        return self._value(intermediates)


class KendallTau(_Correlation):
    r"""Kendall's tau (``scipy.stats.kendalltau``), variant ``"b"`` (ties adjusted) by default.

    .. math:: \tau_b = \frac{P - Q}{\sqrt{(P + Q + T_x)(P + Q + T_y)}}

    with :math:`P` / :math:`Q` the concordant / discordant pairs and :math:`T_x`, :math:`T_y`
    the pairs tied only in x / only in y. ``variant="c"`` gives Stuart's tau-c. Also reports
    ``kendall_tau_p_value``.

    References: Kendall (1945), "The treatment of ties in ranking problems"; ``scipy.stats.kendalltau``.
    """

    main_score = "kendall_tau"
    method = "kendall_tau"
    examples = [{"predictions": [1.0, 2.0, 3.0, 4.0], "references": [[10.0], [20.0], [40.0], [30.0]],
                 "global_target": {"kendall_tau": 4 / 6}}]

    def __init__(self, *, variant: str = "b", score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.variant = check_choice(variant, "variant", KENDALL_VARIANTS, owner="kendall_tau")

    def reduce(self, intermediates: Any) -> dict[str, float]:
        return self._value(intermediates, variant=self.variant)
