"""Import cost: ``import assay`` against ``import numpy``, and the first name lookup, ``load_metric("accuracy")``.

    python bench/bench_import.py [--runs 20] [--json PATH]

Each command runs ``--runs`` times in a fresh interpreter (the Python running this script, so
the same virtual environment and the same installed plugins), interleaved; the medians of the
wall clock and of the CPU seconds (user + system of the child, steadier on a shared machine)
are printed, along with a bare ``python -c "pass"`` for scale and the plugins (and numpy) each
command imported. Targets: ``import assay`` costs at most 1.3x ``import numpy`` with all
first-party plugins installed (issue 2); ``import assay; assay.load_metric("accuracy")`` imports
one plugin and takes at most 0.15 s (issue 23). The row "every plugin loaded first" is that
lookup as it was before plugins were loaded on demand (every installed plugin imported by the
first lookup), for comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

LOOKUP = "import assay; assay.load_metric('accuracy')"
COMMANDS = {
    "python": "pass",
    "import numpy": "import numpy",
    "import assay": "import assay",
    "from assay import EvaluatorBase, DataPool": "from assay import EvaluatorBase, DataPool",
    "load_metric('accuracy')": LOOKUP,
    "load_metric('accuracy'), every plugin loaded first": (
        "import assay; from assay.plugins import get_plugin_system; get_plugin_system().plugins; "
        "assay.load_metric('accuracy')"),
}

CHECK = (
    "import sys\n{code}\n"
    "print(sorted({{m.split('.')[0] for m in sys.modules if m.startswith('assay_')}} | "
    "({{'numpy'}} if 'numpy' in sys.modules else set())), len(sys.modules))"
)


#: The children may write and read bytecode caches (.pyc), as an installed package does: with
#: PYTHONDONTWRITEBYTECODE set (this VM's shells set it), an editable install compiles every assay
#: module from source on each start, which doubled the first lookup's time in earlier runs.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def time_command(code: str) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one fresh ``python -c code``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=CHILD_ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)

    print(f"python {sys.version.split()[0]} at {sys.executable}; {args.runs} runs each")
    imported = {}
    for name, code in COMMANDS.items():
        if name == "python":
            continue
        out = subprocess.run([sys.executable, "-c", CHECK.format(code=code)], check=True, capture_output=True,
                             text=True, env=CHILD_ENV).stdout.strip()
        imported[name] = out
        print(f"  {name}: plugins (and numpy) imported, modules in sys.modules: {out}")

    for code in COMMANDS.values():  # warm the file-system cache and .pyc files
        time_command(code)
    # Interleave the commands so that background load affects them alike.
    wall: dict[str, list[float]] = {name: [] for name in COMMANDS}
    cpu: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.runs):
        for name, code in COMMANDS.items():
            w, c = time_command(code)
            wall[name].append(w)
            cpu[name].append(c)
    medians = {name: statistics.median(times) for name, times in wall.items()}
    cpu_medians = {name: statistics.median(times) for name, times in cpu.items()}
    print(f"  {'command':52s} {'wall':>9s} {'cpu':>9s}  (medians)")
    for name in COMMANDS:
        print(f"  {name:52s} {medians[name] * 1e3:7.1f} ms {cpu_medians[name] * 1e3:7.1f} ms")
    ratio = medians["import assay"] / medians["import numpy"]
    print(f"  import assay / import numpy: {ratio:.2f}x (target <= 1.3x)")
    name = "load_metric('accuracy')"
    lookup, before = medians[name], medians[f"{name}, every plugin loaded first"]
    print(f"  {name}: {lookup:.3f} s wall, {cpu_medians[name]:.3f} s CPU (target <= 0.15 s); every plugin loaded "
          f"first: {before:.3f} s ({before / lookup:.2f}x the time)")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"runs": args.runs, "median_s": medians, "median_cpu_s": cpu_medians,
                                         "ratio": ratio, "imported": imported}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
