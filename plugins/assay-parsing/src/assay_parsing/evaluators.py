"""Sentence evaluators ``uas``, ``las``, ``clas`` and ``tagging_accuracy`` (CoNLL 2018 definitions).

Each evaluator is a picklable callable ``(sent, w_vector) -> (correct_num, gold_set_size)``
for :meth:`assay.EvaluatorBase.sequentialEvaluate` / ``parallelEvaluate``. ``sent`` is
either

* a :class:`~assay_parsing.sentence.SentencePair` (or a ``(gold, system)`` tuple) of two
  :class:`~assay_parsing.sentence.Sentence` objects: file evaluation; ``w_vector`` is not
  used (pass ``None``); or
* a gold :class:`~assay_parsing.sentence.Sentence`: the evaluator calls
  ``w_vector.parse(sent)``, which returns either a ``Sentence`` (the system analysis) or one
  prediction per syntactic word: a HEAD ``int`` or a ``(head, deprel)`` pair for ``uas``; a
  ``(head, deprel)`` pair for ``las`` and ``clas``; the tag string for ``tagging_accuracy``.

Only syntactic words count: multiword token ranges and empty nodes never do. Gold and
system must have the same words (same FORMs in the same order, same multiword ranges);
otherwise :class:`TokenizationError` names the sentence and its line.

Definitions (Zeman et al. 2018, "CoNLL 2018 Shared Task: Multilingual Parsing from Raw
Text to Universal Dependencies", section 4; https://universaldependencies.org/conll18/evaluation.html):

* ``uas``: ``(#words with the gold HEAD, #words)``.
* ``las``: ``(#words with the gold HEAD and universal DEPREL, #words)``; the universal
  DEPREL is the part before the first ``:`` (``nsubj:pass`` -> ``nsubj``).
* ``clas``: content-word LAS as an F1. Content words are words whose universal DEPREL is in
  :data:`CONTENT_DEPRELS` (so not ``aux case cc clf cop det mark``, not ``punct``, not an
  unknown label). With ``c`` = gold content words attached correctly (HEAD and universal
  DEPREL), ``g`` = gold content words and ``s`` = system content words (by the system's
  DEPREL), precision is ``c / s``, recall ``c / g`` and F1 ``2c / (g + s)``. The tally is
  ``(2c, g + s)``: its ratio is exactly the F1, and summing tallies over sentences or shards
  gives the corpus F1, as the official script computes it.
* ``tagging_accuracy``: ``(#words with the gold tag, #words)`` for ``tag="upos"`` (default)
  or ``"xpos"``.

With the same tokenization, precision, recall and F1 of the official script's UAS, LAS and
UPOS all equal these accuracies, because every word is aligned.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.errors import AssayError, InvalidParameterError
from assay_parsing.sentence import Sentence, SentencePair

__all__ = ["CLAS", "CONTENT_DEPRELS", "FUNCTION_DEPRELS", "LAS", "TaggingAccuracy", "TokenizationError", "UAS",
           "check_same_words", "universal_deprel"]

#: Universal relations whose dependents are content words (CoNLL 2018 ``CONTENT_DEPRELS``).
CONTENT_DEPRELS = frozenset({
    "nsubj", "obj", "iobj", "csubj", "ccomp", "xcomp", "obl", "vocative", "expl", "dislocated", "advcl",
    "advmod", "discourse", "nmod", "appos", "nummod", "acl", "amod", "conj", "fixed", "flat", "compound",
    "list", "parataxis", "orphan", "goeswith", "reparandum", "root", "dep",
})
#: Function-word relations (CoNLL 2018 ``FUNCTIONAL_DEPRELS``); ``punct`` is neither kind.
FUNCTION_DEPRELS = frozenset({"aux", "cop", "mark", "det", "clf", "case", "cc"})


class TokenizationError(AssayError, ValueError):
    """Gold and system sentences do not have the same syntactic words."""


def universal_deprel(deprel: str) -> str:
    """The universal part of a relation: the text before the first ``:``.

    >>> universal_deprel("nsubj:pass"), universal_deprel("obl")
    ('nsubj', 'obl')
    """
    return deprel.split(":", 1)[0]


#: the end of every tokenization error: where files tokenized differently are scored
CONLL18_HINT = (" To score files tokenized differently, use `assay parse-eval --conll18` (the CoNLL 2018 alignment; "
            "in Python, assay_parsing.conll18.evaluate).")


def check_same_words(gold: Sentence, system: Sentence) -> None:
    """Raise :class:`TokenizationError` unless both sentences have the same words and ranges."""
    if gold.forms() == system.forms():
        gold_ranges = [(m.first, m.last, m.form) for m in gold.multiword_tokens]
        system_ranges = [(m.first, m.last, m.form) for m in system.multiword_tokens]
        if gold_ranges == system_ranges:
            return
        diff = next((g, s) for g, s in zip(gold_ranges + [None], system_ranges + [None]) if g != s)
        show = [f"'{r[0]}-{r[1]}' {r[2]!r}" if r else "none" for r in diff]
        raise TokenizationError(
            f"Different tokenization in {gold.describe()} (system {system.describe()}): multiword token "
            f"{show[0]} in gold, {show[1]} in system. Gold and system must have the same tokens and words."
            + CONLL18_HINT)
    g_forms, s_forms = gold.forms(), system.forms()
    for i, (g, s) in enumerate(zip(g_forms, s_forms), start=1):
        if g != s:
            line = system.line_of(i)
            at = f" (system line {line})" if line is not None else ""
            raise TokenizationError(
                f"Different tokenization in {gold.describe()} (system {system.describe()}): word {i} is {g!r} "
                f"in gold and {s!r} in system{at}. Gold and system must have the same words." + CONLL18_HINT)
    raise TokenizationError(
        f"Different tokenization in {gold.describe()} (system {system.describe()}): {len(g_forms)} words in "
        f"gold, {len(s_forms)} in system. Gold and system must have the same words." + CONLL18_HINT)


def _analysis(sent: Any, w_vector: Any, evaluator: str) -> tuple[Sentence, Sentence | Sequence[Any]]:
    """Return ``(gold, predicted)`` where ``predicted`` is a Sentence or one prediction per word."""
    if isinstance(sent, SentencePair):
        gold, system = sent.gold, sent.system
    elif isinstance(sent, (tuple, list)) and len(sent) == 2 and all(isinstance(s, Sentence) for s in sent):
        gold, system = sent
    elif isinstance(sent, Sentence):
        gold = sent
        parse = getattr(w_vector, "parse", None)
        if parse is None:
            raise InvalidParameterError(
                f"{evaluator} got a single gold Sentence, so it needs a model: 'w_vector' must have a "
                f"parse(sentence) method, got {type(w_vector).__name__}. To compare two files, pass "
                f"(gold, system) SentencePair items.")
        parsed = parse(sent)
        if not isinstance(parsed, Sentence):
            per_word = list(parsed)
            if len(per_word) != len(gold.words):
                raise TokenizationError(
                    f"{evaluator}: w_vector.parse returned {len(per_word)} predictions for {gold.describe()}, "
                    f"which has {len(gold.words)} words.")
            return gold, per_word
        system = parsed
    else:
        raise InvalidParameterError(
            f"{evaluator} expects 'sent' to be a SentencePair, a (gold, system) pair of Sentences or a gold "
            f"Sentence; got {type(sent).__name__}.")
    check_same_words(gold, system)
    return gold, system


def _heads_and_labels(predicted: Sentence | Sequence[Any], evaluator: str,
                      need_label: bool) -> tuple[list[int], list[str] | None]:
    if isinstance(predicted, Sentence):
        return [w.head for w in predicted.words], [w.deprel for w in predicted.words]
    heads: list[int] = []
    labels: list[str] = []
    for i, p in enumerate(predicted, start=1):
        if isinstance(p, (tuple, list)) and len(p) == 2:
            heads.append(p[0])
            labels.append(p[1])
        elif not need_label and isinstance(p, int):
            heads.append(p)
        else:
            expected = "a (head, deprel) pair" if need_label else "a head (int) or a (head, deprel) pair"
            raise InvalidParameterError(
                f"{evaluator}: w_vector.parse must return a Sentence or one prediction per word; prediction "
                f"{i} should be {expected}, got {p!r}.")
    return heads, (labels if labels else None)


class UAS:
    """Unlabelled attachment score: ``(#words whose HEAD is the gold HEAD, #words)``.

    Counts syntactic words only (no multiword ranges, no empty nodes), punctuation
    included, as in the CoNLL 2018 shared task.
    """

    name = "uas"
    #: the ``EVALUATOR`` log lines' labels (assay.core.log.log_labels)
    log_label = "Unlabelled accuracy"
    attachment_label: str | None = "Unlabelled attachment accuracy"

    def __call__(self, sent: Any, w_vector: Any = None) -> tuple[int, int]:
        gold, predicted = _analysis(sent, w_vector, self.name)
        heads, _ = _heads_and_labels(predicted, self.name, need_label=False)
        correct = sum(1 for w, h in zip(gold.words, heads) if w.head == h)
        return correct, len(gold.words)

    def __repr__(self) -> str:
        return "UAS()"


class LAS:
    """Labelled attachment score: ``(#words with gold HEAD and gold universal DEPREL, #words)``.

    Parameters
    ----------
    subtypes : bool, default False
        Compare whole relations (``nsubj:pass`` differs from ``nsubj``) instead of their
        universal part (CoNLL 2018 compares the universal part).
    """

    name = "las"
    #: the ``EVALUATOR`` log lines' labels (assay.core.log.log_labels)
    log_label = "Labelled accuracy"
    attachment_label: str | None = "Labelled attachment accuracy"

    def __init__(self, *, subtypes: bool = False) -> None:
        self.subtypes = bool(subtypes)

    def _label(self, deprel: str) -> str:
        return deprel if self.subtypes else universal_deprel(deprel)

    def __call__(self, sent: Any, w_vector: Any = None) -> tuple[int, int]:
        gold, predicted = _analysis(sent, w_vector, self.name)
        heads, labels = _heads_and_labels(predicted, self.name, need_label=True)
        label = self._label
        correct = sum(1 for w, h, d in zip(gold.words, heads, labels or ())
                      if w.head == h and label(w.deprel) == label(d))
        return correct, len(gold.words)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(subtypes={self.subtypes})"


class CLAS(LAS):
    """Content-word labelled attachment score (CoNLL 2018), as an additive F1 tally.

    Returns ``(2c, g + s)``: ``c`` gold content words with the gold HEAD and universal
    DEPREL, ``g`` gold content words, ``s`` system content words (content by the system's
    own DEPREL). ``2c / (g + s)`` is the F1 of precision ``c / s`` and recall ``c / g``, and
    tallies add over sentences and shards to the corpus F1. With the same tokenization this
    equals the official script's CLAS F1.

    Parameters
    ----------
    subtypes : bool, default False
        Also require the relation subtypes to match (content words are still chosen by the
        universal part).
    """

    name = "clas"
    #: the ``EVALUATOR`` log lines' labels (assay.core.log.log_labels)
    log_label = "CLAS F1"
    attachment_label: str | None = None

    def __call__(self, sent: Any, w_vector: Any = None) -> tuple[int, int]:
        gold, predicted = _analysis(sent, w_vector, self.name)
        heads, labels = _heads_and_labels(predicted, self.name, need_label=True)
        label = self._label
        correct = gold_content = system_content = 0
        for w, h, d in zip(gold.words, heads, labels or ()):
            if universal_deprel(d) in CONTENT_DEPRELS:
                system_content += 1
            if universal_deprel(w.deprel) in CONTENT_DEPRELS:
                gold_content += 1
                if w.head == h and label(w.deprel) == label(d):
                    correct += 1
        return 2 * correct, gold_content + system_content


class TaggingAccuracy:
    """Tagging accuracy: ``(#words whose tag is the gold tag, #words)``.

    Parameters
    ----------
    tag : {"upos", "xpos"}, default "upos"
        The column compared (for CoNLL-X files: CPOSTAG and POSTAG).
    """

    name = "tagging_accuracy"
    #: the ``EVALUATOR`` log lines' labels (assay.core.log.log_labels)
    log_label = "Tagging accuracy"
    attachment_label: str | None = None
    TAGS = ("upos", "xpos")

    def __init__(self, *, tag: str = "upos") -> None:
        if tag not in self.TAGS:
            raise InvalidParameterError(
                f"The 'tag' parameter of tagging_accuracy must be one of {set(self.TAGS)}. Got {tag!r} instead.")
        self.tag = tag

    def __call__(self, sent: Any, w_vector: Any = None) -> tuple[int, int]:
        gold, predicted = _analysis(sent, w_vector, self.name)
        tag = self.tag
        tags: Sequence[Any]
        if isinstance(predicted, Sentence):
            tags = [getattr(w, tag) for w in predicted.words]
        else:
            tags = predicted
        correct = sum(1 for w, t in zip(gold.words, tags) if getattr(w, tag) == t)
        return correct, len(gold.words)

    def __repr__(self) -> str:
        return f"TaggingAccuracy(tag={self.tag!r})"
