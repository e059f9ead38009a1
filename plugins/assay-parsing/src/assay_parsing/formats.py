"""CoNLL-U and CoNLL-X data formats: text <-> :class:`~assay_parsing.sentence.Sentence` lists.

CoNLL-U (Universal Dependencies, https://universaldependencies.org/format.html): one
line per word with ten tab-separated columns ``ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL
DEPS MISC``; sentences end with a blank line and may start with ``#`` comment lines;
``ID`` is a word index ``1, 2, ...``, a multiword token range ``1-2`` (the line comes
just before its first word) or an empty node ``8.1`` (after word 8; ``0.1`` before word
1). CoNLL-X (CoNLL 2006) has the same ten-column layout with integer IDs only:
``ID FORM LEMMA CPOSTAG POSTAG FEATS HEAD DEPREL PHEAD PDEPREL``.

Reading is strict where a silent misreading would change a score: a wrong column count,
an empty column, an ID out of sequence, a malformed range or empty node, a HEAD that is not
an integer or points outside the sentence, and (CoNLL-U, by default) a sentence that is not
a tree give a :class:`assay.DataFormatError` naming the file and line. Extra blank lines
between sentences are tolerated, and the last sentence need not end with a blank line.
:meth:`~_ConllFormat.iter_read` streams a file (or a byte range of it, from a sentence
boundary) one sentence at a time with the same checks; :meth:`read` is its list. Writing
(:meth:`dumps`) gives the canonical form, so reading then writing a valid file gives
back the same text (line endings normalised to ``\\n``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

from assay import DataFormat, DataFormatError
from assay_parsing.lines import MAX_LINE_BYTES, check_line_length, iter_lines, read_lines
from assay_parsing.sentence import EmptyNode, MultiwordToken, Sentence, Word
from assay_parsing.stream import open_pairs as _open_pairs

__all__ = ["MAX_LINE_BYTES", "ConlluFormat", "ConllxFormat", "check_line_length", "check_tree", "iter_lines",
           "read_lines"]

CONLLU_COLUMNS = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")
CONLLX_COLUMNS = ("ID", "FORM", "LEMMA", "CPOSTAG", "POSTAG", "FEATS", "HEAD", "DEPREL", "PHEAD", "PDEPREL")


def check_tree(heads: list[int]) -> str | None:
    """Return why ``heads`` (``heads[i]`` is the head of word ``i + 1``, 0 = root) is not a tree, or None.

    A tree has exactly one word attached to 0 and no cycle.

    >>> check_tree([2, 0, 2]) is None
    True
    >>> check_tree([2, 1, 0])
    'HEAD values form a cycle through words 1, 2'
    """
    roots = [i + 1 for i, h in enumerate(heads) if h == 0]
    if len(roots) != 1:
        return f"expected exactly one root (HEAD 0), found {len(roots)}" + (
            f" (words {', '.join(map(str, roots))})" if roots else "")
    state = [0] * (len(heads) + 1)  # 0 unvisited, 1 on the current path, 2 reaches the root
    state[0] = 2
    for start in range(1, len(heads) + 1):
        path = []
        node = start
        while state[node] == 0:
            state[node] = 1
            path.append(node)
            node = heads[node - 1]
        if state[node] == 1:
            cycle = path[path.index(node):]
            return f"HEAD values form a cycle through words {', '.join(map(str, sorted(cycle)))}"
        for n in path:
            state[n] = 2
    return None


class _Builder:
    """Collects the lines of one sentence and validates it when it ends."""

    __slots__ = ("fmt", "source", "comments", "words", "word_lines", "ranges", "empties", "start")

    def __init__(self, fmt: _ConllFormat, source: str) -> None:
        self.fmt = fmt
        self.source = source
        self.reset()

    def reset(self) -> None:
        self.comments: list[str] = []
        self.words: list[Word] = []
        self.word_lines: list[int] = []
        self.ranges: list[MultiwordToken] = []
        self.empties: list[EmptyNode] = []
        self.start: int | None = None

    def error(self, message: str, line: int | None) -> DataFormatError:
        return DataFormatError(message, source=self.source, line=line)

    def comment(self, line: str, lineno: int) -> None:
        if self.words or self.ranges or self.empties:
            raise self.error("comment line inside a sentence (comments must come before the sentence's "
                             "first word line)", lineno)
        if self.start is None:
            self.start = lineno
        self.comments.append(line)

    def add(self, cols: list[str], lineno: int) -> None:
        fmt = self.fmt
        if len(cols) != 10:
            raise self.error(f"expected 10 tab-separated columns ({' '.join(fmt.column_names)}), "
                             f"found {len(cols)}", lineno)
        if "" in cols:
            name = fmt.column_names[cols.index("")]
            raise self.error(f"column {name} is empty (write '_' for an unspecified value)", lineno)
        if self.start is None:
            self.start = lineno
        ident = cols[0]
        if ident.isdigit():
            self._word(cols, lineno)
        elif "-" in ident and fmt.multiword:
            self._range(cols, lineno)
        elif "." in ident and fmt.multiword:
            self._empty(cols, lineno)
        else:
            expected = ("a word index (1, 2, ...), a multiword token range (1-2) or an empty node (1.1)"
                        if fmt.multiword else "a word index (1, 2, ...)")
            raise self.error(f"ID {ident!r} is not {expected}", lineno)

    def _word(self, cols: list[str], lineno: int) -> None:
        word_id = int(cols[0])
        expected = len(self.words) + 1
        if word_id != expected:
            raise self.error(f"word ID {cols[0]!r} is out of sequence: expected {expected}", lineno)
        try:
            head = int(cols[6])
        except ValueError:
            raise self.error(f"HEAD must be a non-negative integer, got {cols[6]!r}", lineno) from None
        if head < 0:
            raise self.error(f"HEAD must be a non-negative integer, got {cols[6]!r}", lineno)
        self.words.append(Word(word_id, cols[1], cols[2], cols[3], cols[4], cols[5], head, cols[7], cols[8],
                               cols[9]))
        self.word_lines.append(lineno)

    def _range(self, cols: list[str], lineno: int) -> None:
        first_s, _, last_s = cols[0].partition("-")
        if not (first_s.isdigit() and last_s.isdigit()):
            raise self.error(f"multiword token ID {cols[0]!r} is not a range of word indices such as 3-4", lineno)
        first, last = int(first_s), int(last_s)
        expected = len(self.words) + 1
        if first != expected:
            raise self.error(f"multiword token range {cols[0]!r} must start at the next word ID, {expected}", lineno)
        if last <= first:
            raise self.error(f"multiword token range {cols[0]!r} must span at least two words", lineno)
        if self.ranges and self.ranges[-1].last >= first:
            raise self.error(f"multiword token range {cols[0]!r} overlaps range "
                             f"'{self.ranges[-1].first}-{self.ranges[-1].last}'", lineno)
        self.ranges.append(MultiwordToken(first, last, cols[1], tuple(cols[2:])))

    def _empty(self, cols: list[str], lineno: int) -> None:
        after_s, _, index_s = cols[0].partition(".")
        if not (after_s.isdigit() and index_s.isdigit()) or int(index_s) < 1:
            raise self.error(f"empty node ID {cols[0]!r} is not of the form WORD.N such as 8.1", lineno)
        after, index = int(after_s), int(index_s)
        if after != len(self.words):
            raise self.error(f"empty node {cols[0]!r} must follow word {after}, but it follows word "
                             f"{len(self.words)}", lineno)
        previous = self.empties[-1].index if self.empties and self.empties[-1].after == after else 0
        if index != previous + 1:
            raise self.error(f"empty node ID {cols[0]!r} is out of sequence: expected {after}.{previous + 1}", lineno)
        self.empties.append(EmptyNode(after, index, cols[1], tuple(cols[2:])))

    def finish(self, lineno: int) -> Sentence:
        n = len(self.words)
        if n == 0:
            raise self.error("sentence has no words (only comments, ranges or empty nodes)", self.start or lineno)
        if self.ranges and self.ranges[-1].last > n:
            r = self.ranges[-1]
            raise self.error(f"multiword token range '{r.first}-{r.last}' goes beyond the last word ({n})",
                             self.start)
        for word, line in zip(self.words, self.word_lines):
            if word.head > n:
                raise self.error(f"HEAD {word.head} points outside the sentence (words 1..{n})", line)
        if self.fmt.check_tree:
            problem = check_tree([w.head for w in self.words])
            if problem:
                raise self.error(f"sentence is not a tree: {problem}", self.start)
        sentence = Sentence(tuple(self.words), tuple(self.ranges), tuple(self.empties), tuple(self.comments),
                            source=self.source, line=self.start)
        self.reset()
        return sentence


class _ConllFormat(DataFormat):
    column_names: tuple[str, ...] = CONLLU_COLUMNS
    multiword: bool = True

    def __init__(self, *, check_tree: bool = True) -> None:
        self.check_tree = bool(check_tree)

    def parse(self, text: str, *, source: str = "<string>") -> list[Sentence]:
        """Parse a whole file's text into sentences; malformed input raises :class:`assay.DataFormatError`."""
        return list(self.iter_parse(text.split("\n"), source=source))

    def iter_parse(self, lines: Iterable[str], *, source: str = "<string>", first_line: int = 1) -> Iterator[Sentence]:
        """Parse lines (without their ``\\n``) lazily, one sentence at a time.

        The same parser and checks as :meth:`parse`, which is ``list(iter_parse(text.split("\\n")))``;
        only the sentence being built is held. ``first_line`` is the line number of the first
        line (for a part of a file read from a sentence boundary).
        """
        builder = _Builder(self, source)
        lineno = first_line - 1
        for lineno, line in enumerate(lines, start=first_line):
            if line.endswith("\r"):
                line = line[:-1]
            if not line or line.isspace():
                if builder.start is not None:
                    yield builder.finish(lineno)
            elif line[0] == "#":
                builder.comment(line, lineno)
            elif line[0] == "\ufeff":
                raise builder.error("the line starts with a byte-order mark (U+FEFF: the file was saved as "
                                    "'UTF-8 with BOM'); CoNLL files are plain UTF-8: remove the mark", lineno)
            else:
                builder.add(line.split("\t"), lineno)
        if builder.start is not None:
            yield builder.finish(lineno)

    def read(self, path: str | os.PathLike[str]) -> list[Sentence]:
        """Read and parse one file (UTF-8): ``list(self.iter_read(path))``, without holding the whole text."""
        return list(self.iter_read(path))

    def iter_read(self, path: str | os.PathLike[str], *, start: int = 0, stop: int | None = None,
                  first_line: int = 1) -> Iterator[Sentence]:
        """Read a file lazily, one sentence at a time, with bounded memory.

        The streaming counterpart of :meth:`read`: the same sentences and the same errors
        (naming the file and the line; invalid UTF-8 names the line and the byte too).
        ``start`` / ``stop`` are byte offsets of a part of the file that begins at a sentence
        boundary (see :func:`assay_parsing.stream.index_sentences`), ``first_line`` the line
        number at ``start``.
        """
        source = os.fspath(path)
        return self.iter_parse(iter_lines(source, start=start, stop=stop, first_line=first_line),
                               source=source, first_line=first_line)

    def open_pairs(self, gold: str | os.PathLike[str], system: str | os.PathLike[str], *,
                   num_shards: int | None = None) -> Any:
        """A lazy pool of ``(gold, system)`` sentence pairs read with this format: :func:`assay_parsing.open_pairs`.

        How ``assay parse-eval`` streams its two files (it reaches the plugin only through
        the registered format object).
        """
        return _open_pairs(gold, system, format=self, num_shards=num_shards)

    def dumps(self, items: list[Any]) -> str:
        """Write sentences in canonical order, each followed by one blank line."""
        parts: list[str] = []
        for i, sentence in enumerate(items):
            if not isinstance(sentence, Sentence):
                raise TypeError(f"{self.name}.dumps expects Sentence objects; item {i} is {type(sentence).__name__}")
            for item in sentence.lines():
                parts.append(item if isinstance(item, str) else "\t".join(item))
            parts.append("")
        return "\n".join(parts) + ("\n" if parts else "")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(check_tree={self.check_tree})"


