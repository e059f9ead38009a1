"""The common suite: every registered name of every kind through its kind's conformance checks, under pytest.

The checks are those of ``assay check-plugin`` (:data:`assay.testing.conformance.CHECKS_BY_KIND`;
the invariances per kind are listed in :mod:`assay.testing.metric_checks` and
:mod:`assay.testing.kind_checks`). The suite is stricter than the command in one way:
a check that *should* run but could not (no sample inputs, a factory needing arguments
nobody declared) is a failure naming the object, not a skip. Only a check that does not
apply by the object's own declaration (a read-only data format has no round trip; a UE
metric without ``update`` is not streamed) passes without running, and an object may be
left out only through an explicit ``exempt`` mapping that gives the reason.

A plugin author puts one line in a test module::

    from assay.testing.suite import conformance_test

    test_my_plugin_conforms = conformance_test("my-assay-plugin")

and pytest runs one test per registered name of that distribution
(``test_my_plugin_conforms[metric:my_metric]`` ...). The names come from the live
registry at collection time, so a name the plugin adds is checked without touching the
test.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from assay.plugins import KINDS, PluginSystem, get_plugin_system
from assay.plugins.registry import Entry
from assay.testing.conformance import CHECKS_BY_KIND, check_entry
from assay.testing.recorder import FAIL, SKIP, CheckResult

__all__ = ["assert_conforms", "conformance_test", "registered_entries", "with_overrides"]


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def registered_entries(system: PluginSystem | None = None, *, distribution: str | None = None,
                       kinds: Iterable[str] | None = None) -> list[Entry]:
    """Every registered entry (ambiguous names: every candidate), kind by kind, optionally of one distribution.

    ``distribution`` is a distribution name (PEP 503 normalised) or an entry-point name;
    ``"assay"`` selects assay's built-ins.
    """
    system = system or get_plugin_system()
    wanted = set(kinds) if kinds is not None else set(KINDS)
    out = []
    for kind in KINDS:
        if kind not in wanted:
            continue
        registry = system.registry(kind)
        for name in registry.names():
            for entry in registry.candidates(name):
                if distribution is None or _of(entry, distribution):
                    out.append(entry)
    return out


def _of(entry: Entry, distribution: str) -> bool:
    key = _normalize(distribution)
    if key == "assay":
        return entry.builtin
    return entry.plugin == distribution or (entry.distribution is not None
                                            and _normalize(entry.distribution) == key)


def with_overrides(entry: Entry, **overrides: Any) -> Entry:
    """``entry`` with its first example's ``overrides`` replaced (e.g. an executor on an existing cluster)."""
    return attrs.evolve(entry, metadata={**entry.metadata, "examples": [{"overrides": overrides}]})


def _problem(result: CheckResult) -> bool:
    return result.status == FAIL or (result.status == SKIP and result.applies)


def assert_conforms(entry: Entry, system: PluginSystem | None = None) -> list[CheckResult]:
    """Run ``entry``'s checks; raise ``AssertionError`` naming every check that failed or could not run.

    Returns the results (all passed, or skipped because they do not apply).
    """
    if entry.kind not in CHECKS_BY_KIND:
        raise AssertionError(f"{entry.kind} {entry.name!r} ({entry.source}): the common suite has no checks for "
                             f"the kind {entry.kind!r}; add them to assay.testing.conformance.CHECKS_BY_KIND")
    results = check_entry(entry, system)
    problems = [r for r in results if _problem(r)]
    if problems:
        lines = [f"  {r.check}: {r.outcome}" for r in problems]
        raise AssertionError(f"{entry.kind} {entry.name!r} ({entry.source}) does not conform:\n" + "\n".join(lines))
    return results


def conformance_test(distribution: str | None = None, *, exempt: Mapping[tuple[str, str], str] | None = None,
                     kinds: Iterable[str] | None = None, system: PluginSystem | None = None) -> Callable[..., None]:
    """A pytest test function parametrised over the registered names (of ``distribution``; all when None).

    Parameters
    ----------
    distribution : str, optional
        A distribution or entry-point name (``"assay"``: the built-ins); default every
        registered name.
    exempt : mapping, optional
        ``{(kind, name): reason}``: names left out of the suite, each with the reason
        (checked elsewhere, or no way to give it sample inputs). A reason must be given.
    kinds : iterable of str, optional
        Only these kinds.
    system : PluginSystem, optional
        Default: the process-wide plugin system (entry points included), read now, at
        collection time.

    Returns
    -------
    function
        ``test_...(assay_entry)``, marked with ``pytest.mark.parametrize``; assign it to a
        module-level name starting with ``test``.
    """
    import pytest

    exempt = dict(exempt or {})
    for key, reason in exempt.items():
        if not isinstance(reason, str) or not reason.strip():
            raise ValueError(f"exempt[{key!r}] must give the reason as a non-empty string; got {reason!r}")
    entries = [e for e in registered_entries(system, distribution=distribution, kinds=kinds)
               if (e.kind, e.name) not in exempt]
    params = [pytest.param(e, id=f"{e.kind}:{e.name}" + (f"@{e.plugin}" if _ambiguous(e, entries) else ""))
              for e in entries] or [pytest.param(None, id="nothing-registered")]
    what = f"distribution {distribution!r}" if distribution else "the plugin system"

    @pytest.mark.parametrize("assay_entry", params)
    def test_conforms(assay_entry: Entry | None) -> None:
        if assay_entry is None:
            raise AssertionError(f"{what} registers no name to check (of kinds {sorted(kinds or KINDS)}, "
                                 f"exempt {sorted(exempt)}): is the plugin installed and its entry point loaded?")
        assert_conforms(assay_entry, system)

    return test_conforms


def _ambiguous(entry: Entry, entries: list[Entry]) -> bool:
    return sum(e.kind == entry.kind and e.name == entry.name for e in entries) > 1
