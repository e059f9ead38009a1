"""The seams of the framework as :class:`typing.Protocol` types: a shard, an executor, a sentence evaluator.

Each is structural: a third-party pool's shard, a backend's executor or a plain function
fits by having the right attributes, with nothing to inherit. The framework's signatures
use them instead of ``Any``, so mypy checks both sides of each seam, and the few places
that must tell at run time whether an object fits (an exception's frames, a task's label)
ask :func:`isinstance` of the ``runtime_checkable`` ones instead of probing attributes.

:class:`ShardLike`
    What an executor's task is for an evaluation: :class:`~assay.core.pool.Shard`,
    :class:`~assay.core.pool.PathShard` and plugins' shards (``assay_parsing``'s
    ``PairShard``) fit it.
:class:`ExecutorLike`
    What runs the shards: :class:`~assay.executors.base.Executor` and its subclasses fit
    it (the module docstring of :mod:`assay.executors.base` states the contract in full).
:class:`SentenceEvaluator`
    What scores one item: ``(sentence, w_vector) -> (correct_num, gold_set_size)``.
:class:`TaskFunction`
    What an executor runs on each task: ``fn(task, shared) -> result``.

This module imports nothing from assay, so every layer may use it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

__all__ = ["ExecutorLike", "Labelled", "SentenceEvaluator", "ShardLike", "TaskFunction"]


@runtime_checkable
class Labelled(Protocol):
    """A task that carries its number (``index``): errors name it (a shard's number) rather than its position."""

    index: int


@runtime_checkable
class ShardLike(Protocol):
    """One shard of a pool: its number, its items in pool order, and where an item is (for errors).

    ``items()`` returns the shard's items (reading them, for a shard of files);
    ``pool_index(offset)`` is the pool index of the shard's ``offset``-th item, or None when
    unknown (a shard of files before they are read); ``describe(offset)`` names that item
    for an error message (``"item 12"``, ``"item 3 of file 'a.conllu'"``).
    """

    index: int

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[Any]: ...

    def items(self) -> Sequence[Any]: ...

    def pool_index(self, offset: int) -> int | None: ...

    def describe(self, offset: int) -> str: ...


class TaskFunction(Protocol):
    """``fn(task, shared) -> result``: a module-level function (picklable by reference) an executor runs per task."""

    def __call__(self, task: Any, shared: Any, /) -> Any: ...


@runtime_checkable
class ExecutorLike(Protocol):
    """Runs ``fn(task, shared)`` for every task and returns the results in task order; a context manager.

    ``shared`` reaches each worker once; ``progress`` forces a progress bar on or off;
    ``close()`` releases what the executor holds. See :mod:`assay.executors.base`.
    """

    @property
    def workers(self) -> int: ...

    def run(self, fn: TaskFunction, tasks: Sequence[Any], shared: Any, *,
            progress: bool | None = None, desc: str | None = None) -> list[Any]: ...

    def close(self) -> None: ...

    def __enter__(self) -> ExecutorLike: ...

    def __exit__(self, *exc: object) -> None: ...


class SentenceEvaluator(Protocol):
    """``(sentence, w_vector) -> (correct_num, gold_set_size)``: the tally of one item under one model.

    The counts are non-negative ints with ``correct_num <= gold_set_size``; the evaluator
    checks each returned pair and names the item when one is not.
    """

    def __call__(self, sentence: Any, w_vector: Any, /) -> tuple[int, int]: ...
