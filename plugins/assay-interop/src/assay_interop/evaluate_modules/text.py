"""``evaluate``'s text modules: exact_match, bleu, sacrebleu, chrf, ter, wer, cer, rouge, meteor.

Each calls the library ``evaluate``'s module wraps, as that module does: sacrebleu (sacrebleu,
chrf, ter, and bleu's 13a tokenizer), rouge-score (rouge), jiwer (wer, cer) and NLTK (meteor).
``evaluate``'s ``bleu`` is TensorFlow NMT's corpus BLEU, which is no library: assay computes it
(its per-instance n-gram counts sum, so intervals resample counts, not texts).
"""

from __future__ import annotations

import collections
import math
import re
import string
import warnings
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from assay.errors import EvaluationError, InvalidParameterError, UndefinedMetricWarning
from assay_interop._common import require
from assay_interop.evaluate_modules.base import Module, choice, one_reference, text, texts

__all__ = ["MODULES"]

_SACREBLEU = {"sacrebleu": "sacrebleu"}


class ExactMatch(Module):
    name = "exact_match"
    defaults: ClassVar[dict[str, Any]] = {"regexes_to_ignore": None, "ignore_case": False,
                                         "ignore_punctuation": False, "ignore_numbers": False}
    per_instance = True

    def _clean(self, text: str) -> str:
        for pattern in self.options["regexes_to_ignore"] or ():
            text = re.sub(pattern, "", text)
        if self.options["ignore_case"]:
            text = text.lower()
        if self.options["ignore_punctuation"]:
            text = text.translate(str.maketrans("", "", string.punctuation))
        if self.options["ignore_numbers"]:
            text = text.translate(str.maketrans("", "", string.digits))
        return text

    def map(self, prediction: Any, references: Any) -> float:
        reference = one_reference(references, self.where)
        texts([prediction, reference], "the prediction and its reference", self.where)
        return float(self._clean(prediction) == self._clean(reference))

    def reduce(self, items: list[Any]) -> dict[str, Any]:
        return {"exact_match": float(np.mean(items)) if items else math.nan}


def _ngrams(tokens: list[str], max_order: int) -> collections.Counter[tuple[str, ...]]:
    return collections.Counter(tuple(tokens[i:i + n]) for n in range(1, max_order + 1)
                               for i in range(len(tokens) - n + 1))


