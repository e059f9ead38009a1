"""Benchmark the uncertainty metrics against their goals and, when installed, the peers.

    python bench/bench_ue.py [--n 1000000] [--repeat 7] [--only aurc,prr,disagreement,ece]

Goals (issue 4), each a ratio to a plain numpy pass over the same data:
  AURC + E-AURC, 1e6 examples          <= 1.1 x one np.argsort   (torch-uncertainty AURC/EAURC if installed)
  PRR + normalisation, 1e6 examples    <= 2   x one np.argsort   (LM-Polygraph samples 1,000 permutations)
  Disagreement, B=1e5 N=10 C=100       <= 1.2 x one np.argmax    (torch-uncertainty Disagreement if installed)
  multiclass ECE (15 bins), 1e6 x 10   <= 1.5 x one np.argmax    (torchmetrics MulticlassCalibrationError if installed)
Issue 17: checked ECE and Disagreement (validate_args=True, the default) <= 1.3 x one np.argmax.
Each is timed on the compiled path (numba, the 'fast' extra; its first-call compilation is in the
warm-up) and on the numpy path (the fallback without numba), side by side with the same baseline.
Medians of --repeat runs; the machine may be shared, so read the ratios, not the milliseconds.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time

import numpy as np

_BASE: list = []


@contextlib.contextmanager
def numpy_path():
    """Run assay without its compiled kernels (as without numba installed): the numpy fallback."""
    from assay import compiled

    kernels = compiled.kernels
    compiled.kernels = lambda: None
    try:
        yield
    finally:
        compiled.kernels = kernels


def timed_numpy(name: str, fn, goal: float | None = None) -> float:
    with numpy_path():
        return timed(name, fn, goal)


def backend() -> str:
    from assay import compiled

    return compiled.backend()


def _runs(fn, repeat: int, companion=None) -> tuple[list[float], list[float]]:
    fn()  # warm-up
    own, other = [], []
    for _ in range(repeat):
        if companion is not None:
            t = time.perf_counter()
            companion()
            other.append(time.perf_counter() - t)
        t = time.perf_counter()
        fn()
        own.append(time.perf_counter() - t)
    return own, other


def baseline(name: str, fn, repeat: int) -> float:
    """Time the section's baseline and keep it as the companion of the timings that follow."""
    own, _ = _runs(fn, repeat)
    _BASE[:] = [fn, repeat]
    ms = statistics.median(own) * 1e3
    print(f"  {name:<52} {ms:9.1f} ms   1.00x")
    return ms


def timed(name: str, fn, goal: float | None = None) -> float:
    """Median time of ``fn``, each run right after a run of the baseline; the ratio is of the two
    medians measured side by side, so both see the same machine load."""
    base_fn, repeat = _BASE
    own, other = _runs(fn, repeat, companion=base_fn)
    ms, base = statistics.median(own) * 1e3, statistics.median(other) * 1e3
    ratio = ms / base
    verdict = "" if goal is None else ("  ok" if ratio <= goal else f"  ABOVE goal {goal}x")
    print(f"  {name:<52} {ms:9.1f} ms  {ratio:5.2f}x (baseline {base:.1f} ms alongside){verdict}")
    return ms


def torch_or_none():
    try:
        import torch

        torch.set_num_threads(2)
        return torch
    except ImportError:
        return None


#: a folder holding an unpacked ``torch_uncertainty`` package (``--torch-uncertainty DIR``), else the installed one
TU_DIR: str | None = None


def tu_module(relative: str):
    """One torch-uncertainty module loaded from its file (its package __init__ imports torchvision,
    which is not needed for the metrics and may not match the installed torch)."""
    import importlib.util
    import os

    if TU_DIR is not None:
        root = os.path.join(TU_DIR, "torch_uncertainty")
    else:
        spec = importlib.util.find_spec("torch_uncertainty")
        if spec is None or not spec.submodule_search_locations:
            raise ImportError("torch_uncertainty is not installed (or give --torch-uncertainty DIR)")
        root = list(spec.submodule_search_locations)[0]
    path = os.path.join(root, relative)
    mod_spec = importlib.util.spec_from_file_location("tu_" + os.path.basename(relative)[:-3], path)
    module = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(module)
    return module


