"""Shared fixtures: a small realistic gold / system pair written by hand (see test_evaluators for the counts)."""

from __future__ import annotations

import pytest

T = "\t"


def conllu(*rows: str) -> str:
    """Join rows written with single spaces between columns into CoNLL-U lines (tabs)."""
    return "".join((row if row.startswith("#") or not row else T.join(row.split(" "))) + "\n" for row in rows)


GOLD = conllu(
    "# sent_id = s1",
    "# text = Ella vendió del pan ayer.",
    "1 Ella ella PRON _ _ 2 nsubj _ _",
    "2 vendió vender VERB _ _ 0 root _ _",
    "3-4 del _ _ _ _ _ _ _ _",
    "3 de de ADP _ _ 5 case _ _",
    "4 el el DET _ _ 5 det _ _",
    "5 pan pan NOUN _ _ 2 obj _ _",
    "5.1 vendió vender VERB _ _ _ _ 2:conj _",
    "6 ayer ayer ADV _ _ 2 obl:tmod _ SpaceAfter=No",
    "7 . . PUNCT _ _ 2 punct _ _",
    "",
    "# sent_id = s2",
    "1 The the DET DT _ 2 det _ _",
    "2 dog dog NOUN NN _ 3 nsubj _ _",
    "3 barks bark VERB VBZ _ 0 root _ _",
    "",
)

SYSTEM = conllu(
    "# sent_id = s1",
    "# text = Ella vendió del pan ayer.",
    "1 Ella ella PRON _ _ 2 nsubj:pass _ _",
    "2 vendió vender VERB _ _ 0 root _ _",
    "3-4 del _ _ _ _ _ _ _ _",
    "3 de de ADP _ _ 5 case _ _",
    "4 el el PRON _ _ 2 det _ _",
    "5 pan pan NOUN _ _ 2 nmod _ _",
    "5.1 vendió vender VERB _ _ _ _ 2:conj _",
    "6 ayer ayer ADV _ _ 5 obl _ SpaceAfter=No",
    "7 . . PUNCT _ _ 2 punct _ _",
    "",
    "# sent_id = s2",
    "1 The the DET NN _ 2 nmod:poss _ _",
    "2 dog dog NOUN NN _ 3 nsubj _ _",
    "3 barks bark VERB VBZ _ 0 root _ _",
    "",
)


@pytest.fixture
def gold_text() -> str:
    return GOLD


@pytest.fixture
def system_text() -> str:
    return SYSTEM


@pytest.fixture
def to_conllu():
    """``to_conllu("1 a _ ...", "")`` -> CoNLL-U text (rows with single spaces become tab-separated)."""
    return conllu
