"""The ``declaration`` check of ``assay check-plugin``: the names a plugin declares are the names it registers.

A plugin declares its names in entry-point groups (:mod:`assay.plugins.declarations`) so that a
lookup imports only the plugins that declare the name. A declaration that leaves a registered
name out makes that name load slowly (every plugin is imported to find it) and can hide a clash;
one that lists a name the plugin does not register sends lookups to the wrong plugin. Both fail
the check, naming the names; a plugin that declares nothing is reported as not declared (SKIP,
not applicable: it still works, imported on every first lookup).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.plugins import PluginInfo, PluginSystem
from assay.plugins.declarations import compare, declaration_table, group_of
from assay.testing.recorder import FAIL, PASS, SKIP, CheckResult

__all__ = ["declaration_results", "declaration_hint"]

CHECK = "declaration"


def _names(by_kind: dict[str, list[str]]) -> str:
    return "; ".join(f"{group_of(kind)}: {', '.join(names)}" for kind, names in by_kind.items())


def declaration_results(infos: Sequence[PluginInfo], system: PluginSystem) -> list[CheckResult]:
    """One ``declaration`` result per loaded plugin of ``infos``, and one FAIL per stale declaration of their
    distributions (a declaration whose value is no ``assay`` entry point)."""
    sources = {s.name: s for s in system.sources()}
    out: list[CheckResult] = []
    for info in infos:
        if info.builtin or info.status != "loaded":
            continue
        source = sources.get(info.name)
        if source is None:  # registered by hand (register_plugin): nothing installed to declare
            continue
        if source.declared is None:
            out.append(CheckResult(info.name, "plugin", CHECK, SKIP,
                                   "declares no names, so every first lookup imports it; declare them "
                                   "(docs/plugins.md, 'Declare your names')", applies=False))
            continue
        diff = compare(source.declared, info.registered)
        problems = []
        if diff["missing"]:
            problems.append(f"registered but not declared: {_names(diff['missing'])}")
        if diff["extra"]:
            problems.append(f"declared but not registered: {_names(diff['extra'])}")
        out.append(CheckResult(info.name, "plugin", CHECK, FAIL if problems else PASS, "; ".join(problems)))
    dists = {info.distribution for info in infos if info.distribution}
    for ep in system.stale_declarations():
        if ep.dist_name in dists:
            out.append(CheckResult(ep.name, "plugin", CHECK, FAIL,
                                   f"declared in {ep.group} for {ep.value!r}, which is not an 'assay' entry point "
                                   f"of {ep.dist_name}"))
    return out


def declaration_hint(infos: Sequence[PluginInfo], results: Sequence[CheckResult]) -> str | None:
    """The ``pyproject.toml`` tables that declare what the plugins of ``infos`` register, when a ``declaration``
    check did not pass; else None."""
    if not any(r.check == CHECK and r.status != PASS for r in results):
        return None
    tables = [declaration_table(info.module or info.name, _registered(info)) for info in infos
              if not info.builtin and info.status == "loaded" and info.registered]
    tables = [t for t in tables if t]
    if not tables:
        return None
    return ("What the plugin registers, declared (pyproject.toml; the value is the module of its 'assay' "
            "entry point):\n\n" + "\n\n".join(tables))


def _registered(info: PluginInfo) -> dict[str, Any]:
    return {kind: names for kind, names in info.registered.items() if names}
