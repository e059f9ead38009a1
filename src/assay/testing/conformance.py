"""The conformance suite of an installed plugin distribution (what ``assay check-plugin DIST`` runs).

>>> from assay.testing.conformance import check_plugin
>>> report = check_plugin("assay-classic")           # doctest: +SKIP
>>> report.ok, report.counts()                       # doctest: +SKIP
(True, {'PASS': 140, 'FAIL': 0, 'SKIP': 4})

:func:`find_plugin` resolves a distribution name (or an entry-point name) to the
plugins it installed and the names they registered; :func:`check_entries` runs the
checks of each name's kind (:mod:`assay.testing.metric_checks`,
:mod:`assay.testing.kind_checks`) on sample inputs (:mod:`assay.testing.samples`).
A plugin that failed to load, or replaced public assay functions while loading, fails
its ``load`` check.
"""

from __future__ import annotations

import contextlib
import difflib
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from importlib import metadata as importlib_metadata
from typing import Any

import attrs

from assay.errors import InvalidParameterError, UnknownNameError
from assay.plugins import KINDS, PluginInfo, PluginSystem, get_plugin_system
from assay.plugins.registry import Entry
from assay.render import Grid, render_grid
from assay.testing.declaration_checks import declaration_results
from assay.testing.floor_checks import FLOOR_CHECKS, check_command, check_demo_section, check_generation_metric
from assay.testing.isolation import CHECK_TIMEOUT, check_entry_isolated, isolation_available
from assay.testing.kind_checks import (
    CHECKS,
    check_aggregation,
    check_data_format,
    check_executor,
    check_model_backend,
    check_sentence_evaluator,
    check_statistics_user,
    check_task,
)
from assay.testing.metric_checks import METRIC_CHECKS, UE_METRIC_CHECKS, check_metric, check_ue_metric
from assay.testing.recorder import FAIL, PASS, SKIP, CheckResult, Recorder

__all__ = ["CHECKS_BY_KIND", "InstalledPlugin", "PluginReport", "check_entries", "check_plugin", "find_plugin"]

#: kind -> the checks run on each name of that kind, in order
CHECKS_BY_KIND: dict[str, tuple[str, ...]] = {"metric": METRIC_CHECKS, "ue_metric": UE_METRIC_CHECKS, **CHECKS,
                                              **FLOOR_CHECKS}

_RUNNERS: dict[str, Callable[[Entry, Recorder, PluginSystem], None]] = {
    "metric": lambda e, r, s: check_metric(e, r),
    "ue_metric": lambda e, r, s: check_ue_metric(e, r),
    "estimator": check_statistics_user,
    "stat_calculator": check_statistics_user,
    "sentence_evaluator": lambda e, r, s: check_sentence_evaluator(e, r),
    "executor": lambda e, r, s: check_executor(e, r),
    "data_format": lambda e, r, s: check_data_format(e, r),
    "task": lambda e, r, s: check_task(e, r),
    "aggregation": lambda e, r, s: check_aggregation(e, r),
    "generation_metric": lambda e, r, s: check_generation_metric(e, r),  # issue 12: the floor kinds
    "command": lambda e, r, s: check_command(e, r),
    "demo_section": lambda e, r, s: check_demo_section(e, r),
    "model_backend": lambda e, r, s: check_model_backend(e, r),
}


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@attrs.frozen
class InstalledPlugin:
    """One distribution's plugins (its ``assay`` entry points) and the names they registered."""

    distribution: str
    version: str | None
    infos: tuple[PluginInfo, ...]
    entries: tuple[Entry, ...]


