"""Containment while third-party plugin code runs: no exception or stray print escapes.

A plugin's import or hook may raise anything, ``SystemExit`` and ``KeyboardInterrupt``
included; assay records it as that plugin's load error and goes on with the others. The
one exception let through is a real Ctrl-C: while plugins load, :func:`watch_interrupts`
wraps the SIGINT handler, so a ``KeyboardInterrupt`` that came from the signal is told
apart from one a plugin raised itself.

>>> with watch_interrupts() as interrupted:
...     try:
...         raise KeyboardInterrupt  # raised by code, not by Ctrl-C
...     except BaseException as exc:
...         print(is_real_interrupt(exc, interrupted))
False
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["is_real_interrupt", "stdout_to_stderr", "watch_interrupts"]


@contextlib.contextmanager
def watch_interrupts() -> Iterator[Callable[[], bool]]:
    """Yield ``interrupted()``, true once a real SIGINT arrived inside the block.

    The installed SIGINT handler still raises ``KeyboardInterrupt`` (it calls the previous
    one). Outside the main thread, or when SIGINT is ignored or left to the system, no
    signal can raise ``KeyboardInterrupt`` in this code, so ``interrupted()`` stays false.
    """
    hit = False
    previous: Any = None
    installed = False
    if threading.current_thread() is threading.main_thread():
        previous = signal.getsignal(signal.SIGINT)
        if callable(previous):

            def handler(signum: int, frame: Any) -> None:
                nonlocal hit
                hit = True
                previous(signum, frame)

            try:
                signal.signal(signal.SIGINT, handler)
                installed = True
            except ValueError:  # pragma: no cover - e.g. an embedded interpreter
                pass
    try:
        yield lambda: hit
    finally:
        if installed:
            signal.signal(signal.SIGINT, previous)


def is_real_interrupt(exc: BaseException, interrupted: Callable[[], bool]) -> bool:
    """Whether ``exc`` is the user's Ctrl-C (re-raise it) rather than something a plugin raised."""
    return isinstance(exc, KeyboardInterrupt) and interrupted()


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send what plugin code prints to stderr, so ``assay ... --json`` output stays valid."""
    with contextlib.redirect_stdout(sys.stderr):
        yield
