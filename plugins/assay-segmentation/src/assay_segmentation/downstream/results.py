"""Result files: atomic JSON writing, reading back, and the run manifest.

Writing goes through :mod:`assay.jsonio` (``write_json_atomic`` is re-exported here): a
crash while writing never leaves a half-written file (temporary sibling, flush, ``fsync``,
``os.replace``). The runner skips the per-file ``fsync`` for the many result files and
syncs the manifest it writes last. Non-finite numbers are written as the strings
``"NaN"``, ``"Infinity"``, ``"-Infinity"`` (standard JSON) and read back as floats; the
``null`` of older files reads back as NaN.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from assay.jsonio import decode_numbers, write_json_atomic
from assay.jsonio import read_json as _read_json

__all__ = ["MANIFEST", "RunSummary", "read_json", "read_manifest", "write_json_atomic"]

#: the file listing versions, tasks and metrics of a run, at the top of the output folder
MANIFEST = "assay-results.json"


@attrs.frozen
class RunSummary:
    """What a run did: versions, tasks, files written, fitted values, seconds taken."""

    output_dir: Path
    versions: int
    tasks: tuple[str, ...]
    files: tuple[Path, ...]
    images: int
    fitted: dict[str, Any]
    seconds: float


def read_json(path: str | Path) -> Any:
    """Read a result file strictly; ``"NaN"`` / ``"Infinity"`` / ``"-Infinity"`` and ``null`` leaves become floats.

    Errors are :class:`~assay.errors.SaveFormatError` naming the file, line and column.
    """
    return decode_numbers(_read_json(path, what="result file"))


def read_manifest(results_dir: str | Path) -> dict[str, Any]:
    """The manifest of a results folder written by ``assay run``."""
    path = Path(results_dir) / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"No {MANIFEST} in {results_dir}: is it the output folder of 'assay run'?")
    return _read_json(path, what="manifest")
