"""The assay-unitxt plugin, loaded through the entry point ``unitxt = "assay_unitxt.plugin"`` (group ``assay``).

It registers unitxt's catalog names (``metrics.rouge``, ``metrics.f1_micro`` ...): every entry of
``unitxt_catalog.json`` that assay builds (:mod:`assay_unitxt.catalog`); the metric classes are
imported when a name is loaded. The names are declared in the ``assay.metrics`` entry-point group
(``pyproject.toml``, written by ``scripts/unitxt_catalog.py``), so a lookup imports this plugin alone.
It also adds classes to import (``MetricPipeline``, the field operators) and the handlers of
unitxt's metric class attributes, declared in the entry-point group ``assay.metric_attributes``
(see :mod:`assay_unitxt.attributes`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay import hookimpl


@hookimpl
def assay_register_metrics(register: Callable[..., Any]) -> None:
    """Register unitxt's catalog names that assay builds (see ``docs/unitxt-catalog-entries.md``)."""
    from assay_unitxt.catalog import catalog_entries, factory, load_status

    entries = catalog_entries()
    for name, status in load_status().items():
        if status == "loads":
            register(name, factory(name), description=f"unitxt's {name} ({entries[name]['entry']['__type__']})")
