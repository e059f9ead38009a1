"""The ``dask`` executor on a real ``LocalCluster`` (issue 16): two single-threaded worker processes.

Expected values are derived in the tests themselves: totals by a plain loop over the
sentences, per-shard tallies by slicing the sentences into contiguous runs whose sizes
differ by at most one (the larger ones first), file groups likewise.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay import DataPool, EvaluationResult
from assay.errors import (
    EvaluationError,
    EvaluationTimeoutError,
    InvalidParameterError,
    MissingDependencyError,
    WorkerDiedError,
)
from assay.plugins import get_registry, load_executor

# every test here runs on a local Dask cluster (seconds to start and to stop)
pytestmark = pytest.mark.slow


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


# --------------------------------------------------------------------------- registration and options
def test_dask_is_registered_and_importing_assay_does_not_import_dask():
    assert "dask" in get_registry("executor")
    code = ("import sys, assay; from assay.plugins import get_registry; "
            "assert 'dask' in get_registry('executor'); print('distributed' in sys.modules, 'dask' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False False"


def test_missing_dask_gives_the_install_hint():
    code = ("import sys; sys.modules['distributed'] = None; sys.modules['dask'] = None\n"
            "from assay.plugins import load_executor\n"
            "try:\n    load_executor('dask', address='tcp://127.0.0.1:8786')\n"
            "except Exception as e:\n    print(type(e).__name__, '|', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.startswith("MissingDependencyError |")
    assert "pip install 'assay[dask]'" in out
    assert issubclass(MissingDependencyError, ImportError)


def test_bad_options_are_rejected_by_name(client):
    with pytest.raises(InvalidParameterError, match="'client'"):
        load_executor("dask", client="tcp://127.0.0.1:8786")
    with pytest.raises(InvalidParameterError, match="'address'"):
        load_executor("dask", address="")
    with pytest.raises(InvalidParameterError, match="both a 'client' and an 'address'"):
        load_executor("dask", client=client, address=client.scheduler.address)
    for bad in (-1, 1.5, True):
        with pytest.raises(InvalidParameterError, match="'retries'"):
            load_executor("dask", client=client, retries=bad)
    for bad in (0, -1, float("nan"), float("inf"), "10"):
        with pytest.raises(InvalidParameterError, match="'timeout'"):
            load_executor("dask", client=client, timeout=bad)


# --------------------------------------------------------------------------- executor protocol
def test_run_returns_results_in_task_order_one_task_per_shard(client, helpers):
    pool = DataPool(list(range(11)), num_shards=5)
    executor = load_executor("dask", client=client)
    assert executor.workers == 2  # the cluster's worker threads
    assert executor.run(helpers.times_shared, pool.shards(), 10) == [[0, 10, 20], [30, 40], [50, 60], [70, 80],
                                                                     [90, 100]]
    assert executor.run(helpers.times_shared, [], 10) == []
    executor.close()
    assert client.status == "running"  # a client we were given is never closed


def test_progress_bar_counts_every_shard(client, helpers, monkeypatch):
    import assay.executors.base as base

    class Recorder:
        def __init__(self, total):
            self.total, self.done, self.closed = total, 0, False

        def update(self, n=1):
            self.done += n

        def close(self):
            self.closed = True

    bars = []
    monkeypatch.setattr(base, "progress_bar", lambda total, *, enabled, desc=None:
                        bars.append(Recorder(total)) or bars[-1] if enabled else base._NoBar())
    executor = load_executor("dask", client=client, progress=True)
    assert executor.run(helpers.times_shared, DataPool(list(range(6)), num_shards=6).shards(), 2) == \
        [[0], [2], [4], [6], [8], [10]]
    assert [(b.total, b.done, b.closed) for b in bars] == [(6, 6, True)]
    bars.clear()
    executor.run(helpers.times_shared, DataPool([1], num_shards=6).shards(), 2, progress=False)
    assert bars == []


# --------------------------------------------------------------------------- equality with sequential
@pytest.mark.parametrize(("n", "shards"), [(23, 4), (7, 3), (5, 9), (1, 2)])
def test_in_memory_pool_equals_sequential(client, helpers, tmp_path, n, shards):
    sents = make_sentences(n, seed=n)
    model = helpers.CountingModel(str(tmp_path / "loads"))
    pool = DataPool(sents, num_shards=shards)
    ev = helpers.HeadAccuracy()
    seq = ev.sequentialEvaluate(pool, model)
    on_dask = ev.parallelEvaluate(pool, model, executor=client)
    assert on_dask == seq  # totals, feature count and every shard
    assert (on_dask.correct_num, on_dask.gold_set_size, on_dask.sentence_num) == tally(sents)
    assert shard_tallies(on_dask) == [tally(part) for part in contiguous(sents, shards)]
    assert on_dask.feature_count == 42
    assert (ev.correct_num, ev.gold_set_size) == tally(sents)[:2]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 30), shards=st.integers(1, 12), seed=st.integers(0, 10**6))
def test_any_shard_count_gives_the_hand_tallies(client, helpers, n, shards, seed):
    sents = make_sentences(n, seed)
    r = helpers.HeadAccuracy().parallelEvaluate(DataPool(sents, num_shards=shards), helpers.CountingModel(""), client)
    assert (r.correct_num, r.gold_set_size, r.sentence_num) == tally(sents)
    assert shard_tallies(r) == [tally(part) for part in contiguous(sents, shards)]


def test_metric_states_merge_in_shard_order_on_dask(client, helpers, tmp_path):
    from scipy.stats import spearmanr

    sents = make_sentences(30, seed=11)
    model = helpers.CountingModel(str(tmp_path / "loads"))
    ev = helpers.HeadAccuracyWithMetrics()
    metrics = ["accuracy", "spearman"]
    seq = ev.sequentialEvaluate(DataPool(sents, num_shards=4), model, metrics=metrics)
    on_dask = ev.parallelEvaluate(DataPool(sents, num_shards=4), model, client, metrics=metrics)
    assert on_dask == seq and dict(on_dask.metrics) == dict(seq.metrics)
    per_sentence = [tally([s]) for s in sents]
    # accuracy: sentences whose heads are all right; spearman: scipy on (right, gold) per sentence
    assert on_dask.metrics["accuracy"] == pytest.approx(sum(c == g for c, g, _ in per_sentence) / len(sents))
    rho = spearmanr([c for c, _, _ in per_sentence], [g for _, g, _ in per_sentence]).statistic
    assert on_dask.metrics["spearman"] == pytest.approx(rho)


FILE_SIZES = [3, 0, 4, 1, 6]  # sentences per file; file 1 is empty


@pytest.mark.parametrize("num_shards", [3, 5])
def test_path_pool_is_read_on_the_workers_and_equals_sequential(client, helpers, tmp_path, monkeypatch,
                                                                num_shards):
    sents = make_sentences(sum(FILE_SIZES), seed=6)
    files, start = [], 0
    for i, size in enumerate(FILE_SIZES):
        part = sents[start:start + size]
        start += size
        (tmp_path / f"part-{i:02d}.jsonl").write_text("".join(json.dumps(s) + "\n" for s in part), encoding="utf-8")
        files.append(part)
    pool = DataPool.from_paths(str(tmp_path / "*.jsonl"), format="jsonl", num_shards=num_shards)
    model = helpers.CountingModel(str(tmp_path / "loads"))
    ev = helpers.HeadAccuracyWithMetrics()
    seq = ev.sequentialEvaluate(pool, model)
    seq_metrics = ev.sequentialEvaluate(pool, model, metrics=["accuracy"])

    # The client must not read a sentence: make every read in this process fail (the workers are other processes).
    from assay.core.formats import DataFormat, JsonLinesFormat

    def no_client_reads(*args, **kwargs):
        raise AssertionError("the client read a data file")

    monkeypatch.setattr(JsonLinesFormat, "parse", no_client_reads)
    monkeypatch.setattr(DataFormat, "read", no_client_reads)
    on_dask = ev.parallelEvaluate(pool, model, client)
    with_metrics = ev.parallelEvaluate(pool, model, client, metrics=["accuracy"])

    assert on_dask == seq and with_metrics == seq_metrics
    assert dict(with_metrics.metrics) == dict(seq_metrics.metrics)
    assert (on_dask.correct_num, on_dask.gold_set_size, on_dask.sentence_num) == tally(sents)
    groups = contiguous(files, num_shards)  # shards are groups of whole files
    assert shard_tallies(on_dask) == [tally([s for f in group for s in f]) for group in groups]


def test_seed_call_executor_name_and_address(client, helpers, tmp_path):
    from assay.core.evaluator import SHARDS_PER_WORKER

    sents = make_sentences(12, seed=1)
    model = helpers.CountingModel(str(tmp_path / "loads"))
    ev = helpers.HeadAccuracy()
    expected = tally(sents)
    r = ev.parallelEvaluate(DataPool(sents, num_shards=3), model, client)  # the Client third, as a SparkContext
    assert (r.correct_num, r.gold_set_size, r.sentence_num) == expected
    # no num_shards: the core's shards-per-worker policy over the cluster's two worker threads
    r = ev.parallelEvaluate(sents, model, client)
    assert shard_tallies(r) == [tally(part) for part in contiguous(sents, SHARDS_PER_WORKER * 2)]
    r = ev.parallelEvaluate(DataPool(sents, num_shards=3), model, executor="dask")  # the default client
    assert (r.correct_num, r.gold_set_size, r.sentence_num) == expected
    with load_executor("dask", address=client.scheduler.address) as executor:  # its own client, closed after
        r = ev.parallelEvaluate(DataPool(sents, num_shards=3), model, executor=executor)
        own = executor.client
    assert (r.correct_num, r.gold_set_size, r.sentence_num) == expected
    assert own.status == "closed" and client.status == "running"
    with pytest.raises(InvalidParameterError, match="pass one"):
        ev.parallelEvaluate(DataPool(sents), model, client, executor="processes")
    # as with a SparkContext, a sequential run accepts the Client third and runs in this process
    r = ev.sequentialEvaluate(DataPool(sents, num_shards=3), model, client)
    assert (r.correct_num, r.gold_set_size, r.sentence_num) == expected


def test_model_is_scattered_once_and_unpickled_once_per_worker(client, helpers, tmp_path, monkeypatch):
    log = tmp_path / "loads"
    scatters = []
    real = client.scatter
    monkeypatch.setattr(client, "scatter", lambda data, **kw: scatters.append(kw) or real(data, **kw))
    sents = make_sentences(40, seed=2)
    r = helpers.HeadAccuracy().parallelEvaluate(DataPool(sents, num_shards=10), helpers.CountingModel(str(log)),
                                                client)
    assert (r.correct_num, r.gold_set_size) == tally(sents)[:2]
    assert len(scatters) == 1 and scatters[0]["broadcast"] is True  # one scatter, to every worker
    pids = helpers.unpicklings(log)
    assert len(pids) == len(set(pids))  # each worker process unpickled the model once ...
    assert 1 <= len(pids) <= 2  # ... and there are two workers: not once per shard (10)


# --------------------------------------------------------------------------- failures
def test_a_raising_evaluator_names_shard_and_item_and_counts_nothing(client, helpers, tmp_path):
    sents = make_sentences(20, seed=3)
    ev = helpers.FailsOn(bad_id=13)
    ev.correct_num, ev.gold_set_size = 5, 9  # a previous run's totals
    with pytest.raises(EvaluationError) as info:
        ev.parallelEvaluate(DataPool(sents, num_shards=4), helpers.CountingModel(str(tmp_path / "l")), client)
    # 20 items in 4 shards of 5: item 13 is in shard 2
    assert (info.value.shard, info.value.item) == (2, 13)
    assert "item 13" in str(info.value) and "shard 2" in str(info.value)
    assert "ZeroDivisionError" in str(info.value) and "cannot score sentence 13" in str(info.value)
    assert "ZeroDivisionError" in str(info.value.__cause__)  # the worker's traceback
    assert (ev.correct_num, ev.gold_set_size) == (5, 9)


def test_a_task_that_fails_once_is_retried_only_when_asked(client, helpers, tmp_path):
    sents = make_sentences(15, seed=7)
    marker = tmp_path / "failed-once"
    ev = helpers.FailsOnceOn(bad_id=8, marker=str(marker))
    with pytest.raises(EvaluationError) as info:  # retries=0 by default: the first failure is final
        ev.parallelEvaluate(DataPool(sents, num_shards=3), None, client)
    assert (info.value.shard, info.value.item) == (1, 8) and "transient failure" in str(info.value)
    marker.unlink()
    r = ev.parallelEvaluate(DataPool(sents, num_shards=3), None, executor=load_executor("dask", client=client,
                                                                                        retries=1))
    assert marker.exists()  # the first attempt of shard 1 did fail, and its retry is counted once, whole
    assert shard_tallies(r) == [(sum(len(s["heads"]) for s in part),) * 2 + (len(part),)
                                for part in contiguous(sents, 3)]


def test_system_exit_in_an_evaluator_is_an_error_naming_the_item(client, helpers):
    before = set(client.scheduler_info()["workers"])
    with pytest.raises(EvaluationError) as info:
        helpers.ExitsOn(4).parallelEvaluate(DataPool(list(range(6)), num_shards=2), None, client)
    assert info.value.shard == 1 and info.value.item == 4
    assert "SystemExit" in str(info.value)
    assert set(client.scheduler_info()["workers"]) == before  # no worker ended


def test_an_unpicklable_model_is_named(client, helpers):
    with pytest.raises(InvalidParameterError) as info:
        helpers.HeadAccuracy().parallelEvaluate(DataPool(make_sentences(4, 0)), helpers.Unpicklable(), client)
    assert "the model (w_vector)" in str(info.value) and "Unpicklable" in str(info.value)
    assert "cannot pickle '_thread.lock'" in str(info.value)


def test_a_model_module_missing_on_the_workers_is_named(client, helpers, tmp_path, monkeypatch):
    (tmp_path / "client_only_model.py").write_text("class Model:\n    def parse(self, sent):\n"
                                                   "        return sent['pred']\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))  # importable here only: the workers started before
    import client_only_model

    with pytest.raises(EvaluationError) as info:
        helpers.HeadAccuracy().parallelEvaluate(DataPool(make_sentences(4, 9), num_shards=1),
                                                client_only_model.Model(), client)
    assert info.value.shard == 0
    assert "No module named 'client_only_model'" in str(info.value)
    assert "installed on every Dask worker" in str(info.value)


def test_a_killed_worker_names_the_shard(client, helpers, tmp_path):
    sents = make_sentences(12, seed=5)
    with pytest.raises(WorkerDiedError) as info:  # Dask reschedules the shard, it kills the other worker too
        helpers.CrashesOn(bad_id=7).parallelEvaluate(DataPool(sents, num_shards=4), None, client)
    assert info.value.shard == 2  # 12 items in 4 shards of 3: item 7 is in shard 2
    assert "shard 2" in str(info.value)
    # the nannies restart the workers, and the cluster runs the next evaluation
    client.wait_for_workers(2, timeout=120)
    r = helpers.HeadAccuracy().parallelEvaluate(DataPool(sents, num_shards=4),
                                                helpers.CountingModel(str(tmp_path / "l")), client)
    assert (r.correct_num, r.gold_set_size, r.sentence_num) == tally(sents)


def test_a_shard_the_scheduler_gives_up_on_is_a_worker_death(client, helpers):
    def set_allowed(value, dask_scheduler=None):
        previous, dask_scheduler.allowed_failures = dask_scheduler.allowed_failures, value
        return previous

    previous = client.run_on_scheduler(set_allowed, 0)  # no rescheduling: Dask raises KilledWorker at once
    try:
        with pytest.raises(WorkerDiedError) as info:
            helpers.CrashesOn(bad_id=1).parallelEvaluate(DataPool(make_sentences(4, 1), num_shards=2), None, client)
    finally:
        client.run_on_scheduler(set_allowed, previous)
    assert info.value.shard == 0
    assert "allowed-failures" in str(info.value)


def test_timeout_cancels_the_tasks_and_names_the_unfinished_shards(client, helpers):
    pool = DataPool(list(range(4)), num_shards=2)  # two shards on two worker threads: one wave
    # a bound of 4 s leaves shard 0 (no sleep) time to finish on a loaded machine; shard 1 sleeps 12 s
    executor = load_executor("dask", client=client, timeout=4)
    started = time.monotonic()
    with pytest.raises(EvaluationTimeoutError) as info:
        helpers.SleepsOn(3, seconds=12).parallelEvaluate(pool, None, executor=executor)  # shard 1 hangs
    assert time.monotonic() - started < 10  # cancelled at the bound, not waited out (12 s)
    assert info.value.shard == 1 and isinstance(info.value, TimeoutError)
    assert "after 4 s (timeout=4 s per shard, 2 shard(s) on 2 worker thread(s)); shard(s) [1]" in str(info.value)
    # the client is still usable afterwards (the hung task still occupies its worker for a while: no bound here)
    assert helpers.SleepsOn(99, seconds=0).parallelEvaluate(pool, None, client).correct_num == 4


def test_the_dask_executor_conforms(client):
    # The common suite's checks of the registered 'dask' executor (tests/testing/test_common_suite.py exempts it so
    # as not to start a second cluster): on this module's cluster, every check passes, same-result included.
    from assay.plugins import get_plugin_system
    from assay.testing.conformance import CHECKS_BY_KIND
    from assay.testing.suite import assert_conforms, with_overrides

    entry = with_overrides(get_plugin_system().registry("executor").get("dask"), client=client)
    results = assert_conforms(entry)
    assert [r.check for r in results if r.status == "PASS"] == list(CHECKS_BY_KIND["executor"])


# --------------------------------------------------------------------------- the default bound (issue 27, item 14)
def test_without_timeout_the_bound_is_the_documented_default(client, monkeypatch):
    from assay.executors.dask import DEFAULT_TIMEOUT, TIMEOUT_VARIABLE

    monkeypatch.delenv(TIMEOUT_VARIABLE, raising=False)
    assert DEFAULT_TIMEOUT == 3600.0  # the value docs/executors and the docstring give
    assert load_executor("dask", client=client).timeout == 3600.0
    assert load_executor("dask", client=client, timeout=None).timeout is None  # asked for explicitly: no bound
    monkeypatch.setenv(TIMEOUT_VARIABLE, "none")
    assert load_executor("dask", client=client).timeout is None
    for bad in ("0", "-3", "soon", "inf"):
        monkeypatch.setenv(TIMEOUT_VARIABLE, bad)
        with pytest.raises(InvalidParameterError, match=f"{TIMEOUT_VARIABLE}={bad!r}"):
            load_executor("dask", client=client)


def test_a_hung_evaluator_without_timeout_ends_in_an_error_naming_the_shard(client, helpers, monkeypatch):
    """No timeout= anywhere: the default bound (here set to 1 s through the environment) ends the run."""
    monkeypatch.setenv("ASSAY_DASK_TIMEOUT", "1")
    pool = DataPool(list(range(4)), num_shards=2)
    started = time.monotonic()
    with pytest.raises(EvaluationTimeoutError) as info:
        helpers.SleepsOn(3, seconds=3).parallelEvaluate(pool, None, client)  # shard 1 hangs for 3 s
    assert time.monotonic() - started < 2.5
    # shard 1 hangs; on a loaded machine shard 0 may not have finished within 1 s either
    assert info.value.shard in (0, 1)
    assert ("shard(s) [1] had not finished" in str(info.value) or "shard(s) [0, 1] had not finished" in str(info.value))
    assert "ASSAY_DASK_TIMEOUT" in str(info.value)
