"""Classification metrics: accuracy, precision / recall / F-beta, Matthews correlation.

All are additive where the label set is known: an instance maps to ``tp, fp, fn`` rows
(per label), shards merge by addition and a bootstrap resample is a count-matrix product.
The label set is known for ``average="binary"`` (the positive label), for ``"micro"``
(pooled counts need no labels) and whenever ``labels=`` is given. ``"macro"`` /
``"weighted"`` and MCC without ``labels=`` must discover the labels from the data (as
scikit-learn does), so they keep the ``(reference, prediction)`` pairs and count them in
``reduce`` (still exact, merged in shard order; intervals re-count each resample).
"""

from __future__ import annotations

import functools
import math
import warnings
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Any

from assay.deferred import np
from assay.errors import InvalidParameterError
from assay.metrics import InstanceMetric, Metric
from assay.validation import check_bool, check_choice, check_labels, check_number
from assay_classic._inputs import is_collection, one_reference_each, reference_list
from assay_classic.functional._common import UndefinedMetricWarning, ZeroDivision, check_zero_division
from assay_classic.functional.classification import (
    AVERAGES,
    label_count_rows,
    matthews_from_counts,
    multilabel_count_rows,
    pair_array,
    pair_counts,
    precision_recall_fscore,
    sorted_labels,
)

__all__ = ["Accuracy", "F1", "MatthewsCorrcoef", "Precision", "Recall"]



# The numpy types below are looked up on first use, not at import: numpy is imported on first use
# (assay.deferred), and creating a metric (load_metric) needs no array.
@functools.cache
def _label_set() -> Any:
    """The prediction type of a multi-label instance: a list, tuple, set or array of labels."""
    return list | tuple | set | frozenset | np.ndarray


@functools.cache
def _scalar_types() -> tuple[tuple[type, ...], tuple[type, ...], tuple[type, ...]]:
    """The scalar label types, the numeric ones and the text ones."""
    return ((int, float, bool, str, np.integer, np.floating, np.bool_, np.str_),
            (int, float, bool, np.integer, np.floating, np.bool_), (str, np.str_))


class Accuracy(InstanceMetric):
    r"""Share of instances whose prediction is one of its references.

    .. math:: \mathrm{accuracy} = \frac1n \sum_i [\hat y_i \in R_i]

    With one reference per instance this is ``sklearn.metrics.accuracy_score``. Additive:
    each instance maps to ``(hit, 1)``; the interval of a proportion is available as
    Wilson's. No data gives NaN.

    References
    ----------
    scikit-learn ``accuracy_score``; unitxt ``Accuracy`` (prediction among the references).

    Examples
    --------
    >>> Accuracy().update([3, 799, 50], [[5], [800], [50]]).compute_scores()["accuracy"]
    0.3333333333333333
    """

    main_score = "accuracy"
    prediction_type = Hashable
    examples = [{"predictions": [1, 2, 3, 3], "references": [[1], [2], [2], [1, 3]],
                 "global_target": {"accuracy": 0.75}}]

    def map_batch(self, predictions: Sequence[Any], references: Sequence[Any] | None, task_data: Any) -> Any:
        if references is None:
            raise InvalidParameterError("accuracy needs references; got None.")
        check_labels(predictions, "predictions", owner="accuracy")
        fast = _one_scalar_reference_each(references)
        if fast is not None:
            check_labels(fast, "references", owner="accuracy")
            rows = _equal_rows(predictions, fast)
            if rows is not None:
                return rows
        for i, refs in enumerate(references):
            check_labels(reference_list(refs), f"references[{i}]", owner="accuracy")
        return super().map_batch(predictions, references, task_data)

    def compute_instance(self, prediction: Any, references: Any, task_data: Any = None) -> float:
        return float(any(prediction == r for r in reference_list(references)))


