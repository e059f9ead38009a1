"""Error kernels: sums of absolute and squared errors, then MAE, MSE and RMSE.

The statistics ``(sum |e|, sum e^2, n)`` with ``e = prediction - reference`` are additive, so
a shard's state is three numbers. Values equal ``sklearn.metrics.mean_absolute_error``,
``mean_squared_error`` and ``root_mean_squared_error``; no data gives NaN and a warning.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from assay.deferred import np
from assay.errors import InvalidParameterError
from assay_classic.functional._common import UndefinedMetricWarning

__all__ = ["error_stats", "mae", "mse", "rmse", "errors_from_stats"]


def _as_floats(values: Any, name: str) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(f"{name} must be real numbers; got {type(values).__name__}: {exc}") from None
    if array.ndim != 1:
        raise InvalidParameterError(f"{name} must be one real number per instance; got shape {array.shape}.")
    return array


def error_stats(y_true: Any, y_pred: Any) -> np.ndarray:
    """Per-instance statistics ``(|e|, e^2, 1)``, shape ``(n, 3)``, with ``e = y_pred - y_true``."""
    t = _as_floats(y_true, "references")
    p = _as_floats(y_pred, "predictions")
    if t.shape != p.shape:
        raise InvalidParameterError(
            f"predictions and references must have the same length; got {p.shape[0]} and {t.shape[0]}."
        )
    e = p - t
    return np.stack([np.abs(e), e * e, np.ones_like(e)], axis=1)


def errors_from_stats(stats: Any) -> dict[str, float]:
    r"""MAE, MSE and RMSE from summed statistics ``(sum |e|, sum e^2, n)``.

    .. math::

        MAE = \frac1n \sum_i |e_i|, \quad MSE = \frac1n \sum_i e_i^2, \quad RMSE = \sqrt{MSE}
    """
    abs_sum, sq_sum, n = (float(v) for v in np.asarray(stats, dtype=np.float64).reshape(3))
    if n == 0:
        warnings.warn("No instances: MAE, MSE and RMSE are not defined (NaN).", UndefinedMetricWarning, stacklevel=2)
        return {"mae": math.nan, "mse": math.nan, "rmse": math.nan}
    mse_value = sq_sum / n
    return {"mae": abs_sum / n, "mse": mse_value, "rmse": math.sqrt(mse_value)}


def mae(y_true: Any, y_pred: Any) -> float:
    """Mean absolute error. ``mae([3, -0.5, 2, 7], [2.5, 0.0, 2, 8])`` is 0.5."""
    return errors_from_stats(error_stats(y_true, y_pred).sum(axis=0))["mae"]


def mse(y_true: Any, y_pred: Any) -> float:
    """Mean squared error. ``mse([3, -0.5, 2, 7], [2.5, 0.0, 2, 8])`` is 0.375."""
    return errors_from_stats(error_stats(y_true, y_pred).sum(axis=0))["mse"]


def rmse(y_true: Any, y_pred: Any) -> float:
    """Root mean squared error, ``sqrt(mse)``."""
    return errors_from_stats(error_stats(y_true, y_pred).sum(axis=0))["rmse"]
