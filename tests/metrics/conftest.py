"""Put this folder on sys.path (module-level sample metrics pickle by reference) and
provide a fresh plugin system with the sample metrics registered."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = str(Path(__file__).parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import assay_metric_samples  # noqa: E402


@pytest.fixture
def samples_system():
    """A fresh plugin system (no entry points) with the sample metrics registered, made process-wide."""
    from assay.plugins import PluginSystem, use_plugin_system

    system = PluginSystem(entry_points=False)
    system.register_plugin(assay_metric_samples, "assay_metric_samples")
    with use_plugin_system(system):
        yield system


@pytest.fixture
def assay_empty_system():
    """A fresh plugin system with only assay's built-ins (no metric registered)."""
    from assay.plugins import PluginSystem, use_plugin_system

    with use_plugin_system(PluginSystem(entry_points=False)) as system:
        yield system
