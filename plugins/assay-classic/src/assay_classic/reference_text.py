"""Reference-based text metrics unitxt users reach for first: ROUGE (rouge-score), chrF and TER (sacreBLEU).

All three are additive, so shards merge by addition and a bootstrap interval costs one
product of resample counts with the per-instance statistics, with no re-tokenization:

- **chrF** and **TER**: each segment maps to sacreBLEU's own segment statistics (chrF:
  character and word n-gram matches and totals of the best reference; TER: the fewest
  edits over the references and the average reference length) and the corpus score is
  sacreBLEU's formula on their sum (``_compute_score_from_stats``), so the value equals
  ``CHRF().corpus_score`` / ``TER().corpus_score``. sacreBLEU exposes the per-segment
  statistics only through ``_extract_corpus_statistics`` and ``_compute_score_from_stats``
  (the methods its own corpus scores and significance tests use); no tokenizer or edit
  distance is written here.
- **ROUGE**: the corpus score is the mean of the instance F-measures of
  ``rouge_score.rouge_scorer.RougeScorer.score_multi`` (the best reference), as unitxt and
  Hugging Face ``evaluate`` (``use_aggregator=False``, averaged) report it; its statistics
  are ``(sum, count)`` per ROUGE type.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.deferred import np
from assay.errors import InvalidParameterError
from assay.metrics import InstanceMetric, Metric
from assay_classic._deps import require
from assay_classic._inputs import reference_list

__all__ = ["Chrf", "Rouge", "Ter"]

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")


def _grouped_stats(scorer: Any, hypotheses: Sequence[str], references: Sequence[Any], metric: str) -> list[Any]:
    """sacreBLEU segment statistics, one row per hypothesis; segments grouped by their number of references."""
    refs = []
    for i, r in enumerate(references):
        lst = reference_list(r)
        if not lst or not all(isinstance(x, str) for x in lst):
            raise InvalidParameterError(f"{metric} needs one or more reference strings per instance; instance {i} "
                                        f"has {r!r:.80}.")
        refs.append(lst)
    for i, h in enumerate(hypotheses):
        if not isinstance(h, str):
            raise InvalidParameterError(f"{metric} needs string predictions; instance {i} has {type(h).__name__}.")
    out: list[Any] = [None] * len(hypotheses)
    by_count: dict[int, list[int]] = {}
    for i, lst in enumerate(refs):
        by_count.setdefault(len(lst), []).append(i)
    for k, idx in by_count.items():
        streams = [[refs[i][j] for i in idx] for j in range(k)]
        stats = scorer._extract_corpus_statistics([hypotheses[i] for i in idx], streams)
        for i, row in zip(idx, stats):
            out[i] = row
    return out


class _SacreStats(Metric):
    """Shared machinery: sacreBLEU segment statistics plus a segment count, sacreBLEU's formula on their sum."""

    additive = True
    prediction_type = str
    requirements = {"sacrebleu": "sacrebleu"}
    _n_sacre: int = 0

    def _make_scorer(self) -> Any:
        raise NotImplementedError

    def _scorer(self) -> Any:
        scorer = self.__dict__.get("_sacre_scorer")
        if scorer is None:  # built on first use, never pickled (see __getstate__)
            scorer = self._make_scorer()
            self.__dict__["_sacre_scorer"] = scorer
        return scorer

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_sacre_scorer", None)
        return state

    def map_batch(self, predictions: Sequence[str], references: Sequence[Any] | None, task_data: Any) -> np.ndarray:
        if references is None:
            raise InvalidParameterError(f"{self.main_score} needs references; got None.")
        rows = _grouped_stats(self._scorer(), list(predictions), list(references), self.main_score)
        stats = np.asarray(rows, dtype=np.float64).reshape(len(rows), self._n_sacre)
        return np.column_stack([stats, np.ones(len(rows))])

    def map(self, prediction: str, references: Any, task_data: Any = None) -> np.ndarray:
        return self.map_batch([prediction], [references], None)[0]

    def reduce(self, totals: Any) -> dict[str, float]:
        row = np.asarray(totals, dtype=np.float64).reshape(-1)
        if row[-1] == 0:
            return {self.main_score: float("nan")}
        stats = row[:-1]
        as_int = [int(x) if float(x).is_integer() else float(x) for x in stats]
        return {self.main_score: float(self._scorer()._compute_score_from_stats(as_int).score)}


