"""Let the tests run straight from a checkout, before `pip install -e .` (harmless afterwards)."""

import sys
from pathlib import Path

src = str(Path(__file__).parent / "src")
if src not in sys.path:
    sys.path.insert(0, src)
