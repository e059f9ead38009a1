"""What the commands share for reading their arguments: ``argparse`` types that reject bad
values with the flag's name (``assay table: error: argument --digits: expected a
non-negative integer; got -1``), a file reader whose errors name the flag and the file, and
the options every command spells the same way:

- ``-o/--output``: a FILE for a command that writes one file (``evaluate``, ``compare``,
  ``table``, ``plot``, plugin commands such as the scores of a parse), a FOLDER for one that writes several (``ue``, ``run``,
  ``demo``) -- :func:`add_output`, checked by :func:`check_output`;
- ``-m/--metric NAME``: one metric, repeatable -- :func:`add_metric`;
- ``--json``: the results as JSON on stdout and nothing else there (what the command would
  print on the way goes to stderr) -- :func:`add_json`, and :mod:`assay.cli._output`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from assay.cli._errors import decode_reason, os_reason
from assay.errors import InvalidParameterError

__all__ = ["add_json", "add_metric", "add_output", "check_metrics", "check_output", "flag", "non_negative_int",
           "positive_int", "probability", "read_text"]


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


# --------------------------------------------------------------------------- the shared options
def add_output(parser: argparse.ArgumentParser, kind: str, what: str, *, default: str = "",
               required: bool = False) -> None:
    """``-o/--output FILE`` (``kind="file"``) or ``-o/--output FOLDER`` (``kind="folder"``).

    ``what`` says what is written there; ``default`` (text) what happens without the flag.
    """
    if kind not in ("file", "folder"):
        raise ValueError(f"kind must be 'file' or 'folder'; got {kind!r}")
    metavar = kind.upper()
    notes = ([] if kind == "file" else ["created if missing"]) + ([f"default: {default}"] if default else [])
    text = f"write {what} to FILE" if kind == "file" else f"write {what} into FOLDER"
    if notes:
        text += f" ({'; '.join(notes)})"
    parser.add_argument("-o", "--output", type=Path, default=None, required=required, metavar=metavar,
                        help=text)
    parser.set_defaults(_output_kind=kind)


def check_output(args: argparse.Namespace) -> None:
    """An ``-o`` FILE that is a folder, or an ``-o`` FOLDER that is a file, is an error naming the flag."""
    path, kind = getattr(args, "output", None), getattr(args, "_output_kind", None)
    if path is None or kind is None:
        return
    from assay.errors import InvalidParameterError

    if kind == "file" and path.is_dir():
        raise InvalidParameterError(f"{flag(args, 'output')} {path}: is a directory; this command writes one file, "
                                    "so -o/--output takes a FILE name.")
    if kind == "folder" and path.exists() and not path.is_dir():
        raise InvalidParameterError(f"{flag(args, 'output')} {path}: exists and is not a directory; this command "
                                    "writes several files, so -o/--output takes a FOLDER.")


def add_metric(parser: argparse.ArgumentParser, help: str, *, required: bool = False,
               old: str | None = None) -> None:
    """``-m/--metric NAME``, repeatable; ``old`` (``"--metrics"``) stays as a hidden alias taking several names."""
    parser.add_argument("-m", "--metric", action="append", dest="metric", metavar="NAME", required=required,
                        default=None, help=help + " (repeatable)")
    if old:
        parser.add_argument(old, action="extend", nargs="+", dest="metric", metavar="NAME",
                            help=argparse.SUPPRESS)


def add_json(parser: argparse.ArgumentParser, what: str) -> None:
    """``--json``: print ``what`` as JSON on stdout, and nothing else there."""
    parser.add_argument("--json", action="store_true",
                        help=f"print {what} as JSON on stdout, and nothing else there")
