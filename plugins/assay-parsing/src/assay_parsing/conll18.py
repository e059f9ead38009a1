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

import re
import sys
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from itertools import accumulate, compress, count
from operator import and_, eq, itemgetter, not_, or_
from typing import Any

import attrs

from assay.core.tally import Tally, additive
from assay.errors import AssayError
from assay_parsing.columns import Columns
from assay_parsing.sentence import Sentence

__all__ = ["METRICS", "AlignmentError", "Score", "UDFile", "aligned_cuts", "evaluate", "evaluate_columns",
           "evaluate_parts", "evaluate_segments", "format_official", "load_sentences", "split_cuts"]

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


def _universal_feats(feats: str) -> str:
    """FEATS reduced to the universal features, sorted (``""`` for none)."""
    if feats in ("_", ""):
        return ""
    return "|".join(sorted(f for f in feats.split("|") if f.split("=", 1)[0] in UNIVERSAL_FEATURES))


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
        self.feats = _universal_feats(w.feats)  # type: ignore[attr-defined]
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


# --------------------------------------------------------------------------- whole columns (parse-eval --conll18)
#: the tally of a part as plain numbers, metric -> [gold, system, correct, aligned or None]
_Counts = dict[str, list[Any]]
#: a part that needs the word alignment: the gold and the system sentences between two common sentence starts
Part = tuple[list[Sentence], list[Sentence]]


def evaluate_columns(gold: Columns, system: Columns, *, where: str = "gold and system",
                     run_parts: Callable[[list[Part]], Iterable[dict[str, Score]]] | None = None
                     ) -> dict[str, Score] | None:
    """Every score of :data:`METRICS` for two files read by :func:`assay_parsing.columns.read_columns`.

    The numbers are those of ``evaluate(load_sentences(gold_sentences), load_sentences(system_sentences))``.
    Where both files have the same sentences and the same tokens (same sentence lengths,
    FORMs and multiword tokens) -- the whole file, or the parts between two sentence starts
    the files share -- every word aligns with its counterpart, and each score is counted
    over whole columns at once (a word's UAS is right when both HEADs are equal, and so on).
    The parts where the tokenization differs are aligned word by word as :func:`evaluate`
    does (:func:`evaluate_parts`); ``run_parts`` runs that for a list of parts (default: in
    this process), returning one score dict per part or group of parts.

    Returns None when the texts differ or a FORM is empty once its spaces are removed: the
    caller then reads the files with the format's reader and calls :func:`evaluate`, whose
    error names the place.
    """
    g_forms = "\n".join(gold.form)  # one pass over the strings; no FORM holds a newline
    differing = system.shared_with(gold)  # read like the gold file: the words whose line differs
    if differing is not None:
        same = all(gold.form[w] == system.form[w] for w in differing)
    else:
        same = gold.bounds == system.bounds and gold.mwt == system.mwt and g_forms == "\n".join(system.form)
    if same:
        if _blank_form(gold, g_forms):  # a FORM without its spaces is empty: an error
            return None
        if differing is not None:
            return _scores(_same_lines_but(gold, system, differing))
        return _scores(_same_tokens(gold, system, 0, gold.num_sentences, 0, system.num_sentences))
    g_text, s_text = _token_texts(gold), _token_texts(system)
    if g_text is None or s_text is None or "".join(g_text[0]) != "".join(s_text[0]):
        return None
    g_starts, s_starts = _sentence_offsets(*g_text), _sentence_offsets(*s_text)
    g_at = dict(zip(g_starts, count()))
    cuts = [(g_at[offset], si) for si, offset in enumerate(s_starts) if offset in g_at]
    ends = cuts[1:] + [(gold.num_sentences, system.num_sentences)]
    g_mwt, s_mwt = _mwt_by_sentence(gold), _mwt_by_sentence(system)
    totals: _Counts = _zero_counts()
    parts: list[tuple[int, int, int, int]] = []
    alike: list[tuple[int, int]] = []  # (gold sentence, system sentence) of the sentences tokenized alike
    for (g0, s0), (g1, s1) in zip(cuts, ends):
        if g1 - g0 == 1 and s1 - s0 == 1 and g_mwt.get(g0, ()) == s_mwt.get(s0, ()) and \
                gold.form[gold.bounds[g0]:gold.bounds[g1]] == system.form[system.bounds[s0]:system.bounds[s1]]:
            alike.append((g0, s0))
        else:
            parts.append((g0, g1, s0, s1))
    if alike:  # counted together, over the columns of those sentences
        g_alike, s_alike = _sentences_of(gold, [g for g, _ in alike]), _sentences_of(system, [s for _, s in alike])
        _add_counts(totals, _same_tokens(g_alike, s_alike, 0, len(alike), 0, len(alike)))
    if parts:
        pairs = [(gold.sentences(g0, g1), system.sentences(s0, s1)) for g0, g1, s0, s1 in parts]
        for scores in (run_parts or _in_this_process)(pairs):
            _add_counts(totals, {name: [s.gold, s.system, s.correct, s.aligned] for name, s in scores.items()})
    if not cuts:  # both files empty
        return evaluate(UDFile(), UDFile(), where=where)
    return _scores(totals)