class ConlluFormat(_ConllFormat):
    r"""CoNLL-U (Universal Dependencies): comments, multiword ranges, empty nodes, 10 columns.

    Parameters
    ----------
    check_tree : bool, default True
        Require every sentence's HEADs to form a tree (exactly one root, no cycle), as UD
        and the CoNLL 2018 evaluation script do.

    Examples
    --------
    >>> rows = ["# sent_id = 1", "1-2\tdel" + "\t_" * 8,
    ...         "1\tde\t_\tADP\t_\t_\t2\tcase\t_\t_", "2\tel\t_\tDET\t_\t_\t0\troot\t_\t_"]
    >>> (s,) = ConlluFormat().parse("\n".join(rows) + "\n")
    >>> s.sent_id, s.forms(), s.multiword_tokens[0].form
    ('1', ('de', 'el'), 'del')
    """

    name = "conllu"
    extensions = (".conllu",)
    column_names = CONLLU_COLUMNS
    multiword = True


class ConllxFormat(_ConllFormat):
    """CoNLL-X (CoNLL 2006 shared task): 10 columns, integer IDs, no ranges or empty nodes.

    CPOSTAG, POSTAG, PHEAD and PDEPREL are stored in the ``upos``, ``xpos``, ``deps`` and
    ``misc`` fields of :class:`~assay_parsing.sentence.Word`. ``#`` comment lines before a
    sentence are tolerated and kept.

    Parameters
    ----------
    check_tree : bool, default False
        Require a single root and no cycle (CoNLL-X data may have several roots).
    """

    name = "conllx"
    extensions = (".conllx", ".conll")
    column_names = CONLLX_COLUMNS
    multiword = False

    def __init__(self, *, check_tree: bool = False) -> None:
        super().__init__(check_tree=check_tree)
