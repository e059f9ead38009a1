"""The kit's fixtures (also provided to every project through the pytest11 entry point) and
the sample metrics' folder on sys.path."""

from __future__ import annotations

import sys
from pathlib import Path

for folder in (Path(__file__).parent, Path(__file__).parent.parent / "metrics"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from assay.testing.pytest_plugin import assay_plugin_system, register_assay_plugin  # noqa: E402,F401
