"""Generate assay-unitxt's description of unitxt's ``metrics.*`` catalog from an installed unitxt.

unitxt ships its catalog as JSON files (``unitxt/catalog/metrics/**.json``): each entry names a
metric class (``"__type__": "rouge"``) and its arguments. This script reads those files (it never
imports unitxt), classifies each entry by what its computation needs, and writes

- ``plugins/assay-unitxt/src/assay_unitxt/unitxt_catalog.json``: every entry's class and
  arguments (descriptions and tags dropped) with its classification -- data describing metric
  configuration, read by :mod:`assay_unitxt.catalog` when a ``metrics.*`` name is loaded;
- ``docs/unitxt-catalog-entries.md``: the listing of every entry, what it needs, and whether
  assay loads it (or why not);
- the ``assay.metrics`` entry-point declarations of the names assay loads, between the markers
  in ``plugins/assay-unitxt/pyproject.toml``.

Run it after changing unitxt's version in the plugin's test extras, or after adding a builder::

    .venv/bin/python scripts/unitxt_catalog.py          # writes the three files
    .venv/bin/python scripts/unitxt_catalog.py --check  # exits 1 when a file is out of date
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ROOT / "plugins" / "assay-unitxt"
DATA = PLUGIN / "src" / "assay_unitxt" / "unitxt_catalog.json"
DOC = ROOT / "docs" / "unitxt-catalog-entries.md"
PYPROJECT = PLUGIN / "pyproject.toml"
BEGIN = "# BEGIN unitxt catalog names (scripts/unitxt_catalog.py writes this block)"
END = "# END unitxt catalog names"

#: unitxt classes whose computation calls a judge model through an inference engine: hosted by default
SERVICE = {
    "task_based_ll_mas_judge": "an LLM judge behind a hosted inference engine (watsonx, RITS, OpenAI ...)",
    "llm_judge_direct": "an LLM judge behind a hosted inference engine",
    "llm_judge_pairwise": "an LLM judge behind a hosted inference engine",
    "llm_as_judge": "an LLM judge behind a hosted inference engine",
    "llama_index_correctness": "llama-index with a hosted LLM",
    "llama_index_faithfulness": "llama-index with a hosted LLM",
    "granite_guardian_user_risk": "Granite Guardian behind a hosted inference engine",
    "granite_guardian_assistant_risk": "Granite Guardian behind a hosted inference engine",
    "granite_guardian_rag_risk": "Granite Guardian behind a hosted inference engine",
    "granite_guardian_agentic_risk": "Granite Guardian behind a hosted inference engine",
    "sql_execution_accuracy": "runs the SQL on a database server (a connection per dataset)",
}
#: unitxt classes that run a model from the Hugging Face Hub (assay: a local model folder, never a download)
MODEL = {
    "bert_score": "BERTScore: a Hub model",
    "sentence_bert": "sentence-transformers: a Hub model",
    "reward": "a reward model from the Hub",
    "perplexity": "a seq2seq model from the Hub",
    "faithfulness_hhem": "Vectara HHEM: a Hub model",
    "regard_metric": "a regard classifier from the Hub",
    "safety_metric": "a reward model from the Hub",
    "is_code_mixed": "an instruction model from the Hub",
    "meteor_fast": "NLTK's WordNet data (nltk.download at run time)",
    "f1_strings": "spaCy's en_core_web_sm model (downloaded at run time)",
}
#: entries that are not metrics (LLM-judge criteria definitions filed under metrics.*)
NOT_METRIC = {"criteria": "an LLM-judge criterion definition, not a metric",
              "criteria_with_options": "an LLM-judge criterion definition, not a metric"}
_RANK = {"nothing": 0, "model": 1, "service": 2, "not a metric": 3}
_DROPPED = ("__description__", "__tags__", "__deprecated_msg__", "__title__")


def unitxt_catalog_dir() -> Path:
    spec = importlib.util.find_spec("unitxt")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("unitxt is not installed: make setup installs it (plugins/assay-unitxt/test-peers-no-deps.txt)")
    return Path(next(iter(spec.submodule_search_locations))) / "catalog"


def _ordered(node: Any) -> Any:
    """``node`` with each ``field_to_field`` mapping stored as ``[[from, to], ...]``: unitxt applies the pairs in
    the file's order (a copy to ``prediction`` after one from ``prediction/contexts``), which the data file's
    sorted keys would otherwise lose."""
    if isinstance(node, list):
        return [_ordered(x) for x in node]
    if not isinstance(node, dict):
        return node
    return {k: ([[a, b] for a, b in v.items()] if k == "field_to_field" and isinstance(v, dict) else _ordered(v))
            for k, v in node.items()}


def read_entries(catalog: Path) -> dict[str, dict[str, Any]]:
    entries = {}
    for path in sorted((catalog / "metrics").rglob("*.json")):
        name = ".".join(path.relative_to(catalog).with_suffix("").parts)
        raw = _ordered(json.loads(path.read_text(encoding="utf-8")))
        entries[name] = {k: v for k, v in raw.items() if k not in _DROPPED}
        if "__deprecated_msg__" in raw:
            entries[name]["__deprecated__"] = True
    return entries


def _needs(node: Any, entries: dict[str, dict[str, Any]], seen: frozenset[str] = frozenset()) -> tuple[str, str]:
    """What computing ``node`` (an entry, a nested ``{"__type__": ...}`` or a ``"metrics.x[...]"`` name) needs."""
    if isinstance(node, str):
        base = node.split("[", 1)[0]
        if base.startswith("metrics.") and base in entries and base not in seen:
            return _needs(entries[base], entries, seen | {base})
        return "nothing", ""
    if isinstance(node, list):
        worst = ("nothing", "")
        for item in node:
            worst = max(worst, _needs(item, entries, seen), key=lambda t: _RANK[t[0]])
        return worst
    if not isinstance(node, dict):
        return "nothing", ""
    kind = node.get("__type__")
    if kind in NOT_METRIC:
        return "not a metric", NOT_METRIC[kind]
    if kind in SERVICE:
        return "service", SERVICE[kind]
    if kind in MODEL:
        return "model", MODEL[kind]
    worst = ("nothing", "")
    for key, value in node.items():
        if key in ("metric", "metrics", "items", "preprocess_steps", "postprocess_steps"):
            worst = max(worst, _needs(value, entries, seen), key=lambda t: _RANK[t[0]])
    return worst


def build_data(entries: dict[str, dict[str, Any]], version: str) -> dict[str, Any]:
    out = {}
    for name, entry in entries.items():
        needs, why = _needs(entry, entries)
        out[name] = {"needs": needs, **({"why": why} if why else {}), "entry": entry}
    return {"unitxt_version": version, "count": len(out), "entries": out}


def family(name: str) -> str:
    parts = name.split(".")
    return ".".join(parts[:2]) + ".*" if len(parts) > 2 else "metrics (top level)"


def render_doc(data: dict[str, Any], loaded: dict[str, str]) -> str:
    from collections import Counter

    from assay_unitxt.catalog import not_loaded_reason as reason

    entries = data["entries"]
    fams: dict[str, list[str]] = {}
    for name in entries:
        fams.setdefault(family(name), []).append(name)
    lines = [
        "# unitxt's `metrics.*` catalog in assay",
        "",
        f"Generated by `scripts/unitxt_catalog.py` from unitxt {data['unitxt_version']}'s catalog "
        f"({data['count']} entries); do not edit by hand. How the names load is described in "
        "[unitxt-catalog.md](unitxt-catalog.md#unitxts-catalog-names).",
        "",
        "*needs*: what unitxt's computation of the entry needs: `nothing` (offline), `model` (a model "
        "or data downloaded from a hub at run time; where assay loads the entry it reads a local model folder "
        "instead, `[model=FOLDER]` or `$ASSAY_HF_MODELS_PATH/<Hub id>`), `service` (a hosted "
        "inference engine or database). *assay*: `loads` when `assay.load_metric(name)` builds it (the "
        "tests compare it with unitxt's own class on the same inputs), otherwise why not.",
        "",
        "## Summary",
        "",
        "| family | entries | nothing | model | service | not a metric | assay loads |",
        "|---|---|---|---|---|---|---|",
    ]
    for fam, names in sorted(fams.items()):
        c = Counter(entries[n]["needs"] for n in names)
        n_loaded = sum(1 for n in names if loaded.get(n, "").startswith("loads"))
        lines.append(f"| `{fam}` | {len(names)} | {c['nothing']} | {c['model']} | {c['service']} | "
                     f"{c['not a metric']} | {n_loaded} |")
    total = Counter(e["needs"] for e in entries.values())
    lines.append(f"| **all** | {len(entries)} | {total['nothing']} | {total['model']} | {total['service']} | "
                 f"{total['not a metric']} | {sum(1 for v in loaded.values() if v.startswith('loads'))} |")
    lines += ["", "## Entries", ""]
    for fam, names in sorted(fams.items()):
        lines += [f"### `{fam}`", "", "| entry | unitxt class | needs | assay |", "|---|---|---|---|"]
        for n in names:
            e = entries[n]
            kind = e["entry"].get("__type__", "?")
            needs = e["needs"] + (f": {e['why']}" if e.get("why") else "")
            if n in loaded:
                status = loaded[n]
                if status == "loads" and kind == "f1_strings":
                    status = ("loads, tokenized by an installed spaCy pipeline or a local pipeline folder "
                              "(`[spacy_model=...]`: a name, a folder or `blank:en`; default `en_core_web_sm`; "
                              "nothing downloaded)")
                elif status == "loads" and e["needs"] == "model":
                    status = "loads, from a local model folder (`[model=FOLDER]` or `$ASSAY_HF_MODELS_PATH/<Hub id>`)"
            elif e["needs"] != "nothing":
                status = f"not loaded: needs {e['needs']}"
            elif reason(n):
                status = reason(n)
            elif kind == "metrics_list":
                status = ("not loaded: a list of several metrics (assay loads one metric per name), "
                          "or of metrics it does not load")
            else:
                status = f"not loaded: no assay builder for `{kind}` yet"
            lines.append(f"| `{n}` | `{kind}` | {needs} | {status} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def render_block(loaded: dict[str, str]) -> str:
    names = sorted(n for n, status in loaded.items() if status == "loads")
    body = "\n".join(f'"{n}" = "assay_unitxt.plugin"' for n in names)
    return f"{BEGIN}\n{body}\n{END}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a generated file is out of date")
    args = parser.parse_args(argv)
    version = importlib.metadata.version("unitxt")
    data = build_data(read_entries(unitxt_catalog_dir()), version)
    data_text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    stale = []
    if not args.check:
        DATA.write_text(data_text, encoding="utf-8")
    elif DATA.read_text(encoding="utf-8") != data_text:
        stale.append(DATA)
    # the builders decide what assay loads: read them after the data file is current
    sys.path.insert(0, str(PLUGIN / "src"))
    from assay_unitxt.catalog import load_status, not_loaded_reason

    loaded = load_status()
    reasons = {n: why for n in data["entries"] if n not in loaded and (why := not_loaded_reason(n))}
    doc_text = render_doc(data, {**loaded, **reasons})
    py_old = PYPROJECT.read_text(encoding="utf-8")
    start, stop = py_old.index(BEGIN), py_old.index(END) + len(END)
    py_new = py_old[:start] + render_block(loaded) + py_old[stop:]
    for path, text in ((DOC, doc_text), (PYPROJECT, py_new)):
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path)
        else:
            path.write_text(text, encoding="utf-8")
    for path in stale:
        print(f"out of date: {path.relative_to(ROOT)} (run scripts/unitxt_catalog.py)", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
