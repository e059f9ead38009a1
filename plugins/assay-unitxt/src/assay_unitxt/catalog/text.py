"""unitxt's text metrics: ``anls``, ``wer``, ``squad``, ``normalized_sacrebleu``, ``rouge``,
``char_edit_distance[_accuracy]``, ``jaccard_index[_string]``, ``unsorted_list_exact_match``,
``string_containment_ratio``.

Where unitxt computes through a Hugging Face ``evaluate`` module fetched from the Hub
(``wer``, ``squad``), assay computes the same formula offline with the library that module
wraps (jiwer; the official SQuAD v1.1 normalisation) and never downloads anything.
"""

from __future__ import annotations

import collections
import math
import re
import string
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from assay.errors import InvalidParameterError, MissingDependencyError
from assay.metrics import GlobalMetric, InstanceMetric, Metric
from assay.validation import undefined_metric
from assay_unitxt.catalog.inputs import CheckedInputs

__all__ = ["Anls", "CharEditDistance", "JaccardIndex", "NormalizedSacrebleu", "Squad", "StringContainmentRatio",
           "UnsortedListExactMatch", "Wer"]


@lru_cache(maxsize=10000)
def _levenshtein(a: str, b: str) -> int:
    # rapidfuzz computes the same distance in C; deferred: optional import
    from rapidfuzz.distance import Levenshtein

    return int(Levenshtein.distance(a, b))


