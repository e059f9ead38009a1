"""The ``spark`` executor on a real ``local[2,2]`` SparkContext (issue 5): two cores, one retry.

Expected values are derived in the tests themselves: totals by a plain loop over the
sentences, per-shard tallies by slicing the sentences into contiguous runs whose sizes
differ by at most one (the larger ones first), file groups likewise.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay import DataPool, EvaluationResult
from assay.core.formats import DataFormatError
from assay.errors import (
    EvaluationError,
    InvalidParameterError,
    MissingDependencyError,
    UndefinedMetricWarning,
    WorkerDiedError,
)
from assay.plugins import get_registry, load_executor

# every test here runs on the session's local Spark context (conftest.py)
pytestmark = pytest.mark.spark


def make_sentences(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    sents = []
    for i in range(n):
        length = rng.randint(1, 6)
        sents.append({"id": i, "heads": [rng.randrange(5) for _ in range(length)],
                      "pred": [rng.randrange(5) for _ in range(length)]})
    return sents


def tally(sents: list[dict]) -> tuple[int, int, int]:
    """(correct, gold, sentences), counted by hand."""
    correct = sum(sum(1 for p, g in zip(s["pred"], s["heads"]) if p == g) for s in sents)
    return correct, sum(len(s["heads"]) for s in sents), len(sents)


def contiguous(seq: list, parts: int) -> list[list]:
    """``parts`` contiguous runs of ``seq``; the first ``len % parts`` runs one longer."""
    size, extra = divmod(len(seq), parts)
    out, start = [], 0
    for i in range(parts):
        stop = start + size + (i < extra)
        out.append(seq[start:stop])
        start = stop
    return out


def shard_tallies(result: EvaluationResult) -> list[tuple[int, int, int]]:
    return [(s.correct_num, s.gold_set_size, s.sentence_num) for s in result.shards]


# --------------------------------------------------------------------------- registration
def test_spark_is_registered_and_importing_assay_does_not_import_pyspark():
    assert "spark" in get_registry("executor")
    code = ("import sys, assay; from assay.plugins import get_registry; "
            "assert 'spark' in get_registry('executor'); print('pyspark' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_missing_pyspark_gives_the_install_hint():
    code = ("import sys; sys.modules['pyspark'] = None\n"
            "from assay.plugins import load_executor\n"
            "try:\n    load_executor('spark', master='local[1]')\n"
            "except Exception as e:\n    print(type(e).__name__, '|', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.startswith("MissingDependencyError |")
    assert "pip install 'assay[spark]'" in out
    assert issubclass(MissingDependencyError, ImportError)


def test_bad_options_are_rejected_by_name(sc):
    with pytest.raises(InvalidParameterError, match="'hadoop'"):
        load_executor("spark", context=sc, hadoop="yes")
    with pytest.raises(InvalidParameterError, match="'context'"):
        load_executor("spark", context="local[2]")
    with pytest.raises(InvalidParameterError, match="'master'"):
        _ = load_executor("spark", master="local[3]").context  # a local[2,2] context is already running


# --------------------------------------------------------------------------- executor protocol
def test_run_returns_results_in_task_order_one_partition_per_task(sc, helpers):
    pool = DataPool(list(range(11)), num_shards=5)
    executor = load_executor("spark", context=sc)
    out = executor.run(helpers.times_shared, pool.shards(), 10)
    assert out == [[0, 10, 20], [30, 40], [50, 60], [70, 80], [90, 100]]
    assert executor.run(helpers.times_shared, [], 10) == []
    # partition i ran shard i, and nothing else
    assert executor.run(helpers.partition_and_size, pool.shards(), None) == [(0, 3), (1, 2), (2, 2), (3, 2), (4, 2)]
    executor.close()
    assert not sc._jsc.sc().isStopped()  # a context we were given is never stopped


def test_progress_bar_counts_every_shard(sc, helpers, monkeypatch):
    import assay.executors.base as base

    class Recorder:
        def __init__(self, total, **kwargs):
            self.total, self.done, self.closed = total, 0, False

        def update(self, n=1):
            self.done += n

        def close(self):
            self.closed = True

    bars = []
    monkeypatch.setattr(base, "progress_bar", lambda total, *, enabled, desc=None:
                        bars.append(Recorder(total)) or bars[-1] if enabled else base._NoBar())
    executor = load_executor("spark", context=sc, progress=True)
    out = executor.run(helpers.times_shared, DataPool(list(range(6)), num_shards=6).shards(), 2)
    assert out == [[0], [2], [4], [6], [8], [10]]
    assert [(b.total, b.done, b.closed) for b in bars] == [(6, 6, True)]
    bars.clear()
    executor.run(helpers.times_shared, DataPool([1], num_shards=6).shards(), 2, progress=False)
    assert bars == []


def test_reuses_the_running_context_for_the_same_master(sc, helpers):
    executor = load_executor("spark", master=sc.master)
    assert executor.context is sc
    assert executor.workers == sc.defaultParallelism == 2
    executor.close()
    assert not sc._jsc.sc().isStopped()


def test_workers_is_the_cores_unless_given_and_sets_the_default_shard_count(sc, helpers, tmp_path):
    from assay.core.evaluator import SHARDS_PER_WORKER  # the core's policy: this many shards per worker

    assert load_executor("spark", context=sc).workers == 2  # local[2,2]: two cores
    assert load_executor("spark", context=sc, workers=3).workers == 3
    sents = make_sentences(10, seed=8)
    model = helpers.CountingModel(str(tmp_path / "l"))
    for workers, cores in ((None, 2), (3, 3)):
        r = helpers.HeadAccuracy().parallelEvaluate(sents, model, sparkContext=sc, workers=workers)
        assert shard_tallies(r) == [tally(part) for part in contiguous(sents, SHARDS_PER_WORKER * cores)]


# --------------------------------------------------------------------------- equality with the other runners
@pytest.mark.parametrize(("n", "shards"), [(23, 4), (7, 3), (5, 9), (1, 2), (0, 3)])
def test_spark_equals_processes_and_sequential(sc, helpers, tmp_path, n, shards):
    sents = make_sentences(n, seed=n)
    model = helpers.CountingModel(str(tmp_path / "loads"))
    pool = DataPool(sents, num_shards=shards)
    ev = helpers.HeadAccuracy()
    with pytest.warns(UndefinedMetricWarning) if n == 0 else _nothing():
        seq = ev.sequentialEvaluate(pool, model)
        spark = ev.parallelEvaluate(pool, model, sparkContext=sc)
        procs = ev.parallelEvaluate(pool, model, executor="processes[workers=2]")
    assert spark == seq == procs  # totals, feature count and every shard
    assert (spark.correct_num, spark.gold_set_size, spark.sentence_num) == tally(sents)
    assert shard_tallies(spark) == [tally(part) for part in contiguous(sents, shards)]
    assert spark.feature_count == 42
    assert (ev.correct_num, ev.gold_set_size) == tally(sents)[:2]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(0, 30), shards=st.integers(1, 12), seed=st.integers(0, 10**6))
def test_any_shard_count_gives_the_hand_tallies(sc, helpers, tmp_path, n, shards, seed):
    sents = make_sentences(n, seed)
    model = helpers.CountingModel(str(tmp_path / "loads"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # an empty pool warns (NaN accuracy)
        r = helpers.HeadAccuracy().parallelEvaluate(DataPool(sents, num_shards=shards), model, sparkContext=sc)
    assert (r.correct_num, r.gold_set_size, r.sentence_num) == tally(sents)
    assert shard_tallies(r) == [tally(part) for part in contiguous(sents, shards)]


def test_metric_states_merge_in_shard_order_on_spark(sc, helpers, tmp_path):
    from scipy.stats import spearmanr

    sents = make_sentences(30, seed=11)
    model = helpers.CountingModel(str(tmp_path / "loads"))
    ev = helpers.HeadAccuracyWithMetrics()
    metrics = ["accuracy", "spearman"]
    seq = ev.sequentialEvaluate(DataPool(sents, num_shards=4), model, metrics=metrics)
    spark = ev.parallelEvaluate(DataPool(sents, num_shards=4), model, sparkContext=sc, metrics=metrics)
    procs = ev.parallelEvaluate(DataPool(sents, num_shards=4), model, executor="processes[workers=2]",
                                metrics=metrics)
    assert dict(spark.metrics) == dict(seq.metrics) == dict(procs.metrics)
    per_sentence = [tally([s]) for s in sents]
    # accuracy: sentences whose heads are all right; spearman: scipy on (right, gold) per sentence
    assert spark.metrics["accuracy"] == pytest.approx(sum(c == g for c, g, _ in per_sentence) / len(sents))
    rho = spearmanr([c for c, _, _ in per_sentence], [g for _, g, _ in per_sentence]).statistic
    assert spark.metrics["spearman"] == pytest.approx(rho)


def test_seed_positional_signature(sc, helpers, tmp_path):
    sents = make_sentences(12, seed=1)
    model = helpers.CountingModel(str(tmp_path / "loads"))
    ev = helpers.HeadAccuracy()
    r = ev.parallelEvaluate(DataPool(sents, num_shards=3), model, None, sc)  # sentence_evaluator=None, sparkContext
    assert (r.correct_num, r.gold_set_size, r.sentence_num) == tally(sents)
    # DESIGN's short form: the SparkContext third, as the seed toolkit called it
    r = ev.parallelEvaluate(DataPool(sents, num_shards=3), model, sc)
    assert (r.correct_num, r.gold_set_size, r.sentence_num) == tally(sents)
    assert (ev.correct_num, ev.gold_set_size) == tally(sents)[:2]
    with pytest.raises(InvalidParameterError, match="Two SparkContexts"):
        ev.parallelEvaluate(DataPool(sents), model, sc, sc)
    with pytest.raises(InvalidParameterError, match="'hadoop' was given twice"):
        ev.parallelEvaluate(DataPool(sents), model, sc, True, True)


# --------------------------------------------------------------------------- broadcast
def test_model_is_broadcast_once_and_unpickled_once_per_worker(sc, helpers, tmp_path, monkeypatch):
    log = tmp_path / "loads"
    model = helpers.CountingModel(str(log))
    calls = []
    real = sc.broadcast
    monkeypatch.setattr(sc, "broadcast", lambda value: calls.append(len(value)) or real(value))
    sents = make_sentences(40, seed=2)
    r = helpers.HeadAccuracy().parallelEvaluate(DataPool(sents, num_shards=10), model, sparkContext=sc)
    assert (r.correct_num, r.gold_set_size) == tally(sents)[:2]
    assert len(calls) == 1  # one broadcast variable for the run
    pids = helpers.unpicklings(log)
    assert len(pids) == len(set(pids))  # each Python worker unpickled the model once ...
    assert 1 <= len(pids) <= 2  # ... and local[2] has at most two of them: not once per shard (10)


# --------------------------------------------------------------------------- failures
def test_a_raising_evaluator_names_shard_and_item_and_counts_nothing(sc, helpers, tmp_path):
    sents = make_sentences(20, seed=3)
    ev = helpers.FailsOn(bad_id=13)
    ev.correct_num, ev.gold_set_size = 5, 9  # a previous run's totals
    with pytest.raises(EvaluationError) as info:
        ev.parallelEvaluate(DataPool(sents, num_shards=4), helpers.CountingModel(str(tmp_path / "l")),
                            sparkContext=sc)
    # 20 items in 4 shards of 5: item 13 is in shard 2
    assert (info.value.shard, info.value.item) == (2, 13)
    assert "item 13" in str(info.value) and "shard 2" in str(info.value)
    assert "ZeroDivisionError" in str(info.value) and "cannot score sentence 13" in str(info.value)
    assert "ZeroDivisionError" in str(info.value.__cause__)  # the worker's traceback
    assert (ev.correct_num, ev.gold_set_size) == (5, 9)


def test_an_invalid_tally_is_an_error_naming_the_item(sc, tmp_path, helpers):
    sents = make_sentences(6, seed=4)

    def backwards(sent, w_vector):  # correct > gold on sentence 4 only
        return len(sent["heads"]) + (sent["id"] == 4), len(sent["heads"])

    ev = helpers.HeadAccuracy()
    with pytest.raises(EvaluationError) as info:
        ev.parallelEvaluate(DataPool(sents, num_shards=2), None, backwards, sc)
    assert info.value.shard == 1 and info.value.item == 4  # 6 items in 2 shards of 3
    assert "correct_num > gold_set_size" in str(info.value)


def test_a_crashed_worker_names_the_shard(sc, helpers, tmp_path):
    sents = make_sentences(9, seed=5)
    with pytest.raises(WorkerDiedError) as info:
        helpers.CrashesOn(bad_id=7).parallelEvaluate(DataPool(sents, num_shards=3), None, sparkContext=sc)
    assert info.value.shard == 2  # 9 items in 3 shards of 3: item 7 is in shard 2
    # the context survives and runs the next job
    r = helpers.HeadAccuracy().parallelEvaluate(DataPool(sents, num_shards=3),
                                                helpers.CountingModel(str(tmp_path / "l")), sparkContext=sc)
    assert (r.correct_num, r.gold_set_size, r.sentence_num) == tally(sents)


def test_a_task_that_fails_once_is_retried_by_spark_and_counted_once(sc, helpers, tmp_path):
    assert sc.master == "local[2,2]"  # each task may be tried twice
    sents = make_sentences(15, seed=7)
    marker = tmp_path / "failed-once"
    ev = helpers.FailsOnceOn(bad_id=8, marker=str(marker))
    r = ev.parallelEvaluate(DataPool(sents, num_shards=3), helpers.CountingModel(str(tmp_path / "l")),
                            sparkContext=sc)
    assert marker.exists()  # the first attempt of shard 1 did fail ...
    # ... and the retried shard is counted once, whole
    assert (r.correct_num, r.gold_set_size, r.sentence_num) == tally(sents)
    assert shard_tallies(r) == [tally(part) for part in contiguous(sents, 3)]


def test_a_model_module_missing_on_the_executors_is_named(sc, helpers, tmp_path, monkeypatch):
    (tmp_path / "driver_only_model.py").write_text("class Model:\n    def parse(self, sent):\n"
                                                    "        return sent['pred']\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))  # importable here, never shipped to the workers
    import driver_only_model

    with pytest.raises(EvaluationError) as info:
        helpers.HeadAccuracy().parallelEvaluate(DataPool(make_sentences(4, 9), num_shards=1),
                                                driver_only_model.Model(), sparkContext=sc)
    assert info.value.shard == 0
    assert "No module named 'driver_only_model'" in str(info.value)
    assert "installed in the executors' Python" in str(info.value)


# --------------------------------------------------------------------------- hadoop=True: files read by Spark
FILE_SIZES = [3, 0, 4, 1, 6]  # sentences per file; file 1 is empty


@pytest.fixture
def jsonl_files(tmp_path):
    sents = make_sentences(sum(FILE_SIZES), seed=6)
    folder = tmp_path / "pool"
    folder.mkdir()
    files, start = [], 0
    for i, size in enumerate(FILE_SIZES):
        part = sents[start:start + size]
        start += size
        path = folder / f"part-{i:02d}.jsonl"
        path.write_text("".join(json.dumps(s) + "\n" for s in part), encoding="utf-8")
        files.append(part)
    return folder, files


@pytest.mark.parametrize("num_shards", [3, 5, 8])
def test_hadoop_path_pool_equals_sequential(sc, helpers, tmp_path, jsonl_files, monkeypatch, num_shards):
    folder, files = jsonl_files
    pool = DataPool.from_paths(str(folder / "*.jsonl"), format="jsonl", num_shards=num_shards)
    model = helpers.CountingModel(str(tmp_path / "loads"))
    ev = helpers.HeadAccuracy()
    seq = ev.sequentialEvaluate(pool, model)
    procs = ev.parallelEvaluate(pool, model, executor="processes[workers=2]")  # each worker reads its files
    python_reads = ev.parallelEvaluate(pool, model, sparkContext=sc)  # hadoop=False: Python reads on the executors

    # The driver must not read a sentence: make every driver-side read fail.
    from assay.core.formats import DataFormat, JsonLinesFormat

    def no_driver_reads(*args, **kwargs):
        raise AssertionError("the driver read a data file")

    monkeypatch.setattr(JsonLinesFormat, "parse", no_driver_reads)
    monkeypatch.setattr(DataFormat, "read", no_driver_reads)
    spark = ev.parallelEvaluate(pool, model, sparkContext=sc, hadoop=True)

    assert spark == seq == procs == python_reads
    everything = [s for part in files for s in part]
    assert (spark.correct_num, spark.gold_set_size, spark.sentence_num) == tally(everything)
    # shards are groups of whole files: 5 files in num_shards contiguous groups
    groups = contiguous(files, num_shards)
    assert len(spark.shards) == num_shards
    assert shard_tallies(spark) == [tally([s for f in group for s in f]) for group in groups]


@pytest.mark.parametrize("entry", ["file://{folder}/part-*.jsonl", "{folder}"])
def test_hadoop_resolves_globs_and_folders_with_hadoop(sc, helpers, tmp_path, jsonl_files, entry):
    folder, files = jsonl_files
    pool = DataPool.from_paths([entry.format(folder=folder)], format="jsonl", num_shards=2)
    assert len(pool.paths) == 1  # a list is kept as given; the executor expands the entry with Hadoop
    r = helpers.HeadAccuracy().parallelEvaluate(pool, helpers.CountingModel(str(tmp_path / "l")),
                                                sparkContext=sc, hadoop=True)
    # 5 files into 2 shards: files 0-2 and files 3-4
    assert shard_tallies(r) == [tally(files[0] + files[1] + files[2]), tally(files[3] + files[4])]


def test_hadoop_reads_file_names_with_glob_characters_literally(sc, helpers, tmp_path, jsonl_files):
    folder, files = jsonl_files
    (folder / "part-00.jsonl").rename(folder / "part-00[a]{b}.jsonl")  # still sorts first
    pool = DataPool.from_paths(str(folder), format="jsonl", num_shards=2)  # a folder: its files, sorted
    assert pool.paths[0].endswith("part-00[a]{b}.jsonl")
    model = helpers.CountingModel(str(tmp_path / "l"))
    r = helpers.HeadAccuracy().parallelEvaluate(pool, model, sparkContext=sc, hadoop=True)
    assert shard_tallies(r) == [tally(files[0] + files[1] + files[2]), tally(files[3] + files[4])]
    (folder / "part-01.jsonl").rename(folder / "part,01.jsonl")
    with pytest.raises(InvalidParameterError, match="comma"):
        helpers.HeadAccuracy().parallelEvaluate(DataPool.from_paths(str(folder), format="jsonl"), model,
                                                sparkContext=sc, hadoop=True)


def test_hadoop_error_names_shard_file_and_item(sc, helpers, tmp_path, jsonl_files):
    folder, files = jsonl_files
    bad_id = files[3][0]["id"]  # the only sentence of part-03, in shard 1 of 3 (files 0-1, 2-3, 4)
    pool = DataPool.from_paths(str(folder / "*.jsonl"), format="jsonl", num_shards=3)
    with pytest.raises(EvaluationError) as info:
        helpers.FailsOn(bad_id).parallelEvaluate(pool, None, sparkContext=sc, hadoop=True)
    assert info.value.shard == 1
    message = str(info.value)
    assert "part-03.jsonl" in message and "item 0 of file" in message and "item 4 of the shard" in message


def test_hadoop_malformed_file_gives_the_format_error_with_line(sc, helpers, tmp_path, jsonl_files):
    folder, _ = jsonl_files
    (folder / "part-02.jsonl").write_text('{"id": 1, "heads": [1], "pred": [1]}\n{oops\n', encoding="utf-8")
    pool = DataPool.from_paths(str(folder / "*.jsonl"), format="jsonl", num_shards=2)
    model = helpers.CountingModel(str(tmp_path / "l"))
    with pytest.raises(DataFormatError) as info:
        helpers.HeadAccuracy().parallelEvaluate(pool, model, sparkContext=sc, hadoop=True)
    assert "part-02.jsonl:2" in str(info.value)
    assert "invalid JSON" in str(info.value)


def test_hadoop_invalid_utf8_is_an_error_as_in_a_sequential_run(sc, helpers, tmp_path, jsonl_files):
    # A bad byte inside a JSON string: a lenient decoder (wholeTextFiles) would turn it into U+FFFD and the
    # line would parse, so Spark would count a sentence the sequential run rejects. Both must reject it.
    folder, _ = jsonl_files
    good = b'{"id": 1, "heads": [1], "pred": [1]}\n'
    (folder / "part-04.jsonl").write_bytes(good + b'{"id": 2, "heads": [1], "pred": [1], "w": "caf\xe9"}\n')
    pool = DataPool.from_paths(str(folder / "*.jsonl"), format="jsonl", num_shards=3)
    model = helpers.CountingModel(str(tmp_path / "l"))
    with pytest.raises(DataFormatError) as sequential:
        helpers.HeadAccuracy().sequentialEvaluate(pool, model)
    with pytest.raises(DataFormatError) as spark:
        helpers.HeadAccuracy().parallelEvaluate(pool, model, sparkContext=sc, hadoop=True)
    byte = len(good) + len(b'{"id": 2, "heads": [1], "pred": [1], "w": "caf')  # offset of the \xe9, counted here
    for info in (sequential, spark):
        assert info.value.source.endswith("part-04.jsonl")
        assert f"not valid UTF-8 (invalid continuation byte at byte {byte})" in str(info.value)


def test_hadoop_needs_a_path_pool(sc, helpers):
    with pytest.raises(InvalidParameterError, match="from_paths"):
        helpers.HeadAccuracy().parallelEvaluate(DataPool(make_sentences(3, 0)), None, sparkContext=sc, hadoop=True)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# --------------------------------------------------------------------------- the command line
GOLD = """# sent_id = 1
1\tThe\tthe\tDET\t_\t_\t2\tdet\t_\t_
2\tcat\tcat\tNOUN\t_\t_\t3\tnsubj\t_\t_
3\tsleeps\tsleep\tVERB\t_\t_\t0\troot\t_\t_
4\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_

