"""A lean read of the installed entry points of a few groups, for ``assay NAME`` (a plugin's command).

:mod:`importlib.metadata` costs about 25 ms to import (email, zipfile, csv, ...), as much as a
fast plugin command spends on its own work, and ``assay NAME`` only needs the entry points of
the groups ``assay`` and ``assay.commands`` to find the one plugin to load
(:meth:`assay.plugins.PluginSystem.load_command`). :func:`read_entry_points` reads what
:func:`importlib.metadata.entry_points` reads for those groups: the ``entry_points.txt`` of
every ``*.dist-info`` and ``*.egg-info`` folder of the folders on ``sys.path``, in order, the
first distribution of a (normalized) name winning, with each distribution's name and version
from its ``METADATA`` (``PKG-INFO``) header. Where it cannot read as plainly as that -- an entry
of ``sys.path`` that is a file (a zip), an ``.egg`` folder, a finder on ``sys.meta_path`` that
provides distributions otherwise than from the folders of ``sys.path``, a file it cannot read or
parse -- it answers
None and the caller uses :mod:`importlib.metadata`. The tests compare both on the installed
environment and on throwaway distributions.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Iterable

__all__ = ["LeanEntryPoint", "read_entry_points"]

_SEPARATORS = re.compile(r"[-_.]+")
#: ``module``, ``module:attr.attr``, with optional ``[extras]`` (the pattern of importlib.metadata.EntryPoint)
_VALUE = re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")


class LeanEntryPoint:
    """One entry point: ``name = value`` in ``group`` of distribution ``dist`` (name, version)."""

    __slots__ = ("dist_name", "dist_version", "group", "name", "value")

    def __init__(self, name: str, value: str, group: str, dist_name: str | None, dist_version: str | None) -> None:
        self.name, self.value, self.group = name, value, group
        self.dist_name, self.dist_version = dist_name, dist_version

    def load(self) -> object:
        """Import the module of ``value`` (``module``, ``module:attribute``, extras ``[...]`` ignored) and return
        the object, as :meth:`importlib.metadata.EntryPoint.load` does."""
        match = _VALUE.match(self.value)
        if match is None:
            raise ValueError(f"entry point {self.name!r} has an invalid value {self.value!r}")
        obj: object = importlib.import_module(match.group("module"))
        for part in filter(None, (match.group("attr") or "").split(".")):
            obj = getattr(obj, part)
        return obj

    def key(self) -> tuple[str, str, str, str | None, str | None]:
        return (self.group, self.name, self.value, self.dist_name, self.dist_version)

    def __repr__(self) -> str:
        return f"LeanEntryPoint({self.group}: {self.name} = {self.value}, {self.dist_name} {self.dist_version})"


def _normalize(name: str) -> str:
    return _SEPARATORS.sub("_", name).lower()


def _plain_finders() -> bool:
    """Whether the finders on ``sys.meta_path`` that provide distributions all search the folders of ``sys.path``:
    the path finder, and the ``importlib_metadata`` backport's ``MetadataPathFinder`` (which another library may
    have installed; it finds the same distributions, in the same order)."""
    from importlib.machinery import PathFinder

    for finder in sys.meta_path:
        if not hasattr(finder, "find_distributions") or finder is PathFinder:
            continue
        kind = type(finder)
        if not (kind.__name__ == "MetadataPathFinder" and kind.__module__.split(".")[0] == "importlib_metadata"):
            return False
    return True


def _header(folder: str) -> tuple[str | None, str | None]:
    """Name and version from the ``METADATA`` (``PKG-INFO``) header of a distribution folder."""
    for file in ("METADATA", "PKG-INFO"):
        path = os.path.join(folder, file)
        if not os.path.isfile(path):
            continue
        name = version = None
        with open(path, encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    break  # the header ends at the first blank line
                key, sep, value = line.partition(":")
                if sep and key == "Name" and name is None:
                    name = value.strip()
                elif sep and key == "Version" and version is None:
                    version = value.strip()
        return name, version
    return None, None


def _sections(text: str, groups: set[str]) -> Iterable[tuple[str, str, str]]:
    """``(group, name, value)`` of the ``name = value`` lines of the wanted ``[group]`` sections."""
    group = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line[0] == "[" and line[-1] == "]":
            group = line[1:-1].strip()
            continue
        if group not in groups:
            continue
        name, sep, value = line.partition("=")
        if not sep:
            raise ValueError(f"not an entry point: {raw!r}")
        yield group, name.strip(), value.strip()


def read_entry_points(groups: Iterable[str]) -> list[LeanEntryPoint] | None:
    """The installed entry points of ``groups``, as :func:`importlib.metadata.entry_points` finds them; or None
    where this reader cannot tell (see the module's docstring)."""
    wanted = set(groups)
    if not _plain_finders():
        return None
    found: list[LeanEntryPoint] = []
    seen: set[str] = set()
    try:
        for entry in sys.path:
            folder = entry or "."
            if not os.path.isdir(folder):
                if os.path.exists(folder):  # a zip archive: importlib.metadata reads inside it
                    return None
                continue
            if folder.lower().endswith(".egg"):  # an egg folder keeps its metadata in EGG-INFO: not read here
                return None
            for name in os.listdir(folder):
                if not name.lower().endswith((".dist-info", ".egg-info")):
                    continue
                key = _normalize(name.lower().rpartition(".")[0].partition("-")[0])
                if key in seen:  # the first distribution of a name wins, as in importlib.metadata
                    continue
                seen.add(key)
                path = os.path.join(folder, name)
                if not os.path.isdir(path):
                    continue
                points = os.path.join(path, "entry_points.txt")
                if not os.path.isfile(points):
                    continue
                with open(points, encoding="utf-8") as f:
                    pairs = list(_sections(f.read(), wanted))
                if pairs:
                    dist_name, dist_version = _header(path)
                    found.extend(LeanEntryPoint(n, v, g, dist_name, dist_version) for g, n, v in pairs)
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return found
