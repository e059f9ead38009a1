"""The ``processes`` executor: tasks in worker processes, shared state inherited, deaths detected.

Why not ``concurrent.futures.ProcessPoolExecutor``: it pickles every task (for an
evaluation, every shard's items) and, when a worker dies, fails all pending futures
with ``BrokenProcessPool`` without saying which task the dead worker held. This small
pool does neither:

- With the ``fork`` start method (the default on Linux) each worker is forked after
  ``fn``, ``tasks`` and ``shared`` are in place, so it *inherits* them: nothing of the
  data or the model is pickled; the parent sends a task's number and gets back its
  result. With ``spawn`` / ``forkserver`` (the default elsewhere) ``fn`` and ``shared``
  are pickled once per worker (as process arguments) and each task once.
- Each worker holds at most one task at a time, so when its process sentinel fires
  without an answer the parent knows exactly which task was lost and raises
  :class:`~assay.errors.WorkerDiedError` naming it.

Workers live for one ``run`` call (forking is cheap, and a fresh fork sees the current
data). They ignore SIGINT, so Ctrl-C reaches only the parent, which then terminates them.
"""

from __future__ import annotations

import gc
import multiprocessing
import pickle
import signal
import sys
import traceback
from collections import deque
from multiprocessing.connection import Connection, wait
from typing import Any, Sequence

from assay.errors import InvalidParameterError, WorkerDiedError
from assay.executors.base import Executor, RemoteTraceback, TaskFunction, task_label

__all__ = ["ProcessExecutor", "default_start_method"]

_START_METHODS = ("fork", "spawn", "forkserver")


def default_start_method() -> str:
    """``fork`` on Linux (workers inherit data and model), ``spawn`` elsewhere (fork is unsafe on macOS)."""
    available = multiprocessing.get_all_start_methods()
    if sys.platform.startswith("linux") and "fork" in available:
        return "fork"
    return "spawn"


# ----------------------------------------------------------------- worker side
def _pack_exception(exc: BaseException) -> bytes:
    """Pickle ``exc`` with its cause and formatted traceback, degrading to a RuntimeError if it will not."""
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    for candidate in ((exc, exc.__cause__), (exc, None)):
        try:
            data = pickle.dumps((candidate[0], candidate[1], tb))
            pickle.loads(data)  # some exceptions pickle but cannot be rebuilt
            return data
        except Exception:  # noqa: BLE001
            continue
    stand_in = RuntimeError(f"{type(exc).__module__}.{type(exc).__qualname__}: {exc} (the original exception "
                            "could not be pickled back from the worker)")
    return pickle.dumps((stand_in, None, tb))