# sent_id = 2
1\tDogs\tdog\tNOUN\t_\t_\t2\tnsubj\t_\t_
2\tbark\tbark\tVERB\t_\t_\t0\troot\t_\t_

"""


def test_parse_eval_runs_on_spark(sc, tmp_path, capsys):
    from assay.cli import main

    # system: "cat" gets the wrong relation (obj), "." the wrong head (2); sentence 2 is right.
    system = GOLD.replace("3\tnsubj", "3\tobj").replace("3\tpunct", "2\tpunct")
    (tmp_path / "gold.conllu").write_text(GOLD, encoding="utf-8")
    (tmp_path / "sys.conllu").write_text(system, encoding="utf-8")
    # The master is passed through to the executor, which reuses the session's context (same master).
    code = main(["parse-eval", str(tmp_path / "gold.conllu"), str(tmp_path / "sys.conllu"), "--spark", sc.master])
    out = capsys.readouterr().out
    assert code == 0
    rows = {line.split()[0]: line.split()[-2:] for line in out.splitlines()
            if line.split() and line.split()[0] in ("UAS", "LAS")}
    # by hand: heads right for 5 of 6 words (not "."), head and relation right for 4 of 6
    assert rows == {"UAS": ["5", "6"], "LAS": ["4", "6"]}
    assert f"UAS (parallel, Spark (master {sc.master})):" in out  # the executor it ran on, in words
    assert "SparkExecutor" not in out  # not its repr
    assert not sc._jsc.sc().isStopped()  # closing the executor left the shared context running


# --------------------------------------------------------------------------- issue 11: bounds and setup
def test_timeout_cancels_the_job_and_names_the_unfinished_shards(sc, helpers):
    from assay.errors import EvaluationTimeoutError
    from assay.executors.spark import SparkExecutor

    pool = DataPool(list(range(6)), num_shards=3)
    executor = SparkExecutor(context=sc, timeout=3)
    started = time.monotonic()
    with pytest.raises(EvaluationTimeoutError) as info:
        helpers.SleepsOn(5).parallelEvaluate(pool, None, executor=executor)  # shard 2 (items 4, 5) hangs
    elapsed = time.monotonic() - started
    assert 6 <= elapsed < 20, elapsed  # cancelled, not waited out (the item sleeps 60 s)
    # local[2,2]: 3 shards on 2 cores are 2 waves, so the bound is 6 s. Shard 2 hangs; on a loaded machine
    # shards 0 and 1 may not have finished either, so the unfinished list ends with 2 and starts with `shard`.
    message = str(info.value)
    assert "after 6 s (timeout=3 s per shard, 3 shard(s) on 2 core(s))" in message
    unfinished = message.split("shard(s) [", 1)[1].split("]", 1)[0]
    assert unfinished.endswith("2") and unfinished.startswith(str(info.value.shard))
    assert isinstance(info.value, TimeoutError)
    # the context is still usable afterwards
    assert helpers.SleepsOn(99).parallelEvaluate(pool, None, executor=executor).correct_num == 6


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), "10", True])
def test_timeout_must_be_a_positive_number(sc, bad):
    from assay.executors.spark import SparkExecutor

    with pytest.raises(InvalidParameterError, match="'timeout'"):
        SparkExecutor(context=sc, timeout=bad)


def test_system_exit_in_an_evaluator_is_an_error_naming_the_item(sc, helpers):
    pool = DataPool(list(range(6)), num_shards=2)
    with pytest.raises(EvaluationError) as info:
        helpers.ExitsOn(4).parallelEvaluate(pool, None, sparkContext=sc)
    assert info.value.shard == 1 and info.value.item == 4
    assert "SystemExit" in str(info.value)


USER_CONTEXT_SCRIPT = """
import os, sys
assert "PYSPARK_PYTHON" not in os.environ
from pyspark import SparkConf, SparkContext
from assay import DataPool, EvaluatorBase

