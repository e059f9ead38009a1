"""The executor protocol, checked for every built-in executor."""

from __future__ import annotations

import io

import pytest

from assay import Executor, InvalidParameterError, load_executor
from assay.executors.base import FEW_TASKS, cpu_count, show_progress, task_label
from assay.plugins import get_registry

BUILTIN = ["serial", "threads", "processes"]


class Task:
    def __init__(self, index: int, value: int) -> None:
        self.index = index
        self.value = value


def add_shared(task, shared):
    return task + shared


def fail_on_three(task, shared):
    if task == 3:
        raise KeyError(f"no luck with {task}")
    return task


@pytest.mark.parametrize("name", BUILTIN)
def test_registered_and_an_executor(name):
    assert name in get_registry("executor")
    ex = load_executor(name)
    assert isinstance(ex, Executor)
    assert ex.name == name


@pytest.mark.parametrize("name", BUILTIN)
def test_results_come_back_in_task_order(name, helpers):
    with load_executor(name, workers=3) as ex:
        assert ex.run(helpers.slow_square, list(range(10)), None) == [i * i for i in range(10)]


@pytest.mark.parametrize("name", BUILTIN)
def test_no_tasks_gives_no_results(name):
    assert load_executor(name).run(add_shared, [], 1) == []


@pytest.mark.parametrize("name", BUILTIN)
def test_shared_reaches_every_task(name):
    assert load_executor(name, workers=2).run(add_shared, [1, 2, 3, 4, 5], 100) == [101, 102, 103, 104, 105]


@pytest.mark.parametrize("name", BUILTIN)
def test_an_exception_in_fn_propagates_with_its_type(name):
    with pytest.raises(KeyError, match="no luck with 3"):
        load_executor(name, workers=2).run(fail_on_three, [1, 2, 3, 4], None)


@pytest.mark.parametrize("name", BUILTIN)
def test_more_workers_than_tasks(name):
    assert load_executor(name, workers=8).run(add_shared, [1], 1) == [2]


def test_workers_default_to_the_cpu_count():
    assert load_executor("processes").workers == cpu_count()
    assert load_executor("threads").workers == cpu_count()
    assert load_executor("serial").workers == 1


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_bad_workers_name_the_parameter(bad):
    with pytest.raises(InvalidParameterError, match="'workers' parameter"):
        load_executor("processes", workers=bad)


def test_bad_progress_names_the_parameter():
    with pytest.raises(InvalidParameterError, match="'progress' parameter"):
        load_executor("threads", progress="yes")


def test_options_through_the_name():
    ex = load_executor("processes[workers=2, progress=false, start_method=spawn]")
    assert (ex.workers, ex.progress, ex.start_method) == (2, False, "spawn")


def test_unknown_start_method_is_rejected():
    with pytest.raises(InvalidParameterError, match="'start_method'"):
        load_executor("processes", start_method="teleport")


def test_task_label_prefers_the_index_attribute():
    assert task_label(Task(7, 0), 2) == 7
    assert task_label(object(), 2) == 2


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_on_a_tty_with_more_than_a_few_tasks():
    assert show_progress(None, FEW_TASKS + 1, FakeTTY()) is True
    assert show_progress(None, FEW_TASKS, FakeTTY()) is False
    assert show_progress(None, 100, io.StringIO()) is False
    assert show_progress(False, 100, FakeTTY()) is False
    assert show_progress(True, 1, io.StringIO()) is True


@pytest.mark.parametrize("name", BUILTIN)
def test_progress_forced_on_draws_a_tqdm_bar(name, capsys):
    load_executor(name, workers=2).run(add_shared, list(range(6)), 0, progress=True, desc="checking")
    assert "checking" in capsys.readouterr().err


@pytest.mark.parametrize("name", BUILTIN)
def test_progress_off_draws_nothing(name, capsys, monkeypatch):
    monkeypatch.setattr("sys.stderr.isatty", lambda: True, raising=False)
    load_executor(name, workers=2, progress=False).run(add_shared, list(range(8)), 0, desc="checking")
    assert "checking" not in capsys.readouterr().err


def test_custom_executor_subclass_follows_the_protocol():
    class Backwards(Executor):
        name = "backwards"

        def run(self, fn, tasks, shared, *, progress=None, desc=None):
            tasks = list(tasks)
            out = [None] * len(tasks)
            for i in reversed(range(len(tasks))):
                out[i] = fn(tasks[i], shared)
            return out

    assert Backwards().run(add_shared, [1, 2], 1) == [2, 3]
    with pytest.raises(NotImplementedError, match="must implement run"):
        Executor().run(add_shared, [1], 1)
