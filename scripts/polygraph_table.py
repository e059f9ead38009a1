"""Generate ``docs/polygraph/estimators.md``: every LM-Polygraph 0.7.0 estimator class and where assay has it.

The class list is the installed ``lm_polygraph.estimators`` package's own (the names its
``__init__`` imports, read from the source: importing LM-Polygraph would import its model stack,
and some of its modules need ``openai`` or ``spacy``). Each class is looked up in assay's estimator
registry by its class name (the ``other_names`` a plugin registers it under), so an estimator
registered by any installed plugin appears once its plugin is installed: run this script again and
commit the file. For a registered class the row shows assay's snake_case name, level and the
statistics assay's estimator declares with its default options; for a class assay does not
register, the statistics LM-Polygraph's class declares (the string constants of its
``super().__init__`` dependencies, over every option) and the reason from ``NOT_REGISTERED``. The
extra model is read off the statistics (``EXTRA_MODEL``); the test column lists the test files
that name the class and load LM-Polygraph's modules (``RUNS_LM_POLYGRAPH``).

    .venv/bin/python scripts/polygraph_table.py          # writes docs/polygraph/estimators.md
    .venv/bin/python scripts/polygraph_table.py --check  # exits 1 when the file is out of date

``tests/test_polygraph_estimators_doc.py`` fails when the committed file is out of date.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "polygraph" / "estimators.md"
TEST_DIRS = ("tests", "plugins")

#: why an LM-Polygraph class that assay does not register is not there, when the default by level
#: below does not say it (a class that gets registered leaves its entry unused: delete it then)
NOT_REGISTERED: dict[str, str] = {}
#: the reason of an unregistered class not in NOT_REGISTERED, by level
DEFAULT_REASON = {"claim": "not yet: claim level (issue 28; assay reads claim spans, LM-Polygraph extracts claims "
                           "with a hosted OpenAI model)"}
FALLBACK_REASON = "not yet registered (issue 28)"

#: statistic (a prefix, or an exact name) -> the model or data beyond the language model's greedy output
EXTRA_MODEL = (
    ("semantic_matrix", "NLI model folder"),
    ("semantic_classes", "NLI model folder"),
    ("greedy_semantic_matrix", "NLI model folder"),
    ("concat_greedy_semantic_matrix", "NLI model folder"),
    ("greedy_tokens_alternatives_nli", "NLI model folder"),
    ("sample_sentence_similarity", "cross-encoder folder"),
    ("sample_token_similarity", "cross-encoder folder"),
    ("token_similarity", "cross-encoder folder"),
    ("greedy_sentence_similarity", "cross-encoder folder"),
    ("greedy_lm_log_likelihoods", "the model again, without the prompt"),
    ("attention", "the model's attention weights"),
    ("forwardpass_attention_weights", "the model's attention weights"),
    ("p_true", "the model (a P(True) prompt; the Hugging Face backend computes it)"),
    ("train_", "a training set's statistics (fitted, saved with the manager)"),
    ("background_train_", "a training set's statistics (fitted, saved with the manager)"),
    ("embeddings", "the model's hidden states"),
    ("sample_embeddings", "the model's hidden states"),
    ("claims", "the answer's claims (given to assay; LM-Polygraph extracts them with a hosted model)"),
    ("model", "the model object (LM-Polygraph's class reads `stats[\"model\"]`)"),
    ("tokenizer", "the model's tokenizer"),
    ("ensemble_token_scores", "an ensemble of model folders sharing a tokenizer (the backend's `ensemble` option)"),
)

#: models an estimator loads from its options rather than reading from the statistics
CLASS_EXTRA = {
    "SemanticEntropyToken": "a sentence-BERT folder (clusters the vocabulary)",
    "Focus": "an IDF table computed from a data set",
    "FocusClaim": "an IDF table computed from a data set",
}


# ---------------------------------------------------------------- LM-Polygraph's side, read from its source
def lm_polygraph_estimators_dir() -> Path:
    spec = importlib.util.find_spec("lm_polygraph")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("lm-polygraph is not installed: make setup installs it (with --no-deps)")
    return Path(next(iter(spec.submodule_search_locations))) / "estimators"


def lm_polygraph_classes(folder: Path) -> list[tuple[str, Path]]:
    """``(class name, module file)`` of every class ``lm_polygraph.estimators`` imports, in its order."""
    out = []
    for node in ast.parse((folder / "__init__.py").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            path = folder.joinpath(*node.module.split(".")).with_suffix(".py")
            out += [(alias.name, path) for alias in node.names if alias.name != "Estimator"]
    return out


def _strings(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _target_key(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return None


def _init_dependencies(init: ast.FunctionDef) -> tuple[list[str], str | None] | None:
    """The statistics and level a class's ``__init__`` passes to ``super().__init__`` (None: no such call
    with arguments, e.g. a subclass that relies on its base's)."""
    for call in ast.walk(init):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "__init__"
                and isinstance(call.func.value, ast.Call) and getattr(call.func.value.func, "id", "") == "super"):
            continue
        if not call.args:
            return None
        first = call.args[0]
        names = _strings(first)
        key = _target_key(first)
        if key is not None:  # a variable built in __init__: every string it is assigned or extended with
            for node in ast.walk(init):
                assigned = (isinstance(node, ast.Assign) and any(_target_key(t) == key for t in node.targets)) or (
                    isinstance(node, ast.AugAssign) and _target_key(node.target) == key)
                if assigned:
                    names += _strings(node.value)
                elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                      and node.func.attr in ("append", "extend") and _target_key(node.func.value) == key):
                    names += [s for a in node.args for s in _strings(a)]
        level_node = call.args[1] if len(call.args) > 1 else None
        level = level_node.value if isinstance(level_node, ast.Constant) else None
        return list(dict.fromkeys(names)), level
    return None


