"""The executor protocol: how the shards of an evaluation run.

An executor runs one picklable, module-level function over a list of tasks (one task
per shard), with one ``shared`` object that every task needs (for an evaluation: the
sentence evaluator and the model). It is the only thing a new backend has to provide;
assay's own ``serial``, ``threads`` and ``processes`` executors and the Spark executor
implement exactly this.

The protocol
------------
``executor.run(fn, tasks, shared, *, progress=None, desc=None) -> list``

``fn``
    A module-level function ``fn(task, shared) -> result`` (picklable by reference).
    It is the same for every task; executors never call it with anything else.
``tasks``
    A sequence of picklable task objects, in order. For evaluations these are the
    :class:`~assay.core.pool.Shard` objects of a :class:`~assay.DataPool`. A task may
    carry an ``index`` attribute (its shard number); errors name it, else they name
    the task's position in ``tasks``.
``shared``
    One picklable object every task needs. It must reach each worker **once** -- never
    once per task or per item: a process worker inherits or unpickles it a single time,
    a Spark executor gets it as a broadcast variable, a thread shares the reference.
    ``fn`` must treat it as read-only.
``progress``
    ``True`` / ``False`` forces a progress bar on / off for this call; ``None`` uses the
    executor's own ``progress`` setting, whose default shows a bar only on a terminal
    and only for more than :data:`FEW_TASKS` tasks (see :func:`show_progress`).
``desc``
    A short label for the progress bar.

Return value: the list of ``fn`` results, **in task order** (whatever order they
finished in). Nothing is merged by the executor; the caller adds the tallies in shard
order, which is what makes sharded results identical to sequential ones.

Errors:

- An exception raised by ``fn`` propagates to the caller unchanged in type and
  message, with its ``__cause__`` kept when possible (executors that run ``fn`` in
  another process re-attach the remote cause and a :class:`RemoteTraceback`). The run
  stops at the first failing task; no partial result list is returned.
- A worker that disappears without answering (killed by a signal, out of memory, an
  executor lost) raises :class:`~assay.errors.WorkerDiedError` naming the task it was
  running. An executor never returns fewer results than tasks.

Options every executor accepts as keywords (through ``load_executor("name[k=v]")``):
``workers`` (a positive int, default: the number of CPUs this process may use) and
``progress`` (``None``/``True``/``False``). Executors may take more (``processes``
takes ``start_method``).

Executors are registered through the ``assay_register_executors`` hook like any
plugin (see :mod:`assay.executors.builtin`) and are context managers; ``close()``
releases whatever they hold (threads, processes, a Spark job group). ``run`` may be
called several times on one executor.

Writing one
-----------
>>> from assay.executors.base import Executor
>>> class Reversed(Executor):
...     '''Runs tasks last to first, in this process (a toy).'''
...     name = "reversed"
...     def run(self, fn, tasks, shared, *, progress=None, desc=None):
...         tasks = list(tasks)
...         out = [None] * len(tasks)
...         for i in reversed(range(len(tasks))):
...             out[i] = fn(tasks[i], shared)
...         return out  # in task order
>>> def add(task, shared):
...     return task + shared
>>> Reversed().run(add, [1, 2, 3], 10)
[11, 12, 13]
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, ClassVar, Sequence

from assay.errors import InvalidParameterError

__all__ = [
    "FEW_TASKS",
    "Executor",
    "RemoteTraceback",
    "TaskFunction",
    "cpu_count",
    "progress_bar",
    "show_progress",
    "task_label",
]

#: Runs with at most this many tasks get no automatic progress bar.
FEW_TASKS = 4

#: ``fn(task, shared) -> result``
TaskFunction = Callable[[Any, Any], Any]


def cpu_count() -> int:
    """The number of CPUs this process may run on (affinity-aware), at least 1."""
    if hasattr(os, "process_cpu_count"):  # Python 3.13+
        n = os.process_cpu_count()
    elif hasattr(os, "sched_getaffinity"):
        n = len(os.sched_getaffinity(0))
    else:  # pragma: no cover - macOS / Windows
        n = os.cpu_count()
    return max(1, n or 1)


def _check_workers(workers: Any) -> int:
    if workers is None:
        return cpu_count()
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InvalidParameterError(
            f"The 'workers' parameter must be a positive int or None (the CPU count). Got {workers!r} instead."
        )
    return workers


def _check_progress(progress: Any) -> bool | None:
    if progress is not None and not isinstance(progress, bool):
        raise InvalidParameterError(
            f"The 'progress' parameter must be True, False or None (on a terminal). Got {progress!r} instead."
        )
    return progress


def show_progress(progress: bool | None, n_tasks: int, stream: Any = None) -> bool:
    """Whether to draw a progress bar: forced by ``progress``, else only on a TTY with many tasks."""
    if progress is not None:
        return progress
    if n_tasks <= FEW_TASKS:
        return False
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed or replaced stream
        return False


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: Any) -> None:
        pass


def progress_bar(total: int, *, enabled: bool, desc: str | None = None) -> Any:
    """A tqdm bar over ``total`` tasks when ``enabled``, else an object with the same ``update``/``close``."""
    if not enabled:
        return _NoBar()
    from tqdm.auto import tqdm  # imported only when a bar is drawn

    return tqdm(total=total, desc=desc or "shards", unit="shard", leave=False, file=sys.stderr)


def task_label(task: Any, position: int) -> int:
    """The number errors use for a task: its ``index`` attribute (the shard) or its position."""
    index = getattr(task, "index", None)
    return index if isinstance(index, int) and not isinstance(index, bool) else position


class RemoteTraceback(Exception):
    """The formatted traceback of an exception raised in another process (set as its ``__cause__``)."""

    def __init__(self, tb: str) -> None:
        super().__init__(tb)
        self.tb = tb

    def __str__(self) -> str:
        return f'\n"""\n{self.tb}"""'


class Executor:
    """Base class of executors: runs ``fn(task, shared)`` for every task, results in task order.

    See the module docstring for the full protocol. Subclasses set :attr:`name` and
    implement :meth:`run`.

    Parameters
    ----------
    workers : int, optional
        How many tasks may run at once. Default: the number of CPUs this process may
        use (:func:`cpu_count`).
    progress : bool, optional
        ``True`` / ``False`` forces the progress bar on / off; ``None`` (default) shows it
        on a terminal for runs of more than :data:`FEW_TASKS` tasks.
    """

    #: The registered name (``load_executor(name)``).
    name: ClassVar[str] = ""

    def __init__(self, *, workers: int | None = None, progress: bool | None = None) -> None:
        self.workers = _check_workers(workers)
        self.progress = _check_progress(progress)

    def run(self, fn: TaskFunction, tasks: Sequence[Any], shared: Any, *,
            progress: bool | None = None, desc: str | None = None) -> list[Any]:
        """Run ``fn(task, shared)`` for every task; return the results in task order."""
        raise NotImplementedError(f"{type(self).__name__} must implement run(fn, tasks, shared, *, progress, desc)")

    def close(self) -> None:
        """Release threads, processes or remote resources (a no-op by default)."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # helpers for subclasses -------------------------------------------------
    def _bar(self, n_tasks: int, progress: bool | None, desc: str | None) -> Any:
        chosen = _check_progress(progress) if progress is not None else self.progress
        return progress_bar(n_tasks, enabled=show_progress(chosen, n_tasks), desc=desc)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(workers={self.workers}, progress={self.progress})"
