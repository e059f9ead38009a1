"""Run every benchmark in this folder, one after the other, and keep their output.

    python bench/run_all.py [--only NAME ...] [--quick]

Each ``bench_*.py`` runs in its own interpreter (the one running this script), so one
benchmark's memory and threads do not disturb the next. The printed tables go to the
terminal and to ``bench/results/NAME.txt``; scripts that take ``--json`` also write
``bench/results/NAME.json``. The machine should be otherwise idle: the figures are
medians and ratios, and ratios are what ``bench/README.md`` records.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: options that make a benchmark quick enough for a smoke run (``--quick``)
QUICK = {
    "bench_parallel": ["--sentences", "20000", "--repeats", "1"],
    "bench_bootstrap": ["--quick"],
    "bench_bleu_ci": ["--segments", "1000", "--resamples", "200", "--baseline-resamples", "5"],
    "bench_roc_auc": ["--n", "100000", "--repeats", "3"],
    "bench_segmentation": ["--maps", "100", "--repeat", "1"],
    "bench_import": ["--runs", "5"],
    "bench_parse_eval_memory": ["--mb", "20"],
    "bench_evaluate": ["--quick"],
    "bench_parse_eval": ["--quick"],
    "bench_ue_grid": ["--quick"],
    "bench_density": ["--quick"],
    "bench_report": ["--quick"],
    "bench_torch_gpu": ["--n", "1000000", "--repeats", "2"],
    "bench_polygraph_info": ["--quick"],
    "bench_polygraph_grid": ["--quick"],
    "bench_torch_peers": ["--n", "100000", "--repeat", "3"],
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", metavar="NAME", help="run only bench_NAME.py (repeatable)")
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run, not figures")
    args = parser.parse_args()
    scripts = sorted(HERE.glob("bench_*.py"))
    if args.only:
        wanted = {n if n.startswith("bench_") else f"bench_{n}" for n in args.only}
        scripts = [s for s in scripts if s.stem in wanted]
        missing = wanted - {s.stem for s in scripts}
        if missing:
            parser.error(f"no such benchmark: {', '.join(sorted(missing))}")
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    failed = []
    for script in scripts:
        cmd = [sys.executable, str(script)]
        if "--json" in script.read_text():
            cmd += ["--json", str(results / f"{script.stem}.json")]
        if args.quick:
            cmd += QUICK.get(script.stem, [])
        print(f"\n##### {script.stem}: {' '.join(cmd[1:])}", flush=True)
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        (results / f"{script.stem}.txt").write_text(proc.stdout + proc.stderr)
        print(proc.stdout, end="")
        if proc.returncode:
            print(proc.stderr[-3000:], file=sys.stderr)
            failed.append(script.stem)
        print(f"##### {script.stem}: exit {proc.returncode} after {time.perf_counter() - start:.0f} s", flush=True)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
