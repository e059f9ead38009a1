"""Benchmark the uncertainty metrics against their goals and, when installed, the peers.

    python bench/bench_ue.py [--n 1000000] [--repeat 7]

Goals (issue 4), each a ratio to a plain numpy pass over the same data:
  AURC + E-AURC, 1e6 examples          <= 1.1 x one np.argsort   (torch-uncertainty AURC/EAURC if installed)
  PRR + normalisation, 1e6 examples    <= 2   x one np.argsort   (LM-Polygraph samples 1,000 permutations)
  Disagreement, B=1e5 N=10 C=100       <= 1.2 x one np.argmax    (torch-uncertainty Disagreement if installed)
  multiclass ECE (15 bins), 1e6 x 10   <= 1.5 x one np.argmax    (torchmetrics MulticlassCalibrationError if installed)
Medians of --repeat runs; the machine may be shared, so read the ratios, not the milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def median_ms(fn, repeat: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def row(name: str, ms: float, base: float, goal: float | None = None) -> None:
    ratio = ms / base
    verdict = "" if goal is None else ("  ok" if ratio <= goal else f"  ABOVE goal {goal}x")
    print(f"  {name:<52} {ms:9.1f} ms  {ratio:6.2f}x{verdict}")


def torch_or_none():
    try:
        import torch

        torch.set_num_threads(2)
        return torch
    except ImportError:
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    from assay_uncertainty.calibration import ECE
    from assay_uncertainty.ensemble import Disagreement
    from assay_uncertainty.rejection import prr_scores
    from assay_uncertainty.risk_coverage import aurc_and_e_aurc

    torch = torch_or_none()
    rng = np.random.default_rng(0)
    n, rep = args.n, args.repeat
    u = rng.random(n)
    q = (rng.random(n) < 1 / (1 + np.exp(4 * (u - 0.5)))).astype(np.float64)

    print(f"AURC + E-AURC, N={n:,} (binary quality)")
    base = median_ms(lambda: np.argsort(u), rep)
    row("np.argsort (baseline)", base, base)
    row("assay aurc_and_e_aurc (fd-shifts)", median_ms(lambda: aurc_and_e_aurc(u, q), rep), base, 1.1)
    if torch is not None:
        try:
            from torch_uncertainty.metrics import AURC as TUAURC  # noqa: N811

            conf_t = torch.from_numpy(-u).float()
            err_t = torch.from_numpy(1 - q).bool()

            def tu():
                m = TUAURC()
                m.update(conf_t, err_t)
                m.compute()

            row("torch-uncertainty AURC", median_ms(tu, rep), base)
        except Exception as exc:  # noqa: BLE001 - a peer that is missing or changed its API
            print(f"  torch-uncertainty AURC: not run ({type(exc).__name__}: {exc})")

    print(f"\nPRR with its normalisation (oracle, closed-form random), N={n:,}")
    row("np.argsort (baseline)", base, base)
    row("assay prr_scores (raw, oracle, random, normalized)", median_ms(lambda: prr_scores(u, q), rep), base, 2.0)
    qc = rng.random(n)
    row("assay prr_scores, continuous quality", median_ms(lambda: prr_scores(u, qc), rep), base, 2.0)

    b, m_, c = 100_000, 10, 100
    logits = rng.standard_normal((b, m_, c), dtype=np.float32)
    probs = np.exp(logits)
    probs /= probs.sum(axis=-1, keepdims=True)
    del logits
    print(f"\nDisagreement, probs (B={b:,}, N={m_}, C={c}) float32")
    base = median_ms(lambda: np.argmax(probs, axis=-1), rep)
    row("np.argmax over C (baseline)", base, base)

    def dis(validate):
        d = Disagreement(validate_args=validate)
        d.update(probs)
        return d.compute()

    row("assay Disagreement (validate_args=False)", median_ms(lambda: dis(False), rep), base, 1.2)
    row("assay Disagreement (validate_args=True, default)", median_ms(lambda: dis(True), rep), base)
    if torch is not None:
        try:
            from torch_uncertainty.metrics import Disagreement as TUDis

            pt = torch.from_numpy(probs)

            def tud():
                d = TUDis()
                d.update(pt)
                d.compute()

            row("torch-uncertainty Disagreement", median_ms(tud, rep), base)
        except Exception as exc:  # noqa: BLE001
            print(f"  torch-uncertainty Disagreement: not run ({type(exc).__name__}: {exc})")
    del probs

    nc = 10
    lg = rng.standard_normal((n, nc))
    p = np.exp(lg)
    p /= p.sum(axis=1, keepdims=True)
    y = rng.integers(0, nc, n)
    print(f"\nMulticlass ECE, 15 bins, probs ({n:,}, {nc}) float64")
    base = median_ms(lambda: np.argmax(p, axis=1), rep)
    row("np.argmax over classes (baseline)", base, base)

    def ece(validate):
        e = ECE(n_bins=15, validate_args=validate)
        e.update(p, y)
        return e.compute()["ece"]

    row("assay ECE (validate_args=False)", median_ms(lambda: ece(False), rep), base, 1.5)
    row("assay ECE (validate_args=True, default)", median_ms(lambda: ece(True), rep), base)
    if torch is not None:
        try:
            from torchmetrics.classification import MulticlassCalibrationError

            pt, yt = torch.from_numpy(p), torch.from_numpy(y)

            def tm():
                m = MulticlassCalibrationError(num_classes=nc, n_bins=15, norm="l1", validate_args=False)
                m.update(pt, yt)
                return float(m.compute())

            row("torchmetrics MulticlassCalibrationError (2 threads)", median_ms(tm, rep), base)
            print(f"  (same value: assay {ece(False):.6f}, torchmetrics {tm():.6f})")
        except Exception as exc:  # noqa: BLE001
            print(f"  torchmetrics ECE: not run ({type(exc).__name__}: {exc})")


if __name__ == "__main__":
    main()
