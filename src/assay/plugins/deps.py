"""Optional dependencies: import a library when it is first needed, or say how to install it.

The one helper every plugin (and the Spark and Dask executors) uses, so that a missing
library always reads the same: a :class:`~assay.errors.MissingDependencyError` with the
``pip install`` command.

>>> require("math").sqrt(4.0)
2.0
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from assay.errors import MissingDependencyError

__all__ = ["moved_to_plugin", "require"]


def require(module: str, *, package: str | None = None, extra: str | None = None, purpose: str = "") -> ModuleType:
    """Import ``module``, or raise :class:`MissingDependencyError` naming what to install.

    Parameters
    ----------
    module : str
        The import name (``"sklearn.metrics"``).
    package : str, optional
        The distribution to install (default: the top-level name of ``module``).
    extra : str, optional
        An assay extra that installs it (the hint then reads ``pip install 'assay[extra]'``).
    purpose : str
        What it is needed for, for the message.

    When the module is installed but one of *its* imports fails, the message says so.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        if getattr(exc, "name", None) not in (None, module, top):
            purpose += f"; importing it failed: {exc}"
        raise MissingDependencyError(package or top, extra=extra, purpose=purpose) from exc


def moved_to_plugin(old_module: str, names: Mapping[str, str], *, package: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` that keeps names which moved to a plugin importable from their old module.

    ``names`` maps each moved name to the plugin module that defines it now; the module is
    imported (by its name, as a string: the core never imports a plugin) when the name is
    first read, and a missing plugin is a :class:`MissingDependencyError` naming
    ``pip install <package>``::

        __getattr__ = moved_to_plugin(__name__, {"MetricPipeline": "assay_unitxt.pipeline"}, package="assay-unitxt")
    """
    table = dict(names)

    def __getattr__(name: str) -> Any:
        where = table.get(name)
        if where is None:
            raise AttributeError(f"module {old_module!r} has no attribute {name!r}")
        module = require(where, package=package, purpose=f"{old_module}.{name} (it moved to {where}, in the "
                                                         f"{package} plugin)")
        return getattr(module, name)

    return __getattr__
