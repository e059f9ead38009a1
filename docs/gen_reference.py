"""Generate the reference pages of the documentation site from the live code.

An mkdocs hook (``hooks:`` in ``mkdocs.yml``), so ``mkdocs build`` and ``mkdocs serve``
always document what is installed:

- ``reference/api/<module>.md``: one page per public module, one section per name in the
  module's ``__all__``, rendered by mkdocstrings from the docstrings. An object exported by
  several modules is rendered once, on the page of the module that owns it (the longest
  module path that is a prefix of where it is defined), and linked from the others.
- ``reference/names/<kind>.md``: one page per plugin kind (``assay.plugins.KINDS``), one
  section per name in ``assay.get_registry(kind)``: the registering plugin, how to load
  it, its options with their defaults, and the factory's docstring.

The generated pages exist only in the build (``File.generated``); nothing is written into
``docs/``. The hook also appends an "API reference" and a "Registered names" section to
the nav, and any top-level ``docs/*.md`` guide the nav does not list to "Guides".

Run as a script, ``python docs/gen_reference.py OUT_DIR`` writes the same pages under
``OUT_DIR`` for inspection.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import logging
import re
import sys
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.hooks.gen_reference")

#: Public modules documented in the API reference, in nav order. A module that is not
#: there (a feature not merged yet) is left out with a note in the build log.
API_MODULES: tuple[str, ...] = (
    "assay",
    "assay.metrics",
    "assay.uncertainty",
    "assay.downstream",
    "assay.report",
    "assay.testing",
    "assay.validation",
    "assay.functional",
    "assay.compiled",
    "assay.render",
    "assay.jsonio",
    "assay.errors",
    "assay.executors.base",
    "assay.core.protocols",
    "assay.plugins",
    "assay.distributed",
    "assay.cli.commands",
    "assay.demo",
)

#: What each module page says about itself before the names (the module docstring follows).
_MODULE_TITLES: dict[str, str] = {
    "assay": "the top-level names",
    "assay.executors.base": "the executor protocol",
    "assay.core.protocols": "the Protocols at the seams (shard, executor, sentence evaluator)",
}

_KIND_TITLES: dict[str, str] = {
    "metric": "Metrics",
    "estimator": "Uncertainty estimators",
    "stat_calculator": "Statistic calculators",
    "ue_metric": "UE metrics",
    "sentence_evaluator": "Sentence evaluators",
    "executor": "Executors",
    "data_format": "Data formats",
    "task": "Downstream tasks",
    "aggregation": "Aggregations",
    "generation_metric": "Generation metrics",
    "command": "Commands",
    "demo_section": "Demo sections",
    "model_backend": "Model backends",
}

#: kinds that are not loaded by name but run from the command line: how to run one
_RUN_WITH: dict[str, str] = {
    "command": "assay {name} --help",
    "demo_section": "assay demo --section {name}",
}

#: Class attributes worth a row in a registered name's table, when the factory has them.
_ATTRIBUTES = ("main_score", "higher_is_better", "level", "stats", "dependencies", "convention")

_pages: dict[str, str] = {}

# Document this checkout: assay and every plugin under plugins/ (those added later too) from
# the front of sys.path, for the imports here and for mkdocstrings (which reads sys.path when
# it starts, after mkdocs loaded this hook), whatever the environment has installed.
_ROOT = Path(__file__).resolve().parents[1]
for _src in [_ROOT / "src", *sorted(_ROOT.glob("plugins/*/src"))][::-1]:
    if str(_src) in sys.path:
        sys.path.remove(str(_src))
    sys.path.insert(0, str(_src))


# ----------------------------------------------------------------------- docstrings
_ROLE = re.compile(r":(?:[a-z]+:)?(?P<role>[a-z]+):`(?P<text>[^`]+)`")
_MATH_LINE = re.compile(r"^(?P<indent>[ \t]*)\.\. math::[ \t]*(?P<expr>\S.*)$", re.M)
_MATH_BLOCK = re.compile(r"^(?P<indent>[ \t]*)\.\. math::[ \t]*\n(?P<body>(?:(?P=indent)[ \t]+\S.*\n|[ \t]*\n)+)", re.M)


def _role(match: re.Match[str]) -> str:
    text = match.group("text")
    if match.group("role") != "math":
        text = re.sub(r"^(.*?)\s*<.*>$", r"\1", text)   # :class:`title <target>` -> title
        if text.startswith("~"):
            text = text[1:].rsplit(".", 1)[-1]
    return f"`{text}`"


def rst_to_markdown(text: str) -> str:
    """Sphinx roles (``:class:`~a.B```) and ``.. math::`` directives, as Markdown code.

    The docstrings are numpydoc with Sphinx roles, which Markdown would print verbatim.
    """
    text = _MATH_BLOCK.sub(lambda m: "\n".join(
        [m.group("indent") + "```text"]
        + [m.group("indent") + ln.strip() for ln in m.group("body").strip("\n").splitlines() if ln.strip()]
        + [m.group("indent") + "```", "", ""]), text)
    text = _MATH_LINE.sub(lambda m: f"{m.group('indent')}```text\n{m.group('indent')}{m.group('expr').strip()}"
                                    f"\n{m.group('indent')}```", text)
    return _ROLE.sub(_role, text)


try:
    import griffe
except ImportError:  # running as a script without the docs extra
    griffe = None
else:
    class RstRoles(griffe.Extension):
        """A griffe extension: every docstring through :func:`rst_to_markdown` before it is parsed."""

        def on_object(self, *, obj: Any, **kwargs: Any) -> None:
            if not obj.is_alias and obj.docstring is not None:
                obj.docstring.value = rst_to_markdown(obj.docstring.value)


# ----------------------------------------------------------------------- helpers
@functools.cache
def _statements(path: str) -> tuple[ast.stmt, ...]:
    return tuple(ast.parse(Path(path).read_text(encoding="utf-8"), filename=path).body)


def _definitions(body: Any) -> dict[str, ast.stmt]:
    """The ``class`` and ``def`` statements of a module or class body, those under an ``if`` or
    ``try`` at that level too (the static reader follows those)."""
    found: dict[str, ast.stmt] = {}
    for node in body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            found[node.name] = node
        elif isinstance(node, (ast.If, ast.Try)):
            for block in (node.body, node.orelse, getattr(node, "finalbody", []),
                          *(h.body for h in getattr(node, "handlers", []))):
                found.update(_definitions(block))
    return found


def _in_source(module: str, qualname: str) -> bool:
    """Whether ``qualname`` is a ``class`` or ``def`` statement in ``module``'s source.

    mkdocstrings reads the source (griffe's static analysis), so a class made at import time
    (``type(name, bases, body)`` bound through ``globals()``, such as the judge metrics of
    ``assay_transformers.judge``) is not there for a ``:::`` block: such a factory's docstring is
    written into the page instead.
    """
    path = getattr(sys.modules.get(module), "__file__", None)
    if not (isinstance(path, str) and path.endswith(".py")):
        return False
    body: Any = _statements(path)
    for part in qualname.split("."):
        node = _definitions(body).get(part)
        if node is None:
            return False
        body = node.body
    return True


def _canonical(obj: Any) -> str | None:
    """``module.qualname`` where a class or function is defined, if it can be found there,
    by import and in the module's source (see :func:`_in_source`)."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not (isinstance(module, str) and isinstance(qualname, str)) or "<locals>" in qualname:
        return None
    if not (inspect.isclass(obj) or inspect.isfunction(obj)):
        return None
    if not _in_source(module, qualname):
        return None
    try:
        found: Any = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        return None
    return f"{module}.{qualname}" if found is obj else None


def _holder(name: str, obj: Any) -> str | None:
    """``plugin.module.name`` for a moved value without a ``__module__`` (a constant such as
    ``assay.downstream.MANIFEST``): the deepest loaded module outside assay that binds ``name`` to it,
    which is where the docs' static reader finds it. Only a plugin's modules that list ``name`` in
    ``__all__`` count: a test module or a private import binding the same object is not a home."""
    for module_name in sorted(sys.modules, key=lambda m: (-len(m), m)):
        module = sys.modules[module_name]
        if (module_name.startswith("assay_") and name in getattr(module, "__all__", ())
                and vars(module).get(name) is obj):
            return f"{module_name}.{name}"
    return None


def _exported(module_name: str) -> list[tuple[str, Any, str]]:
    """``(name, object, identifier)`` for each public name of a module."""
    module = importlib.import_module(module_name)
    names = [n for n in getattr(module, "__all__", ()) if n != "__version__"]
    defining = getattr(module, "_EXPORTS", {})  # assay's lazy top-level re-exports
    out = []
    for name in names:
        own = name in vars(module)  # else a name that moved to a plugin (assay._relocated), loaded on access
        obj = getattr(module, name)
        ident = _canonical(obj) or (None if own else _holder(name, obj)) or f"{defining.get(name, module_name)}.{name}"
        out.append((name, obj, ident))
    return out


def _slug(ident: str) -> str:
    return ident.replace(".", "-")


def _block(ident: str, **options: Any) -> str:
    lines = [f"::: {ident}"]
    if options:
        lines.append("    options:")
        for key, value in options.items():
            lines.append(f"      {key}: {_yaml(value)}")
    return "\n".join(lines) + "\n"


def _yaml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _first_paragraph(text: str) -> str:
    return " ".join(rst_to_markdown(text).strip().split("\n\n")[0].split())


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


#: Longest ``repr`` written whole into a table cell; a longer one (the sample inputs in a
#: name's ``examples``, with their arrays) is cut there, with its full length said.
_REPR_CHARS = 160


def _value_cell(value: Any) -> str:
    text = " ".join(repr(value).split())
    if len(text) > _REPR_CHARS:
        return _cell(f"`{text[:_REPR_CHARS]}...` ({len(text)} characters; the value in the registration)")
    return _cell(f"`{text}`")


# ----------------------------------------------------------------------- API pages
def api_pages() -> tuple[dict[str, str], dict[str, str]]:
    """Pages of the API reference, and where each rendered object lives (identifier -> page)."""
    modules: dict[str, list[tuple[str, Any, str]]] = {}
    for name in API_MODULES:
        try:
            modules[name] = _exported(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            log.info("gen_reference: module %s is not there; its page is left out", name)

    # The owner of an object: the listing module with the longest prefix of its identifier,
    # else the first module (in API_MODULES order) that lists it.
    owner: dict[str, str] = {}
    for module_name, names in modules.items():
        for _name, _obj, ident in names:
            best = owner.setdefault(ident, module_name)
            if ident.startswith(module_name + ".") and (
                    not ident.startswith(best + ".") or len(module_name) > len(best)):
                owner[ident] = module_name

    pages: dict[str, str] = {}
    where: dict[str, str] = {}
    for module_name, names in modules.items():
        path = f"reference/api/{module_name}.md"
        title = _MODULE_TITLES.get(module_name)
        text = [f"# `{module_name}`" + (f": {title}" if title else ""), ""]
        text.append(_block(module_name, show_root_heading=False, members=False, show_root_toc_entry=False))
        text.append(f"| name (`from {module_name} import ...`) | summary |\n|---|---|")
        for name, obj, ident in names:
            anchor = ident if owner[ident] == module_name else None
            summary = _first_paragraph(inspect.getdoc(obj) or "") if (inspect.isclass(obj) or callable(obj)) else ""
            link = f"[`{name}`][{ident}]"
            text.append(f"| {link} | {_cell(summary) if anchor else 'see `' + owner[ident] + '`'} |")
        text.append("")
        for _name, _obj, ident in names:
            if owner[ident] != module_name:
                continue
            where[ident] = path
            text.append(_block(ident, show_root_heading=True, heading_level=2))
        pages[path] = "\n".join(text)
    return pages, where


# ----------------------------------------------------------------------- registered names
def _options(factory: Any) -> list[str]:
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return []
    out = []
    for p in sig.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            out.append(f"`**{p.name}`")
        elif p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            out.append(f"`{p.name}`" if p.default is p.empty else f"`{p.name}={p.default!r}`")
    return out


def _entry_body(e: Any, kind: str, loader: str, spec: str, where: dict[str, str], path: str) -> list[str]:
    """The Markdown under one registered name's heading: its table, then its docstring."""
    out: list[str] = []
    if e.description:
        out.append(f"{e.description}\n")
    plugin = f"`{e.plugin}`, built into assay" if e.builtin else (
        f"`{e.plugin}` (distribution `{e.distribution}`)" if e.distribution else f"`{e.plugin}`")
    if kind in _RUN_WITH:
        rows = [("run", f"`{_RUN_WITH[kind].format(name=spec)}`"), ("plugin", plugin)]
    else:
        rows = [("load", f'`assay.{loader}("{spec}")`'), ("plugin", plugin)]
    if kind not in _RUN_WITH:
        options = _options(e.factory)
        rows.append(("options", ", ".join(options) if options else "none"))
    for key, value in e.metadata.items():
        if key != "description" and not callable(value):
            rows.append((key, _value_cell(value)))
    for attr in _ATTRIBUTES:
        value = getattr(e.factory, attr, None) if inspect.isclass(e.factory) else None
        if value is not None and not callable(value) and attr not in e.metadata:
            rows.append((attr, _value_cell(value)))
    ident = _canonical(e.factory)
    if ident:
        rows.append(("factory", f"`{ident}`"))
    elif inspect.isclass(e.factory) and "<locals>" not in getattr(e.factory, "__qualname__", "<locals>"):
        made = f"{e.factory.__module__}.{e.factory.__qualname__}"
        rows.append(("factory", f"`{made}` (made when its module is imported)"))
    out.append("| | |\n|---|---|")
    out.extend(f"| {k} | {v} |" for k, v in rows)
    out.append("")
    if ident is None:
        doc = inspect.getdoc(e.factory) or ""
        if doc:
            out.append(rst_to_markdown(doc) + "\n")
    elif ident in where:
        out.append(f"Documented with [`{ident.rsplit('.', 1)[1]}`][{ident}].\n")
    else:
        where[ident] = path
        out.append(_block(ident, show_root_heading=True, heading_level=3, members=False))
    return out


def names_pages(where: dict[str, str]) -> dict[str, str]:
    """One page per plugin kind, from the live registries."""
    import assay
    from assay.plugins import KINDS, get_plugin_system

    system = get_plugin_system()
    for info in system.errors:
        log.warning("gen_reference: plugin %r failed to load, its names are missing: %s", info.name, info.error)

    pages: dict[str, str] = {}
    for kind in KINDS:
        registry = assay.get_registry(kind)
        entries = list(registry)
        title = _KIND_TITLES.get(kind, kind)
        path = f"reference/names/{kind}.md"
        loader = f"load_{kind}"
        text = [f"# {title}", ""]
        how = (f"Run one with `{_RUN_WITH[kind].format(name='NAME')}`" if kind in _RUN_WITH else
               f"Load one with `assay.{loader}(\"name[key=value, ...]\")`")
        text.append(
            f"Every name registered as a `{kind}` in this build's environment "
            f"(`assay.get_registry({kind!r})`), with the plugin that registers it. {how}; "
            f"`assay list {kind}` prints the same list.\n"
        )
        ambiguous = registry.ambiguous() if hasattr(registry, "ambiguous") else {}
        if ambiguous:
            text.append("Names registered by more than one plugin (load them qualified, "
                        "`\"distribution:name\"`): " + ", ".join(f"`{n}`" for n in sorted(ambiguous)) + ".\n")
        if not entries:
            text.append("No plugin in this environment registers one.\n")
        else:
            text.append("| name | plugin | description |\n|---|---|---|")
            for e in entries:
                text.append(f"| [`{e.name}`](#{_slug(kind + '-' + e.name)}) | {_cell(e.distribution or e.plugin)} "
                            f"| {_cell(e.description)} |")
            text.append("")
        namespaces = registry.namespaces() if callable(getattr(registry, "namespaces", None)) else {}
        if namespaces:
            text.append("Namespaces: whole families of names a plugin resolves on demand, loaded as "
                        f"`assay.{loader}(\"namespace:Name[key=value, ...]\")`.\n")
            text.append("| namespace | plugin | description |\n|---|---|---|")
            for ns, e in namespaces.items():
                text.append(f"| [`{ns}:`](#{_slug(kind + '-namespace-' + ns)}) | {_cell(e.distribution or e.plugin)} "
                            f"| {_cell(e.description)} |")
            text.append("")
        for ns, e in namespaces.items():
            text.append(f"## `{ns}:` {{ #{_slug(kind + '-namespace-' + ns)} }}\n")
            text.extend(_entry_body(e, kind, loader, f"{ns}:Name", where, path))
        for e in entries:
            text.append(f"## `{e.name}` {{ #{_slug(kind + '-' + e.name)} }}\n")
            text.extend(_entry_body(e, kind, loader, e.name, where, path))
        pages[path] = "\n".join(text)
    return pages


def index_page(api: dict[str, str], names: dict[str, str]) -> str:
    import assay
    from assay.plugins import KINDS

    text = ["# Reference", "",
            f"Generated from the docstrings of assay {assay.__version__} and the plugins installed where the "
            "site was built.", "", "## API", "",
            "| module | |\n|---|---|"]
    for path in api:
        module_name = path.rsplit("/", 1)[1][: -len(".md")]
        doc = _first_paragraph(inspect.getdoc(importlib.import_module(module_name)) or "")
        text.append(f"| [`{module_name}`]({path.removeprefix('reference/')}) | {_cell(doc)} |")
    text += ["", "## Registered names", "", "| kind | names |\n|---|---|"]
    for kind in KINDS:
        registry = assay.get_registry(kind)
        text.append(f"| [{_KIND_TITLES.get(kind, kind)}](names/{kind}.md) | {len(list(registry))} |")
    return "\n".join(text) + "\n"


def generate() -> dict[str, str]:
    """Every generated page, path (relative to ``docs/``) -> Markdown."""
    api, where = api_pages()
    names = names_pages(where)
    return {"reference/index.md": index_page(api, names), **api, **names}


# ----------------------------------------------------------------------- mkdocs hooks
def _listed(nav: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(nav, str):
        found.add(nav)
    elif isinstance(nav, list):
        for item in nav:
            found |= _listed(item)
    elif isinstance(nav, dict):
        for value in nav.values():
            found |= _listed(value)
    return found


def on_config(config: Any) -> Any:
    global _pages
    _pages = generate()
    nav = config.nav
    if nav is None:
        return config
    listed = _listed(nav)
    extra = sorted(p.name for p in Path(config.docs_dir).glob("*.md") if p.name not in listed)
    if extra:
        for item in nav:
            if isinstance(item, dict) and "Guides" in item:
                item["Guides"].extend(extra)
                break
        else:
            nav.append({"Guides": extra})
    api = [p for p in _pages if p.startswith("reference/api/")]
    names = [p for p in _pages if p.startswith("reference/names/")]
    nav.append({"Reference": [{"Overview": "reference/index.md"},
                              {"API": [{Path(p).stem: p} for p in api]},
                              {"Registered names": [{_KIND_TITLES.get(Path(p).stem, Path(p).stem): p}
                                                    for p in names]}]})
    return config


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for path, content in _pages.items():
        files.append(File.generated(config, path, content=content))
    return files


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "reference-preview")
    generated = generate()
    for rel, content in generated.items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    print(f"wrote {len(generated)} pages under {out}")