def _sentences_of(cols: Columns, sentences: list[int]) -> Columns:
    """The columns of some sentences of ``cols`` (increasing), as a file of their own."""
    if sentences == list(range(cols.num_sentences)):
        return cols
    bounds = cols.bounds
    stretches: list[list[int]] = []  # [first, last + 1] of consecutive sentences
    for s in sentences:
        if stretches and stretches[-1][1] == s:
            stretches[-1][1] = s + 1
        else:
            stretches.append([s, s + 1])
    columns: dict[str, list[Any]] = {k: [] for k in ("form", "lemma", "upos", "xpos", "feats", "head", "deprel")}
    for k, out in columns.items():
        column = getattr(cols, k)
        for a, b in stretches:
            out += column[bounds[a]:bounds[b]]
    lengths = [bounds[s + 1] - bounds[s] for s in sentences]
    new_bounds = list(accumulate(lengths, initial=0))
    starts = dict(zip(sentences, new_bounds))
    mwt = []
    for start, stop, text in cols.mwt:
        s = bisect_right(bounds, start) - 1
        if s in starts:
            shift = starts[s] - bounds[s]
            mwt.append((start + shift, stop + shift, text))
    return Columns(form=columns["form"], lemma=columns["lemma"], upos=columns["upos"], xpos=columns["xpos"],
                   feats=columns["feats"], head=columns["head"], deprel=columns["deprel"], bounds=new_bounds,
                   mwt=mwt, source=cols.source)


def evaluate_parts(parts: Sequence[Part]) -> dict[str, Score]:
    """The sum of :func:`evaluate` over ``(gold sentences, system sentences)`` parts, each of the same text."""
    totals = _zero_counts()
    for gold, system in parts:
        scores = evaluate(load_sentences(gold), load_sentences(system))
        _add_counts(totals, {name: [s.gold, s.system, s.correct, s.aligned] for name, s in scores.items()})
    return _scores(totals)


def _in_this_process(parts: list[Part]) -> list[dict[str, Score]]:
    return [evaluate_parts(parts)]


def _zero_counts() -> _Counts:
    return {name: [0, 0, 0, None if name in ("Tokens", "Sentences", "Words") else 0] for name in METRICS}


def _add_counts(totals: _Counts, part: _Counts) -> None:
    for name, counts in part.items():
        total = totals[name]
        for k in range(3):
            total[k] += counts[k]
        if counts[3] is not None:
            total[3] = (total[3] or 0) + counts[3]


def _scores(counts: _Counts) -> dict[str, Score]:
    return {name: Score(*counts[name]) for name in METRICS}