def bench_disagreement(rng, rep: int, torch) -> None:
    """Disagreement on (B, N, C) probabilities; its 400 MB array is freed on return."""
    from assay_uncertainty.ensemble import Disagreement

    b, m_, c = 100_000, 10, 100
    logits = rng.standard_normal((b, m_, c), dtype=np.float32)
    probs = np.exp(logits)
    probs /= probs.sum(axis=-1, keepdims=True)
    del logits
    print(f"\nDisagreement, probs (B={b:,}, N={m_}, C={c}) float32")
    baseline("np.argmax over C (baseline)", lambda: np.argmax(probs, axis=-1), rep)

    def dis(validate):
        d = Disagreement(validate_args=validate)
        d.update(probs)
        return d.compute_scores()["disagreement"]

    timed("assay Disagreement (validate_args=True, default)", lambda: dis(True), 1.3)
    timed("assay Disagreement (validate_args=False)", lambda: dis(False), 1.2)
    timed_numpy("assay Disagreement, numpy path (validate_args=True)", lambda: dis(True))
    timed_numpy("assay Disagreement, numpy path (validate_args=False)", lambda: dis(False))
    if torch is not None:
        try:
            tu_dis = tu_module("metrics/classification/disagreement.py")
            pt = torch.from_numpy(probs)

            def tud():
                d = tu_dis.Disagreement()
                d.update(pt)
                return float(d.compute())

            timed("torch-uncertainty Disagreement", tud)
            print(f"  (same value: assay {dis(False):.6f}, torch-uncertainty {tud():.6f})")
        except Exception as exc:  # noqa: BLE001
            print(f"  torch-uncertainty Disagreement: not run ({type(exc).__name__}: {exc})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--torch-uncertainty", default=None, metavar="DIR",
                    help="a folder with the unpacked torch_uncertainty package (pip download torch-uncertainty "
                         "--no-deps, unzip): run its metrics side by side without installing it")
    ap.add_argument("--only", default="aurc,prr,disagreement,ece",
                    help="comma-separated workloads to run (default: all): aurc, prr, disagreement, ece")
    args = ap.parse_args()
    only = {w.strip() for w in args.only.split(",")}
    if not only <= {"aurc", "prr", "disagreement", "ece"}:
        ap.error(f"--only: unknown workload(s) {sorted(only - {'aurc', 'prr', 'disagreement', 'ece'})}")
    global TU_DIR
    TU_DIR = args.torch_uncertainty
    from assay_uncertainty.rejection import prr_scores

    torch = torch_or_none()
    print(f"assay's kernels: {backend()}")
    rng = np.random.default_rng(0)
    n, rep = args.n, args.repeat
    u = rng.random(n)
    q = (rng.random(n) < 1 / (1 + np.exp(4 * (u - 0.5)))).astype(np.float64)

    if "aurc" in only:
        bench_aurc(u, q, rep, torch)
    if "prr" in only:
        print(f"\nPRR with its normalisation (oracle, closed-form random), N={n:,}")
        baseline("np.argsort (baseline)", lambda: np.argsort(u), rep)
        timed("assay prr_scores (raw, oracle, random, normalized)", lambda: prr_scores(u, q), 2.0)
        qc = rng.random(n)
        timed("assay prr_scores, continuous quality", lambda: prr_scores(u, qc), 2.0)
    if "disagreement" in only:
        bench_disagreement(rng, rep, torch)
    if "ece" in only:
        bench_ece(rng, n, rep, torch)


def bench_aurc(u, q, rep, torch) -> None:
    from assay_uncertainty.risk_coverage import aurc_and_e_aurc

    n = u.size
    print(f"AURC + E-AURC, N={n:,} (binary quality)")
    baseline("np.argsort (baseline)", lambda: np.argsort(u), rep)
    timed("assay aurc_and_e_aurc (fd-shifts)", lambda: aurc_and_e_aurc(u, q), 1.1)
    timed("assay aurc_and_e_aurc (torch-uncertainty convention)",
          lambda: aurc_and_e_aurc(u, q, convention="torch-uncertainty"), 1.1)
    if torch is not None:
        try:
            tu_rc = tu_module("metrics/classification/risk_coverage.py")
            # torch-uncertainty takes binary probabilities: score = max(p, 1 - p), error = argmax != target.
            # p = 1 - u / 2 puts every score in [.5, 1] with confidence falling as u rises.
            p_t = torch.from_numpy(1 - u / 2).float()
            target_t = torch.from_numpy(q).long()

            def tu():
                m = tu_rc.AURC()
                m.update(p_t, target_t)
                return float(m.compute())

            timed("torch-uncertainty AURC (AURC only)", tu)
            conf = np.maximum(p_t.numpy(), 1 - p_t.numpy()).astype(np.float64)
            ours = aurc_and_e_aurc(-conf, q, convention="torch-uncertainty")[0]
            print(f"  (same value, torch-uncertainty convention: assay {ours:.6f}, torch-uncertainty {tu():.6f})")
        except Exception as exc:  # noqa: BLE001 - a peer that is missing or changed its API
            print(f"  torch-uncertainty AURC: not run ({type(exc).__name__}: {exc})")


def bench_ece(rng, n, rep, torch) -> None:
    from assay_uncertainty.calibration import ECE

    nc = 10
    lg = rng.standard_normal((n, nc))
    p = np.exp(lg)
    p /= p.sum(axis=1, keepdims=True)
    y = rng.integers(0, nc, n)
    print(f"\nMulticlass ECE, 15 bins, probs ({n:,}, {nc}) float64")
    baseline("np.argmax over classes (baseline)", lambda: np.argmax(p, axis=1), rep)

    def ece(validate):
        e = ECE(n_bins=15, validate_args=validate)
        e.update(p, y)
        return e.compute_scores()["ece"]

    timed("assay ECE (validate_args=True, default)", lambda: ece(True), 1.3)
    timed("assay ECE (validate_args=False)", lambda: ece(False), 1.5)
    timed_numpy("assay ECE, numpy path (validate_args=True)", lambda: ece(True))
    timed_numpy("assay ECE, numpy path (validate_args=False)", lambda: ece(False))
    if torch is not None:
        try:
            from torchmetrics.classification import MulticlassCalibrationError

            pt, yt = torch.from_numpy(p), torch.from_numpy(y)

            def tm(validate=False):
                m = MulticlassCalibrationError(num_classes=nc, n_bins=15, norm="l1", validate_args=validate)
                m.update(pt, yt)
                return float(m.compute())

            timed("torchmetrics MulticlassCalibrationError (2 threads)", tm)
            timed("torchmetrics MulticlassCalibrationError (2 threads, validate_args=True)", lambda: tm(True))
            print(f"  (same value: assay {ece(False):.6f}, torchmetrics {tm():.6f})")
        except Exception as exc:  # noqa: BLE001
            print(f"  torchmetrics ECE: not run ({type(exc).__name__}: {exc})")


if __name__ == "__main__":
    main()
