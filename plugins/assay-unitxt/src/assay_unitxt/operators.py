"""unitxt's field operators for :class:`~assay.metrics.MetricPipeline`: ``Copy``, ``Rename``, ``ListFieldValues``,
``Wrap`` and ``MultiTypeSerializer``.

They act on nested dicts addressed by ``/``-separated paths, as in unitxt: before the
metric, on an instance ``{"prediction", "references", "task_data"}``
(``Copy(field="task_data/context", to_field="references")``); after it, on the scores
``{"score": {"global": {...}, "instance": {...}}}``
(``Rename(field_to_field=[("score/global/f1", "score/global/f1_overlap_with_context")])``).
A source path that does not exist is an error naming the path (``not_exist_ok=True``
skips it, as in unitxt). Operators are plain data (their arguments), so a pipeline that
uses them can be stored with :func:`assay.add_to_catalog`.

>>> Copy(field="task_data/context", to_field="references")({"prediction": "a", "task_data": {"context": "a b"}})
{'prediction': 'a', 'task_data': {'context': 'a b'}, 'references': 'a b'}
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from assay.errors import EvaluationError, InvalidParameterError

__all__ = ["Copy", "CopyFields", "FieldOperator", "ListFieldValues", "MultiTypeSerializer", "Rename", "RenameFields",
           "Wrap", "dict_get", "dict_set"]

_MISSING = object()
_RAISE = object()


def _parts(path: str) -> list[str]:
    return [p for p in path.split("/") if p != ""]


def dict_get(doc: Any, path: str, default: Any = _RAISE) -> Any:
    """The value at ``path`` (``"task_data/context"``; integer parts index lists)."""
    cur = doc
    for part in _parts(path):
        if isinstance(cur, Mapping) and part in cur:
            cur = cur[part]
        elif isinstance(cur, (list, tuple)) and part.lstrip("-").isdigit() and -len(cur) <= int(part) < len(cur):
            cur = cur[int(part)]
        else:
            if default is not _RAISE:
                return default
            raise KeyError(path)
    return cur


def dict_set(doc: dict[str, Any], path: str, value: Any) -> None:
    """Set ``path`` to ``value``, creating the dicts on the way."""
    parts = _parts(path)
    if not parts:
        raise InvalidParameterError(f"Cannot set the empty field path {path!r}.")
    cur = doc
    for part in parts[:-1]:
        nxt = cur.get(part) if isinstance(cur, dict) else None
        if not isinstance(nxt, dict):
            nxt = {}
            cur[part] = nxt
        cur = nxt
    cur[parts[-1]] = value


def dict_delete(doc: dict[str, Any], path: str) -> None:
    parts = _parts(path)
    parent = dict_get(doc, "/".join(parts[:-1])) if len(parts) > 1 else doc
    del parent[parts[-1]]


def _copy_doc(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the nested dicts of ``doc`` (leaves shared): the caller's dicts are never changed."""
    return {k: (_copy_doc(v) if isinstance(v, dict) else v) for k, v in doc.items()}


class FieldOperator:
    """Moves values between field paths: ``field`` / ``to_field`` or ``field_to_field`` (pairs or a dict)."""

    keep_source = True

    def __init__(self, field: str | None = None, to_field: str | None = None, *,
                 field_to_field: Sequence[Sequence[str]] | Mapping[str, str] | None = None,
                 not_exist_ok: bool = False, use_query: bool = True) -> None:
        owner = type(self).__name__
        if field_to_field is not None and (field is not None or to_field is not None):
            raise InvalidParameterError(f"{owner}: give either field / to_field or field_to_field, not both.")
        if field_to_field is None:
            if not isinstance(field, str) or not field:
                raise InvalidParameterError(f"{owner}: 'field' must be a field path such as 'task_data/context'; "
                                            f"got {field!r}.")
            pairs = [(field, to_field if to_field is not None else field)]
        else:
            items = list(field_to_field.items()) if isinstance(field_to_field, Mapping) else list(field_to_field)
            pairs = []
            for item in items:
                if (not isinstance(item, (list, tuple)) or len(item) != 2
                        or not all(isinstance(x, str) and x for x in item)):
                    raise InvalidParameterError(
                        f"{owner}: each entry of 'field_to_field' must be a pair of field paths; got {item!r}.")
                pairs.append((item[0], item[1]))
        if not isinstance(not_exist_ok, bool):
            raise InvalidParameterError(f"{owner}: 'not_exist_ok' must be a bool; got {not_exist_ok!r}.")
        self.field = field
        self.to_field = to_field
        self.field_to_field = field_to_field
        self.not_exist_ok = not_exist_ok
        self.use_query = use_query  # unitxt's flag: paths are always queries here
        self.pairs: list[tuple[str, str]] = pairs

    def catalog_args(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.field_to_field is not None:
            out["field_to_field"] = ([list(p) for p in self.pairs] if not isinstance(self.field_to_field, Mapping)
                                     else dict(self.field_to_field))
        else:
            out["field"] = self.field
            if self.to_field is not None:
                out["to_field"] = self.to_field
        if self.not_exist_ok:
            out["not_exist_ok"] = True
        return out

    def apply(self, doc: dict[str, Any], *, scope: str | None = None, strict: bool = True) -> dict[str, Any]:
        """Apply to ``doc`` (a new dict is returned); with ``scope``, only pairs whose source is under it;
        ``strict=False`` skips missing sources."""
        out = _copy_doc(doc)
        for src, dst in self.pairs:
            if scope is not None and not (src + "/").startswith(scope + "/"):
                continue
            value = dict_get(out, src, _MISSING)
            if value is _MISSING:
                if self.not_exist_ok or not strict:
                    continue
                have = dict_get(out, scope, None) if scope else out
                listing = f" Present: {sorted(have)}." if isinstance(have, Mapping) else ""
                raise EvaluationError(
                    f"{type(self).__name__}: the field {src!r} does not exist.{listing} (not_exist_ok=True skips it.)"
                )
            if not self.keep_source:
                dict_delete(out, src)
            dict_set(out, dst, self.process_value(copy.deepcopy(value), src))
        return out

    def process_value(self, value: Any, path: str) -> Any:
        """The value written to the destination (``Copy`` and ``Rename``: unchanged)."""
        return value

    def __call__(self, doc: dict[str, Any]) -> dict[str, Any]:
        return self.apply(doc)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.catalog_args()!r})"


