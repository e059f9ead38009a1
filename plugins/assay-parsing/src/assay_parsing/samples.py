"""Sample inputs of this plugin's registered names, for the conformance suite (``examples=`` on registration).

Three small sentences in CoNLL-U (one with a multiword token, one with an empty node)
and a system analysis of them that differs in some heads, relations and tags, so every
evaluator's tallies are neither all correct nor all wrong. ``CONLLX`` is the first two
in CoNLL-X. Parsing them costs a few milliseconds, on first use only.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

__all__ = ["CONLLU", "CONLLX", "conllu_examples", "conllx_examples", "evaluator_examples"]

CONLLU = """\
# sent_id = s1
# text = The cat sat.
1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_
2\tcat\tcat\tNOUN\tNN\t_\t3\tnsubj\t_\t_
3\tsat\tsit\tVERB\tVBD\t_\t0\troot\t_\tSpaceAfter=No
4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_

# sent_id = s2
# text = Vámonos al mar
1-2\tVámonos\t_\t_\t_\t_\t_\t_\t_\t_
1\tVamos\tir\tVERB\t_\t_\t0\troot\t_\t_
2\tnos\tnosotros\tPRON\t_\t_\t1\tobj\t_\t_
3-4\tal\t_\t_\t_\t_\t_\t_\t_\t_
3\ta\ta\tADP\t_\t_\t5\tcase\t_\t_
4\tel\tel\tDET\t_\t_\t5\tdet\t_\t_
5\tmar\tmar\tNOUN\t_\t_\t1\tobl\t_\t_

# sent_id = s3
# text = Sue likes coffee and Bill tea
1\tSue\tSue\tPROPN\t_\t_\t2\tnsubj\t_\t_
2\tlikes\tlike\tVERB\t_\t_\t0\troot\t_\t_
3\tcoffee\tcoffee\tNOUN\t_\t_\t2\tobj\t_\t_
4\tand\tand\tCCONJ\t_\t_\t5\tcc\t_\t_
5\tBill\tBill\tPROPN\t_\t_\t2\tconj\t_\t_
5.1\tlikes\tlike\tVERB\t_\t_\t_\t_\t2:conj\t_
6\ttea\ttea\tNOUN\t_\t_\t5\tobj\t_\t_

"""

#: the system analysis: s1 one wrong head and tag, s2 one wrong relation, s3 two wrong heads
SYSTEM_CONLLU = (CONLLU
                 .replace("2\tcat\tcat\tNOUN", "2\tcat\tcat\tVERB")
                 .replace("1\tThe\tthe\tDET\tDT\t_\t2\tdet", "1\tThe\tthe\tDET\tDT\t_\t3\tdet")
                 .replace("5\tmar\tmar\tNOUN\t_\t_\t1\tobl", "5\tmar\tmar\tNOUN\t_\t_\t1\tobj")
                 .replace("4\tand\tand\tCCONJ\t_\t_\t5\tcc", "4\tand\tand\tCCONJ\t_\t_\t2\tcc")
                 .replace("6\ttea\ttea\tNOUN\t_\t_\t5\tobj", "6\ttea\ttea\tNOUN\t_\t_\t2\tobj"))

CONLLX = """\
1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_
2\tcat\tcat\tNOUN\tNN\t_\t3\tnsubj\t_\t_
3\tsat\tsit\tVERB\tVBD\t_\t0\troot\t_\t_
4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_

1\tSue\tSue\tPROPN\t_\t_\t2\tnsubj\t_\t_
2\tlikes\tlike\tVERB\t_\t_\t0\troot\t_\t_
3\ttea\ttea\tNOUN\t_\t_\t2\tobj\t_\t_

"""


def conllu_examples() -> list[dict[str, Any]]:
    """``examples`` of the ``conllu`` format: a document to read and write back."""
    return [{"text": CONLLU}]


def conllx_examples() -> list[dict[str, Any]]:
    """``examples`` of the ``conllx`` format."""
    return [{"text": CONLLX}]


@lru_cache(maxsize=1)
def _pairs() -> tuple[Any, ...]:
    from assay_parsing.formats import ConlluFormat
    from assay_parsing.pairs import pair_sentences

    fmt = ConlluFormat()
    return tuple(pair_sentences(fmt.parse(CONLLU, source="<gold>"), fmt.parse(SYSTEM_CONLLU, source="<system>")))


def evaluator_examples() -> list[dict[str, Any]]:
    """``examples`` of the sentence evaluators: the (gold, system) pairs of the three sentences."""
    return [{"items": list(_pairs()), "w_vector": None}]
