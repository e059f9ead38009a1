"""Speed and memory where torch users compare (issue 24, item 4): assay beside torch-uncertainty and torchmetrics.

    python bench/bench_torch_peers.py [--n 1000000] [--repeat 9] [--only aurc,ece_memory]

aurc: AURC + E-AURC in torch-uncertainty's convention on N examples of binary risk, against
torch-uncertainty 0.13.0's own pair. torch-uncertainty has no E-AURC class, so its pair is what a
user of it writes: ``AURC`` on the data and ``AURC`` on the oracle ranking (scores ``1 - error``),
E-AURC being their difference. Each side is timed right after the other (interleaved runs,
medians) and the ratio of the medians is printed, with one ``np.argsort`` as a common yardstick.
Both sides get the same float32 probabilities ``p = 1 - u / 2`` and labels; assay's inputs are
what its UE metric reads (``u = -max(p, 1 - p)``, quality = correct).

ece_memory: top-label ECE (15 bins) on (N, 10) float64 probabilities, assay ``ECE`` against
torchmetrics' ``MulticlassCalibrationError``: the peak resident memory (``VmHWM``, reset with
``/proc/self/clear_refs``) above the resident memory just before, each contender in a fresh
process holding the same input, measured three ways:

- imports + first call: the library's modules and one-time loads counted (torch and torchmetrics
  for torchmetrics; numba and the cached kernels for assay's compiled path);
- first call: the modules imported before, the first call's one-time loads counted (assay
  loads numba here, for inputs of at least ``assay.compiled.LOAD_MIN_VALUES`` values);
- warm call: a second call on the same data, the per-call temporaries alone.

assay's compiled path (numba, the ``fast`` extra) and its numpy path are both measured.
Linux only (``/proc``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np


def _runs(fns: dict, repeat: int) -> dict[str, float]:
    """Median seconds of each function, the functions run in turn in every round (same machine load)."""
    for fn in fns.values():
        fn()  # warm-up
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return {name: statistics.median(ts) for name, ts in times.items()}


def tu_module(relative: str):
    """One torch-uncertainty module loaded from its file (its package __init__ imports Lightning)."""
    import importlib.util

    spec = importlib.util.find_spec("torch_uncertainty")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("torch_uncertainty is not installed (make setup installs it with --no-deps)")
    path = os.path.join(next(iter(spec.submodule_search_locations)), relative)
    mod_spec = importlib.util.spec_from_file_location("tu_" + os.path.basename(relative)[:-3], path)
    module = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(module)
    return module


def bench_aurc(n: int, repeat: int) -> None:
    import torch

    from assay_uncertainty.risk_coverage import aurc, aurc_and_e_aurc

    torch.set_num_threads(2)
    tu_rc = tu_module("metrics/classification/risk_coverage.py")
    rng = np.random.default_rng(0)
    u = rng.random(n)
    q = (rng.random(n) < 1 / (1 + np.exp(4 * (u - 0.5)))).astype(np.float64)
    p_t = torch.from_numpy(1 - u / 2).float()  # binary probabilities: score max(p, 1 - p), error argmax != target
    target_t = torch.from_numpy(q).long()
    conf = torch.maximum(p_t, 1 - p_t).numpy().astype(np.float64)
    correct = ((p_t > 0.5).long() == target_t).numpy().astype(np.float64)  # torch's argmax: ties to class 0
    unc = -conf

    def tu_aurc(probs, targets):
        m = tu_rc.AURC()
        m.update(probs, targets)
        return float(m.compute())

    # the oracle ranking: a right example (1, 0) at score 1, a wrong one (0.4, 0.6) at score 0.6 (argmax 1 != 0)
    c_t = torch.from_numpy(correct).float()
    oracle = torch.stack([c_t + 0.4 * (1 - c_t), 0.6 * (1 - c_t)], dim=-1)
    zeros = torch.zeros(n, dtype=torch.long)

    def tu_pair():
        a = tu_aurc(p_t, target_t)
        return a, a - tu_aurc(oracle, zeros)

    fns = {
        "np.argsort(u) (yardstick)": lambda: np.argsort(unc),
        "assay aurc_and_e_aurc(convention='torch-uncertainty')": lambda: aurc_and_e_aurc(
            unc, correct, convention="torch-uncertainty"),
        "torch-uncertainty AURC + AURC of the oracle (its E-AURC)": tu_pair,
        "assay aurc(convention='torch-uncertainty')": lambda: aurc(unc, correct, convention="torch-uncertainty"),
        "torch-uncertainty AURC": lambda: tu_aurc(p_t, target_t),
    }
    med = _runs(fns, repeat)
    base = med["np.argsort(u) (yardstick)"]
    print(f"AURC + E-AURC, torch-uncertainty convention, N={n:,}, binary risk; medians of {repeat} interleaved rounds"
          f" (torch {torch.__version__}, {torch.get_num_threads()} threads)")
    for name, s in med.items():
        print(f"  {name:<60} {s * 1e3:9.1f} ms  {s / base:5.2f}x argsort")
    pair = med["assay aurc_and_e_aurc(convention='torch-uncertainty')"] / med[
        "torch-uncertainty AURC + AURC of the oracle (its E-AURC)"]
    alone = med["assay aurc(convention='torch-uncertainty')"] / med["torch-uncertainty AURC"]
    print(f"  ratio assay / torch-uncertainty: pair {pair:.2f}x, AURC alone {alone:.2f}x")
    ours = aurc_and_e_aurc(unc, correct, convention="torch-uncertainty")
    theirs = tu_pair()
    print(f"  (values: assay AURC {ours[0]:.7f} E-AURC {ours[1]:.7f}; torch-uncertainty {theirs[0]:.7f} "
          f"{theirs[1]:.7f}, float32 cumulative sums)")


_PROBE = r"""
import json, sys
import numpy as np
who, n, phase = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(0)
p = np.exp(rng.standard_normal((n, 10)))
p /= p.sum(axis=1, keepdims=True)
y = rng.integers(0, 10, n)

