"""``assay parse-eval`` against the official CoNLL 2018 evaluation script on the English EWT test file.

    python bench/bench_parse_eval.py [--repeats 5] [--quick] [--json PATH]

Data: ``shared/data/ud/en_ewt-gold.conllu.gz`` (2,077 sentences) against its ``sys-mid`` system
output, decompressed once to a temporary folder. Contenders, each a fresh command as a user runs it
(interpreter start-up included on both sides), medians of ``--repeats`` interleaved rounds:

``official``            ``udeval -v GOLD SYSTEM`` (``udtools`` on PyPI, the maintained script's console entry)
``assay``               ``assay parse-eval --conll18 GOLD SYSTEM``: every score the script reports
``assay --workers 2``   the same with ``--workers 2`` (workers align the parts tokenized otherwise: none here)
``assay (no line shared)``  ``--conll18`` against a copy of the system file whose every word line differs
                        from the gold line (a mark in MISC, which no score reads): no line is shared
                        with the gold file, so every line is split (the worst case of the reader)
``assay (UAS/LAS)``     ``assay parse-eval GOLD SYSTEM``: the sentence-level evaluator (UAS, LAS, CLAS, UPOS)

Start-up: each command also runs on a one-sentence pair (the first sentence of both files); its
median is the command's start-up (interpreter, imports, plugin loading, output), printed with its
share of the full run. CPU seconds (user + system of the child) are printed beside the wall
clock: on a shared machine they move less with the other load.

Bytecode: both sides run with compiled bytecode (``.pyc``), as an installed package has it:
``PYTHONDONTWRITEBYTECODE`` is removed from the commands' environment, so the warm-up run writes
the ``.pyc`` files of assay's editable sources (the official script's were written by pip).

Every run's LAS F1 is checked against the official script's. Target (issue 17): at least 5x
faster than the official script, identical numbers.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: ``shared/data/ud`` beside the checkout (``../shared`` of the repository, or of a worktree's parent folders)
DATA = next((p / "shared" / "data" / "ud" for p in Path(__file__).resolve().parents
             if (p / "shared" / "data" / "ud").is_dir()),
            Path(__file__).resolve().parents[2] / "shared" / "data" / "ud")


def las_of(text: str) -> float:
    """The LAS F1 of the official report (``LAS | p | r | f1 | ...``) or of assay's output."""
    m = re.search(r"^LAS\s*\|\s*[\d.]+\s*\|\s*[\d.]+\s*\|\s*([\d.]+)", text, re.M)
    if m:
        return float(m.group(1))
    m = re.search(r"Labelled accuracy: ([\d.]+)", text)  # the sentence-level evaluator's log line
    if not m:
        raise ValueError(f"no LAS in the output:\n{text[:500]}")
    return round(100 * float(m.group(1)), 2)


def report_rows(text: str) -> list[str]:
    """The score rows of a report in the script's layout (``Tokens | ...`` to ``BLEX | ...``)."""
    return [line.rstrip() for line in text.splitlines() if re.match(r"^[A-Za-z]+ *\|", line)]


def first_sentence(src: Path, dst: Path) -> None:
    text = src.read_text(encoding="utf-8")
    dst.write_text(text.split("\n\n")[0] + "\n\n", encoding="utf-8")


