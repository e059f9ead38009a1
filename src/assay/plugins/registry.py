"""Registries: one per kind of plugin object, filled by the ``assay_register_*`` hooks.

A :class:`Registry` maps registered names to :class:`Entry` objects. ``load(spec)``
parses ``"name[key=value, ...]"``, checks the override keys against the factory's
signature and calls the factory. Unknown names and keys are errors that list the close
matches.

A name registered by two plugins keeps both entries and is *ambiguous*: looking it up
plainly raises :class:`~assay.errors.AmbiguousNameError`, which names both plugins and
the qualified spellings that choose one, ``"distribution:name"`` (or
``"entry-point:name"``), e.g. ``"assay-classic:accuracy[score_prefix=a_]"``. Iterating
a registry yields only the names that load as they are; :meth:`Registry.ambiguous`
lists the others.

A plugin may also register a *namespace* of names it resolves on demand
(``assay_register_metric_namespaces``): ``"torchmetrics:MulticlassAccuracy[num_classes=3]"``
calls the ``torchmetrics`` namespace's resolver with ``("MulticlassAccuracy",
num_classes=3)``. A registered namespace is tried before a plugin qualifier.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import re
from collections.abc import Callable, Iterator
from typing import Any

import attrs

from assay.errors import AmbiguousNameError, InvalidParameterError, UnknownNameError
from assay.plugins import _catalog_files
from assay.plugins.names import format_name, parse_name, split_qualifier

__all__ = ["KINDS", "NAMESPACE_HOOKS", "Entry", "Registry"]

#: Kind of plugin object -> the hook that registers it.
KINDS: dict[str, str] = {
    "metric": "assay_register_metrics",
    "estimator": "assay_register_estimators",
    "stat_calculator": "assay_register_stat_calculators",
    "ue_metric": "assay_register_ue_metrics",
    "sentence_evaluator": "assay_register_sentence_evaluators",
    "executor": "assay_register_executors",
    "data_format": "assay_register_data_formats",
    "task": "assay_register_tasks",
    "aggregation": "assay_register_aggregations",
    # issue 12: commands, demo sections and generation metrics come from plugins too
    "generation_metric": "assay_register_generation_metrics",
    "command": "assay_register_commands",
    "demo_section": "assay_register_demo_sections",
    "model_backend": "assay_register_model_backends",
}

#: Kind -> the hook that registers namespaces of that kind (``"namespace:name"`` resolved on demand).
NAMESPACE_HOOKS: dict[str, str] = {
    "metric": "assay_register_metric_namespaces",
}


def _close(word: str, candidates: list[str]) -> str:
    matches = difflib.get_close_matches(word, candidates, n=5, cutoff=0.5)
    if not matches:
        matches = [c for c in candidates if word.lower() in c.lower() or c.lower() in word.lower()][:5]
    return f" Did you mean: {', '.join(matches)}?" if matches else ""


@attrs.frozen
class Entry:
    """One registered name: what makes it (``factory``), who registered it, and its metadata."""

    kind: str
    name: str
    factory: Callable[..., Any]
    plugin: str
    metadata: dict[str, Any] = attrs.field(factory=dict)
    #: the distribution that ships the plugin (``"assay"`` for the built-ins), if known
    distribution: str | None = None
    builtin: bool = False

    def matches(self, qualifier: str) -> bool:
        """Whether ``qualifier`` names this entry's plugin (entry-point name) or distribution."""
        if qualifier == self.plugin:
            return True
        return self.distribution is not None and _normalize(qualifier) == _normalize(self.distribution)

    @property
    def source(self) -> str:
        """``'classic' (distribution assay-classic)``: who registered it, for messages."""
        if self.builtin:
            return f"{self.plugin!r} (built into assay)"
        return f"{self.plugin!r} (distribution {self.distribution})" if self.distribution else repr(self.plugin)

    @property
    def description(self) -> str:
        # a command's one line is its help= (its description= is the long text of 'assay NAME --help'),
        # a demo section's its title=
        doc = (self.metadata.get("help") or self.metadata.get("description") or self.metadata.get("title")
               or inspect.getdoc(self.factory) or "")
        line = doc.strip().splitlines()[0] if doc.strip() else ""
        alias_of = self.metadata.get("alias_of")
        return f"alias of {alias_of}: {line}" if alias_of else line

    def accepted_keys(self) -> list[str] | None:
        """The keyword options the factory takes, or None when it takes any (``**kwargs``)."""
        try:
            sig = inspect.signature(self.factory)
        except (TypeError, ValueError):
            return None
        keys: list[str] = []
        for p in sig.parameters.values():
            if p.kind is p.VAR_KEYWORD:
                return None
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
                keys.append(p.name)
        return keys

    def create(self, **overrides: Any) -> Any:
        """Call the factory with ``overrides`` after checking that it accepts every key."""
        accepted = self.accepted_keys()
        if accepted is not None:
            for key in overrides:
                if key not in accepted:
                    listing = ", ".join(accepted) if accepted else "none"
                    raise InvalidParameterError(
                        f"Unknown override {key!r} for {self.kind} {self.name!r}.{_close(key, accepted)}"
                        f" Accepted keys: {listing}."
                    )
        return self.factory(**overrides)


