"""Names a plugin declares without being imported: one entry point per name, in the group of its kind.

A distribution lists, beside its ``assay`` entry point, every name that plugin registers, each
in the entry-point group of its kind (:data:`DECLARATION_GROUPS`: ``assay.metrics``,
``assay.sentence_evaluators``, ``assay.commands``, ...; namespaces in ``assay.metric_namespaces``),
with the plugin's module as the value::

    [project.entry-points.assay]
    classic = "assay_classic.plugin"

    [project.entry-points."assay.metrics"]
    accuracy = "assay_classic.plugin"
    f1 = "assay_classic.plugin"

A lookup (``assay.load_metric("accuracy")``) then imports only the plugins that declare the name
(:meth:`assay.plugins.PluginSystem.load`). A plugin that declares at least one name is *declared*:
its declaration is taken as complete, and ``assay check-plugin`` compares it with what the plugin
registers (:func:`compare`). A plugin that declares nothing is loaded, as before this existed, on
the first lookup of any name. A plugin whose distribution contributes class-attribute handlers
(group ``assay.metric_attributes``) and declares no names is declared as registering none.
Everything here is read from the installed ``entry_points.txt`` files
(:mod:`assay.plugins._entry_points`); nothing is imported.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from assay.plugins.registry import KINDS, NAMESPACE_HOOKS

__all__ = ["DECLARATION_GROUPS", "ENTRY_POINT_GROUP", "NAMESPACE_DECLARATION_GROUPS", "Source", "compare",
           "declaration_table", "read_sources"]

ENTRY_POINT_GROUP = "assay"

#: kind -> the entry-point group where a plugin declares its names of that kind: the hook's name without its
#: ``assay_register_`` prefix (``metric`` -> ``assay.metrics``, ``command`` -> ``assay.commands``)
DECLARATION_GROUPS: dict[str, str] = {kind: "assay." + hook.removeprefix("assay_register_")
                                      for kind, hook in KINDS.items()}
#: kind -> the entry-point group where a plugin declares its namespaces of that kind (``assay.metric_namespaces``)
NAMESPACE_DECLARATION_GROUPS: dict[str, str] = {kind: "assay." + hook.removeprefix("assay_register_")
                                                for kind, hook in NAMESPACE_HOOKS.items()}

#: the keys of :attr:`Source.declared` and of :attr:`PluginInfo.registered`: a kind, or ``"<kind>_namespace"``
_GROUP_KEYS: dict[str, str] = {**{group: kind for kind, group in DECLARATION_GROUPS.items()},
                               **{group: f"{kind}_namespace" for kind, group in NAMESPACE_DECLARATION_GROUPS.items()}}
#: the group of the class-attribute handlers a distribution contributes (assay.metrics._attributes); a plugin
#: whose distribution has entries here and declares no names is declared as registering none (assay-unitxt)
ATTRIBUTE_GROUP = "assay.metric_attributes"
GROUPS: tuple[str, ...] = (ENTRY_POINT_GROUP, *_GROUP_KEYS, ATTRIBUTE_GROUP)


@attrs.frozen
class Source:
    """One installed ``assay`` entry point: the plugin it loads, and the names it declares.

    ``name`` is the plugin's record name (its entry-point name; ``name@distribution`` for a second
    distribution using the same entry-point name); ``declared`` maps a kind (or ``"<kind>_namespace"``)
    to the names declared, and is None for a plugin that declares nothing.
    """

    name: str
    entry_point: Any  # an assay.plugins._entry_points.LeanEntryPoint
    declared: Mapping[str, frozenset[str]] | None

    @property
    def distribution(self) -> str | None:
        dist: str | None = self.entry_point.dist_name
        return dist

    @property
    def key(self) -> tuple[str, str]:
        """``(distribution, entry-point name)``: the same entry point found twice on ``sys.path`` is one."""
        return (self.distribution or "", self.entry_point.name)

    def declares(self, group_key: str, name: str) -> bool:
        return self.declared is not None and name in self.declared.get(group_key, ())


def read_sources(entry_points: Iterable[Any]) -> tuple[list[Source], list[Any]]:
    """The ``assay`` entry points, in load order (distribution, then entry-point name), each with its
    declaration; and the declarations whose value is no ``assay`` entry point of their distribution
    (stale: ``assay check-plugin`` reports them).

    ``entry_points`` are those of :data:`GROUPS` (objects with ``group``, ``name``, ``value``,
    ``dist_name``, ``dist_version``).
    """
    points = list(entry_points)
    plugins = sorted((ep for ep in points if ep.group == ENTRY_POINT_GROUP),
                     key=lambda ep: (ep.dist_name or "", ep.name))
    by_target: dict[tuple[str, str], dict[str, set[str]]] = {}
    orphans = []
    targets = {(ep.dist_name or "", ep.value) for ep in plugins}
    attribute_dists = {ep.dist_name or "" for ep in points if ep.group == ATTRIBUTE_GROUP}
    for ep in points:
        key = _GROUP_KEYS.get(ep.group)
        if key is None:
            continue
        target = (ep.dist_name or "", ep.value)
        if target not in targets:
            orphans.append(ep)
            continue
        by_target.setdefault(target, {}).setdefault(key, set()).add(ep.name)
    sources: list[Source] = []
    seen: set[tuple[str, str]] = set()
    names: set[str] = set()
    for ep in plugins:
        if (ep.dist_name or "", ep.name) in seen:  # the same distribution found twice on sys.path
            continue
        seen.add((ep.dist_name or "", ep.name))
        declared = by_target.get((ep.dist_name or "", ep.value))
        if declared is None and (ep.dist_name or "") in attribute_dists:
            declared = {}  # it contributes class-attribute handlers only: it registers no names
        # two distributions may use one entry-point name: the second is recorded as name@distribution
        name = ep.name if ep.name not in names else f"{ep.name}@{ep.dist_name or len(sources)}"
        names.add(name)
        sources.append(Source(name, ep, None if declared is None else
                              {k: frozenset(v) for k, v in declared.items()}))
    return sources, orphans


def compare(declared: Mapping[str, Iterable[str]] | None,
            registered: Mapping[str, Iterable[str]]) -> dict[str, dict[str, list[str]]]:
    """What a declaration gets wrong: ``{"missing": {kind: names registered but not declared}, "extra": {kind:
    names declared but not registered}}`` (kinds as in :attr:`PluginInfo.registered`); empty lists left out."""
    declared = declared or {}
    out: dict[str, dict[str, list[str]]] = {"missing": {}, "extra": {}}
    for key in sorted(set(declared) | set(registered)):
        have, said = set(registered.get(key, ())), set(declared.get(key, ()))
        if have - said:
            out["missing"][key] = sorted(have - said)
        if said - have:
            out["extra"][key] = sorted(said - have)
    return out


def group_of(key: str) -> str:
    """The entry-point group of a kind or ``"<kind>_namespace"`` key."""
    if key.endswith("_namespace"):
        return NAMESPACE_DECLARATION_GROUPS[key.removesuffix("_namespace")]
    return DECLARATION_GROUPS[key]


def declaration_table(module: str, registered: Mapping[str, Iterable[str]]) -> str:
    """The ``pyproject.toml`` tables that declare ``registered`` (kind -> names) for the plugin module ``module``."""
    parts = []
    for key in sorted(registered, key=lambda k: group_of(k)):
        names = sorted(registered[key])
        if not names:
            continue
        lines = [f'[project.entry-points."{group_of(key)}"]']
        lines += [f'{_toml_key(n)} = "{module}"' for n in names]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _toml_key(name: str) -> str:
    return name if all(c.isalnum() or c in "_-" for c in name) else f'"{name}"'