def _class_chain(name: str, path: Path) -> list[ast.ClassDef]:
    """The class and its bases defined in the same module, most derived first."""
    classes = {n.name: n for n in ast.parse(path.read_text(encoding="utf-8")).body if isinstance(n, ast.ClassDef)}
    chain: list[ast.ClassDef] = []
    while name in classes and classes[name] not in chain:
        chain.append(classes[name])
        name = next((b.id for b in classes[name].bases if isinstance(b, ast.Name)), "")
    return chain


def lm_polygraph_dependencies(name: str, path: Path) -> tuple[list[str], str | None]:
    """LM-Polygraph's declared statistics of class ``name`` (union over its options), following its bases
    within the module when its own ``__init__`` does not declare them."""
    for node in _class_chain(name, path):
        init = next((f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
        found = _init_dependencies(init) if init is not None else None
        if found is not None:
            return found
    return [], None


def lm_polygraph_reads(name: str, path: Path) -> list[str]:
    """The ``stats["..."]`` keys LM-Polygraph's class reads (``stats["model"]`` is read, not declared)."""
    keys = []
    for node in _class_chain(name, path):
        for sub in ast.walk(node):
            if (isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Name) and sub.value.id == "stats"
                    and isinstance(sub.slice, ast.Constant) and isinstance(sub.slice.value, str)):
                keys.append(sub.slice.value)
    return list(dict.fromkeys(keys))


# ---------------------------------------------------------------- assay's side
def assay_entry(registry: Any, class_name: str) -> Any:
    return registry.get(class_name) if class_name in registry else None


def assay_dependencies(entry: Any) -> tuple[list[str] | None, bool]:
    """The statistics assay's estimator declares with its default options (None when it needs options),
    and whether it is fitted on a training set (it has ``fit``)."""
    try:
        obj = entry.create()
    except Exception:  # noqa: BLE001 - an estimator that needs options: its class attribute, if any
        obj = entry.factory
    deps = getattr(obj, "dependencies", None)
    return (list(deps) if deps else None), callable(getattr(obj, "fit", None))


def extra_model(stats: list[str]) -> str:
    found = []
    for stat in stats:
        for prefix, what in EXTRA_MODEL:
            if stat == prefix or stat.startswith(prefix):
                if what not in found:
                    found.append(what)
                break
    return "; ".join(found) or "none"


def _word(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])")


def test_files(class_name: str, module: str) -> tuple[list[str], bool]:
    """Test files that name the class and run LM-Polygraph's (``RUNS_LM_POLYGRAPH``); when none
    names it, the ones that import its LM-Polygraph module (``ensemble_token_measures``) and look the
    class up by name from a list. The flag says which."""
    for pattern, by_module in ((_word(class_name), False), (_word(module.rsplit(".", 1)[-1]), True)):
        found = [p.relative_to(ROOT).as_posix() for p in _test_sources()
                 if RUNS_LM_POLYGRAPH.search(_read(p)) and pattern.search(_read(p))]
        if found:
            return found, by_module
    return [], False


#: a test file that loads LM-Polygraph's modules (the ``lm_polygraph`` fixture, ``lm_polygraph_module``,
#: an ``lp`` / ``lp_*`` helper or fixture, an import), not one that only says "lm_polygraph" in a name
RUNS_LM_POLYGRAPH = re.compile(
    r"\blm_polygraph(?:_module)?\(|\blp(?:_\w+)?\s*[(),]|^\s*(?:from|import) lm_polygraph\b", re.M)