class Bleu(Module):
    """TensorFlow NMT's corpus BLEU on 13a tokens, as ``evaluate``'s ``bleu`` (0-1).

    Written here: the algorithm is not in a library (``evaluate`` vendors the NMT script).
    Reference length: the shortest reference of each instance; n-gram matches clipped by the
    largest count in any reference; ``smooth=True``: add-one on every order.
    """

    name = "bleu"
    keys = ("bleu", "precisions", "brevity_penalty", "length_ratio", "translation_length", "reference_length")
    main_score = "bleu"
    defaults: ClassVar[dict[str, Any]] = {"tokenizer": None, "max_order": 4, "smooth": False}
    requirements = _SACREBLEU
    per_instance = True

    def check(self) -> None:
        order = self.options["max_order"]
        if not isinstance(order, int) or isinstance(order, bool) or order < 1:
            raise InvalidParameterError(f"{self.where}: max_order must be a positive int; got {order!r}.")
        tokenizer = self.options["tokenizer"]
        if tokenizer is not None and not callable(tokenizer):
            raise InvalidParameterError(f"{self.where}: tokenizer must be a callable (str -> list of tokens) as in "
                                        f"evaluate, or left out for its 13a tokenizer; got {tokenizer!r:.60}.")

    def _tokenizer(self) -> Callable[[str], list[str]]:
        tokenizer = self.__dict__.get("_tok")
        if tokenizer is None:
            tokenizer = self.options["tokenizer"]
            if tokenizer is None:  # evaluate's default Tokenizer13a() (its copy of sacrebleu's), split on spaces
                tok13a = require("sacrebleu.tokenizers.tokenizer_13a").Tokenizer13a()

                def tokenizer(line: str) -> list[str]:
                    return tok13a(line).split()
            self.__dict__["_tok"] = tokenizer
        return tokenizer

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_tok", None)
        return state

    def map(self, prediction: Any, references: Any) -> np.ndarray:
        refs = texts(references, "the references", self.where)
        text(prediction, self.where)
        tokenize, order = self._tokenizer(), self.options["max_order"]
        hyp = list(tokenize(prediction))
        ref_tokens = [list(tokenize(r)) for r in refs]
        merged: collections.Counter[tuple[str, ...]] = collections.Counter()
        for r in ref_tokens:
            merged |= _ngrams(r, order)
        overlap = _ngrams(hyp, order) & merged
        matches = np.zeros(order)
        for gram, count in overlap.items():
            matches[len(gram) - 1] += count
        possible = np.array([max(len(hyp) - n + 1, 0) for n in range(1, order + 1)], dtype=float)
        return np.concatenate([matches, possible, [len(hyp), min(len(r) for r in ref_tokens)]])

    def reduce(self, items: list[Any]) -> dict[str, Any]:
        order = self.options["max_order"]
        totals = np.sum(items, axis=0) if items else np.zeros(2 * order + 2)
        matches, possible = totals[:order], totals[order:2 * order]
        hyp_len, ref_len = int(totals[-2]), int(totals[-1])
        if self.options["smooth"]:
            precisions = ((matches + 1.0) / (possible + 1.0)).tolist()
        else:
            precisions = [float(m / p) if p > 0 else 0.0 for m, p in zip(matches, possible)]
        geo_mean = math.exp(sum(math.log(p) for p in precisions) / order) if min(precisions) > 0 else 0.0
        if ref_len == 0:
            warnings.warn(f"{self.where}: the references have no tokens; length_ratio, brevity_penalty and bleu "
                          "are NaN (evaluate divides by zero).", UndefinedMetricWarning, stacklevel=2)
            ratio = bp = math.nan
        else:
            ratio = hyp_len / ref_len
            # an empty prediction side (ratio 0): evaluate divides by zero; the limit of exp(1 - 1/ratio) is 0
            bp = 1.0 if ratio > 1.0 else (math.exp(1 - 1.0 / ratio) if ratio > 0 else 0.0)
        return {"bleu": geo_mean * bp, "precisions": precisions, "brevity_penalty": bp, "length_ratio": ratio,
                "translation_length": hyp_len, "reference_length": ref_len}


class _Sacrebleu(Module):
    """A sacrebleu corpus metric: map keeps the texts, reduce scores the collection, as evaluate does."""

    requirements = _SACREBLEU
    per_instance = True

    def map(self, prediction: Any, references: Any) -> tuple[str, list[str]]:
        text(prediction, self.where)
        return prediction, texts(references, "the references", self.where)

    def streams(self, items: list[Any]) -> tuple[list[str], list[list[str]]]:
        """Predictions and evaluate's transposed reference streams (one list per reference position)."""
        if not items:
            raise EvaluationError(f"{self.where} has seen no data.")
        count = len(items[0][1])
        if any(len(refs) != count for _, refs in items):
            raise InvalidParameterError(f"{self.where}: sacrebleu needs the same number of references for every "
                                        f"prediction; got {sorted({len(r) for _, r in items})}.")
        return [p for p, _ in items], [[refs[i] for _, refs in items] for i in range(count)]


class Sacrebleu(_Sacrebleu):
    name = "sacrebleu"
    keys = ("score", "counts", "totals", "precisions", "bp", "sys_len", "ref_len")
    main_score = "score"
    defaults: ClassVar[dict[str, Any]] = {"smooth_method": "exp", "smooth_value": None, "force": False,
                                         "lowercase": False, "tokenize": None, "use_effective_order": False}

    def reduce(self, items: list[Any]) -> dict[str, Any]:
        preds, refs = self.streams(items)
        opts = dict(self.options)
        if not opts["tokenize"]:
            opts.pop("tokenize")
        out = require("sacrebleu").corpus_bleu(preds, refs, **opts)
        return {"score": out.score, "counts": out.counts, "totals": out.totals, "precisions": out.precisions,
                "bp": out.bp, "sys_len": out.sys_len, "ref_len": out.ref_len}


