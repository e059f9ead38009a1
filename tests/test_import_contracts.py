"""The import-linter contracts of ``pyproject.toml`` cover what they claim to (issue 23, "Contracts that hold").

``make check`` runs the contracts themselves (``lint-imports``). These tests check the
contracts' *coverage*, which import-linter cannot: every first-party plugin is a root package
and in every plugin contract; every top-level module of assay and every module of
``assay.core`` sits in a layer (so the layers contract rules out cycles between them, which the
per-package acyclic contract does not look at); no contract ignores an import. They also
check our own ``public_api`` contract type (``scripts/import_contracts.py``) on hand-built
graphs, so that it can fail, and what it cannot see: names (not modules) with a leading
underscore imported from assay, and imports of another plugin that is not a declared
dependency.
"""

from __future__ import annotations

import ast
import importlib.util
import pkgutil
import re
from pathlib import Path

import grimp
import pytest
import tomllib
from packaging.requirements import Requirement

import assay
import assay.core

ROOT = Path(__file__).resolve().parents[1]
PLUGIN_DIRS = sorted(p for p in ROOT.glob("plugins/assay-*/src/assay_*") if (p / "__init__.py").is_file())
PLUGINS = sorted(p.name for p in PLUGIN_DIRS)


def _pyproject(path: Path) -> dict:
    with path.open("rb") as f:
        return tomllib.load(f)


CONFIG = _pyproject(ROOT / "pyproject.toml")["tool"]["importlinter"]
CONTRACTS = {c["id"]: c for c in CONFIG["contracts"]}


