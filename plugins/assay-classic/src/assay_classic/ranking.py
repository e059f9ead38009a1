"""ROC AUC as a metric: binary (scores against labels), multiclass and multilabel (one-vs-rest)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Sequence
from typing import Any

from assay.deferred import np
from assay.errors import InvalidParameterError, UndefinedMetricWarning
from assay.metrics import Metric
from assay.validation import check_array, check_choice, check_labels, undefined_metric
from assay_classic._inputs import one_reference_each
from assay_classic.functional.ranking import binary_labels, roc_auc_from_split

__all__ = ["AUROC_CONVENTIONS", "AVERAGES", "MulticlassRocAuc", "MultilabelRocAuc", "RocAuc"]


class RocAuc(Metric):
    r"""Area under the ROC curve of scores (predictions) against binary labels (references).

    .. math::

        AUC = \frac{1}{P N} \sum_{i \in pos} \sum_{j \in neg}
              \left( [s_i > s_j] + \tfrac12 [s_i = s_j] \right)

    the Mann-Whitney statistic with average ranks, equal to the trapezoid area under
    scikit-learn's ROC curve with tie groups (``sklearn.metrics.roc_auc_score``). Computed by
    sorting each class and merging (our own numpy; see
    :mod:`assay_classic.functional.ranking`). The positive label is ``pos_label``, or the
    greater of the two labels (scikit-learn's rule; labels must then be numbers or booleans).
    A single class gives NaN with a warning. Not additive: the state keeps the
    ``(score, label)`` pairs; no instance scores.

    References
    ----------
    Hanley & McNeil (1982), "The meaning and use of the area under a ROC curve";
    Fawcett (2006), "An introduction to ROC analysis".
    """

    main_score = "roc_auc"
    prediction_type = float
    per_instance = False
    examples = [{"predictions": [0.1, 0.4, 0.35, 0.8], "references": [[0], [0], [1], [1]],
                 "global_target": {"roc_auc": 0.75}}]

    def __init__(self, *, pos_label: Hashable | None = None, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.pos_label = pos_label

    def map_batch(self, predictions: Sequence[Any], references: Sequence[Any] | None, task_data: Any) -> np.ndarray:
        labels = one_reference_each(references, metric="roc_auc")
        # finite scores, as scikit-learn's roc_auc_score asks (an error names the first NaN or inf)
        scores = check_array(predictions, "predictions", owner="roc_auc", ndim=1, shape="(n,) (one score per instance)",
                             what="scores")
        check_labels(labels, "references", owner="roc_auc")
        if self.pos_label is not None:
            coded = np.fromiter((lab == self.pos_label for lab in labels), dtype=np.float64, count=len(labels))
        else:
            try:
                coded = check_array(labels, "references", owner="roc_auc", ndim=1, what="labels")
            except InvalidParameterError as exc:
                raise InvalidParameterError(
                    f"{exc} roc_auc references must be numbers or booleans unless pos_label= names the positive "
                    "label."
                ) from None
        return np.column_stack([scores, coded])

    def map(self, prediction: Any, references: Any, task_data: Any = None) -> np.ndarray:
        return self.map_batch([prediction], [references], None)[0]

    def reduce(self, intermediates: Any) -> dict[str, float]:
        arr = np.asarray(intermediates, dtype=np.float64).reshape(-1, 2)
        positive = binary_labels(arr[:, 1], 1.0 if self.pos_label is not None else None)
        return {"roc_auc": roc_auc_from_split(arr[positive, 0], arr[~positive, 0])}


#: the accepted values of ``average=`` and ``convention=`` for the multiclass / multilabel ROC AUC
AVERAGES = ("macro", "weighted", "micro")
AUROC_CONVENTIONS = ("sklearn", "torchmetrics")


class _OneVsRestRocAuc(Metric):
    r"""One-vs-rest ROC AUC of score vectors (shared by the multiclass and multilabel metrics).

    Per class ``c``: the binary ROC AUC of column ``c`` of the scores with "class ``c``" as the
    positive label (:func:`assay.functional.roc_auc_from_split`, ties counting one half).
    ``macro``: the mean over classes; ``weighted``: weighted by the number of positives of each
    class; ``micro``: one ROC AUC over every (instance, class) pair, the indicator matrix and
    the scores flattened. Per-class values are reported as ``roc_auc_<c>`` as well.
    """

    main_score = "roc_auc"
    prediction_type = Any  # a score vector per instance; checked as an (n, n_classes) array
    per_instance = False
    _kind = ""

    def __init__(self, *, average: str = "macro", convention: str = "sklearn", score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.average = check_choice(average, "average", AVERAGES, owner=self._owner)
        self.convention = check_choice(convention, "convention", AUROC_CONVENTIONS, owner=self._owner)

    @property
    def _owner(self) -> str:
        return f"roc_auc_{self._kind}"

    def _scores_of(self, predictions: Sequence[Any], offset: int = 0) -> np.ndarray:
        scores = check_array(predictions, "predictions", owner=self._owner, ndim=2,
                             shape="(n, n_classes) (one score per class and instance)", what="scores")
        return scores

    def reduce(self, intermediates: Any) -> dict[str, float]:
        rows = np.asarray(intermediates, dtype=np.float64)
        if rows.size == 0:
            return {"roc_auc": undefined_metric(f"{self._owner}: no instances; NaN.")}
        c = rows.shape[1] // 2
        scores, truth = rows[:, :c], rows[:, c:].astype(bool)
        if self.convention == "torchmetrics":
            scores = self._torchmetrics_normalised(scores)
        per_class = np.empty(c)
        absent = []
        for k in range(c):
            pos = truth[:, k]
            if pos.all() or not pos.any():
                absent.append(k)
                per_class[k] = 0.0 if self.convention == "torchmetrics" else math.nan
                continue
            per_class[k] = roc_auc_from_split(scores[pos, k], scores[~pos, k])
        support = truth.sum(axis=0).astype(np.float64)
        if absent:
            what = "no positive or no negative instance"
            fill = "counts as 0 (torchmetrics)" if self.convention == "torchmetrics" else "is NaN (scikit-learn)"
            warnings.warn(f"{self._owner}: class(es) {absent} have {what}: their ROC AUC {fill}.",
                          UndefinedMetricWarning, stacklevel=2)
        if self.average == "micro":
            flat = truth.ravel()
            value = (roc_auc_from_split(scores.ravel()[flat], scores.ravel()[~flat]) if flat.any() and not flat.all()
                     else undefined_metric(f"{self._owner}: micro average with one class only; NaN."))
        elif self.average == "weighted":
            # scikit-learn: a NaN class makes the average NaN (even at weight 0); torchmetrics: 0 x its weight
            value = float(np.sum(per_class * support) / support.sum()) if support.sum() else math.nan
        else:
            value = float(np.mean(per_class))
        out = {"roc_auc": value}
        out.update({f"roc_auc_{k}": float(per_class[k]) for k in range(c)})
        return out

    def _torchmetrics_normalised(self, scores: np.ndarray) -> np.ndarray:
        return scores


class MulticlassRocAuc(_OneVsRestRocAuc):
    r"""Multiclass ROC AUC, one-vs-rest: scores ``(n, C)`` against class indices ``0..C-1``.

    ``average``: ``"macro"`` (default) mean of the per-class AUCs, ``"weighted"`` weighted by
    class support, ``"micro"`` one AUC over the one-hot labels and the scores flattened (as
    ``sklearn.metrics.roc_auc_score(y, s, multi_class="ovr", average=...)``; torchmetrics'
    ``MulticlassAUROC`` has no micro average, so ``convention="torchmetrics"`` rejects it).
    ``roc_auc_<c>`` reports each class's AUC (``average=None`` in scikit-learn, ``"none"`` in
    torchmetrics).

    ``convention``:

    - ``"sklearn"`` (default): rows must be probabilities summing to 1 (scikit-learn's rule,
      to 1e-8 relative / ... as ``np.allclose``); a class without positives (or without
      negatives) has a NaN AUC, and the macro / weighted average is NaN, with an
      :class:`~assay.errors.UndefinedMetricWarning` naming the class.
    - ``"torchmetrics"``: scores outside [0, 1] are turned into probabilities by a softmax
      over each row first (``MulticlassAUROC``'s rule); such a class's AUC counts as 0 (with
      the warning), weighted by its support in ``weighted``.
    """

    _kind = "multiclass"
    examples = [{"predictions": [[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.5, 0.4, 0.1]],
                 "references": [0, 1, 2, 1],
                 # class 0: pos .7 vs neg .2 .1 .5 -> 1; class 1: pos .5 .4 vs .2 .3 -> 1; class 2: .6 vs .1 .3 .1 -> 1
                 "global_target": {"roc_auc": 1.0}}]

    def __init__(self, *, average: str = "macro", convention: str = "sklearn", score_prefix: str = "") -> None:
        super().__init__(average=average, convention=convention, score_prefix=score_prefix)
        if self.convention == "torchmetrics" and self.average == "micro":
            raise InvalidParameterError(
                "roc_auc_multiclass: torchmetrics' MulticlassAUROC has no micro average; use average='macro' or "
                "'weighted', or convention='sklearn' (scikit-learn's one-hot micro average).")

    def map_batch(self, predictions: Sequence[Any], references: Sequence[Any] | None, task_data: Any) -> np.ndarray:
        scores = self._scores_of(predictions)
        n, c = scores.shape
        if c < 2:
            raise InvalidParameterError(
                f"{self._owner}: predictions need a score per class, at least 2 columns; got shape {scores.shape}.")
        labels = check_labels(one_reference_each(references, metric=self._owner), "references", owner=self._owner,
                              integer=True, n_classes=c)
        if len(labels) != n:
            raise InvalidParameterError(f"{self._owner}: {n} score rows but {len(labels)} references.")
        if self.convention == "sklearn":
            sums = scores.sum(axis=1)
            bad = np.flatnonzero(~np.isclose(sums, 1.0))
            if bad.size:
                i = int(bad[0])
                raise InvalidParameterError(
                    f"{self._owner}: predictions[{i}] sums to {sums[i]:.6g}, not 1: scikit-learn's one-vs-rest ROC AUC "
                    "takes probabilities (rows summing to 1); normalise the scores, or use convention='torchmetrics' "
                    "(softmax of scores outside [0, 1]).")
        onehot = np.zeros((n, c))
        onehot[np.arange(n), labels] = 1.0
        return np.hstack([scores, onehot])

    def _torchmetrics_normalised(self, scores: np.ndarray) -> np.ndarray:
        if scores.size and (scores.min() < 0 or scores.max() > 1):
            from scipy.special import softmax

            return np.asarray(softmax(scores, axis=1))
        return scores


class MultilabelRocAuc(_OneVsRestRocAuc):
    r"""Multilabel ROC AUC: scores ``(n, L)`` against 0 / 1 indicator rows ``(n, L)``.

    Each label is its own binary problem. ``average``: ``"macro"`` (default), ``"weighted"``
    (by the number of positives of each label), ``"micro"`` (every (instance, label) pair
    pooled), as ``sklearn.metrics.roc_auc_score`` and torchmetrics' ``MultilabelAUROC``;
    ``roc_auc_<l>`` reports each label's AUC. A reference is the indicator row of its
    instance (``[0, 1, 1]``, or ``[[0, 1, 1]]`` as a one-element reference list).

    ``convention``: ``"sklearn"`` (default) gives a label without positives or without
    negatives a NaN AUC (and NaN averages), with an :class:`~assay.errors.UndefinedMetricWarning`;
    ``"torchmetrics"`` applies a sigmoid to scores outside [0, 1] (``MultilabelAUROC``'s rule)
    and counts such a label's AUC as 0 (with the warning).
    """

    _kind = "multilabel"
    examples = [{"predictions": [[0.9, 0.2], [0.3, 0.8], [0.6, 0.4], [0.1, 0.7]],
                 "references": [[1, 0], [0, 1], [0, 0], [1, 1]],
                 # label 0: pos .9 .1 vs neg .3 .6 -> (2 + 0) / 4 = .5; label 1: pos .8 .7 vs .2 .4 -> 1
                 "global_target": {"roc_auc": 0.75}}]

    def map_batch(self, predictions: Sequence[Any], references: Sequence[Any] | None, task_data: Any) -> np.ndarray:
        scores = self._scores_of(predictions)
        n, c = scores.shape
        if references is None:
            raise InvalidParameterError(f"{self._owner} needs references (indicator rows); got None.")
        seq = (list, tuple, np.ndarray)
        rows = [ref[0] if isinstance(ref, seq) and len(ref) == 1 and isinstance(ref[0], seq) else ref
                for ref in references]
        truth = check_array(rows, "references", owner=self._owner, ndim=2, shape=f"(n, {c}) indicator rows",
                            what="indicators")
        if truth.shape != (n, c):
            raise InvalidParameterError(
                f"{self._owner}: references must be indicator rows of shape ({n}, {c}), like the scores; "
                f"got shape {truth.shape}.")
        bad = np.argwhere((truth != 0) & (truth != 1))
        if bad.size:
            i, k = (int(x) for x in bad[0])
            raise InvalidParameterError(
                f"{self._owner}: references[{i}][{k}] is {truth[i, k]:g}; indicators are 0 or 1.")
        return np.hstack([scores, truth])

    def _torchmetrics_normalised(self, scores: np.ndarray) -> np.ndarray:
        if scores.size and (scores.min() < 0 or scores.max() > 1):
            from scipy.special import expit

            return np.asarray(expit(scores))
        return scores
