"""CoNLL-U / CoNLL-X reading and writing: structure, round trip, and malformed input with line numbers."""

from __future__ import annotations

import pickle

import pytest

from assay import DataFormatError
from assay_parsing import ConlluFormat, ConllxFormat, EmptyNode, MultiwordToken, Word, check_tree


def test_conllu_structure_with_multiword_tokens_and_empty_nodes(gold_text):
    first, second = ConlluFormat().parse(gold_text, source="gold.conllu")
    assert first.forms() == ("Ella", "vendió", "de", "el", "pan", "ayer", ".")
    assert [w.id for w in first.words] == [1, 2, 3, 4, 5, 6, 7]
    assert [w.head for w in first.words] == [2, 0, 5, 5, 2, 2, 2]
    assert first.words[5] == Word(6, "ayer", "ayer", "ADV", "_", "_", 2, "obl:tmod", "_", "SpaceAfter=No")
    assert first.multiword_tokens == (MultiwordToken(3, 4, "del"),)
    assert first.empty_nodes == (EmptyNode(5, 1, "vendió", ("vender", "VERB", "_", "_", "_", "_", "2:conj", "_")),)
    assert first.comments == ("# sent_id = s1", "# text = Ella vendió del pan ayer.")
    assert first.sent_id == "s1" and second.sent_id == "s2"
    assert (first.source, first.line, second.line) == ("gold.conllu", 1, 13)
    # line numbers of words count comments, the range line and the empty node line
    assert first.line_of(3) == 6 and first.line_of(6) == 10 and second.line_of(3) == 16


def test_conllu_round_trip_is_exact(gold_text, system_text):
    fmt = ConlluFormat()
    assert fmt.dumps(fmt.parse(gold_text)) == gold_text
    assert fmt.dumps(fmt.parse(system_text)) == system_text


def test_empty_node_before_first_word_and_two_empty_nodes_round_trip(to_conllu):
    text = to_conllu("0.1 x _ _ _ _ _ _ _ _", "1 a _ _ _ _ 0 root _ _", "1.1 y _ _ _ _ _ _ _ _",
                  "1.2 z _ _ _ _ _ _ _ _", "")
    (s,) = ConlluFormat().parse(text)
    assert [(n.after, n.index) for n in s.empty_nodes] == [(0, 1), (1, 1), (1, 2)]
    assert ConlluFormat().dumps([s]) == text


def test_tolerates_crlf_extra_blank_lines_and_missing_final_blank_line(to_conllu):
    text = "\r\n\r\n" + to_conllu("1 a _ _ _ _ 0 root _ _", "", "", "1 b _ _ _ _ 0 root _ _").replace("\n", "\r\n")
    text = text.rstrip("\r\n")
    sents = ConlluFormat().parse(text)
    assert [s.forms() for s in sents] == [("a",), ("b",)]
    assert [s.line for s in sents] == [3, 6]


def test_sentences_pickle_and_compare_by_content(gold_text):
    sents = ConlluFormat().parse(gold_text, source="a")
    again = ConlluFormat().parse(gold_text, source="b")
    assert sents == again  # source and line do not take part in equality
    assert pickle.loads(pickle.dumps(sents)) == sents


def test_conllx_maps_columns_and_round_trips(to_conllu):
    text = to_conllu("1 Der der ART ART _ 2 NK 2 NK", "2 Hund Hund NN NN _ 0 ROOT _ _", "")
    (s,) = ConllxFormat().parse(text)
    assert (s.words[0].upos, s.words[0].xpos, s.words[0].deps, s.words[0].misc) == ("ART", "ART", "2", "NK")
    assert ConllxFormat().dumps([s]) == text


def test_conllx_allows_several_roots_by_default_but_conllu_does_not(to_conllu):
    text = to_conllu("1 a _ _ _ _ 0 ROOT _ _", "2 b _ _ _ _ 0 ROOT _ _", "")
    assert len(ConllxFormat().parse(text)[0]) == 2
    with pytest.raises(DataFormatError, match=r"f\.conllu:1: sentence is not a tree: expected exactly one root.*"
                                              r"found 2 \(words 1, 2\)"):
        ConlluFormat().parse(text, source="f.conllu")
    assert len(ConlluFormat(check_tree=False).parse(text)) == 1


def test_check_tree():
    assert check_tree([0]) is None
    assert check_tree([2, 0, 2, 3]) is None
    assert check_tree([0, 3, 2]) == "HEAD values form a cycle through words 2, 3"
    assert check_tree([1]) == "expected exactly one root (HEAD 0), found 0"


OK = "1 a _ _ _ _ 0 root _ _"

