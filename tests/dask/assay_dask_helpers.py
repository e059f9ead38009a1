"""Module-level helpers for the Dask tests (not a test module).

The module fixture puts this folder on ``sys.path`` before the ``LocalCluster`` starts, so
its spawned worker processes inherit the path: objects defined here are pickled by
reference and found again on both sides.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from assay import EvaluatorBase


def _rebuild_model(path: str, offset: int) -> CountingModel:
    if path:  # no path: no log
        with open(path, "a", encoding="utf-8") as f:  # one line per unpickling, with the process that did it
            f.write(f"{os.getpid()}\n")
    return CountingModel(path, offset)


class CountingModel:
    """A toy parser (predicts ``pred[i] + offset``) that logs every unpickling to ``path`` (if not empty)."""

    def __init__(self, path: str, offset: int = 0) -> None:
        self.path = path
        self.offset = offset

    def parse(self, sent: dict) -> list[int]:
        return [p + self.offset for p in sent["pred"]]

    def __reduce__(self):
        return (_rebuild_model, (self.path, self.offset))

    def __len__(self) -> int:
        return 42


def unpicklings(path: str | os.PathLike[str]) -> list[int]:
    """The pids that unpickled a :class:`CountingModel` logging to ``path`` (one per unpickling)."""
    p = Path(path)
    return [int(line) for line in p.read_text().split()] if p.exists() else []


class HeadAccuracy(EvaluatorBase):
    """Correct heads out of gold heads, with the model's predictions."""

    def sentence_evaluator(self, sent, w_vector):
        predicted = w_vector.parse(sent)
        gold = sent["heads"]
        return sum(p == g for p, g in zip(predicted, gold)), len(gold)


class HeadAccuracyWithMetrics(HeadAccuracy):
    """Also feeds metrics: prediction = heads right, reference = heads in the gold (floats)."""

    def metric_inputs(self, sent, w_vector):
        correct, gold = self.sentence_evaluator(sent, w_vector)
        return float(correct), [float(gold)]


class FailsOn(EvaluatorBase):
    """Raises on the sentence whose ``id`` is ``bad_id``."""

    def __init__(self, bad_id: int) -> None:
        super().__init__()
        self.bad_id = bad_id

    def sentence_evaluator(self, sent, w_vector):
        if sent["id"] == self.bad_id:
            raise ZeroDivisionError(f"cannot score sentence {sent['id']}")
        return len(sent["heads"]), len(sent["heads"])


class FailsOnceOn(EvaluatorBase):
    """Raises the first time it meets sentence ``bad_id`` (recorded in the file ``marker``), then scores it."""

    def __init__(self, bad_id: int, marker: str) -> None:
        super().__init__()
        self.bad_id = bad_id
        self.marker = marker

    def sentence_evaluator(self, sent, w_vector):
        if sent["id"] == self.bad_id:
            try:
                with open(self.marker, "x", encoding="utf-8") as f:  # only the first attempt creates it
                    f.write(str(os.getpid()))
            except FileExistsError:
                pass
            else:
                raise RuntimeError(f"transient failure on sentence {sent['id']}")
        return len(sent["heads"]), len(sent["heads"])


class CrashesOn(EvaluatorBase):
    """Kills its worker process (``os._exit``) on the sentence whose ``id`` is ``bad_id``."""

    def __init__(self, bad_id: int) -> None:
        super().__init__()
        self.bad_id = bad_id

    def sentence_evaluator(self, sent, w_vector):
        if sent["id"] == self.bad_id:
            os._exit(3)
        return 0, len(sent["heads"])


class ExitsOn(EvaluatorBase):
    """Calls ``sys.exit()`` on item ``bad``."""

    def __init__(self, bad: int) -> None:
        super().__init__()
        self.bad = bad

    def sentence_evaluator(self, sent, w_vector):
        if sent == self.bad:
            import sys

            sys.exit(3)
        return 1, 1


class SleepsOn(EvaluatorBase):
    """Counts every item; sleeps ``seconds`` on item ``slow`` (a hung shard, for timeouts)."""

    def __init__(self, slow: int, seconds: float) -> None:
        super().__init__()
        self.slow = slow
        self.seconds = seconds

    def sentence_evaluator(self, sent, w_vector):
        if sent == self.slow:
            time.sleep(self.seconds)
        return 1, 1


class Unpicklable:
    """A model holding a lock: it cannot be pickled."""

    def __init__(self) -> None:
        self.lock = threading.Lock()


def times_shared(task, shared):
    """``fn(task, shared)`` for executor-level tests: the task's items times the shared factor."""
    return [x * shared for x in task.items()]


def worker_pid(task, shared):
    """``fn(task, shared)``: the worker process that ran the task."""
    return os.getpid()
