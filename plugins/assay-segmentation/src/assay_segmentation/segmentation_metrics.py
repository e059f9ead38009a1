r"""Segmentation metrics of torch-uncertainty 0.13.0 (``metrics/segmentation``), one image per instance.

- ``MeanIntersectionOverUnion``: per-class IoU from pooled pixel counts, averaged over the classes seen;
- ``PAvPU``: patch accuracy versus patch uncertainty (Mukhoti & Gal, 2018);
- ``SegmentationBinaryAUROC``, ``SegmentationBinaryAveragePrecision``, ``SegmentationFPR95``:
  a pixel-level binary score per image, averaged over the images where it is defined.

An instance is an image: the prediction an array (a label map ``(H, W)``, or class scores
``(C, H, W)``; for the binary metrics a score map of any shape) and the reference the label map of
the same spatial shape. Every metric is additive over images (confusion counts, patch counts or a
``(value, defined)`` pair), so shards merge by addition and intervals resample images.
torch-uncertainty's batched ``update(preds (B, ...), target (B, ...))`` is the same data as a
list of its ``B`` images (a ``(B, ...)`` array is one too). Formulas: ``docs/downstream.md``
("Segmentation metrics (torch-uncertainty's)").
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.functional import divide
from assay.metrics import Metric
from assay.validation import check_array, check_bool, check_int, check_number, check_same_length, undefined_metric

__all__ = [
    "PAvPU", "MeanIntersectionOverUnion", "SegmentationBinaryAUROC", "SegmentationBinaryAveragePrecision",
    "SegmentationFPR95", "binary_average_precision", "binary_roc_auc", "fpr_at_recall",
]


def _images(metric: Metric, predictions: Sequence[Any], references: Sequence[Any] | None
            ) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """``(index, prediction, reference)`` arrays of each image, checked: real numbers, finite."""
    name = metric.main_score
    if references is None:
        raise InvalidParameterError(f"{name} needs references (one label map per image); got None.")
    check_same_length(name, predictions=predictions, references=references)
    for i, (p, r) in enumerate(zip(predictions, references)):
        yield (i, check_array(p, f"predictions[{i}]", owner=name, dtype=None),
               check_array(r, f"references[{i}]", owner=name, dtype=None))


def _required(metric: Metric, option: str, example: str) -> int:
    """The value of a required option (torch-uncertainty requires it too), or an error naming it."""
    value = getattr(metric, option)
    if value is None:
        raise InvalidParameterError(f"{metric.main_score} needs {option}= (torch-uncertainty requires it too); "
                                    f"for example {example}.")
    return int(value)


def _integer_labels(r: np.ndarray, what: str, owner: str) -> np.ndarray:
    if r.dtype.kind == "f":
        if not np.array_equal(r, np.round(r)):
            raise InvalidParameterError(f"{owner}: expected integer labels in {what}; got non-integer values.")
        r = r.astype(np.int64)
    return r.astype(np.int64, copy=False)


class MeanIntersectionOverUnion(Metric):
    r"""Mean intersection over union (torch-uncertainty ``MeanIntersectionOverUnion``).

    With :math:`TP_c, FP_c, FN_c` the pixel counts of class :math:`c` over all images,

    .. math:: \mathrm{IoU}_c = \frac{TP_c}{TP_c + FP_c + FN_c}, \qquad
              \mathrm{mIoU} = \operatorname{mean}_{c:\ TP_c + FP_c + FN_c > 0} \mathrm{IoU}_c

    (classes neither predicted nor present are left out, torch-uncertainty's ``nanmean``). A
    prediction is a label map ``(H, W)`` or class scores ``(C, H, W)`` (argmax over ``C``);
    pixels whose reference is ``ignore_index`` are left out. ``num_classes`` is required (an error at
    the first update without it).
    torch-uncertainty's ``top_k`` is not offered (top-1 only). Statistics ``(TP_c, FP_c, FN_c)``
    per class.
    """

    main_score = "mean_iou"
    additive = True
    vectorized = True
    # image 1: labels (0, 1 / 1, 1) vs (0, 1 / 0, 1); image 2: (2, 2) vs (2, 0) -- TP (1, 2, 1), FP (0, 1, 1),
    # FN (2, 0, 0): IoU 1/3, 2/3, 1/2
    examples = [{"predictions": [[[0, 1], [1, 1]], [[2, 2]]], "references": [[[0, 1], [0, 1]], [[2, 0]]],
                 "overrides": {"num_classes": 3}, "global_target": {"mean_iou": (1 / 3 + 2 / 3 + 1 / 2) / 3}}]

    def __init__(self, *, num_classes: int | None = None, ignore_index: int | None = None,
                 score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.num_classes = check_int(num_classes, "num_classes", low=1, owner=self.main_score, allow_none=True)
        self.ignore_index = check_int(ignore_index, "ignore_index", owner=self.main_score, allow_none=True)
        self.n_stats = None if self.num_classes is None else 3 * self.num_classes

    def map_batch(self, predictions: Sequence[Any], references: Sequence[Any] | None, task_data: Any) -> np.ndarray:
        c = _required(self, "num_classes", "mean_iou[num_classes=19]")
        out = np.zeros((len(predictions), 3 * c))
        for i, p, r in _images(self, predictions, references):
            r = _integer_labels(r, f"references[{i}]", self.main_score)
            if p.ndim == r.ndim + 1:
                if p.shape[0] != c or p.shape[1:] != r.shape:
                    raise InvalidParameterError(f"{self.main_score}: predictions[{i}] has shape {p.shape}; expected "
                                                f"class scores ({c}, *{r.shape}) or a label map {r.shape}.")
                p = np.argmax(p, axis=0)
            elif p.shape != r.shape:
                raise InvalidParameterError(f"{self.main_score}: predictions[{i}] has shape {p.shape} and "
                                            f"references[{i}] {r.shape}; expected the same shape (or ({c}, *shape)).")
            p = _integer_labels(p, f"predictions[{i}]", self.main_score).ravel()
            r = r.ravel()
            keep = np.ones(r.shape, dtype=bool) if self.ignore_index is None else r != self.ignore_index
            p, r = p[keep], r[keep]
            for what, v in (("predictions", p), ("references", r)):
                if v.size and (v.min() < 0 or v.max() >= c):
                    raise InvalidParameterError(f"{self.main_score}: {what}[{i}] has label "
                                                f"{int(v.min() if v.min() < 0 else v.max())}; expected 0 .. {c - 1}"
                                                + (f" or ignore_index {self.ignore_index}" if what == "references"
                                                   and self.ignore_index is not None else "") + ".")
            confusion = np.bincount(r * c + p, minlength=c * c).reshape(c, c)  # rows: truth, columns: prediction
            tp = np.diag(confusion)
            out[i] = np.concatenate([tp, confusion.sum(axis=0) - tp, confusion.sum(axis=1) - tp])
        return out

    def reduce(self, totals: Any) -> dict[str, Any]:
        t = np.asarray(totals, dtype=np.float64)
        c = _required(self, "num_classes", "mean_iou[num_classes=19]")
        tp, fp, fn = t[..., :c], t[..., c:2 * c], t[..., 2 * c:]
        union = tp + fp + fn
        with np.errstate(invalid="ignore", divide="ignore"):
            iou = np.where(union > 0, tp / np.where(union > 0, union, 1.0), np.nan)
            seen = (union > 0).sum(axis=-1)
            value = np.where(seen > 0, np.nansum(iou, axis=-1) / np.maximum(seen, 1), np.nan)
        if t.ndim == 1 and seen == 0:
            undefined_metric("mean_iou: no pixel of any class (predicted or labelled); NaN.")
        return {"mean_iou": value}


def _block_sums(x: np.ndarray, size: int) -> np.ndarray:
    """Sums over ``size x size`` patches of an ``(H, W)`` map; the last row / column of patches may be partial."""
    h, w = x.shape
    ph, pw = -(-h // size), -(-w // size)
    padded = np.zeros((ph * size, pw * size))
    padded[:h, :w] = x
    return padded.reshape(ph, size, pw, size).sum(axis=(1, 3))


class PAvPU(Metric):
    r"""Patch accuracy versus patch uncertainty (torch-uncertainty ``PAvPU``; Mukhoti & Gal, 2018).

    Each image is cut into ``patch_size`` x ``patch_size`` patches (the last ones partial). Over
    the valid pixels of a patch, its accuracy is the share of pixels whose argmax class is the
    reference, its uncertainty the mean of :math:`1 - \max_c p_c`. A patch is accurate when its
    accuracy exceeds ``acc_threshold``, uncertain when its uncertainty exceeds
    ``unc_threshold``; with the counts :math:`n_{ac}, n_{au}, n_{ic}, n_{iu}` of (in)accurate and
    (un)certain patches over all images,

    .. math:: \mathrm{PAvPU} = \frac{n_{ac} + n_{iu}}{n_{ac} + n_{au} + n_{ic} + n_{iu}}

    A prediction is class probabilities ``(C, H, W)``; with ``logits=True`` a softmax over ``C``
    is taken first. torch-uncertainty instead takes the softmax of a whole batch when any value
    of it is outside [0, 1] (a warning); here values outside [0, 1] without ``logits=True`` are an
    error naming the image. Pixels whose reference is ``ignore_index`` are left out
    (torch-uncertainty's ``ignore_mask``); a patch without a valid pixel is not counted.
    """

    main_score = "pavpu"
    additive = True
    vectorized = True
    n_stats = 4
    # one 2 x 2 image, patches of 1 pixel: accurate certain, accurate uncertain, inaccurate certain, inaccurate
    # uncertain
    examples = [{"predictions": [[[[0.9, 0.4], [0.1, 0.6]], [[0.1, 0.6], [0.9, 0.4]]]],
                 "references": [[[0, 1], [0, 1]]],
                 "overrides": {"patch_size": 1, "unc_threshold": 0.35}, "global_target": {"pavpu": 0.5}}]

    def __init__(self, *, patch_size: int | None = None, acc_threshold: float = 0.5, unc_threshold: float = 0.5,
                 logits: bool = False, ignore_index: int | None = None, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        owner = self.main_score
        self.patch_size = check_int(patch_size, "patch_size", low=1, owner=owner, allow_none=True)
        self.acc_threshold = check_number(acc_threshold, "acc_threshold", owner=owner)
        self.unc_threshold = check_number(unc_threshold, "unc_threshold", owner=owner)
        self.logits = check_bool(logits, "logits", owner=owner)
        self.ignore_index = check_int(ignore_index, "ignore_index", owner=owner, allow_none=True)

    def map_batch(self, predictions: Sequence[Any], references: Sequence[Any] | None, task_data: Any) -> np.ndarray:
        size = _required(self, "patch_size", "pavpu[patch_size=4]")
        out = np.zeros((len(predictions), 4))
        for i, p, r in _images(self, predictions, references):
            if p.ndim != 3 or r.shape != p.shape[1:]:
                raise InvalidParameterError(f"{self.main_score}: predictions[{i}] has shape {p.shape} and "
                                            f"references[{i}] {r.shape}; expected (C, H, W) and (H, W).")
            p = p.astype(np.float64)
            if self.logits:
                e = np.exp(p - p.max(axis=0))
                p = e / e.sum(axis=0)
            elif p.size and not (p.min() >= 0 and p.max() <= 1):
                raise InvalidParameterError(f"{self.main_score}: predictions[{i}] has values outside [0, 1]; expected "
                                            "probabilities, or pass logits=True to take a softmax over the classes.")
            valid = (np.ones(r.shape, dtype=bool) if self.ignore_index is None else r != self.ignore_index)
            acc = (np.argmax(p, axis=0) == r) & valid
            unc = (1.0 - p.max(axis=0)) * valid
            n = _block_sums(valid.astype(np.float64), size)
            ok = n > 0
            with np.errstate(invalid="ignore", divide="ignore"):
                accurate = _block_sums(acc.astype(np.float64), size) / n > self.acc_threshold
                uncertain = _block_sums(unc, size) / n > self.unc_threshold
            out[i] = [(ok & accurate & ~uncertain).sum(), (ok & accurate & uncertain).sum(),
                      (ok & ~accurate & ~uncertain).sum(), (ok & ~accurate & uncertain).sum()]
        return out

    def reduce(self, totals: Any) -> dict[str, Any]:
        t = np.asarray(totals, dtype=np.float64)
        if t.ndim == 1 and t.sum() == 0:
            undefined_metric("pavpu: no patch with a valid pixel; NaN.")
        return {"pavpu": divide(t[..., 0] + t[..., 3], t.sum(axis=-1))}


# --------------------------------------------------------------------------- binary pixel scores per image
def _binary_curve(scores: np.ndarray, positive: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """True and false positives at each distinct threshold, scores in descending order (torchmetrics' curve)."""
    order = np.argsort(-scores, kind="stable")
    s, y = scores[order], positive[order]
    last = np.r_[np.flatnonzero(s[1:] != s[:-1]), len(s) - 1]  # the last position of each run of equal scores
    tps = np.cumsum(y)[last].astype(np.float64)
    return tps, (last + 1) - tps


def binary_roc_auc(scores: np.ndarray, positive: np.ndarray, max_fpr: float | None = None) -> float:
    """ROC AUC (trapezoid over the distinct thresholds); with ``max_fpr`` McClish's standardized partial AUC."""
    tps, fps = _binary_curve(scores, positive)
    tpr = np.r_[0.0, tps / tps[-1]]
    fpr = np.r_[0.0, fps / fps[-1]]
    if max_fpr is None or max_fpr == 1:
        return float(np.sum((fpr[1:] - fpr[:-1]) * (tpr[1:] + tpr[:-1])) / 2)
    stop = int(np.searchsorted(fpr, max_fpr, side="right"))
    weight = (max_fpr - fpr[stop - 1]) / (fpr[stop] - fpr[stop - 1])
    tpr = np.r_[tpr[:stop], tpr[stop - 1] + weight * (tpr[stop] - tpr[stop - 1])]
    fpr = np.r_[fpr[:stop], max_fpr]
    partial = np.sum((fpr[1:] - fpr[:-1]) * (tpr[1:] + tpr[:-1])) / 2
    min_area, max_area = 0.5 * max_fpr ** 2, max_fpr
    return float(0.5 * (1 + (partial - min_area) / (max_area - min_area)))


def binary_average_precision(scores: np.ndarray, positive: np.ndarray) -> float:
    r"""Average precision :math:`\sum_k (R_k - R_{k-1}) P_k` over the distinct thresholds (descending)."""
    tps, fps = _binary_curve(scores, positive)
    precision = tps / (tps + fps)
    recall = tps / tps[-1]
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def fpr_at_recall(scores: np.ndarray, positive: np.ndarray, recall_level: float) -> float:
    """False positive rate at the first distinct threshold whose recall reaches ``recall_level`` (ties kept whole)."""
    tps, fps = _binary_curve(scores, positive)
    cutoff = int(np.flatnonzero(tps / tps[-1] >= recall_level)[0])
    return float(fps[cutoff] / fps[-1])


class _PerImageBinary(Metric):
    """``(value, 1)`` for an image where the score is defined, ``(0, 0)`` elsewhere; the mean over defined images."""

    additive = True
    vectorized = True
    n_stats = 2
    require_negative = True
    _defined = "with positive and negative pixels"
    pos_label = 1
    ignore_index: int | None = None

    def _value(self, scores: np.ndarray, positive: np.ndarray) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def _labels(self, i: int, r: np.ndarray) -> np.ndarray:
        return _integer_labels(r, f"references[{i}]", self.main_score)

    def map_batch(self, predictions: Sequence[Any], references: Sequence[Any] | None, task_data: Any) -> np.ndarray:
        out = np.zeros((len(predictions), 2))
        for i, p, r in _images(self, predictions, references):
            if p.shape != r.shape:
                raise InvalidParameterError(f"{self.main_score}: predictions[{i}] has shape {p.shape} and "
                                            f"references[{i}] {r.shape}; expected the same shape.")
            r = self._labels(i, r).ravel()
            s = p.astype(np.float64).ravel()
            if self.ignore_index is not None:
                keep = r != self.ignore_index
                s, r = s[keep], r[keep]
            positive = r == self.pos_label
            if not positive.any() or (self.require_negative and positive.all()):
                continue  # undefined on this image: left out of the mean, as torch-uncertainty does
            out[i] = (self._value(s, positive), 1.0)
        return out

    def reduce(self, totals: Any) -> dict[str, Any]:
        t = np.asarray(totals, dtype=np.float64)
        if t.ndim == 1 and t[1] == 0:
            undefined_metric(f"{self.main_score}: no image on which it is defined ({self._defined}); NaN.")
        return {self.main_score: divide(t[..., 0], t[..., 1])}


def _binary_labels(metric: Metric, i: int, r: np.ndarray, ignore_index: int | None) -> np.ndarray:
    r = _integer_labels(r, f"references[{i}]", metric.main_score)
    bad = (r != 0) & (r != 1) if ignore_index is None else (r != 0) & (r != 1) & (r != ignore_index)
    if bad.any():
        raise InvalidParameterError(f"{metric.main_score}: references[{i}] has label {int(r[bad].ravel()[0])}; "
                                    "expected 0 or 1" + (f" or ignore_index {ignore_index}" if ignore_index is not None
                                                         else "") + ".")
    return r


class SegmentationBinaryAUROC(_PerImageBinary):
    r"""Image-averaged binary ROC AUC (torch-uncertainty ``SegmentationBinaryAUROC``).

    .. math:: \mathrm{AUROC} = \frac1B \sum_b \mathrm{AUROC}_b

    over the images :math:`b` with positive and negative pixels (others are left out; none: NaN).
    :math:`\mathrm{AUROC}_b` is the trapezoid area under the ROC curve of the pixel scores against
    the labels (0 / 1); with ``max_fpr`` the McClish-standardized partial area up to that FPR
    (torchmetrics' ``binary_auroc``). Pixels labelled ``ignore_index`` are left out.
    torch-uncertainty's binned ``thresholds`` are not offered (exact curves only).
    """

    main_score = "segmentation_auroc"
    # image 1: positives 0.8, 0.4 vs negatives 0.6, 0.2 -> 3 of 4 pairs; image 2 has no negative (left out)
    examples = [{"predictions": [[[0.8, 0.6], [0.4, 0.2]], [[0.5, 0.5]]], "references": [[[1, 0], [1, 0]], [[1, 1]]],
                 "global_target": {"segmentation_auroc": 0.75}}]

    def __init__(self, *, max_fpr: float | None = None, ignore_index: int | None = None,
                 score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.max_fpr = check_number(max_fpr, "max_fpr", low=0.0, high=1.0, closed="right", owner=self.main_score,
                                    allow_none=True)
        self.ignore_index = check_int(ignore_index, "ignore_index", owner=self.main_score, allow_none=True)

    def _labels(self, i: int, r: np.ndarray) -> np.ndarray:
        return _binary_labels(self, i, r, self.ignore_index)

    def _value(self, scores: np.ndarray, positive: np.ndarray) -> float:
        return binary_roc_auc(scores, positive, self.max_fpr)


class SegmentationBinaryAveragePrecision(_PerImageBinary):
    r"""Image-averaged binary average precision (torch-uncertainty ``SegmentationBinaryAveragePrecision``).

    .. math:: \mathrm{AP}_b = \sum_k (R_{b,k} - R_{b,k-1}) P_{b,k}, \qquad \mathrm{AP} = \frac1B \sum_b \mathrm{AP}_b

    over the distinct score thresholds of image :math:`b` (descending), averaged over the images
    with a positive pixel (labels 0 / 1; ``ignore_index`` pixels left out). torch-uncertainty's
    binned ``thresholds`` are not offered.
    """

    main_score = "segmentation_average_precision"
    require_negative = False
    _defined = "with a positive pixel"
    # image 1: ranks 0.8 (+), 0.6 (-), 0.4 (+): AP = 1/2 * 1 + 1/2 * 2/3; image 2: all positive, AP = 1
    examples = [{"predictions": [[0.8, 0.6, 0.4], [0.3, 0.2]], "references": [[1, 0, 1], [1, 1]],
                 "global_target": {"segmentation_average_precision": ((0.5 + 1 / 3) + 1.0) / 2}}]

    def __init__(self, *, ignore_index: int | None = None, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.ignore_index = check_int(ignore_index, "ignore_index", owner=self.main_score, allow_none=True)

    def _labels(self, i: int, r: np.ndarray) -> np.ndarray:
        return _binary_labels(self, i, r, self.ignore_index)

    def _value(self, scores: np.ndarray, positive: np.ndarray) -> float:
        return binary_average_precision(scores, positive)


class SegmentationFPR95(_PerImageBinary):
    r"""Image-averaged false positive rate at 95 % recall (torch-uncertainty ``SegmentationFPR95``).

    For each image with pixels of both kinds (positive: reference ``== pos_label``), the FPR at the
    first distinct score threshold (descending) whose recall is at least 0.95 -- ties are never
    split, torch-uncertainty's ``_fprx_compute`` -- then the mean over those images. Lower is
    better. ``pos_label`` is 1 by default (torch-uncertainty requires it).
    """

    main_score = "segmentation_fpr95"
    higher_is_better = False
    # 20 positives at 1.0 .. 0.81 and negatives 0.9 (x1), 0.5 (x3): recall 19/20 < .95 is reached at 0.82;
    # one negative (0.9) is above: FPR 1/4
    examples = [{"predictions": [[1.0 - k / 100 for k in range(20)] + [0.9, 0.5, 0.5, 0.5]],
                 "references": [[1] * 20 + [0] * 4], "global_target": {"segmentation_fpr95": 0.25}}]

    def __init__(self, *, pos_label: int = 1, ignore_index: int | None = None, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.pos_label = check_int(pos_label, "pos_label", owner=self.main_score)
        self.ignore_index = check_int(ignore_index, "ignore_index", owner=self.main_score, allow_none=True)

    def _value(self, scores: np.ndarray, positive: np.ndarray) -> float:
        return fpr_at_recall(scores, positive, 0.95)