def _token_texts(cols: Columns) -> tuple[list[str], list[int]] | None:
    """Each token's text without spaces (a multiword token's FORM, or a word's) and the token where each
    sentence starts; None when a token is empty once its spaces are removed."""
    form = cols.form
    if not cols.mwt:
        tokens, starts = form, cols.bounds
    else:
        tokens = []
        previous = 0
        for start, stop, text in cols.mwt:
            tokens.extend(form[previous:start])
            tokens.append(text)
            previous = stop
        tokens.extend(form[previous:])
        hidden = list(accumulate((stop - start - 1 for start, stop, _ in cols.mwt), initial=0))
        mwt_starts = [start for start, _, _ in cols.mwt]
        starts = [b - hidden[bisect_left(mwt_starts, b)] for b in cols.bounds]
    tokens = list(tokens)
    for i in _with_whitespace(tokens):  # a space (category Zs) is whitespace: only these can hold one
        tokens[i] = "".join(c for c in tokens[i] if unicodedata.category(c) != "Zs")
        if not tokens[i]:
            return None
    return tokens, starts


#: whitespace other than a newline (no FORM holds a newline); every character of category Zs is whitespace
_WHITESPACE = re.compile(r"[^\S\n]")


def _with_whitespace(texts: list[str], joined: str | None = None) -> list[int]:
    """The positions of the texts that hold a whitespace character: one search of their join (``joined``, by
    newlines, when at hand) tells whether there is any."""
    if _WHITESPACE.search("\n".join(texts) if joined is None else joined) is None:
        return []
    return [i for i, t in enumerate(texts) if _WHITESPACE.search(t)]


def _blank_form(cols: Columns, joined: str) -> bool:
    """Whether a FORM of ``cols`` (a word's or a multiword token's; ``joined``: the words' joined by newlines) is
    empty once its spaces (Unicode category Zs) are removed; only the FORMs that hold whitespace are looked at."""
    forms = [cols.form[i] for i in _with_whitespace(cols.form, joined)]
    mwt = [t for _, _, t in cols.mwt]
    forms += [mwt[i] for i in _with_whitespace(mwt)]
    return any(all(unicodedata.category(c) == "Zs" for c in form) for form in forms)


def _sentence_offsets(tokens: list[str], starts: list[int]) -> list[int]:
    """The character (spaces removed) where each sentence starts."""
    offsets = list(accumulate(map(len, tokens), initial=0))
    return [offsets[t] for t in starts[:-1]]


def _mwt_by_sentence(cols: Columns) -> dict[int, tuple[tuple[int, int, str], ...]]:
    """Sentence -> its multiword tokens, with word positions counted from the sentence's start."""
    out: dict[int, list[tuple[int, int, str]]] = {}
    for start, stop, text in cols.mwt:
        s = bisect_right(cols.bounds, start) - 1
        out.setdefault(s, []).append((start - cols.bounds[s], stop - cols.bounds[s], text))
    return {s: tuple(v) for s, v in out.items()}


def _universal(deprels: list[str]) -> list[str]:
    """The universal part of each relation (before the first ``:``), one shared string per distinct relation.

    One pass over the strings (a dict lookup each); the later comparisons and set lookups then
    touch a few dozen distinct strings instead of one string per word.
    """
    table = {d: sys.intern(d.split(":", 1)[0]) for d in set(deprels)}
    return list(map(table.__getitem__, deprels))


