"""pytest fixtures for assay plugin authors (entry point ``pytest11``: ``assay``).

``assay_plugin_system``
    A fresh :class:`~assay.plugins.PluginSystem` with no entry-point plugins (only
    assay's built-ins), installed as the process-wide system for the test, so
    ``assay.load_metric`` and ``assay.evaluate`` see only what the test registers.
``register_assay_plugin``
    ``register_assay_plugin(plugin_module_or_object)`` registers a plugin on that fresh
    system and returns its :class:`~assay.plugins.PluginInfo`.

Example::

    def test_my_metric(register_assay_plugin):
        register_assay_plugin(my_package.plugin)
        results = assay.evaluate(["a"], [["a"]], metrics=["my_metric"])
        assert results[0]["score"]["global"]["score"] == 1.0

This module is imported by pytest at start-up, so it imports nothing heavy.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

import pytest


@pytest.fixture
def assay_plugin_system() -> Iterator[Any]:
    """A fresh plugin system (built-ins only), process-wide for the duration of the test."""
    from assay.plugins import PluginSystem, use_plugin_system

    system = PluginSystem(entry_points=False)
    with use_plugin_system(system):
        yield system


@pytest.fixture
def register_assay_plugin(assay_plugin_system: Any) -> Callable[..., Any]:
    """Register plugin objects on the fresh ``assay_plugin_system``."""

    def register(plugin: Any, name: str | None = None) -> Any:
        return assay_plugin_system.register_plugin(plugin, name)

    return register