_SOURCES: list[Path] = []
_TEXT: dict[Path, str] = {}


def _test_sources() -> list[Path]:
    if not _SOURCES:
        for top in TEST_DIRS:
            found = (ROOT / top).rglob("test_*.py")
            _SOURCES.extend(sorted(p for p in found if "/tests/" in f"/{p.relative_to(ROOT)}"))
    return _SOURCES


def _read(path: Path) -> str:
    if path not in _TEXT:
        _TEXT[path] = path.read_text(encoding="utf-8")
    return _TEXT[path]


# ---------------------------------------------------------------- the document
def _code(items: list[str]) -> str:
    return ", ".join(f"`{x}`" for x in items) if items else "none"


def rows() -> list[dict[str, Any]]:
    from assay.plugins import get_registry

    registry = get_registry("estimator")
    out = []
    for class_name, path in lm_polygraph_classes(lm_polygraph_estimators_dir()):
        theirs, level = lm_polygraph_dependencies(class_name, path)
        entry = assay_entry(registry, class_name)
        module = path.stem if path.parent.name == "estimators" else f"{path.parent.name}.{path.stem}"
        tests, by_module = test_files(class_name, module)
        row = {"class": class_name, "module": module, "level": level or "?", "tests": tests, "by_module": by_module}
        fitted = False
        if entry is None:
            row.update(name=None, stats=theirs, reason=NOT_REGISTERED.get(class_name)
                       or DEFAULT_REASON.get(level or "", FALLBACK_REASON))
        else:
            ours, fitted = assay_dependencies(entry)
            row.update(name=entry.metadata.get("alias_of", entry.name), plugin=entry.distribution or entry.plugin,
                       level=entry.metadata.get("level", row["level"]), stats=ours if ours is not None else theirs)
        # the extra model: from what either side needs (LM-Polygraph's reads include stats["model"])
        needs = [*row["stats"], *theirs, *lm_polygraph_reads(class_name, path)]
        if fitted:
            needs.append("train_")
        row["extra"] = "; ".join(x for x in (extra_model(needs), CLASS_EXTRA.get(class_name)) if x and x != "none") \
            or "none"
        out.append(row)
    return out


def render(table: list[dict[str, Any]]) -> str:
    done = [r for r in table if r["name"]]
    lines = [
        "# Every LM-Polygraph 0.7.0 estimator class in assay",
        "",
        "<!-- generated by scripts/polygraph_table.py from assay's estimator registry and the installed "
        "lm_polygraph package; do not edit: run the script (tests/test_polygraph_estimators_doc.py checks it) -->",
        "",
        f"LM-Polygraph 0.7.0's `lm_polygraph.estimators` exports {len(table)} estimator classes; assay registers "
        f"**{len(done)}** of them under their class name and a snake_case name (both load the same estimator, "
        f"`assay.load_estimator(\"RenyiNeg\")`), and {len(table) - len(done)} not yet (the reason is in the last "
        "column). The families' own pages say what each computes and where it differs: "
        "[information-based and ensemble](information.md), [NLI- and sample-based](semantic.md), "
        "[density-based](density.md), [claim-level and Focus](claim.md).",
        "",
        "- **statistics**: for a registered class, the LM-Polygraph statistics assay's estimator reads with its "
        "default options; for the others, the ones LM-Polygraph's class declares (over all its options).",
        "- **extra model**: what beyond the language model's greedy answer the statistics come from.",
        "- **test**: the test files that name the class and run LM-Polygraph's own class (installed with "
        "`--no-deps` by `make setup`) on the same statistics (or, marked, that import its LM-Polygraph module "
        "and take the class by name from a list).",
        "",
        "| LM-Polygraph class | assay name | level | statistics | extra model | test / why not in assay |",
        "|---|---|---|---|---|---|",
    ]
    for r in table:
        cls = f"`{r['class']}`"
        if r["name"]:
            last = _code(r["tests"]) if r["tests"] else "**no test found**"
            if r["by_module"]:
                last += f" (by its module, `{r['module']}`)"
            lines.append(f"| {cls} | `{r['name']}` | {r['level']} | {_code(r['stats'])} | {r['extra']} | {last} |")
        else:
            lines.append(f"| {cls} | (not registered) | {r['level']} | {_code(r['stats'])} | {r['extra']} | "
                         f"{r['reason']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the file is out of date")
    args = parser.parse_args(argv)
    text = render(rows())
    if args.check:
        if not DOC.exists() or DOC.read_text(encoding="utf-8") != text:
            print(f"{DOC.relative_to(ROOT)} is out of date: run scripts/polygraph_table.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
