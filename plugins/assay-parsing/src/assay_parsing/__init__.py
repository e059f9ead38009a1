"""assay-parsing: CoNLL-U / CoNLL-X data formats and parsing / tagging sentence evaluators.

Registered names: data formats ``conllu`` and ``conllx``; sentence evaluators ``uas``,
``las``, ``clas`` and ``tagging_accuracy``. See ``docs/parsing.md`` for the definitions.

Every public name is re-exported here and imported on first access, so that a command that
needs a few modules (``assay parse-eval --conll18``) imports only those.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(["CLAS", "CONTENT_DEPRELS", "FUNCTION_DEPRELS", "LAS", "UAS", "TaggingAccuracy",
                     "TokenizationError", "check_same_words", "universal_deprel"], "assay_parsing.evaluators"),
    **dict.fromkeys(["ConlluFormat", "ConllxFormat", "check_tree"], "assay_parsing.formats"),
    **dict.fromkeys(["format_for", "pair_sentences", "read_pairs"], "assay_parsing.pairs"),
    **dict.fromkeys(["EmptyNode", "MultiwordToken", "Sentence", "SentencePair", "Word"], "assay_parsing.sentence"),
    **dict.fromkeys(["PairPool", "PairShard", "SentencePool", "SentenceShard", "index_sentences", "iter_pairs",
                     "open_pairs", "open_sentences"], "assay_parsing.stream"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'assay_parsing' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
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
