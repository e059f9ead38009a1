"""Plugins found through real entry points: loaded, reported when broken, never fatal by default."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

import assay
from assay.errors import PluginLoadError, UnknownNameError
from assay.plugins import PluginSystem, use_plugin_system


def by_name(system: PluginSystem) -> dict:
    return {info.name: info for info in system.plugins}


def test_entry_point_metric_is_loadable_by_name(plugin_dir):
    system = PluginSystem()
    with use_plugin_system(system):
        metric = assay.load_metric("throwaway_metric[scale=3]")
    assert type(metric).__name__ == "CountingMetric"
    assert metric.scale == 3
    info = by_name(system)["throwaway_good"]
    assert info.status == "loaded"
    assert (info.distribution, info.version) == ("throwaway-good", "1.2.3")
    assert info.registered == {"metric": ("throwaway_metric",)}


def test_broken_plugins_are_recorded_and_skipped(plugin_dir):
    system = PluginSystem()
    infos = by_name(system)
    broken = infos["throwaway_broken"]
    assert broken.status == "failed"
    assert "RuntimeError" in broken.error and "broken on purpose" in broken.error
    raising = infos["throwaway_raising"]
    assert raising.status == "failed" and "hook failed on purpose" in raising.error
    # the built-ins and the good plugin still work
    assert "serial" in system.registry("executor")
    assert "throwaway_metric" in system.registry("metric")
    assert {p.name for p in system.errors} >= {"throwaway_broken", "throwaway_raising", "zz_throwaway_duplicate"}


def test_duplicate_name_names_both_plugins_and_skips_the_later_whole(plugin_dir):
    system = PluginSystem()
    dup = by_name(system)["zz_throwaway_duplicate"]
    assert dup.status == "failed"
    assert "throwaway_good" in dup.error and "zz_throwaway_duplicate" in dup.error
    # all or nothing: none of its other registrations survive
    assert "zz_unique_metric" not in system.registry("metric")
    assert "zz_never_registered" not in system.registry("executor")
    # the first registration is intact
    assert system.registry("metric").get("throwaway_metric").plugin == "throwaway_good"


def test_strict_mode_makes_a_broken_plugin_fatal(plugin_dir, monkeypatch):
    monkeypatch.setenv("ASSAY_STRICT_PLUGINS", "1")
    with pytest.raises(PluginLoadError, match="throwaway_broken"):
        PluginSystem().registry("metric")


def test_disable_list_by_entry_point_or_distribution(plugin_dir, monkeypatch):
    monkeypatch.setenv("ASSAY_DISABLE_PLUGINS", "throwaway_broken, throwaway-good")
    system = PluginSystem()
    infos = by_name(system)
    assert infos["throwaway_good"].status == "disabled"
    assert infos["throwaway_broken"].status == "disabled"
    # with throwaway-good gone, the duplicate plugin is no longer a duplicate and loads
    assert system.registry("metric").get("throwaway_metric").plugin == "zz_throwaway_duplicate"
    with pytest.raises(UnknownNameError, match="throwaway_metrc"):
        system.registry("metric").get("throwaway_metrc")


def test_load_list_is_an_allow_list(plugin_dir, monkeypatch):
    monkeypatch.setenv("ASSAY_LOAD_PLUGINS", "throwaway_good")
    system = PluginSystem()
    loaded = [p.name for p in system.plugins if p.status == "loaded" and not p.builtin]
    assert loaded == ["throwaway_good"]
    assert "serial" in system.registry("executor")  # built-ins always load


def test_cli_reports_plugins_as_json(plugin_dir):
    env = dict(os.environ, PYTHONPATH=str(plugin_dir) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for var in ("ASSAY_STRICT_PLUGINS", "ASSAY_DISABLE_PLUGINS", "ASSAY_LOAD_PLUGINS"):
        env.pop(var, None)
    out = subprocess.run([sys.executable, "-m", "assay", "plugins", "--json"], env=env,
                         capture_output=True, text=True, check=True).stdout
    infos = {p["name"]: p for p in json.loads(out)}
    assert infos["throwaway_good"]["registered"] == {"metric": ["throwaway_metric"]}
    assert infos["throwaway_broken"]["status"] == "failed"
    listing = subprocess.run([sys.executable, "-m", "assay", "list", "metric"], env=env,
                             capture_output=True, text=True, check=True).stdout
    assert re.search(r"^throwaway_metric +counts things +\[throwaway_good\]$", listing, re.MULTILINE)


def test_importing_assay_imports_no_plugin(plugin_dir):
    code = ("import sys, assay; "
            "print(sorted(m for m in sys.modules if m.startswith(('assay_', 'throwaway', 'assay.executors', "
            "'assay.metrics', 'assay.uncertainty'))))")
    env = dict(os.environ, PYTHONPATH=str(plugin_dir))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
