"""The tallies of the built-in sentence evaluators over a file shard, counted column by column.

``assay parse-eval`` (plain mode) scores each ``(gold, system)`` sentence pair of a shard with
the ``uas``, ``las``, ``clas`` and ``tagging_accuracy`` evaluators. Through the sentence
objects that costs a :class:`~assay_parsing.sentence.Word` per word and a call per pair and
evaluator, most of the run. Those four evaluators only count words, so their tallies summed
over a shard are counts over whole columns: :func:`shard_tallies` reads the shard's byte
ranges of both files with the column reader (:func:`assay_parsing.columns.parse_columns`, the
reader of ``--conll18``) and counts them in bulk. Written for speed: it gives the same sums as
the object path, which the tests check on the real UD files, sequentially and sharded.

It answers only what it can vouch for, and returns None otherwise, so that the caller scores
the shard sentence by sentence (which raises the errors, naming the file and the line):

* the shard is an :class:`~assay_parsing.stream.PairShard` of the plugin's own CoNLL-U /
  CoNLL-X format (not a subclass, whose reading may differ);
* every evaluator is an instance of :class:`UAS`, :class:`LAS`, :class:`CLAS` or
  :class:`TaggingAccuracy` itself (a subclass or a user's function goes the object way, and
  receives the sentence objects as before);
* the shard's two byte ranges hold at most :data:`MAX_SHARD_BYTES` together (the columns of a
  range are held whole; a larger shard is streamed pair by pair, in bounded memory --
  :func:`shard_count` gives the shard count that keeps a file pair's shards under it);
* the column reader accepts both byte ranges (it returns None on anything the format's
  reader must judge), each has the shard's number of sentences, and both have the same
  words and multiword tokens in every sentence (otherwise the evaluators raise
  :class:`~assay_parsing.evaluators.TokenizationError`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from itertools import compress
from operator import and_, eq
from typing import Any

from assay_parsing.columns import Columns, parse_columns
from assay_parsing.evaluators import CLAS, CONTENT_DEPRELS, LAS, UAS, TaggingAccuracy
from assay_parsing.formats import ConlluFormat, ConllxFormat
from assay_parsing.lines import open_data_file
from assay_parsing.stream import PairShard

__all__ = ["MAX_SHARD_BYTES", "shard_count", "shard_tallies"]

#: the most bytes (gold and system ranges together) of a shard counted column by column: its columns
#: take about eight times its bytes in memory while it is counted (28 MiB for English EWT's 3.6 MB)
MAX_SHARD_BYTES = 8 << 20

#: the evaluator classes counted here (exact types: a subclass may score otherwise)
_BUILT_IN = (UAS, LAS, CLAS, TaggingAccuracy)
_FORMATS = (ConlluFormat, ConllxFormat)


def shard_tallies(shard: Any, evaluators: Sequence[tuple[str, Any]]) -> list[tuple[int, int]] | None:
    """``(correct_num, gold_set_size)`` summed over ``shard`` for each ``(name, evaluator)``, or None.

    None when the shard or an evaluator is not one this function vouches for (see the module
    doc); the caller then scores the shard pair by pair.
    """
    if type(shard) is not PairShard or type(shard.data_format) not in _FORMATS:
        return None
    if not all(type(evaluator) in _BUILT_IN for _, evaluator in evaluators):
        return None
    texts = shard.texts or (None, None)
    if _size(shard.gold, texts[0]) + _size(shard.system, texts[1]) > MAX_SHARD_BYTES:
        return None
    fmt = shard.data_format
    gold = _read(shard.gold, texts[0], fmt)
    if gold is None or gold.num_sentences != len(shard):
        return None
    system = _read(shard.system, texts[1], fmt, like=gold)
    if system is None or system.num_sentences != len(shard):
        return None
    if system.bounds != gold.bounds or system.form != gold.form or system.mwt != gold.mwt:
        return None  # different words: the evaluators raise TokenizationError, naming the sentence
    return [_tally(evaluator, gold, system) for _, evaluator in evaluators]


def shard_count(pool: Any) -> int:
    """Shards enough for each of a :class:`~assay_parsing.stream.PairPool`'s to stay under
    :data:`MAX_SHARD_BYTES` (half of it on average: shards hold equal sentence counts, not bytes); 1 for
    another pool."""
    gold, system = getattr(pool, "gold_index", None), getattr(pool, "system_index", None)
    if gold is None or system is None:
        return 1
    return max(1, min(len(pool), -(-2 * (gold.size + system.size) // MAX_SHARD_BYTES)))


def _size(part: tuple[str, int, int | None, int], data: bytes | None) -> int:
    """The bytes of a shard's range of one file."""
    path, start, stop, _ = part
    if data is not None:
        return len(data)
    return (os.path.getsize(path) if stop is None else stop) - start


def _read(part: tuple[str, int, int | None, int], data: bytes | None, fmt: Any,
          like: Columns | None = None) -> Columns | None:
    path, start, stop, _ = part
    if data is None:
        with open_data_file(path) as f:
            f.seek(start)
            data = f.read() if stop is None else f.read(max(0, stop - start))
    return parse_columns(data, source=path, multiword=fmt.multiword, check_tree=fmt.check_tree, like=like)


def _universal(deprels: list[str]) -> list[str]:
    """The universal part of each relation (``nsubj:pass`` -> ``nsubj``), each distinct one split once."""
    table = {d: d.split(":", 1)[0] for d in set(deprels)}
    return list(map(table.__getitem__, deprels))


def _tally(evaluator: Any, gold: Columns, system: Columns) -> tuple[int, int]:
    n = len(gold)
    if type(evaluator) is TaggingAccuracy:
        tag = evaluator.tag
        return sum(map(eq, getattr(gold, tag), getattr(system, tag))), n
    same_head = list(map(eq, gold.head, system.head))
    if type(evaluator) is UAS:
        return sum(same_head), n
    if evaluator.subtypes:
        same_label = list(map(eq, gold.deprel, system.deprel))
    else:
        same_label = list(map(eq, _universal(gold.deprel), _universal(system.deprel)))
    attached = list(map(and_, same_head, same_label))
    if type(evaluator) is LAS:
        return sum(attached), n
    # CLAS: (2 x gold content words attached correctly, gold + system content words); content by the universal part
    gold_content = [d in CONTENT_DEPRELS for d in _universal(gold.deprel)]
    system_content = sum(d in CONTENT_DEPRELS for d in _universal(system.deprel))
    return 2 * sum(compress(attached, gold_content)), sum(gold_content) + system_content