def _contracts_module():
    spec = importlib.util.spec_from_file_location("import_contracts", ROOT / "scripts" / "import_contracts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_plugins_are_found():
    # the six first-party plugins of issue 23's start; more may come, none may vanish unnoticed
    assert {"assay_classic", "assay_interop", "assay_parsing", "assay_segmentation", "assay_transformers",
            "assay_uncertainty"} <= set(PLUGINS)


def test_every_plugin_is_a_root_package_of_the_graph():
    assert sorted(CONFIG["root_packages"]) == sorted(["assay", *PLUGINS])


@pytest.mark.parametrize(("contract", "key"), [
    ("core-imports-no-plugin", "forbidden_modules"),
    ("plugins-public-api", "importers"),
    ("plugins-no-cycles", "ancestors"),
])
def test_every_plugin_contract_names_every_plugin(contract, key):
    assert sorted(CONTRACTS[contract][key]) == PLUGINS


def test_the_public_api_contract_covers_the_core_and_every_plugin():
    assert sorted(CONTRACTS["plugins-public-api"]["packages"]) == sorted(["assay", *PLUGINS])


def test_no_contract_ignores_an_import():
    for contract in CONFIG["contracts"]:
        assert not contract.get("ignore_imports"), f"contract {contract['id']!r} ignores imports"
        assert not contract.get("skip_descendants"), f"contract {contract['id']!r} skips modules"


def _layer_modules() -> set[str]:
    """The modules the layers contract lists, without the "(optional)" parentheses."""
    names = set()
    for layer in CONTRACTS["layers"]["layers"]:
        for name in re.split(r"[|:]", layer):
            names.add(name.strip().strip("()"))
    return names


def test_every_top_level_module_of_assay_and_of_assay_core_is_in_a_layer():
    # The acyclic contract looks inside each package of assay; between them (and between the two
    # layers of assay.core) the layers contract is what rules a cycle out: only if it lists each.
    top = {m.name for m in pkgutil.iter_modules(assay.__path__)} - {"core"}
    core = {f"core.{m.name}" for m in pkgutil.iter_modules(assay.core.__path__)}
    missing = sorted((top | core) - _layer_modules())
    assert not missing, f"not in the layers contract of pyproject.toml: {missing}"
    gone = sorted(_layer_modules() - top - core)
    assert not gone, f"the layers contract lists modules that do not exist: {gone}"


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("assay", *PLUGINS, exclude_type_checking_imports=True)


@pytest.mark.parametrize(("importer", "imported"), [
    # stream read files with the formats' line readers while formats opened pair streams
    ("assay_parsing.stream", "assay_parsing.formats"),
    # stats checked generation settings through generation, which builds its calculators from stats
    ("assay_transformers.stats", "assay_transformers.generation"),
])
def test_the_two_plugin_cycles_stay_broken(graph, importer, imported):
    assert graph.find_shortest_chain(importer=importer, imported=imported) is None
    assert graph.find_shortest_chain(importer=imported, imported=importer) is not None  # the kept direction


def test_the_shared_pieces_live_below_both(graph):
    for module in ("assay_parsing.formats", "assay_parsing.stream", "assay_parsing.columns"):
        assert graph.direct_import_exists(importer=module, imported="assay_parsing.lines")
    for module in ("assay_transformers.generation", "assay_transformers.stats"):
        assert graph.direct_import_exists(importer=module, imported="assay_transformers.generation_params")


# --------------------------------------------------------------------------- the public_api contract type
def _toy_graph(*imports: tuple[str, str]) -> grimp.ImportGraph:
    g = grimp.ImportGraph()
    for module in ("assay", "assay.metrics", "assay.metrics._params", "assay._hidden", "assay._hidden.deep",
                   "assay.cli", "assay.cli._output", "plug", "plug.a", "plug._own", "other", "other._x"):
        g.add_module(module)
    for importer, imported in imports:
        g.add_import(importer=importer, imported=imported, line_number=7, line_contents=f"import {imported}")
    return g


@pytest.mark.parametrize(("module", "private"), [
    ("assay", False), ("assay.metrics", False), ("assay.metrics._params", True), ("assay._hidden.deep", True),
    ("assay.__main__", True), ("_assay", False),  # the top-level name is the distribution's, not a module's
])
def test_is_private(module, private):
    assert _contracts_module().is_private(module) is private


def test_the_public_api_contract_finds_each_private_import_and_only_those():
    contracts = _contracts_module()
    g = _toy_graph(("plug.a", "assay.metrics"), ("plug.a", "assay.metrics._params"), ("plug", "assay._hidden.deep"),
                   ("plug.a", "plug._own"), ("plug._own", "other._x"), ("assay.metrics", "assay.metrics._params"))
    found = contracts.private_imports(g, {"plug"}, {"assay", "plug", "other"})
    assert [(f["importer"], f["imported"], f["line_numbers"]) for f in found] == [
        ("plug", "assay._hidden.deep", [7]),
        ("plug._own", "other._x", [7]),  # another plugin's private module is private too
        ("plug.a", "assay.metrics._params", [7]),
    ]  # not plug.a -> plug._own (its own), not assay.metrics -> its _params (not an importer)


def test_the_public_api_contract_is_kept_without_private_imports_and_broken_with_one():
    contracts = _contracts_module()

    def check(*imports):
        contract = contracts.PublicApiContract(
            name="toy", session_options={}, contract_options={"importers": ["plug"], "packages": ["assay", "plug"]})
        return contract.check(_toy_graph(*imports), verbose=False)

    assert check(("plug.a", "assay.metrics"), ("plug.a", "plug._own")).kept
    broken = check(("plug.a", "assay.cli._output"))
    assert not broken.kept
    assert broken.metadata["private_imports"][0]["imported"] == "assay.cli._output"


# --------------------------------------------------------------------------- what the graph cannot see
def _plugin_sources():
    for package in PLUGIN_DIRS:
        for path in sorted(package.rglob("*.py")):
            yield package.name, path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def test_no_plugin_imports_a_private_name_from_assay():
    # `from assay.metrics import _helper` imports the public module assay.metrics, so the
    # graph (and the contract) cannot tell; the name is private all the same.
    bad = []
    for _, path, tree in _plugin_sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "assay":
                bad += [f"{path.relative_to(ROOT)}:{node.lineno} {node.module}.{a.name}"
                        for a in node.names if a.name.startswith("_")]
    assert not bad, bad


def _declared(plugin_dir: Path) -> set[str]:
    project = _pyproject(plugin_dir.parents[1] / "pyproject.toml")["project"]
    reqs = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        reqs.extend(extra)
    return {Requirement(r).name.replace("-", "_").lower() for r in reqs}


def test_a_plugin_imports_another_plugin_only_when_it_declares_it():
    bad = []
    for plugin_dir in PLUGIN_DIRS:
        declared = _declared(plugin_dir)
        for path in sorted(plugin_dir.rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                names = ([node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level
                         else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
                for name in names:
                    top = name.split(".")[0]
                    if top in PLUGINS and top != plugin_dir.name and top not in declared:
                        bad.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {name}")
    assert not bad, bad
