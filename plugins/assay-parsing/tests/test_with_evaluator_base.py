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
