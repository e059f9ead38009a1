"""The column-wise tallies of ``parse-eval`` (``assay_parsing.column_tallies``) equal the sentence objects'.

The object path is the reference: each built-in evaluator called on every ``SentencePair`` of
the shard, as any sentence evaluator is. Real data: every gold / system pair of
``/work/shared/data/ud`` with the same words (English EWT, French GSD, the matched Czech PUD),
one shard and several, in this process and in worker processes; and the cases the column path
must leave to the objects (another evaluator, a subclass, different words, a broken file).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from assay import EvaluationError, load_executor
from assay_parsing import CLAS, LAS, UAS, TaggingAccuracy, TokenizationError, column_tallies
from assay_parsing.column_tallies import shard_count, shard_tallies
from assay_parsing.formats import ConllxFormat
from assay_parsing.parse_eval import METRICS, evaluate_pairs, evaluate_stream, open_pairs, tally_shard
from assay_parsing.stream import open_pairs as stream_open_pairs

UD = Path("/work/shared/data/ud")
PAIRS = [("en_ewt-gold", "en_ewt-sys-mid"), ("fr_gsd-gold", "fr_gsd-sys-low"), ("fr_gsd-gold", "fr_gsd-sys-high"),
         ("cs_pud-gold-matched", "cs_pud-udpipe-matched")]
EVALUATORS = (("uas", UAS()), ("las", LAS()), ("clas", CLAS()), ("tagging_accuracy", TaggingAccuracy()),
              ("las-subtypes", LAS(subtypes=True)), ("clas-subtypes", CLAS(subtypes=True)),
              ("xpos", TaggingAccuracy(tag="xpos")))


def _unzip(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.conllu"
    path.write_bytes(gzip.decompress((UD / f"{name}.conllu.gz").read_bytes()))
    return path


def _by_objects(shard, evaluators) -> list[tuple[int, int]]:
    """Each evaluator called on every SentencePair of the shard, summed (the reference)."""
    sums = [[0, 0] for _ in evaluators]
    for pair in shard.items():
        for k, (_, evaluator) in enumerate(evaluators):
            c, g = evaluator(pair, None)
            sums[k][0] += c
            sums[k][1] += g
    return [tuple(s) for s in sums]


@pytest.fixture(scope="module")
def ud_pairs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ud")
    return [(_unzip(tmp, g), _unzip(tmp, s)) for g, s in PAIRS]


@pytest.mark.parametrize("k", range(len(PAIRS)), ids=[s for _, s in PAIRS])
def test_columns_equal_objects_on_real_pairs_one_shard_and_many(ud_pairs, k):
    gold, system = ud_pairs[k]
    pool = stream_open_pairs(gold, system)
    for n in (1, 3, 17):
        shards = pool.shards(n)
        totals = [[0, 0] for _ in EVALUATORS]
        for shard in shards:
            fast = shard_tallies(shard, EVALUATORS)
            assert fast is not None, f"the column path refused shard {shard!r} of a valid pair"
            assert fast == _by_objects(shard, EVALUATORS)
            assert all(type(c) is int and type(g) is int for c, g in fast)
            for t, (c, g) in zip(totals, fast):
                t[0] += c
                t[1] += g
            # a shard carrying its bytes (as on a Spark cluster) is counted the same
            assert shard_tallies(shard.with_bytes(), EVALUATORS) == fast
        if n == 1:
            first = totals
        assert totals == first  # tallies add up across shards
    assert first[0][0] < first[0][1]  # the system has errors: the counts are not trivially equal


@pytest.mark.parametrize("k", [0, 3], ids=["en_ewt", "cs_pud"])
def test_parse_eval_equals_the_evaluator_base_sequential_and_parallel(ud_pairs, k, capsys):
    gold, system = ud_pairs[k]
    reference = evaluate_pairs(list(zip(*_pairs_of(gold, system))))  # EvaluatorBase.sequentialEvaluate, objects
    expected = {label: (r.correct_num, r.gold_set_size, r.sentence_num) for label, r in reference.items()}

    def seen(results):
        return {label: (r.correct_num, r.gold_set_size, r.sentence_num) for label, r in results.items()}

    assert seen(evaluate_stream(open_pairs(gold, system))) == expected
    assert seen(evaluate_stream(open_pairs(gold, system), num_shards=5)) == expected
    with load_executor("processes", workers=2) as executor:
        assert seen(evaluate_stream(open_pairs(gold, system), executor=executor)) == expected
        assert seen(evaluate_stream(open_pairs(gold, system), executor=executor, num_shards=3)) == expected
    capsys.readouterr()


def _pairs_of(gold: Path, system: Path):
    from assay_parsing import read_pairs

    pairs = read_pairs(gold, system)
    return [p.gold for p in pairs], [p.system for p in pairs]


def test_the_column_path_is_the_one_taken(ud_pairs, monkeypatch):
    """tally_shard counts a built-in run by columns: no SentencePair is built."""
    gold, system = ud_pairs[0]
    (shard,) = stream_open_pairs(gold, system).shards(1)
    evaluators = tuple(EVALUATORS[:4])
    expected = _by_objects(shard, evaluators)

    def no_objects(self):
        raise AssertionError("the object path was taken")

    monkeypatch.setattr(type(shard), "items", no_objects)
    results = tally_shard(shard, evaluators)
    assert [(r.correct_num, r.gold_set_size) for r in results] == expected
    assert all(r.sentence_num == len(shard) for r in results)


def test_other_evaluators_receive_the_sentence_objects(ud_pairs):
    gold, system = ud_pairs[1]
    (shard,) = stream_open_pairs(gold, system).shards(1)
    seen = []

    def mine(sent, w_vector):
        seen.append(type(sent).__name__)
        return 0, 1

    class MyUAS(UAS):
        pass

    for evaluators in ((("uas", UAS()), ("mine", mine)), (("uas", MyUAS()),)):
        assert shard_tallies(shard, evaluators) is None
        results = tally_shard(shard, evaluators)
        assert results[0].correct_num == _by_objects(shard, (("uas", UAS()),))[0][0]
    assert seen == ["SentencePair"] * len(shard)


def test_other_formats_and_pools_go_the_object_way(ud_pairs):
    gold, system = ud_pairs[0]

    class MyFormat(ConllxFormat):
        pass

    (shard,) = stream_open_pairs(gold, system, format=MyFormat()).shards(1)
    assert shard_tallies(shard, EVALUATORS) is None
    from assay import DataPool

    (plain,) = DataPool(list(stream_open_pairs(gold, system))[:5]).shards(1)
    assert shard_tallies(plain, EVALUATORS) is None
    assert shard_count(DataPool([1, 2, 3])) == 1


def test_different_words_and_broken_lines_raise_as_before(tmp_path, gold_text, system_text):
    gold, system = tmp_path / "g.conllu", tmp_path / "s.conllu"
    gold.write_text(gold_text, encoding="utf-8")
    system.write_text(system_text.replace("\tpan\tpan\t", "\tpain\tpan\t"), encoding="utf-8")
    (shard,) = stream_open_pairs(gold, system).shards(1)
    assert shard_tallies(shard, EVALUATORS) is None
    with pytest.raises(EvaluationError) as info:
        tally_shard(shard, EVALUATORS[:1])
    assert isinstance(info.value.__cause__, TokenizationError) and "'pain'" in str(info.value)
    system.write_text(system_text.replace("\t2\tnsubj:pass\t", "\tx\tnsubj:pass\t"), encoding="utf-8")
    (shard,) = stream_open_pairs(gold, system).shards(1)
    assert shard_tallies(shard, EVALUATORS) is None
    with pytest.raises(Exception, match="HEAD must be a non-negative integer") as info:
        tally_shard(shard, EVALUATORS[:1])
    assert "s.conllu" in str(info.value)


def test_large_shards_are_streamed_and_the_count_keeps_them_small(ud_pairs, monkeypatch):
    gold, system = ud_pairs[0]
    pool = stream_open_pairs(gold, system)
    size = gold.stat().st_size + system.stat().st_size
    monkeypatch.setattr(column_tallies, "MAX_SHARD_BYTES", size // 3)
    (whole,) = pool.shards(1)
    assert shard_tallies(whole, EVALUATORS) is None  # over the limit: pair by pair
    n = shard_count(pool)
    assert n == -(-2 * size // (size // 3))
    assert all(shard_tallies(s, EVALUATORS) is not None for s in pool.shards(n))
    assert [(r.correct_num, r.gold_set_size) for r in tally_shard(whole, EVALUATORS)] \
        == _by_objects(whole, EVALUATORS)


def test_metrics_are_the_built_in_evaluators():
    """parse-eval's four evaluators are the classes the column path counts (else it would never be taken)."""
    from assay.plugins import load_sentence_evaluator

    assert [type(load_sentence_evaluator(name)) for name, _ in METRICS] == [UAS, LAS, CLAS, TaggingAccuracy]
