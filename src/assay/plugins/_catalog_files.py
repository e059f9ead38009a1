"""Local catalog folders: where declarative entries live, and how an entry becomes an object.

A catalog entry is a JSON file, data and never code (no pickle, no source text)::

    {"assay_catalog_entry": 1, "kind": "metric",
     "__class__": "assay-classic:token_overlap", "args": {"normalize": false}}

``__class__`` names what to build: a name a plugin registered (optionally qualified by its
distribution, ``"assay-classic:token_overlap"``), or the dotted path of a class
(``"__main__.SumAccuracy"``, ``"assay_unitxt.pipeline.MetricPipeline"``). A dotted path is
resolved only in a module this process has already imported, in assay's own modules, or in
the package of an installed assay plugin (a distribution with an entry point in the group
``assay``); loading an entry never imports anyone else's code. Entries written before a class
moved to a plugin name its old path (``"assay.metrics.pipeline.MetricPipeline"``), which
still resolves (the old module re-exports the name). ``args`` are the constructor's keyword
arguments; a nested object is ``{"__class__": ..., "args": {...}}`` and a built-in type
``{"__type__": "str"}``.

The name ``metrics.sum_accuracy`` is the file ``<catalog>/metrics/sum_accuracy.json``. The
folders searched, in order: those registered in this process
(:func:`assay.register_local_catalog`, and every ``catalog_path`` given to
:func:`assay.add_to_catalog`), the folders of ``ASSAY_CATALOG_PATH`` (separated by
``os.pathsep``), then the default folder, ``$XDG_CONFIG_HOME/assay/catalog``
(``~/.config/assay/catalog``; ``%APPDATA%\\assay\\catalog`` on Windows).

This module is used by the registry (a name no plugin registered is looked up here) and
imports nothing of the registry itself.
"""

from __future__ import annotations

import builtins
import importlib
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay.errors import InvalidParameterError, SaveFormatError, UnknownNameError
from assay.jsonio import read_json
from assay.plugins._entry_points import read_entry_points

__all__ = [
    "CATALOG_ENV",
    "ENTRY_VERSION",
    "build_entry",
    "catalog_entries",
    "catalog_paths",
    "default_catalog_path",
    "entry_file",
    "find_entry",
    "register_local_catalog",
]

CATALOG_ENV = "ASSAY_CATALOG_PATH"
ENTRY_VERSION = 1
_ENTRY_NAME = re.compile(r"[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)*\Z")
#: builtin types an entry may name with {"__type__": ...} (prediction_type=str ...)
TYPES: dict[str, type] = {t.__name__: t for t in (str, int, float, bool, list, dict, tuple, bytes, object)}

_registered: list[Path] = []
_building: set[str] = set()  # entry files being built (a nested name that leads back is an error)


def default_catalog_path() -> Path:
    """The user's catalog folder: ``$XDG_CONFIG_HOME/assay/catalog`` (``%APPDATA%\\assay\\catalog`` on Windows)."""
    if os.name == "nt" and os.environ.get("APPDATA"):
        return Path(os.environ["APPDATA"]) / "assay" / "catalog"
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "assay" / "catalog"


def register_local_catalog(path: str | os.PathLike[str]) -> Path:
    """Search the folder ``path`` first (in this process) when a name is looked up in the catalog."""
    p = Path(path).expanduser().resolve()
    if p in _registered:
        _registered.remove(p)
    _registered.insert(0, p)
    return p


def catalog_paths() -> list[Path]:
    """The catalog folders searched, in order (registered, ``ASSAY_CATALOG_PATH``, the default)."""
    out = list(_registered)
    for part in os.environ.get(CATALOG_ENV, "").split(os.pathsep):
        if part.strip():
            out.append(Path(part.strip()).expanduser())
    out.append(default_catalog_path())
    seen: list[Path] = []
    for p in out:
        if p not in seen:
            seen.append(p)
    return seen


def check_entry_name(name: Any) -> str:
    if not isinstance(name, str) or not _ENTRY_NAME.match(name):
        raise InvalidParameterError(
            f"A catalog name must be dot-separated parts of letters, digits, '_' and '-' "
            f"(e.g. 'metrics.sum_accuracy'); got {name!r}."
        )
    return name


def entry_file(root: str | os.PathLike[str], name: str) -> Path:
    """``<root>/metrics/sum_accuracy.json`` for ``"metrics.sum_accuracy"``."""
    parts = check_entry_name(name).split(".")
    return Path(root, *parts[:-1], parts[-1] + ".json")


def find_entry(name: str) -> Path | None:
    """The first entry file of ``name`` in :func:`catalog_paths`, or None."""
    if not _ENTRY_NAME.match(name):
        return None
    for root in catalog_paths():
        f = entry_file(root, name)
        if f.is_file():
            return f
    return None


def catalog_entries() -> list[dict[str, Any]]:
    """Every entry file in :func:`catalog_paths`, in search order, for listings.

    One dict per file: ``name`` (``metrics.sum_accuracy``), ``path``, ``kind`` and ``class``
    (from the file), ``shadowed`` (an earlier folder holds the same name, so this file is never
    loaded) and ``error`` (why the file is not a readable entry; "" when it is). Nothing is
    built or imported.
    """
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for root in catalog_paths():
        if not root.is_dir():
            continue
        for f in sorted(root.rglob("*.json")):
            name = ".".join(f.relative_to(root).with_suffix("").parts)
            row: dict[str, Any] = {"name": name, "path": str(f), "kind": "", "class": "",
                                   "shadowed": name in seen, "error": ""}
            seen.add(name)
            if not _ENTRY_NAME.match(name):
                row["error"] = "not a catalog name (dot-separated parts of letters, digits, '_' and '-')"
            else:
                try:
                    data = read_json(f, what="catalog entry")
                except (SaveFormatError, OSError) as exc:
                    row["error"] = str(exc)
                else:
                    if not isinstance(data, dict) or data.get("assay_catalog_entry") != ENTRY_VERSION:
                        row["error"] = f"not an assay catalog entry (no 'assay_catalog_entry': {ENTRY_VERSION})"
                    else:
                        row["kind"] = str(data.get("kind", "metric"))
                        row["class"] = str(data.get("__class__", ""))
            out.append(row)
    return out


