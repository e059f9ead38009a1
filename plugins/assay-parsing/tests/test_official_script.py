"""Equality with the official Universal Dependencies evaluation script.

``udtools`` (PyPI, the packaged UniversalDependencies/tools) ships ``udtools/udeval.py``:
the CoNLL 2018 shared task's ``conll18_ud_eval.py`` by Straka and Popel, extended for the
IWPT 2020 enhanced-dependency metrics, with the same word alignment and the same UAS, LAS,
CLAS and UPOS definitions. It is a test dependency (the plugin's ``test`` extra); nothing is
fetched at run time and its code is not in this repository.

The files compared are generated with random.Random (``make_treebank`` in conftest.py):
random trees of 1 to 25 words, multiword tokens, empty nodes, relation subtypes, unknown
labels, and a system output with re-attachments (kept trees, since the official script
rejects cycles), relabellings (including subtype-only changes) and tag errors.
"""

from __future__ import annotations

import pytest
import udtools.udeval as udeval  # the official UD scorer, from the test extra

from assay_parsing import CLAS, LAS, UAS, TaggingAccuracy, TokenizationError, read_pairs


def _ours(pairs, evaluator):
    correct = total = 0
    for pair in pairs:
        c, t = evaluator(pair, None)
        correct += c
        total += t
    return correct, total


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_uas_las_clas_upos_equal_the_official_script(tmp_path, seed, make_treebank):
    gold_text, system_text = make_treebank(seed, 250)
    (tmp_path / "gold.conllu").write_text(gold_text, encoding="utf-8")
    (tmp_path / "system.conllu").write_text(system_text, encoding="utf-8")
    ids = [line.split("\t")[0] for line in gold_text.splitlines() if line and line[0] != "#"]
    assert any("-" in i for i in ids) and any("." in i for i in ids)  # ranges and empty nodes are present

    official = udeval.evaluate(udeval.load_conllu_file(str(tmp_path / "gold.conllu")),
                               udeval.load_conllu_file(str(tmp_path / "system.conllu")))
    pairs = read_pairs(tmp_path / "gold.conllu", tmp_path / "system.conllu")

    for name, evaluator in (("UAS", UAS()), ("LAS", LAS()), ("UPOS", TaggingAccuracy())):
        score = official[name]
        assert score.gold_total == score.system_total  # same tokenization: every word aligned
        correct, total = _ours(pairs, evaluator)
        assert (correct, total) == (score.correct, score.gold_total), name
        assert correct / total == score.f1 == score.precision == score.recall

    clas = official["CLAS"]
    assert 0 < clas.correct < min(clas.gold_total, clas.system_total)  # errors in both precision and recall
    twice_correct, content_total = _ours(pairs, CLAS())
    assert (twice_correct, content_total) == (2 * clas.correct, clas.gold_total + clas.system_total)
    assert twice_correct / content_total == clas.f1


def test_both_reject_a_different_tokenization(tmp_path, make_treebank):
    gold_text, system_text = make_treebank(5, 20)
    first_form = system_text.splitlines()[1].split("\t")[1]
    changed = system_text.replace(f"\t{first_form}\t", f"\t{first_form}x\t", 1)
    (tmp_path / "g.conllu").write_text(gold_text, encoding="utf-8")
    (tmp_path / "s.conllu").write_text(changed, encoding="utf-8")
    with pytest.raises(udeval.UDError):
        udeval.evaluate(udeval.load_conllu_file(str(tmp_path / "g.conllu")),
                        udeval.load_conllu_file(str(tmp_path / "s.conllu")))
    with pytest.raises(TokenizationError, match=rf"sentence '0' at .*g\.conllu:1 .* is '{first_form}' in gold and "
                                                rf"'{first_form}x' in system"):
        read_pairs(tmp_path / "g.conllu", tmp_path / "s.conllu")
