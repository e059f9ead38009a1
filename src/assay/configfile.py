"""Reading user config files safely: one bounded YAML loader and one unknown-key check.

Every config reader of assay (``assay run``, ``assay ue``, ``assay plot``) reads YAML
through :func:`load_yaml` and checks keys with :func:`check_keys`, so every error reads
the same: ``FILE: KEY.PATH: expected ..., got ...``.

:func:`load_yaml` refuses, with a :class:`~assay.errors.ConfigError` naming the file:

- a file larger than :data:`MAX_BYTES`, a directory, a missing file;
- text that is not UTF-8 (the message gives the byte offset);
- YAML whose document, once every alias is expanded, would hold more than
  :data:`MAX_NODES` nodes (the "billion laughs" alias bomb: a few hundred bytes that
  expand to millions of nodes), recursive aliases, and lists or mappings nested more
  than :data:`MAX_DEPTH` deep (the composers recurse; libyaml's would overflow the C stack);
- anything ``yaml.safe_load`` refuses (tags that construct Python objects included).

The file is parsed with libyaml's safe loader when PyYAML has it (the pure-Python
scanner is quadratic in the nesting depth). The expanded size is counted on the composed node graph before anything is
constructed, with one memoised pass over the distinct nodes, so a bomb is refused in
milliseconds.

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "c.yaml"
>>> _ = p.write_text("a: &x [1, 2]\\nb: *x\\n")
>>> load_yaml(p)
{'a': [1, 2], 'b': [1, 2]}
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from assay.errors import ConfigError

__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_NODES", "check_keys", "close_match", "key_path", "load_yaml"]

#: the largest config file read (bytes)
MAX_BYTES = 4 * 1024 * 1024
#: the most nodes (scalars, lists, mappings) a config may hold once its aliases are expanded
MAX_NODES = 100_000
#: the deepest nesting of lists and mappings (the parsers compose nodes recursively)
MAX_DEPTH = 200


def key_path(path: Iterable[Any]) -> str:
    """``("tasks", 0, "x")`` -> ``"tasks[0].x"``; the empty path is ``"(top level)"``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def close_match(word: Any, candidates: Iterable[Any]) -> str:
    """`` Did you mean 'x'?`` for the closest candidate (``difflib``), or ``""``."""
    names = [str(c) for c in candidates]
    matches = difflib.get_close_matches(str(word), names, n=1, cutoff=0.6)
    return f" Did you mean {matches[0]!r}?" if matches else ""


def check_keys(mapping: dict, allowed: Iterable[Any], *, file: str | Path, path: tuple[Any, ...] = (),
               what: str = "key") -> None:
    """Raise :class:`ConfigError` for the first key of ``mapping`` not in ``allowed``.

    The message names the file, the full key path of the unknown key, the closest
    allowed key and every allowed key.
    """
    allowed = list(allowed)
    for key in mapping:
        if key not in allowed:
            listing = ", ".join(map(str, allowed)) or "none"
            raise ConfigError(f"{file}: {key_path(path + (key,))}: unknown {what} {key!r}."
                              f"{close_match(key, allowed)} Allowed here: {listing}.")


#: libyaml's parser when PyYAML has it (fast, and linear on deep nesting), else the pure-Python one
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_depth(text: str, limit: int, file: Path) -> None:
    """One pass over the parse events (iterative in libyaml) before any recursive composition."""
    depth = 0
    events = yaml.parse(text, Loader=_Loader)
    while True:
        try:
            event = next(events)
        except StopIteration:
            return
        except yaml.YAMLError as exc:  # PyYAML >= 6.0.3 stops at 1,000 flow levels while scanning ahead
            if "maximum nesting depth" not in str(exc):
                raise
            raise ConfigError(f"{file}: expected YAML nested less deeply (at most {limit} levels), got more "
                              f"({str(exc).strip().replace(chr(10), ' ')})") from None
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            if depth > limit:
                mark = event.start_mark
                where = f"at line {mark.line + 1}" if mark is not None else "in the document"
                raise ConfigError(f"{file}: expected YAML nested less deeply (at most {limit} levels), got more "
                                  f"{where}")
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1


def _expanded_size(root: yaml.Node, limit: int, file: Path) -> int:
    """Nodes in the document with every alias expanded; memoised over distinct nodes, iterative."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in _children(node))
            if sizes[key] > limit:
                raise ConfigError(f"{file}: expected at most {limit:,} YAML nodes once aliases are expanded, "
                                  f"got more (an alias bomb?) near line {node.start_mark.line + 1}")
            continue
        if key in sizes:
            continue
        on_path.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in on_path:
                raise ConfigError(f"{file}: expected aliases without a cycle, got a recursive alias at line "
                                  f"{child.start_mark.line + 1}")
            if id(child) not in sizes:
                stack.append((child, False))
    return sizes[id(root)]


def load_yaml(path: str | Path, *, what: str = "config", max_bytes: int = MAX_BYTES,
              max_nodes: int = MAX_NODES) -> Any:
    """Read one YAML file safely (``SafeLoader``), bounded in size and in alias expansion.

    Parameters
    ----------
    path : path
        The file.
    what : str
        What the file is, for the messages (``"config"``, ``"plot config"``).
    max_bytes, max_nodes : int
        The largest file and the most nodes after alias expansion.

    Returns
    -------
    The document as plain Python data (``None`` for an empty file).

    Raises
    ------
    ConfigError
        For every reason listed in the module docstring; the message names the file.
    """
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"{path}: expected a {what} file, got a directory")
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise ConfigError(f"{path}: expected an existing {what} file, got no such file") from None
    if size > max_bytes:
        raise ConfigError(f"{path}: expected a {what} file of at most {max_bytes:,} bytes, got {size:,} bytes")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: expected UTF-8 text, got byte 0x{raw[exc.start]:02x} at offset {exc.start} "
                          "that is not UTF-8") from None
    loader = None
    try:
        _check_depth(text, MAX_DEPTH, path)
        loader = _Loader(text)
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node, max_nodes, path)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: expected valid YAML, got a parse error: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: expected YAML nested less deeply, got nesting too deep to read") from None
    finally:
        if loader is not None:
            loader.dispose()
