"""A plugin system with only assay-interop registered (the entry point need not be installed)."""

from __future__ import annotations

import pytest

import assay_interop.plugin as interop_plugin
from assay.plugins import PluginSystem, use_plugin_system


@pytest.fixture
def system():
    ps = PluginSystem(entry_points=False)
    ps.register_plugin(interop_plugin, name="interop", distribution="assay-interop")
    with use_plugin_system(ps):
        yield ps
