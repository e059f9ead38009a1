"""Streaming file evaluation: sentence pairs read lazily from a gold and a system file.

A 200 MB CoNLL-U file parsed whole takes gigabytes as :class:`~assay_parsing.sentence.Sentence`
objects. Here nothing holds a whole file:

* :func:`index_sentences` makes one light pass over a file and records where each sentence
  starts (byte offset and line number, 16 bytes per sentence), without parsing it;
* :class:`PairPool` is a lazy :class:`assay.DataPool` of ``(gold, system)``
  :class:`~assay_parsing.sentence.SentencePair` items over two such indexes. Iterating it
  reads both files in lockstep, one sentence at a time; its shards (:class:`PairShard`)
  are byte ranges of both files, aligned on sentence boundaries, which a worker opens,
  seeks and parses itself (a shard pickles as two paths and four offsets);
* :class:`SentencePool` (:func:`open_sentences`) is the same for the sentences of one file
  (``DataPool.from_file(path)`` without holding the file), for evaluating a model;
* :func:`iter_pairs` is the streaming counterpart of :func:`assay_parsing.read_pairs`.

``assay parse-eval`` finds :func:`open_pairs` through the registered format object
(``load_data_format("conllu").open_pairs``), as the core never imports a plugin.

Parsing and validation are the format's own (:meth:`ConlluFormat.iter_read`), so the
sentences, the scores and the error messages (file and line) are those of a whole-file read.
"""

from __future__ import annotations

import io
import os
import re
from array import array
from collections.abc import Iterator, Sequence
from itertools import zip_longest
from typing import Any

import attrs

from assay import DataPool, load_data_format
from assay.core.pool import split_evenly
from assay.errors import InvalidParameterError
from assay_parsing import lines as _lines
from assay_parsing.evaluators import CONLL18_HINT, TokenizationError, check_same_words
from assay_parsing.lines import check_line_length, decode_utf8, open_data_file, read_lines
from assay_parsing.pairs import format_for
from assay_parsing.sentence import Sentence, SentencePair

__all__ = ["PairPool", "PairShard", "SentenceIndex", "SentencePool", "SentenceShard", "index_sentences", "iter_pairs",
           "open_pairs", "open_sentences"]

_NOT_BLANK_START = frozenset(b"0123456789#")
_EMPTY_OR_NOT_BLANK = _NOT_BLANK_START | {ord("\n")}
#: a line after the first that is not empty and starts with neither a digit nor '#' (maybe blank: spaces)
_ODD_LINE = re.compile(rb"\n[^0-9#\n]")
#: a line end, one or more empty lines, and the line after them, which starts with a digit or '#': a sentence's start
_AFTER_BLANK = re.compile(rb"\n\n+(?=[0-9#])")


@attrs.frozen(eq=False)
class SentenceIndex:
    """Where each sentence of a file starts: ``starts[i]`` (byte offset) and ``lines[i]`` (line number).

    ``size`` is the file's size in bytes when it was indexed; sentence ``i`` spans bytes
    ``[starts[i], starts[i + 1])`` (the last one ends at ``size``), blank lines included.
    """

    path: str
    starts: array
    lines: array
    size: int

    def __len__(self) -> int:
        return len(self.starts)

    def span(self, start: int, stop: int) -> tuple[int, int | None, int]:
        """``(first byte, stop byte or None for the end, first line)`` of sentences ``[start, stop)``."""
        if start >= len(self.starts):
            return self.size, self.size, 1
        end = self.starts[stop] if stop < len(self.starts) else None
        return self.starts[start], end, self.lines[start]


def index_sentences(path: str | os.PathLike[str], *, chunk_bytes: int | None = None) -> SentenceIndex:
    """Find the sentences of a CoNLL-U / CoNLL-X file without parsing them.

    A sentence is a run of non-blank lines, as :meth:`ConlluFormat.parse` splits them (a
    line is blank when it is empty or only whitespace, ``\\r`` included). Reads the file in
    chunks; memory is 16 bytes per sentence.
    """
    source = os.fspath(path)
    starts, lines = array("q"), array("q")
    chunk_bytes = chunk_bytes or _lines.CHUNK_BYTES
    with open_data_file(source) as f:
        offset, lineno, tail, inside = 0, 1, b"", False  # offset and lineno of tail's first byte
        while True:
            block = f.read(chunk_bytes)
            data = check_line_length(tail + block, source, lineno)
            if block:
                cut = data.rfind(b"\n") + 1
                if not cut:
                    tail = data
                    continue
                body, tail = data[:cut - 1], data[cut:]
            else:
                body, tail = data, b""
            if (not body or body[0] in _EMPTY_OR_NOT_BLANK) and _ODD_LINE.search(body) is None:
                # every line is empty or starts with a digit or '#': a sentence starts at each line after an empty one
                leading = len(body) - len(body.lstrip(b"\n"))  # empty lines at the start of the block
                found = [leading] if leading < len(body) and (leading or not inside) else []
                found += [m.end() for m in _AFTER_BLANK.finditer(body, leading)]
                previous = 0
                for p in found:
                    lineno += body.count(b"\n", previous, p)
                    previous = p
                    starts.append(offset + p)
                    lines.append(lineno)
                lineno += body.count(b"\n", previous) + 1
                offset += len(body) + 1
                inside = body.rfind(b"\n") + 1 < len(body)  # the last line is not empty
            else:
                offset, lineno, inside = _index_lines(body, source, offset, lineno, inside, starts, lines)
            if not block:
                return SentenceIndex(source, starts, lines, offset - 1)


