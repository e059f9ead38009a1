"""Module-level helpers for executor tests (importable by spawned workers: its folder goes on sys.path).

Not a test module; the tests put this folder on ``sys.path`` so that ``spawn`` workers,
which receive the parent's ``sys.path``, can unpickle these functions by reference.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def _record(path: str) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(f"{os.getpid()}\n")


def _rebuild_model(path: str, weight: int) -> CountingModel:
    _record(path)  # one line per unpickling, with the process that did it
    return CountingModel(path, weight)


class CountingModel:
    """A model that writes a line to ``path`` every time it is unpickled."""

    def __init__(self, path: str, weight: int = 1) -> None:
        self.path = path
        self.weight = weight

    def __reduce__(self):
        return (_rebuild_model, (self.path, self.weight))

    def __len__(self) -> int:
        return 42


def _refuse_pickling(index: int) -> Unpicklable:
    raise AssertionError("this object must never be unpickled")


class Unpicklable:
    """Raises when pickled: proves that a fork worker inherited it."""

    def __init__(self, index: int) -> None:
        self.index = index

    def __reduce__(self):
        raise TypeError(f"task {self.index} was pickled")


def count_unpicklings(path: str | os.PathLike[str]) -> list[int]:
    p = Path(path)
    return [int(line) for line in p.read_text().split()] if p.exists() else []


def weighted_len(task, shared):
    """``fn(task, shared)``: sum of task values times the model's weight."""
    model = shared
    return sum(task) * model.weight


def tally_of(sent, w_vector):
    """A module-level sentence evaluator: items are (correct, gold) pairs."""
    return sent[0], sent[1]


def scaled_tally(sent, w_vector):
    return sent[0] * w_vector.weight, sent[1] * w_vector.weight


def slow_square(task, shared):
    time.sleep(0.02 * (5 - task % 5))  # later tasks finish first
    return task * task


def kill_on(task, shared):
    """Dies by SIGKILL on the task equal to ``shared``."""
    if task == shared:
        os.kill(os.getpid(), signal.SIGKILL)
    return task


def exit_on(task, shared):
    if task == shared:
        os._exit(3)
    return task
