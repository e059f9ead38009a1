"""A CoNLL-U / CoNLL-X file read column by column: the reader of ``parse-eval --conll18``.

:meth:`ConlluFormat.read <assay_parsing.formats.ConlluFormat.read>` builds a
:class:`~assay_parsing.sentence.Sentence` per sentence and a :class:`~assay_parsing.sentence.Word`
per syntactic word, validating line by line. The CoNLL 2018 scores compare seven columns of
two whole files, so :func:`read_columns` keeps each column as one list over the file
(:class:`Columns`): FORM, LEMMA, UPOS, XPOS, FEATS, HEAD (ints) and DEPREL of every syntactic
word, where each sentence starts, and the multiword tokens. The text is decoded and split into
lines once; the word lines are split into fields with one ``str.split`` of their join, and each
column is a slice of that list. No object is built per word.

Validation is done in bulk, over the whole file: ten columns on every word line, no empty
column, comments only before a sentence's first word line, no sentence without words, word
IDs ``1..n`` in sequence (compared with the expected list), HEADs that are integers in
``0..n``, and -- when the format checks trees -- one root per sentence and no cycle (by
pointer doubling: every word's pointer jumps to its head's, log2(n) times, and must end on a
root). The few multiword-token and empty-node lines are checked one by one with the format's
rules. :func:`read_columns` reports no error itself: when a check fails, or the input has
something it does not handle (``\\r`` line ends, invalid UTF-8, IDs such as ``01``), it
returns None and the caller reads the file with the format's reader, which raises the
error naming the file and the line, or returns the sentences where the fast check was only
cautious. So the errors are exactly those of the format's reader, and a file this reader
accepts is accepted by that reader with the same content (the tests check both, on valid
and on broken files).

A system file is read ``like`` its gold file (``read_columns(system, like=gold_columns)``):
where it has the gold file's line layout, only its lines that differ from the gold file's are
split and checked, the others' fields being the gold file's, and the columns remember which
words those are (:meth:`Columns.shared_with`), so that the scores compare only them.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import accumulate, chain, compress, count, repeat
from operator import add, eq, gt, itemgetter, le, lt, not_

from assay_parsing.lines import open_data_file
from assay_parsing.sentence import MultiwordToken, Sentence, Word

__all__ = ["Columns", "parse_columns", "read_columns"]

_TOKEN_RUN = re.compile("t+")


class Columns:
    """The syntactic words of a file, one list per column, and its sentences and multiword tokens.

    ``form``, ``lemma``, ``upos``, ``xpos``, ``feats``, ``deprel`` (strings as written) and
    ``head`` (ints, 0 for the root) have one entry per syntactic word, in file order.
    Sentence ``i`` holds words ``bounds[i]`` to ``bounds[i + 1] - 1`` (``bounds`` starts with 0
    and ends with the number of words). ``mwt`` lists the multiword tokens as ``(start, stop,
    form)``: the words ``start`` to ``stop - 1`` (file-wide indices) make one token. Empty
    nodes, comments, DEPS and MISC are not kept (the CoNLL 2018 basic scores do not read them).
    """

    __slots__ = ("_lines", "_shared", "bounds", "deprel", "feats", "form", "head", "lemma", "mwt", "source", "upos",
                 "xpos")
    _FIELDS = ("bounds", "deprel", "feats", "form", "head", "lemma", "mwt", "upos", "xpos")

    def __init__(self, *, form: list[str], lemma: list[str], upos: list[str], xpos: list[str], feats: list[str],
                 head: list[int], deprel: list[str], bounds: list[int], mwt: list[tuple[int, int, str]],
                 source: str = "<string>") -> None:
        self.form, self.lemma, self.upos, self.xpos, self.feats = form, lemma, upos, xpos, feats
        self.head, self.deprel = head, deprel
        self.bounds, self.mwt, self.source = bounds, mwt, source
        #: what :func:`parse_columns` keeps to read another file ``like`` this one (see there), or None
        self._lines: _Lines | None = None
        #: for columns read ``like`` another file: ``(that file's columns, the words whose line differs)``,
        #: increasing; every other word has the same values in both (see shared_with)
        self._shared: tuple[Columns, list[int]] | None = None

    def shared_with(self, other: Columns) -> list[int] | None:
        """The words whose values may differ from ``other``'s when these columns were read ``like`` it
        (:func:`parse_columns`): every other word has the same FORM, LEMMA, UPOS, XPOS, FEATS, HEAD and
        DEPREL in both, the sentences and multiword tokens are the same. None otherwise."""
        if self._shared is not None and self._shared[0] is other:
            return self._shared[1]
        return None

    def __len__(self) -> int:
        return len(self.form)

    @property
    def num_sentences(self) -> int:
        return len(self.bounds) - 1

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Columns):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self._FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable lists inside

    def __repr__(self) -> str:
        return f"Columns({self.source!r}: {self.num_sentences} sentences, {len(self)} words, {len(self.mwt)} mwt)"

    @classmethod
    def from_sentences(cls, sentences: Sequence[Sentence], source: str = "<string>") -> Columns:
        """The columns of parsed sentences (what :func:`read_columns` gives for the same file)."""
        words = [w for s in sentences for w in s.words]
        bounds = list(accumulate((len(s.words) for s in sentences), initial=0))
        mwt = [(start + m.first - 1, start + m.last, m.form)
               for s, start in zip(sentences, bounds) for m in s.multiword_tokens]
        return cls(form=[w.form for w in words], lemma=[w.lemma for w in words], upos=[w.upos for w in words],
                   xpos=[w.xpos for w in words], feats=[w.feats for w in words], head=[w.head for w in words],
                   deprel=[w.deprel for w in words], bounds=bounds, mwt=mwt, source=source)

    def sentences(self, start: int = 0, stop: int | None = None) -> list[Sentence]:
        """Sentences ``start`` to ``stop - 1`` as :class:`Sentence` objects: words (DEPS and MISC ``_``) and
        multiword tokens (other columns ``_``), no comments or empty nodes -- what the word alignment reads."""
        stop = self.num_sentences if stop is None else stop
        out: list[Sentence] = []
        m = bisect_left(self.mwt, self.bounds[start], key=itemgetter(0))
        for s in range(start, stop):
            a, b = self.bounds[s], self.bounds[s + 1]
            words = tuple(Word(i - a + 1, self.form[i], self.lemma[i], self.upos[i], self.xpos[i], self.feats[i],
                               self.head[i], self.deprel[i]) for i in range(a, b))
            ranges = []
            while m < len(self.mwt) and self.mwt[m][0] < b:
                first, last, form = self.mwt[m]
                ranges.append(MultiwordToken(first - a + 1, last - a, form))
                m += 1
            out.append(Sentence(words, tuple(ranges), source=self.source))
        return out


class _Lines:
    """The token lines of a file read by :func:`parse_columns`, kept to read another file like it."""

    __slots__ = ("ids", "kinds", "options", "others", "per_word", "tok")

    def __init__(self, kinds: str, tok: list[str], ids: list[str], others: list[int], per_word: list[int],
                 options: tuple[bool, bool]) -> None:
        self.kinds, self.tok, self.ids, self.others, self.per_word = kinds, tok, ids, others, per_word
        self.options = options  # (multiword, check_tree) of that read: another file shares its lines only alike


def read_columns(path: str | os.PathLike[str], *, multiword: bool = True, check_tree: bool = True,
                 like: Columns | None = None) -> Columns | None:
    """Read a file as :class:`Columns`, or None where the format's own reader must decide (see the module doc).

    A missing or unreadable file raises as the format's reader does (``FileNotFoundError``,
    :class:`assay.DataFormatError`). ``multiword`` allows ranges and empty nodes (CoNLL-U);
    ``check_tree`` requires one root and no cycle per sentence. ``like``: the columns of a file
    read before with the same options (the gold file, when reading the system file), whose
    lines this file may share (see :func:`parse_columns`).
    """
    source = os.fspath(path)
    with open_data_file(source) as f:
        data = f.read()
    return parse_columns(data, source=source, multiword=multiword, check_tree=check_tree, like=like)


def parse_columns(data: bytes | str, *, source: str = "<string>", multiword: bool = True,
                  check_tree: bool = True, like: Columns | None = None) -> Columns | None:
    """:func:`read_columns` of a file's bytes (or text).

    With ``like`` (the columns of a file this function read with the same options), a file
    with the same line layout (comments, blank lines and token lines at the same places)
    whose token lines are mostly equal to that file's -- a system output written over the
    gold tokenization, which copies the columns it does not predict -- is read by splitting
    only the lines that differ: the others' fields are that file's. The lines that differ
    must be word lines with the same ID; their columns and HEADs are checked as usual, and
    the trees of the sentences they are in. Anything else is read as without ``like``; the
    result is the same either way.
    """
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    else:
        text = data
    if "\r" in text:
        return None
    lines = text.split("\n")
    # one letter per line: b(lank), c(omment), t(oken); a sentence is c*t+ between blank lines
    kinds = "".join(["b" if not line else "c" if line[0] == "#" else "b" if line.isspace() else "t"
                     for line in lines])
    if "tc" in kinds or "cb" in kinds or kinds.endswith("c"):  # a comment inside a sentence, a sentence without words
        return None
    runs = [m.span() for m in _TOKEN_RUN.finditer(kinds)]
    sizes = [b - a for a, b in runs]  # token lines per sentence
    tok = list(compress(lines, map(eq, kinds, repeat("t"))))
    if like is not None and like._lines is not None and like._lines.options == (multiword, check_tree) \
            and like._lines.kinds == kinds:
        shared = _like(like, tok, source, check_tree)
        if shared is not None:
            return shared
    if list(map(str.count, tok, repeat("\t"))).count(9) != len(tok):
        return None
    joined = "\t".join(tok)
    if "\t\t" in joined or joined[:1] == "\t" or joined[-1:] == "\t":  # an empty column
        return None
    fields = joined.split("\t") if tok else []
    del joined
    ids = fields[0::10]
    longest = max(sizes, default=0)
    names = [str(i) for i in range(longest + 1)]
    expected = list(chain.from_iterable(names[1:n + 1] for n in sizes))
    mwt: list[tuple[int, int, str]] = []
    others: list[int] = []
    if ids != expected:  # multiword tokens, empty nodes, or an error
        found = _other_lines(ids, fields, sizes, multiword)
        if found is None:
            return None
        others, sizes, mwt = found
        expected = list(chain.from_iterable(names[1:n + 1] for n in sizes))
        if _without(ids, others) != expected:
            return None
    columns = [_without(fields[k::10], others) for k in range(1, 8)]
    form, lemma, upos, xpos, feats, head_text, deprel = columns
    try:
        head = list(map(int, head_text))
    except ValueError:
        return None
    per_word = list(chain.from_iterable(map(repeat, sizes, sizes)))  # each word's sentence length
    if head and (min(head) < 0 or any(map(gt, head, per_word))):
        return None
    bounds = list(accumulate(sizes, initial=0))
    if check_tree and not _trees(head, bounds, sizes):
        return None
    columns_ = Columns(form=form, lemma=lemma, upos=upos, xpos=xpos, feats=feats, head=head, deprel=deprel,
                       bounds=bounds, mwt=mwt, source=source)
    columns_._lines = _Lines(kinds, tok, ids, others, per_word, (multiword, check_tree))
    return columns_


def _like(like: Columns, tok: list[str], source: str, check_tree: bool) -> Columns | None:
    """The columns of ``tok`` read as ``like``'s token lines except where they differ, or None (see parse_columns)."""
    assert like._lines is not None
    seen = like._lines
    diff = list(compress(count(), map(not_, map(eq, tok, seen.tok))))
    if 2 * len(diff) > len(tok):  # mostly different lines: splitting them all costs as much
        return None
    lines = [tok[p] for p in diff]
    if list(map(str.count, lines, repeat("\t"))).count(9) != len(lines):
        return None
    joined = "\t".join(lines)
    if "\t\t" in joined or joined[:1] == "\t" or joined[-1:] == "\t":
        return None
    fields = joined.split("\t") if lines else []
    others = seen.others
    if fields[0::10] != [seen.ids[p] for p in diff] or (others and not set(diff).isdisjoint(others)):
        return None  # a line that differs is not the word line of the same ID: the layout may differ
    words = [p - bisect_left(others, p) for p in diff] if others else diff
    columns = []
    for k, column in enumerate((like.form, like.lemma, like.upos, like.xpos, like.feats), start=1):
        column = list(column)
        for w, value in zip(words, fields[k::10]):
            column[w] = value
        columns.append(column)
    form, lemma, upos, xpos, feats = columns
    deprel = list(like.deprel)
    for w, value in zip(words, fields[7::10]):
        deprel[w] = value
    try:
        changed = list(map(int, fields[6::10]))
    except ValueError:
        return None
    if changed and (min(changed) < 0 or any(map(gt, changed, [seen.per_word[w] for w in words]))):
        return None
    head = list(like.head)
    for w, number in zip(words, changed):
        head[w] = number
    bounds = like.bounds
    if check_tree and diff:  # the sentences with a changed line
        touched = sorted({bisect_right(bounds, w) - 1 for w in words})
        sub_head = list(chain.from_iterable(head[bounds[s]:bounds[s + 1]] for s in touched))
        sub_sizes = [bounds[s + 1] - bounds[s] for s in touched]
        if not _trees(sub_head, list(accumulate(sub_sizes, initial=0)), sub_sizes):
            return None
    out = Columns(form=form, lemma=lemma, upos=upos, xpos=xpos, feats=feats, head=head, deprel=deprel,
                  bounds=list(bounds), mwt=list(like.mwt), source=source)
    out._shared = (like, words)
    return out


