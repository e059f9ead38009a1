"""The sections of ``assay demo``, run in order.

A section is registered through the ``assay_register_demo_sections`` hook (name, ``run(out_dir)``,
``title``, ``order``): assay's own ``metrics`` section is a built-in plugin
(:mod:`assay.demo.builtin`); ``treebank`` and ``spark`` come from assay-parsing,
``uncertainty`` from assay-uncertainty and ``segmentation`` from assay-segmentation. The core
imports none of them: it runs whatever is registered, by increasing ``order``, then name.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from assay.errors import InvalidParameterError

__all__ = ["DEFAULT_ORDER", "DemoSection", "run_demo", "sections"]

#: the order of a section registered without ``order=``
DEFAULT_ORDER = 100


@attrs.frozen
class DemoSection:
    """One registered section of ``assay demo``."""

    name: str
    title: str
    order: float
    run: Callable[[Path], Any]
    plugin: str = ""


def sections() -> dict[str, DemoSection]:
    """The registered sections (plain, unambiguous names), in the order they run."""
    from assay.plugins import get_registry

    found = []
    for entry in get_registry("demo_section"):
        order = entry.metadata.get("order", DEFAULT_ORDER)
        if not isinstance(order, (int, float)) or isinstance(order, bool):
            raise InvalidParameterError(f"Demo section {entry.name!r} of plugin {entry.source} has order={order!r}; "
                                        "expected a number.")
        found.append(DemoSection(entry.name, str(entry.metadata.get("title") or entry.description), order,
                                 entry.factory, entry.plugin))
    return {s.name: s for s in sorted(found, key=lambda s: (s.order, s.name))}


def run_demo(out_dir: Path, *, sections: Sequence[str] | None = None) -> int:
    registered = _sections()
    chosen = list(sections or registered)
    for name in chosen:
        if name not in registered:
            raise InvalidParameterError(f"Unknown demo section {name!r}; choose from {', '.join(registered)}.")
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in chosen:
        print(f"\n=== assay demo: {name} ===", flush=True)
        start = time.perf_counter()
        registered[name].run(out_dir / name)
        print(f"--- {name} done in {time.perf_counter() - start:.1f} s, files in {out_dir / name}", flush=True)
    sys.stdout.flush()
    return 0


_sections = sections  # run_demo's keyword 'sections' shadows the function inside it
