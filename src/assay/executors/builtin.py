"""assay's own executors, registered through ``assay_register_executors`` like any plugin.

========== ============================================================================
name       runs the tasks
========== ============================================================================
serial     one after the other in this process (what ``sequentialEvaluate`` uses)
threads    in a thread pool in this process (for evaluators that release the GIL or wait on I/O)
processes  in worker processes (the default of ``parallelEvaluate``), see
           :class:`~assay.executors._processes.ProcessExecutor`
dask       as tasks on a Dask cluster (``assay[dask]``), see :class:`~assay.executors.dask.DaskExecutor`
========== ============================================================================

All follow the protocol of :mod:`assay.executors.base`: ``run(fn, tasks, shared)``
returns the results in task order; ``shared`` reaches each worker once.

>>> from assay import load_executor
>>> load_executor("threads[workers=2]").run(pow, [1, 2, 3], 2)
[1, 4, 9]
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Sequence
from typing import Any, ClassVar

from assay.executors._processes import ProcessExecutor, _timeout_error, base_exception_error
from assay.executors.base import Executor, TaskFunction, check_timeout, task_label, terminate_as_interrupt
from assay.executors.dask import DaskExecutor  # imports dask only when one is created
from assay.plugins.hookspecs import Register, hookimpl

__all__ = ["DaskExecutor", "ProcessExecutor", "SerialExecutor", "ThreadExecutor"]


class SerialExecutor(Executor):
    """Run the tasks one after the other in the calling process (``workers`` is ignored).

    >>> SerialExecutor().run(divmod, [7, 9], 4)
    [(1, 3), (2, 1)]
    """

    name = "serial"

    def __init__(self, *, workers: int | None = None, progress: bool | None = None) -> None:
        super().__init__(workers=workers, progress=progress)
        self.workers = 1

    def run(self, fn: TaskFunction, tasks: Sequence[Any], shared: Any, *,
            progress: bool | None = None, desc: str | None = None) -> list[Any]:
        tasks = list(tasks)
        results: list[Any] = []
        bar = self._bar(len(tasks), progress, desc)
        try:
            for task in tasks:
                results.append(fn(task, shared))
                bar.update(1)
        finally:
            bar.close()
        return results


class ThreadExecutor(Executor):
    """Run the tasks in ``workers`` threads; ``shared`` is the same object in every thread.

    Useful when the sentence evaluator releases the GIL (numpy, a C parser) or waits on
    I/O; pure-Python evaluators gain nothing from threads (use ``processes``).

    Parameters
    ----------
    workers, progress
        As for every executor (:class:`~assay.executors.base.Executor`).
    timeout : float, optional
        The most seconds one task (shard) may run, from the moment a thread starts it;
        ``None`` (default): no bound. On expiry :class:`~assay.errors.EvaluationTimeoutError`
        names the shard(s) and the bound.

    Notes
    -----
    The calling thread waits in short slices, so Ctrl-C (``KeyboardInterrupt``), SIGTERM
    (:class:`~assay.executors.base.Interrupted`), a timeout or a failing task ends the call
    at once. A running thread cannot be killed: it is a daemon thread that finishes its
    current task in the background (its result is discarded, it starts no other task) and
    does not keep the interpreter alive at exit.
    """

    name = "threads"

    #: How often (seconds) the waiting thread wakes to check for a deadline.
    poll_interval: ClassVar[float] = 0.05

    def __init__(self, *, workers: int | None = None, progress: bool | None = None,
                 timeout: float | None = None) -> None:
        super().__init__(workers=workers, progress=progress)
        self.timeout = check_timeout(timeout, "threads")

    def __repr__(self) -> str:
        return f"ThreadExecutor(workers={self.workers}, progress={self.progress}, timeout={self.timeout})"

    def run(self, fn: TaskFunction, tasks: Sequence[Any], shared: Any, *,
            progress: bool | None = None, desc: str | None = None) -> list[Any]:
        tasks = list(tasks)
        if not tasks:
            return []
        state = _ThreadRun(fn, tasks, shared)
        bar = self._bar(len(tasks), progress, desc)
        try:
            with terminate_as_interrupt():
                for i in range(min(self.workers, len(tasks))):
                    threading.Thread(target=state.work, name=f"assay-worker-{i}", daemon=True).start()
                shown = 0
                with state.cond:
                    while True:
                        if state.finished != shown:
                            bar.update(state.finished - shown)
                            shown = state.finished
                        if state.errors:  # the first failure in task order among those that finished
                            number = min(state.errors)
                            raise _thread_error(state.errors[number], tasks[number], number)
                        if state.finished == len(tasks):
                            return state.results
                        if self.timeout is not None:
                            now = time.monotonic()
                            late = sorted(n for n, t0 in state.started.items() if now - t0 >= self.timeout)
                            if late:
                                raise _timeout_error(late, tasks, list(state.started), self.timeout,
                                                     "threads", "the threads finish in the background")
                        state.cond.wait(self.poll_interval)
        finally:
            state.abandon()
            bar.close()


class _ThreadRun:
    """The shared state of one ``ThreadExecutor.run``: a queue of task numbers, results, errors."""

    def __init__(self, fn: TaskFunction, tasks: list[Any], shared: Any) -> None:
        self.fn, self.tasks, self.shared = fn, tasks, shared
        self.cond = threading.Condition()
        self.pending = deque(range(len(tasks)))
        self.results: list[Any] = [None] * len(tasks)
        self.errors: dict[int, BaseException] = {}
        self.started: dict[int, float] = {}
        self.finished = 0
        self.abandoned = False

    def abandon(self) -> None:
        """Start no more tasks; results still arriving are dropped."""
        with self.cond:
            self.abandoned = True
            self.pending.clear()

    def work(self) -> None:
        while True:
            with self.cond:
                if self.abandoned or not self.pending:
                    return
                number = self.pending.popleft()
                self.started[number] = time.monotonic()
            try:
                result = self.fn(self.tasks[number], self.shared)
            except BaseException as exc:  # noqa: BLE001 - SystemExit in a thread must not vanish
                with self.cond:
                    self.started.pop(number, None)
                    if not self.abandoned:
                        self.errors[number] = exc
                    self.cond.notify_all()
                return
            with self.cond:
                self.started.pop(number, None)
                if self.abandoned:
                    return
                self.results[number] = result
                self.finished += 1
                self.cond.notify_all()


def _thread_error(exc: BaseException, task: Any, number: int) -> BaseException:
    """The exception to raise for a failed task: itself, or an EvaluationError for a BaseException."""
    if isinstance(exc, Exception):
        return exc
    return base_exception_error(exc, task_label(task, number), "a worker thread")


@hookimpl
def assay_register_executors(register: Register) -> None:
    register("serial", SerialExecutor, description="Run shards one after the other in this process")
    register("threads", ThreadExecutor, description="Run shards in a thread pool in this process")
    register("processes", ProcessExecutor,
             description="Run shards in worker processes (data and model inherited on Linux); the default")
    register("dask", DaskExecutor,
             description="Run shards as tasks on a Dask cluster, the model scattered once (needs assay[dask])")
