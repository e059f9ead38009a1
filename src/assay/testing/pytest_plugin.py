"""pytest fixtures for assay plugin authors (entry point ``pytest11``: ``assay``).

``assay_plugin_system``
    A fresh :class:`~assay.plugins.PluginSystem` with no entry-point plugins (only
    assay's built-ins), installed as the process-wide system for the test, so
    ``assay.load_metric`` and ``assay.evaluate`` see only what the test registers.
``register_assay_plugin``
    ``register_assay_plugin(plugin_module_or_object)`` registers a plugin on that fresh
    system and returns its :class:`~assay.plugins.PluginInfo`.
``assay_conformance``
    ``assay_conformance(plugin=None, kinds=None)`` runs assay's common suite
    (:mod:`assay.testing.suite`) on every name registered on that fresh system by the
    test (of ``plugin``, of ``kinds``), and fails naming each check that failed or could
    not run. For one test per name over an installed distribution, use
    :func:`assay.testing.suite.conformance_test` instead.

Example::

    def test_my_metric(register_assay_plugin):
        register_assay_plugin(my_package.plugin)
        results = assay.evaluate(["a"], [["a"]], metrics=["my_metric"])
        assert results[0]["score"]["global"]["score"] == 1.0

This module is imported by pytest at start-up, so it imports nothing heavy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

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


@pytest.fixture
def assay_conformance(assay_plugin_system: Any) -> Callable[..., Any]:
    """Run the common suite on the names the test registered on the fresh ``assay_plugin_system``."""

    def check(plugin: str | None = None, *, kinds: Any = None) -> list[Any]:
        from assay.testing.suite import assert_conforms, registered_entries

        entries = [e for e in registered_entries(assay_plugin_system, distribution=plugin, kinds=kinds)
                   if not e.builtin]
        if not entries:
            raise AssertionError(f"no name registered{f' by {plugin!r}' if plugin else ''} to check: call "
                                 "register_assay_plugin(...) first")
        problems = []
        for entry in entries:
            try:
                assert_conforms(entry, assay_plugin_system)
            except AssertionError as exc:
                problems.append(str(exc))
        if problems:
            raise AssertionError("\n".join(problems))
        return entries

    return check
