"""The one input check of the catalog's metrics: every prediction and reference value of the kind its entry expects.

unitxt types most of its metrics' inputs ``Any`` and then calls ``str()``, ``float()`` or ``set()`` on
them, so a NaN label, an infinite score or a dict reference is scored, or fails deep inside
scikit-learn with a raw error. Assay rejects such a value before computing, naming its place
(``predictions[3]``, ``references[0][1]``). A catalog metric class mixes in :class:`CheckedInputs`
and declares ``input_type``, what one prediction is: a kind below (``"label"``), or ``"list[<kind>]"``
(a ranking, a multi-label set), ``"list[list[<kind>]]"`` (NER ``(text, type)`` pairs); lists, tuples
and sets count as lists. Each instance's references are a list of ``input_type``. Every value must
be of the kind:

- ``"label"``: a ``str``, ``bool``, integer or finite float (unitxt compares labels as ``str(value)``);
- ``"number"``: a finite real number (not a bool, a string or a complex number, as
  :func:`assay.validation.check_number`);
- ``"castable"``: a finite real number or a ``str`` that ``float()`` reads as one (unitxt's ``cast_fields``);
- ``"text"``: a ``str``;
- ``"mapping"``: a mapping of ``str`` to ``str`` (unitxt's key-value extraction; the mapping is one value);
- ``"tool_call"``: ``{"name": str, "arguments": {...}}``, the arguments nested mappings with ``str`` keys and
  lists, with labels at the ends (unitxt's tool-call key-value extraction).

A value where a list is due, or a list where a value is due, is rejected the same way. The core's
checks of :meth:`assay.metrics.Metric.map_all` (lengths, ``prediction_type``) run next.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.metrics import Metric

__all__ = ["KINDS", "CheckedInputs", "check_inputs"]


def _label(v: Any) -> bool:
    if isinstance(v, (str, bool, numbers.Integral)):
        return True
    return isinstance(v, float) and math.isfinite(v)


def _number(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(float(v))


def _castable(v: Any) -> bool:
    if isinstance(v, str):
        try:
            return math.isfinite(float(v))
        except ValueError:
            return False
    return _number(v)


def _text(v: Any) -> bool:
    return isinstance(v, str)


def _mapping(v: Any) -> bool:
    return isinstance(v, Mapping) and all(isinstance(k, str) and isinstance(x, str) for k, x in v.items())


def _arguments(v: Any) -> bool:
    """A tool call's arguments, nested: mappings with str keys, lists, and labels at the ends."""
    if isinstance(v, Mapping):
        return all(isinstance(k, str) and _arguments(x) for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return all(_arguments(x) for x in v)
    return _label(v)


def _tool_call(v: Any) -> bool:
    return (isinstance(v, Mapping) and isinstance(v.get("name"), str)
            and isinstance(v.get("arguments", {}), Mapping) and _arguments(v))


#: kind -> (test of one value, what the message says is expected)
KINDS: dict[str, tuple[Any, str]] = {
    "label": (_label, "a label (a str, bool, integer or finite float)"),
    "number": (_number, "a finite real number"),
    "castable": (_castable, "a finite real number, or a str that reads as one"),
    "text": (_text, "a str"),
    "mapping": (_mapping, "a mapping of str to str"),
    "tool_call": (_tool_call, "a tool call {'name': str, 'arguments': {str: ...}} with labels as values"),
}


_CONTAINERS = (list, tuple, set, frozenset, np.ndarray)


def _parse(spec: str) -> tuple[int, str]:
    """``"list[list[text]]"`` -> ``(2, "text")``: the levels of lists, then the kind of each value."""
    depth = 0
    while spec.startswith("list[") and spec.endswith("]"):
        spec, depth = spec[5:-1], depth + 1
    if spec not in KINDS:
        raise InvalidParameterError(f"input type {spec!r} is not one of {sorted(KINDS)} (or list[...] of one).")
    return depth, spec


def _walk(x: Any, place: str, depth: int) -> Iterator[tuple[str, Any, bool]]:
    """``(place, value, is_a_value)`` under ``x``: ``depth`` levels of lists walked down; a non-list
    where a list is due is yielded with ``is_a_value`` False."""
    if depth == 0:
        yield place, x, True
    elif not isinstance(x, _CONTAINERS):
        yield place, x, False
    else:
        items = x.tolist() if isinstance(x, np.ndarray) else x
        for i, v in enumerate(items):
            yield from _walk(v, f"{place}[{i}]", depth - 1)


def _check(values: Any, name: str, spec: str, owner: str, offset: int) -> None:
    depth, kind = _parse(spec)
    test, expected = KINDS[kind]
    if isinstance(values, np.ndarray):
        values = values.tolist()
    if not isinstance(values, (list, tuple)):
        return  # not one entry per instance: the core's length checks name it
    for i, item in enumerate(values):
        for place, v, is_value in _walk(item, f"{name}[{offset + i}]", depth):
            if not (test(v) if is_value else False):
                want = expected if is_value else f"a list ({spec} per instance)"
                err = InvalidParameterError(
                    f"Metric {owner!r}: {place} is {v!r:.80} ({type(v).__name__}); expected {want}.")
                err.item = offset + i
                raise err


def check_inputs(metric: Any, predictions: Any, references: Any, *, offset: int = 0) -> None:
    """Raise :class:`~assay.errors.InvalidParameterError` naming the first prediction or reference value
    that is not of ``metric.input_type`` (each instance's references: a list of that type)."""
    owner = getattr(metric, "name", None) or type(metric).__name__
    _check(predictions, "predictions", metric.input_type, owner, offset)
    if references is not None:
        _check(references, "references", f"list[{metric.input_type}]", owner, offset)


class CheckedInputs(Metric):
    """Mixin of the catalog's metric classes: :func:`check_inputs` before the core's checks and ``map``."""

    #: what one prediction is: a kind of :data:`KINDS` (``"label"``), or ``"list[<kind>]"`` (a ranking),
    #: ``"list[list[<kind>]]"`` (NER pairs); each instance's references are a list of such
    input_type: str = "label"

    def map_all(self, predictions: Any, references: Any = None, task_data: Any = None, *,
                offset: int = 0) -> Any:
        check_inputs(self, predictions, references, offset=offset)
        return super().map_all(predictions, references, task_data, offset=offset)