class Chrf(_Sacrebleu):
    name = "chrf"
    keys = ("score", "char_order", "word_order", "beta")
    main_score = "score"
    defaults: ClassVar[dict[str, Any]] = {"char_order": 6, "word_order": 0, "beta": 2, "lowercase": False,
                                         "whitespace": False, "eps_smoothing": False}

    def reduce(self, items: list[Any]) -> dict[str, Any]:
        preds, refs = self.streams(items)
        o = self.options
        chrf = require("sacrebleu.metrics").CHRF(o["char_order"], o["word_order"], o["beta"], o["lowercase"],
                                                 o["whitespace"], o["eps_smoothing"])
        out = chrf.corpus_score(preds, refs)
        return {"score": out.score, "char_order": out.char_order, "word_order": out.word_order, "beta": out.beta}


class Ter(_Sacrebleu):
    name = "ter"
    keys = ("score", "num_edits", "ref_length")
    main_score = "score"
    higher_is_better = False
    defaults: ClassVar[dict[str, Any]] = {"normalized": False, "ignore_punct": False, "support_zh_ja_chars": False,
                                         "case_sensitive": False}

    def reduce(self, items: list[Any]) -> dict[str, Any]:
        preds, refs = self.streams(items)
        o = self.options
        ter = require("sacrebleu.metrics").TER(normalized=o["normalized"], no_punct=o["ignore_punct"],
                                               asian_support=o["support_zh_ja_chars"],
                                               case_sensitive=o["case_sensitive"])
        out = ter.corpus_score(preds, refs)
        return {"score": out.score, "num_edits": out.num_edits, "ref_length": out.ref_length}


class _ErrorRate(Module):
    """wer / cer with jiwer: evaluate sums the edits and the reference lengths over the instances."""

    defaults: ClassVar[dict[str, Any]] = {"concatenate_texts": False}
    higher_is_better = False
    requirements = {"jiwer": "jiwer"}
    per_instance = True
    process: ClassVar[str]

    def map(self, prediction: Any, references: Any) -> tuple[str, str, float, float]:
        reference = one_reference(references, self.where)
        texts([prediction, reference], "the prediction and its reference", self.where)
        out = getattr(require("jiwer"), self.process)(reference, prediction)
        return (prediction, reference, float(out.substitutions + out.deletions + out.insertions),
                float(out.substitutions + out.deletions + out.hits))

    def reduce(self, items: list[Any]) -> dict[str, Any]:
        if self.options["concatenate_texts"]:
            out = getattr(require("jiwer"), self.process)([r for _, r, _, _ in items], [p for p, _, _, _ in items])
            return {self.name: out.wer if self.name == "wer" else out.cer}
        errors = sum(i[2] for i in items)
        total = sum(i[3] for i in items)
        if total == 0:
            warnings.warn(f"{self.where}: the references are empty; {self.name} is NaN (evaluate divides by zero).",
                          UndefinedMetricWarning, stacklevel=2)
            return {self.name: math.nan}
        return {self.name: errors / total}


class Wer(_ErrorRate):
    name = "wer"
    process = "process_words"


class Cer(_ErrorRate):
    name = "cer"
    process = "process_characters"