def find_plugin(dist: str, system: PluginSystem | None = None) -> InstalledPlugin:
    """The plugins installed by ``dist`` (a distribution name, PEP 503 normalised, or an entry-point name).

    ``"assay"`` names assay's own built-in plugins.

    Raises
    ------
    UnknownNameError
        No installed plugin has that distribution or entry-point name (the close matches
        are listed), or the distribution is installed but declares no ``assay`` entry point.
    InvalidParameterError
        Its plugins are disabled (``ASSAY_DISABLE_PLUGINS`` / ``ASSAY_LOAD_PLUGINS``) or
        registered nothing.
    """
    system = system or get_plugin_system()
    infos = system.plugins
    key = _normalize(dist)
    if key == "assay":
        found = [i for i in infos if i.builtin]
        name, version = "assay", _version("assay")
    else:
        found = [i for i in infos if not i.builtin and (i.name == dist or (
            i.distribution is not None and _normalize(i.distribution) == key))]
        name = next((i.distribution for i in found if i.distribution), dist)
        version = next((i.version for i in found if i.version), None)
    if not found:
        raise UnknownNameError(_not_found(dist, infos))
    disabled = [i.name for i in found if i.status == "disabled"]
    if disabled and len(disabled) == len(found):
        raise InvalidParameterError(
            f"The plugins of {dist!r} ({', '.join(disabled)}) are not loaded: ASSAY_DISABLE_PLUGINS or "
            "ASSAY_LOAD_PLUGINS excludes them; unset it to check them.")
    names = {i.name for i in found}
    entries = tuple(e for kind in KINDS for n in system.registry(kind).names()
                    for e in system.registry(kind).candidates(n) if e.plugin in names)
    if not entries and not any(i.status == "failed" for i in found):
        raise InvalidParameterError(
            f"{name!r} is installed but registers nothing: its entry point(s) {', '.join(sorted(names))} call no "
            f"assay_register_* hook with a name (see 'assay plugins').")
    return InstalledPlugin(name, version, tuple(found), entries)


def _version(dist: str) -> str | None:
    try:
        return importlib_metadata.version(dist)
    except importlib_metadata.PackageNotFoundError:
        return None


def _not_found(dist: str, infos: Sequence[PluginInfo]) -> str:
    if _version(dist) is not None:
        return (f"Distribution {dist!r} is installed but declares no entry point in the 'assay' group, so assay "
                "finds no plugin in it: add [project.entry-points.assay] to its pyproject.toml "
                "(see docs/plugins.md).")
    known = sorted({i.distribution for i in infos if i.distribution} | {i.name for i in infos if not i.builtin})
    close = difflib.get_close_matches(dist, known, n=5, cutoff=0.5) or [
        k for k in known if dist.lower() in k.lower() or k.lower() in dist.lower()][:5]
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    listing = f" Installed plugin distributions: {', '.join(known)} (and 'assay', the built-ins)." if known else (
        " No plugin distribution is installed ('assay' checks the built-ins).")
    return f"No installed assay plugin distribution or entry point named {dist!r}.{hint}{listing}"


def load_results(plugin: InstalledPlugin) -> list[CheckResult]:
    """One ``load`` result per entry point: FAIL when it failed to load or replaced assay functions."""
    out = []
    for info in plugin.infos:
        if info.status == "failed":
            out.append(CheckResult(info.name, "plugin", "load", FAIL, " ".join((info.error or "failed").split())))
        elif info.replaced:
            out.append(CheckResult(info.name, "plugin", "load", FAIL,
                                   f"replaced public assay functions while loading: {', '.join(info.replaced)}"))
        elif info.status == "disabled":
            out.append(CheckResult(info.name, "plugin", "load", SKIP, "disabled by ASSAY_DISABLE_PLUGINS / "
                                                                      "ASSAY_LOAD_PLUGINS"))
        else:
            out.append(CheckResult(info.name, "plugin", "load", PASS))
    return out