MALFORMED = [
    # (rows, line of the error, message pattern)
    (["# c", OK, "2 b _ _ _ _ 1 dep _"], 3, r"expected 10 tab-separated columns .* found 9"),
    ([OK, "2 b _ _ _ _ 1 dep _ _ _"], 2, r"found 11"),
    ([OK, "3 b _ _ _ _ 1 dep _ _"], 2, r"word ID '3' is out of sequence: expected 2"),
    ([OK, "x b _ _ _ _ 1 dep _ _"], 2, r"ID 'x' is not a word index"),
    ([OK, "2 b _ _ _ _ one dep _ _"], 2, r"HEAD must be a non-negative integer, got 'one'"),
    ([OK, "2 b _ _ _ _ _ dep _ _"], 2, r"HEAD must be a non-negative integer, got '_'"),
    ([OK, "2 b _ _ _ _ -1 dep _ _"], 2, r"HEAD must be a non-negative integer, got '-1'"),
    ([OK, "2 b _ _ _ _ 5 dep _ _"], 2, r"HEAD 5 points outside the sentence \(words 1\.\.2\)"),
    (["1-x ab _ _ _ _ _ _ _ _", OK], 1, r"multiword token ID '1-x' is not a range"),
    ([OK, "3-4 cd _ _ _ _ _ _ _ _"], 2, r"range '3-4' must start at the next word ID, 2"),
    (["1-1 a _ _ _ _ _ _ _ _", OK], 1, r"must span at least two words"),
    (["1-2 ab _ _ _ _ _ _ _ _", OK], 1, r"range '1-2' goes beyond the last word \(1\)"),
    ([OK, "2.1 e _ _ _ _ _ _ _ _"], 2, r"empty node '2\.1' must follow word 2, but it follows word 1"),
    ([OK, "1.2 e _ _ _ _ _ _ _ _"], 2, r"empty node ID '1\.2' is out of sequence: expected 1\.1"),
    ([OK, "1.x e _ _ _ _ _ _ _ _"], 2, r"empty node ID '1\.x' is not of the form"),
    ([OK, "# late comment"], 2, r"comment line inside a sentence"),
    ([OK, "2 b  _ _ _ 1 dep _ _"], 2, r"column LEMMA is empty"),
    (["# only a comment", ""], 1, r"sentence has no words"),
    (["1 a _ _ _ _ 2 dep _ _", "2 b _ _ _ _ 1 dep _ _"], 1, r"not a tree: expected exactly one root.*found 0"),
    ([OK, "2 b _ _ _ _ 3 dep _ _", "3 c _ _ _ _ 2 dep _ _"], 1, r"cycle through words 2, 3"),
]


@pytest.mark.parametrize("rows, line, pattern", MALFORMED)
def test_malformed_conllu_names_file_and_line(rows, line, pattern, to_conllu):
    with pytest.raises(DataFormatError, match=pattern) as info:
        ConlluFormat().parse(to_conllu(*rows), source="bad.conllu")
    assert info.value.source == "bad.conllu"
    assert info.value.line == line
    assert str(info.value).startswith(f"bad.conllu:{line}: ")


@pytest.mark.parametrize("row", ["1-2 ab _ _ _ _ _ _ _ _", "0.1 e _ _ _ _ _ _ _ _"])
def test_conllx_rejects_ranges_and_empty_nodes(row, to_conllu):
    with pytest.raises(DataFormatError, match=r"x\.conllx:1: ID '.*' is not a word index \(1, 2, \.\.\.\)$"):
        ConllxFormat().parse(to_conllu(row, OK), source="x.conllx")


def test_read_reports_the_path(tmp_path, to_conllu):
    path = tmp_path / "bad.conllu"
    path.write_text(to_conllu(OK, "2 b _ _ _ _ 1 dep _"), encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"bad\.conllu:2: expected 10"):
        ConlluFormat().read(path)


def test_dumps_rejects_non_sentences():
    with pytest.raises(TypeError, match="item 0 is dict"):
        ConlluFormat().dumps([{}])


@pytest.mark.parametrize("rows, line, pattern", MALFORMED)
def test_parse_eval_conll18_reports_the_readers_error(rows, line, pattern, to_conllu, tmp_path, capsys):
    # the column reader of --conll18 leaves every malformed file to the format's reader, whose
    # message names the file and the line; for the gold file and for the system file
    from assay.cli import main
    from assay_parsing.columns import parse_columns

    text = to_conllu(*rows)
    assert parse_columns(text) is None
    good, bad = tmp_path / "good.conllu", tmp_path / "bad.conllu"
    good.write_text(to_conllu(OK, ""), encoding="utf-8")
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(DataFormatError) as info:
        ConlluFormat().read(bad)
    for argv in ([good, bad], [bad, good]):
        assert main(["parse-eval", "--conll18", *map(str, argv)]) == 2
        err = capsys.readouterr().err
        assert err == f"assay parse-eval: error: {info.value}\n"
        assert err.startswith(f"assay parse-eval: error: {bad}:{line}: ")