def _index_lines(body: bytes, source: str, offset: int, lineno: int, inside: bool, starts: array,
                 lines: array) -> tuple[int, int, bool]:
    """:func:`index_sentences` line by line, for a block with a line that starts otherwise (maybe blank: spaces)."""
    for line in body.split(b"\n"):
        if line and line[0] in _NOT_BLANK_START:
            blank = False
        else:
            blank = not line or decode_utf8(line, source, lineno, offset).isspace()
        if not blank and not inside:
            starts.append(offset)
            lines.append(lineno)
        inside = not blank
        offset += len(line) + 1
        lineno += 1
    return offset, lineno, inside


class _RangeShard:
    """What both shard types share: items ``[start, stop)`` of the pool, numbered from ``start``."""

    index: int
    start: int
    stop: int

    def __len__(self) -> int:
        return self.stop - self.start

    def __iter__(self) -> Iterator[Any]:
        """The shard's items, in order, parsed lazily (``for pair in shard``, ``list(shard)``)."""
        return iter(self.items())

    def items(self) -> Iterator[Any]:  # pragma: no cover - both shard types define it
        raise NotImplementedError

    def pool_index(self, offset: int) -> int:
        return self.start + offset

    def describe(self, offset: int) -> str:
        return f"item {self.start + offset}"

    def __repr__(self) -> str:
        if not len(self):
            return f"{type(self).__name__}(index={self.index}, empty)"
        return f"{type(self).__name__}(index={self.index}, items {self.start}..{self.stop - 1})"


@attrs.frozen(eq=False, repr=False)
class PairShard(_RangeShard):
    """Sentences ``[start, stop)`` of a gold and a system file, read where the shard runs.

    ``gold`` and ``system`` are ``(path, first byte, stop byte or None, first line)``.
    :meth:`items` opens both files, seeks and yields one :class:`SentencePair` at a time.
    A shard made by :meth:`with_bytes` carries its two byte ranges instead (for workers
    that cannot see the files, such as a Spark cluster's) and parses them the same way.
    """

    index: int
    start: int
    stop: int
    gold: tuple[str, int, int | None, int]
    system: tuple[str, int, int | None, int]
    data_format: Any
    texts: tuple[bytes, bytes] | None = None

    def with_bytes(self) -> PairShard:
        """This shard with its byte ranges of both files read in (so it no longer needs the files)."""
        texts = []
        for path, start, stop, _ in (self.gold, self.system):
            with open_data_file(path) as f:
                f.seek(start)
                texts.append(f.read() if stop is None else f.read(max(0, stop - start)))
        return attrs.evolve(self, texts=(texts[0], texts[1]))

    def _read(self, part: tuple[str, int, int | None, int], data: bytes | None) -> Iterator[Sentence]:
        path, start, stop, line = part
        if data is None:
            return self.data_format.iter_read(path, start=start, stop=stop, first_line=line)
        lines = read_lines(io.BytesIO(data), source=path, offset=start, first_line=line)
        return self.data_format.iter_parse(lines, source=path, first_line=line)

    def items(self) -> Iterator[SentencePair]:
        """The shard's sentence pairs, in order, parsed lazily from both files."""
        gpath, spath = self.gold[0], self.system[0]
        gtext, stext = self.texts or (None, None)
        gold, system = self._read(self.gold, gtext), self._read(self.system, stext)
        for n, (g, s) in enumerate(zip_longest(gold, system)):
            if g is None or s is None:  # a file changed since it was indexed
                which, path = ("gold", gpath) if g is None else ("system", spath)
                raise InvalidParameterError(
                    f"The {which} file {path!r} ended after {self.start + n} sentences, fewer than when it was "
                    f"indexed (shard {self.index}); was it changed during the evaluation?")
            if n >= len(self):  # the (n + 1)-th pair of a shard of len(self) pairs
                raise InvalidParameterError(
                    f"The files {gpath!r} and {spath!r} have more sentences in items {self.start}..{self.stop - 1} "
                    f"than when they were indexed (shard {self.index}); were they changed during the evaluation?")
            yield SentencePair(g, s)