def mark_every_line(src: Path, dst: Path) -> None:
    """A copy whose every word line carries a mark in MISC (no score reads MISC)."""
    out = []
    for line in src.read_text(encoding="utf-8").split("\n"):
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            cols[9] = "Bench=1" if cols[9] == "_" else cols[9] + "|Bench=1"
            line = "\t".join(cols)
        out.append(line)
    dst.write_text("\n".join(out), encoding="utf-8")


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one run of ``cmd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, capture_output=True, check=True, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="2 repeats: a smoke run")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    repeats = 2 if args.quick else args.repeats
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    tmp = Path(tempfile.mkdtemp(prefix="bench-parse-eval-"))
    try:
        gold, system = tmp / "gold.conllu", tmp / "system.conllu"
        for src, dst in ((DATA / "en_ewt-gold.conllu.gz", gold), (DATA / "en_ewt-sys-mid.conllu.gz", system)):
            with gzip.open(src, "rb") as f, open(dst, "wb") as out:
                shutil.copyfileobj(f, out)
        marked = tmp / "system-marked.conllu"
        mark_every_line(system, marked)
        small_gold, small_system = tmp / "gold-1.conllu", tmp / "system-1.conllu"
        first_sentence(gold, small_gold)
        first_sentence(system, small_system)
        py = sys.executable
        official = [py, "-c", "import sys; from udtools.cli import main_eval; sys.argv[0] = 'udeval'; "
                              "sys.exit(main_eval())", "-v"]
        assay = [py, "-m", "assay", "parse-eval"]
        commands = {
            "official": (official, system),
            "assay": ([*assay, "--conll18"], system),
            "assay --workers 2": ([*assay, "--conll18", "--workers", "2"], system),
            "assay (no line shared)": ([*assay, "--conll18"], marked),
            "assay (UAS/LAS)": (assay, system),
        }
        outputs = {name: subprocess.run([*cmd, str(gold), str(sys_file)], capture_output=True, text=True,
                                        check=True, env=env).stdout
                   for name, (cmd, sys_file) in commands.items()}  # warm-up (writes the .pyc files), and values
        for cmd, _ in commands.values():
            subprocess.run([*cmd, str(small_gold), str(small_system)], capture_output=True, check=True, env=env)
        wall: dict[str, list[float]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        start_wall: dict[str, list[float]] = {name: [] for name in commands}
        start_cpu: dict[str, list[float]] = {name: [] for name in commands}
        bare_wall: list[float] = []
        for _ in range(repeats):
            bare_wall.append(run([py, "-c", "pass"], env)[0])
            for name, (cmd, sys_file) in commands.items():
                w, c = run([*cmd, str(gold), str(sys_file)], env)
                wall[name].append(w)
                cpu[name].append(c)
                w, c = run([*cmd, str(small_gold), str(small_system)], env)
                start_wall[name].append(w)
                start_cpu[name].append(c)
        med = {name: statistics.median(v) for name, v in wall.items()}
        med_cpu = {name: statistics.median(v) for name, v in cpu.items()}
        med_start = {name: statistics.median(v) for name, v in start_wall.items()}
        official_las = las_of(outputs["official"])
        official_rows = report_rows(outputs["official"])
        print(f"English EWT test, 2,077 sentences; medians of {repeats} interleaved rounds; official LAS F1 "
              f"{official_las}; python -c pass {statistics.median(bare_wall):.3f} s")
        print(f"  {'command':24s} {'wall':>8s} {'speed':>7s} {'cpu':>8s} {'speed':>7s} {'start-up':>9s} {'share':>6s}")
        for name in commands:
            las = las_of(outputs[name])
            if name == "official":
                same = "the reference"
            elif name == "assay (UAS/LAS)":
                same = "same LAS" if abs(las - official_las) < 0.005 else f"LAS {las} DIFFERS"
            else:
                rows = report_rows(outputs[name])
                same = ("every row equal (ELAS, EULAS not computed)"
                        if rows == [r for r in official_rows if not r.startswith(("ELAS", "EULAS"))] else "ROWS DIFFER")
            print(f"  {name:24s} {med[name]:7.3f}s {med['official'] / med[name]:6.2f}x {med_cpu[name]:7.3f}s "
                  f"{med_cpu['official'] / med_cpu[name]:6.2f}x {med_start[name]:8.3f}s "
                  f"{100 * med_start[name] / med[name]:5.0f}%   {same}")
        if args.json:
            args.json.write_text(json.dumps({"seconds": med, "cpu_seconds": med_cpu, "startup_seconds": med_start,
                                             "official_las": official_las}, indent=1))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
