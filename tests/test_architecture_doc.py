"""docs/architecture.md matches the house (issue 23, item 7).

The document holds two machine-readable parts, each after an HTML comment marker: the layers
(``<!-- contract: layers -->``, a fenced block, one layer a line, top to bottom) and the
plugins (``<!-- contract: plugins -->``, a Markdown table of distribution, package, commands,
what it owns). The layers must be the import-linter layers contract of ``pyproject.toml``,
line for line; the plugins must be the distributions under ``plugins/``, with their packages
and the commands each declares in its ``assay.commands`` entry points.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"

_FENCE = re.compile(r"```[^\n]*\n(?P<body>.*?)^```", re.M | re.S)


def _after(text: str, marker: str) -> str:
    tag = f"<!-- contract: {marker} -->"
    assert text.count(tag) == 1, f"{DOC.name}: expected one '{tag}' marker, found {text.count(tag)}"
    return text[text.index(tag) + len(tag):]


def doc_layers(text: str) -> list[str]:
    """The lines of the fenced block right after the layers marker."""
    rest = _after(text, "layers")
    match = _FENCE.match(rest.lstrip("\n"))
    assert match, f"{DOC.name}: the layers marker must be followed by a fenced block"
    return [line.strip() for line in match.group("body").splitlines() if line.strip()]


def doc_plugins(text: str) -> dict[str, tuple[str, list[str]]]:
    """distribution -> (package, commands) from the table right after the plugins marker."""
    rows = []
    for line in _after(text, "plugins").lstrip("\n").splitlines():
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    assert rows and rows[0][:3] == ["distribution", "package", "commands"], rows[:1]
    plugins = {}
    for row in rows[2:]:  # after the header and its --- line
        names = re.findall(r"`([^`]+)`", row[2])
        assert names or row[2] in ("—", "-", ""), f"commands cell {row[2]!r}: backticked names or —"
        plugins[row[0].strip("`")] = (row[1].strip("`"), sorted(names))
    return plugins


def _project(path: Path) -> dict:
    with path.open("rb") as f:
        return tomllib.load(f)


def _house_plugins() -> dict[str, tuple[str, list[str]]]:
    found = {}
    for pyproject in sorted(ROOT.glob("plugins/*/pyproject.toml")):
        project = _project(pyproject)["project"]
        packages = [p.name for p in (pyproject.parent / "src").iterdir() if (p / "__init__.py").is_file()]
        assert len(packages) == 1, f"{pyproject.parent.name}: one package under src/, found {packages}"
        commands = sorted(project.get("entry-points", {}).get("assay.commands", {}))
        found[project["name"]] = (packages[0], commands)
    return found


@pytest.fixture(scope="module")
def text() -> str:
    return DOC.read_text(encoding="utf-8")


def test_the_layers_are_the_import_contracts_layers(text):
    contracts = {c["id"]: c for c in _project(ROOT / "pyproject.toml")["tool"]["importlinter"]["contracts"]}
    layers = contracts["layers"]
    assert layers["containers"] == ["assay"]
    assert doc_layers(text) == layers["layers"]


def test_the_plugins_are_the_distributions_under_plugins(text):
    listed, house = doc_plugins(text), _house_plugins()
    assert sorted(listed) == sorted(house), (
        f"in docs/architecture.md but not under plugins/: {sorted(set(listed) - set(house))}; "
        f"under plugins/ but not in docs/architecture.md: {sorted(set(house) - set(listed))}")
    for dist, (package, commands) in house.items():
        assert listed[dist][0] == package, f"{dist}: the doc names the package {listed[dist][0]!r}, not {package!r}"
        assert listed[dist][1] == commands, (
            f"{dist}: the doc lists the commands {listed[dist][1]}, its pyproject declares {commands}")


# --------------------------------------------------------------------------- the parsers can fail
def test_the_parsers_read_what_they_claim():
    page = ("x\n<!-- contract: layers -->\n```text\ncli\n\nmetrics | executors\n```\n"
            "<!-- contract: plugins -->\n| distribution | package | commands | owns |\n|---|---|---|---|\n"
            "| `assay-a` | `assay_a` | `x`, `y` | things |\n| `assay-b` | `assay_b` | — | more |\n\nafter\n")
    assert doc_layers(page) == ["cli", "metrics | executors"]
    assert doc_plugins(page) == {"assay-a": ("assay_a", ["x", "y"]), "assay-b": ("assay_b", [])}


def test_a_missing_marker_is_an_error():
    with pytest.raises(AssertionError, match="contract: layers"):
        doc_layers("no markers here")
