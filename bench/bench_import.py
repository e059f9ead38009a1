"""Import cost: ``python -c "import assay"`` against ``python -c "import numpy"``.

    python bench/bench_import.py [--runs 20] [--json PATH]

Each command runs ``--runs`` times in a fresh interpreter (the Python running this
script, so the same virtual environment and the same installed plugins); the medians
and their ratio are printed, along with a bare ``python -c "pass"`` for scale and a
check that importing assay imported no plugin and not numpy. Target (issue 2):
``import assay`` costs at most 1.3x ``import numpy`` with all first-party plugins
installed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMANDS = {
    "python": "pass",
    "import numpy": "import numpy",
    "import assay": "import assay",
    "from assay import EvaluatorBase, DataPool": "from assay import EvaluatorBase, DataPool",
}

CHECK = (
    "import sys, assay; "
    "print(sorted({m.split('.')[0] for m in sys.modules if m.startswith('assay_')} | "
    "({'numpy'} if 'numpy' in sys.modules else set())))"
)


def time_command(code: str, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        times.append(time.perf_counter() - start)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)

    loaded = subprocess.run([sys.executable, "-c", CHECK], check=True, capture_output=True, text=True).stdout.strip()
    print(f"python {sys.version.split()[0]} at {sys.executable}; {args.runs} runs each")
    print(f"plugins (and numpy) imported by 'import assay': {loaded}")

    for code in COMMANDS.values():  # warm the file-system cache and .pyc files
        time_command(code, 2)
    # Interleave the commands so that background load affects them alike.
    samples: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.runs):
        for name, code in COMMANDS.items():
            samples[name] += time_command(code, 1)
    medians = {name: statistics.median(times) for name, times in samples.items()}
    for name, median in medians.items():
        print(f"  {name:45s} {median * 1e3:7.1f} ms (median)")
    ratio = medians["import assay"] / medians["import numpy"]
    print(f"  import assay / import numpy: {ratio:.2f}x (target <= 1.3x)")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"runs": args.runs, "median_s": medians, "ratio": ratio,
                                         "imported_by_assay": loaded}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
