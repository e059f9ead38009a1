"""What a report holds: sources (what was read), tables and charts, as one JSON document.

The page stores this document once, as compact JSON in a ``<script type="application/json">``
element; the page's script draws the tables and charts from it. A numeric cell is a number,
``[value, low, high]`` (an interval), ``[mean, std]`` (a spread over seeds) or ``null`` (no
value); non-finite numbers are the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``
(:mod:`assay.jsonio`'s rule).
"""

from __future__ import annotations

import math
from typing import Any

import attrs

__all__ = ["Chart", "Column", "Report", "Series", "Source", "Table", "number"]


def number(x: Any) -> Any:
    """A float for the page: finite as is, non-finite as ``"NaN"`` / ``"Infinity"`` / ``"-Infinity"``."""
    if x is None:
        return None
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


@attrs.frozen
class Source:
    """One input: its path, its kind, what was evaluated and its provenance signature."""

    path: str
    kind: str
    what: str
    signature: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "what": self.what, "signature": self.signature}


@attrs.frozen
class Column:
    """A table column. ``kind``: ``text`` or ``num``; ``spread``: ``interval``, ``std`` or ``""``;
    ``higher_is_better``: the direction that decides the best mark (None: nothing marked)."""

    label: str
    kind: str = "num"
    spread: str = ""
    higher_is_better: bool | None = None

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"label": self.label, "kind": self.kind}
        if self.spread:
            d["spread"] = self.spread
        if self.higher_is_better is not None:
            d["hib"] = self.higher_is_better
        return d


@attrs.frozen
class Table:
    """Rows of cells under columns. ``best`` and ``tied``: ``(row, column)`` positions of each column's
    best value and of those not significantly worse than it."""

    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Any, ...], ...]
    best: tuple[tuple[int, int], ...] = ()
    tied: tuple[tuple[int, int], ...] = ()
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"type": "table", "title": self.title, "columns": [c.to_json() for c in self.columns],
                "rows": [list(r) for r in self.rows], "best": [list(p) for p in self.best],
                "tied": [list(p) for p in self.tied], "notes": list(self.notes)}


@attrs.frozen
class Series:
    """One series of a chart: ``style`` is ``line``, ``step``, ``dash`` (a reference line) or ``markers``."""

    name: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    style: str = "line"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "x": [number(v) for v in self.x], "y": [number(v) for v in self.y],
                "style": self.style}


@attrs.frozen
class Chart:
    """An interactive chart: several series on shared axes."""

    title: str
    x_label: str
    y_label: str
    series: tuple[Series, ...]
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"type": "chart", "title": self.title, "x": self.x_label, "y": self.y_label,
                "series": [s.to_json() for s in self.series], "notes": list(self.notes)}


@attrs.frozen
class Report:
    """The whole page: a title, its sources and its sections (tables and charts, in order)."""

    title: str
    sources: tuple[Source, ...]
    sections: tuple[Table | Chart, ...]
    versions: dict[str, str] = attrs.field(factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "sources": [s.to_json() for s in self.sources],
                "sections": [s.to_json() for s in self.sections], "versions": self.versions}
