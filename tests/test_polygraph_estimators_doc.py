"""docs/polygraph/estimators.md is what scripts/polygraph_table.py generates now (issue 28, item 6).

The table is generated from assay's estimator registry and the installed lm-polygraph 0.7.0
(``make setup`` installs it with ``--no-deps``): an estimator registered by any plugin under its
LM-Polygraph class name changes the table, and this test fails until the file is regenerated
(``.venv/bin/python scripts/polygraph_table.py``).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from assay.plugins import get_registry

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def table():
    spec = importlib.util.spec_from_file_location("polygraph_table", ROOT / "scripts" / "polygraph_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def rows(table):
    return table.rows()


def test_the_committed_table_is_up_to_date(table, rows):
    committed = (ROOT / "docs" / "polygraph" / "estimators.md").read_text(encoding="utf-8")
    assert committed == table.render(rows), (
        "docs/polygraph/estimators.md is out of date: run .venv/bin/python scripts/polygraph_table.py")


def test_every_registered_lm_polygraph_class_name_is_a_registered_row(table, rows):
    # independent of the generator's reading of lm_polygraph's __init__: the classes defined in its
    # estimator modules, found by a plain text search, that assay's registry knows by that name
    folder = table.lm_polygraph_estimators_dir()
    defined = {m for p in folder.rglob("*.py") for m in re.findall(r"^class (\w+)\(", p.read_text(), re.M)}
    registry = get_registry("estimator")
    registered = {name for name in defined if name in registry and registry.get(name).metadata.get("alias_of")}
    assert registered, "no LM-Polygraph class name is registered"
    by_class = {r["class"]: r for r in rows}
    for name in sorted(registered):
        assert by_class[name]["name"] == registry.get(name).metadata["alias_of"], name
    # and a class assay does not register is listed with a reason
    for r in rows:
        assert r["name"] or r["reason"], r["class"]
