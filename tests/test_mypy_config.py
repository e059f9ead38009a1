"""``make check`` runs ``mypy --strict`` on the framework packages (issue 23), spelled out flag by flag.

mypy's per-module overrides cannot set ``strict``, so pyproject.toml enables its flags one by
one for the framework's modules. This test reads the list of flags ``--strict`` enables from
the installed mypy's own ``--help`` and checks that each is on for those modules (in the
override, or globally for the flags that are global), so a flag a new mypy adds to
``--strict``, or one dropped from the list by mistake, fails here.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
with (ROOT / "pyproject.toml").open("rb") as f:
    MYPY = tomllib.load(f)["tool"]["mypy"]

#: The framework packages `mypy --strict` covers (issue 23, item 6).
STRICT_MODULES = {"assay.core.*", "assay.executors.*", "assay.plugins.*", "assay.metrics.*"}


def _strict_flags() -> list[str]:
    """The options ``--strict`` enables, as config names with their value: ``["disallow_any_generics=true", ...]``."""
    text = subprocess.run([sys.executable, "-m", "mypy", "--help"], capture_output=True, text=True,
                          check=True).stdout
    # from --strict's description to the next option (options start two spaces in)
    match = re.search(r"--strict\s+Strict mode; enables the following flags:(.*?)\n  --", text, re.S)
    assert match, "mypy --help no longer lists the flags of --strict"
    flags = re.findall(r"--[a-z-]+", re.sub(r"-\n\s*", "-", match.group(1)))
    out = []
    for flag in flags:
        name = flag[2:].replace("-", "_")
        out.append(f"{name[3:]}=false" if name.startswith("no_") else f"{name}=true")
    return out


def _strict_override() -> dict:
    found = [o for o in MYPY["overrides"] if set(o["module"]) >= STRICT_MODULES]
    assert len(found) == 1, f"expected one override for {sorted(STRICT_MODULES)}, found {len(found)}"
    return found[0]


def test_the_flags_of_strict_are_found():
    flags = _strict_flags()
    assert "disallow_untyped_defs=true" in flags and "implicit_reexport=false" in flags
    assert len(flags) >= 12


@pytest.mark.parametrize("flag", _strict_flags())
def test_every_flag_of_strict_is_on_for_the_framework_packages(flag):
    name, value = flag.split("=")
    expected = value == "true"
    override = _strict_override()
    got = override.get(name, MYPY.get(name))
    assert got is expected, f"{name} = {got!r} for {sorted(override['module'])}; --strict sets {expected}"


def test_mypy_checks_the_framework_packages():
    assert "src/assay" in MYPY["files"]
