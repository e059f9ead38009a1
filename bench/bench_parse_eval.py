"""``assay parse-eval`` against the official CoNLL 2018 evaluation script on the English EWT test file.

    python bench/bench_parse_eval.py [--repeats 5] [--quick] [--json PATH]

Data: ``shared/data/ud/en_ewt-gold.conllu.gz`` (2,077 sentences) against its ``sys-mid`` system
output, decompressed once to a temporary folder. Contenders, each a fresh command as a user runs it
(interpreter start-up included on both sides), medians of ``--repeats`` interleaved rounds:

``official``            ``udeval -v GOLD SYSTEM`` (``udtools`` on PyPI, the maintained script's console entry)
``assay``               ``assay parse-eval --conll18 GOLD SYSTEM``: every score the script reports
``assay --workers 2``   the same, sharded by aligned cuts over 2 worker processes
``assay (UAS/LAS)``     ``assay parse-eval GOLD SYSTEM``: the sentence-level evaluator (UAS, LAS, CLAS, UPOS)

Every run's LAS F1 is checked against the official script's. Target (issue 17): at least 5x
faster than the official script, identical numbers.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "ud"


def las_of(text: str) -> float:
    """The LAS F1 of the official report (``LAS | p | r | f1 | ...``) or of assay's output."""
    m = re.search(r"^LAS\s*\|\s*[\d.]+\s*\|\s*[\d.]+\s*\|\s*([\d.]+)", text, re.M)
    if m:
        return float(m.group(1))
    m = re.search(r"Labelled accuracy: ([\d.]+)", text)  # the sentence-level evaluator's log line
    if not m:
        raise ValueError(f"no LAS in the output:\n{text[:500]}")
    return round(100 * float(m.group(1)), 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="2 repeats: a smoke run")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    repeats = 2 if args.quick else args.repeats

    tmp = Path(tempfile.mkdtemp(prefix="bench-parse-eval-"))
    try:
        gold, system = tmp / "gold.conllu", tmp / "system.conllu"
        for src, dst in ((DATA / "en_ewt-gold.conllu.gz", gold), (DATA / "en_ewt-sys-mid.conllu.gz", system)):
            with gzip.open(src, "rb") as f, open(dst, "wb") as out:
                shutil.copyfileobj(f, out)
        py = sys.executable
        commands = {
            "official": [py, "-c", "import sys; from udtools.cli import main_eval; sys.argv[0] = 'udeval'; "
                                   "sys.exit(main_eval())", "-v", str(gold), str(system)],
            "assay": [py, "-m", "assay", "parse-eval", "--conll18", str(gold), str(system)],
            "assay --workers 2": [py, "-m", "assay", "parse-eval", "--conll18", "--workers", "2", str(gold),
                                  str(system)],
            "assay (UAS/LAS)": [py, "-m", "assay", "parse-eval", str(gold), str(system)],
        }
        outputs = {name: subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
                   for name, cmd in commands.items()}  # warm-up, and the values
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(repeats):
            for name, cmd in commands.items():
                t = time.perf_counter()
                subprocess.run(cmd, capture_output=True, check=True)
                times[name].append(time.perf_counter() - t)
        med = {name: statistics.median(v) for name, v in times.items()}
        official_las = las_of(outputs["official"])
        print(f"English EWT test, 2,077 sentences; medians of {repeats}; official LAS F1 {official_las}")
        for name in commands:
            las = las_of(outputs[name])
            same = "same LAS" if abs(las - official_las) < 0.005 else f"LAS {las} DIFFERS"
            speed = med["official"] / med[name]
            print(f"  {name:20s} {med[name]:7.3f} s   {speed:5.2f}x the official script's speed   {same}")
        if args.json:
            args.json.write_text(json.dumps({"seconds": med, "official_las": official_las}, indent=1))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
