"""A lock on the output folder of ``assay run``: one run writes a folder at a time.

Two runs into one folder at the same time would interleave their files and leave the
later run's manifest over a mix of both; :func:`output_lock` makes the second run an
error naming the folder and the process that holds it::

    with output_lock(folder):
        ...  # write the results

The lock is the file ``.assay-run.lock`` in the folder, locked with ``fcntl.flock``
(``msvcrt.locking`` on Windows) and holding the holder's pid, host and start time. The
operating system releases the lock when its process ends, however it ends (``kill -9``
included), so a lock file left by a dead process is *stale*: the next run takes it over,
with a :class:`StaleLockWarning` naming the dead process. The file is removed when the
run ends. Written here because the standard library has the primitive (``flock``) but no
folder lock with a holder to name, and a dependency (``filelock``) would not name the
holder either.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from assay.errors import AssayError

__all__ = ["LOCK_NAME", "FolderInUseError", "StaleLockWarning", "output_lock"]

#: the lock file's name inside the output folder
LOCK_NAME = ".assay-run.lock"


class FolderInUseError(AssayError):
    """Another process is running ``assay run`` into the same output folder."""


class StaleLockWarning(UserWarning):
    """The output folder's lock was left by a process that is no longer running; it was taken over."""


def _try_lock(fd: int) -> bool:
    """Lock ``fd`` without waiting; False when another process holds it."""
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt  # the Windows counterpart of fcntl

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl  # POSIX only (imported here: there is no fcntl on Windows)

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _holder(path: Path) -> dict[str, Any]:
    """What the lock file says about its holder (empty when it says nothing readable)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _describe(holder: dict[str, Any]) -> str:
    pid = holder.get("pid")
    if not isinstance(pid, int):
        return "a process that did not record its pid"
    where = f" on {holder['host']}" if holder.get("host") and holder.get("host") != socket.gethostname() else ""
    since = f", started {holder['started']}" if isinstance(holder.get("started"), str) else ""
    return f"pid {pid}{where}{since}"


def _running(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    except OSError:
        return False
    return True


@contextlib.contextmanager
def output_lock(folder: str | os.PathLike[str], *, command: str = "assay run") -> Iterator[Path]:
    """Hold the lock of ``folder`` (created if needed) for the ``with`` block; yields the lock file's path.

    Raises :class:`FolderInUseError` naming the folder and the holder (its pid) when another
    process holds it; takes over a stale lock (its process died) with a :class:`StaleLockWarning`.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_NAME
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        if not _try_lock(fd):
            os.close(fd)
            holder = _holder(path)
            raise FolderInUseError(
                f"{folder}: the output folder is in use by another {command} ({_describe(holder)}; lock file "
                f"{path}); wait for it to finish or write to another folder (-o FOLDER). Two runs into one folder "
                "would mix their result files.")
        try:  # the file may have been removed (and made anew) by its last holder between open and lock
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        previous = _holder(path)
        if previous:
            state = "is no longer running" if not _running(previous.get("pid")) or previous.get("pid") == os.getpid() \
                else "no longer holds it (its pid now belongs to another process)"
            warnings.warn(f"{folder}: took over the lock left by {_describe(previous)}, which {state} (a run that "
                          "was killed); its result files in this folder may be incomplete and are overwritten.",
                          StaleLockWarning, stacklevel=3)
        record = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "command": command,
                             "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")})
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, record.encode("utf-8"))
        os.fsync(fd)
        yield path
    finally:
        with contextlib.suppress(OSError):
            path.unlink()  # while still locked: the next run makes a new file
        os.close(fd)