class Rouge(Module):
    """rouge-score's F-measures, aggregated as evaluate does (``use_aggregator=True``).

    evaluate's aggregate is rouge-score's ``BootstrapAggregator``: the median of 1,000
    resampled means, drawn from NumPy's global random state. assay runs the same aggregator on
    the same per-instance scores, so after the same ``np.random.seed`` the values are equal.
    """

    name = "rouge"
    keys = ("rouge1", "rouge2", "rougeL", "rougeLsum")
    main_score = "rouge1"
    defaults: ClassVar[dict[str, Any]] = {"rouge_types": None, "use_aggregator": True, "use_stemmer": False,
                                         "tokenizer": None}
    requirements = {"rouge_score": "rouge-score"}
    per_instance = True

    def __init__(self, config: str | None, options: dict[str, Any]) -> None:
        super().__init__(config, options)
        types = self.options["rouge_types"]
        if isinstance(types, str):
            types = [types]
        self.types = list(types) if types is not None else list(self.keys)
        self.main_score = self.types[0] if self.types else "rouge1"  # type: ignore[misc]

    def check(self) -> None:
        choice(self, "use_aggregator", [True], " (use_aggregator=False gives evaluate's per-instance lists: "
               "assay reports them as instance scores, with the aggregate as the global score)")
        if not self.types or not all(isinstance(t, str) for t in self.types):
            raise InvalidParameterError(f"{self.where}: rouge_types must be a non-empty list of ROUGE types "
                                        f"(rouge1, rouge2, rougeL, rougeLsum); got {self.options['rouge_types']!r}.")
        tokenizer = self.options["tokenizer"]
        if tokenizer is not None and not callable(tokenizer):
            raise InvalidParameterError(f"{self.where}: tokenizer must be a callable (str -> list of tokens); got "
                                        f"{tokenizer!r:.60}.")

    def result_keys(self) -> tuple[str, ...]:
        return tuple(self.types)

    def _scorer(self) -> Any:
        scorer = self.__dict__.get("_scorer_obj")
        if scorer is None:
            tokenizer = self.options["tokenizer"]
            wrapped = None
            if tokenizer is not None:  # rouge-score calls .tokenize(text), as evaluate's wrapper gives it
                wrapped = type("Tokenizer", (), {"tokenize": staticmethod(tokenizer)})()
            try:
                scorer = require("rouge_score.rouge_scorer").RougeScorer(
                    rouge_types=self.types, use_stemmer=self.options["use_stemmer"], tokenizer=wrapped)
            except ValueError as exc:
                raise InvalidParameterError(f"{self.where}: rouge-score rejected the options: {exc}") from exc
            self.__dict__["_scorer_obj"] = scorer
        return scorer

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_scorer_obj", None)
        return state

    def map(self, prediction: Any, references: Any) -> dict[str, Any]:
        refs = texts(references, "the references", self.where)
        text(prediction, self.where)
        scorer = self._scorer()
        return dict(scorer.score(refs[0], prediction) if len(refs) == 1 else scorer.score_multi(refs, prediction))

    def reduce(self, items: list[Any]) -> dict[str, Any]:
        aggregator = require("rouge_score.scoring").BootstrapAggregator()
        for score in items:
            aggregator.add_scores(score)
        result = aggregator.aggregate()
        return {key: result[key].mid.fmeasure for key in result}


class Meteor(Module):
    """NLTK's METEOR of each instance (``word_tokenize``d texts), averaged, as evaluate does.

    Needs NLTK's WordNet data on disk (and its ``punkt_tab`` sentence model for
    ``word_tokenize``); assay never downloads them (evaluate's module calls ``nltk.download``).
    ``split_sentences=False`` (assay's option) tokenizes without the sentence model
    (``word_tokenize(text, preserve_line=True)``), which differs from evaluate only on texts of
    several sentences.
    """

    name = "meteor"
    defaults: ClassVar[dict[str, Any]] = {"alpha": 0.9, "beta": 3, "gamma": 0.5, "split_sentences": True}
    requirements = {"nltk": "nltk"}
    per_instance = True

    def map(self, prediction: Any, references: Any) -> float:
        refs = texts(references, "the references", self.where)
        text(prediction, self.where)
        nltk = require("nltk")
        meteor = require("nltk.translate.meteor_score")
        keep_line = not self.options["split_sentences"]
        opts = {k: self.options[k] for k in ("alpha", "beta", "gamma")}
        try:
            def tokens(text: str) -> list[str]:
                return list(nltk.word_tokenize(text, preserve_line=keep_line))

            if len(refs) == 1:
                return float(meteor.single_meteor_score(tokens(refs[0]), tokens(prediction), **opts))
            return float(meteor.meteor_score([tokens(r) for r in refs], tokens(prediction), **opts))
        except LookupError as exc:
            raise EvaluationError(
                f"{self.where} needs NLTK data that is not on disk, and assay never downloads at run time: run "
                "`python -m nltk.downloader wordnet punkt_tab` where there is network (or copy an nltk_data folder "
                "and set NLTK_DATA to it); 'evaluate:meteor[split_sentences=false]' needs only wordnet. "
                f"NLTK said: {str(exc).strip().splitlines()[0] if str(exc).strip() else exc!r}") from exc

    def reduce(self, items: list[Any]) -> dict[str, Any]:
        return {"meteor": float(np.mean(items)) if items else math.nan}


MODULES: dict[str, type[Module]] = {m.name: m for m in (ExactMatch, Bleu, Sacrebleu, Chrf, Ter, Wer, Cer, Rouge,
                                                         Meteor)}
