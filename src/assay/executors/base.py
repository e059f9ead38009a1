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

- A task that runs longer than the executor's ``timeout`` raises
  :class:`~assay.errors.EvaluationTimeoutError` (an ``EvaluationError`` and a
  ``TimeoutError``) naming the shard(s) still running and the bound.

Options every executor accepts as keywords (through ``load_executor("name[k=v]")``):
``workers`` (a positive int, default: the number of CPUs this process may use) and
``progress`` (``None``/``True``/``False``). Executors may take more: ``threads``,
``processes`` and ``spark`` take ``timeout``, ``processes`` takes ``start_method``.

``timeout`` (seconds, a number > 0, or ``None`` for no bound: the default) bounds each
**task** (shard), measured from the moment a worker starts it, so the bound does not
grow with the pool: pick it from the slowest shard you expect. On expiry ``processes``
kills and reaps every worker before raising; ``threads`` cannot kill a running thread,
so the call returns at once and the stuck thread finishes in the background (a daemon
thread; its result is discarded). Validate it with :func:`check_timeout`.

Signals: while ``threads`` or ``processes`` runs in the main thread, SIGTERM and SIGHUP
(when their handler is the default) raise :class:`Interrupted` (a ``KeyboardInterrupt``)
like Ctrl-C does, so workers are stopped and reaped before the exception leaves
``run``; the previous handlers are restored afterwards (:func:`terminate_as_interrupt`).

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
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar

from assay.core.protocols import Labelled, TaskFunction
from assay.errors import InvalidParameterError

__all__ = [
    "FEW_TASKS",
    "Executor",
    "Interrupted",
    "RemoteTraceback",
    "TaskFunction",
    "check_timeout",
    "cpu_count",
    "progress_bar",
    "show_progress",
    "task_label",
    "terminate_as_interrupt",
]

#: Runs with at most this many tasks get no automatic progress bar.
FEW_TASKS = 4


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


def check_timeout(timeout: Any, executor: str = "") -> float | None:
    """``timeout`` as a float of seconds > 0, or None (no bound); else :class:`InvalidParameterError`."""
    if timeout is None:
        return None
    where = f" of the {executor} executor" if executor else ""
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0 \
            or timeout == float("inf"):
        raise InvalidParameterError(
            f"The 'timeout' parameter{where} must be a finite number of seconds > 0 (per shard) or None "
            f"(no bound). Got {timeout!r} instead."
        )
    return float(timeout)


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived while an executor ran: raised like Ctrl-C's ``KeyboardInterrupt``.

    ``signum`` is the signal. By the time it leaves ``run`` the workers are stopped.
    """

    def __init__(self, signum: int) -> None:
        try:
            name = signal.Signals(signum).name
        except ValueError:  # pragma: no cover
            name = f"signal {signum}"
        super().__init__(f"{name} received during an assay run; its workers were stopped")
        self.signum = signum


def _raise_interrupted(signum: int, frame: Any) -> None:
    raise Interrupted(signum)


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """While the block runs, SIGTERM / SIGHUP raise :class:`Interrupted` in the main thread.

    Only signals whose handler is the default (``SIG_DFL``) are taken: an ignored signal
    (``nohup``) stays ignored and an application's own handler stays in charge. Outside the
    main thread (where Python cannot set handlers) this does nothing. The previous handlers
    are restored when the block ends.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    taken: dict[int, Any] = {}
    for name in ("SIGTERM", "SIGHUP"):
        signum = getattr(signal, name, None)
        if signum is None:  # pragma: no cover - SIGHUP on Windows
            continue
        try:
            if signal.getsignal(signum) is signal.SIG_DFL:
                signal.signal(signum, _raise_interrupted)
                taken[signum] = signal.SIG_DFL
        except (ValueError, OSError):  # pragma: no cover - not the main interpreter
            continue
    try:
        yield
    finally:
        for signum, previous in taken.items():
            signal.signal(signum, previous)


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
    from tqdm.auto import tqdm  # deferred: tqdm (with its auto-detection), imported only when a bar is drawn

    return tqdm(total=total, desc=desc or "shards", unit="shard", leave=False, file=sys.stderr)


def task_label(task: object, position: int) -> int:
    """The number errors use for a task: its ``index`` (a :class:`~assay.core.protocols.Labelled` task: a shard)
    or its position."""
    if isinstance(task, Labelled):
        index = task.index
        if isinstance(index, int) and not isinstance(index, bool):
            return index
    return position


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
