"""Plugins found through real entry points: loaded, reported when broken, never fatal by default."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

import assay
from assay.errors import AmbiguousNameError, DuplicateRegistrationError, PluginLoadError, UnknownNameError
from assay.plugins import PluginSystem, use_plugin_system


def by_name(system: PluginSystem) -> dict:
    return {info.name: info for info in system.plugins}


def test_entry_point_metric_is_loadable_by_name(plugin_dir, monkeypatch):
    monkeypatch.setenv("ASSAY_DISABLE_PLUGINS", "zz-throwaway-duplicate")  # it makes the name ambiguous
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
    assert {p.name for p in system.errors} == {"throwaway_broken", "throwaway_raising"}


# Changed for issue 10: a name two plugins register used to knock the later plugin out whole
# (and silently hand the name to the earlier one). Now both stay loaded and the name is ambiguous.
def test_duplicate_name_keeps_both_plugins_and_makes_the_name_ambiguous(plugin_dir):
    system = PluginSystem()
    infos = by_name(system)
    dup, good = infos["zz_throwaway_duplicate"], infos["throwaway_good"]
    assert dup.status == good.status == "loaded"
    assert dup.clashes == {"metric": {"throwaway_metric": ("throwaway_good",)}}
    assert good.clashes == {"metric": {"throwaway_metric": ("zz_throwaway_duplicate",)}}
    # the rest of the later plugin is registered
    assert "zz_unique_metric" in system.registry("metric")
    assert "zz_never_registered" in system.registry("executor")
    with use_plugin_system(system):
        with pytest.raises(AmbiguousNameError) as caught:
            assay.load_metric("throwaway_metric")
        message = str(caught.value)
        for fragment in ("throwaway-good", "zz-throwaway-duplicate", "'throwaway-good:throwaway_metric'",
                         "'zz-throwaway-duplicate:throwaway_metric'", "ASSAY_DISABLE_PLUGINS"):
            assert fragment in message
        # qualified by distribution (any spelling PEP 503 treats as equal) or by entry-point name
        assert type(assay.load_metric("throwaway-good:throwaway_metric")).__name__ == "CountingMetric"
        assert assay.load_metric("Throwaway_Good:throwaway_metric[scale=2]").scale == 2
        assert assay.load_metric("throwaway_good:throwaway_metric", scale=5).scale == 5
        assert assay.load_metric("zz-throwaway-duplicate:throwaway_metric") == {}
        assert assay.load_metric("zz_throwaway_duplicate:throwaway_metric[a=1]") == {"a": 1}
        with pytest.raises(UnknownNameError, match="no plugin 'nobody' registered 'throwaway_metric'"):
            assay.load_metric("nobody:throwaway_metric")
    # the error is a lookup error and a duplicate-registration error
    assert issubclass(AmbiguousNameError, LookupError) and issubclass(AmbiguousNameError, DuplicateRegistrationError)


def test_strict_mode_makes_a_clash_fatal(plugin_dir, monkeypatch):
    monkeypatch.setenv("ASSAY_STRICT_PLUGINS", "1")
    monkeypatch.setenv("ASSAY_DISABLE_PLUGINS", "throwaway_broken,throwaway_raising")
    with pytest.raises(DuplicateRegistrationError, match="'throwaway_metric' is registered by both"):
        PluginSystem().registry("metric").get("throwaway_metric")  # the first lookup loads every plugin


def test_strict_mode_makes_a_broken_plugin_fatal(plugin_dir, monkeypatch):
    monkeypatch.setenv("ASSAY_STRICT_PLUGINS", "1")
    with pytest.raises(PluginLoadError, match="throwaway_broken"):
        PluginSystem().registry("metric").get("throwaway_metric")  # the first lookup loads every plugin


def test_disable_list_by_entry_point_or_distribution(plugin_dir, monkeypatch):
    monkeypatch.setenv("ASSAY_DISABLE_PLUGINS", "throwaway_broken, throwaway-good")
    system = PluginSystem()
    infos = by_name(system)
    assert infos["throwaway_good"].status == "disabled"
    assert infos["throwaway_broken"].status == "disabled"
    # with throwaway-good gone, the name is no longer ambiguous
    assert system.registry("metric").get("throwaway_metric").plugin == "zz_throwaway_duplicate"
    assert not by_name(system)["zz_throwaway_duplicate"].clashes
    with pytest.raises(UnknownNameError, match="throwaway_metrc"):
        system.registry("metric").get("throwaway_metrc")


def test_load_list_is_an_allow_list(plugin_dir, monkeypatch):
    monkeypatch.setenv("ASSAY_LOAD_PLUGINS", "throwaway_good")
    system = PluginSystem()
    loaded = [p.name for p in system.plugins if p.status == "loaded" and not p.builtin]
    assert loaded == ["throwaway_good"]
    assert "serial" in system.registry("executor")  # built-ins always load


@pytest.mark.slow
def test_cli_reports_plugins_as_json(plugin_dir):
    env = dict(os.environ, PYTHONPATH=str(plugin_dir) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for var in ("ASSAY_STRICT_PLUGINS", "ASSAY_DISABLE_PLUGINS", "ASSAY_LOAD_PLUGINS"):
        env.pop(var, None)
    out = subprocess.run([sys.executable, "-m", "assay", "plugins", "--json"], env=env,
                         capture_output=True, text=True, check=True).stdout
    infos = {p["name"]: p for p in json.loads(out)}
    assert infos["throwaway_good"]["registered"] == {"metric": ["throwaway_metric"]}
    assert infos["throwaway_broken"]["status"] == "failed"
    assert infos["zz_throwaway_duplicate"]["clashes"] == {"metric": {"throwaway_metric": ["throwaway_good"]}}
    listing = subprocess.run([sys.executable, "-m", "assay", "list", "metric"], env=env,
                             capture_output=True, text=True, check=True).stdout
    assert re.search(r"^throwaway-good:throwaway_metric +counts things +\[throwaway_good\]  \(ambiguous\)$",
                     listing, re.MULTILINE)
    assert re.search(r"^zz_unique_metric +.*\[zz_throwaway_duplicate\]$", listing, re.MULTILINE)
    assert ("metric 'throwaway_metric' is registered by 2 plugins: load it as throwaway-good:throwaway_metric "
            "or zz-throwaway-duplicate:throwaway_metric") in listing


def test_importing_assay_imports_no_plugin(plugin_dir):
    code = ("import sys, assay; "
            "print(sorted(m for m in sys.modules if m.startswith(('assay_', 'throwaway', 'assay.executors', "
            "'assay.metrics', 'assay.uncertainty'))))")
    env = dict(os.environ, PYTHONPATH=str(plugin_dir))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_first_party_plugins_load_without_any_reported_problem():
    """Guards the monkeypatch detection against false alarms: assay's own plugins replace nothing."""
    env = dict(os.environ)
    for var in ("ASSAY_STRICT_PLUGINS", "ASSAY_DISABLE_PLUGINS", "ASSAY_LOAD_PLUGINS"):
        env.pop(var, None)
    run = subprocess.run([sys.executable, "-m", "assay", "plugins", "--json"], env=env,
                         capture_output=True, text=True, check=True)
    infos = {p["name"]: p for p in json.loads(run.stdout)}
    for name in ("classic", "parsing", "segmentation", "uncertainty"):
        assert infos[name]["status"] == "loaded", infos[name]
    assert all(not p["replaced"] and not p["clashes"] for p in infos.values())
    assert run.stderr == ""
