"""assay-parsing: CoNLL-U / CoNLL-X data formats and parsing / tagging sentence evaluators.

Registered names: data formats ``conllu`` and ``conllx``; sentence evaluators ``uas``,
``las``, ``clas`` and ``tagging_accuracy``. See ``docs/parsing.md`` for the definitions.
"""

from __future__ import annotations

from assay_parsing.evaluators import (
                                      CLAS,
                                      CONTENT_DEPRELS,
                                      FUNCTION_DEPRELS,
                                      LAS,
                                      UAS,
                                      TaggingAccuracy,
                                      TokenizationError,
                                      check_same_words,
                                      universal_deprel,
)
from assay_parsing.formats import ConlluFormat, ConllxFormat, check_tree
from assay_parsing.pairs import format_for, pair_sentences, read_pairs
from assay_parsing.sentence import EmptyNode, MultiwordToken, Sentence, SentencePair, Word
from assay_parsing.stream import (
                                      PairPool,
                                      PairShard,
                                      SentencePool,
                                      SentenceShard,
                                      index_sentences,
                                      iter_pairs,
                                      open_pairs,
                                      open_sentences,
)

__version__ = "0.1.0"

__all__ = [
    "CLAS", "CONTENT_DEPRELS", "FUNCTION_DEPRELS", "LAS", "UAS", "ConlluFormat", "ConllxFormat", "EmptyNode",
    "MultiwordToken", "PairPool", "PairShard", "Sentence", "SentencePair", "SentencePool", "SentenceShard",
    "TaggingAccuracy", "TokenizationError", "Word", "check_same_words", "check_tree", "format_for",
    "index_sentences", "iter_pairs", "open_pairs", "open_sentences", "pair_sentences", "read_pairs",
    "universal_deprel",
]
