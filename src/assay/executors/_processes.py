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

Nothing hangs, nothing is left behind:

- ``timeout`` bounds each task (from the moment a worker starts it); on expiry every
  worker is killed and reaped and :class:`~assay.errors.EvaluationTimeoutError` names the
  shard(s) still running.
- Workers die with their parent: on Linux each worker asks the kernel for SIGKILL when
  its parent dies (``PR_SET_PDEATHSIG``) and then checks that the parent is still the one
  that started it (closing the race with a parent that died in between); elsewhere a
  daemon thread in the worker watches the parent. SIGTERM / SIGHUP to the parent during a
  run are handled like Ctrl-C (:func:`~assay.executors.base.terminate_as_interrupt`).
- With ``spawn`` / ``forkserver`` an unpicklable ``fn`` / ``shared`` part is named (for an
  evaluation: the sentence evaluator, the evaluator object or the model), and a script
  that calls the evaluation outside ``if __name__ == "__main__":`` is refused with that
  advice before any worker starts.
- A ``BaseException`` that is not an ``Exception`` (``SystemExit``, ``KeyboardInterrupt``
  raised by the task itself, ...) comes back as an :class:`~assay.errors.EvaluationError`
  naming the shard and, for evaluations, the item; it never ends the caller.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, Literal

from assay.core.protocols import ShardLike
from assay.errors import EvaluationError, EvaluationTimeoutError, InvalidParameterError, WorkerDiedError
from assay.executors._diagnose import main_guard_error, unguarded_main_call, unpicklable_part
from assay.executors.base import (
    Executor,
    RemoteTraceback,
    TaskFunction,
    _raise_interrupted,
    check_timeout,
    task_label,
    terminate_as_interrupt,
)

__all__ = ["ProcessExecutor", "base_exception_error", "default_start_method"]

StartMethod = Literal["fork", "spawn", "forkserver"]
_START_METHODS: tuple[StartMethod, ...] = ("fork", "spawn", "forkserver")


def _check_start_method(method: object) -> StartMethod:
    """``method`` when it is a start method this platform offers, else the error naming them."""
    available = multiprocessing.get_all_start_methods()
    for known in _START_METHODS:
        if method == known and known in available:
            return known
    raise InvalidParameterError(
        f"The 'start_method' parameter of the processes executor must be one of "
        f"{', '.join(repr(m) for m in available)}. Got {method!r} instead."
    )


def default_start_method() -> StartMethod:
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
            pickle.loads(data)  # our own bytes, just made: some exceptions pickle but cannot be rebuilt
            return data
        except Exception:  # noqa: BLE001
            continue
    stand_in = RuntimeError(f"{type(exc).__module__}.{type(exc).__qualname__}: {exc} (the original exception "
                            "could not be pickled back from the worker)")
    return pickle.dumps((stand_in, None, tb))


def base_exception_error(exc: BaseException, label: int, where: str) -> EvaluationError:
    """An :class:`EvaluationError` for a ``BaseException`` (``SystemExit``, ...) a task raised in a worker.

    The item is found in the traceback when the task is :func:`~assay.core.evaluator.evaluate_shard`
    (or any frame with a ``shard`` that is a :class:`~assay.core.protocols.ShardLike` and an ``offset``).
    """
    item = None
    place = ""
    tb = exc.__traceback__
    while tb is not None:  # the innermost frame that knows the shard and the offset
        local = tb.tb_frame.f_locals
        shard = local.get("shard")
        offset = local.get("offset")
        if isinstance(shard, ShardLike) and isinstance(offset, int) and offset >= 0:
            try:
                item = shard.pool_index(offset)
                place = f" on {shard.describe(offset)}"
            except Exception:  # noqa: BLE001 - locating is best effort
                pass
        tb = tb.tb_next
    what = f"{type(exc).__name__}({exc})" if str(exc) else type(exc).__name__
    error = EvaluationError(
        f"The task raised {what}{place} (shard {label}) in {where}; it is reported as an error instead of "
        "ending the caller.", shard=label, item=item,
    )
    error.__cause__ = exc
    return error


