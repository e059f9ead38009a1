"""Annotated options of a metric class as constructor keywords (private).

A metric class that keeps the base ``__init__`` and annotates an option in its body
(``relative_tolerance: float = 0``, a dataclass-like field, as unitxt writes them) takes it as
a keyword of the constructor (``SumAccuracy(relative_tolerance=0.1)``) and of catalog names
(``sum_accuracy[relative_tolerance=0.1]``): :func:`field_signature` is the signature the registry
checks overrides against, :func:`set_fields` sets and type-checks the values.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any

from assay.errors import InvalidParameterError

__all__ = ["field_signature", "own_fields", "set_fields"]


def own_fields(cls: type) -> dict[str, Any]:
    """Annotated public fields of the non-assay classes of ``cls`` -> their annotation (base first)."""
    out: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        if klass is object or klass.__module__.startswith("assay.metrics."):
            continue
        ann = vars(klass).get("__annotations__", {}) or {}
        for name, tp in ann.items():
            if name.startswith("_") or "ClassVar" in str(tp):
                continue
            out[name] = tp
    return out


def _hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 - an annotation we cannot resolve is not checked
        return {}


def field_signature(cls: type) -> inspect.Signature:
    """The constructor signature of a class that uses the base ``__init__``: ``score_prefix`` and the fields."""
    params = [inspect.Parameter("score_prefix", inspect.Parameter.KEYWORD_ONLY, default="", annotation=str)]
    for name in own_fields(cls):
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=getattr(cls, name, None)))
    return inspect.Signature(params)


def set_fields(metric: Any, values: Mapping[str, Any], matches: Callable[[Any, Any], bool]) -> None:
    """Set the dataclass-like fields given to the constructor, checking names and annotated types."""
    cls = type(metric)
    fields = own_fields(cls)
    hints = _hints(cls) if values else {}
    for name, value in values.items():
        if name not in fields:
            accepted = ", ".join(["score_prefix", *fields])
            raise InvalidParameterError(
                f"{cls.__name__}() got an unexpected keyword {name!r}; it accepts {accepted} (declare an option "
                f"as an annotated class attribute, e.g. {name}: float = 0, to make it a keyword)."
            )
        tp = hints.get(name)
        try:
            ok = tp is None or matches(value, tp)
        except Exception:  # noqa: BLE001 - an annotation we cannot check accepts the value
            ok = True
        if not ok:
            raise InvalidParameterError(
                f"The {name!r} parameter of {cls.__name__} must be {getattr(tp, '__name__', tp)}; got "
                f"{type(value).__name__} {value!r:.80}."
            )
        setattr(metric, name, value)
