"""Correlation kernels through ``scipy.stats`` (imported lazily): Pearson, Spearman, Kendall.

Correlations are not additive: the metric keeps the per-instance pairs and computes on the
gathered (or resampled) set. Constant input, fewer than two pairs, or NaN from scipy give NaN
with a warning (scipy's ``ConstantInputWarning`` is passed through).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from assay.deferred import np
from assay.errors import InvalidParameterError
from assay.validation import check_choice
from assay_classic._deps import require
from assay_classic.functional._common import UndefinedMetricWarning

__all__ = ["KENDALL_VARIANTS", "correlation"]

KENDALL_VARIANTS = ("b", "c")
METHODS = ("pearson", "spearman", "kendall_tau")


def correlation(x: Any, y: Any, *, method: str, variant: str = "b") -> tuple[float, float]:
    """The correlation coefficient of ``x`` and ``y`` and its two-sided p-value.

    ``method`` is ``"pearson"`` (``scipy.stats.pearsonr``), ``"spearman"``
    (``scipy.stats.spearmanr``, average ranks for ties) or ``"kendall_tau"``
    (``scipy.stats.kendalltau`` with ``variant`` ``"b"`` or ``"c"``).
    """
    check_choice(method, "method", METHODS)
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise InvalidParameterError(
            f"{method} expects two sequences of real numbers of the same length; got shapes {a.shape} and {b.shape}."
        )
    if a.size < 2:
        warnings.warn(
            f"{method} needs at least two pairs; got {a.size} (NaN).", UndefinedMetricWarning, stacklevel=2
        )
        return math.nan, math.nan
    stats = require("scipy.stats")
    if method == "pearson":
        result = stats.pearsonr(a, b)
    elif method == "spearman":
        result = stats.spearmanr(a, b)
    else:
        if variant not in KENDALL_VARIANTS:
            raise InvalidParameterError(
                f"The 'variant' parameter of kendall_tau must be one of {KENDALL_VARIANTS}. Got {variant!r} instead."
            )
        result = stats.kendalltau(a, b, variant=variant)
    return float(result.statistic), float(result.pvalue)
