"""Classification kernels: per-label confusion counts, then precision / recall / F-beta / MCC.

Statistics, then value (torchmetrics style): ``label_counts`` / ``multilabel_counts`` turn
labels into additive sufficient statistics (``tp``, ``fp``, ``fn`` per label), and
``precision_recall_fscore`` / ``matthews_from_counts`` turn summed counts into scores. The
metric classes share both halves, so a shard's state is a small integer table and states
merge by addition.

The values are scikit-learn's (``precision_recall_fscore_support``, ``matthews_corrcoef``),
including the ``zero_division`` convention and the averaging rules.
"""

from __future__ import annotations

import math
from typing import Any, Hashable, Iterable, Sequence

import numpy as np

from assay.errors import InvalidParameterError
from assay_classic.functional._common import ZeroDivision, check_zero_division, divide

__all__ = [
    "AVERAGES",
    "label_counts",
    "matthews_from_counts",
    "multilabel_counts",
    "precision_recall_fscore",
    "sorted_labels",
]

AVERAGES = ("binary", "micro", "macro", "weighted")


def sorted_labels(values: Iterable[Hashable]) -> list[Hashable]:
    """The distinct labels in sorted order (scikit-learn's ``unique_labels``); ``repr`` order if unorderable."""
    distinct = set(values)
    try:
        return sorted(distinct)
    except TypeError:
        return sorted(distinct, key=repr)


def label_counts(y_true: Sequence[Hashable], y_pred: Sequence[Hashable], labels: Sequence[Hashable]) -> np.ndarray:
    """Per-label ``tp``, ``fp``, ``fn`` of single-label predictions, shape ``(len(labels), 3)``.

    For each instance with true label ``t`` and predicted label ``p``: ``t == p`` adds one
    ``tp`` to ``t``; otherwise ``p`` gets one ``fp`` and ``t`` one ``fn``. Labels outside
    ``labels`` are not counted (scikit-learn's ``labels=`` subset semantics).
    """
    if len(y_true) != len(y_pred):
        raise InvalidParameterError(
            f"predictions and references must have the same length; got {len(y_pred)} and {len(y_true)}."
        )
    index = {label: i for i, label in enumerate(labels)}
    k = len(index)
    t = np.fromiter((index.get(v, k) for v in y_true), dtype=np.intp, count=len(y_true))
    p = np.fromiter((index.get(v, k) for v in y_pred), dtype=np.intp, count=len(y_pred))
    hit = t == p
    tp = np.bincount(t[hit], minlength=k + 1)[:k]
    fp = np.bincount(p[~hit], minlength=k + 1)[:k]
    fn = np.bincount(t[~hit], minlength=k + 1)[:k]
    return np.stack([tp, fp, fn], axis=1).astype(np.int64)


def multilabel_counts(y_true: Any, y_pred: Any) -> np.ndarray:
    """Per-label ``tp``, ``fp``, ``fn`` of multi-label indicator matrices ``(n, L)``, shape ``(L, 3)``."""
    t = np.asarray(y_true).astype(bool)
    p = np.asarray(y_pred).astype(bool)
    if t.shape != p.shape or t.ndim != 2:
        raise InvalidParameterError(
            "multi-label predictions and references must be indicator matrices of the same shape (n, L); "
            f"got {p.shape} and {t.shape}."
        )
    tp = np.sum(t & p, axis=0)
    fp = np.sum(~t & p, axis=0)
    fn = np.sum(t & ~p, axis=0)
    return np.stack([tp, fp, fn], axis=1).astype(np.int64)


def _nanaverage(values: np.ndarray, weights: np.ndarray | None) -> float:
    """Average ignoring NaN; with weights that sum to zero, the plain mean (scikit-learn's rule)."""
    if values.size == 0:
        return math.nan
    keep = ~np.isnan(values)
    if not keep.any():
        return math.nan
    values = values[keep]
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)[keep]
        if w.sum() != 0:
            return float(np.average(values, weights=w))
    return float(np.mean(values))


def precision_recall_fscore(
    counts: np.ndarray,
    *,
    average: str,
    beta: float = 1.0,
    zero_division: ZeroDivision = "warn",
) -> tuple[float, float, float]:
    r"""Precision, recall and F-beta from per-label counts ``(K, 3)`` = ``tp, fp, fn``.

    .. math::

        P = \frac{tp}{tp + fp}, \quad R = \frac{tp}{tp + fn}, \quad
        F_\beta = \frac{(1 + \beta^2)\, tp}{(1 + \beta^2)\, tp + \beta^2 fn + fp}

    ``micro`` sums the counts over labels first; ``macro`` is the unweighted mean of the
    per-label values; ``weighted`` weights them by support ``tp + fn`` (the plain mean when
    every support is zero); ``binary`` expects one row (the positive label). A zero
    denominator gives ``zero_division`` (``"warn"``: 0.0 and a warning); NaN values are left
    out of the averages. Equal to ``sklearn.metrics.precision_recall_fscore_support``.
    """
    if average not in AVERAGES:
        raise InvalidParameterError(f"The 'average' parameter must be one of {AVERAGES}. Got {average!r} instead.")
    zero_division = check_zero_division(zero_division)
    counts = np.asarray(counts, dtype=np.int64).reshape(-1, 3)
    tp, fp, fn = counts[:, 0], counts[:, 1], counts[:, 2]
    if average == "micro":
        tp, fp, fn = tp.sum(keepdims=True), fp.sum(keepdims=True), fn.sum(keepdims=True)
    precision = divide(tp, tp + fp, zero_division, what="Precision")
    recall = divide(tp, tp + fn, zero_division, what="Recall")
    if math.isinf(beta):
        fscore = recall
    elif beta == 0:
        fscore = precision
    else:
        b2 = beta * beta
        fscore = divide((1 + b2) * tp.astype(np.float64), (1 + b2) * tp + b2 * fn + fp, zero_division, what="F-score")
    weights = (tp + fn) if average == "weighted" else None
    return (_nanaverage(precision, weights), _nanaverage(recall, weights), _nanaverage(fscore, weights))


def matthews_from_counts(counts: np.ndarray) -> float:
    r"""Matthews correlation coefficient (multiclass, Gorodkin's :math:`R_K`) from counts ``(K, 3)``.

    With :math:`t_k = tp_k + fn_k` (true count), :math:`p_k = tp_k + fp_k` (predicted count),
    :math:`c = \sum_k tp_k` and :math:`s = \sum_k p_k`:

    .. math::

        MCC = \frac{c\, s - \sum_k p_k t_k}{\sqrt{(s^2 - \sum_k p_k^2)(s^2 - \sum_k t_k^2)}}

    0.0 when the denominator is zero (scikit-learn's convention; NaN for no data at all).
    """
    counts = np.asarray(counts, dtype=np.float64).reshape(-1, 3)
    t_sum = counts[:, 0] + counts[:, 2]
    p_sum = counts[:, 0] + counts[:, 1]
    n_correct = counts[:, 0].sum()
    n = p_sum.sum()
    if n == 0:
        return math.nan
    cov_tp = n_correct * n - np.dot(t_sum, p_sum)
    cov_pp = n * n - np.dot(p_sum, p_sum)
    cov_tt = n * n - np.dot(t_sum, t_sum)
    denom = cov_pp * cov_tt
    if denom == 0:
        return 0.0
    return float(cov_tp / np.sqrt(denom))
