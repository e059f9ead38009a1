"""EvaluatorBase: tallies, counters, errors naming shard and item, executors, Spark hand-off."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from assay import (
    DataPool,
    EvaluationError,
    EvaluationResult,
    EvaluatorBase,
    Executor,
    InvalidParameterError,
    MissingDependencyError,
    UnknownNameError,
    WorkerDiedError,
    hookimpl,
)
from assay.core.result import UndefinedMetricWarning
from assay.plugins import PluginSystem, use_plugin_system

EXECUTORS = ["serial", "threads", "processes[workers=2]"]

# Sentences as in the example: predicted and gold heads.
SENTENCES = [
    {"pred": [2, 0, 2], "heads": [2, 0, 2]},        # 3 of 3
    {"pred": [0, 1], "heads": [2, 0]},              # 0 of 2
    {"pred": [3, 3, 0, 3], "heads": [3, 3, 0, 1]},  # 3 of 4
    {"pred": [], "heads": []},                      # 0 of 0
    {"pred": [0], "heads": [0]},                    # 1 of 1
]
# Hand count: correct 3+0+3+0+1 = 7, gold 3+2+4+0+1 = 10, 5 sentences.
CORRECT, GOLD, SENTS = 7, 10, 5


class HeadAccuracy(EvaluatorBase):
    def sentence_evaluator(self, sent, w_vector):
        return sum(p == g for p, g in zip(sent["pred"], sent["heads"])), len(sent["heads"])


class Model(dict):
    """A model with a length (the feature count)."""


MODEL = Model(a=1, b=2, c=3)


# ------------------------------------------------------------------ tallies
@pytest.mark.parametrize("num_shards", [1, 2, 3, 5, 8])
def test_sequential_by_hand(num_shards):
    ev = HeadAccuracy()
    r = ev.sequentialEvaluate(DataPool(SENTENCES, num_shards=num_shards), MODEL)
    assert (r.correct_num, r.gold_set_size, r.sentence_num, r.feature_count) == (CORRECT, GOLD, SENTS, 3)
    assert (ev.correct_num, ev.gold_set_size) == (CORRECT, GOLD)
    assert r.accuracy == 0.7 and r.attachment_accuracy == (7 + 5) / (10 + 5)
    assert len(r.shards) == num_shards


@pytest.mark.parametrize("executor", EXECUTORS)
def test_parallel_by_hand_with_per_shard_results(executor):
    ev = HeadAccuracy()
    r = ev.parallelEvaluate(DataPool(SENTENCES, num_shards=3), MODEL, executor=executor)
    assert (r.correct_num, r.gold_set_size, r.sentence_num) == (CORRECT, GOLD, SENTS)
    # shards [0, 1], [2, 3], [4]
    assert [(s.correct_num, s.gold_set_size, s.sentence_num) for s in r.shards] == [(3, 5, 2), (3, 4, 2), (1, 1, 1)]
    assert isinstance(r, EvaluationResult)
    assert (ev.correct_num, ev.gold_set_size) == (r.correct_num, r.gold_set_size)


def test_snake_case_spellings_and_default_processes():
    ev = HeadAccuracy()
    a = ev.sequential_evaluate(DataPool(SENTENCES), MODEL)
    b = ev.parallel_evaluate(DataPool(SENTENCES), MODEL, num_shards=4, workers=2)
    assert (a.correct_num, a.gold_set_size) == (b.correct_num, b.gold_set_size) == (CORRECT, GOLD)
    assert len(b.shards) == 4


def test_parallel_default_shards_a_few_per_worker():
    r = HeadAccuracy().parallelEvaluate(DataPool(SENTENCES), MODEL, workers=2)
    assert len(r.shards) == 8
    r = HeadAccuracy().parallelEvaluate(DataPool(SENTENCES, num_shards=3), MODEL, workers=2)
    assert len(r.shards) == 3


def test_plain_list_is_accepted_as_a_pool():
    r = HeadAccuracy().sequentialEvaluate(SENTENCES, MODEL)
    assert r.correct_num == CORRECT


def test_sentence_evaluator_as_a_callable_overrides_the_method():
    r = HeadAccuracy().sequentialEvaluate(DataPool(SENTENCES), None, lambda s, w: (0, len(s["heads"])))
    assert (r.correct_num, r.gold_set_size, r.feature_count) == (0, GOLD, None)


def count_pairs(sent, w_vector):
    return sent[0], sent[1]


class PairsPlugin:
    @staticmethod
    @hookimpl
    def assay_register_sentence_evaluators(register):
        register("pairs", lambda: count_pairs, description="items are (correct, gold)")


def test_sentence_evaluator_by_registered_name():
    ps = PluginSystem(entry_points=False)
    ps.register_plugin(PairsPlugin, name="pairs-plugin")
    with use_plugin_system(ps):
        r = EvaluatorBase().parallelEvaluate(DataPool([(1, 2), (2, 2)]), None, "pairs", executor="threads")
        assert (r.correct_num, r.gold_set_size) == (3, 4)
        with pytest.raises(UnknownNameError, match="pairs"):
            EvaluatorBase().sequentialEvaluate(DataPool([(1, 2)]), None, "pair")


def test_no_sentence_evaluator_at_all_is_a_clear_error():
    with pytest.raises(InvalidParameterError, match="'sentence_evaluator' parameter"):
        EvaluatorBase().sequentialEvaluate(DataPool([1]), None)


def test_sentence_evaluator_of_the_wrong_type():
    with pytest.raises(InvalidParameterError, match="'sentence_evaluator' parameter.*int"):
        HeadAccuracy().sequentialEvaluate(DataPool([1]), None, 42)


def test_bad_data_pool_names_the_parameter():
    with pytest.raises(InvalidParameterError, match="'data_pool' parameter"):
        HeadAccuracy().sequentialEvaluate(iter([1, 2]), None)


def test_bad_num_shards_names_the_parameter():
    with pytest.raises(InvalidParameterError, match="'num_shards' parameter"):
        HeadAccuracy().parallelEvaluate(DataPool(SENTENCES), None, num_shards=0)


# ------------------------------------------------------------------ empty pools and shards
@pytest.mark.parametrize("executor", EXECUTORS)
def test_empty_pool_gives_nan_and_a_warning(executor):
    ev = HeadAccuracy()
    ev.correct_num, ev.gold_set_size = 5, 9
    with pytest.warns(UndefinedMetricWarning, match="data pool is empty"):
        r = ev.parallelEvaluate(DataPool([], num_shards=3), MODEL, executor=executor)
    assert (r.correct_num, r.gold_set_size, r.sentence_num) == (0, 0, 0)
    assert (ev.correct_num, ev.gold_set_size) == (0, 0)
    with pytest.warns(UndefinedMetricWarning):
        assert math.isnan(r.accuracy)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_more_shards_than_sentences(executor):
    r = HeadAccuracy().parallelEvaluate(DataPool(SENTENCES), MODEL, executor=executor, num_shards=12)
    assert (r.correct_num, r.gold_set_size, r.sentence_num) == (CORRECT, GOLD, SENTS)
    assert len(r.shards) == 12 and [s.sentence_num for s in r.shards[5:]] == [0] * 7


# ------------------------------------------------------------------ failures
class Fragile(HeadAccuracy):
    """Raises on the sentence whose first gold head is 3 (pool index 2)."""

    def sentence_evaluator(self, sent, w_vector):
        if sent["heads"][:1] == [3]:
            raise ZeroDivisionError("division by zero in the parser")
        return super().sentence_evaluator(sent, w_vector)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_raising_sentence_evaluator_names_shard_and_item_and_keeps_counters(executor):
    ev = Fragile()
    ev.correct_num, ev.gold_set_size = 11, 13  # from an earlier run
    with pytest.raises(EvaluationError) as info:
        ev.parallelEvaluate(DataPool(SENTENCES, num_shards=3), MODEL, executor=executor)
    err = info.value
    assert (err.shard, err.item) == (1, 2)
    assert "item 2" in str(err) and "shard 1" in str(err) and "ZeroDivisionError" in str(err)
    assert isinstance(err.__cause__, ZeroDivisionError)
    assert (ev.correct_num, ev.gold_set_size) == (11, 13)


def test_sequential_failure_keeps_counters_too():
    ev = Fragile()
    ev.correct_num, ev.gold_set_size = 1, 2
    with pytest.raises(EvaluationError, match="item 2"):
        ev.sequentialEvaluate(DataPool(SENTENCES), MODEL)
    assert (ev.correct_num, ev.gold_set_size) == (1, 2)


@pytest.mark.parametrize("value, why", [
    ((1,), "not a pair"),
    ((1, 2, 3), "not a pair"),
    ("ab", "not a pair"),
    (None, "not a pair"),
    (7, "not a pair"),
    ((True, 1), "bool True is not an int"),
    ((1, False), "bool False is not an int"),
    ((1.0, 2), "float 1.0 is not an int"),
    ((np.float64(1), 2), "is not an int"),
    ((-1, 2), "negative"),
    ((1, -2), "negative"),
    ((3, 2), "correct_num > gold_set_size"),
])
def test_invalid_return_values_name_the_item_and_the_value(value, why):
    def bad_on_third(sent, w_vector):
        return value if sent == "bad" else (1, 1)

    ev = EvaluatorBase()
    with pytest.raises(EvaluationError) as info:
        ev.sequentialEvaluate(DataPool(["ok", "ok", "bad", "ok"], num_shards=2), None, bad_on_third)
    message = str(info.value)
    assert (info.value.shard, info.value.item) == (1, 2)
    assert repr(value) in message and "item 2" in message and why in message
    assert (ev.correct_num, ev.gold_set_size) == (0, 0)


@pytest.mark.parametrize("value", [
    (np.int64(2), np.int32(3)), [2, 3], (np.uint8(2), 3), np.array([2, 3]),
])
def test_numpy_ints_and_other_pairs_are_accepted(value):
    r = EvaluatorBase().sequentialEvaluate(DataPool([0, 1]), None, lambda s, w: value)
    assert (r.correct_num, r.gold_set_size) == (4, 6)
    assert type(r.correct_num) is int


def test_invalid_value_in_a_worker_process():
    with pytest.raises(EvaluationError, match=r"returned \(5, 1\) for item 3") as info:
        EvaluatorBase().parallelEvaluate(DataPool([0, 1, 2, 3]), None,
                                         lambda s, w: (5, 1) if s == 3 else (0, 0),
                                         workers=2, num_shards=2)
    assert (info.value.shard, info.value.item) == (1, 3)


class Killer(HeadAccuracy):
    def sentence_evaluator(self, sent, w_vector):
        if sent["heads"] == [0]:
            os.kill(os.getpid(), 9)
        return super().sentence_evaluator(sent, w_vector)


def test_worker_killed_in_a_sentence_evaluator_is_never_a_smaller_total():
    ev = Killer()
    with pytest.raises(WorkerDiedError, match="SIGKILL while running shard 2") as info:
        ev.parallelEvaluate(DataPool(SENTENCES, num_shards=3), MODEL, workers=2)
    assert info.value.shard == 2
    assert (ev.correct_num, ev.gold_set_size) == (0, 0)


def test_errors_from_files_name_the_file(tmp_path):
    (tmp_path / "a.jsonl").write_text('[1, 1]\n[1, 2]\n')
    (tmp_path / "b.jsonl").write_text('[0, 1]\n[9, 1]\n')
    pool = DataPool.from_paths(str(tmp_path / "*.jsonl"), num_shards=2)
    with pytest.raises(EvaluationError, match=r"item 1 of file '.*b\.jsonl'") as info:
        EvaluatorBase().parallelEvaluate(pool, None, count_pairs, workers=2)
    assert info.value.shard == 1


def test_path_pool_evaluates_in_workers(tmp_path):
    for i in range(4):
        (tmp_path / f"{i}.jsonl").write_text(f"[{i}, 3]\n[1, 1]\n")
    pool = DataPool.from_paths(str(tmp_path / "*.jsonl"))
    seq = EvaluatorBase().sequentialEvaluate(pool, None, count_pairs)
    par = EvaluatorBase().parallelEvaluate(pool, None, count_pairs, num_shards=3, workers=2)
    assert (seq.correct_num, seq.gold_set_size, seq.sentence_num) == (0 + 1 + 2 + 3 + 4, 16, 8)
    assert (par.correct_num, par.gold_set_size, par.sentence_num) == (10, 16, 8)


# ------------------------------------------------------------------ executors and Spark
class RecordingExecutor(Executor):
    name = "recording"

    def __init__(self, **options):
        super().__init__(workers=options.pop("workers", None))
        self.options = options
        self.closed = False

    def run(self, fn, tasks, shared, *, progress=None, desc=None):
        self.tasks = list(tasks)
        return [fn(t, shared) for t in self.tasks]

    def close(self):
        self.closed = True


def test_executor_instance_is_used_and_not_closed():
    ex = RecordingExecutor(workers=3)
    r = HeadAccuracy().parallelEvaluate(DataPool(SENTENCES), MODEL, executor=ex)
    assert r.correct_num == CORRECT and len(ex.tasks) == 3 * 4 and not ex.closed  # 4 shards per worker
    with pytest.raises(InvalidParameterError, match="'workers' parameter"):
        HeadAccuracy().parallelEvaluate(DataPool(SENTENCES), MODEL, executor=ex, workers=2)


def test_bad_executor_names_the_parameter():
    with pytest.raises(InvalidParameterError, match="'executor' parameter"):
        HeadAccuracy().parallelEvaluate(DataPool(SENTENCES), MODEL, executor=3)
    with pytest.raises(UnknownNameError, match="processes"):
        HeadAccuracy().parallelEvaluate(DataPool(SENTENCES), MODEL, executor="proceses")


def test_executor_that_loses_shards_is_an_error():
    class Lossy(RecordingExecutor):
        def run(self, fn, tasks, shared, *, progress=None, desc=None):
            return [fn(t, shared) for t in list(tasks)[:-1]]

    with pytest.raises(EvaluationError, match="returned 1 shard results for 2 shards"):
        HeadAccuracy().parallelEvaluate(DataPool(SENTENCES, num_shards=2), MODEL, executor=Lossy())


def no_spark_system() -> PluginSystem:
    return PluginSystem(entry_points=False, builtins=("assay.executors.builtin", "assay.core.formats"))


def test_spark_context_without_the_spark_executor_says_what_to_install():
    with use_plugin_system(no_spark_system()), \
            pytest.raises(MissingDependencyError, match=r"pyspark.*'spark' executor.*assay\[spark\]"):
        HeadAccuracy().parallelEvaluate(DataPool(SENTENCES), MODEL, None, object())


class FakeSparkPlugin:
    made: list[RecordingExecutor] = []

    @staticmethod
    @hookimpl
    def assay_register_executors(register):
        def factory(context=None, hadoop=None, workers=None):
            ex = RecordingExecutor(context=context, hadoop=hadoop, workers=workers)
            FakeSparkPlugin.made.append(ex)
            return ex
        register("spark", factory)


def test_spark_context_goes_to_the_spark_executor_with_hadoop():
    ps = no_spark_system()
    ps.register_plugin(FakeSparkPlugin, name="fake-spark")
    context = object()
    with use_plugin_system(ps):
        r = HeadAccuracy().parallelEvaluate(DataPool(SENTENCES, num_shards=2), MODEL, None, context, True)
    ex = FakeSparkPlugin.made[-1]
    assert ex.options == {"context": context, "hadoop": True} and ex.closed
    assert r.correct_num == CORRECT and len(ex.tasks) == 2
    with use_plugin_system(ps), pytest.raises(InvalidParameterError, match="either the 'sparkContext'"):
        HeadAccuracy().parallelEvaluate(DataPool(SENTENCES), MODEL, None, context, executor="serial")


def test_hadoop_without_spark_context_is_an_error():
    with pytest.raises(InvalidParameterError, match="'hadoop' parameter needs a 'sparkContext'"):
        HeadAccuracy().parallelEvaluate(DataPool(SENTENCES), MODEL, hadoop=True)


def test_sequential_ignores_spark_arguments():
    r = HeadAccuracy().sequentialEvaluate(DataPool(SENTENCES), MODEL, None, object(), True)
    assert r.correct_num == CORRECT
