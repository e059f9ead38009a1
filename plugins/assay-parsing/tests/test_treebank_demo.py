"""The demo's treebank section: deterministic files, and printed numbers equal to an independent recount.

The recount reads the two CoNLL-U files written by the demo with a few lines of code here
(not the plugin's reader) and applies the CoNLL 2018 definitions directly: syntactic words
are lines whose ID is an integer; relations compare on the part before ':'; CLAS counts
gold and system content words (relations in the shared task's CONTENT_DEPRELS list).
"""

from __future__ import annotations

import pytest

import assay_parsing  # noqa: F401 - the treebank demo needs the plugin (installed by make test)
from assay_parsing import demo_treebank as treebank

CONTENT = {"nsubj", "obj", "iobj", "csubj", "ccomp", "xcomp", "obl", "vocative", "expl", "dislocated", "advcl",
           "advmod", "discourse", "nmod", "appos", "nummod", "acl", "amod", "conj", "fixed", "flat", "compound",
           "list", "parataxis", "orphan", "goeswith", "reparandum", "root", "dep"}


def words(path):
    """(upos, head, deprel) of every syntactic word, in file order."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            out.append((cols[3], cols[6], cols[7]))
    return out


def recount(gold_path, system_path):
    gold, system = words(gold_path), words(system_path)
    assert len(gold) == len(system)
    uas = sum(g[1] == s[1] for g, s in zip(gold, system))
    las = sum(g[1] == s[1] and g[2].split(":")[0] == s[2].split(":")[0] for g, s in zip(gold, system))
    gold_content = sum(g[2].split(":")[0] in CONTENT for g in gold)
    system_content = sum(s[2].split(":")[0] in CONTENT for s in system)
    clas = sum(g[1] == s[1] and g[2].split(":")[0] == s[2].split(":")[0] and g[2].split(":")[0] in CONTENT
               for g, s in zip(gold, system))
    upos = sum(g[0] == s[0] for g, s in zip(gold, system))
    n = len(gold)
    return {"UAS": (uas, n), "LAS": (las, n), "CLAS (F1)": (2 * clas, gold_content + system_content),
            "UPOS accuracy": (upos, n)}


def printed_table(out):
    table = {}
    for line in out.splitlines():
        for label in ("UAS", "LAS", "CLAS (F1)", "UPOS accuracy"):
            if line.startswith(label + "  "):
                value, correct, total = line[len(label):].split()
                table[label] = (float(value.rstrip("%")), int(correct), int(total))
    return table


def test_demo_numbers_equal_an_independent_recount(tmp_path, capsys):
    treebank.run(tmp_path / "a", sentences=120, workers=2, num_shards=3)
    out = capsys.readouterr().out
    assert "Sequential and parallel tallies are identical for every evaluator." in out
    expected = recount(tmp_path / "a" / "gold.conllu", tmp_path / "a" / "system.conllu")
    table = printed_table(out)
    assert {k: v[1:] for k, v in table.items()} == expected
    for label, (correct, total) in expected.items():
        assert 0 < correct < total  # the system makes errors of every kind
        assert table[label][0] == pytest.approx(100 * correct / total, abs=5e-5)
    assert out.count("(sequential):") == 4 and out.count("(parallel, ") == 4


def test_demo_data_is_deterministic_and_realistic(tmp_path):
    first = treebank.generate(tmp_path / "a", sentences=150, seed=7)
    second = treebank.generate(tmp_path / "b", sentences=150, seed=7)
    other = treebank.generate(tmp_path / "c", sentences=150, seed=8)
    gold = first[0].read_text(encoding="utf-8")
    assert gold == second[0].read_text(encoding="utf-8") != other[0].read_text(encoding="utf-8")
    assert first[1].read_text(encoding="utf-8") == second[1].read_text(encoding="utf-8")
    ids = [line.split("\t")[0] for line in gold.splitlines() if line and not line.startswith("#")]
    assert sum("-" in i for i in ids) == first[2]["multiword tokens"] > 0
    assert sum("." in i for i in ids) == first[2]["empty nodes"]
    assert sum(i.isdigit() for i in ids) == first[2]["words"]
    assert gold.count("# sent_id = ") == 150
    assert any(":" in line.split("\t")[7] for line in gold.splitlines() if line.count("\t") == 9)
    # attachment errors are more frequent on long dependencies
    g, s = words(first[0]), words(first[1])
    positions = []
    for line in gold.splitlines():
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            positions.append(int(cols[0]))
    short = [gw[1] != sw[1] for gw, sw, i in zip(g, s, positions) if gw[1] != "0" and abs(int(gw[1]) - i) == 1]
    long = [gw[1] != sw[1] for gw, sw, i in zip(g, s, positions) if gw[1] != "0" and abs(int(gw[1]) - i) >= 6]
    assert len(short) > 100 and len(long) > 100
    assert sum(long) / len(long) > 3 * sum(short) / len(short)