def _undo_run_handlers_in_child() -> None:
    """First thing in any forked child: SIGTERM / SIGHUP back to their defaults if an assay run holds them.

    During a run the parent raises :class:`~assay.executors.base.Interrupted` on SIGTERM / SIGHUP
    (:func:`~assay.executors.base.terminate_as_interrupt`). A worker inherits that handler with the
    fork, and :func:`_worker` undoes it only once multiprocessing has bootstrapped the process: a
    worker killed with SIGTERM in between would raise ``Interrupted`` there and print its traceback
    on stderr. Run at fork time (``os.register_at_fork``), before any Python code of the child, so
    such a worker just ends and the parent names the shard it was starting.
    """
    for name in ("SIGTERM", "SIGHUP"):
        signum = getattr(signal, name, None)
        with contextlib.suppress(ValueError, OSError):
            if signum is not None and signal.getsignal(signum) is _raise_interrupted:
                signal.signal(signum, signal.SIG_DFL)


if hasattr(os, "register_at_fork"):  # pragma: no branch - POSIX
    os.register_at_fork(after_in_child=_undo_run_handlers_in_child)

_PR_SET_PDEATHSIG = 1
_NOTHING = object()  # a worker's pipe held only its "ready"


def _die_with_parent(parent_pid: int, start_method: str) -> None:
    """Make this worker end when its parent does (PR_SET_PDEATHSIG on Linux, a watch thread elsewhere).

    Under ``forkserver`` the worker's parent is the fork server, which outlives the caller
    while any worker holds its "alive" pipe, so the worker watches the caller's sentinel
    (a pipe only the caller holds) in a daemon thread instead.
    """
    if start_method == "forkserver":
        sentinel = getattr(multiprocessing.parent_process(), "sentinel", None)
        if sentinel is not None:
            if wait([sentinel], timeout=0):  # the caller already died
                os._exit(1)

            def watch_sentinel() -> None:
                wait([sentinel])
                os._exit(1)

            threading.Thread(target=watch_sentinel, name="assay-parent-watch", daemon=True).start()
            return
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
        except (OSError, AttributeError):  # pragma: no cover - no libc / no prctl
            armed = False
        if armed:
            if os.getppid() != parent_pid:  # the parent died before the prctl: the signal never comes
                os._exit(1)
            return
    watched = os.getppid()  # pragma: no cover - non-Linux

    def watch() -> None:  # pragma: no cover - non-Linux
        while True:
            time.sleep(0.25)
            if os.getppid() != watched:
                os._exit(1)

    threading.Thread(target=watch, name="assay-parent-watch", daemon=True).start()  # pragma: no cover


