"""Result files: atomic JSON writing, reading back, and the run manifest.

A crash while writing never leaves a half-written file: data goes to a temporary file
in the same folder, is flushed and synced, and replaces the target with ``os.replace``
(atomic on POSIX and Windows). The runner skips the per-file ``fsync`` for the many
result files and syncs the manifest it writes last. NaN and infinities are written as ``null`` (standard
JSON) and read back as NaN.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["MANIFEST", "read_json", "read_manifest", "write_json_atomic"]

#: the file listing versions, tasks and metrics of a run, at the top of the output folder
MANIFEST = "assay-results.json"


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and callable(value.item) and getattr(value, "ndim", 1) == 0:
        value = value.item()  # numpy scalar
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_json_atomic(path: str | Path, data: Any, *, indent: int = 2, fsync: bool = True) -> Path:
    """Write ``data`` as JSON to ``path`` atomically (temporary file + ``os.replace``).

    The rename makes the write atomic for other processes and against a crash of this
    one. ``fsync=True`` also flushes the data to disk before the rename, so even an
    operating-system crash cannot leave an empty file in place of the old one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(_clean(data), indent=indent, allow_nan=False)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.write("\n")
            f.flush()
            if fsync:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def _nan(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _nan(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_nan(v) for v in value]
    return float("nan") if value is None else value


def read_json(path: str | Path) -> Any:
    """Read a result file; ``null`` leaves become NaN."""
    with open(path, encoding="utf-8") as f:
        return _nan(json.load(f))


def read_manifest(results_dir: str | Path) -> dict[str, Any]:
    """The manifest of a results folder written by ``assay run``."""
    path = Path(results_dir) / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"No {MANIFEST} in {results_dir}: is it the output folder of 'assay run'?")
    with open(path, encoding="utf-8") as f:
        return json.load(f)
