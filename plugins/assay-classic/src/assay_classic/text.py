"""Text metrics: exact match, token overlap (token F1), character edit distance, corpus BLEU.

Exact match, token overlap and edit distance are instance metrics (global = mean of the
instance scores, additive ``(sum, count)``). Corpus BLEU is additive on sacreBLEU's
segment statistics: shards merge and bootstrap resamples cost a count-matrix product,
then ``BLEU.compute_bleu`` on each summed row.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from assay.deferred import np
from assay.errors import InvalidParameterError
from assay.metrics import InstanceMetric, Metric
from assay.validation import check_choice, check_int
from assay_classic._inputs import reference_list
from assay_classic.functional._common import ZeroDivision, check_zero_division
from assay_classic.functional.bleu import SMOOTH_METHODS, bleu_from_stats, bleu_scorer, bleu_segment_stats
from assay_classic.functional.text import char_edit_distance, exact_match, normalize_answer, token_overlap

__all__ = ["Bleu", "CharEditDistance", "ExactMatch", "TokenOverlap", "UnitxtTokenOverlap"]


class ExactMatch(InstanceMetric):
    r"""Share of predictions equal to one of their references (strings).

    .. math:: \mathrm{exact\_match} = \frac1n \sum_i [\, norm(\hat y_i) \in norm(R_i) \,]

    Parameters
    ----------
    ignore_case : bool
        Compare case-folded strings.
    strip : bool
        Remove leading and trailing white space first.

    Examples
    --------
    >>> ExactMatch().update(["a", "b"], [["a"], ["B"]]).compute_scores()["exact_match"]
    0.5
    """

    main_score = "exact_match"
    prediction_type = str
    examples = [{"predictions": ["a", "b ", "C"], "references": [["a"], ["b"], ["x", "C"]],
                 "global_target": {"exact_match": 2 / 3}}]

    def __init__(self, *, ignore_case: bool = False, strip: bool = False, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.ignore_case = bool(ignore_case)
        self.strip = bool(strip)

    def compute_instance(self, prediction: str, references: Any, task_data: Any = None) -> float:
        return exact_match(prediction, reference_list(references), ignore_case=self.ignore_case, strip=self.strip)


class TokenOverlap(InstanceMetric):
    r"""Token precision, recall and F1 (SQuAD style), best reference per instance, mean over instances.

    .. math:: P = c / |p|, \quad R = c / |r|, \quad F_1 = 2c / (|p| + |r|)

    with :math:`c` the size of the multiset intersection of the white-space tokens of the
    prediction :math:`p` and the reference :math:`r` (after SQuAD's normalization when
    ``normalize``). Reports ``token_f1`` (main), ``token_precision`` and ``token_recall``.

    Parameters
    ----------
    normalize : bool
        Lower case, drop punctuation and articles (SQuAD's ``normalize_answer``) first.
    zero_division : {0.0, 1.0, nan, "warn"}
        Value of a ratio with an empty prediction or reference (default 0.0, as SQuAD v1.1).

    References
    ----------
    Rajpurkar et al. (2016), SQuAD evaluation script v1.1; unitxt ``TokenOverlap``.
    """

    main_score = "token_f1"
    score_names = ["token_f1", "token_precision", "token_recall"]
    ci_scores = ["token_f1", "token_precision", "token_recall"]
    prediction_type = str
    examples = [{"predictions": ["the cat sat", "a dog"], "references": [["cat sat down"], ["dog"]],
                 "global_target": {"token_f1": (0.8 + 1.0) / 2, "token_precision": 1.0,
                                   "token_recall": (2 / 3 + 1) / 2}}]

    def __init__(self, *, normalize: bool = True, zero_division: ZeroDivision = 0.0, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.normalize = bool(normalize)
        self.zero_division = check_zero_division(zero_division, metric="token_overlap")

    def compute_instance(self, prediction: str, references: Any, task_data: Any = None) -> dict[str, float]:
        s = token_overlap(prediction, reference_list(references), normalize=self.normalize,
                          zero_division=self.zero_division)
        return {"token_f1": s["f1"], "token_precision": s["precision"], "token_recall": s["recall"]}


class UnitxtTokenOverlap(InstanceMetric):
    r"""unitxt's ``TokenOverlap`` (``metrics.token_overlap``): token P / R / F1, each the best over the references.

    Tokens are the white-space words of SQuAD's normalized text. With :math:`c` the size of
    the multiset intersection of prediction tokens :math:`p` and reference tokens :math:`r`:
    :math:`P = c/|p|`, :math:`R = c/|r|`, :math:`F_1 = 2PR/(P+R)`, and all three are 0
    when :math:`c = 0`. Unlike :class:`TokenOverlap`, each of ``precision``, ``recall`` and
    ``f1`` is maximised over the references on its own (unitxt's rule), and the names are
    unitxt's (``f1`` main). Global: the mean over instances.

    References
    ----------
    unitxt ``metrics.TokenOverlap``; Rajpurkar et al. (2016), SQuAD.
    """

    main_score = "f1"
    score_names = ["f1", "precision", "recall"]
    ci_scores = ["f1", "precision", "recall"]
    prediction_type = str
    examples = [{"predictions": ["apple", "boy", "cat"], "references": [["apple 2e"], ["boy"], ["dog"]],
                 "global_target": {"f1": (2 / 3 + 1 + 0) / 3, "precision": 2 / 3, "recall": 0.5}}]

    def compute_instance(self, prediction: str, references: Any, task_data: Any = None) -> dict[str, float]:
        best = {"precision": 0.0, "recall": 0.0, "f1": 0.0}
        refs = reference_list(references)
        if not refs or not all(isinstance(r, str) for r in refs):
            raise InvalidParameterError(
                f"metrics.token_overlap needs one or more reference strings per instance; got {references!r:.80}.")
        pred = normalize_answer(prediction).split()
        for ref in refs:
            tokens = normalize_answer(ref).split()
            same = sum((Counter(pred) & Counter(tokens)).values())
            if same:
                p, r = same / len(pred), same / len(tokens)
                for key, value in (("precision", p), ("recall", r), ("f1", 2 * p * r / (p + r))):
                    best[key] = max(best[key], value)
        return best


class CharEditDistance(InstanceMetric):
    r"""Character Levenshtein distance normalized by the longer string (rapidfuzz), mean over instances.

    .. math:: d(p, r) = \frac{\mathrm{lev}(p, r)}{\max(|p|, |r|)}

    unit costs, 0.0 for two empty strings, the lowest over the references. Lower is better.
    ``normalize=False`` gives the raw edit count.

    References
    ----------
    Levenshtein (1966); ``rapidfuzz.distance.Levenshtein.normalized_distance``.
    """

    main_score = "char_edit_distance"
    higher_is_better = False
    prediction_type = str
    requirements = {"rapidfuzz": "rapidfuzz"}
    examples = [{"predictions": ["kitten", ""], "references": [["sitting"], [""]],
                 "global_target": {"char_edit_distance": (3 / 7 + 0.0) / 2}}]

    def __init__(self, *, normalize: bool = True, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.normalize = bool(normalize)

    def compute_instance(self, prediction: str, references: Any, task_data: Any = None) -> float:
        return char_edit_distance(prediction, reference_list(references), normalize=self.normalize)


class Bleu(Metric):
    r"""Corpus BLEU with sacreBLEU's tokenization and defaults (0-100 scale).

    .. math::

        BLEU = BP \cdot \exp\Big(\frac1N \sum_{n=1}^N \log p_n\Big), \quad
        BP = \min\big(1, e^{1 - r/c}\big)

    :math:`p_n`: clipped n-gram precisions of the corpus (``smooth_method="exp"`` by
    default), :math:`c`: hypothesis length, :math:`r`: effective reference length (closest
    reference per segment). Each segment maps to sacreBLEU's statistics
    ``[sys_len, ref_len, correct_1..N, total_1..N]`` (``BLEU().sentence_score``) plus a
    segment count of 1; the global score is ``BLEU.compute_bleu`` on their sum, equal to
    ``sacrebleu.corpus_bleu`` (no segment at all: NaN). The
    instance score is sentence BLEU with effective order (``sacrebleu.sentence_bleu``).
    Also reports ``bleu_bp``, the brevity penalty.

    Parameters
    ----------
    tokenize : str, optional
        sacreBLEU tokenizer name (default ``"13a"``).
    lowercase : bool
        Lower-case hypotheses and references first.
    smooth_method : {"exp", "floor", "add-k", "none"}
    smooth_value : float, optional
    effective_order : bool
        Of the corpus score (the instance scores always use it).
    max_ngram_order : int

    References
    ----------
    Papineni et al. (2002), BLEU; Post (2018), "A Call for Clarity in Reporting BLEU Scores".
    """

    main_score = "bleu"
    prediction_type = str
    additive = True
    requirements = {"sacrebleu": "sacrebleu"}
    ci_scores = ["bleu"]
    examples = [{"predictions": ["the cat sat on the mat", "hello world"],
                 "references": [["the cat sat on the mat"], ["hello world"]],
                 "global_target": {"bleu": 100.0}}]

    def __init__(
        self,
        *,
        tokenize: str | None = None,
        lowercase: bool = False,
        smooth_method: str = "exp",
        smooth_value: float | None = None,
        effective_order: bool = False,
        max_ngram_order: int = 4,
        score_prefix: str = "",
    ) -> None:
        super().__init__(score_prefix=score_prefix)
        check_choice(smooth_method, "smooth_method", SMOOTH_METHODS, owner="bleu")
        max_ngram_order = check_int(max_ngram_order, "max_ngram_order", low=1, owner="bleu")
        self.tokenize = tokenize
        self.lowercase = bool(lowercase)
        self.smooth_method = smooth_method
        self.smooth_value = smooth_value
        self.effective_order = bool(effective_order)
        self.max_ngram_order = max_ngram_order
        self.n_stats = 3 + 2 * max_ngram_order  # sacreBLEU's statistics, then a segment count

    def _scorer(self) -> Any:
        scorer = self.__dict__.get("_bleu_scorer")
        if scorer is None:  # built on first use, never pickled (see __getstate__)
            scorer = bleu_scorer(tokenize=self.tokenize, lowercase=self.lowercase, max_ngram_order=self.max_ngram_order)
            self.__dict__["_bleu_scorer"] = scorer
        return scorer

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_bleu_scorer", None)
        return state

    def map_batch(self, predictions: Sequence[str], references: Sequence[Any] | None, task_data: Any) -> np.ndarray:
        if references is None:
            raise InvalidParameterError("bleu needs references; got None.")
        stats = bleu_segment_stats(list(predictions), list(references), self._scorer()).astype(np.float64)
        return np.column_stack([stats, np.ones(len(stats))])

    def map(self, prediction: str, references: Any, task_data: Any = None) -> np.ndarray:
        return self.map_batch([prediction], [references], None)[0]

    def _score(self, row: np.ndarray, *, effective_order: bool) -> dict[str, float]:
        if row[-1] == 0:  # no segment at all
            return {"bleu": math.nan, "bleu_bp": math.nan}
        return bleu_from_stats(
            row[:-1],
            smooth_method=self.smooth_method,
            smooth_value=self.smooth_value,
            effective_order=effective_order,
            max_ngram_order=self.max_ngram_order,
        )

    def reduce(self, totals: Any) -> dict[str, float]:
        return self._score(np.asarray(totals, dtype=np.float64).reshape(-1), effective_order=self.effective_order)

    def instance_scores(self, intermediates: Any) -> list[dict[str, float]]:
        """Sentence BLEU with effective order, as ``sacrebleu.sentence_bleu``."""
        rows = np.asarray(intermediates, dtype=np.float64)
        return [self._score(row, effective_order=True) for row in rows]
