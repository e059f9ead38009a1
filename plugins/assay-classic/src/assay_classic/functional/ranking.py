"""ROC AUC of binary labels and real scores, with scikit-learn's label rules.

The kernel, :func:`assay.functional.roc_auc_from_split` (the Mann-Whitney statistic by two
sorts and one merge, ties counting one half), lives in the core and is shared by every
ROC AUC in assay; it is re-exported here. This module adds the label handling of
``sklearn.metrics.roc_auc_score`` (:func:`binary_labels`) and the input checks.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from assay.deferred import np
from assay.errors import InvalidParameterError
from assay.functional import roc_auc_from_split

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
