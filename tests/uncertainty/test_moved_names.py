"""The names that moved to assay-uncertainty (issue 23) still import from assay.uncertainty and assay.

Where the plugin is missing (simulated by putting None in ``sys.modules``, which makes its
import fail as for an uninstalled package), the old path raises MissingDependencyError
naming ``pip install assay-uncertainty``; a broken dependency of an installed plugin is
not reported as a missing plugin.
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import assay
import assay.uncertainty
from assay.errors import MissingDependencyError

MOVED = ["UEManager", "UEDataError", "load_ue_data", "records_to_columns"]


@pytest.mark.parametrize("name", MOVED)
def test_the_old_path_gives_the_plugins_object(name):
    plugin = importlib.import_module("assay_uncertainty.manager")
    assert getattr(assay.uncertainty, name) is getattr(plugin, name)
    namespace: dict = {}
    exec(f"from assay.uncertainty import {name}", namespace)
    assert namespace[name] is getattr(plugin, name)


def test_the_root_alias_and_star_import():
    plugin = importlib.import_module("assay_uncertainty.manager")
    assert assay.UEManager is plugin.UEManager
    namespace: dict = {}
    exec("from assay.uncertainty import *", namespace)
    assert set(assay.uncertainty.__all__) <= set(namespace)
    assert set(MOVED) <= set(dir(assay.uncertainty))


def test_the_contracts_stay_in_the_core():
    from assay.uncertainty import GENERATION_METRICS, Estimator, StatCalculator, plan_calculators

    assert Estimator.__module__ == StatCalculator.__module__ == "assay.uncertainty.base"
    assert plan_calculators.__module__ == "assay.uncertainty.graph"
    assert "accuracy" in GENERATION_METRICS  # the live registry view (assay-uncertainty registers it)


def _without_plugin(monkeypatch):
    for module in [m for m in sys.modules if m == "assay_uncertainty" or m.startswith("assay_uncertainty.")]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, "assay_uncertainty", None)
    monkeypatch.delitem(vars(assay), "UEManager", raising=False)  # the root caches a name once looked up


@pytest.mark.parametrize("name", MOVED)
def test_a_missing_plugin_names_the_pip_install(monkeypatch, name):
    _without_plugin(monkeypatch)
    with pytest.raises(MissingDependencyError, match=r"pip install assay-uncertainty") as info:
        getattr(assay.uncertainty, name)
    assert f"assay.uncertainty.{name}" in str(info.value)
    with pytest.raises(ImportError, match=r"pip install assay-uncertainty"):  # a MissingDependencyError
        exec(f"from assay.uncertainty import {name}", {})


def test_a_missing_plugin_through_the_root(monkeypatch):
    _without_plugin(monkeypatch)
    with pytest.raises(MissingDependencyError, match=r"pip install assay-uncertainty"):
        assay.UEManager  # noqa: B018


def test_the_contracts_import_without_the_plugin(monkeypatch):
    _without_plugin(monkeypatch)
    from assay.uncertainty import Estimator, UEMetric

    assert Estimator and UEMetric


def test_a_broken_dependency_of_the_plugin_is_not_called_a_missing_plugin(monkeypatch):
    def broken(name, package=None):
        raise ModuleNotFoundError("No module named 'scipy'", name="scipy")

    monkeypatch.setattr(importlib, "import_module", broken)  # what assay._relocated imports with
    with pytest.raises(ModuleNotFoundError, match="scipy") as info:
        assay.uncertainty.UEManager  # noqa: B018
    assert not isinstance(info.value, MissingDependencyError)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'UEManagr'"):
        assay.uncertainty.UEManagr  # noqa: B018


def test_importing_the_core_package_imports_no_plugin():
    code = ("import sys, assay.uncertainty; "
            "print(sorted(m for m in sys.modules if m.startswith('assay_')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]"
