"""The column reader of ``parse-eval --conll18`` against the format's own reader.

:func:`assay_parsing.columns.read_columns` must give, for every file the format's reader
accepts, the columns of that reader's sentences (or None, leaving the file to it), and None
for every file that reader rejects, so that the error (file and line) is the reader's. Checked
on the fixtures, generated treebanks, every real UD file of ``/work/shared/data/ud``, and
randomly damaged files.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay import DataFormatError
from assay_parsing.columns import Columns, parse_columns, read_columns
from assay_parsing.formats import ConlluFormat, ConllxFormat

UD = Path("/work/shared/data/ud")


def _same(text: str, fmt) -> Columns:
    """The columns of ``text``, checked equal to those of the format reader's sentences."""
    fast = parse_columns(text, multiword=fmt.multiword, check_tree=fmt.check_tree)
    assert fast is not None
    assert fast == Columns.from_sentences(fmt.parse(text))
    return fast


def test_fixture_columns(gold_text, system_text):
    gold = _same(gold_text, ConlluFormat())
    assert gold.form == ["Ella", "vendió", "de", "el", "pan", "ayer", ".", "The", "dog", "barks"]
    assert gold.head == [2, 0, 5, 5, 2, 2, 2, 2, 3, 0]
    assert gold.deprel[5] == "obl:tmod" and gold.feats[5] == "_" and gold.upos[7] == "DET"
    assert gold.bounds == [0, 7, 10]
    assert gold.mwt == [(2, 4, "del")]  # words 3-4 of the first sentence, file-wide positions 2 and 3
    _same(system_text, ConlluFormat())
    # the sentences rebuilt from the columns carry what the alignment reads
    first = gold.sentences(0, 1)[0]
    assert first.forms() == ("Ella", "vendió", "de", "el", "pan", "ayer", ".")
    assert [(m.first, m.last, m.form) for m in first.multiword_tokens] == [(3, 4, "del")]
    assert [w.head for w in gold.sentences(1)[0].words] == [2, 3, 0]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_generated_treebanks(seed, make_treebank):
    for text in make_treebank(seed, 150):
        cols = _same(text, ConlluFormat())
        assert cols.mwt and cols.num_sentences == 150


@pytest.mark.parametrize("name", sorted(p.name for p in UD.glob("*.conllu.gz")))
def test_real_treebanks(tmp_path, name):
    path = tmp_path / name[:-3]
    path.write_bytes(gzip.decompress((UD / name).read_bytes()))
    fast = read_columns(path)
    assert fast is not None
    assert fast == Columns.from_sentences(ConlluFormat().read(path))


def test_conllx(to_conllu):
    text = to_conllu("1 Der der ART ART _ 2 NK 2 NK", "2 Hund Hund NN NN _ 0 ROOT _ _", "",
                     "1 a _ _ _ _ 0 ROOT _ _", "2 b _ _ _ _ 0 ROOT _ _", "")
    cols = _same(text, ConllxFormat())  # several roots: allowed in CoNLL-X
    assert cols.upos == ["ART", "NN", "_", "_"] and cols.head == [2, 0, 0, 0]
    assert parse_columns(text, multiword=False, check_tree=True) is None
    assert parse_columns(to_conllu("1-2 ab _ _ _ _ _ _ _ _", "1 a _ _ _ _ 0 r _ _", "2 b _ _ _ _ 1 r _ _"),
                         multiword=False) is None


def test_blank_lines_comments_empty_nodes_and_no_final_newline(to_conllu):
    text = "\n\n  \n" + to_conllu("# a", "# b", "0.1 x _ _ _ _ _ _ _ _", "1 a _ _ _ _ 0 root _ _",
                                  "1.1 y _ _ _ _ _ _ _ _", "1.2 z _ _ _ _ _ _ _ _", "", "", "1 b _ _ _ _ 0 root _ _")
    cols = _same(text.rstrip("\n"), ConlluFormat())
    assert cols.form == ["a", "b"] and cols.bounds == [0, 1, 2] and cols.mwt == []
    assert _same("", ConlluFormat()).num_sentences == 0


