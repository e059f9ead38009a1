"""Conformance checks of the kinds plugins use to extend assay itself (``assay check-plugin``):
generation metrics, ``assay`` sub-commands and ``assay demo`` sections.

Commands and demo sections are not run (a command needs its arguments, a section writes
files for a while): their registration is checked, and a command's arguments are added to a
throwaway parser, as ``assay --help`` does.
"""

from __future__ import annotations

import argparse
import inspect
import pickle
from typing import Any

from assay.plugins import Entry
from assay.testing.recorder import NOT_RUN, Recorder

__all__ = ["FLOOR_CHECKS", "check_command", "check_demo_section", "check_generation_metric"]

#: kind -> the checks run on each name of that kind, in order
FLOOR_CHECKS: dict[str, tuple[str, ...]] = {
    "generation_metric": ("instantiate", "declaration", "pickling"),
    "command": ("callable", "arguments"),
    "demo_section": ("callable", "declaration"),
}


def _takes_one_argument(fn: Any, what: str) -> None:
    if not callable(fn):
        raise AssertionError(f"{what} is a {type(fn).__name__}, not a callable")
    try:
        inspect.signature(fn).bind(object())
    except TypeError as exc:
        raise AssertionError(f"{what} cannot be called with one argument: {exc}") from None
    except ValueError:  # no signature to read (a builtin): nothing more to check
        pass


def check_generation_metric(entry: Entry, rec: Recorder) -> None:
    """An :class:`assay.uncertainty.GenerationMetric` with a valid ``level``, picklable."""
    from assay.uncertainty import LEVELS, GenerationMetric

    def is_metric(obj: Any) -> None:
        if not isinstance(obj, GenerationMetric):
            raise AssertionError(
                f"the factory returned a {type(obj).__name__}, not an assay.uncertainty.GenerationMetric")

    metric = rec.instantiate(check=is_metric)
    if metric is NOT_RUN:
        return

    def declaration() -> None:
        if getattr(metric, "level", None) not in LEVELS:
            raise AssertionError(f"level must be one of {', '.join(LEVELS)}; got {getattr(metric, 'level', None)!r}")
        if not callable(metric):
            raise AssertionError("a generation metric is called with the statistics: define __call__(stats)")

    def pickling() -> None:
        copy = pickle.loads(pickle.dumps(metric))
        if type(copy) is not type(metric) or getattr(copy, "level", None) != metric.level:
            raise AssertionError("the unpickled metric differs from the original")

    rec.run("declaration", declaration)
    rec.run("pickling", pickling)


def check_command(entry: Entry, rec: Recorder) -> None:
    """``run(args)`` is callable with one argument; ``add_arguments(parser)`` adds its arguments cleanly."""
    rec.run("callable", lambda: _takes_one_argument(entry.factory, "the command's run"))

    def arguments() -> None:
        add = entry.metadata.get("add_arguments")
        if add is None:
            return
        _takes_one_argument(add, "add_arguments")
        parser = argparse.ArgumentParser(prog=f"assay {entry.name}")
        add(parser)
        parser.format_help()  # what 'assay NAME --help' prints must format

    rec.run("arguments", arguments)


def check_demo_section(entry: Entry, rec: Recorder) -> None:
    """``run(out_dir)`` is callable with one argument; ``order`` is a number and ``title`` a string."""
    rec.run("callable", lambda: _takes_one_argument(entry.factory, "the section's run"))

    def declaration() -> None:
        order = entry.metadata.get("order", 100)
        if isinstance(order, bool) or not isinstance(order, (int, float)):
            raise AssertionError(f"order must be a number; got {order!r}")
        title = entry.metadata.get("title", "")
        if not isinstance(title, str) or not title.strip():
            raise AssertionError("register the section with title='one line for assay demo --help'")

    rec.run("declaration", declaration)