class Anls(CheckedInputs, InstanceMetric):
    """unitxt's ``ANLS``: 1 - the smallest normalised Levenshtein distance to a reference (text
    lower-cased, whitespace collapsed; normalised by the longer *raw* length), 0 below ``threshold``."""

    input_type = "text"

    examples = [{"predictions": ["Hello World", "foo", "xyz"],
                 "references": [["hello  world"], ["bar", "fooo"], ["abc"]],
                 "global_target": {"anls": (1.0 + 0.75 + 0.0) / 3}}]

    main_score = "anls"
    ci_scores: list[str] = []  # unitxt's ANLS declares no ci_scores: no interval
    prediction_type = str
    requirements = {"rapidfuzz": "rapidfuzz"}

    def __init__(self, *, threshold: float = 0.5, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.threshold = float(threshold)

    @staticmethod
    def _distance(prediction: str, reference: str) -> float:
        ref, pred = " ".join(reference.strip().lower().split()), " ".join(prediction.strip().lower().split())
        length = max(len(reference.upper()), len(prediction.upper()))
        return 0.0 if length == 0 else _levenshtein(ref, pred) / length

    def compute_instance(self, prediction: Any, references: Any, task_data: Any = None) -> float:
        value = 1.0 - min(self._distance(prediction, r) for r in references)
        return 0.0 if value < self.threshold else value


class CharEditDistance(CheckedInputs, InstanceMetric):
    """unitxt's ``CharEditDistance`` / ``CharEditDistanceAccuracy``: the Levenshtein distance of the
    texts with all whitespace removed (``accuracy=True``: 1 - distance / longer length)."""

    input_type = "text"

    examples = [{"predictions": ["a b c", "abd"], "references": [["abc"], ["abc"]]}]

    prediction_type = str
    single_reference_per_prediction = True
    requirements = {"rapidfuzz": "rapidfuzz"}

    def __init__(self, *, accuracy: bool = False, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.accuracy = bool(accuracy)
        self.main_score = "char_edit_dist_accuracy" if accuracy else "char_edit_distance"
        self.higher_is_better = self.accuracy
        self.ci_scores = [self.main_score]

    def compute_instance(self, prediction: Any, references: Any, task_data: Any = None) -> float:
        pred, ref = "".join(prediction.split()), "".join(references[0].split())
        longest = max(len(pred), len(ref))
        if longest == 0:
            return 0.0
        dist = _levenshtein(ref, pred)
        return 1 - dist / longest if self.accuracy else float(dist)


class JaccardIndex(CheckedInputs, InstanceMetric):
    """unitxt's ``JaccardIndex`` (lists or sets) and ``JaccardIndexString`` (``split_regex``
    given: strings split with ``re.split``): the best |P ∩ R| / |P ∪ R| over the references."""

    input_type = "list[label]"

    examples = [{"predictions": [["a", "b"], ["c"]], "references": [[["a", "c"]], [["c"], ["d"]]]}]

    prediction_type = list[Any] | set[Any]
    main_score = "jaccard_index"
    ci_scores = ["jaccard_index"]

    def __init__(self, *, split_regex: str | None = None, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.split_regex = split_regex

    def _items(self, value: Any) -> set[Any]:
        if self.split_regex is not None:
            return set(re.split(self.split_regex, value))
        from assay_unitxt.catalog.classification import no_nan

        return {no_nan(self, v) for v in value}

    def compute_instance(self, prediction: Any, references: Any, task_data: Any = None) -> float:
        pred = self._items(prediction)
        return max(len(pred & (r := self._items(ref))) / len(pred | r) for ref in references)


class UnsortedListExactMatch(CheckedInputs, InstanceMetric):
    """unitxt's ``UnsortedListExactMatch``: 1.0 when ``sorted(prediction) == sorted(references[0])``."""

    input_type = "list[label]"

    examples = [{"predictions": [["a", "b"], ["c"]], "references": [[["b", "a"]], [["d"]]]}]

    prediction_type = list[Any]
    main_score = "unsorted_list_exact_match"
    ci_scores = ["unsorted_list_exact_match"]

    def compute_instance(self, prediction: Any, references: Any, task_data: Any = None) -> float:
        from assay_unitxt.catalog.classification import no_nan

        return float(sorted(no_nan(self, p) for p in prediction) == sorted(references[0]))


class StringContainmentRatio(CheckedInputs, InstanceMetric):
    """unitxt's ``StringContainmentRatio``: the share of the values of ``task_data[field]`` whose
    ``str`` is a substring of ``str(prediction)``; score ``string_containment``."""

    input_type = "label"

    examples = [{"predictions": ["alice met bob", "carol"],
                 "references": [["x"], ["y"]],
                 "task_data": [{"entities": ["alice", "eve"]}, {"entities": ["carol"]}]}]

    prediction_type = str | int | float | bool
    main_score = "string_containment"
    ci_scores = ["string_containment"]

    def __init__(self, *, field: str, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.field = field

    def compute_instance(self, prediction: Any, references: Any, task_data: Any = None) -> float:
        if not isinstance(task_data, Mapping) or self.field not in task_data:
            raise InvalidParameterError(
                f"string_containment_ratio: the field {self.field!r} is not in the instance's task_data "
                f"({sorted(task_data) if isinstance(task_data, Mapping) else task_data!r}).")
        values = task_data[self.field]
        from assay_unitxt.catalog.classification import no_nan

        return sum(str(v) in str(no_nan(self, prediction)) for v in values) / len(values)


class Wer(CheckedInputs, GlobalMetric):
    """unitxt's ``Wer`` (``metrics.wer``): word error rate of the whole collection, ``evaluate``'s
    ``wer`` module computed with jiwer offline: (S + D + I) summed over the pairs divided by
    (S + D + H) summed; each prediction against its single reference."""

    input_type = "text"

    examples = [{"predictions": ["the cat sat on mat", "birds"],
                 "references": [["the cat sat on the mat"], ["birds sang"]],
                 "global_target": {"wer": 2 / 8}}]

    main_score = "wer"
    higher_is_better = False
    prediction_type = str
    single_reference_per_prediction = True
    requirements = {"jiwer": "jiwer"}

    def compute_global(self, predictions: list[Any], references: list[Any], task_data: list[Any]) -> float:
        import jiwer  # deferred: optional dependency

        incorrect = total = 0
        for pred, ref in zip(predictions, references):
            out = jiwer.process_words(ref[0], pred)
            incorrect += out.substitutions + out.deletions + out.insertions
            total += out.substitutions + out.deletions + out.hits
        if total == 0:
            raise InvalidParameterError("metrics.wer: the references have no words.")
        return incorrect / total


def _squad_normalize(text: str) -> str:
    """The official SQuAD v1.1 answer normalisation (lower case, no punctuation, articles, extra spaces)."""
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())


def _squad_f1(prediction: str, truth: str) -> float:
    p, t = _squad_normalize(prediction).split(), _squad_normalize(truth).split()
    common = collections.Counter(p) & collections.Counter(t)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(p), same / len(t)
    return 2 * precision * recall / (precision + recall)


class Squad(CheckedInputs, Metric):
    """unitxt's ``metrics.squad`` (its ``metric_pipeline`` around ``evaluate``'s ``squad``): per
    instance the official SQuAD v1.1 exact match and token F1, each the best over the reference
    answers; ``f1`` (main) and ``exact_match`` are their means, on unitxt's 0-1 scale (the module's
    0-100 divided by ``scale=100``)."""

    input_type = "text"

    examples = [{"predictions": ["The Eiffel Tower", "Paris, France"], "references": [["Eiffel tower"], ["Paris"]],
                 "global_target": {"f1": (1 + 2 / 3) / 2, "exact_match": 0.5}}]

    main_score = "f1"
    prediction_type = str
    ci_scores = ["f1"]

    def map(self, prediction: Any, references: Any, task_data: Any = None) -> tuple[float, float]:
        em = max(float(_squad_normalize(prediction) == _squad_normalize(r)) for r in references)
        f1 = max(_squad_f1(prediction, r) for r in references)
        return (em, f1)

    def reduce(self, intermediates: Any) -> dict[str, float]:
        n = len(intermediates)
        if n == 0:
            return {"exact_match": undefined_metric("squad: no instances; NaN."), "f1": math.nan}
        # evaluate's squad: 100 * mean, then unitxt's scale=100 divides; kept in that order for equal floats
        em = 100.0 * sum(e for e, _ in intermediates) / n
        f1 = 100.0 * sum(f for _, f in intermediates) / n
        return {"exact_match": em / 100.0, "f1": f1 / 100.0}


class NormalizedSacrebleu(CheckedInputs, Metric):
    """unitxt's ``NormalizedSacrebleu`` (``metrics.normalized_sacrebleu``): sacreBLEU's statistics per
    instance (``sentence_score``, tokenizer from ``task_data["target_language"]`` through
    ``language_to_tokenizer`` unless ``tokenize`` is set), corpus BLEU of their sums with
    ``effective_order``. ``sacrebleu`` is on a 0-1 scale **rounded to two decimals** and ``bp`` is
    rounded too, as unitxt does; ``sys_len`` and ``ref_len`` are reported; unitxt's list-valued
    ``counts``, ``totals`` and ``precisions`` are not (assay's scores are numbers)."""

    input_type = "text"

    examples = [{"predictions": ["the cat sat", "a dog", "xyz"],
                 "references": [["the cat sat on the mat"], ["a dog ran"], ["abc"]]}]

    main_score = "sacrebleu"
    prediction_type = str
    ci_scores = ["sacrebleu"]
    requirements = {"sacrebleu": "sacrebleu"}

    def __init__(self, *, language_to_tokenizer: Mapping[str, str | None] | None = None, tokenize: str | None = None,
                 lowercase: bool = False, smooth_method: str = "exp", smooth_value: float | None = None,
                 use_effective_order: bool = True, max_ngram_order: int = 4, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.language_to_tokenizer = dict(language_to_tokenizer) if language_to_tokenizer is not None else None
        self.tokenize = tokenize
        self.lowercase = bool(lowercase)
        self.smooth_method = smooth_method
        self.smooth_value = smooth_value
        self.use_effective_order = bool(use_effective_order)
        self.max_ngram_order = int(max_ngram_order)

    def _bleu(self, tokenize: str | None) -> Any:
        cache = self.__dict__.setdefault("_bleu_cache", {})
        if tokenize not in cache:
            try:
                from sacrebleu.metrics.bleu import BLEU  # deferred: optional dependency
            except ImportError as err:
                raise MissingDependencyError("sacrebleu", purpose="metric 'metrics.normalized_sacrebleu'") from err
            cache[tokenize] = BLEU(lowercase=self.lowercase, tokenize=tokenize, smooth_method=self.smooth_method,
                                   smooth_value=self.smooth_value, max_ngram_order=self.max_ngram_order,
                                   effective_order=self.use_effective_order)
        return cache[tokenize]

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_bleu_cache", None)
        return state

    def map(self, prediction: Any, references: Any, task_data: Any = None) -> tuple[Any, ...]:
        tokenize = self.tokenize
        if tokenize is None and isinstance(task_data, Mapping) and "target_language" in task_data:
            lang = str(task_data["target_language"]).lower()
            if self.language_to_tokenizer is None or lang not in self.language_to_tokenizer:
                raise InvalidParameterError(
                    f"metrics.normalized_sacrebleu: language {task_data['target_language']!r} is not in "
                    f"language_to_tokenizer ({sorted(self.language_to_tokenizer or {})}).")
            tokenize = self.language_to_tokenizer[lang]
        res = self._bleu(tokenize).sentence_score(prediction, list(references))
        order = self.max_ngram_order
        return (tuple(res.counts[:order]), tuple(res.totals[:order]), res.sys_len, res.ref_len)

    def reduce(self, intermediates: Any) -> dict[str, float]:
        if len(intermediates) == 0:
            nan = undefined_metric("metrics.normalized_sacrebleu: no instances; NaN.")
            return {"sacrebleu": nan, "bp": math.nan, "sys_len": math.nan, "ref_len": math.nan}
        order = self.max_ngram_order
        counts, totals = [0] * order, [0] * order
        sys_len = ref_len = 0
        for c, t, s, r in intermediates:
            for i in range(min(len(c), order)):
                counts[i] += c[i]
                totals[i] += t[i]
            sys_len += s
            ref_len += r
        res = self._bleu(self.tokenize).compute_bleu(
            correct=counts, total=totals, sys_len=sys_len, ref_len=ref_len, smooth_method=self.smooth_method,
            smooth_value=self.smooth_value, effective_order=self.use_effective_order, max_ngram_order=order)
        return {"sacrebleu": round(res.score / 100.0, 2), "bp": round(res.bp, 2),
                "sys_len": float(sys_len), "ref_len": float(ref_len)}
