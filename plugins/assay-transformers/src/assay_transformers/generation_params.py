"""Generation settings: the keys a model run accepts in ``generation_params`` and their check.

Its own module below :mod:`assay_transformers.generation` and :mod:`assay_transformers.stats`,
which both check the settings, so that neither imports the other for it (no import cycle).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay_uncertainty.manager.model_loop import GENERATION_PARAMS

__all__ = ["GENERATION_PARAMS", "check_generation_params"]


def check_generation_params(params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Validate ``generation_params``; errors name the key and the expected value."""
    params = dict(params or {})
    for key, value in params.items():
        if key not in GENERATION_PARAMS:
            raise InvalidParameterError(
                f"Unknown generation parameter {key!r}; known: {', '.join(GENERATION_PARAMS)}.")
        if key == "stop_strings":
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, (list, tuple)) or not all(isinstance(s, str) and s for s in value):
                raise InvalidParameterError(
                    f"generation_params['stop_strings'] must be a non-empty string or a list of them; got {value!r}.")
            params[key] = list(value)
        elif key == "top_k":
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidParameterError(f"generation_params['top_k'] must be an integer >= 1; got {value!r}.")
        else:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and np.isfinite(value) and value > 0
            if key == "top_p":
                ok = ok and value <= 1
            if not ok:
                bound = "in (0, 1]" if key == "top_p" else "> 0"
                raise InvalidParameterError(f"generation_params[{key!r}] must be a number {bound}; got {value!r}.")
    return params
