"""The CoNLL 2018 shared task's evaluation, with its word alignment, as additive tallies.

The official script (``conll18_ud_eval.py``, maintained as ``udtools.udeval``) does not
need the system to keep the gold tokenization or sentence split. It concatenates the
FORMs of each file without whitespace (which must give the same characters), gives every
token, multiword token and sentence its character span, and aligns the words:

* outside multiword tokens, a gold and a system word align when their spans are equal;
* a region where either side has a multiword token is grown until both sides end at the
  same character, and the words inside it align by a longest common subsequence of their
  lower-cased FORMs.

Every score is then a tally ``(gold, system, correct, aligned)``: precision ``correct /
system``, recall ``correct / gold``, F1 ``2 correct / (gold + system)``, aligned accuracy
``correct / aligned``. Tokens and sentences count equal spans; ``Words`` counts aligned
words; the others count aligned words whose analysis matches:

========  ============================================================================
UPOS      the UPOS column
XPOS      the XPOS column
UFeats    the universal features only (the 21 of the UD guidelines), sorted
AllTags   UPOS, XPOS and UFeats together
Lemmas    LEMMA (any system lemma is right where the gold one is ``_``)
UAS       the head: the system head word is aligned with the gold head word (or both are the root)
LAS       the head and the universal part of DEPREL (before ``:``)
CLAS      LAS over content words (gold and system counts filtered by DEPREL)
MLAS      CLAS plus UPOS, UFeats and the functional children (aux, cop, mark, det, clf, case, cc)
BLEX      CLAS plus the lemma
========  ============================================================================

This module is assay's own implementation of that published definition (Zeman et al.,
CoNLL 2018 shared task overview, section 2.4), checked against ``udtools`` on real data in
the tests. The enhanced-graph scores ELAS / EULAS are not computed.

Because the scores are tallies, the evaluation of a file pair is the sum of the evaluations
of its parts when the parts are cut where both files are at a sentence boundary of the same
character: :func:`aligned_cuts` finds those points and :func:`evaluate_segments` adds the
parts (this is how ``parse-eval`` shards unequal tokenizations).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence

import attrs

from assay.core.tally import Tally, additive
from assay.errors import AssayError
from assay_parsing.sentence import Sentence

__all__ = ["METRICS", "AlignmentError", "Score", "UDFile", "aligned_cuts", "evaluate", "evaluate_segments",
           "format_official", "load_sentences", "split_cuts"]

#: the scores, in the official script's order
METRICS = ("Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "AllTags", "Lemmas", "UAS", "LAS",
           "CLAS", "MLAS", "BLEX")

UNIVERSAL_FEATURES = frozenset({
    "PronType", "NumType", "Poss", "Reflex", "Foreign", "Abbr", "Gender", "Animacy", "Number", "Case",
    "Definite", "Degree", "VerbForm", "Mood", "Tense", "Aspect", "Voice", "Evident", "Polarity", "Person",
    "Polite"})
CONTENT_DEPRELS = frozenset({
    "nsubj", "obj", "iobj", "csubj", "ccomp", "xcomp", "obl", "vocative", "expl", "dislocated", "advcl",
    "advmod", "discourse", "nmod", "appos", "nummod", "acl", "amod", "conj", "fixed", "flat", "compound",
    "list", "parataxis", "orphan", "goeswith", "reparandum", "root", "dep"})
FUNCTIONAL_DEPRELS = frozenset({"aux", "cop", "mark", "det", "clf", "case", "cc"})


class AlignmentError(AssayError, ValueError):
    """The gold and system files do not hold the same text (their characters differ)."""


@attrs.frozen
class Score(Tally):
    """One metric's tally, an :class:`assay.Tally`: scores add with ``+`` (``aligned`` is None for
    Tokens, Sentences and Words, which have no aligned accuracy)."""

    gold: int = additive(0)
    system: int = additive(0)
    correct: int = additive(0)
    aligned: int | None = additive(None)

    @property
    def precision(self) -> float:
        return self.correct / self.system if self.system else 0.0

    @property
    def recall(self) -> float:
        return self.correct / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        return 2 * self.correct / (self.system + self.gold) if self.system + self.gold else 0.0

    @property
    def aligned_accuracy(self) -> float | None:
        if self.aligned is None:
            return None
        return self.correct / self.aligned if self.aligned else 0.0


class _Word:
    """A syntactic word with its span, its normalised columns, and links filled after loading."""

    __slots__ = ("start", "end", "multiword", "form", "lemma", "upos", "xpos", "feats", "deprel", "head",
                 "parent", "children", "content", "functional")

    def __init__(self, start: int, end: int, multiword: bool, w: object) -> None:
        self.start, self.end, self.multiword = start, end, multiword
        self.form = w.form  # type: ignore[attr-defined]
        self.lemma = w.lemma  # type: ignore[attr-defined]
        self.upos = w.upos  # type: ignore[attr-defined]
        self.xpos = w.xpos  # type: ignore[attr-defined]
        feats = w.feats  # type: ignore[attr-defined]
        self.feats = "" if feats in ("_", "") else \
            "|".join(sorted(f for f in feats.split("|") if f.split("=", 1)[0] in UNIVERSAL_FEATURES))
        self.deprel = w.deprel.split(":")[0]  # type: ignore[attr-defined]
        self.head: int = w.head  # type: ignore[attr-defined]
        self.parent: _Word | None = None
        self.children: list[_Word] = []
        self.content = self.deprel in CONTENT_DEPRELS
        self.functional = self.deprel in FUNCTIONAL_DEPRELS


def _strip_spaces(form: str, sent: Sentence) -> str:
    """``form`` without its space separators (Unicode category Zs); ``sent`` names the place of an error.

    Most forms are ASCII without a space: returned as they are, without a look at each character.
    """
    if form.isascii() and " " not in form:
        text = form
    else:
        text = "".join(c for c in form if unicodedata.category(c) != "Zs")
    if not text:
        raise AlignmentError(f"{sent.describe()}: a FORM is empty once its spaces are removed ({form!r}).")
    return text


@attrs.define
class UDFile:
    """A file's text (without spaces), its token, sentence and word spans, and its words."""

    characters: list[str] = attrs.field(factory=list)
    tokens: list[tuple[int, int]] = attrs.field(factory=list)
    sentences: list[tuple[int, int]] = attrs.field(factory=list)
    words: list[_Word] = attrs.field(factory=list)
    #: the position in ``words`` and in ``tokens`` where each sentence starts
    sentence_starts: list[tuple[int, int]] = attrs.field(factory=list)