def _normalize(distribution: str) -> str:
    """PEP 503 normalisation: ``Assay_Classic`` and ``assay-classic`` are one distribution."""
    return re.sub(r"[-_.]+", "-", distribution).lower()


def _either(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


class Registry:
    """The registered names of one kind (``"metric"``, ``"executor"`` ...).

    ``name in registry`` is true for every registered name, ambiguous ones included, and
    for a qualified name that picks exactly one entry; ``iter(registry)`` yields the
    entries that load by their plain name; ``names()`` lists every registered name.
    """

    def __init__(self, kind: str, entries: dict[str, Entry] | None = None, *,
                 resolve: Callable[[str, str | None], None] | None = None) -> None:
        if kind not in KINDS:
            raise InvalidParameterError(f"Unknown plugin kind {kind!r}.{_close(kind, list(KINDS))}")
        self.kind = kind
        self._entries: dict[str, tuple[Entry, ...]] = {}
        self._namespaces: dict[str, Entry] = {}
        #: ``resolve(kind, name)`` loads the plugins that may register ``name`` (None: every plugin) before a
        #: lookup answers; set by the plugin system that fills this registry (plugins loaded on demand)
        self._resolve = resolve
        for entry in (entries or {}).values():
            self._add(entry)

    def _need(self, name: str | None) -> None:
        """Load what may register ``name`` (a plain or qualified name; None: everything) before answering."""
        if self._resolve is not None:
            self._resolve(self.kind, name)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        self._need(name)
        qualifier, base = split_qualifier(name)
        if qualifier in self._namespaces:
            return True  # resolved on load: the namespace's resolver decides whether the name exists
        if qualifier is None:
            return base in self._entries
        return sum(e.matches(qualifier) for e in self._entries.get(base, ())) == 1

    def __iter__(self) -> Iterator[Entry]:
        self._need(None)
        return iter([found[0] for _, found in sorted(self._entries.items()) if len(found) == 1])

    def __len__(self) -> int:
        self._need(None)
        return len(self._entries)

    def __repr__(self) -> str:
        return f"<Registry {self.kind}: {', '.join(sorted(self._entries)) or 'empty'}>"

    def names(self) -> list[str]:
        """Every registered name, ambiguous ones included, sorted."""
        self._need(None)
        return sorted(self._entries)

    def candidates(self, name: str) -> tuple[Entry, ...]:
        """Every entry registered under the plain ``name`` (two or more when it is ambiguous)."""
        self._need(name)
        return self._entries.get(name, ())

    def namespaces(self) -> dict[str, Entry]:
        """The registered namespaces (``"torchmetrics"`` ...), each with the entry of its resolver."""
        self._need(None)
        return dict(sorted(self._namespaces.items()))

    def ambiguous(self) -> dict[str, tuple[Entry, ...]]:
        """The names registered by more than one plugin, with their entries."""
        self._need(None)
        return self._ambiguous()

    def _ambiguous(self) -> dict[str, tuple[Entry, ...]]:
        """:meth:`ambiguous` among the entries registered so far (loads nothing)."""
        return {name: found for name, found in sorted(self._entries.items()) if len(found) > 1}

    def qualified_name(self, entry: Entry) -> str:
        """The spelling that loads exactly ``entry``: ``"distribution:name"``, else ``"plugin:name"``."""
        found = self._entries.get(entry.name, (entry,))
        if entry.distribution and sum(e.matches(entry.distribution) for e in found) == 1:
            return f"{entry.distribution}:{entry.name}"
        return f"{entry.plugin}:{entry.name}"

    def get(self, name: str) -> Entry:
        """The entry for ``name`` or ``qualifier:name``.

        A qualifier that is a registered namespace wins over a plugin qualifier: the entry
        returned then calls the namespace's resolver with ``name`` when created.

        Raises
        ------
        UnknownNameError
            No such name (the close matches are listed), or the qualifier names no plugin
            that registered it.
        AmbiguousNameError
            The name is registered by several plugins and the qualifier does not pick one.
        """
        self._need(name)
        qualifier, base = split_qualifier(name)
        if qualifier is not None and qualifier in self._namespaces:
            return self._in_namespace(qualifier, base)
        found = self._entries.get(base, ())
        if not found and qualifier is None:
            local = self._from_local_catalog(base)
            if local is not None:
                return local
        if not found:
            known = sorted(self._entries)
            hint = _close(base, known)
            if not known:
                hint = f" No {self.kind} is registered: is the plugin that provides it installed (assay plugins)?"
            elif not hint:
                hint = f" Registered: {', '.join(known)}."
            raise UnknownNameError(f"No {self.kind} named {name!r}.{hint}{self._namespace_hint(qualifier)}") from None
        chosen = found if qualifier is None else tuple(e for e in found if e.matches(qualifier))
        if len(chosen) == 1:
            return chosen[0]
        if not chosen:
            raise UnknownNameError(
                f"No {self.kind} named {name!r}: no plugin {qualifier!r} registered {base!r}; it is registered by "
                f"{_either([e.source for e in found])}. Load it as "
                f"{_either([repr(self.qualified_name(e)) for e in found])}.{self._namespace_hint(qualifier)}"
            )
        raise AmbiguousNameError(self._ambiguity(name, chosen))

    def _from_local_catalog(self, name: str) -> Entry | None:
        """An entry for a name no plugin registered, from a local catalog folder (``assay.add_to_catalog``)."""
        path = _catalog_files.find_entry(name)
        if path is None:
            return None
        return Entry(self.kind, name, functools.partial(_catalog_files.build_entry, path, self.kind, self),
                     plugin="local catalog", metadata={"path": str(path), "description": f"catalog entry {path}"})

    def _namespace_hint(self, qualifier: str | None) -> str:
        if qualifier is None or not self._namespaces:
            return ""
        return f" Registered {self.kind} namespaces: {', '.join(sorted(self._namespaces))}."

    def _in_namespace(self, namespace: str, base: str) -> Entry:
        """An entry whose factory calls the namespace's resolver with ``base`` and the overrides."""
        ns = self._namespaces[namespace]
        return attrs.evolve(ns, name=f"{namespace}:{base}", factory=functools.partial(ns.factory, base),
                            metadata={**ns.metadata, "namespace": namespace})

    def _ambiguity(self, name: str, found: tuple[Entry, ...]) -> str:
        qualified = [repr(self.qualified_name(e)) for e in found]
        disable = sorted({e.distribution or e.plugin for e in found if not e.builtin})
        how = f"choose one with a qualified name, {_either(qualified)}"
        how += f" (overrides follow it: {self.qualified_name(found[0])}[key=value])"
        if disable:
            how += f", or stop loading a plugin with ASSAY_DISABLE_PLUGINS={_either(disable)}"
        return (
            f"{self.kind.capitalize()} name {name!r} is ambiguous: it is registered by {len(found)} plugins, "
            f"{', '.join(e.source for e in found)}; {how}."
        )

    def load(self, spec: str, /, **overrides: Any) -> Any:
        """Create the object for ``spec`` (``"name[key=value, ...]"``) with extra keyword overrides."""
        name, parsed = parse_name(spec)
        for key, value in overrides.items():
            if key in parsed and parsed[key] != value:
                raise InvalidParameterError(
                    f"Override {key!r} is given twice for {format_name(name, parsed)!r}: "
                    f"{parsed[key]!r} in the name and {value!r} as a keyword."
                )
        parsed.update(overrides)
        return self.get(name).create(**parsed)

    def _add(self, entry: Entry) -> tuple[Entry, ...]:
        """Add ``entry``; returns the entries already registered under its name (a clash when any)."""
        before = self._entries.get(entry.name, ())
        self._entries[entry.name] = (*before, entry)
        return before

    def _add_namespace(self, entry: Entry) -> Entry | None:
        """Add the namespace ``entry`` unless one of that name exists; returns the existing one, if any."""
        if entry.name in self._namespaces:
            return self._namespaces[entry.name]
        self._namespaces[entry.name] = entry
        return None
