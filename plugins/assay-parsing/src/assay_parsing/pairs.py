"""Pair a gold file with a system file, sentence by sentence, for file evaluation."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from assay import load_data_format
from assay_parsing.evaluators import CONLL18_HINT, TokenizationError, check_same_words
from assay_parsing.sentence import Sentence, SentencePair

__all__ = ["format_for", "pair_sentences", "read_pairs"]


def format_for(path: str | os.PathLike[str]) -> str:
    """The format name for a file: ``conllx`` for ``.conllx`` / ``.conll``, else ``conllu``."""
    return "conllx" if Path(path).suffix.lower() in (".conllx", ".conll") else "conllu"


def pair_sentences(gold: Sequence[Sentence], system: Sequence[Sentence]) -> list[SentencePair]:
    """Pair sentences in order, checking that every pair has the same words.

    The CoNLL 2018 script aligns whole files character by character and so tolerates a
    different sentence split; sharded evaluation needs sentence pairs, so assay requires the
    same sentences and the same words (see ``docs/parsing.md``). The first difference is
    reported with its sentence and line.

    Raises
    ------
    TokenizationError
        When a sentence's words differ, or the files have different sentence counts.
    """
    for g, s in zip(gold, system):
        check_same_words(g, s)
    if len(gold) != len(system):
        shorter, which = (gold, "gold") if len(gold) < len(system) else (system, "system")
        longer = system if which == "gold" else gold
        extra = longer[len(shorter)]
        raise TokenizationError(
            f"The gold file has {len(gold)} sentences and the system file {len(system)}; the first unmatched "
            f"one is {extra.describe()}. Gold and system must have the same sentences." + CONLL18_HINT)
    return [SentencePair(g, s) for g, s in zip(gold, system)]


def read_pairs(gold_path: str | os.PathLike[str], system_path: str | os.PathLike[str], *,
               format: str | None = None) -> list[SentencePair]:
    """Read a gold and a system file (CoNLL-U or CoNLL-X) into checked :class:`SentencePair` items.

    ``format`` is a registered data format name (``"conllu"``, ``"conllx"``, with overrides
    such as ``"conllu[check_tree=false]"``); by default it is guessed from the gold file's
    extension.
    """
    fmt = load_data_format(format or format_for(gold_path))
    return pair_sentences(fmt.read(gold_path), fmt.read(system_path))
