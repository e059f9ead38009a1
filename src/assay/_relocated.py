"""Old import paths of code that moved from the core into a plugin: lazy aliases.

A module whose implementation moved keeps its path as a small module that names where
the code lives now::

    from assay._relocated import alias_module

    __getattr__, __dir__ = alias_module(__name__, "assay_segmentation.report.intervals", "assay-segmentation")

A name looked up there is taken from the new module, imported on first use by its name
as a string (so the core never imports a plugin statically, and the import contract
"the core never imports a plugin" holds); the objects are the plugin's own, so
``isinstance`` and pickles agree between the two paths. Without the plugin, the lookup
is a :class:`~assay.errors.MissingDependencyError` naming ``pip install DISTRIBUTION``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

from assay.errors import MissingDependencyError

__all__ = ["alias_module", "import_moved"]


def import_moved(new: str, distribution: str, *, old: str) -> ModuleType:
    """Import the module ``new`` of ``distribution``; its absence is a MissingDependencyError naming the install.

    The plugin missing, or an older version of it without ``new``, is that error; a module
    missing *inside* the plugin (one of its own dependencies) is reported as it is.
    """
    try:
        return importlib.import_module(new)
    except ModuleNotFoundError as exc:
        if exc.name is None or not (new == exc.name or new.startswith(exc.name + ".")):
            raise
        raise MissingDependencyError(distribution, purpose=f"{old} (now {new})") from exc


def alias_module(old: str, new: str, distribution: str, *, names: Iterable[str] | None = None
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A module ``__getattr__`` and ``__dir__`` for the module ``old``, whose names now live in ``new``.

    ``names``: the names forwarded (say, the moved module's ``__all__``); None forwards any
    name the new module has. A name that is not forwarded is an AttributeError, as for
    any module.
    """
    forwarded = None if names is None else frozenset(names)

    def __getattr__(name: str) -> Any:
        if name.startswith("__") or (forwarded is not None and name not in forwarded):
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        module = import_moved(new, distribution, old=f"{old}.{name}")
        try:
            return getattr(module, name)
        except AttributeError:
            raise AttributeError(f"module {old!r} has no attribute {name!r} (it moved to {new})") from None

    def __dir__() -> list[str]:
        if forwarded is not None:
            return sorted(forwarded)
        try:
            return sorted(n for n in dir(import_moved(new, distribution, old=old)) if not n.startswith("__"))
        except MissingDependencyError:
            return []

    return __getattr__, __dir__
