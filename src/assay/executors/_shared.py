"""The shared object (sentence evaluator and model) on a remote worker: unpickled once per process (private).

Both remote engines (Spark, Dask) ship the shared object as pickled bytes once per run and
keep the unpickled value per worker process, keyed by the run's token, for every shard the
process runs; a few recent runs are kept. A worker that cannot unpickle it (a package
missing there) gets one message that says what must be installed.
"""

from __future__ import annotations

import collections
import pickle
import threading
from typing import Any

from assay.errors import EvaluationError

__all__ = ["missing_on_worker", "shared_value"]

_SHARED: collections.OrderedDict[str, Any] = collections.OrderedDict()
_KEEP = 4
_LOCK = threading.Lock()  # a worker with several threads unpickles the shared object once


def shared_value(token: str, payload: bytes) -> Any:
    """The shared object of run ``token``, unpickled from ``payload`` once per worker process."""
    with _LOCK:
        if token in _SHARED:
            return _SHARED[token]
        value = pickle.loads(payload)
        _SHARED[token] = value
        while len(_SHARED) > _KEEP:
            _SHARED.popitem(last=False)
        return value


def missing_on_worker(exc: BaseException, *, engine: str, where: str, shard: int) -> EvaluationError:
    """The error for a worker that could not unpickle the shared objects (typically ``ModuleNotFoundError``)."""
    return EvaluationError(
        f"The {engine} worker running shard {shard} could not unpickle the sentence evaluator and model "
        f"({type(exc).__name__}: {exc}). assay, the plugins the evaluation uses and the modules that define "
        f"the evaluator and model must be installed {where} (see docs/cluster.md).",
        shard=shard,
    )
