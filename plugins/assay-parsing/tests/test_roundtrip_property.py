"""Property: writing any sentence as CoNLL-U / CoNLL-X and reading it back gives the same sentence."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay_parsing import ConlluFormat, ConllxFormat, EmptyNode, MultiwordToken, Sentence, Word

# any text without the characters that structure a file; '_' and spaces are allowed
field = st.text(st.characters(blacklist_characters="\t\n\r", blacklist_categories=("Cs",)), min_size=1, max_size=6)


@st.composite
def sentences(draw, multiword: bool = True):
    n = draw(st.integers(1, 7))
    words = tuple(Word(i, draw(field), draw(field), draw(field), draw(field), draw(field),
                       draw(st.integers(0, n)), draw(field), draw(field), draw(field)) for i in range(1, n + 1))
    ranges, empties = [], []
    if multiword:
        i = 1
        while i < n:
            if draw(st.booleans()):
                last = draw(st.integers(i + 1, n))
                ranges.append(MultiwordToken(i, last, draw(field), tuple(draw(field) for _ in range(8))))
                i = last + 1
            else:
                i += 1
        for after in range(0, n + 1):
            for index in range(1, draw(st.integers(0, 2)) + 1):
                empties.append(EmptyNode(after, index, draw(field), tuple(draw(field) for _ in range(8))))
    comments = tuple("#" + c for c in draw(st.lists(st.text(st.characters(blacklist_characters="\n\r",
                                                                          blacklist_categories=("Cs",))),
                                                    max_size=2)))
    return Sentence(words, tuple(ranges), tuple(empties), comments)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.lists(sentences(), min_size=1, max_size=4))
def test_conllu_round_trip(sents):
    fmt = ConlluFormat(check_tree=False)
    text = fmt.dumps(sents)
    assert fmt.parse(text) == sents
    assert fmt.dumps(fmt.parse(text)) == text


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(st.lists(sentences(multiword=False), min_size=1, max_size=4))
def test_conllx_round_trip(sents):
    fmt = ConllxFormat()
    assert fmt.parse(fmt.dumps(sents)) == sents