def _one_scalar_reference_each(references: Any) -> Any:
    """The references as one flat sequence of scalars, when each instance has exactly one; else None.

    The fast path of the everyday call (``evaluate(preds, refs)`` with one label per instance):
    the type test is one C-speed pass over the types, not a Python loop over the values.
    """
    if isinstance(references, np.ndarray):
        return references if references.ndim == 1 and references.dtype.kind in "biufU" else None
    if not isinstance(references, (list, tuple)):
        return None
    types = set(map(type, references))
    scalars = _scalar_types()[0]
    if all(issubclass(t, scalars) for t in types):
        return references
    if types == {list} and set(map(len, references)) == {1}:
        flat = [r[0] for r in references]
        return flat if all(issubclass(t, scalars) for t in set(map(type, flat))) else None
    return None


def _kind_of(values: Any) -> str | None:
    """``"numbers"`` or ``"strings"`` when every value is one of them (by type, one pass); else None."""
    if isinstance(values, np.ndarray):
        return "numbers" if values.dtype.kind in "biuf" else "strings" if values.dtype.kind == "U" else None
    types = set(map(type, values))
    _, numbers, text = _scalar_types()
    if all(issubclass(t, numbers) for t in types):
        return "numbers"
    if all(issubclass(t, text) for t in types):
        return "strings"
    return None


def _equal_rows(predictions: Any, references: Any) -> np.ndarray | None:
    """Rows ``(predictions[i] == references[i], 1)``, vectorized where both sides are numbers or both strings.

    Equal to the Python comparison the slow path makes (``1 == 1.0 == True``); None when
    either side mixes numbers and strings, or the sides differ in kind (the slow path decides,
    value by value: a string never equals a number). The rows are written in place (no
    temporary columns: at 10 million instances the rows are the only large allocation).
    """
    kind = _kind_of(predictions)
    if kind is None or _kind_of(references) != kind:
        return None
    p, r = np.asarray(predictions), np.asarray(references)
    if p.ndim != 1 or r.shape != p.shape:
        return None
    rows = np.empty((p.size, 2))
    np.equal(p, r, out=rows[:, 0], casting="unsafe")
    rows[:, 1] = 1.0
    return rows


def _chunk_kind(chunk: Any) -> str:
    if isinstance(chunk, np.ndarray):
        return "strings" if chunk.dtype.kind == "U" else "numbers"
    return "other labels"


def _check_chunk_kinds(metric: Metric, before: tuple[int, int]) -> None:
    """Gathered label pairs of one kind only: numbers, strings, or other (kept as a list).

    On a mix, the state is restored to ``before`` (chunks, n) and the error raised.
    """
    if metric.additive:
        return
    state = metric.state
    kinds = {_chunk_kind(c) for c in state.chunks}
    if len(kinds) > 1:
        del state.chunks[before[0]:]
        state.n = before[1]
        raise InvalidParameterError(
            f"{metric.main_score} received labels of different kinds across updates ({', '.join(sorted(kinds))}); "
            "use one label type throughout (scikit-learn rejects mixed label types)."
        )


