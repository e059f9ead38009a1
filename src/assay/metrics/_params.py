"""The metric entry points' spellings of the shared parameter checks (private).

``evaluate``, ``compare``, :class:`~assay.metrics.resample.Resampler`, the interval
functions and the metric base call these; each is a thin keyword-only adapter over
:mod:`assay.validation`, which owns the checks and the wording of every message.
"""

from __future__ import annotations

import os
from typing import Any, Literal, overload

from assay import validation

__all__ = ["check_confidence_level", "check_n_resamples", "check_resampling", "check_seed", "check_str", "new_seed"]


def new_seed() -> int:
    """A fresh seed in ``[0, 2**63)`` from the operating system's entropy (recorded in the results).

    ``secrets.randbits(63)`` without the ``secrets`` module, whose import (hmac, hashlib, OpenSSL) costs
    10-15 ms of the first name lookup: the same 63 bits of ``os.urandom``."""
    return int.from_bytes(os.urandom(8), "big") >> 1


@overload
def check_seed(seed: Any, *, name: str = ..., allow_none: Literal[False], owner: str | None = ...) -> int: ...


@overload
def check_seed(seed: Any, *, name: str = ..., allow_none: bool = ..., owner: str | None = ...) -> int | None: ...


def check_seed(seed: Any, *, name: str = "seed", allow_none: bool = True, owner: str | None = None) -> int | None:
    """``seed`` as an int ``>= 0`` (``None`` passes when ``allow_none``): :func:`assay.validation.check_seed`."""
    return validation.check_seed(seed, name, owner=owner, allow_none=allow_none)


def check_n_resamples(n_resamples: Any, *, name: str = "n_resamples", minimum: int = 0,
                      owner: str | None = None) -> int:
    """``n_resamples`` as an int ``>= minimum`` (not a bool, not a float)."""
    return validation.check_int(n_resamples, name, low=minimum, owner=owner)


def check_confidence_level(level: Any, *, name: str = "confidence_level", owner: str | None = None) -> float:
    """``level`` as a float strictly between 0 and 1 (not a bool, not NaN)."""
    return validation.check_number(level, name, low=0, high=1, closed="neither", owner=owner)


def check_resampling(n_resamples: Any, confidence_level: Any, *, owner: str = "assay.evaluate") -> int:
    """The resampling options of ``evaluate`` and ``compare``: ``n_resamples`` back, ``confidence_level`` checked."""
    check_confidence_level(confidence_level, owner=owner)
    return check_n_resamples(n_resamples, owner=owner)


def check_str(value: Any, *, name: str, owner: str | None = None, allow_empty: bool = True,
              hint: str = "") -> str:
    """``value`` when it is a ``str`` (non-empty unless ``allow_empty``): :func:`assay.validation.check_str`."""
    return validation.check_str(value, name, owner=owner, allow_empty=allow_empty, hint=hint)