def check_entry(entry: Entry, system: PluginSystem | None = None, *,
                on_start: Callable[[str], None] | None = None,
                on_result: Callable[[CheckResult], None] | None = None) -> list[CheckResult]:
    """Run the checks of ``entry``'s kind on it, in this process; anything it prints goes to stderr.

    ``on_start`` / ``on_result`` are told each check as it starts and each result as it is
    recorded (see :class:`~assay.testing.recorder.Recorder`).
    """
    rec = Recorder(entry, CHECKS_BY_KIND[entry.kind], on_start=on_start, on_result=on_result)
    with contextlib.redirect_stdout(sys.stderr):
        try:
            _RUNNERS[entry.kind](entry, rec, system or get_plugin_system())
        except Exception as exc:  # noqa: BLE001 - a bug in a check must not hide the other names' results
            rec._add("internal", FAIL, f"the check itself raised {type(exc).__name__}: {exc}")
        rec.skip_rest("not run")
    return rec.results


def check_entries(entries: Iterable[Entry], system: PluginSystem | None = None, *,
                  timeout: float | None = CHECK_TIMEOUT) -> list[CheckResult]:
    """The results of every check of every entry, in order.

    Each entry's checks run in a child process where one can be forked, each check bounded by
    ``timeout`` seconds (None: no bound); a check that passes the bound, or a plugin that ends
    the process (``os._exit``), is a FAIL of that check (:mod:`assay.testing.isolation`).
    Without ``fork`` (Windows) they run in this process, unbounded.
    """
    system = system or get_plugin_system()
    if not isolation_available():
        return [r for entry in entries for r in check_entry(entry, system)]
    return [r for entry in entries
            for r in check_entry_isolated(entry, system, CHECKS_BY_KIND[entry.kind], check_entry, timeout)]


@attrs.frozen
class PluginReport:
    """What ``assay check-plugin`` prints: every result, and whether they all passed."""

    distribution: str
    version: str | None
    results: tuple[CheckResult, ...]

    def counts(self) -> dict[str, int]:
        return {status: sum(r.status == status for r in self.results) for status in (PASS, FAIL, SKIP)}

    @property
    def ok(self) -> bool:
        """No check failed (skipped checks do not fail the report)."""
        return not any(r.status == FAIL for r in self.results)

    def summary(self) -> str:
        c = self.counts()
        names = len({(r.kind, r.name) for r in self.results if r.kind != "plugin"})
        version = f" {self.version}" if self.version else ""
        return (f"{self.distribution}{version}: {names} {'name' if names == 1 else 'names'}, {len(self.results)} "
                f"checks: {c[PASS]} passed, {c[FAIL]} failed, {c[SKIP]} skipped")

    def table(self) -> str:
        """One line per check: ``name  kind  check  PASS | FAIL(reason) | SKIP(reason)`` (text, :mod:`assay.render`)."""
        rows = [(r.name, r.kind, r.check, r.outcome) for r in self.results]
        return render_grid(Grid(header=("name", "kind", "check", "result"), rows=rows, align="llll"), "text")

    def to_dict(self) -> dict[str, Any]:
        return {"distribution": self.distribution, "version": self.version, "ok": self.ok,
                "counts": {k.lower(): v for k, v in self.counts().items()},
                "results": [r.to_dict() for r in self.results]}


def check_plugin(dist: str, *, kinds: Iterable[str] | None = None, names: Iterable[str] | None = None,
                 system: PluginSystem | None = None, timeout: float | None = CHECK_TIMEOUT) -> PluginReport:
    """Check every name ``dist`` registered (optionally only those ``kinds`` and ``names``).

    ``timeout``: the most seconds one check may run (None: no bound), see :func:`check_entries`.
    """
    system = system or get_plugin_system()
    plugin = find_plugin(dist, system)
    wanted_kinds = set(kinds) if kinds is not None else None
    wanted_names = set(names) if names is not None else None
    entries = [e for e in plugin.entries if (wanted_kinds is None or e.kind in wanted_kinds)
               and (wanted_names is None or e.name in wanted_names)]
    results = (load_results(plugin) + declaration_results(plugin.infos, system)
               + check_entries(entries, system, timeout=timeout))
    return PluginReport(plugin.distribution, plugin.version, tuple(results))
