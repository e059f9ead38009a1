"""The ``report`` section of ``assay demo``: one HTML report per section that ran before it.

It runs last (order 1000). For each earlier section's folder (a sibling of its own), it
gathers every result that ``assay report`` reads -- results and comparison JSON files,
``parse-eval`` JSON, saved UEManager folders, ``assay run`` output folders -- and writes
``<section>.html`` into its own folder. The inputs of a section whose metrics differ are
grouped: one report per group. A section that leaves no result but a CoNLL-U pair
(``gold.conllu`` and ``system.conllu``, as the treebank and spark sections do) is scored with
``assay parse-eval -o`` first, into this section's folder. It ends with the list of reports
to open.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

from assay.cli import main
from assay.demo import sections
from assay.errors import AssayError
from assay_report.page import write
from assay_report.sources import MANAGER_FILE, RUN_MANIFEST, VALUES_MANIFEST, build_report, detect, group_key

__all__ = ["find_results", "run"]


def find_results(folder: Path) -> list[Path]:
    """Every input of ``assay report`` under ``folder`` (a saved folder counts once, whole), in path order."""
    found: list[Path] = []
    for path in sorted(folder.rglob("*")):
        if any(parent in found for parent in path.parents):
            continue
        if path.is_dir() and any((path / f).is_file() for f in (MANAGER_FILE, RUN_MANIFEST, VALUES_MANIFEST)):
            found.append(path)
        elif path.is_file() and path.suffix == ".json" and path.name not in (MANAGER_FILE, RUN_MANIFEST,
                                                                             VALUES_MANIFEST):
            try:
                detect(path)
            except AssayError:  # a JSON file that is no result (a config, a cache): not an input, left out on purpose
                continue
            found.append(path)
    return found


def _parse_eval(folder: Path, out_dir: Path) -> list[Path]:
    """``assay parse-eval`` of the folder's ``gold.conllu`` / ``system.conllu`` into ``out_dir`` (none: [])."""
    gold, system = folder / "gold.conllu", folder / "system.conllu"
    if not (gold.is_file() and system.is_file()):
        return []
    out = out_dir / f"{folder.name}-parse-eval.json"
    text = io.StringIO()
    with contextlib.redirect_stdout(text), contextlib.redirect_stderr(text):
        code = main(["parse-eval", str(gold), str(system), "-o", str(out)])
    if code != 0:
        print(f"{folder.name}: 'assay parse-eval {gold} {system}' failed:\n{text.getvalue()}")
        return []
    print(f"{folder.name}: scored {gold.name} against {system.name} with 'assay parse-eval -o {out}'")
    return [out]


def _groups(paths: list[Path]) -> list[list[Path]]:
    """The inputs split into groups that make one report each (same kind and metrics), in order."""
    groups: dict[tuple[Any, ...], list[Path]] = {}
    for p in paths:
        groups.setdefault(group_key(p), []).append(p)
    return list(groups.values())


def run(out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    root = out_dir.parent
    written: list[Path] = []
    order: list[Any] = [name for name in sections() if name != out_dir.name]
    folders = [root / n for n in order if (root / n).is_dir()]
    folders += [p for p in sorted(root.iterdir()) if p.is_dir() and p != out_dir and p not in folders]
    for folder in folders:
        inputs = find_results(folder) or _parse_eval(folder, out_dir)
        if not inputs:
            print(f"{folder.name}: no result that 'assay report' reads; no report")
            continue
        groups = _groups(inputs)
        for i, group in enumerate(groups):
            name = folder.name if len(groups) == 1 else f"{folder.name}-{i + 1}"
            report = build_report(group, title=f"assay demo, section {folder.name}"
                                  + (f" ({i + 1} of {len(groups)})" if len(groups) > 1 else ""))
            path = write(report, out_dir / f"{name}.html")
            written.append(path)
            print(f"{name}: report of {len(group)} result{'s' if len(group) > 1 else ''} written to {path}")
    if not written:
        print(f"no report written: no earlier section's output under {root} (run the other sections first)")
        return
    print("\nreports to open (one self-contained HTML file each):")
    for path in written:
        print(f"  {path.resolve()}")