class _LabelCountMetric(Metric):
    """Shared machinery: per-label ``tp, fp, fn`` counts, additive when the label set is known."""

    main_score = "f1"

    def __init__(
        self,
        *,
        average: str = "binary",
        labels: Sequence[Hashable] | None = None,
        pos_label: Hashable = 1,
        multi_label: bool = False,
        zero_division: ZeroDivision = "warn",
        score_prefix: str = "",
    ) -> None:
        super().__init__(score_prefix=score_prefix)
        check_choice(average, "average", AVERAGES, owner=self.main_score)
        if multi_label and average == "binary":
            raise InvalidParameterError(
                f"The 'average' parameter of {self.main_score} cannot be 'binary' with multi_label=True; "
                "use 'micro', 'macro' or 'weighted'."
            )
        if labels is not None and (isinstance(labels, str) or not is_collection(labels) or len(labels) == 0):
            raise InvalidParameterError(
                f"The 'labels' parameter of {self.main_score} must be a non-empty list; got {labels!r}.")
        if labels is not None:
            check_labels(list(labels), "labels", owner=self.main_score)
        self.average = average
        self.labels = list(labels) if labels is not None else None
        self.pos_label = pos_label
        self.multi_label = check_bool(multi_label, "multi_label", owner=self.main_score)
        self.zero_division = check_zero_division(zero_division, metric=self.main_score)
        if self.multi_label:
            self.prediction_type = _label_set()
        self._layout()

    def _layout(self) -> None:
        """The statistics layout, from the tracked labels (None: pooled micro counts, or gathered pairs)."""
        self._tracked: list[Hashable] | None
        if self.average == "binary":
            self._tracked = [self.pos_label]
        elif self.labels is not None:
            self._tracked = self.labels
        else:
            self._tracked = None
        pooled = self.average == "micro" and self.labels is None
        self.additive = self._tracked is not None or pooled
        self.vectorized = self.additive
        self.n_stats = 3 * len(self._tracked) if self._tracked is not None else (3 if pooled else None)

    #: the largest count-row table (instances x 3 x labels) label discovery builds for the intervals
    DISCOVERY_CELLS = 1 << 25

    def additive_for_intervals(self, intermediates: Any) -> tuple[Metric, np.ndarray] | None:
        """Label discovery: the labels of the gathered pairs, bound as ``labels=``, and the count rows.

        ``labels=`` listing exactly the labels that occur gives the scores of the gathered path
        (scikit-learn's ``unique_labels``: the sorted union of references and predictions), so
        the intervals resample additive ``tp, fp, fn`` rows, exactly as the ``labels=`` path does
        (same numbers as a run with ``labels=`` those labels). Not for label sets
        (``multi_label``), nor when the rows would exceed :attr:`DISCOVERY_CELLS` cells.
        """
        if self.additive or self.multi_label or not len(intermediates):
            return None
        if isinstance(intermediates, np.ndarray):
            truths, preds = intermediates[:, 0].tolist(), intermediates[:, 1].tolist()
        else:
            truths, preds = [t for t, _ in intermediates], [p for _, p in intermediates]
        labels = sorted_labels(set(truths) | set(preds))
        if len(truths) * 3 * (len(labels) + 1) > self.DISCOVERY_CELLS:
            return None
        twin = self.clone()
        assert isinstance(twin, _LabelCountMetric)
        twin.labels = list(labels)
        twin._layout()
        return twin, label_count_rows(truths, preds, twin._tracked or [])

    prediction_type: Any = Hashable

    # ------------------------------------------------------------------ map
    def _pairs(self, predictions: Sequence[Any], references: Sequence[Any] | None) -> tuple[list, list]:
        """``(truths, predictions)`` as lists of labels (label sets with ``multi_label``).

        NaN, infinity and ``None`` are missing values, not labels: an error naming the
        instance (NaN is not even equal to itself, so it would count as a miss for one
        average and vanish from another).
        """
        if not self.multi_label:
            truths = one_reference_each(references, metric=self.main_score)
            for i, t in enumerate(truths):
                if not isinstance(t, Hashable):
                    raise InvalidParameterError(
                        f"{self.main_score} expects one label per reference; instance {i} has {t!r:.80}. "
                        "Use multi_label=true for label sets."
                    )
            check_labels(truths, "references", owner=self.main_score)
            check_labels(predictions, "predictions", owner=self.main_score)
            return truths, list(predictions)
        if references is None:
            raise InvalidParameterError(f"{self.main_score} needs references; got None.")
        truths = []
        for i, ref in enumerate(references):
            ref = list(ref) if is_collection(ref) else [ref]
            if len(ref) == 1 and is_collection(ref[0]):  # [[labels]]: the one reference is a label set
                ref = list(ref[0])
            elif any(is_collection(r) for r in ref):
                raise InvalidParameterError(
                    f"{self.main_score} (multi_label) expects one label set per instance; instance {i} has {ref!r:.80}."
                )
            check_labels(ref, f"references[{i}]", owner=self.main_score)
            truths.append(ref)
        preds = [list(p) for p in predictions]
        for i, p in enumerate(preds):
            check_labels(p, f"predictions[{i}]", owner=self.main_score)
        return truths, preds

    def map_batch(self, predictions: Sequence[Any], references: Sequence[Any] | None, task_data: Any) -> Any:
        truths, preds = self._pairs(predictions, references)
        if self.average == "binary":
            present = set(truths) | set(preds)
            if len(present) > 2:
                raise InvalidParameterError(
                    f"{self.main_score} with average='binary' needs at most two labels; got {len(present)} "
                    f"({sorted_labels(present)[:5]} ...). Use average='micro', 'macro' or 'weighted'."
                )
            if len(present) == 2 and self.pos_label not in present:
                raise InvalidParameterError(
                    f"The 'pos_label' parameter of {self.main_score} must be one of the labels "
                    f"{sorted_labels(present)}. Got {self.pos_label!r} instead."
                )
        if self.multi_label:
            if self.additive:
                return multilabel_count_rows(truths, preds, self._tracked)
            return [(frozenset(t), frozenset(p)) for t, p in zip(truths, preds)]
        if self._tracked is not None:
            return label_count_rows(truths, preds, self._tracked)
        if self.additive:  # pooled micro: (hit, miss, miss)
            hit = np.fromiter((t == p for t, p in zip(truths, preds)), dtype=np.float64, count=len(preds))
            return np.stack([hit, 1.0 - hit, 1.0 - hit], axis=1)
        arr = pair_array(truths, preds)  # numbers / strings: an array, fast to resample and count
        return arr if arr is not None else list(zip(truths, preds))

    # ------------------------------------------------------------------ reduce
    def counts(self, intermediates: Any) -> np.ndarray:
        """Per-label counts ``(..., K, 3)`` of summed statistics or of gathered pairs."""
        if self.additive:
            totals = np.asarray(intermediates, dtype=np.float64)
            return totals.reshape(*totals.shape[:-1], -1, 3)
        if isinstance(intermediates, np.ndarray):
            return pair_counts(intermediates)
        pairs = list(intermediates)
        if self.multi_label:
            labels = sorted_labels(label for t, p in pairs for label in (*t, *p))
            return multilabel_count_rows([t for t, _ in pairs], [p for _, p in pairs], labels).sum(0).reshape(-1, 3)
        tally = Counter(pairs)
        labels = sorted_labels(label for pair in tally for label in pair)
        index = {label: i for i, label in enumerate(labels)}
        out = np.zeros((len(labels), 3))
        for (t, p), c in tally.items():
            if t == p:
                out[index[t], 0] += c
            else:
                out[index[p], 1] += c
                out[index[t], 2] += c
        return out

    def update(self, predictions: Any, references: Any = None, task_data: Any = None) -> _LabelCountMetric:
        before = (len(self.state.chunks), self.state.n)
        super().update(predictions, references, task_data)
        _check_chunk_kinds(self, before)
        return self

    def merge(self, *others: Any) -> _LabelCountMetric:
        before = (len(self.state.chunks), self.state.n)
        super().merge(*others)
        _check_chunk_kinds(self, before)
        return self

    def instance_scores(self, intermediates: Any) -> list[dict[str, float]]:
        """Scores of each instance alone; undefined ratios there take ``zero_division`` silently."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            if self.additive or self.multi_label or not len(intermediates):
                return super().instance_scores(intermediates)
            # one instance alone has its reference label and its predicted label: a hit is one
            # label with tp = 1; a miss is two labels, fn = 1 for the reference and fp = 1 for the
            # prediction. Pad hits with a NaN row (left out of the averages) and reduce all at once.
            pairs = intermediates if isinstance(intermediates, np.ndarray) else None
            hit = (pairs[:, 0] == pairs[:, 1]) if pairs is not None else np.array([t == p for t, p in intermediates])
            counts = np.zeros((len(hit), 2, 3))
            counts[hit, 0, 0] = 1.0
            counts[hit, 1, :] = self._pad
            counts[~hit, 0, 2] = 1.0
            counts[~hit, 1, 1] = 1.0
            scores = self.scores_from_counts(counts)
            keys = list(scores)
            columns = [np.broadcast_to(np.asarray(scores[k], dtype=float), hit.shape).tolist() for k in keys]
            return [dict(zip(keys, row)) for row in zip(*columns)]

    #: the padding row of a one-label instance (NaN: left out of precision / recall averages)
    _pad = math.nan

    def reduce(self, intermediates: Any) -> dict[str, Any]:
        return self.scores_from_counts(self.counts(intermediates))

    def scores_from_counts(self, counts: np.ndarray) -> dict[str, Any]:
        """Scores of per-label counts ``(..., K, 3)`` (leading axes: batches)."""
        raise NotImplementedError

    def _prf(self, counts: np.ndarray, warn_for: str) -> tuple[Any, Any, Any]:
        return precision_recall_fscore(
            counts, average=self.average, zero_division=self.zero_division, warn_for=(warn_for,)
        )


class Precision(_LabelCountMetric):
    r"""Precision, :math:`tp / (tp + fp)`, averaged as scikit-learn's ``precision_score``.

    .. math:: P = \frac{tp}{tp + fp}

    per label (pooled counts for ``micro``); a zero denominator gives ``zero_division``.

    Parameters
    ----------
    average : {"binary", "micro", "macro", "weighted"}
        ``binary`` scores ``pos_label``; ``micro`` pools the counts of all labels;
        ``macro`` is the unweighted mean over labels; ``weighted`` weights by support.
    labels : list, optional
        The labels to score (default: every label seen in references or predictions).
    pos_label : label
        The positive label of ``average="binary"`` (default 1).
    multi_label : bool
        Predictions and references are label sets (multi-label classification).
    zero_division : {"warn", 0.0, 1.0, nan}
        The value of an undefined ratio (``"warn"``: 0.0 and a warning).

    References
    ----------
    scikit-learn, ``sklearn.metrics.precision_recall_fscore_support``.
    """

    main_score = "precision"
    # refs 0 1 0 1 1, preds 0 1 1 0 1: tp 2 (idx 1, 4), fp 1 (idx 2), fn 1 (idx 3)
    examples = [{"predictions": [0, 1, 1, 0, 1], "references": [[0], [1], [0], [1], [1]],
                 "global_target": {"precision": 2 / 3}}]

    def scores_from_counts(self, counts: np.ndarray) -> dict[str, Any]:
        return {"precision": self._prf(counts, "precision")[0]}


class Recall(_LabelCountMetric):
    r"""Recall, :math:`tp / (tp + fn)`, averaged as scikit-learn's ``recall_score``.

    .. math:: R = \frac{tp}{tp + fn}

    per label (pooled counts for ``micro``); a zero denominator gives ``zero_division``.
    Options as :class:`Precision`.

    References
    ----------
    scikit-learn, ``sklearn.metrics.precision_recall_fscore_support``.
    """

    main_score = "recall"
    examples = [{"predictions": [0, 1, 1, 0, 1], "references": [[0], [1], [0], [1], [1]],
                 "global_target": {"recall": 2 / 3}},
                {"predictions": ["a", "b", "b"], "references": [["a"], ["a"], ["b"]],
                 "overrides": {"average": "macro"}, "global_target": {"recall": (1 / 2 + 1) / 2}}]

    def scores_from_counts(self, counts: np.ndarray) -> dict[str, Any]:
        return {"recall": self._prf(counts, "recall")[1]}


class F1(_LabelCountMetric):
    r"""F-beta score (F1 by default), averaged as scikit-learn's ``fbeta_score``.

    .. math:: F_\beta = \frac{(1 + \beta^2)\, tp}{(1 + \beta^2)\, tp + \beta^2 fn + fp}

    per label (or on pooled counts for ``micro``); a zero denominator gives
    ``zero_division``. Options as :class:`Precision`, plus ``beta`` (default 1).

    References
    ----------
    van Rijsbergen (1979), *Information Retrieval*; scikit-learn ``fbeta_score``.

    Examples
    --------
    >>> F1(average="macro").update([0, 1, 1], [0, 1, 0]).compute_scores()["f1"]
    0.6666666666666666
    """

    main_score = "f1"
    examples = [
        {"predictions": [0, 1, 1, 0], "references": [[0], [1], [0], [1]], "global_target": {"f1": 0.5}},
    ]

    def __init__(
        self,
        *,
        average: str = "binary",
        labels: Sequence[Hashable] | None = None,
        pos_label: Hashable = 1,
        beta: float = 1.0,
        multi_label: bool = False,
        zero_division: ZeroDivision = "warn",
        score_prefix: str = "",
    ) -> None:
        super().__init__(
            average=average,
            labels=labels,
            pos_label=pos_label,
            multi_label=multi_label,
            zero_division=zero_division,
            score_prefix=score_prefix,
        )
        self.beta = check_number(beta, "beta", low=0, owner="f1")

    def scores_from_counts(self, counts: np.ndarray) -> dict[str, Any]:
        f = precision_recall_fscore(
            counts, average=self.average, beta=self.beta, zero_division=self.zero_division, warn_for=("f-score",)
        )[2]
        return {"f1": f}


class MatthewsCorrcoef(_LabelCountMetric):
    r"""Matthews correlation coefficient (multiclass :math:`R_K`), as ``sklearn.metrics.matthews_corrcoef``.

    .. math::

        MCC = \frac{c\, s - \sum_k p_k t_k}{\sqrt{(s^2 - \sum_k p_k^2)(s^2 - \sum_k t_k^2)}}

    with :math:`t_k` / :math:`p_k` the true / predicted count of label :math:`k`, :math:`c`
    the number correct and :math:`s` the number of instances; 0.0 when the denominator is
    zero. Additive when ``labels=`` lists every label; otherwise the pairs are kept.

    References
    ----------
    Gorodkin (2004), "Comparing two K-category assignments by a K-category correlation
    coefficient"; scikit-learn ``matthews_corrcoef``.
    """

    main_score = "matthews_corrcoef"
    examples = [
        {"predictions": [1, 1, 0, 0, 1], "references": [[1], [0], [0], [0], [1]],
         "global_target": {"matthews_corrcoef": 2 / 3}},
    ]

    def __init__(self, *, labels: Sequence[Hashable] | None = None, score_prefix: str = "") -> None:
        super().__init__(average="macro", labels=labels, zero_division=0.0, score_prefix=score_prefix)

    def map_batch(self, predictions: Sequence[Any], references: Sequence[Any] | None, task_data: Any) -> Any:
        if self.labels is not None:
            truths, preds = self._pairs(predictions, references)
            known = set(self.labels)
            for i, (t, p) in enumerate(zip(truths, preds)):
                if t not in known or p not in known:
                    raise InvalidParameterError(
                        f"matthews_corrcoef: instance {i} has a label outside labels={self.labels!r:.80} "
                        f"(reference {t!r}, prediction {p!r}); MCC needs every label listed."
                    )
        return super().map_batch(predictions, references, task_data)

    _pad = 0.0  # an empty label changes no MCC sum

    def scores_from_counts(self, counts: np.ndarray) -> dict[str, Any]:
        value = matthews_from_counts(counts)
        if np.ndim(value) == 0 and np.isnan(value):  # no data at all (resampled batches never are empty)
            warnings.warn("matthews_corrcoef is undefined without data; the score is NaN.", UndefinedMetricWarning,
                          stacklevel=2)
        return {"matthews_corrcoef": value}