class Copy(FieldOperator):
    """Copy the value at ``field`` to ``to_field`` (the source stays), as unitxt's ``Copy``."""


class Rename(FieldOperator):
    """Move the value at ``field`` to ``to_field`` (the source is removed), as unitxt's ``Rename``."""

    keep_source = False


class ListFieldValues:
    """Put the values of ``fields`` into a list at ``to_field``, as unitxt's ``ListFieldValues``.

    ``ListFieldValues(fields=["references"], to_field="references")`` wraps one reference
    string into the list of references a metric expects.
    """

    def __init__(self, fields: Sequence[str], to_field: str, *, use_query: bool = True) -> None:
        if isinstance(fields, str) or not all(isinstance(f, str) and f for f in fields) or not fields:
            raise InvalidParameterError(f"ListFieldValues: 'fields' must be a list of field paths; got {fields!r}.")
        if not isinstance(to_field, str) or not to_field:
            raise InvalidParameterError(f"ListFieldValues: 'to_field' must be a field path; got {to_field!r}.")
        self.fields = list(fields)
        self.to_field = to_field
        self.use_query = use_query

    def catalog_args(self) -> dict[str, Any]:
        return {"fields": list(self.fields), "to_field": self.to_field}

    def __call__(self, doc: dict[str, Any]) -> dict[str, Any]:
        out = _copy_doc(doc)
        values = []
        for f in self.fields:
            v = dict_get(out, f, _MISSING)
            if v is _MISSING:
                raise EvaluationError(f"ListFieldValues: the field {f!r} does not exist. Present: {sorted(out)}.")
            values.append(copy.deepcopy(v))
        dict_set(out, self.to_field, values)
        return out

    def __repr__(self) -> str:
        return f"ListFieldValues({self.catalog_args()!r})"


class Wrap(FieldOperator):
    """Put the value at ``field`` inside a list, tuple or set at ``to_field``, as unitxt's ``Wrap``.

    >>> Wrap(field="task_data/question", inside="list", to_field="references")({"task_data": {"question": "q"}})
    {'task_data': {'question': 'q'}, 'references': ['q']}
    """

    _INSIDE = {"list": lambda v: [v], "tuple": lambda v: (v,), "set": lambda v: {v}}

    def __init__(self, field: str | None = None, to_field: str | None = None, *, inside: str,
                 field_to_field: Sequence[Sequence[str]] | Mapping[str, str] | None = None,
                 not_exist_ok: bool = False, use_query: bool = True) -> None:
        if inside not in self._INSIDE:
            raise InvalidParameterError(f"Wrap: 'inside' must be one of {sorted(self._INSIDE)}; got {inside!r}.")
        super().__init__(field, to_field, field_to_field=field_to_field, not_exist_ok=not_exist_ok,
                         use_query=use_query)
        self.inside = inside

    def catalog_args(self) -> dict[str, Any]:
        return {**super().catalog_args(), "inside": self.inside}

    def process_value(self, value: Any, path: str) -> Any:
        return self._INSIDE[self.inside](value)


class MultiTypeSerializer(FieldOperator):
    """Turn the value at ``field`` into text, as unitxt's ``MultiTypeSerializer`` does for plain values.

    A ``str`` stays as it is and a number becomes ``str(number)`` (unitxt's fallback);
    ``process_every_value=True`` does so for each item of a list. unitxt's typed serializers
    (documents, dialogs, tool calls, images, tables) are not implemented: any other value is an
    :class:`~assay.errors.EvaluationError` naming its field, not a guessed rendering.
    """

    def __init__(self, field: str | None = None, to_field: str | None = None, *,
                 field_to_field: Sequence[Sequence[str]] | Mapping[str, str] | None = None,
                 process_every_value: bool = False, not_exist_ok: bool = False, use_query: bool = True) -> None:
        super().__init__(field, to_field, field_to_field=field_to_field, not_exist_ok=not_exist_ok,
                         use_query=use_query)
        if not isinstance(process_every_value, bool):
            raise InvalidParameterError(
                f"MultiTypeSerializer: 'process_every_value' must be a bool; got {process_every_value!r}.")
        self.process_every_value = process_every_value

    def catalog_args(self) -> dict[str, Any]:
        out = super().catalog_args()
        if self.process_every_value:
            out["process_every_value"] = True
        return out

    def _one(self, value: Any, path: str) -> str:
        if isinstance(value, str):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        raise EvaluationError(
            f"MultiTypeSerializer: the value at {path!r} is {value!r:.80} ({type(value).__name__}); only text and "
            "numbers are serialized (unitxt's document, dialog, tool-call, image and table serializers are not "
            "implemented).")

    def process_value(self, value: Any, path: str) -> Any:
        if not self.process_every_value:
            return self._one(value, path)
        if not isinstance(value, (list, tuple)):
            raise EvaluationError(
                f"MultiTypeSerializer: process_every_value needs a list at {path!r}; got {type(value).__name__}.")
        return [self._one(v, f"{path}/{i}") for i, v in enumerate(value)]


# the older unitxt spellings
CopyFields = Copy
RenameFields = Rename