def _worker(conn: Connection, fn: TaskFunction, tasks: Sequence[Any] | None, shared: Any,
            inherited: Sequence[Connection], parent_pid: int = 0, start_method: str = "fork") -> None:
    """Worker loop: say "ready", then receive ``(number, task or None)``, answer ``(kind, number, payload)``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in ("SIGTERM", "SIGHUP"):  # a fork inherits the parent's run-time handlers: undo them
        signum = getattr(signal, name, None)
        if signum is not None and signal.getsignal(signum) is _raise_interrupted:
            signal.signal(signum, signal.SIG_DFL)
    if parent_pid:
        _die_with_parent(parent_pid, start_method)
    for other in inherited:  # the parent's ends of the pipes, copied by fork: close them here
        with contextlib.suppress(OSError):
            other.close()
    try:
        conn.send_bytes(pickle.dumps(("ready", -1, None)))
    except OSError:
        return
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
        label = task_label(task, number)
        try:
            result = fn(task, shared)
        except BaseException as exc:  # noqa: BLE001 - report everything, including SystemExit
            if not isinstance(exc, Exception):
                exc = base_exception_error(exc, label, f"worker process {os.getpid()}")
            conn.send_bytes(pickle.dumps(("err", number, _pack_exception(exc))))
            continue
        try:
            payload = pickle.dumps(("ok", number, result))
        except Exception as exc:  # noqa: BLE001 - an unpicklable result
            error = EvaluationError(
                f"The result of shard {label} ({type(result).__name__}) could not be pickled back from worker "
                f"process {os.getpid()} (start method {start_method!r}): {type(exc).__name__}: {exc}",
                shard=label,
            )
            error.__cause__ = exc
            conn.send_bytes(pickle.dumps(("err", number, _pack_exception(error))))
            continue
        conn.send_bytes(payload)


# ----------------------------------------------------------------- parent side
class _Worker:
    __slots__ = ("process", "conn", "task", "started", "ready")

    def __init__(self, process: Any, conn: Connection) -> None:
        self.process = process
        self.conn = conn
        self.task: int | None = None
        self.started = 0.0
        self.ready = False


def _death_message(worker: _Worker, label: int, start_method: str) -> str:
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
    message = (f"Worker process {worker.process.pid} {how} while running shard {label}; that shard has no "
               "result, so the run is aborted rather than returning a smaller total.")
    if not worker.ready and start_method != "fork":
        message += (f" It died before it started (start method {start_method!r}): it could not import the "
                    "main module or unpickle the task function and shared state; its own error is on stderr. "
                    "A script must run the evaluation under `if __name__ == '__main__':`.")
    elif code == -signal.SIGKILL:
        message += (" (A worker killed by SIGKILL is often the out-of-memory killer: try fewer workers or "
                    "smaller shards.)")
    return message


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
    timeout : float, optional
        The most seconds one task (shard) may run, from the moment a worker starts it;
        ``None`` (default): no bound. A worker's first shard is handed over while it
        starts, so its clock restarts when the worker reports it is up (a worker that
        never comes up times out too). On expiry every worker is killed and reaped, then
        :class:`~assay.errors.EvaluationTimeoutError` names the shard(s) and the bound.

    Examples
    --------
    >>> from assay import load_executor
    >>> ex = load_executor("processes[workers=2]")
    >>> ex.run(divmod, [7, 9, 11], 4)
    [(1, 3), (2, 1), (2, 3)]
    """

    name = "processes"

    #: Seconds a stopped worker gets to exit after SIGTERM before SIGKILL.
    kill_grace: float = 1.0

    #: Seconds a ``fork`` worker may take to come up (from the fork to its "ready"), whatever
    #: ``timeout`` says; None: no bound. A forked worker is up in milliseconds; one that is not
    #: after this long is stuck on a lock another thread of the parent held at the fork (the child
    #: has a copy of the lock and not the thread that would release it), and the run ends in
    #: :class:`~assay.errors.EvaluationTimeoutError` naming the shard it was handed. Set it on the
    #: class or on one executor (``ex.start_timeout = 300``). ``spawn`` / ``forkserver`` workers,
    #: which import the main module first, are bounded by ``timeout`` only.
    start_timeout: float | None = 60.0

    def __init__(self, *, workers: int | None = None, progress: bool | None = None,
                 start_method: str | None = None, timeout: float | None = None) -> None:
        super().__init__(workers=workers, progress=progress)
        self.start_method = _check_start_method(default_start_method() if start_method is None else start_method)
        self.timeout = check_timeout(timeout, "processes")

    def __repr__(self) -> str:
        return (f"ProcessExecutor(workers={self.workers}, progress={self.progress}, "
                f"start_method={self.start_method!r}, timeout={self.timeout})")

    def run(self, fn: TaskFunction, tasks: Sequence[Any], shared: Any, *,
            progress: bool | None = None, desc: str | None = None) -> list[Any]:
        tasks = list(tasks)
        if not tasks:
            return []
        method = self.start_method
        inherit = method == "fork"
        if not inherit:
            if getattr(multiprocessing.current_process(), "_inheriting", False):
                # We are a worker importing the main script that started us: refuse loudly.
                main_at = unguarded_main_call() or (getattr(sys.modules.get("__main__"), "__file__", "?"), 0)
                raise main_guard_error(method, main_at)
            where = unguarded_main_call()
            if where is not None:
                raise main_guard_error(method, where)
        ctx = multiprocessing.get_context(method)
        workers: list[_Worker] = []
        results: list[Any] = [None] * len(tasks)
        # Objects the children inherit stay out of their garbage collector, so a collection in a
        # child does not touch (and copy-on-write) every page of the pool and the model. Skipped
        # when the application froze objects itself (unfreeze would undo that).
        inherit_frozen = inherit and gc.get_freeze_count() == 0
        with terminate_as_interrupt():
            if inherit_frozen:
                gc.freeze()
            completed = False
            try:
                parent_ends: list[Connection] = []
                for _ in range(min(self.workers, len(tasks))):
                    parent_end, child_end = ctx.Pipe(duplex=True)
                    # every concrete context has Process; typeshed's get_context(str) answers BaseContext
                    process = ctx.Process(  # type: ignore[attr-defined]
                        target=_worker,
                        args=(child_end, fn, tasks if inherit else None, shared,
                              list(parent_ends) if inherit else [], os.getpid(), method),
                        name=f"assay-worker-{len(workers)}",
                        daemon=False,  # allows a worker's own fn to use processes; cleaned up in ``finally``
                    )
                    try:
                        process.start()
                    except Exception as exc:
                        parent_end.close()
                        child_end.close()
                        raise self._start_error(exc, fn, shared) from exc
                    child_end.close()
                    parent_ends.append(parent_end)
                    workers.append(_Worker(process, parent_end))
                if inherit_frozen:
                    gc.unfreeze()
                    inherit_frozen = False
                self._dispatch(workers, tasks, results, inherit, progress, desc)
                completed = True
                return results
            finally:
                if inherit_frozen:  # a worker failed to start
                    gc.unfreeze()
                self._shutdown(workers, graceful=completed)

    def _start_error(self, exc: BaseException, fn: TaskFunction, shared: Any) -> BaseException:
        """A clear error for a worker that could not be started (pickling ``fn`` / ``shared``)."""
        found = unpicklable_part(fn, shared) if self.start_method != "fork" else None
        if found is not None:
            name, problem = found
            return InvalidParameterError(
                f"The processes executor (start method {self.start_method!r}) must pickle {name} to send it to "
                f"its workers, and it cannot be pickled: {type(problem).__name__}: {problem}. Make it picklable "
                "(module-level classes and functions, no open files, locks or lambdas), use "
                "executor='threads', or start_method='fork' on Linux (nothing is pickled then)."
            )
        if isinstance(exc, (BrokenPipeError, EOFError, ConnectionError)):
            return WorkerDiedError(
                f"A worker process (start method {self.start_method!r}) ended while it was being started "
                f"({type(exc).__name__}: {exc}); its own error is on stderr. A script must run the evaluation "
                "under `if __name__ == '__main__':`."
            )
        return exc

    def _dispatch(self, workers: list[_Worker], tasks: list[Any], results: list[Any], inherit: bool,
                  progress: bool | None, desc: str | None) -> None:
        pending = deque(range(len(tasks)))
        idle = list(reversed(workers))
        busy: dict[Any, _Worker] = {}
        worker: _Worker | None
        remaining = len(tasks)
        bar = self._bar(len(tasks), progress, desc)
        try:
            while remaining:
                while idle and pending:
                    worker = idle.pop()
                    number = pending.popleft()
                    worker.task = number
                    worker.started = time.monotonic()
                    try:
                        worker.conn.send((number, None if inherit else tasks[number]))
                    except (BrokenPipeError, ConnectionError, EOFError):
                        pass  # it died: its sentinel says so below
                    except Exception as exc:
                        label = task_label(tasks[number], number)
                        raise InvalidParameterError(
                            f"Shard {label} cannot be pickled to send it to a worker process (start method "
                            f"{self.start_method!r}): {type(exc).__name__}: {exc}"
                        ) from exc
                    busy[worker.conn] = worker
                    busy[worker.process.sentinel] = worker
                deadline = self._deadline(busy)
                timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
                ready = wait(list(busy), timeout=timeout)
                if not ready and deadline is not None:
                    self._raise_not_started(busy, tasks)
                    if self.timeout is not None:
                        self._raise_timeout(busy, tasks, self.timeout)
                    continue
                for handle in ready:
                    worker = busy.get(handle)
                    if worker is None or worker.task is None:
                        continue  # already handled through its other handle
                    number = worker.task
                    label = task_label(tasks[number], number)
                    message = self._receive(worker)
                    if message is _NOTHING:
                        continue  # only its "ready" so far
                    if message is None:
                        raise WorkerDiedError(_death_message(worker, label, self.start_method), shard=label)
                    kind, answered, payload = message
                    worker.task = None
                    del busy[worker.conn], busy[worker.process.sentinel]
                    if kind == "err":
                        error, cause, tb = pickle.loads(payload)
                        _chain(error, cause, tb)
                        raise error
                    results[answered] = payload
                    remaining -= 1
                    bar.update(1)
                    idle.append(worker)
        finally:
            bar.close()

    def _start_bound(self) -> float | None:
        return self.start_timeout if self.start_method == "fork" else None

    def _deadline(self, busy: dict[Any, _Worker]) -> float | None:
        """The earliest moment a busy worker passes its bound: ``timeout`` per shard, the start bound before ready."""
        bounds = []
        start = self._start_bound()
        for w in busy.values():
            if self.timeout is not None:
                bounds.append(w.started + self.timeout)
            if start is not None and not w.ready:
                bounds.append(w.started + start)
        return min(bounds) if bounds else None

    def _raise_not_started(self, busy: dict[Any, _Worker], tasks: list[Any]) -> None:
        """Raise for a fork worker that has not come up within :attr:`start_timeout` (a lock held at the fork)."""
        start = self._start_bound()
        if start is None:
            return
        now = time.monotonic()
        stuck = sorted((w.task, w) for w in {w for w in busy.values() if not w.ready}
                       if w.task is not None and now - w.started >= start - 1e-3)
        if not stuck:
            return
        number, worker = stuck[0]
        label = task_label(tasks[number], number)
        others = [task_label(tasks[n], n) for n, _ in stuck[1:]]
        also = f" (the workers handed shard(s) {others} did not start either)" if others else ""
        raise EvaluationTimeoutError(
            f"Worker process {worker.process.pid} did not start within {start:g} s and never ran shard {label}{also}: "
            f"a forked worker is up in milliseconds, so it is stuck, most likely on a lock that another thread of "
            f"this process held when it forked ({threading.active_count()} thread(s) run here now), which the "
            "worker can never take. Start the workers before other threads, or use start_method='forkserver' or "
            "'spawn'. Every worker was killed and reaped; nothing was counted.",
            shard=label,
        )

    def _raise_timeout(self, busy: dict[Any, _Worker], tasks: list[Any], timeout: float) -> None:
        now = time.monotonic()
        running = sorted({w.task for w in busy.values() if w.task is not None})
        started = {w.task: w.started for w in busy.values() if w.task is not None}
        late = [n for n in running if now - started[n] >= timeout - 1e-3]
        if not late:  # woken a hair early, or by another bound: wait again
            return
        raise _timeout_error(late, tasks, running, timeout, "processes",
                             "every worker was killed and reaped")

    @staticmethod
    def _receive(worker: _Worker) -> Any:
        """The worker's answer; ``_NOTHING`` when it only said "ready"; None when it died."""
        try:
            while worker.conn.poll():
                message = pickle.loads(worker.conn.recv_bytes())
                if message[0] != "ready":
                    return message
                worker.ready = True
                worker.started = time.monotonic()  # its first shard's clock starts once it is up
            if worker.process.is_alive():
                return _NOTHING
            # The process ended. Give a last answer in flight a moment.
            if worker.conn.poll(0.05):
                message = pickle.loads(worker.conn.recv_bytes())
                return None if message[0] == "ready" else message
            return None
        except (EOFError, OSError, pickle.UnpicklingError):
            return None

    def _shutdown(self, workers: list[_Worker], *, graceful: bool) -> None:
        """Stop and reap every worker: ask idle ones to leave after a success, else terminate, then kill."""
        for worker in workers:
            if graceful and worker.task is None and worker.process.is_alive():
                with contextlib.suppress(OSError):
                    worker.conn.send(None)
            elif worker.process.is_alive():  # after an error, a timeout or an interruption: stop it now
                worker.process.terminate()
        deadline = time.monotonic() + (5.0 if graceful else self.kill_grace)
        for worker in workers:
            worker.process.join(timeout=max(0.0, deadline - time.monotonic()))
        for worker in workers:
            if worker.process.is_alive():  # stuck in C code, or ignoring SIGTERM
                worker.process.kill()
                worker.process.join()
            worker.conn.close()
            with contextlib.suppress(ValueError):  # pragma: no cover
                worker.process.close()