def _worker(conn: Connection, fn: TaskFunction, tasks: Sequence[Any] | None, shared: Any,
            inherited: Sequence[Connection]) -> None:
    """Worker loop: receive ``(number, task or None)``, answer ``("ok"|"err", number, payload)``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for other in inherited:  # the parent's ends of the pipes, copied by fork: close them here
        try:
            other.close()
        except OSError:
            pass
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):  # the parent went away
            return
        if message is None:
            return
        number, task = message
        if tasks is not None:
            task = tasks[number]
        try:
            result = fn(task, shared)
        except BaseException as exc:  # noqa: BLE001 - report everything, including SystemExit
            conn.send_bytes(pickle.dumps(("err", number, _pack_exception(exc))))
            continue
        try:
            payload = pickle.dumps(("ok", number, result))
        except Exception as exc:  # noqa: BLE001 - an unpicklable result
            conn.send_bytes(pickle.dumps(("err", number, _pack_exception(exc))))
            continue
        conn.send_bytes(payload)


# ----------------------------------------------------------------- parent side
class _Worker:
    __slots__ = ("process", "conn", "task")

    def __init__(self, process: Any, conn: Connection) -> None:
        self.process = process
        self.conn = conn
        self.task: int | None = None


def _death_message(worker: _Worker, label: int) -> str:
    worker.process.join(timeout=1.0)
    code = worker.process.exitcode
    if code is not None and code < 0:
        try:
            how = f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            how = f"killed by signal {-code}"
    elif code is None:
        how = "closed its connection"
    else:
        how = f"exited with code {code}"
    return (f"Worker process {worker.process.pid} {how} while running shard {label}; that shard has no "
            "result, so the run is aborted rather than returning a smaller total. (A worker killed by "
            "SIGKILL is often the out-of-memory killer: try fewer workers or smaller shards.)")


class ProcessExecutor(Executor):
    """Run tasks in worker processes (``processes``, the default of ``parallelEvaluate``).

    Parameters
    ----------
    workers : int, optional
        Worker processes (default: the usable CPU count); never more than there are tasks.
    progress : bool, optional
        Progress bar: forced on/off, or ``None`` for "on a terminal with more than a few tasks".
    start_method : {"fork", "spawn", "forkserver"}, optional
        How workers start. Default ``fork`` on Linux (data and model are inherited, only
        task numbers and results are pickled), ``spawn`` elsewhere (``fn`` and ``shared``
        pickled once per worker, each task once).

    Examples
    --------
    >>> from assay import load_executor
    >>> ex = load_executor("processes[workers=2]")
    >>> ex.run(divmod, [7, 9, 11], 4)
    [(1, 3), (2, 1), (2, 3)]
    """

    name = "processes"

    def __init__(self, *, workers: int | None = None, progress: bool | None = None,
                 start_method: str | None = None) -> None:
        super().__init__(workers=workers, progress=progress)
        if start_method is None:
            start_method = default_start_method()
        available = multiprocessing.get_all_start_methods()
        if start_method not in _START_METHODS or start_method not in available:
            raise InvalidParameterError(
                f"The 'start_method' parameter of the processes executor must be one of "
                f"{', '.join(repr(m) for m in available)}. Got {start_method!r} instead."
            )
        self.start_method = start_method

    def __repr__(self) -> str:
        return (f"ProcessExecutor(workers={self.workers}, progress={self.progress}, "
                f"start_method={self.start_method!r})")

    def run(self, fn: TaskFunction, tasks: Sequence[Any], shared: Any, *,
            progress: bool | None = None, desc: str | None = None) -> list[Any]:
        tasks = list(tasks)
        if not tasks:
            return []
        ctx = multiprocessing.get_context(self.start_method)
        inherit = self.start_method == "fork"
        workers: list[_Worker] = []
        results: list[Any] = [None] * len(tasks)
        # Objects the children inherit stay out of their garbage collector, so a collection in a
        # child does not touch (and copy-on-write) every page of the pool and the model. Skipped
        # when the application froze objects itself (unfreeze would undo that).
        inherit_frozen = inherit and gc.get_freeze_count() == 0
        if inherit_frozen:
            gc.freeze()
        try:
            parent_ends: list[Connection] = []
            for _ in range(min(self.workers, len(tasks))):
                parent_end, child_end = ctx.Pipe(duplex=True)
                process = ctx.Process(
                    target=_worker,
                    args=(child_end, fn, tasks if inherit else None, shared, list(parent_ends) if inherit else []),
                    name=f"assay-worker-{len(workers)}",
                    daemon=False,  # allows a worker's own fn to use processes; cleaned up in ``finally``
                )
                process.start()
                child_end.close()
                parent_ends.append(parent_end)
                workers.append(_Worker(process, parent_end))
            if inherit_frozen:
                gc.unfreeze()
                inherit_frozen = False
            self._dispatch(workers, tasks, results, inherit, progress, desc)
            return results
        finally:
            if inherit_frozen:  # a worker failed to start
                gc.unfreeze()
            self._shutdown(workers)

    def _dispatch(self, workers: list[_Worker], tasks: list[Any], results: list[Any], inherit: bool,
                  progress: bool | None, desc: str | None) -> None:
        pending = deque(range(len(tasks)))
        idle = list(reversed(workers))
        busy: dict[Any, _Worker] = {}
        remaining = len(tasks)
        bar = self._bar(len(tasks), progress, desc)
        try:
            while remaining:
                while idle and pending:
                    worker = idle.pop()
                    number = pending.popleft()
                    worker.task = number
                    worker.conn.send((number, None if inherit else tasks[number]))
                    busy[worker.conn] = worker
                    busy[worker.process.sentinel] = worker
                ready = wait(list(busy))
                for handle in ready:
                    worker = busy.get(handle)
                    if worker is None or worker.task is None:
                        continue  # already handled through its other handle
                    number = worker.task
                    label = task_label(tasks[number], number)
                    message = self._receive(worker)
                    if message is None:
                        raise WorkerDiedError(_death_message(worker, label), shard=label)
                    kind, answered, payload = message
                    worker.task = None
                    del busy[worker.conn], busy[worker.process.sentinel]
                    if kind == "err":
                        exc, cause, tb = pickle.loads(payload)
                        _chain(exc, cause, tb)
                        raise exc
                    results[answered] = payload
                    remaining -= 1
                    bar.update(1)
                    idle.append(worker)
        finally:
            bar.close()

    @staticmethod
    def _receive(worker: _Worker) -> tuple[str, int, Any] | None:
        """The worker's answer, or None when it died (its sentinel fired with nothing to read)."""
        try:
            if not worker.conn.poll():
                # The sentinel fired: the process ended. Give a last answer in flight a moment.
                if not worker.conn.poll(0.05):
                    return None
            return pickle.loads(worker.conn.recv_bytes())
        except (EOFError, OSError, pickle.UnpicklingError):
            return None

    @staticmethod
    def _shutdown(workers: list[_Worker]) -> None:
        for worker in workers:
            if worker.task is None and worker.process.is_alive():
                try:
                    worker.conn.send(None)
                except OSError:
                    pass
        for worker in workers:
            if worker.task is not None:  # still busy after an error elsewhere: stop it now
                worker.process.terminate()
        for worker in workers:
            worker.process.join(timeout=5.0)
            if worker.process.is_alive():  # pragma: no cover - a worker stuck in C code
                worker.process.kill()
                worker.process.join()
            worker.conn.close()
            try:
                worker.process.close()
            except ValueError:  # pragma: no cover
                pass


def _chain(exc: BaseException, cause: BaseException | None, tb: str) -> None:
    """Re-attach what pickling dropped: the original cause, then the remote traceback under it."""
    remote = RemoteTraceback(tb)
    if cause is not None:
        exc.__cause__ = cause
        if cause.__cause__ is None:
            cause.__cause__ = remote
    else:
        exc.__cause__ = remote

