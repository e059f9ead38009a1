"""What runs inside Spark's Python workers for the ``spark`` executor (private).

Kept apart from :mod:`assay.executors.spark` so that a worker imports only this small
module (and, through the pickled task function, whatever the evaluation needs). Nothing
here imports pyspark at module level.

Three jobs:

- :func:`~assay.executors._shared.shared_value`: turn the broadcast bytes into the shared object **once per worker
  process** (cached by a token), so the model is unpickled once per Python worker, not
  once per task.
- :func:`run_task_partition` / :func:`run_file_partition`: the function each partition
  runs. A partition is exactly one shard; it yields one ``(position, result)`` pair.
- :func:`encode_failure` / :func:`decode_failures`: an exception raised in a worker is
  re-raised as :class:`SparkTaskFailure`, whose message carries a marker with the shard,
  the item and the original exception (pickled); Spark retries the task as configured
  (``spark.task.maxFailures``), and when the job finally fails the driver finds the marker
  in Spark's error text and re-raises the original exception.
"""

from __future__ import annotations

import base64
import contextlib
import fnmatch
import gc
import json
import posixpath
import re
import traceback
from collections.abc import Callable, Iterable, Iterator
from typing import Any
from urllib.parse import urlsplit

from assay.core.pool import PathShard
from assay.executors._shared import missing_on_worker, shared_value

__all__ = [
    "LoadedPathShard",
    "SparkTaskFailure",
    "decode_failures",
    "encode_failure",
    "order_files",
    "path_key",
    "run_file_partition",
    "run_task_partition",
]

#: token -> shared object, per worker process (a few recent runs only).

_MARKER = re.compile(r"assay-failure:([A-Za-z0-9+/=]+):end")
_MAX_PICKLE = 64 * 1024  # larger exceptions travel as text only
_MAX_TRACEBACK = 8000


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a shard's items are built (unpickled or parsed).

    Building tens of thousands of containers triggers repeated full collections that
    traverse all of them: unpickling a shard of dicts is about three times faster without.
    Nothing built here forms reference cycles that must be collected meanwhile.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _shared_or_fail(token: str, broadcast: Any, *, shard: int, position: int) -> Any:
    """:func:`shared_value`, or a failure that says the executor lacks a module the shared objects need."""
    try:
        return shared_value(token, broadcast.value)
    except Exception as exc:  # noqa: BLE001 - typically ModuleNotFoundError: a package missing on the executor
        error = missing_on_worker(exc, engine="Spark executor", where="in the executors' Python", shard=shard)
        raise _encoded(error, exc, shard=shard, position=position) from None


# --------------------------------------------------------------------------- failures
class SparkTaskFailure(RuntimeError):
    """Raised in a Spark worker when a shard fails; its message carries the encoded cause."""


def _dump_exception(exc: BaseException) -> str | None:
    from pyspark import cloudpickle  # deferred: pyspark (on a Spark worker); cloudpickle handles __main__ classes

    try:
        exc.__traceback__ = None
        data = cloudpickle.dumps(exc)
    except Exception:  # noqa: BLE001 - an exception that cannot be pickled is described instead
        return None
    return base64.b64encode(data).decode("ascii") if len(data) <= _MAX_PICKLE else None


def encode_failure(exc: BaseException, *, shard: int, position: int, traceback_text: str) -> SparkTaskFailure:
    """A :class:`SparkTaskFailure` whose message encodes ``exc``, its shard and its traceback."""
    payload = {
        "shard": shard,
        "position": position,
        "item": getattr(exc, "item", None),
        "type": f"{type(exc).__module__}.{type(exc).__qualname__}",
        "message": str(exc),
        "traceback": traceback_text[-_MAX_TRACEBACK:],
        "pickle": _dump_exception(exc),
    }
    blob = base64.b64encode(json.dumps(payload).encode("utf-8")).decode("ascii")
    return SparkTaskFailure(f"shard {shard} failed: {type(exc).__name__}: {exc} assay-failure:{blob}:end")


def decode_failures(text: str) -> list[dict[str, Any]]:
    """Every failure marker in ``text`` (Spark's error message), oldest first."""
    found = []
    for match in _MARKER.finditer(text):
        try:
            found.append(json.loads(base64.b64decode(match.group(1)).decode("utf-8")))
        except (ValueError, UnicodeDecodeError):  # a truncated marker: skip it
            continue
    return found


def _encoded(error: BaseException, raised: BaseException, *, shard: int, position: int) -> SparkTaskFailure:
    """``error`` encoded for the driver, with the traceback of ``raised`` (the exception caught)."""
    tb = "".join(traceback.format_exception(type(raised), raised, raised.__traceback__))
    return encode_failure(error, shard=shard, position=position, traceback_text=tb)