class _LazyPool(DataPool):
    """What :class:`PairPool` and :class:`SentencePool` share: lazy items, ``pool[i]``, byte-range shards.

    Subclasses give ``__len__`` and ``_shard(index, start, stop)``; nothing is cached.
    """

    @property
    def items(self) -> _LazyPool:  # type: ignore[override]
        return self

    def _shard(self, index: int, start: int, stop: int) -> Any:
        raise NotImplementedError

    def __iter__(self) -> Iterator[Any]:
        return iter(self._shard(0, 0, len(self)).items())

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return [self[i] for i in range(start, stop, step)]
            return list(self._shard(0, start, max(start, stop)).items())
        i = index.__index__()
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(f"pool index {index} out of range ({len(self)} items)")
        return next(iter(self._shard(0, i, i + 1).items()))

    def _items_for_cursor(self) -> Sequence[Any]:
        # the pool indexes like a Sequence (__len__, __getitem__ with ints and slices) without being one
        return self  # type: ignore[return-value]

    def shards(self, num_shards: int | None = None) -> list[Any]:
        """Contiguous byte ranges of the file(s), sentence counts differing by at most one.

        At most one shard per sentence (at least one shard): a larger count is clamped to the data.
        """
        if num_shards is None:  # the pool's own count: nothing to check (and assay.validation imports numpy)
            n = self.num_shards or 1
        else:
            from assay.validation import check_int

            n = check_int(num_shards, "num_shards", low=1, owner=f"{type(self).__name__}.shards")
        n = min(n, max(len(self), 1))  # more shards than sentences would only be empty ones
        return [self._shard(i, start, stop) for i, (start, stop) in enumerate(split_evenly(len(self), n))]


class PairPool(_LazyPool):
    """A lazy pool of :class:`SentencePair` items over a gold and a system file (see :func:`open_pairs`).

    ``len()`` comes from the indexes; iteration streams both files in lockstep; ``pool[i]``
    parses just sentence ``i`` of each; :meth:`shards` cuts byte ranges. Nothing is cached.
    """

    def __init__(self, gold: SentenceIndex, system: SentenceIndex, data_format: Any, format: str = "",
                 num_shards: int | None = None) -> None:
        if len(gold) != len(system):
            raise InvalidParameterError(f"PairPool needs indexes of the same length, got {len(gold)} and "
                                        f"{len(system)} sentences.")
        self.gold_index, self.system_index, self.data_format = gold, system, data_format
        super().__init__((), num_shards, source=gold.path, format=format or None)

    def __len__(self) -> int:
        return len(self.gold_index)

    def _shard(self, index: int, start: int, stop: int) -> PairShard:
        g, s = self.gold_index, self.system_index
        return PairShard(index, start, stop, (g.path, *g.span(start, stop)), (s.path, *s.span(start, stop)),
                         self.data_format)

    def __repr__(self) -> str:
        return (f"PairPool({len(self)} pairs, gold={self.gold_index.path!r}, system={self.system_index.path!r}, "
                f"num_shards={self.num_shards})")


@attrs.frozen(eq=False, repr=False)
class SentenceShard(_RangeShard):
    """Sentences ``[start, stop)`` of one file, read where the shard runs (see :class:`SentencePool`).

    ``part`` is ``(path, first byte, stop byte or None, first line)``.
    """

    index: int
    start: int
    stop: int
    part: tuple[str, int, int | None, int]
    data_format: Any

    def items(self) -> Iterator[Sentence]:
        """The shard's sentences, in order, parsed lazily."""
        path, start, stop, line = self.part
        n = 0
        for sentence in self.data_format.iter_read(path, start=start, stop=stop, first_line=line):
            n += 1
            if n > len(self):
                break
            yield sentence
        if n != len(self):
            raise InvalidParameterError(
                f"The file {path!r} has {'more' if n > len(self) else 'fewer'} sentences in items "
                f"{self.start}..{self.stop - 1} than when it was indexed (shard {self.index}); was it changed "
                "during the evaluation?")



