"""One conformance check's outcome (:class:`CheckResult`) and the :class:`Recorder` that runs checks.

A check is a function of no arguments: it passes when it returns, fails when it raises
(an ``AssertionError`` carries the reason; any other exception is reported with its
type), and is skipped when it raises :class:`Skip` or
:class:`~assay.errors.MissingDependencyError` (an optional library is not installed).

A skip is one of two things. :class:`NotApplicable` (a :class:`Skip`) says the check does
not apply to this object by its own declaration (a read-only data format has no
write-read round trip; a UE metric without ``update`` is not streamed): the result has
``applies=False``. Any other skip means the check *should* run but could not (no sample
inputs, a factory that needs arguments nobody declared): ``assay check-plugin`` reports it
as SKIP, and the common suite (:mod:`assay.testing.suite`) fails on it.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from assay.errors import MissingDependencyError
from assay.plugins.registry import Entry

__all__ = ["FAIL", "NOT_RUN", "PASS", "SKIP", "CheckResult", "NotApplicable", "Recorder", "Skip"]

PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"
_REASON_CHARS = 400


class Skip(Exception):
    """Raised inside a check: it cannot run here; the message says why."""


class NotApplicable(Skip):
    """Raised inside a check: it does not apply to this object (by the object's own declaration)."""


class _NotRun:
    def __repr__(self) -> str:
        return "NOT_RUN"


#: what :meth:`Recorder.run` returns for a check that failed or was skipped
NOT_RUN: Any = _NotRun()


@attrs.frozen
class CheckResult:
    """The outcome of one check of one registered name."""

    name: str
    kind: str
    check: str
    status: str  # PASS, FAIL or SKIP
    reason: str = ""
    #: False for a SKIP that says the check does not apply (:class:`NotApplicable`)
    applies: bool = True

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @property
    def outcome(self) -> str:
        """``PASS``, ``FAIL(reason)`` or ``SKIP(reason)``."""
        return f"{self.status}({self.reason})" if self.reason and self.status != PASS else self.status


def one_line(exc: BaseException) -> str:
    """``TypeError: message`` on one line (``AssertionError`` messages stand alone)."""
    text = " ".join(str(exc).split())
    if not isinstance(exc, AssertionError):
        text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    text = text or "assertion failed"
    return text if len(text) <= _REASON_CHARS else text[:_REASON_CHARS - 3] + "..."


class Recorder:
    """Runs the checks of one registered name and keeps their results, in order."""

    def __init__(self, entry: Entry, checks: Iterable[str], *, on_start: Callable[[str], None] | None = None,
                 on_result: Callable[[CheckResult], None] | None = None) -> None:
        self.entry = entry
        self.checks = tuple(checks)
        self.results: list[CheckResult] = []
        #: told each check's name as it starts, and each result as it is recorded (``check-plugin``'s
        #: child process reports them to the parent, which bounds each check: :mod:`assay.testing.isolation`)
        self.on_start = on_start
        self.on_result = on_result

    def _add(self, check: str, status: str, reason: str = "", applies: bool = True) -> None:
        result = CheckResult(self.entry.name, self.entry.kind, check, status, reason, applies)
        self.results.append(result)
        if self.on_result is not None:
            self.on_result(result)

    def run(self, check: str, fn: Callable[[], Any]) -> Any:
        """Run one check (warnings silenced); record it; return ``fn()``'s value, or :data:`NOT_RUN`."""
        if self.on_start is not None:
            self.on_start(check)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = fn()
        except NotApplicable as exc:
            self._add(check, SKIP, str(exc), applies=False)
            return NOT_RUN
        except Skip as exc:
            self._add(check, SKIP, str(exc))
            return NOT_RUN
        except MissingDependencyError as exc:
            self._add(check, SKIP, one_line(exc))
            return NOT_RUN
        except Exception as exc:  # noqa: BLE001 - every failure of plugin code is a result, not a crash
            self._add(check, FAIL, one_line(exc))
            return NOT_RUN
        except SystemExit as exc:
            self._add(check, FAIL, f"SystemExit({exc.code!r}) raised inside the check")
            return NOT_RUN
        self._add(check, PASS)
        return value

    def skip(self, check: str, reason: str, *, applies: bool = True) -> None:
        """Record a skip (``applies=False``: the check does not apply to this object)."""
        self._add(check, SKIP, reason, applies)

    def skip_rest(self, reason: str) -> None:
        """Skip every declared check not recorded yet."""
        done = {r.check for r in self.results}
        for check in self.checks:
            if check not in done:
                self._add(check, SKIP, reason)

    def instantiate(self, overrides: Mapping[str, Any] | None = None, *,
                    check: Callable[[Any], None] | None = None) -> Any:
        """The ``instantiate`` check: the factory called with ``overrides``; :data:`NOT_RUN` when it failed.

        A factory that needs arguments nobody declared is skipped, not failed: the plugin
        declares them as ``examples=[{"overrides": {...}}]``. ``check`` further tests the object.
        """
        overrides = dict(overrides or {})
        missing = _required_arguments(self.entry, overrides)
        if missing:
            self.skip("instantiate", f"the factory needs {', '.join(missing)}: declare them as "
                                     f"examples=[{{'overrides': {{...}}}}]")
            self.skip_rest("not instantiated")
            return NOT_RUN

        def make() -> Any:
            obj = self.entry.create(**overrides)
            if check is not None:
                check(obj)
            return obj

        obj = self.run("instantiate", make)
        if obj is NOT_RUN:
            self.skip_rest("not instantiated")
        return obj


def _required_arguments(entry: Entry, given: Mapping[str, Any]) -> list[str]:
    try:
        sig = inspect.signature(entry.factory)
    except (TypeError, ValueError):
        return []
    return [p.name for p in sig.parameters.values()
            if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in given]