# --------------------------------------------------------------------------- building
def _bad(path: Path, msg: str) -> SaveFormatError:
    return SaveFormatError(f"Catalog entry {str(path)!r}: {msg}", path=path)


def _plugin_packages() -> set[str]:
    """The top-level packages of the installed assay plugins (their entry points in the group ``assay``)."""
    points: Any = read_entry_points(["assay"])
    if points is None:  # a layout the lean reader does not read: importlib.metadata's answer
        import importlib.metadata  # deferred: about 25 ms to import, needed only on this rare path

        points = importlib.metadata.entry_points(group="assay")
    return {str(point.value).partition(":")[0].partition(".")[0].strip() for point in points}


def resolve_class(name: str, path: Path, registry: Any) -> Callable[..., Any]:
    """What ``__class__`` names: a registered factory, or a class of an imported (or assay) module."""
    if not isinstance(name, str) or not name:
        raise _bad(path, f"'__class__' must be a non-empty string; got {name!r}.")
    if registry is not None and name in registry:
        entry = registry.get(name)
        return lambda **kw: entry.create(**kw)
    module_name, _, qual = name.rpartition(".")
    module = sys.modules.get(module_name) if module_name else None
    if module is None and (module_name == "assay" or module_name.startswith("assay.")
                           or module_name.partition(".")[0] in _plugin_packages()):
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            module = None
    obj: Any = module
    for part in qual.split(".") if module is not None else ():
        obj = getattr(obj, part, None)
    if module is None or not isinstance(obj, type):
        where = "registered by no installed plugin"
        if module_name:
            where += (f", and module {module_name!r} is not imported in this process" if module is None
                      else f", and module {module_name!r} defines no class {qual!r}")
        raise UnknownNameError(
            f"Catalog entry {str(path)!r} names the class {name!r}, which is {where}. Install the plugin that "
            f"provides it (assay plugins lists what is installed), or import the module that defines it before "
            f"loading the entry."
        )
    return obj


def decode(value: Any, path: Path, registry: Any, where: str) -> Any:
    """Turn stored data back into constructor arguments (nested objects built, types resolved)."""
    if isinstance(value, list):
        return [decode(v, path, registry, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        if "__type__" in value:
            t = TYPES.get(value["__type__"]) if set(value) == {"__type__"} else None
            if t is None:
                raise _bad(path, f"{where}: unknown type {value!r}; known: {', '.join(TYPES)}.")
            return t
        if "__class__" in value:
            return build_object(value, path, registry, where)
        return {k: decode(v, path, registry, f"{where}.{k}") for k, v in value.items()}
    return value


def build_object(spec: dict[str, Any], path: Path, registry: Any, where: str,
                 overrides: dict[str, Any] | None = None) -> Any:
    extra = set(spec) - {"__class__", "args", "assay_catalog_entry", "kind"}
    if extra:
        raise _bad(path, f"{where}: unknown keys {sorted(extra)}.")
    args = spec.get("args", {})
    if not isinstance(args, dict):
        raise _bad(path, f"{where}: 'args' must be an object; got {type(args).__name__}.")
    factory = resolve_class(spec["__class__"], path, registry)
    kwargs = {k: decode(v, path, registry, f"{where}.args.{k}") for k, v in args.items()}
    kwargs.update(overrides or {})
    try:
        return factory(**kwargs)
    except TypeError as exc:
        raise InvalidParameterError(
            f"Catalog entry {str(path)!r}: {spec['__class__']!r} does not accept the arguments "
            f"{sorted(kwargs)} ({exc})."
        ) from None


def read_entry(path: Path, kind: str) -> dict[str, Any]:
    data = read_json(path, what="catalog entry")
    if not isinstance(data, dict) or data.get("assay_catalog_entry") != ENTRY_VERSION:
        raise _bad(path, f"not an assay catalog entry (expected the key 'assay_catalog_entry': {ENTRY_VERSION}).")
    if data.get("kind", "metric") != kind:
        raise _bad(path, f"holds a {data.get('kind')!r}, not a {kind}.")
    if "__class__" not in data:
        raise _bad(path, "has no '__class__'.")
    return data


def build_entry(path: Path, kind: str, registry: Any, **overrides: Any) -> Any:
    """Build the object of the entry file ``path``; ``overrides`` replace stored arguments."""
    key = str(Path(path).resolve())
    if key in _building:
        raise _bad(path, "refers to itself (through a nested catalog name).")
    _building.add(key)
    try:
        return build_object(read_entry(path, kind), path, registry, "entry", overrides)
    finally:
        _building.discard(key)


def builtin_type_name(value: Any) -> str | None:
    """The name of a builtin type an entry can store, or None."""
    if not isinstance(value, type):
        return None
    name = value.__name__
    return name if name in TYPES and getattr(builtins, name, None) is value else None
