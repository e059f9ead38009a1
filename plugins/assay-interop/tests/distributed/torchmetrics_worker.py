"""One rank of the two-process ``AssayTorchMetric`` test (run by ``test_torchmetrics_sync.py``).

Usage: ``python torchmetrics_worker.py RANK`` with ``MASTER_ADDR``, ``MASTER_PORT`` and
``WORLD_SIZE=2`` set. Only torchmetrics' own machinery syncs (``sync_on_compute``, the default,
and ``dist_sync_on_step`` for ``forward``). Prints one JSON object: every value as ``float.hex``.
"""

from __future__ import annotations

import datetime
import json
import sys
import traceback

import torch
import torch.distributed as dist
from torchmetrics.classification import MulticlassAccuracy
from torchsync_cases import cases, part

from assay.plugins import load_ue_metric
from assay_interop import AssayTorchMetric


def build(case: dict, **kwargs) -> AssayTorchMetric:
    metric = load_ue_metric(case["ue_metric"]) if "ue_metric" in case else case["metric"]
    return AssayTorchMetric(metric, **kwargs)


def feed(m: AssayTorchMetric, case: dict, rank: int) -> None:
    preds, target = part(case["preds"], rank), part(case["target"], rank)
    for i in range(0, len(preds), 40):  # several updates per rank
        args = (torch.from_numpy(preds[i:i + 40]),)
        if target is not None:
            args += (torch.from_numpy(target[i:i + 40]),)
        m.update(*args)


def main() -> None:
    rank = int(sys.argv[1])
    out: dict = {"rank": rank}
    dist.init_process_group("gloo", rank=rank, world_size=2, timeout=datetime.timedelta(seconds=60))
    try:
        for key, case in cases().items():
            m = build(case)
            feed(m, case, rank)
            value = m.compute()  # sync_on_compute (default): every rank's state
            local = m.metric.compute()  # after compute torchmetrics restores this rank's own state
            out[key] = {"synced": float(value).hex(), "local": float(local).hex(), "n_local": int(m.n)}
        # rank 1 sees no data: an additive metric syncs (its empty statistics travel as 0 rows); a gathered one
        # gives rank 0 the value and rank 1 an error (it cannot read the rows' layout)
        for key in ("accuracy", "roc_auc"):
            m = build(cases()[key])
            if rank == 0:
                feed(m, cases()[key], rank)
            try:
                out[key + "_rank1_empty"] = {"synced": float(m.compute()).hex()}
            except Exception as exc:  # noqa: BLE001 - the test reads the class and the message
                out[key + "_rank1_empty"] = {"error": type(exc).__name__, "message": str(exc)}
        # forward with dist_sync_on_step: the batch value over both ranks' batches
        case = cases()["accuracy"]
        m = build(case, dist_sync_on_step=True)
        preds, target = part(case["preds"], rank), part(case["target"], rank)
        step = m(torch.from_numpy(preds[:50]), torch.from_numpy(target[:50]))
        out["step"] = {"value": float(step).hex()}
        # an epoch of forward calls with dist_sync_on_step, then compute; torchmetrics' own MulticlassAccuracy beside
        for key in ("accuracy", "roc_auc"):
            case = cases()[key]
            m = build(case, dist_sync_on_step=True)
            peer = MulticlassAccuracy(num_classes=3, average="micro", dist_sync_on_step=True)
            preds, target = part(case["preds"], rank), part(case["target"], rank)
            steps = []
            for i in range(0, 120, 40):
                p, t = torch.from_numpy(preds[i:i + 40]), torch.from_numpy(target[i:i + 40])
                steps.append(float(m(p, t)).hex())
                if key == "accuracy":
                    peer(p, t)
            out[key + "_epoch"] = {"steps": steps, "compute": float(m.compute()).hex(), "n": int(m.n),
                                   "peer": float(peer.compute()) if key == "accuracy" else None}
    except Exception:  # noqa: BLE001 - reported to the test, which fails with it
        out["crash"] = traceback.format_exc()
    finally:
        dist.destroy_process_group()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
