"""Optional dependencies: import a library when it is first needed, or say how to install it.

The one helper every plugin (and the Spark and Dask executors) uses, so that a missing
library always reads the same: a :class:`~assay.errors.MissingDependencyError` with the
``pip install`` command.

>>> require("math").sqrt(4.0)
2.0
"""

from __future__ import annotations

import importlib
from types import ModuleType

from assay.errors import MissingDependencyError

__all__ = ["require"]


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

