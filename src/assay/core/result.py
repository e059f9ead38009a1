"""The result of an evaluation: an immutable, additive tally.

>>> from assay import EvaluationResult
>>> a = EvaluationResult(correct_num=3, gold_set_size=4, sentence_num=1)
>>> b = EvaluationResult(correct_num=5, gold_set_size=6, sentence_num=2)
>>> total = a + b
>>> total.correct_num, total.gold_set_size, total.sentence_num, total.accuracy
(8, 10, 3, 0.8)
>>> [s.correct_num for s in total.shards]
[3, 5]

``EvaluationResult`` is a :class:`~assay.core.tally.Tally`: the counts are additive
fields, ``shards`` is gathered, and the states of the metrics that rode along
(``metric_tally``) merge with it, so results that carry metrics add too.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

import attrs

from assay.core.tally import Tally, additive, kept, merged_by, values_equal
from assay.errors import InvalidParameterError, UndefinedMetricWarning

__all__ = ["EvaluationResult", "UndefinedMetricWarning"]


def ratio(numerator: int, denominator: int) -> float:
    """``numerator / denominator``, or NaN (silently) when the denominator is zero."""
    return numerator / denominator if denominator else math.nan


def _check_count(name: str) -> Any:
    def check(instance: Any, attribute: Any, value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidParameterError(
                f"The '{name}' field of EvaluationResult must be a non-negative int. Got {value!r} instead."
            )
    return check


def _check_feature_count(instance: Any, attribute: Any, value: Any) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise InvalidParameterError(
            f"The 'feature_count' field of EvaluationResult must be a non-negative int or None. Got {value!r} instead."
        )


def _freeze_mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(value or {}))


def _merge_tallies(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    return a + b


@attrs.frozen
class EvaluationResult(Tally):
    """What an evaluation counted: ``correct_num`` right out of ``gold_set_size``, over ``sentence_num`` items.

    Results are immutable and add with ``+`` (and ``sum``): the tallies add, ``shards``
    concatenate, so the total of a sharded run is the sum of its shards, in shard order.
    The fields below are also the constructor's parameters.

    Attributes
    ----------
    correct_num : int
        Items (tokens, edges ...) the system got right.
    gold_set_size : int
        Items in the gold standard.
    sentence_num : int
        Pool items (sentences) evaluated.
    feature_count : int or None
        ``len(w_vector)`` when the model has a length, else None.
    shards : tuple of EvaluationResult
        The per-shard results, in shard order (empty for a single shard's own result).
    metrics : mapping
        Further named values computed on top of the tally: the scores of the metrics that
        rode along (and their ``<name>_ci_low`` / ``_ci_high`` intervals), else whatever
        was given (empty by default). Read-only.
    metric_tally : Tally or None
        The merged states of the metrics computed over the items
        (:class:`assay.metrics.sharded.MetricsTally`); ``metrics`` is derived from it.

    Notes
    -----
    ``accuracy = correct_num / gold_set_size`` and ``attachment_accuracy =
    (correct_num + sentence_num) / (gold_set_size + sentence_num)`` (each sentence's root
    attachment counted as correct, as the seed toolkit did). A zero denominator gives
    NaN and an :class:`UndefinedMetricWarning`, never an exception.

    As a :class:`~assay.core.tally.Tally`: ``correct_num``, ``gold_set_size`` and
    ``sentence_num`` are additive; ``shards`` gathers (a result without shards is its own
    single shard); ``feature_count`` is kept when both sides agree (else None);
    ``metric_tally`` merges (metric states in shard order); ``metrics`` is recomputed
    from the merged ``metric_tally`` when there is one, else two mappings merge when they
    agree on shared keys (an :class:`InvalidParameterError` otherwise).
    """

    correct_num: int = additive(attrs.NOTHING, validator=_check_count("correct_num"))
    gold_set_size: int = additive(attrs.NOTHING, validator=_check_count("gold_set_size"))
    sentence_num: int = additive(0, validator=_check_count("sentence_num"))
    feature_count: int | None = kept(None, fn=lambda a, b: _merge_feature_count(a, b),
                                     validator=_check_feature_count, kw_only=True)
    shards: tuple[EvaluationResult, ...] = kept((), converter=tuple, repr=False, kw_only=True)
    metrics: Mapping[str, Any] = kept(None, converter=_freeze_mapping, repr=False, kw_only=True,
                                      eq=attrs.cmp_using(eq=lambda a, b: values_equal(dict(a), dict(b))))
    metric_tally: Any = merged_by(_merge_tallies, default=None, repr=False, kw_only=True)

    def __attrs_post_init__(self) -> None:
        if self.correct_num > self.gold_set_size:
            raise InvalidParameterError(
                f"EvaluationResult needs correct_num <= gold_set_size. Got {self.correct_num} > {self.gold_set_size}."
            )

    def __reduce__(self) -> tuple[Any, ...]:  # the read-only metrics view does not pickle by itself
        return (_rebuild, (self.correct_num, self.gold_set_size, self.sentence_num, self.feature_count,
                           self.shards, dict(self.metrics), self.metric_tally))

    # ------------------------------------------------------------ derived values
    @property
    def accuracy(self) -> float:
        """``correct_num / gold_set_size`` (NaN with a warning when there is no gold item)."""
        if not self.gold_set_size:
            warnings.warn("accuracy is undefined without gold items (gold_set_size == 0); returning NaN.",
                          UndefinedMetricWarning, stacklevel=2)
        return ratio(self.correct_num, self.gold_set_size)

    @property
    def attachment_accuracy(self) -> float:
        """``(correct_num + sentence_num) / (gold_set_size + sentence_num)`` (NaN with a warning on 0 / 0)."""
        denominator = self.gold_set_size + self.sentence_num
        if not denominator:
            warnings.warn("attachment_accuracy is undefined for an empty evaluation "
                          "(gold_set_size + sentence_num == 0); returning NaN.",
                          UndefinedMetricWarning, stacklevel=2)
        return ratio(self.correct_num + self.sentence_num, denominator)

    # ------------------------------------------------------------ combining
    def _parts(self) -> tuple[EvaluationResult, ...]:
        return self.shards if self.shards else (self,)

    def _merged_with(self, other: EvaluationResult) -> EvaluationResult:
        values = self.merge_values(other)
        values["shards"] = self._parts() + other._parts()
        tally = values["metric_tally"]
        if tally is not None:
            values["metrics"] = tally.scores()
        else:
            values["metrics"] = _merge_metrics(self.metrics, other.metrics)
        return EvaluationResult(**values)

    @classmethod
    def from_shards(cls, shards: Iterable[EvaluationResult], *, feature_count: int | None = None,
                    metrics: Mapping[str, Any] | None = None) -> EvaluationResult:
        """The total of per-shard results (in the given order), keeping them as ``shards``.

        Their metric tallies merge in the given order; ``metrics`` (when not given) are
        the scores of the merged tally.

        >>> parts = [EvaluationResult(1, 2, 1), EvaluationResult(0, 0, 0), EvaluationResult(3, 3, 1)]
        >>> r = EvaluationResult.from_shards(parts, feature_count=7)
        >>> (r.correct_num, r.gold_set_size, r.sentence_num, r.feature_count, len(r.shards))
        (4, 5, 2, 7, 3)
        """
        parts = tuple(shards)
        for i, part in enumerate(parts):
            if not isinstance(part, EvaluationResult):
                raise InvalidParameterError(
                    f"The 'shards' parameter must hold EvaluationResult objects. Got {type(part).__name__} at {i}."
                )
        tally = None
        for part in parts:  # shard order
            tally = _merge_tallies(tally, part.metric_tally)
        if metrics is None and tally is not None:
            metrics = tally.scores()
        return cls(
            correct_num=sum(p.correct_num for p in parts),
            gold_set_size=sum(p.gold_set_size for p in parts),
            sentence_num=sum(p.sentence_num for p in parts),
            feature_count=feature_count,
            shards=parts,
            metrics=metrics if metrics is not None else {},
            metric_tally=tally,
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form (for JSON): tallies, ratios (NaN as None), per-shard tallies, metrics."""
        def clean(x: float) -> float | None:
            return None if math.isnan(x) else x

        return {
            "correct_num": self.correct_num,
            "gold_set_size": self.gold_set_size,
            "sentence_num": self.sentence_num,
            "feature_count": self.feature_count,
            "accuracy": clean(ratio(self.correct_num, self.gold_set_size)),
            "attachment_accuracy": clean(ratio(self.correct_num + self.sentence_num,
                                               self.gold_set_size + self.sentence_num)),
            "shards": [{"correct_num": s.correct_num, "gold_set_size": s.gold_set_size,
                        "sentence_num": s.sentence_num} for s in self.shards],
            "metrics": dict(self.metrics),
        }


def _rebuild(correct_num: int, gold_set_size: int, sentence_num: int, feature_count: int | None,
             shards: tuple[EvaluationResult, ...], metrics: dict[str, Any],
             metric_tally: Any = None) -> EvaluationResult:
    return EvaluationResult(correct_num, gold_set_size, sentence_num, feature_count=feature_count,
                            shards=shards, metrics=metrics, metric_tally=metric_tally)


def _merge_feature_count(a: int | None, b: int | None) -> int | None:
    """Kept when both sides agree or only one side knows it; None when they disagree."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    return None


def _merge_metrics(a: Mapping[str, Any], b: Mapping[str, Any]) -> Mapping[str, Any]:
    """Metrics are not additive in general: keys may be shared only with equal values."""
    merged = dict(a)
    for key, value in b.items():
        if key in merged and not values_equal(merged[key], value):
            raise InvalidParameterError(
                f"Cannot add EvaluationResults whose metrics[{key!r}] differ ({merged[key]!r} and {value!r}); "
                "merge the metric states and compute the metric on the total instead."
            )
        merged[key] = value
    return merged