def _call(fn: Callable[[Any, Any], Any], task: Any, shared: Any, *, shard: int, position: int) -> Any:
    try:
        return fn(task, shared)
    except BaseException as exc:  # noqa: BLE001 - every failure (SystemExit too) goes back to the driver, encoded
        raise _encoded(exc, exc, shard=shard, position=position) from None


# --------------------------------------------------------------------------- in-memory shards
def run_task_partition(split: int, records: Iterable[tuple[int, int, Any]], *, fn: Callable[[Any, Any], Any],
                       token: str, broadcast: Any, done: Any = None) -> Iterator[tuple[int, Any]]:
    """Run ``fn(task, shared)`` for the partition's one ``(position, shard label, task)`` record.

    ``done`` (a list accumulator, optional) gets the position of each finished shard, so the
    driver knows which shards were still running when a timeout cancels the job.
    """
    iterator = iter(records)
    while True:
        with _gc_paused():  # Spark unpickles the record (the shard's items) as it is pulled
            record = next(iterator, None)
        if record is None:
            return
        position, label, task = record
        shared = _shared_or_fail(token, broadcast, shard=label, position=position)
        result = _call(fn, task, shared, shard=label, position=position)
        if done is not None:
            done.add([position])
        yield position, result


# --------------------------------------------------------------------------- files read by Spark
class LoadedPathShard(PathShard):
    """A :class:`~assay.core.pool.PathShard` whose files Spark has already read on this executor.

    ``items()`` decodes (strict UTF-8, as a local read does) and parses the bytes Spark
    handed over (in the shard's file order) instead of opening the files itself, so it works
    for any file system Hadoop can read (HDFS, S3, local); ``describe`` names the file and
    the item in it, as for a local path shard. A file that is not valid UTF-8 fails the
    shard with the data format's error, naming the file and the byte.
    """

    __slots__ = ("_texts", "_items")

    def __init__(self, shard: PathShard, texts: list[tuple[str, bytes]]) -> None:
        super().__init__(shard.index, tuple(path for path, _ in texts), shard.format, shard.data_format,
                         shard.first_file)
        self._texts = texts
        self._items: list[Any] | None = None

    def items(self) -> list[Any]:
        """The items of the shard's files, parsed once (a run with metrics asks twice)."""
        if self._items is not None:
            return self._items
        items: list[Any] = []
        bounds: list[tuple[int, str]] = []
        with _gc_paused():
            for path, data in self._texts:
                bounds.append((len(items), path))
                items.extend(self.data_format.loads(data, source=path))
        self._bounds = bounds
        self._items = items
        return items

    def __reduce__(self) -> tuple[Any, ...]:
        return (LoadedPathShard, (PathShard(self.index, self.paths, self.format, self.data_format, self.first_file),
                                  self._texts))


def path_key(path: str) -> str:
    """The path part of a path or URI, normalised (``hdfs://nn:8020/a/b`` and ``/a/b`` give ``/a/b``)."""
    parts = urlsplit(path)
    raw = parts.path if parts.scheme else path
    return posixpath.normpath(raw) if raw else raw


def order_files(records: Iterable[tuple[str, Any]], wanted: tuple[str, ...]) -> list[tuple[str, Any]]:
    """Sort ``(path, content)`` records read by Spark into the order of ``wanted`` (the shard's files).

    A record matches the first wanted entry equal to its path, or matched by it as a glob
    pattern, or lying under it as a folder; records matched by the same entry keep their
    path order (as a sorted glob would).
    """
    keys = [path_key(w) for w in wanted]

    def rank(record: tuple[str, Any]) -> tuple[int, str]:
        key = path_key(record[0])
        for i, want in enumerate(keys):
            if key == want or fnmatch.fnmatchcase(key, want) or key.startswith(want.rstrip("/") + "/"):
                return i, key
        return len(keys), key

    return sorted(records, key=rank)


def run_file_partition(split: int, records: Iterable[tuple[str, bytes]], *, fn: Callable[[Any, Any], Any],
                       token: str, broadcast: Any, shards: list[tuple[int, int, PathShard]],
                       done: Any = None) -> Iterator[tuple[int, Any]]:
    """Parse the files of one shard (``records``: ``(path, bytes)`` from ``binaryFiles``) and run ``fn``.

    ``shards[split]`` is ``(position, shard label, PathShard)`` for this partition; ``done``
    is as for :func:`run_task_partition`.
    """
    position, label, shard = shards[split]
    try:  # reading happens here: a file Spark cannot read fails this shard
        texts = order_files(list(records), shard.paths)
    except Exception as exc:  # noqa: BLE001 - sent back to the driver, encoded
        raise _encoded(exc, exc, shard=label, position=position) from None
    loaded = LoadedPathShard(shard, texts)
    shared = _shared_or_fail(token, broadcast, shard=label, position=position)
    result = _call(fn, loaded, shared, shard=label, position=position)
    if done is not None:
        done.add([position])
    yield position, result
