"""Packaging: the pyproject files build without deprecation warnings, `make test` installs the
extras it names, and the optional engines (Spark, torch, Dask, ...) stay optional at import time."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
from packaging.licenses import canonicalize_license_expression
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
PYPROJECTS = sorted(
    [ROOT / "pyproject.toml", ROOT / "examples" / "plugin-template" / "pyproject.toml",
     *ROOT.glob("plugins/*/pyproject.toml")],
    key=str,
)
SETUP_SH = ROOT / "scripts" / "setup.sh"
# Libraries that only some users install: importing assay and discovering every plugin must not
# import them (the import happens when the executor / metric that needs them is created).
OPTIONAL = ("pyspark", "py4j", "torch", "torchmetrics", "dask", "distributed", "matplotlib", "sklearn", "hydra",
            "omegaconf", "nibabel")


def _load(path: Path) -> dict:
    with path.open("rb") as f:
        return tomllib.load(f)


def _ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(ROOT)) for p in paths]


def _all_requirements(project: dict) -> list[Requirement]:
    reqs = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        reqs.extend(extra)
    return [Requirement(r) for r in reqs]


def test_every_plugin_and_the_template_are_checked():
    # The glob must see the four first-party plugins; an empty list would make the rest vacuous.
    assert len(PYPROJECTS) >= 6


@pytest.mark.parametrize("path", PYPROJECTS, ids=_ids(PYPROJECTS))
def test_license_is_an_spdx_string(path):
    # setuptools deprecates the table form `license = { text = ... }` (a BuildBackendWarning
    # on every build); PEP 639's SPDX expression string replaces it.
    license = _load(path)["project"].get("license")
    assert isinstance(license, str), f"{path}: project.license must be an SPDX string, got {license!r}"
    assert canonicalize_license_expression(license) == "Apache-2.0"


@pytest.mark.parametrize("path", PYPROJECTS, ids=_ids(PYPROJECTS))
def test_build_requires_a_setuptools_that_reads_spdx_licenses(path):
    # The SPDX string form needs setuptools 77; an older one rejects the string outright.
    build = _load(path)["build-system"]
    assert build["build-backend"] == "setuptools.build_meta"
    setuptools = [Requirement(r) for r in build["requires"] if Requirement(r).name == "setuptools"]
    assert len(setuptools) == 1, f"{path}: build-system.requires must name setuptools once"
    spec = setuptools[0].specifier
    assert not spec.contains("76.3.0") and spec.contains("77.0.0"), f"{path}: got {spec}"


def _setup_sh() -> str:
    return SETUP_SH.read_text(encoding="utf-8")


def test_setup_installs_only_extras_that_exist():
    # pip merely warns about an extra a package does not define and installs nothing for it.
    match = re.search(r'args=\(-e "\.\[([^\]]*)\]"\)', _setup_sh())
    assert match, "scripts/setup.sh must install the core as -e \".[extras]\""
    named = {e.strip() for e in match.group(1).split(",")}
    defined = set(_load(ROOT / "pyproject.toml")["project"]["optional-dependencies"])
    assert {"test", "plot", "spark"} <= named
    assert named <= defined, f"scripts/setup.sh names extras the core does not define: {named - defined}"


@pytest.mark.parametrize("path", sorted(ROOT.glob("plugins/*/pyproject.toml")),
                         ids=_ids(sorted(ROOT.glob("plugins/*/pyproject.toml"))))
def test_every_plugin_defines_the_test_extra_setup_installs(path):
    assert "$plugin[test]" in _setup_sh()
    assert "test" in _load(path)["project"].get("optional-dependencies", {})


def test_the_core_depends_on_exactly_numpy_pluggy_attrs_pyyaml_tqdm():
    project = _load(ROOT / "pyproject.toml")["project"]
    assert sorted(Requirement(r).name.lower() for r in project["dependencies"]) == [
        "attrs", "numpy", "pluggy", "pyyaml", "tqdm"]


def test_the_values_workflow_plugin_declares_what_it_imports():
    # hydra-core and omegaconf compose the configs, matplotlib draws, nibabel reads NIfTI trees
    project = _load(ROOT / "plugins" / "assay-segmentation" / "pyproject.toml")["project"]
    declared = {Requirement(r).name for r in project["dependencies"]}
    assert {"hydra-core", "omegaconf", "matplotlib", "nibabel"} <= declared
    commands = project["entry-points"]["assay.commands"]
    assert commands == dict.fromkeys(("run", "table", "plot"), "assay_segmentation.plugin")


#: libraries no module of the core may import at module level (issue 23): a function may, to defer one
HEAVY = ("hydra", "omegaconf", "matplotlib", "torch", "transformers", "pyspark", "dask")


def _module_level_imports(tree: ast.Module) -> list[tuple[int, str]]:
    """``(line, module)`` of the imports that run when the module is imported (not in a function or class body's
    functions, not under ``if TYPE_CHECKING:``)."""
    found: list[tuple[int, str]] = []

    def walk(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                walk(node.orelse)
                continue
            if isinstance(node, ast.Import):
                found.extend((node.lineno, alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.append((node.lineno, node.module))
            for field in ("body", "orelse", "finalbody", "handlers"):
                value = getattr(node, field, None)
                if isinstance(value, list):
                    walk(value)

    walk(tree.body)
    return found


def test_module_level_imports_finds_what_runs_at_import():
    tree = ast.parse("import torch\nif TYPE_CHECKING:\n    import dask\ntry:\n    from hydra import x\n"
                     "except ImportError:\n    pass\ndef f():\n    import matplotlib\nclass C:\n    import pyspark\n")
    assert _module_level_imports(tree) == [(1, "torch"), (5, "hydra"), (11, "pyspark")]


def test_no_core_module_imports_a_heavy_library_at_module_level():
    offenders = [f"{path.relative_to(ROOT)}:{line}: {module}"
                 for path in sorted((ROOT / "src" / "assay").rglob("*.py"))
                 for line, module in _module_level_imports(ast.parse(path.read_text(encoding="utf-8")))
                 if module.split(".")[0] in HEAVY]
    assert offenders == []


def test_spark_is_an_extra_not_a_dependency():
    project = _load(ROOT / "pyproject.toml")["project"]
    assert all(Requirement(r).name != "pyspark" for r in project["dependencies"])
    assert any(Requirement(r).name == "pyspark" for r in project["optional-dependencies"]["spark"])


def test_torch_pin_in_setup_satisfies_every_torch_requirement():
    # setup.sh installs one torch build first (a CPU build here); a requirement it does not
    # satisfy would make pip replace it with a multi-GB default build.
    match = re.search(r"^TORCH_VERSION=\$\{TORCH_VERSION:-([0-9][^}]*)\}$", _setup_sh(), re.MULTILINE)
    assert match, "scripts/setup.sh must pin TORCH_VERSION"
    pinned = match.group(1)
    for path in PYPROJECTS:
        for req in _all_requirements(_load(path)["project"]):
            if req.name == "torch":
                assert req.specifier.contains(pinned, prereleases=True), f"{path}: {req} excludes torch {pinned}"


@pytest.mark.slow
def test_importing_assay_and_loading_every_plugin_imports_no_optional_library():
    code = f"""
import json, sys
optional = {OPTIONAL!r}
def loaded():
    return sorted(m for m in optional if m in sys.modules)
import assay
after_import = loaded()
import assay.cli
system = assay.get_plugin_system()
names = {{kind: assay.get_registry(kind).names() for kind in ("metric", "executor", "data_format")}}
print(json.dumps({{"import": after_import, "plugins": loaded(), "errors": [p.name for p in system.errors],
                  "names": names}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    seen = json.loads(out.stdout)
    assert seen["errors"] == []
    # The discovery really ran: the built-in executors and the classic plugin's metrics are there.
    assert {"spark", "processes"} <= set(seen["names"]["executor"])
    assert "accuracy" in seen["names"]["metric"]
    assert seen["import"] == [], f"`import assay` imported {seen['import']}"
    assert seen["plugins"] == [], f"loading the plugins imported {seen['plugins']}"