def test_what_it_leaves_to_the_format_reader(to_conllu):
    ok = to_conllu("1 a _ _ _ _ 0 root _ _", "")
    assert parse_columns(ok.replace("\n", "\r\n")) is None  # the reader strips the \r; so does it decide
    assert parse_columns(b"1\ta\t\xff" + b"\t_" * 7) is None  # invalid UTF-8: the reader names the byte
    leading_zero = to_conllu("01 a _ _ _ _ 0 root _ _", "")
    assert parse_columns(leading_zero) is None
    assert len(ConlluFormat().parse(leading_zero)) == 1  # accepted there: the fallback reads it


def test_tree_check_catches_long_cycles_and_self_loops(to_conllu):
    n = 40
    chain = [f"{i} w{i} _ _ _ _ {i + 1 if i < n else 0} dep _ _" for i in range(1, n + 1)]
    assert _same(to_conllu(*chain, ""), ConlluFormat()).head[0] == 2  # a 40-word chain is a tree
    cycle = list(chain)
    cycle[n - 1] = f"{n} w{n} _ _ _ _ 1 dep _ _"  # word 40 -> word 1 closes a cycle of 40
    cycle.append(f"{n + 1} root _ _ _ _ 0 root _ _")
    text = to_conllu(*cycle, "")
    assert parse_columns(text) is None
    with pytest.raises(DataFormatError, match="cycle through words 1, 2, 3"):
        ConlluFormat().parse(text)
    self_loop = to_conllu("1 a _ _ _ _ 0 root _ _", "2 b _ _ _ _ 2 dep _ _", "")
    assert parse_columns(self_loop) is None
    assert parse_columns(self_loop, check_tree=False) is not None


# --------------------------------------------------------------------------- damaged files
BASE = "\n".join("\t".join(row.split()) if row and row[0] != "#" else row for row in [
    "# sent_id = s1",
    "1 Ella ella PRON _ _ 2 nsubj _ _",
    "2 vendió vender VERB _ _ 0 root _ _",
    "3-4 del _ _ _ _ _ _ _ _",
    "3 de de ADP _ _ 5 case _ _",
    "4 el el DET _ _ 5 det _ _",
    "5 pan pan NOUN _ _ 2 obj _ _",
    "5.1 vendió vender VERB _ _ _ _ 2:conj _",
    "6 . . PUNCT _ _ 2 punct _ _",
    "",
    "1 The the DET DT _ 2 det _ _",
    "2 dog dog NOUN NN _ 3 nsubj _ _",
    "3 barks bark VERB VBZ _ 0 root _ _",
    "",
])
SYMBOLS = ["\t", "\n", "#", " ", "0", "1", "2", "9", "-", ".", "_", "x", "", "\t\t", "1-2", "0.1", "\u00a0", "\r"]


@st.composite
def damaged(draw):
    lines = BASE.split("\n")
    for _ in range(draw(st.integers(1, 3))):
        action = draw(st.sampled_from(["char", "char", "char", "delete", "duplicate", "swap", "insert"]))
        i = draw(st.integers(0, len(lines) - 1))
        if action == "char":
            line = lines[i]
            at = draw(st.integers(0, len(line)))
            cut = draw(st.integers(0, 1))
            lines[i] = line[:at] + draw(st.sampled_from(SYMBOLS)) + line[at + cut:]
        elif action == "delete" and len(lines) > 1:
            del lines[i]
        elif action == "duplicate":
            lines.insert(i, lines[i])
        elif action == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        else:
            lines.insert(i, draw(st.sampled_from(["", "# note", "  ", "3-4\tx" + "\t_" * 8, "2.1\te" + "\t_" * 8])))
    return "\n".join(lines)


def test_the_base_text_reads_alike():
    assert _same(BASE, ConlluFormat()).mwt == [(2, 4, "del")]


@settings(max_examples=400, deadline=None)
@given(damaged(), st.sampled_from([(True, True), (True, False), (False, False), (False, True)]))
def test_damaged_files_read_as_the_format_reader_reads_them(text, options):
    multiword, check_tree = options
    fmt = (ConlluFormat if multiword else ConllxFormat)(check_tree=check_tree)
    try:
        reference = Columns.from_sentences(fmt.parse(text))
    except DataFormatError:
        reference = None
    fast = parse_columns(text, multiword=multiword, check_tree=check_tree)
    if reference is None:
        assert fast is None  # the reader's error is the one reported
    elif fast is not None:
        assert fast == reference


