"""What runs on the Dask workers for the ``dask`` executor (private).

Kept apart from :mod:`assay.executors.dask` so that a worker imports only this small
module (and, through the pickled task function, whatever the evaluation needs). Nothing
here imports dask: a worker already has it.

Three jobs:

- :func:`run_shard`: the function each Dask task runs, one task per shard. It turns the
  scattered bytes of the shared object (the sentence evaluator and the model) into the
  object **once per worker process** (cached by the run's token) and calls
  ``fn(shard, shared)``.
- :class:`ShardFailure`: anything the shard raises (``SystemExit`` and ``KeyboardInterrupt``
  too, which would otherwise end the Dask worker) comes back to the client as this one
  picklable exception, carrying the shard, the item, the worker's traceback and the
  original exception (pickled when it can be), so the client re-raises the original.
- :func:`announce`: each shard tells the scheduler when it starts and ends, so that when a
  worker dies the client names the shard that was running on it.
"""

from __future__ import annotations

import pickle
import traceback
from collections.abc import Callable
from typing import Any

from assay.executors._shared import missing_on_worker, shared_value

__all__ = ["EVENTS", "ShardFailure", "announce", "run_shard"]

#: token -> shared object, per worker process (a few recent runs only).

#: The scheduler event topic on which shards announce their start and end (see :func:`announce`).
EVENTS = "assay-shards"

_MAX_PICKLE = 1024 * 1024  # larger exceptions travel as text only
_MAX_TRACEBACK = 8000


class ShardFailure(Exception):
    """A shard failed on a Dask worker; ``payload`` describes it (see :func:`failure`).

    Keys of ``payload``: ``shard`` (its label), ``position`` (in the task list), ``item``
    (the pool index, when the error names one), ``type`` and ``message`` of the original
    exception, ``traceback`` (the worker's, as text) and ``pickle`` (the original exception
    pickled with cloudpickle, or None when it cannot be).
    """

    def __init__(self, payload: dict[str, Any]) -> None:
        super().__init__(f"shard {payload.get('shard')} failed: {payload.get('type')}: {payload.get('message')}")
        self.payload = payload

    def __reduce__(self) -> tuple[Any, ...]:
        return (ShardFailure, (self.payload,))


def failure(exc: BaseException, *, shard: int, position: int, raised: BaseException | None = None) -> ShardFailure:
    """A :class:`ShardFailure` for ``exc``, with the traceback of ``raised`` (default: ``exc``'s own)."""
    raised = exc if raised is None else raised
    tb = "".join(traceback.format_exception(type(raised), raised, raised.__traceback__))
    return ShardFailure({
        "shard": shard,
        "position": position,
        "item": getattr(exc, "item", None),
        "type": f"{type(exc).__module__}.{type(exc).__qualname__}",
        "message": str(exc),
        "traceback": tb[-_MAX_TRACEBACK:],
        "pickle": _dump_exception(exc),
    })


def _dump_exception(exc: BaseException) -> bytes | None:
    import cloudpickle  # deferred: cloudpickle, a dependency of the optional distributed (__main__ classes)

    try:
        exc.__traceback__ = None
        data = cloudpickle.dumps(exc)
        pickle.loads(data)  # one that pickles but does not unpickle (a bad __reduce__) travels as text
    except Exception:  # noqa: BLE001 - an exception that cannot be pickled is described instead
        return None
    return data if len(data) <= _MAX_PICKLE else None


def run_shard(fn: Callable[[Any, Any], Any], task: Any, payload: bytes, *, token: str, shard: int,
              position: int) -> Any:
    """Run ``fn(task, shared)`` for one shard on a Dask worker; failures become :class:`ShardFailure`."""
    try:
        shared = shared_value(token, payload)
    except Exception as exc:  # noqa: BLE001 - typically ModuleNotFoundError: a package missing on the worker
        error = missing_on_worker(exc, engine="Dask", where="on every Dask worker", shard=shard)
        raise failure(error, shard=shard, position=position, raised=exc) from None
    announce(token, position, "start")
    try:
        result = fn(task, shared)
    except BaseException as exc:  # noqa: BLE001 - SystemExit would end the worker: send it back instead
        raise failure(exc, shard=shard, position=position) from None
    announce(token, position, "done")
    return result


def announce(token: str, position: int, event: str) -> None:
    """Tell the scheduler that the shard at ``position`` of run ``token`` started or is done on this worker.

    A synchronous event on the scheduler's :data:`EVENTS` topic (bounded by Dask's own event
    log), so that when a worker dies the client can tell the shard that was running on it
    from the shards merely queued there. Best effort: a failure here never fails the shard.
    """
    try:
        from distributed import get_client, get_worker  # deferred: distributed (runs on a Dask worker only)

        get_client().log_event(EVENTS, {"token": token, "position": position, "event": event,
                                        "worker": get_worker().address})
    except Exception:  # noqa: BLE001 - an old scheduler, a closing worker: the client falls back to Dask's log
        pass
