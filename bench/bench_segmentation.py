"""Benchmark the segmentation downstream tasks (issue 6).

    python bench/bench_segmentation.py [--maps 1000] [--size 256] [--repeat 5] [--workers N]

1. The full example run (3 models x 3 seeds x 3 uncertainty types x 3 aggregations x every
   task, synthetic data as in examples/segmentation.yaml): sequential ("serial") vs parallel
   over images ("processes[workers=N]"); medians and the speedup; the result files must be
   identical.
2. Aggregating --maps uncertainty maps of --size x --size read from .npy files: each
   registered aggregation against one numpy pass reading the same files (np.load + one
   sum); goal: within 3x. ValUES' patch aggregation (scipy.signal.convolve with a ones
   kernel, mode "valid") runs beside patch_max as the peer. The contenders take turns in
   each round and every ratio is to the same round's baseline; the median ratio is printed.

Medians of --repeat runs; the machine may be shared, so read the ratios, not the seconds.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np


def median_s(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def bench_run(tmp: Path, repeat: int, workers: int) -> None:
    from assay_segmentation.downstream import load_config, run_experiments
    from assay_segmentation.synthetic import generate

    example = Path(__file__).resolve().parents[1] / "examples" / "segmentation.yaml"
    generate(tmp / "data")
    config = load_config(example) | {"base_path": str(tmp / "data")}

    def run(executor: str, out: str):
        return lambda: run_experiments(config | {"output_path": str(tmp / out)}, executor=executor)

    run("serial", "warm")()  # imports, page cache
    serial = median_s(run("serial", "serial"), repeat)
    parallel = median_s(run(f"processes[workers={workers}]", "parallel"), repeat)
    files = [p.relative_to(tmp / "serial") for p in (tmp / "serial").rglob("*.json") if p.name != "assay-results.json"]
    same = all(filecmp.cmp(tmp / "serial" / f, tmp / "parallel" / f, shallow=False) for f in files)
    print(f"full example run ({len(files)} result files, identical: {same})")
    print(f"  {'serial':<44} {serial:8.2f} s")
    print(f"  {f'processes[workers={workers}]':<44} {parallel:8.2f} s   speedup {serial / parallel:.2f}x")


def bench_aggregation(tmp: Path, n_maps: int, size: int, repeat: int) -> None:
    import assay

    folder = tmp / "maps"
    folder.mkdir()
    rng = np.random.default_rng(0)
    for i in range(n_maps):
        np.save(folder / f"{i:05d}.npy", rng.random((size, size), dtype=np.float32))
    paths = sorted(folder.glob("*.npy"))

    contenders = {"numpy: np.load + sum (baseline)": lambda: [float(np.load(p).sum()) for p in paths]}
    for spec in ("image_mean", "image_sum", "patch_max[patch_size=10]", "patch_max[patch_size=10, mean=true]",
                 "threshold_mean[threshold=0.9]"):
        agg = assay.load_aggregation(spec)
        contenders[f"assay {spec}"] = lambda agg=agg: [agg(np.load(p)) for p in paths]
    try:
        from scipy.signal import convolve
    except ImportError:
        print("  (scipy not installed: ValUES' patch aggregation skipped)")
    else:
        kernel = np.ones((10, 10))
        contenders["ValUES patch: scipy.signal.convolve valid"] = (
            lambda: [float(convolve(np.load(p), kernel, mode="valid").max()) for p in paths])

    # Rounds interleave the contenders, and each ratio is to the baseline of its own round,
    # so a machine that speeds up or slows down between rounds moves both sides alike.
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for name, fn in contenders.items():  # warm-up: imports, page cache, scratch buffers
        fn() if "ValUES" not in name else None
    for _ in range(repeat):
        for name, fn in contenders.items():
            times[name].append(median_s(fn, 1))
    base = times["numpy: np.load + sum (baseline)"]
    print(f"aggregating {n_maps} maps of {size}x{size} (float32 .npy); median of {repeat} interleaved rounds")
    for name, ts in times.items():
        ratio = statistics.median(t / b for t, b in zip(ts, base))
        verdict = "" if name.startswith(("numpy", "ValUES")) else ("ok" if ratio <= 3 else "ABOVE goal 3x")
        print(f"  {name:<44} {statistics.median(ts):8.3f} s   {ratio:5.2f}x  {verdict}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--maps", type=int, default=1000)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workers", type=int, default=max(1, len(os.sched_getaffinity(0))))
    ap.add_argument("--skip-run", action="store_true", help="only the aggregation benchmark")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_run:
            bench_run(Path(tmp), args.repeat, args.workers)
        bench_aggregation(Path(tmp), args.maps, args.size, args.repeat)


if __name__ == "__main__":
    main()
