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
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

from assay.deferred import np
from assay.errors import InvalidParameterError
from assay.validation import check_choice
from assay_classic.functional._common import ZeroDivision, check_zero_division, divide

__all__ = [
    "AVERAGES",
    "label_count_rows",
    "label_counts",
    "matthews_from_counts",
    "multilabel_count_rows",
    "multilabel_counts",
    "precision_recall_fscore",
    "sorted_labels",
]

AVERAGES = ("binary", "micro", "macro", "weighted")


def sorted_labels(values: Iterable[Hashable]) -> list[Hashable]:
    """The distinct labels in sorted order (scikit-learn's ``unique_labels``); ``repr`` order if unorderable."""
    distinct: set[Any] = set(values)  # sorted() raises TypeError for unorderable labels: handled below
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


def _nanaverage(values: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """Average over the last axis ignoring NaN; weights summing to zero give the plain mean.

    scikit-learn's ``_nanaverage``: no label or only NaN values give NaN.
    """
    keep = ~np.isnan(values)
    clean = np.where(keep, values, 0.0)
    count = keep.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        plain = np.where(count > 0, clean.sum(axis=-1) / np.maximum(count, 1), np.nan)
        if weights is None:
            return plain
        w = np.where(keep, np.asarray(weights, dtype=np.float64), 0.0)
        wsum = w.sum(axis=-1)
        weighted = (w * clean).sum(axis=-1) / np.where(wsum == 0, 1.0, wsum)
    return np.where(wsum != 0, weighted, plain)


def precision_recall_fscore(
    counts: np.ndarray,
    *,
    average: str,
    beta: float = 1.0,
    zero_division: ZeroDivision = "warn",
    warn_for: tuple[str, ...] = ("precision", "recall", "f-score"),
) -> tuple[Any, Any, Any]:
    r"""Precision, recall and F-beta from per-label counts ``(..., K, 3)`` = ``tp, fp, fn``.

    .. math::

        P = \frac{tp}{tp + fp}, \quad R = \frac{tp}{tp + fn}, \quad
        F_\beta = \frac{(1 + \beta^2)\, tp}{(1 + \beta^2)\, tp + \beta^2 fn + fp}

    ``micro`` sums the counts over labels first; ``macro`` is the unweighted mean of the
    per-label values; ``weighted`` weights them by support ``tp + fn`` (the plain mean when
    every support is zero); ``binary`` expects one row (the positive label). A zero
    denominator gives ``zero_division`` (``"warn"``: 0.0 and a warning); NaN values are left
    out of the averages; only the scores in ``warn_for`` warn. Equal to
    ``sklearn.metrics.precision_recall_fscore_support``.
    Leading axes are batches (bootstrap resamples): the results then have their shape;
    a single ``(K, 3)`` table gives three floats.
    """
    check_choice(average, "average", AVERAGES)
    zero_division = check_zero_division(zero_division)
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim < 2 or counts.shape[-1] != 3:
        counts = counts.reshape(-1, 3)
    tp, fp, fn = counts[..., 0], counts[..., 1], counts[..., 2]
    warn = counts.ndim == 2  # one table warns; batches of resamples stay quiet
    if average == "micro":
        tp, fp, fn = tp.sum(-1, keepdims=True), fp.sum(-1, keepdims=True), fn.sum(-1, keepdims=True)
    precision = divide(tp, tp + fp, zero_division, what="Precision", warn=warn and "precision" in warn_for)
    recall = divide(tp, tp + fn, zero_division, what="Recall", warn=warn and "recall" in warn_for)
    if math.isinf(beta):
        fscore = recall
    elif beta == 0:
        fscore = precision
    else:
        b2 = beta * beta
        fscore = divide((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp, zero_division, what="F-score",
                        warn=warn and "f-score" in warn_for)
    weights = (tp + fn) if average == "weighted" else None
    p, r, f = (_nanaverage(v, weights) for v in (precision, recall, fscore))
    if counts.ndim == 2:
        return float(p), float(r), float(f)
    return p, r, f


def matthews_from_counts(counts: np.ndarray) -> Any:
    r"""Matthews correlation coefficient (multiclass, Gorodkin's :math:`R_K`) from counts ``(..., K, 3)``.

    With :math:`t_k = tp_k + fn_k` (true count), :math:`p_k = tp_k + fp_k` (predicted count),
    :math:`c = \sum_k tp_k` and :math:`s = \sum_k p_k`:

    .. math::

        MCC = \frac{c\, s - \sum_k p_k t_k}{\sqrt{(s^2 - \sum_k p_k^2)(s^2 - \sum_k t_k^2)}}

    0.0 when the denominator is zero (scikit-learn's convention); NaN for no data at all.
    Leading axes are batches, as in :func:`precision_recall_fscore`.
    """
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim < 2 or counts.shape[-1] != 3:
        counts = counts.reshape(-1, 3)
    t_sum = counts[..., 0] + counts[..., 2]
    p_sum = counts[..., 0] + counts[..., 1]
    n_correct = counts[..., 0].sum(-1)
    n = p_sum.sum(-1)
    cov_tp = n_correct * n - (t_sum * p_sum).sum(-1)
    cov_pp = n * n - (p_sum * p_sum).sum(-1)
    cov_tt = n * n - (t_sum * t_sum).sum(-1)
    denom = cov_pp * cov_tt
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(denom == 0, 0.0, cov_tp / np.sqrt(np.where(denom == 0, 1.0, denom)))
    value = np.where(n == 0, np.nan, value)
    return float(value) if counts.ndim == 2 else value


def label_count_rows(
    y_true: Sequence[Hashable], y_pred: Sequence[Hashable], labels: Sequence[Hashable]
) -> np.ndarray:
    """Per-instance ``tp, fp, fn`` rows, shape ``(n, len(labels) * 3)``; their sum is :func:`label_counts`."""
    index = {label: i for i, label in enumerate(labels)}
    k, n = len(index), len(y_true)
    t = np.fromiter((index.get(v, k) for v in y_true), dtype=np.intp, count=n)
    p = np.fromiter((index.get(v, k) for v in y_pred), dtype=np.intp, count=n)
    rows = np.zeros((n, k + 1, 3))
    i = np.arange(n)
    hit = t == p
    rows[i[hit], t[hit], 0] = 1.0
    rows[i[~hit], p[~hit], 1] = 1.0
    rows[i[~hit], t[~hit], 2] = 1.0
    return rows[:, :k, :].reshape(n, 3 * k)


def multilabel_count_rows(
    y_true: Sequence[Iterable[Hashable]], y_pred: Sequence[Iterable[Hashable]], labels: Sequence[Hashable] | None
) -> np.ndarray:
    """Per-instance ``tp, fp, fn`` of label sets.

    The result has shape ``(n, 3 * len(labels))``, or ``(n, 3)`` pooled when ``labels`` is None.

    The pooled form (``labels=None``) holds ``|P & T|``, ``|P - T|``, ``|T - P|`` per
    instance, which is all a micro average needs.
    """
    n = len(y_true)
    if labels is None:
        rows = np.empty((n, 3))
        for i, (t, p) in enumerate(zip(y_true, y_pred)):
            ts, ps = set(t), set(p)
            rows[i] = (len(ts & ps), len(ps - ts), len(ts - ps))
        return rows
    index = {label: j for j, label in enumerate(labels)}
    rows = np.zeros((n, len(index), 3))
    for i, (t, p) in enumerate(zip(y_true, y_pred)):
        ts, ps = set(t), set(p)
        for label in ts & ps:
            if label in index:
                rows[i, index[label], 0] = 1.0
        for label in ps - ts:
            if label in index:
                rows[i, index[label], 1] = 1.0
        for label in ts - ps:
            if label in index:
                rows[i, index[label], 2] = 1.0
    return rows.reshape(n, 3 * len(index))


def _label_kind(value: Any) -> str:
    if isinstance(value, str):
        return "str"
    if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
        return "num"
    return "obj"


def pair_array(y_true: Sequence[Hashable], y_pred: Sequence[Hashable]) -> np.ndarray | None:
    """``(n, 2)`` array of ``(reference, prediction)`` labels: numbers or strings, else None.

    Numbers become int64 (float64 when any is a float; Python's ``1 == 1.0`` holds there
    too), strings a unicode array. A mix of strings and numbers is an error (as in
    scikit-learn); other labels (tuples, None ...) give None and the caller keeps a list.
    """
    kinds = {_label_kind(v) for v in y_true} | {_label_kind(v) for v in y_pred}
    if kinds == {"str", "num"}:
        raise InvalidParameterError(
            "Labels mix strings and numbers (as scikit-learn, this is an error); "
            f"got e.g. references {list(y_true)[:3]!r:.60} and predictions {list(y_pred)[:3]!r:.60}."
        )
    if kinds == {"str"}:
        return np.array([list(y_true), list(y_pred)], dtype=str).T.copy()
    if kinds == {"num"}:
        arr = np.array([list(y_true), list(y_pred)])
        return (arr.astype(np.float64) if arr.dtype.kind == "f" else arr.astype(np.int64)).T.copy()
    return None


def pair_counts(pairs: np.ndarray) -> np.ndarray:
    """Per-label ``tp, fp, fn`` ``(K, 3)`` of an ``(n, 2)`` label array, labels sorted (all that occur)."""
    pairs = np.asarray(pairs).reshape(-1, 2)
    labels, codes = np.unique(pairs.reshape(-1), return_inverse=True)
    k = labels.size
    codes = codes.reshape(-1, 2)
    confusion = np.bincount(codes[:, 0] * k + codes[:, 1], minlength=k * k).reshape(k, k)
    tp = np.diag(confusion)
    return np.stack([tp, confusion.sum(axis=0) - tp, confusion.sum(axis=1) - tp], axis=1).astype(np.float64)