class SentencePool(_LazyPool):
    """A lazy pool of the :class:`Sentence` items of one file (see :func:`open_sentences`).

    The single-file counterpart of :class:`PairPool`, for evaluating a model on gold
    sentences: ``len()`` from the index, lazy iteration and ``pool[i]``, byte-range shards.
    Its items equal ``DataPool.from_file(path, format=...)``'s.
    """

    def __init__(self, index: SentenceIndex, data_format: Any, format: str = "",
                 num_shards: int | None = None) -> None:
        self.index, self.data_format = index, data_format
        super().__init__((), num_shards, source=index.path, format=format or None)

    def __len__(self) -> int:
        return len(self.index)

    def _shard(self, index: int, start: int, stop: int) -> SentenceShard:
        return SentenceShard(index, start, stop, (self.index.path, *self.index.span(start, stop)), self.data_format)

    def __repr__(self) -> str:
        return f"SentencePool({len(self)} sentences, source={self.index.path!r}, num_shards={self.num_shards})"


def open_sentences(path: str | os.PathLike[str], *, format: Any = None, num_shards: int | None = None) -> SentencePool:
    """A lazy :class:`SentencePool` over one CoNLL-U / CoNLL-X file: ``DataPool.from_file`` without holding it.

    ``format`` as for :func:`open_pairs`. Only the sentence boundaries are read here;
    malformed lines are reported when their sentence is read.
    """
    source = os.fspath(path)
    name, fmt = _resolve(format, source)
    return SentencePool(index_sentences(source), fmt, name, num_shards)


def _resolve(format: Any, gold: str) -> tuple[str, Any]:
    if format is None or isinstance(format, str):
        name = format or format_for(gold)
        return name, load_data_format(name)
    return getattr(format, "name", ""), format


def open_pairs(gold: str | os.PathLike[str], system: str | os.PathLike[str], *, format: Any = None,
               num_shards: int | None = None) -> PairPool:
    """Index a gold and a system file and return a lazy :class:`PairPool` over their sentence pairs.

    ``format`` is a registered name (``"conllu"``, ``"conllx"``, with overrides) or a
    format object; by default it is guessed from the gold file's extension. Different
    sentence counts raise :class:`assay.InvalidParameterError` naming both files, both
    counts and the first sentence whose words differ (found by reading both files in
    lockstep). Malformed lines are reported when their sentence is read.
    """
    gold_path, system_path = os.fspath(gold), os.fspath(system)
    name, fmt = _resolve(format, gold_path)
    g, s = index_sentences(gold_path), index_sentences(system_path)
    if len(g) != len(s):
        described = ""
        gold_it, system_it = fmt.iter_read(gold_path), fmt.iter_read(system_path)
        for gs, ss in zip_longest(gold_it, system_it):
            if gs is None:
                break
            if ss is None or gs.forms() != ss.forms():
                described = gs.describe()
                break
        where = f"; the first sentence whose words differ is {described}" if described else ""
        raise InvalidParameterError(
            f"The gold file {gold_path!r} has {len(g)} sentences and the system file {system_path!r} "
            f"has {len(s)}{where}. Gold and system must have the same sentences and words." + CONLL18_HINT)
    return PairPool(g, s, fmt, name, num_shards)


def iter_pairs(gold: str | os.PathLike[str], system: str | os.PathLike[str], *,
               format: Any = None) -> Iterator[SentencePair]:
    """Stream checked :class:`SentencePair` items: :func:`assay_parsing.read_pairs` with bounded memory.

    The same checks as :func:`assay_parsing.pair_sentences` (same words in every pair,
    same sentence count, :class:`TokenizationError` naming the sentence and line), made as
    the files are read; pairs before a difference have already been yielded.
    """
    gold_path, system_path = os.fspath(gold), os.fspath(system)
    _, fmt = _resolve(format, gold_path)
    for n, (g, s) in enumerate(zip_longest(fmt.iter_read(gold_path), fmt.iter_read(system_path))):
        if g is None or s is None:
            extra: Sentence = s if g is None else g
            ng, ns = (n, n + _count_rest(system_path, extra)) if g is None else (n + _count_rest(gold_path, extra), n)
            raise TokenizationError(
                f"The gold file has {ng} sentences and the system file {ns}; the first unmatched one is "
                f"{extra.describe()}. Gold and system must have the same sentences." + CONLL18_HINT)
        check_same_words(g, s)
        yield SentencePair(g, s)


def _count_rest(path: str, first: Sentence) -> int:
    """Sentences of ``path`` from ``first`` (which starts at ``first.line``) to the end."""
    index = index_sentences(path)
    return sum(1 for line in index.lines if line >= (first.line or 0))
