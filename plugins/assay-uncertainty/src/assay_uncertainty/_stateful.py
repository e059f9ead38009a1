"""A minimal streaming-metric base: ``update`` / ``compute`` / ``reset`` / ``merge``.

Used by the calibration and ensemble metrics of this plugin. The state is a dict of numpy
arrays (additive tallies merged by addition) or lists of per-example arrays (merged by
concatenation, in shard order), so ``merge`` of shard states equals one pass over all data.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError

__all__ = ["StatefulMetric"]


class StatefulMetric:
    """Base of this plugin's streaming metrics.

    Subclasses implement ``_initial_state() -> dict`` (arrays are summed on merge, lists
    concatenated), ``update(...)`` and ``compute()``.
    """

    name: str = ""
    higher_is_better: bool = False
    main_score: str = ""

    def __init__(self) -> None:
        self.main_score = self.main_score or self.name
        self.reset()

    def _initial_state(self) -> dict[str, Any]:
        raise NotImplementedError

    def reset(self) -> None:
        """Forget everything seen so far."""
        self.state: dict[str, Any] = self._initial_state()

    def merge(self, other: "StatefulMetric") -> "StatefulMetric":
        """Add ``other``'s state (a shard of the same metric) to this one, in place; returns self."""
        if type(other) is not type(self):
            raise InvalidParameterError(
                f"Can only merge a {type(self).__name__} with another; got {type(other).__name__}."
            )
        for key, value in other.state.items():
            if isinstance(value, list):
                self.state[key].extend(value)
            else:
                self.state[key] = self.state[key] + value
        return self

    def clone(self) -> "StatefulMetric":
        """A copy with the same options and state."""
        return copy.deepcopy(self)

    def __call__(self, *args: Any) -> Any:
        """One-shot: reset, update with the arguments, compute."""
        self.reset()
        self.update(*args)
        return self.compute()

    def update(self, *args: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def compute(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def as_float_array(x: Any, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise InvalidParameterError(f"Expected numeric `{name}`; got an array of dtype {arr.dtype}.")
    return arr.astype(np.float64, copy=False) if arr.dtype != np.float32 else arr
