"""Java discovery for the spark executor (issue 11): fake ``java`` binaries that print a version."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from assay.executors import _java
from assay.executors._java import JavaNotFoundError, ensure_java_home, find_java_home, java_major


def fake_jdk(root: Path, name: str, version: str) -> Path:
    """A JAVA_HOME folder whose bin/java prints ``version`` the way ``java -version`` does (on stderr)."""
    home = root / name
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text(f'#!/bin/sh\necho \'openjdk version "{version}" 2025-04-15\' >&2\n', encoding="utf-8")
    java.chmod(java.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return home


@pytest.mark.parametrize("version, major", [("17.0.15", 17), ("1.8.0_392", 8), ("21", 21), ("11.0.2+9", 11)])
def test_java_major_reads_the_version_line(tmp_path, version, major):
    assert java_major(fake_jdk(tmp_path, "jdk", version) / "bin" / "java") == major


def test_stale_java_home_is_replaced_by_an_installed_java_17(tmp_path, monkeypatch):
    old = fake_jdk(tmp_path, "jdk-11", "11.0.2")
    new = fake_jdk(tmp_path, "jdk-17", "17.0.15")
    monkeypatch.setenv("JAVA_HOME", str(old))
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    monkeypatch.setattr(_java, "_JVM_GLOBS", (str(tmp_path / "jdk-*" / "bin" / "java"),))
    with pytest.warns(RuntimeWarning, match="JAVA_HOME=.*jdk-11 has no Java 17"):
        home = ensure_java_home()
    assert home == str(new) and os.environ["JAVA_HOME"] == str(new)


def test_missing_java_home_folder_is_skipped(tmp_path, monkeypatch):
    new = fake_jdk(tmp_path, "jdk-21", "21.0.1")
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "removed-jdk"))
    monkeypatch.setenv("PATH", str(new / "bin"))
    monkeypatch.setattr(_java, "_JVM_GLOBS", ())
    home, looked_at = find_java_home()
    assert home == str(new)
    assert looked_at == [f"JAVA_HOME={tmp_path / 'removed-jdk'}: no java binary there"]


def test_no_java_is_a_clear_error_listing_what_was_looked_at(tmp_path, monkeypatch):
    old = fake_jdk(tmp_path, "jdk-8", "1.8.0_392")
    monkeypatch.setenv("JAVA_HOME", str(old))
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    monkeypatch.setattr(_java, "_JVM_GLOBS", ())
    with pytest.raises(JavaNotFoundError) as info:
        ensure_java_home()
    message = str(info.value)
    assert "needs a Java 17+ runtime" in message
    assert f"JAVA_HOME={old}: Java 8" in message and "no 'java' on PATH" in message
    assert "openjdk-17-jre-headless" in message
    assert os.environ["JAVA_HOME"] == str(old)  # nothing changed when nothing better exists