def load_sentences(sentences: Iterable[Sentence]) -> UDFile:
    """Spans and words of ``sentences`` (in order), as the official script builds them."""
    ud = UDFile()
    for sent in sentences:
        ud.sentence_starts.append((len(ud.words), len(ud.tokens)))
        first_char = len(ud.characters)
        ranges = {m.first: m for m in sent.multiword_tokens}
        words: list[_Word] = []
        i = 0
        while i < len(sent.words):
            w = sent.words[i]
            mwt = ranges.get(w.id)
            start = len(ud.characters)
            if mwt is not None:
                ud.characters.extend(_strip_spaces(mwt.form, sent))
                end = len(ud.characters)
                ud.tokens.append((start, end))
                while i < len(sent.words) and sent.words[i].id <= mwt.last:
                    words.append(_Word(start, end, True, sent.words[i]))
                    i += 1
                continue
            ud.characters.extend(_strip_spaces(w.form, sent))
            end = len(ud.characters)
            ud.tokens.append((start, end))
            words.append(_Word(start, end, False, w))
            i += 1
        for word in words:
            if word.head:
                word.parent = words[word.head - 1]
                if word.functional:
                    word.parent.children.append(word)
        ud.words.extend(words)
        if words:
            ud.sentences.append((first_char, len(ud.characters)))
    return ud


def _spans_score(gold: Sequence[tuple[int, int]], system: Sequence[tuple[int, int]]) -> Score:
    correct = gi = si = 0
    while gi < len(gold) and si < len(system):
        if system[si][0] < gold[gi][0]:
            si += 1
        elif gold[gi][0] < system[si][0]:
            gi += 1
        else:
            correct += gold[gi][1] == system[si][1]
            gi += 1
            si += 1
    return Score(len(gold), len(system), correct)


def _beyond_end(words: Sequence[_Word], i: int, end: int) -> bool:
    if i >= len(words):
        return True
    return words[i].start >= end if words[i].multiword else words[i].end > end


def _extend_end(word: _Word, end: int) -> int:
    return word.end if word.multiword and word.end > end else end