def _without(column: list[str], others: list[int]) -> list[str]:
    """``column`` without the entries at the positions ``others`` (increasing; a few): slices joined."""
    if not others:
        return column
    out: list[str] = []
    previous = 0
    for p in others:
        out += column[previous:p]
        previous = p + 1
    out += column[previous:]
    return out


def _number(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() else None


def _other_lines(ids: list[str], fields: list[str], sizes: list[int], multiword: bool
                 ) -> tuple[list[int], list[int], list[tuple[int, int, str]]] | None:
    """Check the lines whose ID is not a word index (ranges ``3-4``, empty nodes ``8.1``) by the format's rules.

    Returns the positions of those lines among the token lines, the number of words of each
    sentence and the multiword tokens (file-wide word indices), or None when a line breaks a
    rule (or is anything else).
    """
    others = list(compress(count(), map(not_, map(str.isdigit, ids))))
    if not others or not multiword:
        return None
    starts = list(accumulate(sizes, initial=0))  # token line where each sentence starts
    words = list(sizes)
    sentence, removed, last_range, last_empty = -1, 0, 0, (-1, 0)
    ranges: list[tuple[int, int, int, str]] = []  # (sentence, first, last, form)
    for p in others:
        if p >= starts[sentence + 1]:
            sentence = bisect_right(starts, p) - 1
            removed, last_range, last_empty = 0, 0, (-1, 0)
        before = p - starts[sentence] - removed  # words of this sentence before the line
        ident = ids[p]
        if "-" in ident:
            first_s, _, last_s = ident.partition("-")
            first, last = _number(first_s), _number(last_s)
            if first is None or last is None or first != before + 1 or last <= first or last_range >= first:
                return None
            ranges.append((sentence, first, last, fields[10 * p + 1]))
            last_range = last
        elif "." in ident:
            after_s, _, index_s = ident.partition(".")
            after, index = _number(after_s), _number(index_s)
            if after is None or index is None or after != before:
                return None
            if index != (last_empty[1] if last_empty[0] == after else 0) + 1:
                return None
            last_empty = (after, index)
        else:
            return None
        removed += 1
        words[sentence] -= 1
    bounds = list(accumulate(words, initial=0))
    mwt = []
    for sentence, first, last, form in ranges:
        if last > words[sentence]:  # the range goes beyond the sentence's last word
            return None
        mwt.append((bounds[sentence] + first - 1, bounds[sentence] + last, form))
    return others, words, mwt


def _trees(head: list[int], bounds: list[int], sizes: list[int]) -> bool:
    """Whether every sentence has exactly one root and no cycle (``head`` within the sentence, checked before)."""
    roots = list(compress(count(), map(not_, head)))
    if len(roots) != len(sizes) or not all(map(le, bounds[:-1], roots)) or not all(map(lt, roots, bounds[1:])):
        return False  # not exactly one root in each sentence
    # pointer[i]: the file-wide index of word i's head; a root points to itself
    pointer = list(map(add, head, chain.from_iterable(map(repeat, (b - 1 for b in bounds), sizes))))
    for r in roots:
        pointer[r] = r
    for _ in range(max(sizes, default=0).bit_length()):  # after k rounds, each word points 2**k steps up
        jumped = list(map(pointer.__getitem__, pointer))
        if jumped == pointer:
            break
        pointer = jumped
    return not any(map(head.__getitem__, pointer))  # every word reached its sentence's root
