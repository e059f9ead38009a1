"""Find a Java runtime that pyspark can use (Java 17+ for pyspark 4), the way ``scripts/ensure-java.sh`` does.

pyspark launches its JVM with ``$JAVA_HOME/bin/java`` when ``JAVA_HOME`` is set, else with
``java`` from ``PATH``. A stale ``JAVA_HOME`` (a removed JDK, an old Java 11) makes the
launch fail deep inside Py4J with a long traceback. :func:`ensure_java_home` checks the
runtime before a SparkContext is created and, when the one pyspark would pick is missing
or too old, points ``JAVA_HOME`` at an installed Java 17+ (``PATH``, then
``/usr/lib/jvm/*``, then macOS' ``/Library/Java/JavaVirtualMachines``), with a warning
that says so. When there is none, :class:`JavaNotFoundError` says what was looked at and
how to install one. It never installs anything (``scripts/ensure-java.sh`` does, for
``make``).
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import warnings
from pathlib import Path

from assay.errors import MissingDependencyError

__all__ = ["JavaNotFoundError", "MIN_JAVA", "ensure_java_home", "find_java_home", "java_major"]

#: The oldest Java major version pyspark 4 runs on.
MIN_JAVA = 17

#: where installed runtimes are looked for, after JAVA_HOME and PATH
_JVM_GLOBS = ("/usr/lib/jvm/*/bin/java", "/Library/Java/JavaVirtualMachines/*/Contents/Home/bin/java")

_VERSION = re.compile(r'version "([^"]+)"')


class JavaNotFoundError(MissingDependencyError):
    """No Java runtime new enough for pyspark was found; the message lists what was looked at."""

    def __init__(self, looked_at: list[str], *, minimum: int = MIN_JAVA) -> None:
        Exception.__init__(
            self,
            f"the spark executor needs a Java {minimum}+ runtime (pyspark starts a JVM) and none was found. "
            f"Looked at: {'; '.join(looked_at) or 'nothing'}. Install one (Debian/Ubuntu: "
            f"'apt-get install openjdk-{minimum}-jre-headless', or run scripts/ensure-java.sh from the "
            "assay repository) and set JAVA_HOME to it.",
        )
        self.package = f"java>={minimum}"
        self.hint = f"apt-get install openjdk-{minimum}-jre-headless"


def java_major(java: str | os.PathLike[str]) -> int | None:
    """The major version of the ``java`` binary at ``java`` (``1.8.0_392`` -> 8), or None if it does not run."""
    try:
        done = subprocess.run([os.fspath(java), "-version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    match = _VERSION.search(done.stderr + done.stdout)
    if match is None:
        return None
    parts = match.group(1).split(".")
    head = parts[1] if parts[0] == "1" and len(parts) > 1 else parts[0]
    digits = re.match(r"\d+", head)
    return int(digits.group()) if digits else None


def _home_of(java: str) -> str:
    return str(Path(os.path.realpath(java)).parent.parent)


def find_java_home(minimum: int = MIN_JAVA) -> tuple[str | None, list[str]]:
    """The ``JAVA_HOME`` of the first Java ``minimum``+ found, and a description of every candidate looked at.

    Order: ``$JAVA_HOME/bin/java``, ``java`` on ``PATH``, ``/usr/lib/jvm/*/bin/java``,
    ``/Library/Java/JavaVirtualMachines/*/Contents/Home/bin/java``.
    """
    candidates: list[tuple[str, str]] = []
    home = os.environ.get("JAVA_HOME")
    if home:
        candidates.append((os.path.join(home, "bin", "java"), f"JAVA_HOME={home}"))
    on_path = shutil.which("java")
    if on_path:
        candidates.append((on_path, f"'java' on PATH ({os.path.realpath(on_path)})"))
    for pattern in _JVM_GLOBS:
        candidates.extend((path, path) for path in sorted(glob.glob(pattern)))
    looked_at: list[str] = []
    seen: set[str] = set()
    for java, label in candidates:
        real = os.path.realpath(java)
        if real in seen:
            continue
        seen.add(real)
        if not os.access(java, os.X_OK):
            looked_at.append(f"{label}: no java binary there")
            continue
        major = java_major(java)
        if major is not None and major >= minimum:
            return _home_of(java), looked_at
        looked_at.append(f"{label}: Java {major if major is not None else '?'} (too old or not runnable)")
    if not on_path:
        looked_at.append("no 'java' on PATH")
    return None, looked_at


def ensure_java_home(minimum: int = MIN_JAVA) -> str:
    """Make sure the JVM pyspark is about to launch is Java ``minimum``+; return its ``JAVA_HOME``.

    Sets ``JAVA_HOME`` (with a warning naming the old value) when the runtime pyspark
    would use is missing or too old and another one is installed; raises
    :class:`JavaNotFoundError` when none is.
    """
    before = os.environ.get("JAVA_HOME")
    home, looked_at = find_java_home(minimum)
    if home is None:
        raise JavaNotFoundError(looked_at, minimum=minimum)
    if before and os.path.realpath(before) != os.path.realpath(home):
        warnings.warn(f"JAVA_HOME={before} has no Java {minimum}+ ({looked_at[0].split(': ', 1)[-1]}); "
                      f"the spark executor uses JAVA_HOME={home} instead.", RuntimeWarning, stacklevel=3)
    if before != home:
        os.environ["JAVA_HOME"] = home
    return home
