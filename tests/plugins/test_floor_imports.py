"""Clean floors, read from the source: the core imports no plugin, every plugin declares what it
imports, and plugins use only assay's public names.

Every import statement counts, at module top level or inside a function (a lazy import is still
a dependency). The checks parse the files (``ast``) and the ``pyproject.toml`` of each plugin
(``tomllib``); they import nothing from the plugins.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import re
import sys
from importlib import metadata
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "src" / "assay"
PLUGINS = sorted(p for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").is_file())


def imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, absolute module, imported names) of every import in ``path``; relative imports are left out."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module, [alias.name for alias in node.names]))
    return found


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    return _normalize(re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement).group(1))


def declared(pyproject: Path) -> set[str]:
    """The distributions a plugin declares: its dependencies and every optional extra except ``test``."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    names = {_requirement_name(r) for r in project.get("dependencies", [])}
    for extra, requirements in project.get("optional-dependencies", {}).items():
        if extra != "test":
            names |= {_requirement_name(r) for r in requirements}
    return names


def test_the_helpers_read_imports_and_requirements(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("import a.b, c\nfrom d.e import f, g\nfrom . import h\n\ndef k():\n    import assay_x.y\n")
    assert imports(source) == [(1, "a.b", []), (1, "c", []), (2, "d.e", ["f", "g"]), (6, "assay_x.y", [])]
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "p"\ndependencies = ["Assay_Uncertainty>=0.1", "numpy ; python_version>\'3\'"]\n'
                         '[project.optional-dependencies]\ntorch = ["torch[cpu]>=2"]\ntest = ["pytest"]\n')
    assert declared(pyproject) == {"assay-uncertainty", "numpy", "torch"}


# --------------------------------------------------------------------------- the core imports no plugin
def test_the_core_imports_no_plugin():
    offenders = [f"{path.relative_to(ROOT)}:{line}: {module}"
                 for path in sorted(CORE.rglob("*.py"))
                 for line, module, _ in imports(path) if module.split(".")[0].startswith("assay_")]
    assert offenders == [], "the core (src/assay) imports a plugin:\n" + "\n".join(offenders)


def test_the_core_check_sees_a_plugin_import(tmp_path):  # the check above can fail
    bad = tmp_path / "bad.py"
    bad.write_text("def run():\n    from assay_segmentation.synthetic import generate\n")
    assert [m for _, m, _ in imports(bad) if m.split(".")[0].startswith("assay_")] == ["assay_segmentation.synthetic"]


# --------------------------------------------------------------------------- plugins declare what they import
@functools.lru_cache(maxsize=1)
def _packages() -> dict[str, list[str]]:
    return metadata.packages_distributions()


def _distributions_of(top: str) -> set[str]:
    return {_normalize(d) for d in _packages().get(top, [])}


@pytest.mark.parametrize("plugin", PLUGINS, ids=[p.name for p in PLUGINS])
def test_every_plugin_declares_the_distributions_it_imports(plugin):
    own = {path.name for path in (plugin / "src").iterdir() if path.is_dir() and not path.name.startswith(".")}
    wanted = declared(plugin / "pyproject.toml")
    missing = []
    for path in sorted((plugin / "src").rglob("*.py")):
        for line, module, _ in imports(path):
            top = module.split(".")[0]
            if top in own or top in sys.stdlib_module_names or top == "__future__":
                continue
            if top == "assay" or top.startswith("assay_"):  # assay and the first-party plugins
                dists = {_normalize(top)}
            else:
                dists = _distributions_of(top)
                if not dists:
                    missing.append(f"{path.relative_to(ROOT)}:{line}: {module} (no installed distribution provides it)")
                    continue
            if not dists & wanted:
                missing.append(f"{path.relative_to(ROOT)}:{line}: {module} (from {', '.join(sorted(dists))})")
    assert missing == [], f"{plugin.name} imports distributions its pyproject.toml does not declare:\n" + "\n".join(
        missing)


def test_segmentation_declares_the_uncertainty_plugin_it_uses():
    assert "assay-uncertainty" in declared(ROOT / "plugins" / "assay-segmentation" / "pyproject.toml")


# --------------------------------------------------------------------------- plugins use only public names
def _private_uses(path: Path, own: set[str], root: Path = ROOT) -> list[str]:
    found = []
    for line, module, names in imports(path):
        top = module.split(".")[0]
        if top in own or not (top == "assay" or top.startswith("assay_")):
            continue
        where = f"{path.relative_to(root)}:{line}: {module}"
        if any(part.startswith("_") for part in module.split(".")):
            found.append(f"{where} (a private module)")
            continue
        private = [n for n in names if n.startswith("_")]
        if private:
            found.append(f"{where} imports {', '.join(private)}")
            continue
        target = importlib.import_module(module)
        public = getattr(target, "__all__", None)
        for name in names:
            is_module = hasattr(target, "__path__") and importlib.util.find_spec(f"{module}.{name}") is not None
            if not is_module and public is not None and name not in public:
                found.append(f"{where} imports {name}, which is not in its __all__")
    return found


@pytest.mark.parametrize("plugin", PLUGINS, ids=[p.name for p in PLUGINS])
def test_plugins_import_only_public_assay_names(plugin):
    own = {path.name for path in (plugin / "src").iterdir() if path.is_dir()}
    found = [use for path in sorted((plugin / "src").rglob("*.py")) for use in _private_uses(path, own)]
    assert found == [], f"{plugin.name} uses private names of assay or another plugin:\n" + "\n".join(found)


def test_the_public_name_check_sees_private_uses(tmp_path):  # the check above can fail
    source = tmp_path / "uses.py"
    source.write_text("from assay.core.pool import _check_num_shards\nfrom assay.cli._args import add_json\n"
                      "from assay.core.pool import _GLOB_CHARS as G\nfrom assay.core.evaluator import evaluate_shard\n"
                      "from assay.plugins.registry import _close\n")
    found = _private_uses(source, own=set(), root=tmp_path)
    assert found == ["uses.py:1: assay.core.pool imports _check_num_shards", "uses.py:2: assay.cli._args (a private module)",
                     "uses.py:3: assay.core.pool imports _GLOB_CHARS", "uses.py:5: assay.plugins.registry imports _close"]
    other = tmp_path / "other.py"  # a public name missing from the module's __all__
    other.write_text("from assay.core.evaluator import evaluate_shard, log_result\n")
    assert _private_uses(other, own=set(), root=tmp_path) == [
        "other.py:1: assay.core.evaluator imports log_result, which is not in its __all__"]