# --------------------------------------------------------------------------- a system file read like its gold file
def _like(gold_text: str, system_text: str, fmt=None):
    """The system's columns read ``like`` the gold's, checked equal to a plain read (None alike)."""
    fmt = fmt or ConlluFormat()
    options = {"multiword": fmt.multiword, "check_tree": fmt.check_tree}
    gold = parse_columns(gold_text, **options)
    assert gold is not None
    shared = parse_columns(system_text, like=gold, **options)
    plain = parse_columns(system_text, **options)
    assert (shared is None) == (plain is None)
    if plain is not None:
        assert shared == plain
        # the scores of the shared read (counted at the differing words only) equal the plain read's
        from assay_parsing import conll18

        assert conll18.evaluate_columns(gold, shared) == conll18.evaluate_columns(gold, plain)
    return shared


def test_a_system_file_shares_the_gold_files_lines(gold_text, system_text):
    shared = _like(gold_text, system_text)
    assert shared._lines is None  # read by the shared path (it keeps no lines of its own)
    gold = parse_columns(gold_text)
    again = parse_columns(system_text, like=gold)
    assert again.upos[1] is gold.upos[1]  # 'vendió VERB': the same line in both files, its fields shared
    assert again.deprel[0] == "nsubj:pass" and gold.deprel[0] == "nsubj"  # a line that differs: its own fields


@pytest.mark.parametrize("seed", [0, 1])
def test_generated_system_files_read_like_their_gold(seed, make_treebank):
    _like(*make_treebank(seed, 120))


@pytest.mark.parametrize("gold, system", [("en_ewt-gold", "en_ewt-sys-mid"), ("fr_gsd-gold", "fr_gsd-sys-mid"),
                                          ("fr_gsd-gold", "fr_gsd-sys-retok"), ("cs_pud-gold", "cs_pud-udpipe")])
def test_real_system_files_read_like_their_gold(gold, system):
    def text(name):
        return gzip.decompress((UD / f"{name}.conllu.gz").read_bytes()).decode("utf-8")

    _like(text(gold), text(system))


@settings(max_examples=400, deadline=None)
@given(damaged(), st.sampled_from([(True, True), (True, False), (False, False)]))
def test_damaged_system_files_read_like_the_gold_file(text, options):
    # the gold file is BASE, the system file BASE damaged: the shared read equals the plain read (or both None)
    multiword, check_tree = options
    fmt = (ConlluFormat if multiword else ConllxFormat)(check_tree=check_tree)
    base = BASE if multiword else "\n".join(line for line in BASE.split("\n") if "-" not in line.split("\t")[0]
                                            and "." not in line.split("\t")[0])
    if parse_columns(base, multiword=multiword, check_tree=check_tree) is None:
        return
    _like(base, text, fmt)


def test_a_file_read_with_other_options_shares_no_line(to_conllu):
    # the gold file read without the tree check: a system file with the same (cyclic) sentence is read
    # with the check in full, not through the lines it shares
    text = to_conllu("1 a _ _ _ _ 0 root _ _", "2 b _ _ _ _ 3 dep _ _", "3 c _ _ _ _ 2 dep _ _", "",
                     "1 d _ _ _ _ 0 root _ _", "")
    loose = parse_columns(text, check_tree=False)
    assert loose is not None
    system = text.replace("1\td\t_", "1\tD\t_")
    assert parse_columns(system, like=loose, check_tree=False) is not None
    assert parse_columns(system, like=loose) is None  # the cycle in the first sentence is found
    with_ranges = to_conllu("1-2 ab _ _ _ _ _ _ _ _", "1 a _ _ _ _ 0 root _ _", "2 b _ _ _ _ 1 dep _ _", "")
    gold = parse_columns(with_ranges)
    assert gold is not None
    assert parse_columns(with_ranges.replace("\tdep", "\tobj"), like=gold, multiword=False) is None