def _same_tokens(gold: Columns, system: Columns, g0: int, g1: int, s0: int, s1: int) -> _Counts:
    """The tallies of gold sentences ``g0..g1-1`` and system sentences ``s0..s1-1``, tokenized alike.

    Every word aligns with the word at the same position, so a word's head is right when both
    HEADs are equal, and its functional children are the same when none of them differs. Each
    column is compared in one pass (``map`` over both lists), and a tally counts the ``True``s.
    """
    gw0, gw1, sw0, sw1 = gold.bounds[g0], gold.bounds[g1], system.bounds[s0], system.bounds[s1]
    n = gw1 - gw0

    def gcol(col: list[Any]) -> list[Any]:
        return col if gw0 == 0 and gw1 == len(col) else col[gw0:gw1]

    def scol(col: list[Any]) -> list[Any]:
        return col if sw0 == 0 and sw1 == len(col) else col[sw0:sw1]

    mwt_starts = [start for start, _, _ in gold.mwt]
    inside = gold.mwt[bisect_left(mwt_starts, gw0):bisect_left(mwt_starts, gw1)]
    tokens = n - sum(stop - start - 1 for start, stop, _ in inside)
    upos = list(map(eq, gcol(gold.upos), scol(system.upos)))
    xpos = list(map(eq, gcol(gold.xpos), scol(system.xpos)))
    g_feats, s_feats = gcol(gold.feats), scol(system.feats)
    feats = list(map(eq, g_feats, s_feats))
    for i in compress(count(), map(not_, feats)):  # the same universal features, written differently?
        feats[i] = _universal_feats(g_feats[i]) == _universal_feats(s_feats[i])
    g_lemma = gcol(gold.lemma)
    lemmas = list(map(eq, g_lemma, scol(system.lemma)))
    for i in compress(count(), map(not_, lemmas)):  # any system lemma is right where the gold one is "_"
        lemmas[i] = g_lemma[i] == "_"
    g_head, s_head = gcol(gold.head), scol(system.head)
    heads = list(map(eq, g_head, s_head))
    g_rel, s_rel = _universal(gcol(gold.deprel)), _universal(scol(system.deprel))
    las = list(map(and_, heads, map(eq, g_rel, s_rel)))
    g_content = list(map(CONTENT_DEPRELS.__contains__, g_rel))
    n_gold, n_system = g_content.count(True), list(map(CONTENT_DEPRELS.__contains__, s_rel)).count(True)
    clas = list(map(and_, g_content, las))
    tags = list(map(and_, upos, feats))
    analysed = list(map(and_, las, tags))  # head, relation, UPOS and UFeats right
    mlas = list(map(and_, g_content, analysed))
    # MLAS also compares the functional children (relation, UPOS, UFeats): a word is wrong when a
    # functional child of it, on either side, is not the same child with the same analysis
    starts = [b - gw0 for b in gold.bounds[g0:g1 + 1]]
    wrong: set[int] = set()
    for j in compress(count(), map(not_, analysed)):
        g_functional, s_functional = g_rel[j] in FUNCTIONAL_DEPRELS, s_rel[j] in FUNCTIONAL_DEPRELS
        if not (g_functional or s_functional):
            continue
        first = starts[bisect_right(starts, j) - 1] - 1  # the position before the sentence's first word
        if g_functional and g_head[j]:
            wrong.add(first + g_head[j])
        if s_functional and s_head[j]:
            wrong.add(first + s_head[j])
    return {
        "Tokens": [tokens, tokens, tokens, None],
        "Sentences": [g1 - g0, s1 - s0, g1 - g0, None],
        "Words": [n, n, n, None],
        "UPOS": [n, n, upos.count(True), n],
        "XPOS": [n, n, xpos.count(True), n],
        "UFeats": [n, n, feats.count(True), n],
        "AllTags": [n, n, list(map(and_, tags, xpos)).count(True), n],
        "Lemmas": [n, n, lemmas.count(True), n],
        "UAS": [n, n, heads.count(True), n],
        "LAS": [n, n, las.count(True), n],
        "CLAS": [n_gold, n_system, clas.count(True), n_gold],
        "MLAS": [n_gold, n_system, mlas.count(True) - sum(mlas[i] for i in wrong), n_gold],
        "BLEX": [n_gold, n_system, list(map(and_, clas, lemmas)).count(True), n_gold],
    }


