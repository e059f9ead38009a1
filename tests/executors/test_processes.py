"""The ``processes`` executor: inheritance by fork, the model sent once, dead workers, remote errors."""

from __future__ import annotations

import os
import pickle

import pytest

from assay import WorkerDiedError, load_executor
from assay.executors.base import RemoteTraceback


class Shardlike:
    """A task with a shard number, as DataPool shards have."""

    def __init__(self, index: int, value: int) -> None:
        self.index = index
        self.value = value


def sigkill_on_shard(task, shared):
    if task.index == shared:
        os.kill(os.getpid(), 9)
    return task.value


def test_sigkilled_worker_gives_worker_died_error_naming_the_shard(helpers):
    tasks = [Shardlike(i, i * 10) for i in range(6)]
    with pytest.raises(WorkerDiedError, match=r"killed by signal SIGKILL while running shard 4") as info:
        load_executor("processes", workers=2).run(sigkill_on_shard, tasks, 4)
    assert info.value.shard == 4


def test_worker_that_exits_names_its_exit_code(helpers):
    with pytest.raises(WorkerDiedError, match=r"exited with code 3 while running shard 2"):
        load_executor("processes", workers=2).run(helpers.exit_on, [0, 1, 2, 3], 2)


def test_spawned_worker_death_is_detected_too(helpers):
    with pytest.raises(WorkerDiedError, match="shard 1"):
        load_executor("processes", workers=2, start_method="spawn").run(helpers.kill_on, [0, 1, 2], 1)


@pytest.mark.parametrize("n_tasks", [1, 2, 8])
def test_fork_workers_inherit_the_model_so_it_is_never_pickled(helpers, tmp_path, n_tasks):
    counter = tmp_path / "unpickled.txt"
    model = helpers.CountingModel(str(counter), weight=2)
    tasks = [[i, 1] for i in range(n_tasks)]
    out = load_executor("processes", workers=2, start_method="fork").run(helpers.weighted_len, tasks, model)
    assert out == [2 * (i + 1) for i in range(n_tasks)]
    assert helpers.count_unpicklings(counter) == []


def test_fork_workers_get_only_task_numbers_not_tasks(helpers):
    tasks = [helpers.Unpicklable(i) for i in range(5)]
    with pytest.raises(TypeError):  # the objects really refuse pickling ...
        pickle.dumps(tasks[0])
    out = load_executor("processes", workers=2, start_method="fork").run(_index_of, tasks, None)
    assert out == [0, 1, 2, 3, 4]  # ... yet the fork workers ran them


def _index_of(task, shared):
    return task.index


@pytest.mark.parametrize("workers, n_tasks", [(2, 8), (2, 2), (1, 5)])
def test_spawn_workers_unpickle_the_model_once_each(helpers, tmp_path, workers, n_tasks):
    counter = tmp_path / "unpickled.txt"
    model = helpers.CountingModel(str(counter), weight=3)
    tasks = [[i] for i in range(n_tasks)]
    out = load_executor("processes", workers=workers, start_method="spawn").run(helpers.weighted_len, tasks, model)
    assert out == [3 * i for i in range(n_tasks)]
    pids = helpers.count_unpicklings(counter)
    assert len(pids) == workers  # once per worker, not once per task
    assert len(set(pids)) == workers and os.getpid() not in pids


def test_threads_share_the_model_without_pickling(helpers, tmp_path):
    counter = tmp_path / "unpickled.txt"
    model = helpers.CountingModel(str(counter))
    load_executor("threads", workers=2).run(helpers.weighted_len, [[1], [2], [3]], model)
    assert helpers.count_unpicklings(counter) == []


class ChainedError(Exception):
    pass


def raise_chained(task, shared):
    try:
        {}["missing"]
    except KeyError as exc:
        raise ChainedError(f"task {task} failed") from exc
    return task


def test_remote_exception_keeps_its_cause_and_the_remote_traceback():
    with pytest.raises(ChainedError, match="task 0 failed") as info:
        load_executor("processes", workers=1).run(raise_chained, [0], None)
    cause = info.value.__cause__
    assert isinstance(cause, KeyError)
    assert isinstance(cause.__cause__, RemoteTraceback)
    assert "raise_chained" in cause.__cause__.tb


class NeedsTwoArgs(Exception):
    def __init__(self, a, b):
        super().__init__(f"{a}-{b}")


def raise_unrebuildable(task, shared):
    raise NeedsTwoArgs(1, 2)


def test_exception_that_cannot_be_rebuilt_arrives_as_runtime_error():
    with pytest.raises(RuntimeError, match="NeedsTwoArgs: 1-2"):
        load_executor("processes", workers=1).run(raise_unrebuildable, [0], None)


def return_lambda(task, shared):
    return lambda: task


def test_unpicklable_result_is_an_error_not_a_hang():
    with pytest.raises(Exception, match="pickle"):
        load_executor("processes", workers=1).run(return_lambda, [0], None)


def nested_run(task, shared):
    return sum(load_executor("processes", workers=2).run(_index_of_value, [task, task + 1], None))


def _index_of_value(task, shared):
    return task


def test_a_task_may_itself_use_a_process_executor():
    assert load_executor("processes", workers=2).run(nested_run, [1, 10], None) == [3, 21]


def test_executor_is_reusable():
    ex = load_executor("processes", workers=2)
    assert ex.run(_index_of_value, [1, 2, 3], None) == [1, 2, 3]
    assert ex.run(_index_of_value, [4], None) == [4]


# ------------------------------------------------------------------ through EvaluatorBase
def test_parallel_evaluate_sends_the_model_once_per_spawned_worker(helpers, tmp_path):
    from assay import DataPool, EvaluatorBase

    counter = tmp_path / "unpickled.txt"
    model = helpers.CountingModel(str(counter), weight=2)
    pool = DataPool([(1, 2)] * 30, num_shards=6)
    r = EvaluatorBase().parallelEvaluate(pool, model, helpers.scaled_tally,
                                         executor="processes[workers=2, start_method=spawn]")
    assert (r.correct_num, r.gold_set_size, r.feature_count) == (60, 120, 42)
    assert len(helpers.count_unpicklings(counter)) == 2  # 2 workers, 6 shards, 30 sentences


def test_parallel_evaluate_with_fork_pickles_neither_items_nor_model(helpers, tmp_path):
    from assay import DataPool, EvaluatorBase

    counter = tmp_path / "unpickled.txt"
    model = helpers.CountingModel(str(counter))
    pool = DataPool([helpers.Unpicklable(i) for i in range(20)], num_shards=5)
    r = EvaluatorBase().parallelEvaluate(pool, model, _one_of_one, executor="processes[workers=2, start_method=fork]")
    assert (r.correct_num, r.gold_set_size, r.sentence_num) == (20, 20, 20)
    assert helpers.count_unpicklings(counter) == []


def _one_of_one(sent, w_vector):
    return 1, 1
