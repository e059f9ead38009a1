"""The generated reference (docs/gen_reference.py) covers every public name and every registered name.

The site build itself (``make docs``: ``mkdocs build --strict``) needs the ``docs`` extra;
these checks need only assay: they read the Markdown the hook hands to mkdocs.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
from pathlib import Path

import pytest

import assay
from assay.plugins import KINDS

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def gen():
    spec = importlib.util.spec_from_file_location("gen_reference", ROOT / "docs" / "gen_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pages(gen):
    return gen.generate()


def test_every_registered_name_has_a_section(gen, pages):
    for kind in KINDS:
        page = pages[f"reference/names/{kind}.md"]
        names = [e.name for e in assay.get_registry(kind)]
        for name in names:
            assert f"## `{name}` {{ #{gen._slug(kind + '-' + name)} }}" in page, f"{kind} {name!r} has no section"
            if kind in gen._RUN_WITH:  # commands and demo sections are run, not loaded
                assert f"`{gen._RUN_WITH[kind].format(name=name)}`" in page
            else:
                assert f'`assay.load_{kind}("{name}")`' in page
        registry = assay.get_registry(kind)
        namespaces = registry.namespaces() if hasattr(registry, "namespaces") else {}
        for ns in namespaces:
            assert f"## `{ns}:` {{ #{kind}-namespace-{ns} }}" in page, f"{kind} namespace {ns!r} has no section"
        assert len(re.findall(r"^## `", page, re.M)) == len(names) + len(namespaces)


def test_every_public_name_is_listed_and_rendered_once(gen, pages):
    rendered = re.findall(r"^::: (\S+)$", "\n".join(pages.values()), re.M)
    for module_name in gen.API_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError:
            assert f"reference/api/{module_name}.md" not in pages
            continue
        page = pages[f"reference/api/{module_name}.md"]
        for name in module.__all__:
            if name == "__version__":
                continue
            row = re.search(rf"^\| \[`{re.escape(name)}`\]\[(?P<ident>[\w.]+)\] \|", page, re.M)
            assert row, f"{module_name}.{name} is not listed on its page"
            assert rendered.count(row["ident"]) == 1, f"{row['ident']} is rendered {rendered.count(row['ident'])} times"
    assert len(rendered) == len(set(rendered))


def test_an_object_exported_twice_is_rendered_by_its_own_module(pages):
    # assay.downstream re-exports ConfigError from assay.errors, assay re-exports evaluate from assay.metrics
    assert "::: assay.errors.ConfigError" in pages["reference/api/assay.errors.md"]
    assert "::: assay.errors.ConfigError" not in pages["reference/api/assay.downstream.md"]
    assert "::: assay.metrics.api.evaluate" in pages["reference/api/assay.metrics.md"]
    assert "::: assay.metrics.api.evaluate" not in pages["reference/api/assay.md"]


def test_sphinx_roles_become_markdown_code(gen):
    text = "See :class:`~assay.errors.AssayError`, :func:`load <assay.load>` and :math:`x^2`.\n\n    .. math:: a = b\n"
    assert gen.rst_to_markdown(text) == "See `AssayError`, `load` and `x^2`.\n\n    ```text\n    a = b\n    ```\n"


def test_a_moved_constant_is_documented_where_its_plugin_defines_it(gen, monkeypatch):
    # A test module binding the same object (as in a full test run) is not the constant's home.
    import sys
    import types

    from assay_segmentation.downstream.results import MANIFEST

    stray = types.ModuleType("plugins.assay-segmentation.tests.downstream.test_a_very_long_module_name")
    stray.MANIFEST = MANIFEST
    monkeypatch.setitem(sys.modules, stray.__name__, stray)
    idents = {name: ident for name, _obj, ident in gen._exported("assay.downstream")}
    assert idents["MANIFEST"] == "assay_segmentation.downstream.results.MANIFEST"


def _statement_in_file(ident: str) -> bool:
    """A ``class NAME``, ``def NAME``, ``NAME = ...`` or ``from ... import NAME`` statement in the source
    file of the longest importable prefix of ``ident`` (a plain text search, not the generator's
    syntax-tree walk); what mkdocstrings' static reader can find."""
    parts = ident.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            module = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        source = Path(module.__file__).read_text(encoding="utf-8")
        name = re.escape(parts[-1])
        statement = (rf"^\s*(?:async\s+)?(?:class|def)\s+{name}\b",       # class NAME / def NAME
                     rf"^\s*{name}\s*(?::[^=\n]+)?=",                     # NAME = ... / NAME: T = ...
                     rf"^\s*from\s+\S+\s+import\s+(?:\([^)]*|[^\n(]*)\b{name}\b")  # re-exported: an alias
        return any(re.search(p, source, re.M) for p in statement)
    return False


def test_every_rendered_name_is_a_statement_in_its_source(pages):
    # mkdocstrings reads the source: a ::: block naming a class made at import time fails the build.
    rendered = re.findall(r"^::: (\S+)$", "\n".join(pages.values()), re.M)
    modules = set()
    for ident in rendered:
        try:
            importlib.import_module(ident)
            modules.add(ident)
        except ImportError:
            pass
    missing = [i for i in rendered if i not in modules and not _statement_in_file(i)]
    assert not missing, f"rendered but not a statement in their source: {missing[:10]}"


@pytest.mark.parametrize(("kind", "name", "made_in"), [
    ("estimator", "EPSrmi", "assay_uncertainty.estimators_lmp_ensemble"),
    ("metric", "rag_judge.answer_correctness_q_a_gt_loose", "assay_transformers.judge"),
])
def test_a_factory_made_at_import_time_has_its_docstring_on_the_page(gen, pages, kind, name, made_in):
    cls = assay.get_registry(kind).get(name).factory
    module = importlib.import_module(made_in)
    assert cls.__module__ == made_in and getattr(module, cls.__name__) is cls
    assert not re.search(rf"^\s*class\s+{cls.__name__}\b", Path(module.__file__).read_text(encoding="utf-8"), re.M)
    page = pages[f"reference/names/{kind}.md"]
    head = f"## `{name}` {{ #{gen._slug(kind + '-' + name)} }}\n"
    section = page.split(head, 1)[1].split("\n## ", 1)[0]
    assert f"::: {made_in}.{cls.__name__}" not in page
    assert f"| factory | `{made_in}.{cls.__name__}` (made when its module is imported) |" in section
    first_line = gen.rst_to_markdown(inspect.getdoc(cls)).splitlines()[0]
    assert first_line in section
