r"""Depth-estimation errors (torch-uncertainty 0.13.0's ``metrics/regression/depth.py``).

``SILog``, ``Log10``, ``ThresholdAccuracy`` (:math:`\delta_k`), ``MeanGTRelativeAbsoluteError``,
``MeanGTRelativeSquaredError``, ``MeanSquaredLogError``, ``MeanAbsoluteErrorInverse`` and
``MeanSquaredErrorInverse``: point-prediction errors like MAE / MSE (:mod:`assay_classic.regression`),
so they live next to them. Each is additive: an instance (one pixel's predicted and true depth)
maps to a few sums, which add across batches and shards and resample for intervals.

An instance is one value: pass a depth map's valid pixels flattened (``pred[mask]``,
``target[mask]``), as torch-uncertainty's ``update`` reads its inputs. Depths must be finite and
strictly positive (the metrics take logarithms, ratios or inverses): anything else is an error
naming the instance. Formulas: ``docs/classic-metrics.md`` ("Depth estimation").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from assay.deferred import np
from assay.errors import InvalidParameterError
from assay.functional import divide
from assay.metrics import Metric
from assay.validation import check_bool, check_choice, check_int, check_number
from assay_classic.regression import _pairs

__all__ = [
    "SILog", "Log10", "MeanAbsoluteErrorInverse", "MeanGTRelativeAbsoluteError", "MeanGTRelativeSquaredError",
    "MeanSquaredErrorInverse", "MeanSquaredLogError", "ThresholdAccuracy",
]

#: torch-uncertainty's ``unit`` -> the factor depths are multiplied by before they are inverted
UNIT_FACTORS = {"mm": 1e3, "m": 1.0, "km": 1e-3}

#: torch-uncertainty's documented examples (the docstrings of depth.py), shared by the classes' examples
_P = [2.5, 1.0, 2.0, 8.0]
_T = [3.0, 1.5, 2.0, 7.0]


def _positive_pairs(metric: Metric, predictions: Sequence[Any], references: Sequence[Any] | None) -> np.ndarray:
    """``(n, 2)`` finite, strictly positive ``(prediction, reference)`` depths, or an error naming the instance."""
    arr = _pairs(metric, predictions, references)
    bad = ~(arr > 0).all(axis=1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidParameterError(
            f"{metric.main_score}: instance {i} has prediction {arr[i, 0]} and reference {arr[i, 1]}; expected "
            "strictly positive depths (the metric takes logarithms, ratios or inverses): drop invalid pixels first."
        )
    return arr


class _DepthMetric(Metric):
    """Additive depth error: ``_stats(pred, target)`` gives per-instance sums, the last column is the count."""

    prediction_type = float
    higher_is_better = False
    additive = True
    vectorized = True
    n_stats = 2

    def _stats(self, p: np.ndarray, t: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def map_batch(self, predictions: Sequence[Any], references: Sequence[Any] | None, task_data: Any) -> np.ndarray:
        arr = _positive_pairs(self, predictions, references)
        return self._stats(arr[:, 0], arr[:, 1])

    def _mean(self, totals: Any) -> Any:
        t = np.asarray(totals, dtype=np.float64)
        return divide(t[..., 0], t[..., -1])  # no instance: NaN


def _one(x: np.ndarray) -> np.ndarray:
    return np.column_stack([x, np.ones_like(x)])


class SILog(_DepthMetric):
    r"""Scale-invariant logarithmic error (torch-uncertainty ``SILog``; Eigen et al., 2014).

    With :math:`d_i = \log \hat y_i - \log y_i`:

    .. math:: \mathrm{SILog} = \frac1n \sum_i d_i^2 - \lambda \Big(\frac1n \sum_i d_i\Big)^2

    and its square root with ``sqrt=True``. Statistics ``(d, d^2, 1)``.

    >>> round(SILog(sqrt=True).update([1.5, 2.0, 3.5, 5.0], [1.4, 2.2, 3.3, 5.2]).compute(), 4)
    0.0686
    """

    main_score = "silog"
    n_stats = 3
    examples = [{"predictions": [1.0, math.e], "references": [[1.0], [1.0]],
                 "global_target": {"silog": 0.5 - 0.25}},  # d = (0, 1): mean d^2 = 1/2, (mean d)^2 = 1/4
                {"predictions": [1.0, math.e], "references": [[1.0], [1.0]], "overrides": {"sqrt": True, "lmbda": 0.5},
                 "global_target": {"silog": math.sqrt(0.5 - 0.125)}}]

    def __init__(self, *, sqrt: bool = False, lmbda: float = 1.0, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.sqrt = check_bool(sqrt, "sqrt", owner="silog")
        self.lmbda = check_number(lmbda, "lmbda", owner="silog")

    def _stats(self, p: np.ndarray, t: np.ndarray) -> np.ndarray:
        d = np.log(p) - np.log(t)
        return np.column_stack([d, d * d, np.ones_like(d)])

    def reduce(self, totals: Any) -> dict[str, Any]:
        t = np.asarray(totals, dtype=np.float64)
        n = t[..., 2]
        with np.errstate(invalid="ignore", divide="ignore"):
            out = divide(t[..., 1], n) - self.lmbda * divide(t[..., 0], n) ** 2
            return {"silog": np.sqrt(out) if self.sqrt else out}


class Log10(_DepthMetric):
    r"""Mean absolute error of base-10 logarithms (torch-uncertainty ``Log10``).

    .. math:: \mathrm{Log10} = \frac1n \sum_i |\log_{10} \hat y_i - \log_{10} y_i|
    """

    main_score = "log10"
    examples = [{"predictions": [10.0, 100.0, 1000.0], "references": [[10.0], [10.0], [10.0]],
                 "global_target": {"log10": 1.0}}]  # |0| + |1| + |2| over 3

    def _stats(self, p: np.ndarray, t: np.ndarray) -> np.ndarray:
        return _one(np.abs(np.log10(p) - np.log10(t)))

    def reduce(self, totals: Any) -> dict[str, Any]:
        return {"log10": self._mean(totals)}


class MeanGTRelativeAbsoluteError(_DepthMetric):
    r"""Absolute error relative to the ground truth, AbsRel (torch-uncertainty ``MeanGTRelativeAbsoluteError``).

    .. math:: \mathrm{AbsRel} = \frac1n \sum_i \frac{|\hat y_i - y_i|}{y_i}

    computed as torch-uncertainty does, :math:`|\hat y_i / y_i - 1|`.
    """

    main_score = "abs_rel"
    examples = [{"predictions": _P, "references": [[t] for t in _T],
                 "global_target": {"abs_rel": (0.5 / 3 + 0.5 / 1.5 + 0 + 1 / 7) / 4}}]

    def _stats(self, p: np.ndarray, t: np.ndarray) -> np.ndarray:
        return _one(np.abs(p / t - 1.0))

    def reduce(self, totals: Any) -> dict[str, Any]:
        return {"abs_rel": self._mean(totals)}


class _SquaredDepthMetric(_DepthMetric):
    """A mean of squares, or its root with ``squared=False`` (torchmetrics' ``MeanSquaredError`` option)."""

    def __init__(self, *, squared: bool = True, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.squared = check_bool(squared, "squared", owner=self.main_score)

    def _value(self, totals: Any) -> Any:
        m = self._mean(totals)
        return m if self.squared else np.sqrt(m)


class MeanGTRelativeSquaredError(_SquaredDepthMetric):
    r"""Squared error relative to the ground truth, SqRel (torch-uncertainty ``MeanGTRelativeSquaredError``).

    .. math:: \mathrm{SqRel} = \frac1n \sum_i \frac{(\hat y_i - y_i)^2}{y_i}

    computed as torch-uncertainty does, :math:`(\hat y_i / \sqrt{y_i} - \sqrt{y_i})^2`; its root
    with ``squared=False``. torch-uncertainty's ``num_outputs`` is not offered (one output).
    """

    main_score = "sq_rel"
    examples = [{"predictions": _P, "references": [[t] for t in _T],
                 "global_target": {"sq_rel": (0.25 / 3 + 0.25 / 1.5 + 0 + 1 / 7) / 4}}]

    def _stats(self, p: np.ndarray, t: np.ndarray) -> np.ndarray:
        r = np.sqrt(t)
        return _one((p / r - r) ** 2)

    def reduce(self, totals: Any) -> dict[str, Any]:
        return {"sq_rel": self._value(totals)}


class MeanSquaredLogError(_SquaredDepthMetric):
    r"""Mean squared error of natural logarithms (torch-uncertainty ``MeanSquaredLogError``).

    .. math:: \mathrm{MSLE} = \frac1n \sum_i (\log \hat y_i - \log y_i)^2

    its root with ``squared=False``.
    """

    main_score = "msle"
    examples = [{"predictions": [1.0, math.e], "references": [[1.0], [1.0]], "global_target": {"msle": 0.5}}]

    def _stats(self, p: np.ndarray, t: np.ndarray) -> np.ndarray:
        return _one((np.log(p) - np.log(t)) ** 2)

    def reduce(self, totals: Any) -> dict[str, Any]:
        return {"msle": self._value(totals)}


class MeanSquaredErrorInverse(_SquaredDepthMetric):
    r"""Mean squared error of inverse depths, iMSE (torch-uncertainty ``MeanSquaredErrorInverse``).

    .. math:: \mathrm{iMSE} = \frac1n \sum_i \Big(\frac{1}{f \hat y_i} - \frac{1}{f y_i}\Big)^2

    with :math:`f` = 1e3 (``unit="mm"``), 1 (``"m"``) or 1e-3 (``"km"``, the default); its root
    with ``squared=False``.
    """

    main_score = "imse"
    examples = [{"predictions": [1.0, 2.0], "references": [[2.0], [2.0]], "overrides": {"unit": "m"},
                 "global_target": {"imse": 0.125}}]  # (1 - 1/2)^2 / 2

    def __init__(self, *, squared: bool = True, unit: str = "km", score_prefix: str = "") -> None:
        super().__init__(squared=squared, score_prefix=score_prefix)
        self.unit = check_choice(unit, "unit", tuple(UNIT_FACTORS), owner="imse")

    def _stats(self, p: np.ndarray, t: np.ndarray) -> np.ndarray:
        f = UNIT_FACTORS[self.unit]
        return _one((1.0 / (p * f) - 1.0 / (t * f)) ** 2)

    def reduce(self, totals: Any) -> dict[str, Any]:
        return {"imse": self._value(totals)}


class MeanAbsoluteErrorInverse(_DepthMetric):
    r"""Mean absolute error of inverse depths, iMAE (torch-uncertainty ``MeanAbsoluteErrorInverse``).

    .. math:: \mathrm{iMAE} = \frac1n \sum_i \Big|\frac{1}{f \hat y_i} - \frac{1}{f y_i}\Big|

    with :math:`f` as in :class:`MeanSquaredErrorInverse` (``unit="km"`` by default).
    """

    main_score = "imae"
    examples = [{"predictions": [1.0, 2.0], "references": [[2.0], [2.0]], "overrides": {"unit": "m"},
                 "global_target": {"imae": 0.25}}]

    def __init__(self, *, unit: str = "km", score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.unit = check_choice(unit, "unit", tuple(UNIT_FACTORS), owner="imae")

    def _stats(self, p: np.ndarray, t: np.ndarray) -> np.ndarray:
        f = UNIT_FACTORS[self.unit]
        return _one(np.abs(1.0 / (p * f) - 1.0 / (t * f)))

    def reduce(self, totals: Any) -> dict[str, Any]:
        return {"imae": self._mean(totals)}


class ThresholdAccuracy(_DepthMetric):
    r"""Share of depths within a factor :math:`\lambda^k` of the truth, :math:`\delta_k` (``ThresholdAccuracy``).

    .. math:: \delta_k = \frac1n \sum_i \Big[\max\Big(\frac{\hat y_i}{y_i}, \frac{y_i}{\hat y_i}\Big) < \lambda^k\Big]

    ``power`` is :math:`k` (torch-uncertainty requires it; here it defaults to 1, :math:`\delta_1`),
    ``lmbda`` is :math:`\lambda` (default 1.25). Higher is better.
    """

    main_score = "threshold_accuracy"
    higher_is_better = True
    examples = [{"predictions": [2.0, 3.0, 5.0, 8.0, 20.0], "references": [[2.1], [2.5], [4.5], [10.0], [10.0]],
                 "overrides": {"power": 2}, "global_target": {"threshold_accuracy": 0.8}}]

    def __init__(self, *, power: int = 1, lmbda: float = 1.25, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.power = check_int(power, "power", low=0, owner="threshold_accuracy")
        self.lmbda = check_number(lmbda, "lmbda", low=1.0, owner="threshold_accuracy")

    def _stats(self, p: np.ndarray, t: np.ndarray) -> np.ndarray:
        within = np.maximum(p / t, t / p) < self.lmbda ** self.power
        return _one(within.astype(np.float64))

    def reduce(self, totals: Any) -> dict[str, Any]:
        return {"threshold_accuracy": self._mean(totals)}
