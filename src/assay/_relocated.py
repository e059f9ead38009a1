"""Old import paths of code that moved from the core into a plugin: lazy aliases (the one mechanism).

A module whose code moved keeps its path as a small module that says where the code lives
now. A whole module::

    from assay._relocated import alias_module

    __getattr__, __dir__ = alias_module(__name__, "assay_segmentation.report.intervals", "assay-segmentation")

some names of a module that keeps others (``own=globals()`` lists the module's own names in
``dir()``), from one plugin module or, with a mapping, from several::

    __getattr__, __dir__ = alias_module(__name__, {"UEManager": "assay_uncertainty.manager"},
                                        "assay-uncertainty", own=globals())

A name looked up there is taken from the new module, imported on first use by its name as a
string (so the core never imports a plugin statically, and the import contract "the core
never imports a plugin" holds); the objects are the plugin's own, so ``isinstance`` and
pickles agree between the two paths, and catalog entries that name the old dotted path still
load. Without the plugin (or with an older one that lacks the new module), the lookup is a
:class:`~assay.errors.MissingDependencyError` naming ``pip install DISTRIBUTION``; a module
missing *inside* an installed plugin (one of its own dependencies) is reported as itself.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any

from assay.errors import MissingDependencyError

__all__ = ["alias_module", "import_moved"]


def import_moved(new: str, distribution: str, *, old: str) -> ModuleType:
    """Import the module ``new`` of ``distribution``; its absence is a MissingDependencyError naming the install.

    ``old``: what was looked up (``"assay.metrics.pipeline.MetricPipeline"``), for the message.
    The plugin missing, or an older version of it without ``new``, is that error; a module
    missing *inside* the plugin (one of its own dependencies) is re-raised as it is.
    """
    try:
        return importlib.import_module(new)
    except ModuleNotFoundError as exc:
        if exc.name is None or not (new == exc.name or new.startswith(exc.name + ".")):
            raise
        raise MissingDependencyError(
            distribution, purpose=f"{old} (it moved to {new}, in the {distribution} plugin)") from exc


def alias_module(old: str, new: str | Mapping[str, str], distribution: str, *, names: Iterable[str] | None = None,
                 own: Mapping[str, Any] | None = None
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A module ``__getattr__`` and ``__dir__`` for the module ``old``, whose names now live in ``distribution``.

    ``new``: the plugin module that holds the moved names, or a mapping from each moved name
    to the plugin module that defines it. ``names`` (with a module name only): the names
    forwarded (say, the moved module's ``__all__``); None forwards any public name the new
    module has. ``own``: the old module's ``globals()``, whose names ``dir()`` lists beside
    the moved ones. A name that is not forwarded is an AttributeError, as for any module.
    """
    whole = new if isinstance(new, str) and names is None else None  # every public name of one module
    if isinstance(new, str):
        where: Mapping[str, str] | None = None if names is None else dict.fromkeys(names, new)
    else:
        if names is not None:
            raise TypeError("alias_module: 'names' goes with a module name, not with a mapping of names to modules")
        where = dict(new)

    def __getattr__(name: str) -> Any:
        module_name = whole if where is None else where.get(name)
        if module_name is None or name.startswith("__"):
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        module = import_moved(module_name, distribution, old=f"{old}.{name}")
        try:
            return getattr(module, name)
        except AttributeError:
            raise AttributeError(f"module {old!r} has no attribute {name!r} (it moved to {module_name})") from None

    def __dir__() -> list[str]:
        listed = set(own or ())
        if where is not None:
            listed |= set(where)
        elif whole is not None:
            with contextlib.suppress(MissingDependencyError):  # dir() works without the plugin: the own names
                listed |= {n for n in dir(import_moved(whole, distribution, old=old)) if not n.startswith("_")}
        return sorted(listed)

    return __getattr__, __dir__
