"""Equality with the official Universal Dependencies evaluation script.

``udtools`` (PyPI, the packaged UniversalDependencies/tools) ships ``udtools/udeval.py``:
the CoNLL 2018 shared task's ``conll18_ud_eval.py`` by Straka and Popel, extended for the
IWPT 2020 enhanced-dependency metrics, with the same word alignment and the same UAS, LAS,
CLAS and UPOS definitions. It is a test dependency (the plugin's ``test`` extra); nothing is
fetched at run time and its code is not in this repository.

The files compared are generated here with random.Random: random trees of 1 to 25 words,
multiword tokens, empty nodes, relation subtypes, unknown labels, and a system output with
re-attachments (kept trees, since the official script rejects cycles), relabellings
(including subtype-only changes) and tag errors.
"""

from __future__ import annotations

import random

import pytest

from assay_parsing import CLAS, LAS, UAS, TaggingAccuracy, TokenizationError, read_pairs

udeval = pytest.importorskip("udtools.udeval", reason="the test extra installs udtools (official UD scorer)")

RELS = ["nsubj", "nsubj:pass", "obj", "iobj", "obl", "obl:tmod", "nmod", "nmod:poss", "amod", "advmod", "det",
        "det:poss", "case", "cc", "cc:preconj", "aux", "aux:pass", "cop", "mark", "punct", "conj", "compound:prt",
        "acl:relcl", "flat:name", "xcomp", "ccomp", "advcl", "dep", "clf", "discourse", "vocative", "fixed",
        "orphan", "expl:pv", "nummod", "unknownrel"]
UPOS = ["NOUN", "VERB", "ADJ", "ADV", "ADP", "DET", "PRON", "AUX", "CCONJ", "PUNCT", "PROPN", "NUM"]
SYLLABLES = ["ka", "lo", "mi", "to", "ra", "ve", "su", "nd", "e", "a", "Ø", "ß"]


def _descendants_or_self(heads: dict[int, int], word: int, candidate: int) -> bool:
    node = candidate
    while node != 0:
        if node == word:
            return True
        node = heads[node]
    return False


def _write(rng: random.Random, n_sentences: int) -> tuple[str, str]:
    gold_out: list[str] = []
    system_out: list[str] = []
    for k in range(n_sentences):
        n = rng.randint(1, 25)
        order = list(range(1, n + 1))
        rng.shuffle(order)
        heads = {order[0]: 0}
        for i, w in enumerate(order[1:], start=1):
            heads[w] = rng.choice(order[:i])
        rels = {w: ("root" if heads[w] == 0 else rng.choice(RELS)) for w in order}
        upos = {w: rng.choice(UPOS) for w in order}
        forms = {w: "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 3))) for w in order}
        # system: re-attach some words (never creating a cycle or a second root), relabel, retag
        sys_heads = dict(heads)
        for w in range(1, n + 1):
            if sys_heads[w] != 0 and rng.random() < 0.25:
                options = [c for c in range(1, n + 1) if not _descendants_or_self(sys_heads, w, c)]
                sys_heads[w] = rng.choice(options)
        sys_rels = {w: (rng.choice(RELS + ["nsubj", "obl"]) if rels[w] != "root" and rng.random() < 0.2 else rels[w])
                    for w in rels}
        sys_upos = {w: (rng.choice(UPOS) if rng.random() < 0.1 else upos[w]) for w in upos}
        ranges = {}
        w = 1
        while w < n:
            if rng.random() < 0.12:
                ranges[w] = w + 1
                w += 2
            else:
                w += 1
        empty_after = {w for w in range(1, n + 1) if w not in ranges and w - 1 not in ranges and rng.random() < 0.05}
        for out, hd, rl, up in ((gold_out, heads, rels, upos), (system_out, sys_heads, sys_rels, sys_upos)):
            out.append(f"# sent_id = {k}")
            for w in range(1, n + 1):
                if w in ranges:
                    out.append(f"{w}-{ranges[w]}\t{forms[w]}{forms[w + 1]}\t_\t_\t_\t_\t_\t_\t_\t_")
                out.append(f"{w}\t{forms[w]}\t_\t{up[w]}\t_\t_\t{hd[w]}\t{rl[w]}\t_\t_")
                if w in empty_after:
                    out.append(f"{w}.1\t{forms[w]}\t_\t_\t_\t_\t_\t_\t{w}:orphan\t_")
            out.append("")
    return "\n".join(gold_out) + "\n", "\n".join(system_out) + "\n"


def _ours(pairs, evaluator):
    correct = total = 0
    for pair in pairs:
        c, t = evaluator(pair, None)
        correct += c
        total += t
    return correct, total


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_uas_las_clas_upos_equal_the_official_script(tmp_path, seed):
    gold_text, system_text = _write(random.Random(seed), 250)
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


def test_both_reject_a_different_tokenization(tmp_path):
    gold_text, system_text = _write(random.Random(5), 20)
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
