"""Which public names of assay a plugin replaced (monkeypatching), found by comparing snapshots.

A :class:`Snapshot` holds the public attributes of every imported public ``assay``
module (no path component starts with ``_``) and the members of the classes they define.
:func:`changes` compares two snapshots taken around one plugin's import and registration:

- a name present before whose object changed is *replaced* (``assay.metrics.evaluate``,
  ``assay.metrics.base.Metric.compute``: class members are named by the class's own
  module); one that disappeared is *deleted*;
- a name that appeared and holds a function or class defined in the plugin's own package
  is reported too: *replaced* when it is a lazy export (in ``__all__`` but not yet bound,
  like ``assay.evaluate`` before first use) or its module was first imported during that
  plugin's load (the original could not be seen), *added* otherwise.

Objects are compared by identity, so importing further assay modules or the lazy
``assay.<name>`` exports is never reported.

>>> before = take()
>>> changes(before, take(), plugin_package="my_plugin")
[]
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

import attrs

__all__ = ["Snapshot", "changes", "take"]

# class members that change without anyone patching (abc caches, generics)
_VOLATILE = frozenset({"__dict__", "__weakref__", "__doc__", "__abstractmethods__", "__parameters__",
                       "__annotations__", "__slotnames__"})
_MISSING = object()


@attrs.frozen
class Snapshot:
    """Public assay names -> the objects they held, and the assay modules imported at the time."""

    modules: frozenset[str]
    values: dict[str, Any]
    #: names in a module's ``__all__`` not yet bound (lazy exports such as ``assay.evaluate``)
    lazy: frozenset[str] = frozenset()


def _public_modules() -> list[tuple[str, ModuleType]]:
    return sorted(
        (name, module) for name, module in list(sys.modules.items())
        if (name == "assay" or name.startswith("assay.")) and isinstance(module, ModuleType)
        and not any(part.startswith("_") for part in name.split("."))
    )


def _in_assay(obj: Any) -> bool:
    module = getattr(obj, "__module__", None)
    return isinstance(module, str) and (module == "assay" or module.startswith("assay."))


def take() -> Snapshot:
    """The public attributes of the assay modules imported now, and their classes' members."""
    values: dict[str, Any] = {}
    lazy: set[str] = set()
    seen: set[int] = set()
    modules = _public_modules()
    for module_name, module in modules:
        namespace = vars(module)
        exported = namespace.get("__all__", ())
        if isinstance(exported, (list, tuple)):
            lazy.update(f"{module_name}.{n}" for n in exported if isinstance(n, str) and n not in namespace)
        for attr, value in list(namespace.items()):
            if attr.startswith("_") or isinstance(value, ModuleType):
                continue
            values[f"{module_name}.{attr}"] = value
            if isinstance(value, type) and _in_assay(value) and id(value) not in seen:
                seen.add(id(value))
                for key, member in list(vars(value).items()):
                    private = key.startswith("_") and not (key.startswith("__") and key.endswith("__"))
                    if not private and key not in _VOLATILE:
                        values[f"{value.__module__}.{value.__qualname__}.{key}"] = member
    return Snapshot(frozenset(name for name, _ in modules), values, frozenset(lazy))


def _owner_module(key: str, modules: frozenset[str]) -> str:
    """The longest imported module name that ``key`` starts with."""
    parts = key.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        candidate = ".".join(parts[:cut])
        if candidate in modules:
            return candidate
    return parts[0]


def changes(before: Snapshot, after: Snapshot, *, plugin_package: str | None) -> list[str]:
    """What changed between the snapshots, as ``"assay.x.name"`` (with `` (added)`` / `` (deleted)``)."""
    found: list[str] = []
    for key, value in before.values.items():
        now = after.values.get(key, _MISSING)
        if now is _MISSING:
            if _owner_module(key, after.modules) in after.modules:
                found.append(f"{key} (deleted)")
        elif now is not value:
            found.append(key)
    if plugin_package:
        for key, value in after.values.items():
            if key in before.values:
                continue
            module = getattr(value, "__module__", None)
            if isinstance(module, str) and module.split(".")[0] == plugin_package and callable(value):
                existed = key in before.lazy or _owner_module(key, after.modules) not in before.modules
                found.append(key if existed else f"{key} (added)")
    return sorted(found)
