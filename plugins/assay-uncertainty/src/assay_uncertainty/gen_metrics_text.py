"""Generation metrics computed from texts during the run: ROUGE and BLEU against the references.

LM-Polygraph 0.7.0's ``RougeMetric`` and ``BLEUMetric``, run by the
:class:`~assay.uncertainty.UEManager` as generation metrics (kind ``generation_metric``):

``rouge[rouge_name=rouge1 | rouge2 | rougeL]`` (``RougeMetric``)
    rouge-score's F-measure with the Porter stemmer (``RougeScorer([rouge_name],
    use_stemmer=True)``) of the answer against the reference, divided by the reference's
    score against itself (1, or 0 for a reference without a word, or, for ``rouge2``, without two
    words: then NaN, with a warning).
``bleu`` (``BLEUMetric``)
    sacreBLEU's sentence BLEU, ``BLEU(effective_order=True, lowercase=True)``, of the answer
    against the reference, both stripped of surrounding blanks and trailing full stops;
    0 to 100, as sacreBLEU reports it.

**Texts.** The answer is ``greedy_texts`` (LM-Polygraph's name; a model run) or ``answer``
(stored outputs); the references are the ``target_texts`` argument (LM-Polygraph's call,
``metric(stats, target_texts)``), else ``references`` (a list per example) or
``reference``. With several references per example the value is the largest over them,
NaN references left out (LM-Polygraph's ``AggregatedMetric(aggregation="max")``).

rouge-score is a dependency of this plugin; sacreBLEU is imported when ``bleu`` first
scores (``pip install assay-uncertainty[text]``).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.plugins.deps import require
from assay.uncertainty.base import GenerationMetric
from assay.validation import check_choice

__all__ = ["BLEUMetric", "RougeMetric", "TEXT_GENERATION_METRICS", "answers_and_references"]


def answers_and_references(stats: Mapping[str, Any], target_texts: Any, owner: str
                           ) -> tuple[list[str], list[list[str]]]:
    """The generated texts and, per example, the list of references (see the module docstring)."""
    text_key = next((k for k in ("greedy_texts", "answer") if k in stats), None)
    if text_key is None:
        raise InvalidParameterError(f"{owner} reads the generated text from 'greedy_texts' or 'answer'; the data has: "
                                    f"{', '.join(sorted(stats)) or 'nothing'}.")
    if target_texts is None:
        ref_key = next((k for k in ("references", "reference") if k in stats), None)
        if ref_key is None:
            raise InvalidParameterError(f"{owner} needs references: 'references' or 'reference' in the data (or "
                                        f"target_texts); the data has: {', '.join(sorted(stats)) or 'nothing'}.")
        target_texts, where = stats[ref_key], ref_key
    else:
        where = "target_texts"
    texts = list(stats[text_key])
    targets = list(target_texts)
    if len(targets) != len(texts):
        raise InvalidParameterError(f"{owner}: {len(texts)} texts in {text_key!r} but {len(targets)} in {where!r}.")
    refs: list[list[str]] = []
    for i, (t, r) in enumerate(zip(texts, targets)):
        if not isinstance(t, str):
            raise InvalidParameterError(f"{owner}: {text_key}[{i}] must be a str; got {type(t).__name__}.")
        rs = [r] if isinstance(r, str) else list(r) if isinstance(r, (list, tuple, np.ndarray)) else None
        if not rs or not all(isinstance(x, str) for x in rs):
            raise InvalidParameterError(f"{owner}: {where}[{i}] must be a str or a non-empty list of str; got "
                                        f"{r!r:.80}.")
        refs.append(rs)
    return texts, refs


class _TextMetric(GenerationMetric):
    level = "sequence"

    def _score(self, hyp: str, ref: str) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def __call__(self, stats: Mapping[str, Any], target_texts: Sequence[Any] | None = None) -> np.ndarray:
        texts, refs = answers_and_references(stats, target_texts, f"generation metric {self.name!r}")
        out = np.empty(len(texts))
        undefined = []
        for i, (hyp, rs) in enumerate(zip(texts, refs)):
            values = [self._score(hyp, r) for r in rs]
            finite = [v for v in values if not np.isnan(v)]
            out[i] = max(finite) if finite else np.nan
            if not finite:
                undefined.append(i)
        if undefined:
            warnings.warn(f"generation metric {self.name!r}: NaN for {len(undefined)} example(s) (first: "
                          f"{undefined[0]}) whose references score 0 against themselves (no word; for rouge2, no "
                          "pair of words).", RuntimeWarning, stacklevel=2)
        return out


class RougeMetric(_TextMetric):
    """rouge-score's stemmed ``rouge_name`` F-measure, over the reference's own score (LM-Polygraph's RougeMetric)."""

    name = "rouge"

    def __init__(self, rouge_name: str = "rougeL") -> None:
        self.rouge_name = check_choice(rouge_name, "rouge_name", ("rouge1", "rouge2", "rougeL"), owner=self.name)
        self._scorer: Any = None
        super().__init__()

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_scorer": None}  # built again where it is used

    def _score(self, hyp: str, ref: str) -> float:
        if self._scorer is None:
            # deferred: rouge-score imports nltk's stemmer and absl, which only the text metrics need
            rouge_scorer = require("rouge_score.rouge_scorer", package="rouge-score", purpose="generation metric rouge")
            tokenizer = rouge_scorer.tokenizers.DefaultTokenizer(use_stemmer=True)  # given: absl logs otherwise
            self._scorer = rouge_scorer.RougeScorer([self.rouge_name], use_stemmer=True, tokenizer=tokenizer)
        best = self._scorer.score(ref, ref)[self.rouge_name].fmeasure
        if best == 0:
            return float("nan")
        return float(self._scorer.score(hyp, ref)[self.rouge_name].fmeasure / best)


class BLEUMetric(_TextMetric):
    """sacreBLEU's sentence BLEU (effective order, lower-cased) of the stripped texts (LM-Polygraph's BLEUMetric)."""

    name = "bleu"

    def __init__(self) -> None:
        self._bleu: Any = None
        super().__init__()

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_bleu": None}

    def _score(self, hyp: str, ref: str) -> float:
        if self._bleu is None:
            # deferred: sacreBLEU is an optional dependency (assay-uncertainty[text])
            metrics = require("sacrebleu.metrics", package="sacrebleu", purpose="generation metric bleu")
            self._bleu = metrics.BLEU(effective_order=True, lowercase=True)
        return float(self._bleu.sentence_score(hyp.strip().rstrip("."), [ref.strip().rstrip(".")]).score)


#: name -> (class, LM-Polygraph's class name, description)
TEXT_GENERATION_METRICS: dict[str, tuple[type[GenerationMetric], str, str]] = {
    "rouge": (RougeMetric, "RougeMetric", "ROUGE F-measure of the answer against the best reference "
                                          "(rouge_name=rouge1 | rouge2 | rougeL; rouge-score, stemmed)"),
    "bleu": (BLEUMetric, "BLEUMetric", "sentence BLEU of the answer against the best reference (sacreBLEU, "
                                       "effective order, lower-cased; 0 to 100)"),
}
