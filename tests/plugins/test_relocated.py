"""assay._relocated.alias_module, the one mechanism of old import paths whose code moved to a plugin.

A throwaway "plugin" package is written to a temporary directory on ``sys.path``, so the
imports go through Python's real import system; the old modules are fresh module objects.
"""

from __future__ import annotations

import ast
import pathlib
import sys
import types

import pytest

from assay._relocated import alias_module, import_moved
from assay.errors import MissingDependencyError

SRC = pathlib.Path(__file__).resolve().parents[2] / "src" / "assay"


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """A package ``fake_plugin`` with modules ``a`` (Thing, helper) and ``b`` (Other), and ``c`` that needs a missing
    library."""
    pkg = tmp_path / "fake_plugin"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("__all__ = ['Thing', 'helper']\nclass Thing: pass\ndef helper(): return 42\n")
    (pkg / "b.py").write_text("class Other: pass\n")
    (pkg / "c.py").write_text("import no_such_library_xyz\nclass Needy: pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield pkg
    for name in [m for m in sys.modules if m == "fake_plugin" or m.startswith("fake_plugin.")]:
        del sys.modules[name]


def _old(name: str, own: dict | None = None) -> types.ModuleType:
    module = types.ModuleType(name)
    vars(module).update(own or {})
    return module


def test_a_whole_module_alias_gives_the_plugins_objects(plugin):
    old = _old("assay.old_a")
    old.__getattr__, old.__dir__ = alias_module("assay.old_a", "fake_plugin.a", "fake-plugin")
    import fake_plugin.a

    assert old.Thing is fake_plugin.a.Thing and old.helper() == 42
    assert {"Thing", "helper"} <= set(dir(old))
    with pytest.raises(AttributeError, match="module 'assay.old_a' has no attribute 'Nope'"):
        old.Nope  # noqa: B018


def test_a_name_list_forwards_only_those_names(plugin):
    old = _old("assay.old_a")
    old.__getattr__, old.__dir__ = alias_module("assay.old_a", "fake_plugin.a", "fake-plugin", names=["Thing"])
    assert old.Thing.__module__ == "fake_plugin.a"
    with pytest.raises(AttributeError, match="no attribute 'helper'"):
        old.helper  # noqa: B018
    assert dir(old) == ["Thing"]


def test_a_mapping_takes_names_from_several_modules_and_dir_lists_the_own_names(plugin):
    old = _old("assay.old_mixed", own={"Kept": int})
    old.__getattr__, old.__dir__ = alias_module("assay.old_mixed", {"Thing": "fake_plugin.a", "Other": "fake_plugin.b"},
                                                "fake-plugin", own=vars(old))
    import fake_plugin.a
    import fake_plugin.b

    assert old.Thing is fake_plugin.a.Thing and old.Other is fake_plugin.b.Other and old.Kept is int
    assert {"Kept", "Other", "Thing"} <= set(dir(old))
    with pytest.raises(AttributeError):
        old.helper  # noqa: B018  (in fake_plugin.a, but not mapped)


def test_names_with_a_mapping_is_refused():
    with pytest.raises(TypeError, match="'names' goes with a module name"):
        alias_module("assay.x", {"A": "fake_plugin.a"}, "fake-plugin", names=["A"])


def test_a_missing_plugin_names_the_install():
    old = _old("assay.old_gone", own={"Kept": 1})
    old.__getattr__, old.__dir__ = alias_module("assay.old_gone", "gone_plugin_xyz.mod", "assay-gone", own=vars(old))
    with pytest.raises(MissingDependencyError, match=r"assay\.old_gone\.Thing \(it moved to gone_plugin_xyz\.mod, "
                                                     r"in the assay-gone plugin\).*pip install assay-gone"):
        old.Thing  # noqa: B018
    assert "Kept" in dir(old)  # dir() works without the plugin


def test_an_older_plugin_without_the_module_is_a_missing_install(plugin):
    with pytest.raises(MissingDependencyError, match="pip install fake-plugin"):
        import_moved("fake_plugin.not_yet", "fake-plugin", old="assay.x.Y")


def test_a_module_missing_inside_the_plugin_is_reported_as_itself(plugin):
    with pytest.raises(ModuleNotFoundError, match="no_such_library_xyz") as info:
        import_moved("fake_plugin.c", "fake-plugin", old="assay.x.Needy")
    assert not isinstance(info.value, MissingDependencyError)


def _plugin_module_strings(path: pathlib.Path) -> list[str]:
    """String literals naming a first-party plugin's module (``"assay_unitxt.pipeline"``), docstrings left out."""
    tree = ast.parse(path.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
            and node.value.startswith("assay_") and "." in node.value and " " not in node.value]


def test_every_old_path_in_the_core_uses_the_one_mechanism():
    # a core module that names a plugin module is an old path: it goes through alias_module, nothing hand-written
    users = {path.relative_to(SRC).as_posix(): _plugin_module_strings(path) for path in SRC.rglob("*.py")}
    users = {path: found for path, found in users.items() if found}
    assert "uncertainty/__init__.py" in users and "metrics/pipeline.py" in users  # the scan sees them
    for path in users:
        text = (SRC / path).read_text()
        assert "alias_module(" in text, f"{path} names a plugin module without assay._relocated.alias_module"
        assert "importlib" not in text, f"{path} imports a plugin by hand"
