"""Peak memory and time of ``assay parse-eval`` on large files: whole-file reading vs streaming.

    python bench/bench_parse_eval_memory.py [--mb 200] [--ud-dir /work/shared/data/ud] [--out /tmp/pe-bench]
                                            [--workers 2] [--modes whole,stream]

Data: a gold and a system CoNLL-U file of about ``--mb`` MB each, written to ``--out`` (never
committed) by repeating the sentences of a real gold / system pair (``en_ewt-gold`` and
``en_ewt-sys-mid`` from ``--ud-dir``, gzipped; without them, the treebank demo's generator).

Contenders, each a fresh ``python`` process timed by ``/usr/bin/time -v`` (Maximum resident
set size -- with workers, that of the largest single process, as ``wait4`` reports it --, wall
time, and CPU time of the process and its workers):

``whole``    the whole-file path that ``parse-eval`` used before streaming and the demos still
             use: ``read_pairs`` (both files parsed into lists), then ``evaluate_pairs`` (one run
             over the pool per evaluator). Since ``read`` no longer holds a file's text, this
             peaks lower than the pre-streaming command did (run that one from an older
             checkout to compare);
``stream``   ``python -m assay parse-eval GOLD SYSTEM`` (lazy pool, one pass), sequential and with
             ``--workers N``.

The numbers each contender prints must agree (checked).
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import subprocess
import sys
from pathlib import Path

WHOLE = (
    "import sys; from pathlib import Path; from assay_parsing.parse_eval import read_pairs, evaluate_pairs, "
    "format_table, make_executor; w = int(sys.argv[3]); ex = make_executor(workers=w) if w else None; "
    "print(format_table(evaluate_pairs(read_pairs(Path(sys.argv[1]), Path(sys.argv[2])), executor=ex))); "
    "ex and ex.close()"
)


def make_files(out: Path, mb: float, ud_dir: Path) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    gold_path, system_path = out / "gold.conllu", out / "system.conllu"
    target = int(mb * 1e6)
    if gold_path.exists() and abs(gold_path.stat().st_size - target) < target * 0.02:
        return gold_path, system_path
    src_gold, src_system = ud_dir / "en_ewt-gold.conllu.gz", ud_dir / "en_ewt-sys-mid.conllu.gz"
    if src_gold.exists() and src_system.exists():
        with gzip.open(src_gold, "rt", encoding="utf-8") as g_file:
            gold_text = g_file.read()
        with gzip.open(src_system, "rt", encoding="utf-8") as s_file:
            system_text = s_file.read()
    else:
        from assay_parsing.demo_treebank import generate

        g, s, _ = generate(out / "seed", sentences=3000, seed=1)
        gold_text, system_text = g.read_text(encoding="utf-8"), s.read_text(encoding="utf-8")
    gold_text, system_text = gold_text.rstrip("\n") + "\n\n", system_text.rstrip("\n") + "\n\n"
    repeats = max(1, round(target / len(gold_text.encode("utf-8"))))
    for path, text in ((gold_path, gold_text), (system_path, system_text)):
        with open(path, "w", encoding="utf-8") as f:
            for _ in range(repeats):
                f.write(text)
    return gold_path, system_path


def measure(argv: list[str]) -> tuple[float, float, float, str]:
    """``(peak RSS in MiB, wall seconds, CPU seconds, stdout)`` of one command under ``/usr/bin/time -v``.

    CPU is user + system time of the process and its workers: on a shared machine it is a
    steadier measure of the work than the wall time.
    """
    proc = subprocess.run(["/usr/bin/time", "-v", *argv], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{proc.stderr[-3000:]}")
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr).group(1)) / 1024
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", proc.stderr).group(1)
    seconds = 0.0
    for part in wall.split(":"):
        seconds = seconds * 60 + float(part)
    cpu = sum(float(re.search(rf"{kind} time \(seconds\): (\S+)", proc.stderr).group(1)) for kind in ("User", "System"))
    return rss, seconds, cpu, proc.stdout


def table_numbers(out: str) -> list[tuple[int, int]]:
    return [(int(m.group(1)), int(m.group(2)))
            for m in re.finditer(r"^(?:UAS|LAS|CLAS \(F1\)|UPOS accuracy)\s+\S+\s+(\d+)\s+(\d+)$", out, re.M)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=float, default=200)
    ap.add_argument("--ud-dir", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data" / "ud",
                    help="folder of UD treebanks (default: ../shared/data/ud beside the repository)")
    ap.add_argument("--out", type=Path, default=Path("/tmp/pe-bench"))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--modes", default="whole,stream")
    args = ap.parse_args()
    gold, system = make_files(args.out, args.mb, args.ud_dir)
    print(f"gold {gold} ({gold.stat().st_size / 1e6:.0f} MB), system {system} ({system.stat().st_size / 1e6:.0f} MB)")
    runs = []
    for mode in args.modes.split(","):
        for workers in (0, args.workers):
            if mode == "whole":
                argv = [sys.executable, "-c", WHOLE, str(gold), str(system), str(workers)]
            else:
                argv = [sys.executable, "-m", "assay", "parse-eval", str(gold), str(system)]
                argv += ["--workers", str(workers)] if workers else []
            rss, seconds, cpu, out = measure(argv)
            label = f"{mode}, {'sequential' if not workers else f'{workers} workers'}"
            runs.append((label, rss, seconds, table_numbers(out)))
            print(f"{label:<24} peak RSS {rss:8.0f} MiB   wall {seconds:7.1f} s   CPU {cpu:7.1f} s   "
                  f"{table_numbers(out)}", flush=True)
    numbers = {tuple(r[3]) for r in runs}
    if len(numbers) != 1:
        raise SystemExit(f"the contenders disagree: {numbers}")
    print("all contenders print the same counts")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