def rss():
    d = {l.split(":")[0]: int(l.split()[1]) for l in open("/proc/self/status") if l.startswith(("VmHWM", "VmRSS"))}
    return d["VmHWM"] / 1024, d["VmRSS"] / 1024

def mark():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the peak (VmHWM) to the current resident size
    return rss()[1]

def load():
    if who.startswith("assay"):
        from assay_uncertainty.calibration import ECE
        if who == "assay-numpy":
            from assay import compiled
            compiled.kernels = lambda: None
        return lambda: ECE(n_bins=15).update(p, y).compute()
    import torch
    torch.set_num_threads(2)
    from torchmetrics.classification import MulticlassCalibrationError
    pt, yt = torch.from_numpy(p), torch.from_numpy(y)
    def tm():
        m = MulticlassCalibrationError(num_classes=10, n_bins=15, norm="l1")
        m.update(pt, yt)
        return float(m.compute())
    return tm

if phase == "imports":
    start = mark()
    value = load()()
else:
    call = load()
    if phase == "warm":
        call()
    start = mark()
    value = call()
print(json.dumps({"peak_mib": rss()[0] - start, "value": value}))
"""


def bench_ece_memory(n: int) -> None:
    print(f"\nTop-label ECE, 15 bins, ({n:,}, 10) float64 (input {n * 10 * 8 / 2**20:.0f} MiB): peak resident memory "
          "above the start, each in a fresh process")
    who = ("assay", "assay-numpy", "torchmetrics")
    label = {"assay": "assay ECE (compiled path)", "assay-numpy": "assay ECE (numpy path)",
             "torchmetrics": "torchmetrics MulticlassCalibrationError"}
    print(f"  {'':<42} {'imports + first call':>22} {'first call':>12} {'warm call':>11}")
    for w in who:
        row, value = [], None
        for phase in ("imports", "first", "warm"):
            out = subprocess.run([sys.executable, "-c", _PROBE, w, str(n), phase], capture_output=True, text=True,
                                 check=True)
            res = json.loads(out.stdout.strip().splitlines()[-1])
            row.append(res["peak_mib"])
            value = res["value"]
        print(f"  {label[w]:<42} {row[0]:>18.1f} MiB {row[1]:>8.1f} MiB {row[2]:>7.1f} MiB   (ECE {value:.7f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--only", default="aurc,ece_memory", help="comma-separated: aurc, ece_memory")
    args = ap.parse_args()
    only = {w.strip() for w in args.only.split(",")}
    if not only <= {"aurc", "ece_memory"}:
        ap.error(f"--only: unknown workload(s) {sorted(only - {'aurc', 'ece_memory'})}")
    if "aurc" in only:
        bench_aurc(args.n, args.repeat)
    if "ece_memory" in only:
        bench_ece_memory(args.n)


if __name__ == "__main__":
    main()
