"""The ``dask`` executor: shards as Dask tasks, the model scattered to every worker once.

>>> from distributed import Client, LocalCluster                          # doctest: +SKIP
>>> client = Client(LocalCluster(n_workers=2, threads_per_worker=1))      # doctest: +SKIP
>>> ev.parallelEvaluate(pool, model, client)                              # doctest: +SKIP
>>> load_executor("dask", address="tcp://scheduler:8786").run(pow, [1, 2, 3], 2)  # doctest: +SKIP
[1, 4, 9]

How a run works (``run(fn, tasks, shared)``, the protocol of :mod:`assay.executors.base`):

1. ``shared`` (for an evaluation: the sentence evaluator and the model) is pickled once
   on the client with cloudpickle (so classes defined in ``__main__`` travel too) and
   **scattered to every worker once** (``client.scatter(..., broadcast=True)``); each worker
   process unpickles it once and keeps it for every shard it runs.
2. Each task (shard) becomes **one Dask task** (``client.submit``), which runs
   ``fn(shard, shared)`` on a worker and sends back only its result (a tally). A path
   pool's shard (:meth:`assay.DataPool.from_paths`) travels as its file names: the worker
   reads its own files, so they must be where the workers can open them (a shared file
   system).
3. The client puts the results back in shard order; the caller adds them in that order,
   so a Dask run equals the sequential one bit for bit.

Failures, as for the ``spark`` executor: an exception in a shard fails its Dask task,
which Dask retries ``retries`` times (default 0). When it finally fails, the original
exception is raised on the client: an :class:`~assay.errors.EvaluationError` naming the
shard and the item, as the evaluator raised it (other assay errors, such as a data format's
line-numbered error, unchanged); any other exception is wrapped in an ``EvaluationError``
naming the shard. Its ``__cause__`` is the worker's traceback. A ``SystemExit`` in an
evaluator is an error too; it never ends the worker. A worker that dies while running a
shard (killed, out of memory, ``os._exit``) is restarted by its nanny and the scheduler
reschedules the shard, up to Dask's ``distributed.scheduler.allowed-failures`` setting;
after that (or when the scattered shared object was lost with the workers that held it)
:class:`~assay.errors.WorkerDiedError` names the shard. Which shard killed its worker is known
because every shard announces its start and its end on the scheduler (an event, see
:func:`~assay.executors._dask_tasks.announce`): the shard that started on a dead worker and
never ended, not the shards merely queued there. No partial result is returned.

dask is an optional dependency (``pip install 'assay[dask]'``); it is imported only when
this executor is created.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import time
import uuid
from collections.abc import Sequence
from typing import Any

from assay.errors import AssayError, EvaluationError, EvaluationTimeoutError, InvalidParameterError, WorkerDiedError
from assay.executors._dask_tasks import EVENTS, ShardFailure, run_shard
from assay.executors.base import Executor, RemoteTraceback, TaskFunction, check_timeout, cpu_count, task_label
from assay.plugins.deps import require

__all__ = ["DEFAULT_TIMEOUT", "TIMEOUT_VARIABLE", "DaskExecutor", "default_timeout", "import_distributed",
           "is_dask_client"]

#: How often (seconds) the client wakes while waiting, to advance the bar and check the deadline.
_POLL = 0.05

#: The bound (seconds per shard) of a dask executor made without ``timeout=``: Dask never gives up on
#: a task that hangs, so without a bound a hung evaluator would hold the run forever.
DEFAULT_TIMEOUT = 3600.0

#: The environment variable that replaces :data:`DEFAULT_TIMEOUT` (seconds, or ``none``: no bound).
TIMEOUT_VARIABLE = "ASSAY_DASK_TIMEOUT"

_UNSET: Any = object()


def default_timeout() -> float | None:
    """The bound of an executor made without ``timeout=``: ``ASSAY_DASK_TIMEOUT``, else :data:`DEFAULT_TIMEOUT`."""
    raw = os.environ.get(TIMEOUT_VARIABLE, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT
    if raw.lower() == "none":
        return None
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise InvalidParameterError(
            f"The environment variable {TIMEOUT_VARIABLE}={raw!r} must be a finite number of seconds > 0 (the dask "
            "executor's bound per shard) or 'none' (no bound)."
        )
    return value


def import_distributed() -> Any:
    """Import ``distributed``, or raise :class:`~assay.errors.MissingDependencyError` with the install hint."""
    return require("distributed", package="dask[distributed]", extra="dask", purpose="the 'dask' executor")


def is_dask_client(x: Any) -> bool:
    """Whether ``x`` is a ``distributed.Client`` (checked by type, without importing dask)."""
    return any(c.__name__ == "Client" and c.__module__.startswith("distributed") for c in type(x).__mro__)


class DaskExecutor(Executor):
    """Run shards as Dask tasks (one task per shard), the shared objects scattered to each worker once.

    Parameters
    ----------
    client : distributed.Client, optional
        The client to run on. It is used as given and never closed by assay.
    address : str, optional
        A scheduler address (``"tcp://scheduler:8786"``) to connect to when no ``client`` is
        given; the client made for it is closed by :meth:`close`. Without ``client`` and
        ``address``: the current default client (``distributed.default_client()``), else a
        new ``LocalCluster`` of ``workers`` single-threaded worker processes (closed by
        :meth:`close`; a script must then run under ``if __name__ == "__main__":``).
    workers : int, optional
        The default shard count of ``parallelEvaluate`` (via its shards-per-worker policy),
        and the worker count of a ``LocalCluster`` this executor starts. Default: the
        cluster's total worker threads.
    progress : bool, optional
        ``True`` / ``False`` forces a progress bar (shards finished) on or off; ``None``
        shows it on a terminal for more than a few shards.
    timeout : float, optional
        The most seconds one shard may run, as for the local executors. Dask schedules the
        tasks itself, so the bound is applied to the whole run: ``timeout`` times the number
        of waves of tasks (``ceil(shards / worker threads)``). When it passes, the run's
        tasks are cancelled and :class:`~assay.errors.EvaluationTimeoutError` names the
        shards that had not finished. Dask cannot interrupt a task that is already running:
        it finishes on its worker in the background and its result is dropped. Default
        :data:`DEFAULT_TIMEOUT` (one hour per shard), or the seconds in the environment
        variable ``ASSAY_DASK_TIMEOUT`` (``none`` there: no bound); ``timeout=None`` given
        explicitly: no bound. A hung evaluator therefore ends in an error naming its shard
        rather than a run that never returns.
    retries : int
        How many times Dask retries a shard that raised (``client.submit(retries=...)``).
        Default 0. Shards whose worker died are rescheduled by the scheduler instead, up to
        its ``distributed.scheduler.allowed-failures`` setting.

    Notes
    -----
    On a cluster, assay, every plugin the evaluation uses and the modules that define the
    evaluator and the model must be installed in the workers' Python (see
    ``docs/cluster.md``); a worker that cannot unpickle them gives an error that says so.
    """

    name = "dask"

    def __init__(self, *, client: Any = None, address: str | None = None, workers: int | None = None,
                 progress: bool | None = None, timeout: float | None = _UNSET, retries: int = 0) -> None:
        super().__init__(workers=workers, progress=progress)
        if client is not None and not is_dask_client(client):
            raise InvalidParameterError(
                f"The 'client' parameter of the dask executor must be a distributed.Client. "
                f"Got {type(client).__name__} instead."
            )
        if address is not None and (not isinstance(address, str) or not address.strip()):
            raise InvalidParameterError(
                f"The 'address' parameter of the dask executor must be a scheduler address such as "
                f"'tcp://scheduler:8786'. Got {address!r} instead."
            )
        if client is not None and address is not None:
            raise InvalidParameterError("The dask executor got both a 'client' and an 'address'; pass only one.")
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise InvalidParameterError(
                f"The 'retries' parameter of the dask executor must be an int >= 0. Got {retries!r} instead."
            )
        self.timeout = default_timeout() if timeout is _UNSET else check_timeout(timeout, "dask")
        self.retries = retries
        if client is None:
            import_distributed()  # fail now, with the install hint, rather than at the first run
        self._requested_workers = workers
        self.address = address
        self._client = client
        self._cluster: Any = None
        self._owned = False

    # ------------------------------------------------------------------ the client
    @property
    def client(self) -> Any:
        """The ``distributed.Client`` (connected or created on first use)."""
        if self._client is None:
            self._client, self._cluster, self._owned = self._get_or_create()
        return self._client

    @property
    def workers(self) -> int:
        """The default shard count: ``workers`` if given, else the cluster's total worker threads."""
        if self._requested_workers is not None:
            return self._requested_workers
        return _threads(self.client)

    @workers.setter
    def workers(self, value: int) -> None:  # set by Executor.__init__; the cluster decides instead
        pass

    def _get_or_create(self) -> tuple[Any, Any, bool]:
        distributed = import_distributed()
        if self.address is not None:
            return distributed.Client(self.address), None, True
        try:
            return distributed.default_client(), None, False
        except ValueError:  # no client in this process: start a local cluster
            pass
        cluster = distributed.LocalCluster(n_workers=self._requested_workers or cpu_count(), threads_per_worker=1,
                                           processes=True, dashboard_address=None)
        return distributed.Client(cluster), cluster, True

    def close(self) -> None:
        """Close the client (and local cluster) if this executor created them; a given client stays open."""
        if self._owned and self._client is not None:
            self._client.close()
            if self._cluster is not None:
                self._cluster.close()
            self._client, self._cluster, self._owned = None, None, False

    def __repr__(self) -> str:
        where = self.address
        if self._client is not None:
            where = getattr(getattr(self._client, "scheduler", None), "address", where)
        return f"DaskExecutor(scheduler={where!r}, retries={self.retries}, progress={self.progress})"

    # ------------------------------------------------------------------ running
    def run(self, fn: TaskFunction, tasks: Sequence[Any], shared: Any, *,
            progress: bool | None = None, desc: str | None = None) -> list[Any]:
        """Run ``fn(task, shared)`` for every task, one Dask task each; results in task order."""
        tasks = list(tasks)
        if not tasks:
            return []
        payload = _dumps_shared(fn, shared)
        client = self.client
        labels = [task_label(task, i) for i, task in enumerate(tasks)]
        token = uuid.uuid4().hex
        scattered = client.scatter(payload, broadcast=True, hash=False)
        futures = [client.submit(run_shard, fn, task, scattered, token=token, shard=labels[i], position=i,
                                 key=f"assay-shard-{i}-{token}", retries=self.retries, pure=False)
                   for i, task in enumerate(tasks)]
        try:
            self._wait(client, futures, labels, token, progress, desc)
            results: list[Any] = client.gather(futures)
            return results
        finally:
            # frees the results and the scattered model on the workers; a client that lost its
            # scheduler fails here with anything at all: keep the run's own error
            with contextlib.suppress(Exception):
                client.cancel(futures + [scattered])

    def _wait(self, client: Any, futures: list[Any], labels: list[int], token: str, progress: bool | None,
              desc: str | None) -> None:
        """Wait until every future is done; raise the first failure, or the timeout.

        The futures' states are polled every ``_POLL`` seconds (``distributed.wait`` would use
        the process's default client, which need not be this executor's).
        """
        bound = deadline = None
        if self.timeout is not None:
            threads = _threads(client)
            bound = self.timeout * -(-len(futures) // threads)
            deadline = time.monotonic() + bound
        pending = set(range(len(futures)))
        bar = self._bar(len(futures), progress, desc)
        try:
            while pending:
                done = {i for i in pending if futures[i].done()}
                pending -= done
                failed = sorted(i for i in done if futures[i].status != "finished")
                if failed:
                    raise self._error(client, futures, labels, failed[0], token)
                bar.update(len(done))
                if deadline is not None and pending and time.monotonic() >= deadline:
                    running = [labels[i] for i in sorted(pending)]
                    raise EvaluationTimeoutError(
                        f"The dask run timed out after {bound:g} s (timeout={self.timeout:g} s per shard, "
                        f"{len(futures)} shard(s) on {_threads(client)} worker thread(s)); shard(s) {running} had "
                        "not finished and their Dask tasks were cancelled (a task already running finishes on its "
                        "worker in the background). Nothing was counted. Raise the executor's 'timeout' (or the "
                        f"{TIMEOUT_VARIABLE} environment variable) if shards are legitimately this slow.",
                        shard=running[0],
                    )
                if pending:
                    time.sleep(_POLL)
        finally:
            bar.close()

    def _error(self, client: Any, futures: list[Any], labels: list[int], position: int, token: str
               ) -> BaseException:
        """The assay error for the future at ``position``, which did not finish (erred, cancelled or lost)."""
        future = futures[position]
        exc = future.exception() if future.status == "error" else None
        killed = type(exc).__name__ == "KilledWorker"
        if exc is not None and not killed:
            return _translate(exc, labels[position], self.retries)
        # A worker died: the scheduler gave up on the shard (KilledWorker), or the scattered shared object went
        # with the workers that died and every shard failed at once (cancelled / lost). The scheduler's log says
        # which shard was running when workers died: name it rather than the first shard in order.
        died = _died_running(client, futures, token)
        label = labels[died[0]] if died else labels[position]
        others = [labels[i] for i in died[1:]]
        also = f" (shard(s) {others} were on the lost worker(s) too)" if others else ""
        if killed:
            how = ("as many times as the scheduler allows (its distributed.scheduler.allowed-failures setting, each "
                   "time rescheduling the shard on another worker)")
        elif died:
            how = "and with it the scattered sentence evaluator and model, so no shard could run any more"
        else:
            return WorkerDiedError(
                f"The Dask task of shard {label} ended {future.status} before it finished: the workers holding the "
                "scattered sentence evaluator and model were lost, or the task was cancelled from outside. Nothing "
                "was counted.", shard=label)
        error = WorkerDiedError(
            f"The Dask worker running shard {label} died (killed, out of memory, or the process exited){also}, "
            f"{how}; that shard has no result, so the run is aborted rather than returning a smaller total.",
            shard=label)
        error.__cause__ = exc
        return error


# ---------------------------------------------------------------------- helpers
def _threads(client: Any) -> int:
    """The total worker threads of the client's cluster (at least 1)."""
    try:
        threads: int = sum(client.nthreads().values())
        return max(1, threads)
    except Exception:  # noqa: BLE001 - a scheduler that does not answer: one wave per shard
        return 1


def _died_running(client: Any, futures: list[Any], token: str) -> list[int]:
    """Positions of the shards that were running when their worker died, most often first, then in order.

    Each shard announces its start and its end on the scheduler (:func:`~assay.executors._dask_tasks.announce`):
    a shard whose last start has no end did not return. Without those events (an old
    scheduler), Dask's transition log (``client.story``) gives the shards that were assigned
    to a worker when it left, which may include shards only queued there.
    """
    starts: dict[int, int] = {}
    running: dict[int, Any] = {}  # position -> the worker it last started on, for shards with no end since
    try:
        events = client.get_events(EVENTS)
        alive = set(client.scheduler_info()["workers"])
    except Exception:  # noqa: BLE001 - no event log: fall back to the scheduler's transitions
        events, alive = (), set()
    for _, msg in events:
        if not isinstance(msg, dict) or msg.get("token") != token:
            continue
        position = msg.get("position")
        if not isinstance(position, int):  # not one of this run's shard events
            continue
        if msg.get("event") == "start":
            starts[position] = starts.get(position, 0) + 1
            running[position] = msg.get("worker")
        else:
            running.pop(position, None)
    died = [i for i, worker in running.items() if worker not in alive]  # a restarted worker has a new address
    if died:
        return sorted(died, key=lambda i: (-starts[i], i))
    position = {f.key: i for i, f in enumerate(futures)}
    counts: dict[int, int] = {}
    try:
        story = client.story(*position)
    except Exception:  # noqa: BLE001 - an older scheduler or a lost connection: no culprit
        return []
    for event in story:
        try:
            key, start, finish, stimulus = event[1], event[2], event[3], str(event[5])
        except (IndexError, TypeError):  # an event of another layout (another distributed version) names
            continue                     # no shard; the WorkerDiedError is raised either way, naming fewer
        if key in position and (start, finish) == ("processing", "released") and "worker" in stimulus:
            counts[position[key]] = counts.get(position[key], 0) + 1
    return sorted(counts, key=lambda i: (-counts[i], i))


def _dumps_shared(fn: TaskFunction, shared: Any) -> bytes:
    """``shared`` pickled with cloudpickle, or an error naming the part that cannot be pickled."""
    import cloudpickle  # deferred: cloudpickle, a dependency of the optional distributed

    try:
        data: bytes = cloudpickle.dumps(shared, protocol=pickle.HIGHEST_PROTOCOL)
        return data
    except Exception as exc:
        names = getattr(fn, "shared_names", None)
        parts = list(shared) if isinstance(shared, tuple) else [shared]
        if not (names and len(names) == len(parts)):
            names = [f"shared[{i}]" for i in range(len(parts))] if isinstance(shared, tuple) else ["the shared object"]
        name, problem = "the shared objects", exc
        for part_name, part in zip(names, parts):
            try:
                cloudpickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as part_exc:  # noqa: BLE001
                name = f"{part_name} (of type {type(part).__module__}.{type(part).__qualname__})"
                problem = part_exc
                break
        raise InvalidParameterError(
            f"The dask executor must pickle {name} to scatter it to the Dask workers, and it cannot be pickled: "
            f"{type(problem).__name__}: {problem}. Make it picklable (no open files, locks, sockets or live "
            "connections; load such resources lazily on the worker)."
        ) from exc


def _translate(exc: BaseException | None, label: int, retries: int) -> BaseException:
    """The assay error for a Dask task of shard ``label`` that raised ``exc``."""
    after = f" after {retries} Dask retr{'y' if retries == 1 else 'ies'}" if retries else ""
    if isinstance(exc, ShardFailure):
        failure = exc.payload
        cause = RemoteTraceback(failure.get("traceback") or "")
        original = _unpickle(failure.get("pickle"))
        if isinstance(original, AssayError):
            original.__cause__ = cause
            return original
        item = failure.get("item")
        where = f"shard {label}" + (f", item {item}" if item is not None else "")
        error = EvaluationError(f"The Dask task of {where} failed{after}: {failure.get('type')}: "
                                f"{failure.get('message')}", shard=label, item=item)
        if isinstance(original, BaseException):
            original.__cause__ = cause
            error.__cause__ = original
        else:
            error.__cause__ = cause
        return error
    # the worker could not even start the task: typically assay or a plugin missing in the workers' Python
    error = EvaluationError(
        f"The Dask task of shard {label} failed on the worker before it ran{after}: {type(exc).__name__}: {exc}. "
        "assay, the plugins the evaluation uses and the modules that define the evaluator and model must be "
        "installed on every Dask worker (see docs/cluster.md).", shard=label)
    error.__cause__ = exc
    return error


def _unpickle(data: bytes | None) -> Any:
    if not data:
        return None
    try:
        return pickle.loads(data)
    except Exception:  # noqa: BLE001 - an exception class missing on the client: use the text
        return None