class Even(EvaluatorBase):
    def sentence_evaluator(self, sent, w_vector):
        return int(sent % 2 == 0), 1

if __name__ == "__main__":
    sc = SparkContext(conf=SparkConf().setMaster("local[2]").setAppName("user-made")
                      .set("spark.ui.enabled", "false"))
    sc.setLogLevel("FATAL")
    pool = DataPool(list(range(10)), num_shards=3)
    try:
        r = Even().parallelEvaluate(pool, None, sc)
        print("RESULT", r.correct_num, r.gold_set_size)
        os.environ["PYSPARK_PYTHON"] = "python3"  # now the user asks for PATH's python3, which lacks assay
        try:
            Even().parallelEvaluate(pool, None, sc)
        except Exception as exc:
            print("ERROR", type(exc).__name__, exc)
    finally:
        sc.stop()
"""


def test_user_made_local_context_without_pyspark_python(tmp_path, sc):
    # An unactivated venv: its python is run by path, PATH's python3 has no assay, PYSPARK_PYTHON unset.
    # `sc` makes sure the JVM fixture ran (JAVA_HOME set); the script runs in its own process.
    script = tmp_path / "user_script.py"
    script.write_text(USER_CONTEXT_SCRIPT, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV")}
    env["PATH"] = "/usr/bin:/bin"
    assert subprocess.run(["python3", "-c", "import assay, numpy"], env=env, capture_output=True).returncode != 0
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "RESULT 5 10" in done.stdout, done.stdout + done.stderr[-3000:]
    # The user's own choice of worker Python is kept, and its failure says what to set.
    assert "ERROR WorkerDiedError The Spark executors' Python (python3) cannot import '" in done.stdout, done.stdout
    assert "set PYSPARK_PYTHON" in done.stdout
