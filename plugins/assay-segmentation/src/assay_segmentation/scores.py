"""Detection and calibration scores of the ValUES tasks: AUROC, FPR@95, Platt scaling, ACE, adaptive ECE.

Orientation: scores are uncertainties (higher = more uncertain = more likely OoD);
OoD labels are 1 = OoD; correctness labels are 1 = correct.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.functional import adaptive_ece as adaptive_ece_kernel
from assay.functional import equal_width_bins, roc_auc_from_split
from assay.validation import check_array, check_int, check_number, check_same_length, undefined_metric

__all__ = ["adaptive_ece", "auroc", "fit_platt", "fpr_at_tpr", "platt_confidence", "values_ace"]


def _scores_labels(scores: Any, labels: Any, who: str) -> tuple[np.ndarray, np.ndarray]:
    """Finite real scores and binary (0 / 1) labels, flattened, of the same length (:mod:`assay.validation`)."""
    s = check_array(scores, "scores", owner=who, what="scores").ravel()
    y = check_array(labels, "labels", owner=who, what="labels").ravel()
    check_same_length(who, scores=s, labels=y)
    binary = (y == 0) | (y == 1)
    if not binary.all():
        i = int(np.flatnonzero(~binary)[0])
        raise InvalidParameterError(f"{who}: `labels[{i}]` is {float(y[i])!r}; expected binary labels (0 / 1).")
    return s, y.astype(bool)


def _one_class(who: str) -> float:
    return undefined_metric(f"{who}: labels hold only one class; returning NaN.", stacklevel=4)


def auroc(scores: Any, labels: Any) -> float:
    """Area under the ROC curve of ``scores`` as a detector of ``labels == 1``.

    The Mann-Whitney form: the probability that a random positive scores higher than a
    random negative, ties counting one half (:func:`assay.functional.roc_auc_from_split`).
    Equals scikit-learn's ``roc_auc_score``. NaN with a warning when only one class is present.
    """
    s, y = _scores_labels(scores, labels, "auroc")
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return _one_class("auroc")
    return roc_auc_from_split(s[y], s[~y])


def fpr_at_tpr(scores: Any, labels: Any, *, tpr: float = 0.95) -> float:
    """False-positive rate at the first threshold whose true-positive rate reaches ``tpr``.

    Thresholds are the distinct scores, high to low (tied scores enter together); at
    threshold ``t`` everything with score ``>= t`` is flagged. Returns the FPR at the
    largest threshold with ``TPR >= tpr`` (FPR@95 for ``tpr=0.95``). NaN with a warning
    when only one class is present.
    """
    check_number(tpr, "tpr", low=0.0, high=1.0, closed="right", owner="fpr_at_tpr")
    s, y = _scores_labels(scores, labels, "fpr_at_tpr")
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return _one_class("fpr_at_tpr")
    order = np.argsort(-s, kind="stable")
    s_sorted, y_sorted = s[order], y[order]
    ends = np.r_[np.nonzero(np.diff(s_sorted))[0], s_sorted.size - 1]  # last index of each tie group
    tp = np.cumsum(y_sorted)[ends]
    fp = np.cumsum(~y_sorted)[ends]
    reached = np.nonzero(tp / n_pos >= tpr - 1e-12)[0]
    return float(fp[reached[0]] / n_neg)


def fit_platt(scores: Any, correct: Any, *, max_iter: int = 100) -> tuple[float, float]:
    """Platt scaling: fit ``P(correct | f) = 1 / (1 + exp(a f + b))`` by maximum likelihood.

    Uses Platt's (1999) smoothed targets, ``(n+ + 1) / (n+ + 2)`` for positives and
    ``1 / (n- + 2)`` for negatives, as scikit-learn's sigmoid calibration does, and
    Newton steps with step halving. ``f`` is a confidence score; ValUES passes
    ``f = -uncertainty``.

    Returns
    -------
    (a, b) : tuple of float
    """
    f, y = _scores_labels(scores, correct, "fit_platt")
    if f.size == 0:
        raise InvalidParameterError("fit_platt: no samples to fit.")
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    t = np.where(y, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    x = np.stack([f, np.ones_like(f)], axis=1)
    params = np.array([0.0, np.log((n_neg + 1.0) / (n_pos + 1.0))])

    def loss(p: np.ndarray) -> float:
        z = x @ p  # P = sigmoid(-z)
        # -[t log P + (1 - t) log(1 - P)] with log P = -log(1 + e^z), log(1 - P) = z - log(1 + e^z)
        return float(np.sum(np.logaddexp(0.0, z) - (1.0 - t) * z))

    current = loss(params)
    for _ in range(max_iter):
        z = x @ params
        p = 1.0 / (1.0 + np.exp(np.clip(z, -700, 700)))  # P(correct)
        grad = x.T @ (t - p)  # d loss / d params
        w = p * (1.0 - p)
        hess = (x * w[:, None]).T @ x + 1e-12 * np.eye(2)
        step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        scale = 1.0
        while scale > 1e-10:
            candidate = params - scale * step
            value = loss(candidate)
            if value <= current + 1e-12:
                break
            scale /= 2
        else:
            break
        done = abs(current - value) <= 1e-12 * max(1.0, abs(current))
        params, current = candidate, value
        if done:
            break
    return float(params[0]), float(params[1])


def platt_confidence(uncertainty: Any, a: float, b: float) -> np.ndarray:
    """Probability of being correct from an uncertainty: ``1 / (1 + exp(a * (-u) + b))``."""
    u = check_array(uncertainty, "uncertainty", owner="platt_confidence", what="uncertainty values")
    z = np.clip(-a * u + b, -700, 700)
    return 1.0 / (1.0 + np.exp(z))


def _conf_correct(confidence: Any, correct: Any, who: str) -> tuple[np.ndarray, np.ndarray]:
    c, y = _scores_labels(confidence, correct, who)
    check_array(c, "confidence", owner=who, low=0.0, high=1.0, what="confidences")
    return c, y.astype(np.float64)


def values_ace(confidence: Any, correct: Any, *, n_bins: int = 20) -> float:
    """ValUES' "ACE": the unweighted mean over non-empty equal-width bins of ``|acc_b - conf_b|``.

    ``n_bins`` equal-width bins on [0, 1]; bin ``b`` holds confidences in ``[lo, hi)``
    (1.0 in the last bin; each confidence compared with the edges themselves:
    :func:`assay.functional.equal_width_bins` with ``closed="left"``); ``acc_b`` is the fraction
    correct and ``conf_b`` the mean confidence in the bin. Unlike ECE the bins are not weighted
    by their size, and unlike adaptive ECE the bins are not equal-mass (ValUES calls this ACE).
    NaN with a warning on empty input.
    """
    check_int(n_bins, "n_bins", low=1, owner="values_ace")
    c, y = _conf_correct(confidence, correct, "values_ace")
    if c.size == 0:
        return undefined_metric("values_ace: no voxels; returning NaN.")
    idx = equal_width_bins(c, n_bins, closed="left")
    counts = np.bincount(idx, minlength=n_bins)
    conf_sum = np.bincount(idx, weights=c, minlength=n_bins)
    acc_sum = np.bincount(idx, weights=y, minlength=n_bins)
    full = counts > 0
    return float(np.mean(np.abs(acc_sum[full] - conf_sum[full]) / counts[full]))


def adaptive_ece(confidence: Any, correct: Any, *, n_bins: int = 20) -> float:
    """Equal-mass (adaptive) ECE on voxels: ``sum_b (n_b / N) |acc_b - conf_b|``.

    Confidences are sorted and split into ``n_bins`` contiguous chunks whose sizes differ
    by at most one (``numpy.array_split``'s sizes); ties in confidence are ordered
    incorrect-first, so the score does not depend on the voxel order
    (:func:`assay.functional.adaptive_ece`, shared with ``assay_uncertainty``'s
    ``adaptive_ece``). Confidence here is the probability of being correct, compared with
    correctness directly (no top-label conversion). Fewer voxels than bins is an error.
    """
    check_int(n_bins, "n_bins", low=1, owner="adaptive_ece")
    c, y = _conf_correct(confidence, correct, "adaptive_ece")
    if c.size < n_bins:
        raise InvalidParameterError(f"adaptive_ece: {c.size} voxels are fewer than n_bins={n_bins}.")
    return adaptive_ece_kernel(c, y, n_bins)
