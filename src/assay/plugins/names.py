"""Parse catalog names with overrides: ``"f1[average=macro, labels=[1, 2], score_prefix=m_]"``.

A name may be qualified by the plugin that registered it, ``"assay-classic:accuracy"``
(distribution name) or ``"classic:accuracy"`` (entry-point name), to choose between
plugins that registered the same name; overrides follow as usual
(``"assay-classic:accuracy[score_prefix=a_]"``).

Values are read as: ``true`` / ``false`` (any case) -> bool, ``none`` / ``null`` ->
None, integers, floats (``1e-3``, ``inf``, ``nan``), ``[a, b, ...]`` -> list, a string in
single or double quotes -> that string verbatim (commas and brackets allowed), and
anything else -> the bare string with surrounding spaces removed.

>>> parse_name("f1[average=macro, labels=[1, 2]]")
('f1', {'average': 'macro', 'labels': [1, 2]})
>>> format_name("f1", {"average": "macro"})
'f1[average=macro]'
"""

from __future__ import annotations

import re
from typing import Any

from assay.errors import InvalidParameterError

__all__ = ["format_name", "parse_name", "parse_value", "split_qualifier", "split_top_level"]

_NAME = re.compile(r"(?:[A-Za-z0-9_.\-]+:)?[A-Za-z0-9_.\-]+\Z")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_INT = re.compile(r"[+-]?\d+\Z")
_FLOAT = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?\Z|[+-]?(inf|nan)\Z", re.IGNORECASE)


def split_top_level(text: str, spec: str, sep: str = ",") -> list[str]:
    """Split ``text`` on ``sep`` where it is not inside brackets or quotes (``spec`` names it in errors).

    >>> split_top_level("a=[1, 2], b='x,y'", "f1[...]")
    ['a=[1, 2]', " b='x,y'"]
    """
    parts: list[str] = []
    depth = 0
    quote: str | None = None
    start = 0
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise InvalidParameterError(f"Unbalanced ']' in {spec!r}.")
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if quote:
        raise InvalidParameterError(f"Unclosed quote {quote} in {spec!r}.")
    if depth:
        raise InvalidParameterError(f"Unbalanced '[' in {spec!r}.")
    parts.append(text[start:])
    return parts


def parse_value(text: str, spec: str | None = None) -> Any:
    """Read one override value (see the module docstring for the rules)."""
    spec = text if spec is None else spec
    s = text.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        return s[1:-1]
    if s.startswith("["):
        if not s.endswith("]"):
            raise InvalidParameterError(f"Unbalanced '[' in value {s!r} of {spec!r}.")
        inner = s[1:-1]
        if not inner.strip():
            return []
        return [parse_value(part, spec) for part in split_top_level(inner, spec)]
    low = s.lower()
    if low == "true":
        return True
    if low == "false":
        return False
    if low in ("none", "null"):
        return None
    if _INT.match(s):
        return int(s)
    if _FLOAT.match(s):
        return float(s)
    return s


def parse_name(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``"name[k=v, ...]"`` into the name and a dict of parsed overrides."""
    if not isinstance(spec, str):
        raise InvalidParameterError(f"A registered name must be a string, got {type(spec).__name__} {spec!r}.")
    s = spec.strip()
    if "[" in s:
        if not s.endswith("]"):
            raise InvalidParameterError(
                f"Overrides in {spec!r} must close with ']' at the end, as in 'name[key=value, ...]'."
            )
        name, body = s[: s.index("[")].strip(), s[s.index("[") + 1 : -1]
    else:
        name, body = s, ""
    if not _NAME.match(name):
        raise InvalidParameterError(
            f"Invalid name {name!r} in {spec!r}: use letters, digits, '_', '-' and '.', "
            "optionally after a plugin qualifier as in 'assay-classic:accuracy'."
        )
    overrides: dict[str, Any] = {}
    if body.strip():
        for part in split_top_level(body, spec):
            if "=" not in part:
                raise InvalidParameterError(
                    f"Override {part.strip()!r} in {spec!r} is not of the form key=value."
                )
            key, _, value = part.partition("=")
            key = key.strip()
            if not _KEY.match(key):
                raise InvalidParameterError(f"Invalid override key {key!r} in {spec!r}.")
            if key in overrides:
                raise InvalidParameterError(f"Override {key!r} is given twice in {spec!r}.")
            overrides[key] = parse_value(value, spec)
    return name, overrides


def split_qualifier(name: str) -> tuple[str | None, str]:
    """``("assay-classic", "accuracy")`` for ``"assay-classic:accuracy"``; ``(None, name)`` when unqualified.

    >>> split_qualifier("classic:f1")
    ('classic', 'f1')
    >>> split_qualifier("f1")
    (None, 'f1')
    """
    qualifier, sep, base = name.rpartition(":")
    return (qualifier, base) if sep else (None, name)


def _format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_format_value(v) for v in value) + "]"
    text = str(value)
    if isinstance(value, str) and (any(c in text for c in ",[]='\"") or parse_value(text) != text):
        return repr(text)
    return text


def format_name(name: str, overrides: dict[str, Any]) -> str:
    """The canonical spelling of a name with overrides (keys in the given order)."""
    if not overrides:
        return name
    return name + "[" + ", ".join(f"{k}={_format_value(v)}" for k, v in overrides.items()) + "]"
