"""Checks of the parameters shared by the metric entry points (private).

``evaluate``, ``compare``, :class:`~assay.metrics.resample.Resampler`, the interval
functions and the metric base use these, so the same mistake reads the same everywhere.
Messages follow STYLE.md: the parameter, what was expected, what was received.

.. note:: ``assay.validation`` (core validation module, in progress elsewhere) is
   meant to own these checks; these functions are small on purpose, so that they can
   be replaced by its ``check_seed`` and friends without touching the callers.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError

__all__ = ["check_confidence_level", "check_n_resamples", "check_seed", "check_str"]


def _where(owner: str | None) -> str:
    return f" of {owner}" if owner else ""


def _is_int(value: Any) -> bool:
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_seed(seed: Any, *, name: str = "seed", allow_none: bool = True, owner: str | None = None) -> int | None:
    """``seed`` as an int ``>= 0`` (``None`` passes when ``allow_none``); else :class:`InvalidParameterError`.

    A bool, a float (even ``1.0``: ``1.9`` would otherwise silently become ``1``), a
    string or a negative int is rejected, naming the parameter.
    """
    if seed is None and allow_none:
        return None
    if not _is_int(seed) or seed < 0:
        expected = "a non-negative int" + (" or None" if allow_none else "")
        raise InvalidParameterError(
            f"The {name!r} parameter{_where(owner)} must be {expected}; got {type(seed).__name__} {seed!r}."
        )
    return int(seed)


def check_n_resamples(n_resamples: Any, *, name: str = "n_resamples", minimum: int = 0,
                      owner: str | None = None) -> int:
    """``n_resamples`` as an int ``>= minimum`` (not a bool, not a float)."""
    if not _is_int(n_resamples) or n_resamples < minimum:
        what = "a non-negative int" if minimum == 0 else f"an int >= {minimum}"
        raise InvalidParameterError(
            f"The {name!r} parameter{_where(owner)} must be {what}; got {type(n_resamples).__name__} {n_resamples!r}."
        )
    return int(n_resamples)


def check_confidence_level(level: Any, *, name: str = "confidence_level", owner: str | None = None) -> float:
    """``level`` as a float strictly between 0 and 1 (not a bool, not NaN)."""
    ok = isinstance(level, (numbers.Real, np.floating, np.integer)) and not isinstance(level, (bool, np.bool_))
    if not ok or not math.isfinite(float(level)) or not 0 < float(level) < 1:
        raise InvalidParameterError(
            f"The {name!r} parameter{_where(owner)} must be a number strictly between 0 and 1 (e.g. 0.95); "
            f"got {type(level).__name__} {level!r}."
        )
    return float(level)


def check_str(value: Any, *, name: str, owner: str | None = None, allow_empty: bool = True,
              hint: str = "") -> str:
    """``value`` when it is a ``str`` (non-empty unless ``allow_empty``)."""
    if not isinstance(value, str) or (not allow_empty and not value):
        what = "a str" if allow_empty else "a non-empty str"
        raise InvalidParameterError(
            f"The {name!r} parameter{_where(owner)} must be {what}; got {type(value).__name__} {value!r}.{hint}"
        )
    return value
