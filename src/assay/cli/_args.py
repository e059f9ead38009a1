"""What the commands share for reading their arguments: ``argparse`` types that reject bad
values with the flag's name (``assay table: error: argument --digits: expected a
non-negative integer; got -1``), and a file reader whose errors name the flag and the file.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable

from assay.cli._errors import decode_reason, os_reason
from assay.errors import InvalidParameterError

__all__ = ["check_metrics", "flag", "non_negative_int", "positive_int", "probability", "read_text"]


def _int_at_least(minimum: int, what: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}; got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {what}; got {value}")
        return value

    parse.__name__ = what.replace(" ", "_")
    return parse


#: ``type=`` for a flag that takes an integer >= 0 (``--digits``, ``--n-resamples``, ``--seed``)
non_negative_int = _int_at_least(0, "a non-negative integer")
#: ``type=`` for a flag that takes an integer >= 1 (``--shards``, ``--workers``)
positive_int = _int_at_least(1, "a positive integer")


def probability(text: str) -> float:
    """``type=`` for a level strictly between 0 and 1 (``--confidence-level``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1; got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number strictly between 0 and 1; got {text}")
    return value


def flag(args: argparse.Namespace, dest: str) -> str:
    """The flag of ``dest`` as the user typed it (``-p`` or ``--predictions``; set by ``assay.cli.main``)."""
    return getattr(args, "_flags", {}).get(dest) or "--" + dest.replace("_", "-")


def read_text(path: Path, what: str) -> str:
    """The UTF-8 text of ``path``; errors name ``what`` (the flag or argument) and the file."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InvalidParameterError(f"{what} {path}: {os_reason(exc)}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidParameterError(f"{what} {path}: {decode_reason(exc)}") from None


def check_metrics(args: argparse.Namespace, dest: str = "metric") -> None:
    """Resolve each ``--metric`` spec once, so that a bad one is an error naming the flag and the spec."""
    from assay.errors import AssayError, MissingDependencyError
    from assay.metrics.catalog import resolve_metric

    specs = getattr(args, dest)
    for spec in specs if isinstance(specs, list) else [specs]:
        if spec is None:
            continue
        try:
            resolve_metric(spec)
        except MissingDependencyError:
            raise
        except AssayError as exc:
            raise InvalidParameterError(f"{flag(args, dest)} {spec!r}: {exc}") from None
