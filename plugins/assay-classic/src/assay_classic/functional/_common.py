"""Shared helpers of the kernels: the ``zero_division`` convention and safe division."""

from __future__ import annotations

import math
import warnings
from typing import Union

import numpy as np

from assay.errors import InvalidParameterError, UndefinedMetricWarning

__all__ = ["UndefinedMetricWarning", "ZeroDivision", "check_zero_division", "divide"]

ZeroDivision = Union[str, float]


def check_zero_division(value: ZeroDivision, *, metric: str = "metric") -> ZeroDivision:
    """Validate ``zero_division`` as scikit-learn does: ``"warn"``, ``0.0``, ``1.0`` or NaN.

    ``"warn"`` means 0.0 plus an :class:`UndefinedMetricWarning`; ``"nan"`` is read as NaN.
    """
    if isinstance(value, str):
        if value == "warn":
            return value
        if value.lower() == "nan":
            return math.nan
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if math.isnan(value) or value in (0, 1):
            return float(value)
    raise InvalidParameterError(
        f"The 'zero_division' parameter of {metric} must be one of 'warn', 0.0, 1.0 or nan. Got {value!r} instead."
    )


def divide(
    numerator: np.ndarray, denominator: np.ndarray, zero_division: ZeroDivision, *, what: str, warn: bool = True
) -> np.ndarray:
    """``numerator / denominator`` elementwise; a zero denominator gives ``zero_division``.

    With ``zero_division="warn"`` the value is 0.0 and one :class:`UndefinedMetricWarning`
    names ``what`` (scikit-learn's convention); ``warn=False`` keeps quiet (batches of
    bootstrap resamples).
    """
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    mask = denominator == 0
    safe = np.where(mask, 1.0, denominator)
    result = numerator / safe
    if mask.any():
        result = np.where(mask, 0.0 if zero_division == "warn" else float(zero_division), result)
        if zero_division == "warn" and warn:
            warnings.warn(
                f"{what} is ill-defined (a zero denominator) and set to 0.0; "
                "use zero_division= to choose the value and silence this warning.",
                UndefinedMetricWarning,
                stacklevel=3,
            )
    return result
