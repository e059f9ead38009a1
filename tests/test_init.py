"""The package's surface: every ``__all__`` name exists, and the root's TYPE_CHECKING block lists every export.

Modelled on scikit-learn's ``test_import_all_consistency``: every public module of assay (no
part of its name starting with ``_``) and every first-party plugin's package is imported, and
each name its ``__all__`` lists must be an attribute. The root re-exports lazily (``_EXPORTS``,
a module ``__getattr__``), which type checkers and editors cannot follow; its ``if
TYPE_CHECKING:`` block is what they read, so it must import exactly the names of ``_EXPORTS``,
each from the module ``_EXPORTS`` names.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import assay

ROOT = Path(__file__).resolve().parents[1]
PLUGIN_PACKAGES = sorted(p.name for p in ROOT.glob("plugins/assay-*/src/assay_*") if (p / "__init__.py").is_file())


def _public_modules() -> list[str]:
    names = ["assay"]
    for info in pkgutil.walk_packages(assay.__path__, "assay."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue  # private (and assay.__main__, which runs the command line when imported)
        names.append(info.name)
    return sorted(names)


PUBLIC_MODULES = _public_modules()


def test_the_walk_finds_the_framework_packages():
    assert {"assay.core.tally", "assay.executors.base", "assay.metrics", "assay.plugins", "assay.cli"} <= set(
        PUBLIC_MODULES)


@pytest.mark.parametrize("modname", PUBLIC_MODULES + PLUGIN_PACKAGES)
def test_import_all_consistency(modname):
    module = importlib.import_module(modname)
    names = getattr(module, "__all__", ())
    assert len(set(names)) == len(names), f"{modname}.__all__ lists a name twice"
    missing = [name for name in names if not hasattr(module, name)]
    assert not missing, f"{modname}.__all__ lists names it does not have: {missing}"


def test_the_root_all_is_the_exports_and_the_version():
    assert sorted(assay.__all__) == sorted([*assay._EXPORTS, "__version__"])
    for name, module in assay._EXPORTS.items():
        assert getattr(assay, name) is getattr(importlib.import_module(module), name), name


def _type_checking_imports(path: Path) -> dict[str, str]:
    """name -> module of the ``from M import N`` statements inside the module's ``if TYPE_CHECKING:`` block."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    blocks = [node for node in tree.body
              if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"]
    assert len(blocks) == 1, f"{path}: expected one top-level `if TYPE_CHECKING:` block, found {len(blocks)}"
    imported: dict[str, str] = {}
    for node in blocks[0].body:
        assert isinstance(node, ast.ImportFrom) and node.module and not node.level, (
            f"{path}:{node.lineno}: only `from module import name` belongs in the TYPE_CHECKING block")
        for alias in node.names:
            name = alias.asname or alias.name
            assert name not in imported, f"{path}:{node.lineno}: {name} imported twice"
            imported[name] = node.module
    return imported


def test_the_type_checking_block_names_exactly_the_exports_from_their_modules():
    imported = _type_checking_imports(Path(assay.__file__))
    assert sorted(imported) == sorted(assay._EXPORTS), (
        f"missing from the TYPE_CHECKING block: {sorted(set(assay._EXPORTS) - set(imported))}; "
        f"not exported: {sorted(set(imported) - set(assay._EXPORTS))}")
    wrong = {name: (module, assay._EXPORTS[name]) for name, module in imported.items()
             if module != assay._EXPORTS[name]}
    assert not wrong, f"imported under TYPE_CHECKING from another module than _EXPORTS names: {wrong}"
