"""Run one registered name's conformance checks in a child process, each check under a time bound.

``assay check-plugin`` runs plugin code it knows nothing about: a check whose code sleeps or
loops forever (a ``map_batch`` that never returns) would hang the whole report, and a plugin
that calls ``os._exit`` (or crashes the interpreter) would end it without a word. So each
name's checks run in a forked child that reports every check as it starts and as it ends
(a pipe); the parent waits at most ``timeout`` seconds for the next report. When the bound
passes, the child is killed and the check it was running is a FAIL naming the bound; when
the child ends without finishing, the check it was running is a FAIL naming how it ended
(its exit status or signal). The checks not run after that are SKIPs saying why; the other
names are checked as usual.

The child is started with ``fork`` (it inherits the plugin system as loaded, nothing is
pickled). Where ``fork`` is not offered (Windows), the checks run in this process, without
the bound, as :func:`~assay.testing.conformance.check_entry` does.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
import sys
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from assay.plugins import PluginSystem
from assay.plugins.registry import Entry
from assay.testing.recorder import FAIL, SKIP, CheckResult

__all__ = ["CHECK_TIMEOUT", "check_entry_isolated", "isolation_available"]

#: The default bound, in seconds, on one check (``assay check-plugin --check-timeout``).
CHECK_TIMEOUT = 120.0

#: Between the checks (sample generation, instantiation), the same bound applies to this "check".
_BETWEEN = "(between checks)"


def isolation_available() -> bool:
    """Whether checks can run in a forked child (POSIX)."""
    return "fork" in multiprocessing.get_all_start_methods()


def _single_threaded_torch() -> None:
    """In a forked child of a process that has used torch: one intra-op thread.

    torch's OpenMP thread pool does not survive ``fork``: once the parent has run a parallel
    operation, the child's first one waits forever for threads that were not copied (seen with
    assay-transformers' embedding checks after other tests had used torch). With one thread torch
    runs its operations inline. torch is never imported here: only a torch the parent loaded is set.
    """
    torch = sys.modules.get("torch")
    set_num_threads = getattr(torch, "set_num_threads", None)
    if callable(set_num_threads):
        set_num_threads(1)


def _child(conn: Connection, entry: Entry, system: PluginSystem,
           check_entry: Callable[..., list[CheckResult]]) -> None:
    """In the child: run the checks, sending ``("start", check)`` and ``("result", CheckResult)`` as they happen."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's: it kills the child
    _single_threaded_torch()

    def started(check: str) -> None:
        conn.send(("start", check))

    def recorded(result: CheckResult) -> None:
        conn.send(("result", result))

    try:
        check_entry(entry, system, on_start=started, on_result=recorded)
        conn.send(("done", None))
    finally:
        conn.close()


def check_entry_isolated(entry: Entry, system: PluginSystem, checks: tuple[str, ...],
                         check_entry: Callable[..., list[CheckResult]],
                         timeout: float | None = CHECK_TIMEOUT) -> list[CheckResult]:
    """The results of ``entry``'s ``checks`` run by ``check_entry`` in a forked child, each bounded by ``timeout``."""
    ctx = multiprocessing.get_context("fork")
    parent_end, child_end = ctx.Pipe(duplex=False)
    process = ctx.Process(target=_child, args=(child_end, entry, system, check_entry),
                          name=f"assay-check-{entry.name}", daemon=False)  # a check may start its own workers
    process.start()
    child_end.close()
    results: list[CheckResult] = []
    current = _BETWEEN
    ended = ""
    try:
        while True:
            if not parent_end.poll(timeout):
                ended = (f"did not finish within {timeout:g} s (check-plugin's per-check timeout, "
                         "--check-timeout); the process running it was killed")
                break
            try:
                kind, value = parent_end.recv()
            except (EOFError, OSError):
                ended = _how_it_ended(process)
                break
            if kind == "start":
                current = value
            elif kind == "result":
                results.append(value)
                current = _BETWEEN
            else:
                break
    finally:
        if process.is_alive():
            process.kill()
        process.join()
        parent_end.close()
        with contextlib.suppress(ValueError):
            process.close()
    if ended:
        results.append(CheckResult(entry.name, entry.kind, current if current != _BETWEEN else _next(checks, results),
                                   FAIL, f"the check {ended}"))
        done = {r.check for r in results}
        what = results[-1].check
        results.extend(CheckResult(entry.name, entry.kind, check, SKIP, f"not run: the check {what!r} ended the "
                                   "process running the checks") for check in checks if check not in done)
    return results


def _next(checks: tuple[str, ...], results: list[CheckResult]) -> str:
    """The first declared check with no result yet (what ran when the child ended between checks)."""
    done = {r.check for r in results}
    return next((c for c in checks if c not in done), "internal")


def _how_it_ended(process: Any) -> str:
    """``ended the process: os._exit(3) or exit status 3`` / ``... killed by signal SIGSEGV``."""
    deadline = time.monotonic() + 5.0
    while process.exitcode is None and time.monotonic() < deadline:
        process.join(0.05)
    code = process.exitcode
    if code is None:
        return "closed its connection without finishing"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        return f"ended the process running it: killed by signal {name}"
    return (f"ended the process running it with exit status {code} (os._exit({code}), or a crash, in the "
            "plugin's code)")