def _timeout_error(late: list[int], tasks: list[Any], running: list[int], timeout: float, executor: str,
                   aftermath: str) -> EvaluationTimeoutError:
    """The error for tasks ``late`` that passed ``timeout`` seconds (``running``: all then running)."""
    labels = [task_label(tasks[n], n) for n in late]
    others = [task_label(tasks[n], n) for n in running if n not in late]
    which = f"shard {labels[0]}" if len(labels) == 1 else f"shards {', '.join(map(str, labels))}"
    also = ""
    if others:
        also = (f"; shard {others[0]} was still running too" if len(others) == 1
                else f"; shards {', '.join(map(str, others))} were still running too")
    return EvaluationTimeoutError(
        f"The {executor} executor's timeout of {timeout:g} s per shard expired: {which} ran longer{also}. "
        f"The run is aborted ({aftermath}); raise 'timeout' if shards are legitimately this slow.",
        shard=labels[0],
    )


def _chain(exc: BaseException, cause: BaseException | None, tb: str) -> None:
    """Re-attach what pickling dropped: the original cause, then the remote traceback under it."""
    remote = RemoteTraceback(tb)
    if cause is not None:
        exc.__cause__ = cause
        if cause.__cause__ is None:
            cause.__cause__ = remote
    else:
        exc.__cause__ = remote

