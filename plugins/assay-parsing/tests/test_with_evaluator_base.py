"""The evaluators inside assay's EvaluatorBase: sequential, threads and processes, any shard count.

Reference values come from the official UD scorer (``udtools.udeval``) on the same files.
"""

from __future__ import annotations

import pytest
import udtools.udeval as udeval  # the official UD scorer, from the test extra

from assay import DataPool, EvaluatorBase
from assay_parsing import Sentence, read_pairs


@pytest.fixture
def files(tmp_path, make_treebank):
    gold_text, system_text = make_treebank(11, 120)
    gold, system = tmp_path / "gold.conllu", tmp_path / "system.conllu"
    gold.write_text(gold_text, encoding="utf-8")
    system.write_text(system_text, encoding="utf-8")
    official = udeval.evaluate(udeval.load_conllu_file(str(gold)), udeval.load_conllu_file(str(system)))
    expected = {
        "uas": (official["UAS"].correct, official["UAS"].gold_total),
        "las": (official["LAS"].correct, official["LAS"].gold_total),
        "clas": (2 * official["CLAS"].correct, official["CLAS"].gold_total + official["CLAS"].system_total),
        "tagging_accuracy": (official["UPOS"].correct, official["UPOS"].gold_total),
    }
    return gold, system, expected


@pytest.mark.parametrize("name", ["uas", "las", "clas", "tagging_accuracy"])
def test_sequential_and_sharded_runs_equal_the_official_script(files, name):
    gold, system, expected = files
    pool = DataPool(read_pairs(gold, system))
    ev = EvaluatorBase()
    r = ev.sequentialEvaluate(pool, None, sentence_evaluator=name)
    assert (r.correct_num, r.gold_set_size, r.sentence_num) == (*expected[name], 120)
    for executor, shards in (("threads", 7), ("processes", 3), ("serial", 120)):
        p = ev.parallelEvaluate(pool, None, sentence_evaluator=name, executor=executor, num_shards=shards,
                                workers=2)
        assert (p.correct_num, p.gold_set_size) == expected[name]
        assert len(p.shards) == shards
        assert sum(s.correct_num for s in p.shards) == expected[name][0]


class LookupParser:
    """A 'model' whose parse returns the system analysis of a gold sentence (found by sent_id)."""

    def __init__(self, system: list[Sentence]) -> None:
        self.by_id = {s.sent_id: s for s in system}

    def __len__(self) -> int:  # the feature count the EVALUATOR log reports
        return len(self.by_id)

    def parse(self, sentence: Sentence) -> list[tuple[int, str]]:
        return [(w.head, w.deprel) for w in self.by_id[sentence.sent_id].words]


def test_gold_pool_from_file_with_a_model(files):
    gold, system, expected = files
    pool = DataPool.from_file(gold)  # format guessed from the .conllu extension
    assert len(pool) == 120 and isinstance(pool[0], Sentence)
    model = LookupParser([pair.system for pair in read_pairs(gold, system)])
    ev = EvaluatorBase()
    r = ev.parallelEvaluate(pool, model, sentence_evaluator="las", executor="threads", num_shards=4, workers=2)
    assert (r.correct_num, r.gold_set_size, r.feature_count) == (*expected["las"], 120)
    r = ev.sequentialEvaluate(pool, model, sentence_evaluator="clas")
    assert (r.correct_num, r.gold_set_size) == expected["clas"]


def test_log_label_follows_the_registered_evaluator(caplog):
    import logging

    from assay import DataPool, EvaluatorBase
    from assay_parsing import ConlluFormat, Sentence, SentencePair

    def word(i, head, deprel, upos="NOUN"):
        return f"{i}\tw{i}\tw\t{upos}\t_\t_\t{head}\t{deprel}\t_\t_"

    gold = ConlluFormat().parse("\n".join([word(1, 2, "nsubj"), word(2, 0, "root", "VERB"), word(3, 2, "obj"), ""])
                                + "\n")[0]
    system = ConlluFormat().parse("\n".join([word(1, 2, "obj"), word(2, 0, "root", "VERB"), word(3, 1, "obj"), ""])
                                  + "\n")[0]
    assert isinstance(gold, Sentence)
    pool = DataPool([SentencePair(gold, system)])
    # by hand: heads right for words 1, 2 (UAS 2/3); with labels only word 2 (LAS 1/3);
    # CLAS (root is a content relation in CoNLL 2018): gold {1 nsubj, 2 root, 3 obj}, system {1 obj, 2 root,
    # 3 obj}; only word 2 has head and relation right -> (2 x 1, 3 + 3); UPOS 3/3
    caplog.set_level(logging.INFO, logger="EVALUATOR")
    lines = {}
    for name in ("uas", "las", "clas", "tagging_accuracy"):
        caplog.clear()
        EvaluatorBase().sequentialEvaluate(pool, None, name)
        lines[name] = [r.getMessage() for r in caplog.records if r.name == "EVALUATOR"]
    assert lines == {
        "uas": ["Unlabelled accuracy: 0.666666666667 (2, 3)", "Unlabelled attachment accuracy: 0.750000000000 (3, 4)"],
        "las": ["Labelled accuracy: 0.333333333333 (1, 3)", "Labelled attachment accuracy: 0.500000000000 (2, 4)"],
        "clas": ["CLAS F1: 0.333333333333 (2, 6)"],
        "tagging_accuracy": ["Tagging accuracy: 1.000000000000 (3, 3)"],
    }
