"""Where a command's output goes: results and their headers on stdout, warnings and progress on stderr.

- :func:`json_mode` / :func:`print_json`: with ``--json``, stdout holds only the JSON;
  whatever the command prints on the way goes to stderr.
- :func:`evaluator_lines_on_stdout`: the ``EVALUATOR`` result lines (logged to stderr by
  default, see :mod:`assay.core.log`) go to stdout beside the headers that announce them,
  while a command runs; an application that configured logging itself still gets them.
- :func:`describe_executor`: an executor in words (``4 worker processes``), never its repr.
- :func:`add_verbose` / :func:`spark_log`: Spark's own console output (the JVM's log lines,
  the stage progress bar) stays hidden unless ``--verbose`` or ``ASSAY_SPARK_LOG=1`` asks for it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["add_verbose", "describe_executor", "evaluator_lines_on_stdout", "json_mode", "print_json",
           "spark_log"]


@contextlib.contextmanager
def json_mode(args: argparse.Namespace) -> Iterator[None]:
    """With ``--json``: whatever the command prints on the way goes to stderr, keeping stdout for the JSON."""
    if not getattr(args, "json", False):
        yield
        return
    with contextlib.redirect_stdout(sys.stderr):
        yield


def print_json(data: Any) -> None:
    """``data`` as standard JSON on stdout (NaN as ``"NaN"``; numpy values as plain numbers)."""
    from assay.jsonio import dumps

    print(dumps(data))


@contextlib.contextmanager
def evaluator_lines_on_stdout() -> Iterator[None]:
    """While inside, assay's own ``EVALUATOR`` handler writes to stdout instead of stderr.

    Nothing changes when the handler was removed (the application took control of the lines).
    """
    from assay.core.log import DefaultHandler, default_handler, logger

    if default_handler not in logger.handlers:
        yield
        return

    class StdoutHandler(DefaultHandler):
        @property
        def stream(self) -> Any:
            return sys.stdout

        @stream.setter
        def stream(self, value: Any) -> None:
            pass

    handler = StdoutHandler()
    handler.setLevel(default_handler.level)
    logger.removeHandler(default_handler)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.addHandler(default_handler)


def describe_executor(executor: Any) -> str:
    """An executor in words for user-facing lines: ``4 worker processes``, ``Spark (master local[2])``.

    An executor with a ``describe()`` method describes itself; otherwise its registered name
    and worker count are used (never its repr).
    """
    describe = getattr(executor, "describe", None)
    if callable(describe):
        return str(describe())
    name = getattr(executor, "name", None) or type(executor).__name__
    workers = getattr(executor, "workers", None)
    if name == "spark":
        context = getattr(executor, "_context", None)
        master = getattr(context, "master", None) or getattr(executor, "master", None)
        return f"Spark (master {master})" if master else "Spark"
    nouns = {"processes": ("worker process", "worker processes"), "threads": ("thread", "threads")}.get(name)
    if nouns and isinstance(workers, int):
        return f"{workers} {nouns[workers != 1]}"
    if name == "serial":
        return "this process"
    return f"the {name} executor" + (f", {workers} workers" if isinstance(workers, int) else "")


def add_verbose(parser: argparse.ArgumentParser) -> None:
    """``--verbose``: show Spark's own log lines and progress bar (as ``ASSAY_SPARK_LOG=1`` does)."""
    parser.add_argument("--verbose", action="store_true",
                        help="show Spark's own log lines and progress bar, hidden by default "
                        "(the same as ASSAY_SPARK_LOG=1)")


@contextlib.contextmanager
def spark_log(args: argparse.Namespace) -> Iterator[None]:
    """With ``--verbose``: ``ASSAY_SPARK_LOG=1`` while inside (read by the spark executor), then as before."""
    if not getattr(args, "verbose", False):
        yield
        return
    before = os.environ.get("ASSAY_SPARK_LOG")
    os.environ["ASSAY_SPARK_LOG"] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("ASSAY_SPARK_LOG", None)
        else:
            os.environ["ASSAY_SPARK_LOG"] = before
