"""The sentence objects the CoNLL-U and CoNLL-X formats produce.

A :class:`Sentence` holds its syntactic words (:class:`Word`, IDs ``1..n``), its multiword
token ranges (:class:`MultiwordToken`, lines such as ``1-2``), its empty nodes
(:class:`EmptyNode`, lines such as ``8.1``) and its comment lines, enough to write the
sentence back as it was read. Evaluators look only at ``words``.

All classes are frozen attrs classes: hashable, comparable and picklable, so sentences
cross process boundaries (parallel executors) as plain data.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import attrs

__all__ = ["EmptyNode", "MultiwordToken", "Sentence", "SentencePair", "Word"]


class Word(NamedTuple):
    """One syntactic word: the ten CoNLL-U columns, with ``id`` and ``head`` as ints.

    The other columns are kept verbatim (``"_"`` for an unspecified value). In CoNLL-X
    files the columns map by position: CPOSTAG -> ``upos``, POSTAG -> ``xpos``, PHEAD ->
    ``deps``, PDEPREL -> ``misc``.

    A named tuple rather than an attrs class: a treebank holds hundreds of thousands of
    words, and a tuple is created about 2.5x and pickled (to parallel workers) about 3x
    faster than a frozen attrs instance. It is just as immutable.
    """

    id: int
    form: str
    lemma: str = "_"
    upos: str = "_"
    xpos: str = "_"
    feats: str = "_"
    head: int = 0
    deprel: str = "_"
    deps: str = "_"
    misc: str = "_"

    def columns(self) -> tuple[str, ...]:
        """The ten columns as strings, in file order."""
        return (str(self.id), self.form, self.lemma, self.upos, self.xpos, self.feats,
                str(self.head), self.deprel, self.deps, self.misc)


@attrs.frozen
class MultiwordToken:
    """A multiword token range line (``first-last``): one orthographic token split into words.

    ``rest`` holds the eight columns after FORM verbatim (normally all ``"_"`` except MISC).
    """

    first: int
    last: int
    form: str
    rest: tuple[str, ...] = ("_",) * 8

    def columns(self) -> tuple[str, ...]:
        return (f"{self.first}-{self.last}", self.form, *self.rest)


@attrs.frozen
class EmptyNode:
    """An empty node line (``after.index``, e.g. ``8.1``) of the enhanced representation.

    It follows word ``after`` (0 for before the first word). ``rest`` holds the eight
    columns after FORM verbatim. Basic-tree evaluators ignore empty nodes.
    """

    after: int
    index: int
    form: str
    rest: tuple[str, ...] = ("_",) * 8

    def columns(self) -> tuple[str, ...]:
        return (f"{self.after}.{self.index}", self.form, *self.rest)


@attrs.frozen
class Sentence:
    """A sentence: comments, multiword tokens, syntactic words and empty nodes.

    ``source`` and ``line`` (1-based line where the sentence starts, comments included)
    locate it for error messages; they do not take part in equality.

    >>> s = Sentence(words=(Word(1, "Hi", head=0, deprel="root"),))
    >>> len(s), s.forms()
    (1, ('Hi',))
    """

    words: tuple[Word, ...]
    multiword_tokens: tuple[MultiwordToken, ...] = ()
    empty_nodes: tuple[EmptyNode, ...] = ()
    comments: tuple[str, ...] = ()
    source: str = attrs.field(default="<string>", eq=False)
    line: int | None = attrs.field(default=None, eq=False)

    def __len__(self) -> int:
        return len(self.words)

    def forms(self) -> tuple[str, ...]:
        """The FORMs of the syntactic words."""
        return tuple(w.form for w in self.words)

    @property
    def sent_id(self) -> str | None:
        """The value of a ``# sent_id = ...`` comment, if there is one."""
        for comment in self.comments:
            body = comment.lstrip("#").strip()
            if body.startswith("sent_id") and "=" in body:
                return body.split("=", 1)[1].strip()
        return None

    def lines(self) -> Iterator[tuple[str, ...] | str]:
        """The sentence's lines in canonical CoNLL-U order (comments as strings, others as columns).

        Comments first; then for each word: the multiword range that starts at it, the
        word, and the empty nodes that follow it (empty nodes ``0.k`` come before word 1).
        """
        yield from self.comments
        ranges = {m.first: m for m in self.multiword_tokens}
        empties: dict[int, list[EmptyNode]] = {}
        for node in self.empty_nodes:
            empties.setdefault(node.after, []).append(node)
        for node in empties.get(0, ()):
            yield node.columns()
        for word in self.words:
            if word.id in ranges:
                yield ranges[word.id].columns()
            yield word.columns()
            for node in empties.get(word.id, ()):
                yield node.columns()

    def line_of(self, word_id: int) -> int | None:
        """The file line of syntactic word ``word_id`` (when the sentence was read from a file)."""
        if self.line is None:
            return None
        for offset, item in enumerate(self.lines()):
            if not isinstance(item, str) and item[0] == str(word_id):
                return self.line + offset
        return None

    def describe(self) -> str:
        """``"sentence 'id' at file:line"`` for error messages."""
        name = f"sentence {self.sent_id!r}" if self.sent_id else "sentence"
        where = f"{self.source}:{self.line}" if self.line is not None else self.source
        return f"{name} at {where}"


@attrs.frozen
class SentencePair:
    """A gold sentence and the system's analysis of the same words (what file evaluation pools hold)."""

    gold: Sentence
    system: Sentence

    def __iter__(self) -> Iterator[Sentence]:
        return iter((self.gold, self.system))