def _multiword_region(gold: Sequence[_Word], system: Sequence[_Word], gi: int, si: int
                      ) -> tuple[int, int, int, int]:
    """The smallest region starting at (gi, si) that holds the multiword token(s) there: (gs, ss, ge, se)."""
    if gold[gi].multiword:
        end = gold[gi].end
        if not system[si].multiword and system[si].start < gold[gi].start:
            si += 1
    else:
        end = system[si].end
        if not gold[gi].multiword and gold[gi].start < system[si].start:
            gi += 1
    gs, ss = gi, si
    while not _beyond_end(gold, gi, end) or not _beyond_end(system, si, end):
        if gi < len(gold) and (si >= len(system) or gold[gi].start <= system[si].start):
            end = _extend_end(gold[gi], end)
            gi += 1
        else:
            end = _extend_end(system[si], end)
            si += 1
    return gs, ss, gi, si


def _align_lcs(gold: Sequence[_Word], system: Sequence[_Word], pairs: list[tuple[_Word, _Word]]) -> None:
    """Append the pairs of a longest common subsequence of lower-cased FORMs (the first one, scanning forward)."""
    g_forms = [w.form.lower() for w in gold]
    s_forms = [w.form.lower() for w in system]
    n, m = len(gold), len(system)
    lcs = [[0] * (m + 1) for _ in range(n + 1)]  # lcs[g][s]: LCS length of gold[g:], system[s:]
    for g in range(n - 1, -1, -1):
        for s in range(m - 1, -1, -1):
            best = lcs[g + 1][s + 1] + 1 if g_forms[g] == s_forms[s] else 0
            lcs[g][s] = max(best, lcs[g + 1][s], lcs[g][s + 1])
    g = s = 0
    while g < n and s < m:
        if g_forms[g] == s_forms[s]:
            pairs.append((gold[g], system[s]))
            g += 1
            s += 1
        elif lcs[g][s] == lcs[g + 1][s]:
            g += 1
        else:
            s += 1


def align_words(gold: Sequence[_Word], system: Sequence[_Word]) -> list[tuple[_Word, _Word]]:
    """The aligned (gold, system) word pairs, in order."""
    pairs: list[tuple[_Word, _Word]] = []
    gi = si = 0
    while gi < len(gold) and si < len(system):
        if gold[gi].multiword or system[si].multiword:
            gs, ss, gi, si = _multiword_region(gold, system, gi, si)
            _align_lcs(gold[gs:gi], system[ss:si], pairs)
        elif (gold[gi].start, gold[gi].end) == (system[si].start, system[si].end):
            pairs.append((gold[gi], system[si]))
            gi += 1
            si += 1
        elif gold[gi].start <= system[si].start:
            gi += 1
        else:
            si += 1
    return pairs


def _check_same_text(gold: UDFile, system: UDFile, where: str) -> None:
    if gold.characters == system.characters:
        return
    index = 0
    while index < min(len(gold.characters), len(system.characters)) and \
            gold.characters[index] == system.characters[index]:
        index += 1
    def sentence(ud: UDFile) -> int:
        return sum(1 for start, _ in ud.sentences if start <= index)

    raise AlignmentError(
        f"{where}: the gold and system texts differ at character {index} (spaces removed; gold sentence "
        f"{sentence(gold)}, system sentence {sentence(system)}, counting from 1): gold has "
        f"{''.join(gold.characters[index:index + 20])!r}, system has "
        f"{''.join(system.characters[index:index + 20])!r}. Both files must tokenize the same text.")


