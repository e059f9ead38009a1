"""ROC AUC by sorting: our own numpy, because the speed goal beats the libraries.

The area under the ROC curve with ties handled as scikit-learn's trapezoid (a tie group
enters the curve as one diagonal segment) equals the Mann-Whitney statistic with average
ranks:

.. math::

    AUC = \\frac{1}{P N} \\sum_{i \\in pos} \\sum_{j \\in neg}
          \\left( [s_i > s_j] + \\tfrac12 [s_i = s_j] \\right)
        = \\frac{L + H}{2 P N}

where :math:`L` counts the pairs with the negative strictly below the positive and
:math:`H = L + E` the pairs with the negative at or below it (:math:`E`: tied pairs). All
are integers, so the result does not depend on the input order.

How it is fast: ``np.sort`` of each class (SIMD sorts, several times faster than one
``np.argsort`` of all scores), then one stable merge of the two sorted runs (``argsort``
with ``kind="stable"`` on two runs is a linear merge). Placing the positives first in the
merge puts a positive before the negatives equal to it, so the merged position of the k-th
smallest positive minus ``k`` is the number of negatives strictly below it, :math:`L`.
:math:`E` is counted only when some positive score equals some negative score: for each
distinct tied value, (positives at it) x (negatives at it), from run lengths and one
``searchsorted`` per distinct value.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Hashable

import numpy as np

from assay.errors import InvalidParameterError
from assay_classic.functional._common import UndefinedMetricWarning

__all__ = ["binary_labels", "roc_auc", "roc_auc_from_split"]


def binary_labels(y_true: Any, pos_label: Hashable | None = None) -> np.ndarray:
    """Boolean positives from binary labels: ``pos_label``, or the greater of the two labels.

    scikit-learn's ``roc_auc_score`` takes the greater of the (at most two) distinct labels as
    the positive class; with a single distinct label the positives are ``y == 1`` / ``True``.
    """
    y = np.asarray(y_true)
    if y.ndim != 1:
        raise InvalidParameterError(f"references of roc_auc must be one label per instance; got shape {y.shape}.")
    if y.dtype == bool and pos_label is None:
        return y
    if pos_label is not None:
        return y == pos_label
    if y.dtype.kind in "iuf" and y.size:  # two distinct values without a sort
        lo, hi = y.min(), y.max()
        if lo == hi:
            return y == 1
        if np.all((y == lo) | (y == hi)):
            return y == hi
    distinct = np.unique(y)
    if distinct.size > 2:
        raise InvalidParameterError(
            f"roc_auc is binary: references must hold at most two distinct labels; got {distinct.size} "
            f"({distinct[:5].tolist()} ...). Give pos_label= to score one label against the rest."
        )
    if distinct.size == 2:
        return y == distinct[1]
    return y == 1


def roc_auc_from_split(positives: np.ndarray, negatives: np.ndarray) -> float:
    """ROC AUC from the scores of the positives and of the negatives (any order, no NaN)."""
    n_pos, n_neg = positives.size, negatives.size
    if n_pos == 0 or n_neg == 0:
        warnings.warn(
            "Only one class is present in the references; ROC AUC is not defined in that case (NaN).",
            UndefinedMetricWarning,
            stacklevel=3,
        )
        return math.nan
    pos = np.sort(positives)
    neg = np.sort(negatives)
    # stable merge, positives first: a positive precedes the negatives equal to it
    order = np.argsort(np.concatenate([pos, neg]), kind="stable")
    below = np.flatnonzero(order < n_pos) - np.arange(n_pos)  # negatives strictly below each positive
    low = int(below.sum(dtype=np.int64))
    # tied pairs: for each distinct positive value equal to some negative, (#pos) * (#neg) at that value
    inside = np.flatnonzero(below < n_neg)
    tied = inside[neg[below[inside]] == pos[inside]]
    equal = 0
    if tied.size:
        values = pos[tied]
        starts = np.flatnonzero(np.concatenate([[True], values[1:] != values[:-1]]))
        multiplicity = np.diff(np.append(starts, values.size))
        neg_equal = np.searchsorted(neg, values[starts], side="right") - below[tied[starts]]
        equal = int(np.dot(multiplicity, neg_equal))
    return (2 * low + equal) / (2.0 * n_pos * n_neg)


def roc_auc(y_true: Any, y_score: Any, *, pos_label: Hashable | None = None) -> float:
    """Area under the ROC curve of binary labels ``y_true`` and real scores ``y_score``.

    Equal to ``sklearn.metrics.roc_auc_score(y_true, y_score)`` (binary case), ties included.
    NaN scores are an error; a single class gives NaN and an :class:`UndefinedMetricWarning`
    (scikit-learn's convention). Infinite scores are ranked like any other value.

    Examples
    --------
    >>> roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    scores = np.asarray(y_score, dtype=np.float64)
    positive = binary_labels(y_true, pos_label)
    if scores.ndim != 1 or scores.shape != positive.shape:
        raise InvalidParameterError(
            f"roc_auc expects one real score per reference; got scores of shape {scores.shape} "
            f"for {positive.shape[0]} references."
        )
    if np.isnan(scores).any():
        raise InvalidParameterError(
            f"roc_auc scores must not contain NaN; got NaN at index {int(np.flatnonzero(np.isnan(scores))[0])}."
        )
    return roc_auc_from_split(scores[positive], scores[~positive])
