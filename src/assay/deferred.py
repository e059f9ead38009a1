"""numpy, imported on its first use: ``from assay.deferred import np``.

Why: numpy's import costs 0.10-0.15 s, as much as the rest of a first name lookup together.
``import assay; assay.load_metric("accuracy")`` creates a metric object and needs no array
yet, so the modules on that path (the metric engine, validation, assay-classic) import
numpy through this module: ``np`` stands for numpy, and its first attribute lookup
(``np.asarray`` in the first ``update``) imports numpy. Each attribute is then kept on the
object, so a later ``np.asarray`` is one dictionary lookup, as fast as a module's.

Use it only in a module that a cheap path imports and that touches numpy inside functions;
a module-level ``np.float64`` (a default argument, a constant) imports numpy at once, so such
a module keeps those values behind a function. Type checkers see the real numpy.
``tests/test_lookup_without_numpy.py`` checks that the lookup stays numpy-free.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["np"]

if TYPE_CHECKING:
    import numpy as np
else:

    class _DeferredNumpy:
        """Stands for the numpy module; imports it on the first attribute lookup."""

        def __getattr__(self, name: str) -> Any:
            import numpy  # deferred: numpy, the reason of this module

            value = getattr(numpy, name)
            self.__dict__[name] = value  # later lookups of name skip __getattr__
            return value

        def __dir__(self) -> list[str]:
            import numpy  # deferred: numpy

            return dir(numpy)

        def __repr__(self) -> str:
            return "<numpy, imported on first use (assay.deferred)>"

    np = _DeferredNumpy()
