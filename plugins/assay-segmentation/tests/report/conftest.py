"""Put this folder on sys.path so that the tests import ``assay_values_tree`` (the ValUES tree writer)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = str(Path(__file__).parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
