"""assay's own executors, registered through ``assay_register_executors`` like any plugin.

========== ============================================================================
name       runs the tasks
========== ============================================================================
serial     one after the other in this process (what ``sequentialEvaluate`` uses)
threads    in a thread pool in this process (for evaluators that release the GIL or wait on I/O)
processes  in worker processes (the default of ``parallelEvaluate``), see
           :class:`~assay.executors._processes.ProcessExecutor`
========== ============================================================================

All follow the protocol of :mod:`assay.executors.base`: ``run(fn, tasks, shared)``
returns the results in task order; ``shared`` reaches each worker once.

>>> from assay import load_executor
>>> load_executor("threads[workers=2]").run(pow, [1, 2, 3], 2)
[1, 4, 9]
"""

from __future__ import annotations

from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import Any, Sequence

from assay.executors._processes import ProcessExecutor
from assay.executors.base import Executor, TaskFunction
from assay.plugins.hookspecs import hookimpl

__all__ = ["ProcessExecutor", "SerialExecutor", "ThreadExecutor"]


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
    """Run the tasks in a pool of ``workers`` threads; ``shared`` is the same object in every thread.

    Useful when the sentence evaluator releases the GIL (numpy, a C parser) or waits on
    I/O; pure-Python evaluators gain nothing from threads (use ``processes``).
    """

    name = "threads"

    def run(self, fn: TaskFunction, tasks: Sequence[Any], shared: Any, *,
            progress: bool | None = None, desc: str | None = None) -> list[Any]:
        tasks = list(tasks)
        if not tasks:
            return []
        bar = self._bar(len(tasks), progress, desc)
        pool = ThreadPoolExecutor(max_workers=min(self.workers, len(tasks)), thread_name_prefix="assay-worker")
        try:
            futures: list[Future[Any]] = [pool.submit(fn, task, shared) for task in tasks]
            for future in futures:
                future.add_done_callback(lambda _f: bar.update(1))
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            for future in futures:  # the first failure in task order among those that finished
                if future in done and future.exception() is not None:
                    for other in futures:
                        other.cancel()
                    raise future.exception()  # type: ignore[misc]
            return [future.result() for future in futures]
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            bar.close()


@hookimpl
def assay_register_executors(register):
    register("serial", SerialExecutor, description="Run shards one after the other in this process")
    register("threads", ThreadExecutor, description="Run shards in a thread pool in this process")
    register("processes", ProcessExecutor,
             description="Run shards in worker processes (data and model inherited on Linux); the default")