def evaluate(gold: UDFile, system: UDFile, *, where: str = "gold and system") -> dict[str, Score]:
    """Every score of :data:`METRICS` for a gold / system pair of the same text."""
    _check_same_text(gold, system, where)
    pairs = align_words(gold.words, system.words)
    to_gold = {id(s): g for g, s in pairs}

    def head(w: _Word, system_side: bool) -> object:
        if w.parent is None:
            return None
        return to_gold.get(id(w.parent), "not aligned") if system_side else w.parent

    def lemma(w: _Word, gold_word: _Word) -> str:
        return w.lemma if gold_word.lemma != "_" else "_"

    def children(w: _Word, system_side: bool) -> list[tuple[object, ...]]:
        return [(to_gold.get(id(c), "not aligned") if system_side else c, c.deprel, c.upos, c.feats)
                for c in w.children]

    keys = {
        "UPOS": lambda w, g, s: w.upos,
        "XPOS": lambda w, g, s: w.xpos,
        "UFeats": lambda w, g, s: w.feats,
        "AllTags": lambda w, g, s: (w.upos, w.xpos, w.feats),
        "Lemmas": lambda w, g, s: lemma(w, g),
        "UAS": lambda w, g, s: head(w, s),
        "LAS": lambda w, g, s: (head(w, s), w.deprel),
        "CLAS": lambda w, g, s: (head(w, s), w.deprel),
        "MLAS": lambda w, g, s: (head(w, s), w.deprel, w.upos, w.feats, children(w, s)),
        "BLEX": lambda w, g, s: (head(w, s), w.deprel, lemma(w, g)),
    }
    content_only = {"CLAS", "MLAS", "BLEX"}
    scores = {"Tokens": _spans_score(gold.tokens, system.tokens),
              "Sentences": _spans_score(gold.sentences, system.sentences),
              "Words": Score(len(gold.words), len(system.words), len(pairs))}
    n_gold_content = sum(w.content for w in gold.words)
    n_system_content = sum(w.content for w in system.words)
    for name, key in keys.items():
        filtered = name in content_only
        correct = aligned = 0
        for g, s in pairs:
            if filtered and not g.content:
                continue
            aligned += 1
            correct += key(g, g, False) == key(s, g, True)
        if filtered:
            scores[name] = Score(n_gold_content, n_system_content, correct, aligned)
        else:
            scores[name] = Score(len(gold.words), len(system.words), correct, aligned)
    return {name: scores[name] for name in METRICS}


def aligned_cuts(gold: Sequence[Sentence], system: Sequence[Sentence]) -> list[tuple[int, int]]:
    """The (gold sentence, system sentence) positions where both files start a sentence at the same
    character, (0, 0) first: cutting both files there gives parts whose scores add up to the whole."""
    def starts(sentences: Sequence[Sentence]) -> dict[int, int]:
        out: dict[int, int] = {}
        offset = 0
        for i, sent in enumerate(sentences):
            out.setdefault(offset, i)
            covered: set[int] = set()
            for m in sent.multiword_tokens:
                covered.update(range(m.first, m.last + 1))
                offset += len(_strip_spaces(m.form, sent))
            for w in sent.words:
                if w.id not in covered:
                    offset += len(_strip_spaces(w.form, sent))
        return out

    g_starts, s_starts = starts(gold), starts(system)
    return sorted((g_starts[c], s_starts[c]) for c in g_starts.keys() & s_starts.keys())


def evaluate_segments(gold: Sequence[Sentence], system: Sequence[Sentence],
                      cuts: Sequence[tuple[int, int]], end: tuple[int, int] | None = None) -> dict[str, Score]:
    """The sum of :func:`evaluate` over the parts between consecutive ``cuts`` (from :func:`aligned_cuts`)
    and ``end`` (default: the ends of both files)."""
    bounds = list(cuts) + [end if end is not None else (len(gold), len(system))]
    total: dict[str, Score] | None = None
    for (g0, s0), (g1, s1) in zip(bounds, bounds[1:]):
        part = evaluate(load_sentences(gold[g0:g1]), load_sentences(system[s0:s1]),
                        where=f"gold sentences {g0}..{g1 - 1}, system sentences {s0}..{s1 - 1}")
        total = part if total is None else {k: total[k] + part[k] for k in METRICS}
    return total if total is not None else evaluate(UDFile(), UDFile())


def format_official(scores: dict[str, Score]) -> str:
    """The scores in the official script's verbose text layout (``conll18_ud_eval.py -v``), percentages
    with two decimals, so that a run can be diffed against a saved ``eval.txt`` (ELAS / EULAS omitted)."""
    lines = ["Metric     | Precision |    Recall |  F1 Score | AligndAcc",
             "-----------+-----------+-----------+-----------+-----------"]
    for name in METRICS:
        s = scores[name]
        acc = s.aligned_accuracy
        lines.append(f"{name:<11}|{100 * s.precision:10.2f} |{100 * s.recall:10.2f} |{100 * s.f1:10.2f} |"
                     + (f"{100 * acc:10.2f}" if acc is not None else ""))
    return "\n".join(lines)


def split_cuts(cuts: Sequence[tuple[int, int]], parts: int) -> list[list[tuple[int, int]]]:
    """``cuts`` in at most ``parts`` contiguous groups of about equal gold sentence counts (for sharding)."""
    if parts < 1:
        raise ValueError(f"parts must be >= 1; got {parts}")
    if not cuts:
        return []
    size = -(-len(cuts) // parts)
    return [list(cuts[i:i + size]) for i in range(0, len(cuts), size)]