def _same_lines_but(gold: Columns, system: Columns, differing: list[int]) -> _Counts:
    """The tallies of :func:`_same_tokens` over whole files where only the words ``differing`` may have other
    values in the system file (its columns were read like the gold file's): every other word is right by
    every measure, so the columns are compared at those words only."""
    n = len(gold)
    tokens = n - sum(stop - start - 1 for start, stop, _ in gold.mwt)
    g_rel_all = _universal(gold.deprel)
    g_content_all = list(map(CONTENT_DEPRELS.__contains__, g_rel_all))
    n_gold = g_content_all.count(True)
    d = len(differing)

    def at(column: list[Any]) -> list[Any]:  # the values at the differing words
        if d > 1:
            return list(itemgetter(*differing)(column))
        return [column[w] for w in differing]

    upos = list(map(eq, at(gold.upos), at(system.upos)))
    xpos = list(map(eq, at(gold.xpos), at(system.xpos)))
    g_feats, s_feats = at(gold.feats), at(system.feats)
    feats = list(map(eq, g_feats, s_feats))
    for i in compress(count(), map(not_, feats)):
        feats[i] = _universal_feats(g_feats[i]) == _universal_feats(s_feats[i])
    g_lemma = at(gold.lemma)
    lemmas = list(map(eq, g_lemma, at(system.lemma)))
    for i in compress(count(), map(not_, lemmas)):
        lemmas[i] = g_lemma[i] == "_"
    g_head, s_head = at(gold.head), at(system.head)
    heads = list(map(eq, g_head, s_head))
    g_rel, s_rel = at(g_rel_all), _universal(at(system.deprel))
    las = list(map(and_, heads, map(eq, g_rel, s_rel)))
    g_content = at(g_content_all)
    n_content = g_content.count(True)
    n_system = n_gold - n_content + list(map(CONTENT_DEPRELS.__contains__, s_rel)).count(True)
    tags = list(map(and_, upos, feats))
    analysed = list(map(and_, las, tags))
    wrong: set[int] = set()
    bounds = gold.bounds
    functional = map(or_, map(FUNCTIONAL_DEPRELS.__contains__, g_rel), map(FUNCTIONAL_DEPRELS.__contains__, s_rel))
    for i in compress(count(), map(and_, functional, map(not_, analysed))):
        w = differing[i]
        first = bounds[bisect_right(bounds, w) - 1] - 1  # the position before the sentence's first word
        if g_head[i] and g_rel[i] in FUNCTIONAL_DEPRELS:
            wrong.add(first + g_head[i])
        if s_head[i] and s_rel[i] in FUNCTIONAL_DEPRELS:
            wrong.add(first + s_head[i])
    mlas_ok = list(map(and_, g_content, analysed)).count(True)
    for w in wrong:  # a content word right by itself, wrong for MLAS through a functional child
        if g_content_all[w]:
            i = bisect_left(differing, w)
            mlas_ok -= analysed[i] if i < d and differing[i] == w else True
    right = n - d  # the words that do not differ: right by every measure
    right_content = n_gold - n_content
    return {
        "Tokens": [tokens, tokens, tokens, None],
        "Sentences": [gold.num_sentences, system.num_sentences, gold.num_sentences, None],
        "Words": [n, n, n, None],
        "UPOS": [n, n, right + upos.count(True), n],
        "XPOS": [n, n, right + xpos.count(True), n],
        "UFeats": [n, n, right + feats.count(True), n],
        "AllTags": [n, n, right + list(map(and_, tags, xpos)).count(True), n],
        "Lemmas": [n, n, right + lemmas.count(True), n],
        "UAS": [n, n, right + heads.count(True), n],
        "LAS": [n, n, right + las.count(True), n],
        "CLAS": [n_gold, n_system, right_content + list(map(and_, g_content, las)).count(True), n_gold],
        "MLAS": [n_gold, n_system, right_content + mlas_ok, n_gold],
        "BLEX": [n_gold, n_system, right_content + list(map(and_, map(and_, g_content, las), lemmas)).count(True),
                 n_gold],
    }
