"""Registries: one per kind of plugin object, filled by the ``assay_register_*`` hooks.

A :class:`Registry` maps registered names to :class:`Entry` objects. ``load(spec)``
parses ``"name[key=value, ...]"``, checks the override keys against the factory's
signature and calls the factory. Unknown names and keys are errors that list the close
matches.
"""

from __future__ import annotations

import difflib
import inspect
from typing import Any, Callable, Iterator

import attrs

from assay.errors import InvalidParameterError, UnknownNameError
from assay.plugins.names import format_name, parse_name

__all__ = ["KINDS", "Entry", "Registry"]

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

    @property
    def description(self) -> str:
        doc = self.metadata.get("description") or inspect.getdoc(self.factory) or ""
        return doc.strip().splitlines()[0] if doc.strip() else ""

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


class Registry:
    """The registered names of one kind (``"metric"``, ``"executor"`` ...)."""

    def __init__(self, kind: str, entries: dict[str, Entry] | None = None) -> None:
        if kind not in KINDS:
            raise InvalidParameterError(f"Unknown plugin kind {kind!r}.{_close(kind, list(KINDS))}")
        self.kind = kind
        self._entries: dict[str, Entry] = dict(entries or {})

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[Entry]:
        return iter(sorted(self._entries.values(), key=lambda e: e.name))

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"<Registry {self.kind}: {', '.join(self.names()) or 'empty'}>"

    def names(self) -> list[str]:
        return sorted(self._entries)

    def get(self, name: str) -> Entry:
        try:
            return self._entries[name]
        except KeyError:
            known = self.names()
            hint = _close(name, known)
            if not known:
                hint = f" No {self.kind} is registered: is the plugin that provides it installed (assay plugins)?"
            elif not hint:
                hint = f" Registered: {', '.join(known)}."
            raise UnknownNameError(f"No {self.kind} named {name!r}.{hint}") from None

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

    def _add(self, entry: Entry) -> None:
        self._entries[entry.name] = entry
