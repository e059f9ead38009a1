"""assay's torch path on a GPU: sort-based metrics, ECE and disagreement on 1e8 scores, against peers on one GPU.

    python bench/bench_torch_gpu.py [--n 100000000] [--repeats 5] [--device cuda] [--json PATH]

Runs only where a CUDA device is present: without one it prints ``SKIPPED`` with the reason
and exits 0 (nothing is measured, no figure is made up). ``--device cpu --n 100000`` is a smoke
run of the script itself on CPU tensors, not figures.

Data, made on the device: ``--n`` uncertainties (float32, uniform), a failure (quality 0) for
about 30% of them, likelier at high uncertainty; for ECE ``--n`` positive-class probabilities
(float32) and 0 / 1 labels; for disagreement ``--n / 50`` examples of 5 members x 10 classes.

Contenders, each a median of ``--repeats`` runs taken in turns, ``torch.cuda.synchronize()``
inside the timing, inputs prepared outside it:

- ROC-AUC: ``ROCAUC()(u, q)`` against torchmetrics' ``binary_auroc(u, fail)``;
- average precision: ``PRAUC()(u, q)`` against torchmetrics' ``binary_average_precision``;
- ECE (15 bins, binary): ``ECE(n_bins=15).update(p, y).compute()`` against ``binary_calibration_error``;
- AURC / AUGRC (torch-uncertainty's convention) against torch-uncertainty's ``AURC`` / ``AUGRC``
  (E-AURC: no peer class, assay alone);
- FPR at 95% recall: ``FPRAtRecall(convention="torch-uncertainty")`` against torch-uncertainty's ``FPR95``;
- disagreement: ``Disagreement().update(p).compute()`` against torch-uncertainty's ``Disagreement``.

A peer that is not installed (or fails to import, e.g. torch-uncertainty installed without its
dependencies) is reported as such. Each value is printed beside the peer's; the ratio is
assay's median over the peer's (below 1: assay is faster).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _median_times(contenders: dict[str, Callable[[], Any]], repeats: int, sync: Callable[[], None]):
    values = {}
    for name, fn in contenders.items():  # warm-up: kernels, allocator
        values[name] = fn()
        sync()
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(repeats):
        for name, fn in contenders.items():
            sync()
            start = time.perf_counter()
            values[name] = fn()
            sync()
            times[name].append(time.perf_counter() - start)
    return {name: (statistics.median(times[name]), values[name]) for name in contenders}


def _peer(make: Callable[[], Callable[[], Any]]) -> Callable[[], Any] | str:
    try:
        return make()
    except Exception as exc:  # noqa: BLE001 - a missing or broken peer is reported, not fatal
        return f"{type(exc).__name__}: {exc}"


def _as_float(v: Any) -> float:
    return float(v.item() if hasattr(v, "item") else v)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    try:
        import torch  # deferred: torch, the optional peer library this benchmark is about
    except ImportError:
        print("SKIPPED: torch is not installed; nothing measured.")
        return 0
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("SKIPPED: no CUDA device (torch.cuda.is_available() is False); nothing measured. "
              "bench/README.md keeps 'not yet run on a GPU' until a run on one.")
        return 0
    from assay_uncertainty.calibration import ECE
    from assay_uncertainty.ensemble import Disagreement
    from assay_uncertainty.ranking import PRAUC, ROCAUC, FPRAtRecall
    from assay_uncertainty.risk_coverage import AUGRC, AURC, EAURC

    dev = torch.device(args.device)

    def sync() -> None:
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)

    gen = torch.Generator(device=dev).manual_seed(0)
    n = args.n
    u = torch.rand(n, device=dev, generator=gen)
    fail = (torch.rand(n, device=dev, generator=gen) < 0.15 + 0.3 * u).to(torch.int64)
    q = (1 - fail).to(torch.float32)
    p = torch.rand(n, device=dev, generator=gen)
    y = (torch.rand(n, device=dev, generator=gen) < p).to(torch.int64)
    # torch-uncertainty's AURC / AUGRC take probabilities and labels: confidence c = 1 - u / 2 (exact in
    # float64, so the ranking and the ties are u's) as the top class 0, and the label 1 for a failure
    conf = 1.0 - u.to(torch.float64) / 2.0
    tu_probs = torch.stack((conf, 1.0 - conf), dim=-1)
    del conf
    b = max(n // 50, 2)
    logits = torch.randn(b, 5, 10, device=dev, generator=gen)
    probs = torch.softmax(logits, dim=-1)
    sync()

    rows: list[dict[str, Any]] = []

    def tm(name: str) -> Callable[..., Any]:
        import torchmetrics.functional.classification as F  # deferred: the optional peer

        return getattr(F, name)

    def tu(name: str) -> Any:
        # torch-uncertainty's metric module loaded from its file (its package __init__ imports Lightning
        # and torchvision, which a --no-deps install lacks; the tests load it the same way)
        import importlib.util

        files = {"AURC": "risk_coverage", "AUGRC": "risk_coverage", "FPR95": "fpr", "Disagreement": "disagreement"}
        root = importlib.util.find_spec("torch_uncertainty")
        if root is None or not root.submodule_search_locations:
            raise ImportError("torch_uncertainty is not installed")
        path = Path(list(root.submodule_search_locations)[0]) / "metrics" / "classification" / f"{files[name]}.py"
        spec = importlib.util.spec_from_file_location(f"_tu_{files[name]}", path)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        return getattr(module, name)

    def tu_metric(name: str, *inputs: Any, **kwargs: Any) -> Callable[[], Any]:
        cls = tu(name)

        def run() -> Any:
            m = cls(**kwargs).to(dev)
            m.update(*inputs)
            return m.compute()
        return run

    cases: list[tuple[str, Callable[[], Any], Callable[[], Any] | str, str]] = [
        ("roc_auc", lambda: ROCAUC()(u, q), _peer(lambda: lambda: tm("binary_auroc")(u, fail)),
         "torchmetrics binary_auroc"),
        ("pr_auc", lambda: PRAUC()(u, q), _peer(lambda: lambda: tm("binary_average_precision")(u, fail)),
         "torchmetrics binary_average_precision"),
        ("ece (15 bins)", lambda: ECE(n_bins=15, validate_args=False).update(p, y).compute(),
         _peer(lambda: lambda: tm("binary_calibration_error")(p, y, n_bins=15)),
         "torchmetrics binary_calibration_error"),
        ("aurc (torch-uncertainty)", lambda: AURC(convention="torch-uncertainty")(u, q),
         _peer(lambda: tu_metric("AURC", tu_probs, fail)), "torch_uncertainty AURC"),
        ("e_aurc (torch-uncertainty)", lambda: EAURC(convention="torch-uncertainty")(u, q), "no peer class",
         "-"),
        ("augrc (torch-uncertainty)", lambda: AUGRC(convention="torch-uncertainty")(u, q),
         _peer(lambda: tu_metric("AUGRC", tu_probs, fail)), "torch_uncertainty AUGRC"),
        ("fpr at 95% recall", lambda: FPRAtRecall(convention="torch-uncertainty")(u, q),
         _peer(lambda: tu_metric("FPR95", u, fail, pos_label=1)), "torch_uncertainty FPR95"),
        (f"disagreement ({b} x 5 x 10)", lambda: Disagreement(validate_args=False).update(probs).compute(),
         _peer(lambda: tu_metric("Disagreement", probs)), "torch_uncertainty Disagreement"),
    ]
    print(f"device: {torch.cuda.get_device_name(dev) if dev.type == 'cuda' else dev}; torch {torch.__version__}; "
          f"n = {n:,}; median of {args.repeats}")
    for name, ours, peer, peer_name in cases:
        contenders: dict[str, Callable[[], Any]] = {"assay": ours}
        if callable(peer):
            contenders["peer"] = peer
        try:
            res = _median_times(contenders, args.repeats, sync)
        except Exception as exc:  # e.g. a peer out of memory at 1e8: reported, the others go on
            if "peer" not in contenders:
                raise
            peer = f"{type(exc).__name__}: {exc}"
            res = _median_times({"assay": ours}, args.repeats, sync)
        t_a, v_a = res["assay"]
        row: dict[str, Any] = {"metric": name, "assay_s": t_a, "assay_value": _as_float(v_a), "peer": peer_name}
        if "peer" in res:
            t_p, v_p = res["peer"]
            row.update(peer_s=t_p, peer_value=_as_float(v_p), ratio=t_a / t_p)
            print(f"{name:32s} assay {t_a * 1e3:9.1f} ms  {peer_name} {t_p * 1e3:9.1f} ms  ratio {t_a / t_p:5.2f}  "
                  f"values {row['assay_value']:.10g} / {row['peer_value']:.10g}")
        else:
            row["peer_error"] = peer if isinstance(peer, str) else None
            print(f"{name:32s} assay {t_a * 1e3:9.1f} ms  (peer: {peer})  value {row['assay_value']:.10g}")
        rows.append(row)
    if dev.type == "cuda":
        print(f"peak GPU memory: {torch.cuda.max_memory_allocated(dev) / 2**30:.2f} GiB")
    if args.json:
        args.json.write_text(json.dumps({"device": str(dev), "n": n, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