class Chrf(_SacreStats):
    r"""chrF / chrF++ with sacreBLEU's definition and defaults (0-100 scale).

    .. math::

        \mathrm{chrF}_\beta = (1 + \beta^2)
        \frac{\mathrm{chrP} \cdot \mathrm{chrR}}{\beta^2 \mathrm{chrP} + \mathrm{chrR}}

    with character n-gram precision and recall averaged over n = 1..``char_order`` (and
    word n-grams up to ``word_order``: ``word_order=2`` is chrF++), from the statistics
    summed over the corpus (the best reference per segment). Equal to
    ``sacrebleu.metrics.CHRF(...).corpus_score``; the instance score is sacreBLEU's
    sentence chrF.

    Parameters
    ----------
    char_order, word_order, beta : int
        sacreBLEU's options (defaults 6, 0, 2).
    lowercase, whitespace, eps_smoothing : bool
        sacreBLEU's options.

    References
    ----------
    Popović (2015), chrF; Popović (2017), chrF++; Post (2018), sacreBLEU.

    Examples
    --------
    >>> round(Chrf().update(["the cat sat"], [["the cat sat"]]).compute_scores()["chrf"], 6)
    100.0
    """

    main_score = "chrf"
    ci_scores = ["chrf"]
    examples = [{"predictions": ["the cat sat on the mat", "hello world"],
                 "references": [["the cat sat on the mat"], ["hello world"]],
                 "global_target": {"chrf": 100.0}}]

    def __init__(self, *, char_order: int = 6, word_order: int = 0, beta: int = 2, lowercase: bool = False,
                 whitespace: bool = False, eps_smoothing: bool = False, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        for key, value in (("char_order", char_order), ("word_order", word_order), ("beta", beta)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidParameterError(f"The {key!r} parameter of chrf must be a non-negative int; got {value!r}.")
        if char_order + word_order == 0:
            raise InvalidParameterError("chrf needs char_order + word_order > 0.")
        self.char_order = char_order
        self.word_order = word_order
        self.beta = beta
        self.lowercase = bool(lowercase)
        self.whitespace = bool(whitespace)
        self.eps_smoothing = bool(eps_smoothing)
        self._n_sacre = 3 * (char_order + word_order)
        self.n_stats = self._n_sacre + 1

    def _make_scorer(self) -> Any:
        return require("sacrebleu.metrics").CHRF(
            char_order=self.char_order, word_order=self.word_order, beta=self.beta, lowercase=self.lowercase,
            whitespace=self.whitespace, eps_smoothing=self.eps_smoothing)


class Ter(_SacreStats):
    r"""Translation Edit Rate with sacreBLEU's definition (0-100 scale, lower is better).

    .. math:: \mathrm{TER} = 100 \cdot \frac{\sum_i \mathrm{edits}_i}{\sum_i \overline{|r_i|}}

    ``edits`` (insertions, deletions, substitutions and block shifts) against the closest
    reference, divided by the average reference length, both summed over the corpus: equal
    to ``sacrebleu.metrics.TER(...).corpus_score``.

    Parameters
    ----------
    normalized, no_punct, asian_support, case_sensitive : bool
        sacreBLEU's options.

    References
    ----------
    Snover et al. (2006), "A Study of Translation Edit Rate with Targeted Human Annotation".
    """

    main_score = "ter"
    higher_is_better = False
    ci_scores = ["ter"]
    _n_sacre = 2
    n_stats = 3
    examples = [{"predictions": ["the cat sat", "hello"], "references": [["the cat sat on"], ["hello there"]],
                 "global_target": {"ter": 100 * 2 / 6}}]

    def __init__(self, *, normalized: bool = False, no_punct: bool = False, asian_support: bool = False,
                 case_sensitive: bool = False, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.normalized = bool(normalized)
        self.no_punct = bool(no_punct)
        self.asian_support = bool(asian_support)
        self.case_sensitive = bool(case_sensitive)

    def _make_scorer(self) -> Any:
        return require("sacrebleu.metrics").TER(
            normalized=self.normalized, no_punct=self.no_punct, asian_support=self.asian_support,
            case_sensitive=self.case_sensitive)


class Rouge(InstanceMetric):
    r"""ROUGE F-measures with Google's ``rouge-score`` package, best reference per instance, mean over instances.

    Reports every type of ``rouge_types`` (default ``rouge1``, ``rouge2``, ``rougeL``,
    ``rougeLsum``; main ``rougeL``, as unitxt). Each instance's value is the F-measure of
    ``RougeScorer(rouge_types, use_stemmer=...).score_multi(references, prediction)``; the
    global value is the mean over instances (additive ``(sum, count)`` statistics).
    ``rougeLsum`` splits summaries into sentences at newlines (``split_summaries=True``
    splits with nltk first).

    References
    ----------
    Lin (2004), "ROUGE: A Package for Automatic Evaluation of Summaries"; the
    ``rouge-score`` package (google-research).
    """

    main_score = "rougeL"
    prediction_type = str
    requirements = {"rouge_score": "rouge-score"}
    examples = [{"predictions": ["the cat sat on the mat"], "references": [["the cat sat on the mat"]],
                 "global_target": {"rouge1": 1.0, "rouge2": 1.0, "rougeL": 1.0, "rougeLsum": 1.0}}]

    def __init__(self, *, rouge_types: Sequence[str] = ROUGE_TYPES, use_stemmer: bool = False,
                 split_summaries: bool = False, main_score: str | None = None, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        types = [rouge_types] if isinstance(rouge_types, str) else list(rouge_types)
        for t in types:
            if not isinstance(t, str) or not (t in ROUGE_TYPES or (t.startswith("rouge") and t[5:].isdigit())):
                raise InvalidParameterError(
                    f"The 'rouge_types' parameter of rouge must name ROUGE types such as {list(ROUGE_TYPES)} or "
                    f"'rouge3'; got {t!r}.")
        if not types:
            raise InvalidParameterError("The 'rouge_types' parameter of rouge must name at least one type.")
        if main_score is not None and main_score not in types:
            raise InvalidParameterError(f"The 'main_score' of rouge must be one of {types}; got {main_score!r}.")
        self.rouge_types = types
        self.use_stemmer = bool(use_stemmer)
        self.split_summaries = bool(split_summaries)
        self.main_score = main_score or ("rougeL" if "rougeL" in types else types[0])
        self.score_names = list(types)
        self.ci_scores = [self.main_score]

    def _scorer(self) -> Any:
        scorer = self.__dict__.get("_rouge_scorer")
        if scorer is None:
            mod = require("rouge_score.rouge_scorer")
            # the tokenizer rouge-score would build itself, given: without one it logs through absl, whose
            # first message calls logging.basicConfig() and so configures the application's root logger
            tokenizer = mod.tokenizers.DefaultTokenizer(use_stemmer=self.use_stemmer)
            scorer = mod.RougeScorer(self.rouge_types, use_stemmer=self.use_stemmer,
                                     split_summaries=self.split_summaries, tokenizer=tokenizer)
            self.__dict__["_rouge_scorer"] = scorer
        return scorer

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_rouge_scorer", None)
        return state

    def compute_instance(self, prediction: str, references: Any, task_data: Any = None) -> dict[str, float]:
        refs = reference_list(references)
        if not refs or not all(isinstance(r, str) for r in refs):
            raise InvalidParameterError(
                f"rouge needs one or more reference strings per instance; got {references!r:.80}.")
        scores = self._scorer().score_multi(refs, prediction)
        return {t: float(scores[t].fmeasure) for t in self.rouge_types}

