"""One rank of the two-process ``assay_interop.distributed.sync`` test (run by ``test_sync.py``).

Usage: ``python gloo_worker.py RANK`` with ``MASTER_ADDR``, ``MASTER_PORT`` and
``WORLD_SIZE=2`` set. Prints one JSON object: each check's scores as ``float.hex``
strings, or the error it raised.
"""

from __future__ import annotations

import datetime
import json
import sys
import traceback

import torch.distributed as dist
from distsync_cases import batches, cases, encode, part

import assay_interop.distributed as distributed
from assay.errors import InvalidParameterError
from assay.plugins import load_metric


def fed(name: str, case: dict, rank: int):
    m = load_metric(name)
    for p, r in batches(case, *part(case, rank)):
        m.update(p, r)
    return m


def error(fn) -> dict:
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the test reads the class and the message
        return {"error": type(exc).__name__, "message": str(exc), "invalid": isinstance(exc, InvalidParameterError)}
    return {"error": None}


def before_the_group(out: dict) -> None:
    """Rank 0, alone: no process group yet, then a group of one."""
    acc = cases()["accuracy"]
    out["no_group"] = error(lambda: distributed.sync(fed("accuracy", acc, 0)))
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        m = fed("roc_auc", cases()["roc_auc"], 0)
        alone = m.compute_scores()
        state = m.state.__getstate__()
        same = distributed.sync(m)
        copy = distributed.sync(m, inplace=False)
        out["world_1"] = {
            "alone": encode(alone), "synced": encode(same.compute_scores()), "is_same": same is m,
            "copy_is_new": copy is not m, "copy": encode(copy.compute_scores()), "n": m.state.n,
            "state_unchanged": m.state.n == state["n"] and len(m.state.chunks) == len(state["chunks"]),
        }
    finally:
        dist.destroy_process_group()


def main() -> None:
    rank = int(sys.argv[1])
    out: dict = {"rank": rank}
    if rank == 0:
        before_the_group(out)
    dist.init_process_group("gloo", rank=rank, world_size=2, timeout=datetime.timedelta(seconds=60))
    try:
        all_cases = cases()
        for key, case in all_cases.items():
            m = fed(case["metric"], case, rank)
            merged = distributed.sync(m)
            out[key] = {"scores": encode(merged.compute_scores()), "n": merged.state.n, "is_same": merged is m}
            if not merged.additive:  # the merged intermediates, to check the rank order
                out[key]["intermediates"] = [[float(v).hex() for v in row]
                                             for row in merged.state.intermediates().tolist()]
        # inplace=False: the local state stays this rank's own
        case = all_cases["roc_auc"]
        m = fed("roc_auc", case, rank)
        merged = distributed.sync(m, inplace=False)
        out["not_inplace"] = {"merged": encode(merged.compute_scores()), "local": encode(m.compute_scores()),
                              "local_n": m.state.n, "merged_n": merged.state.n}
        # several metrics in one collective
        acc, ece = all_cases["accuracy"], all_cases["ece"]
        both = distributed.sync([fed(acc["metric"], acc, rank), fed(ece["metric"], ece, rank)])
        out["several"] = [encode(both[0].compute_scores()), encode(both[1].compute_scores())]
        # different options on the two ranks: an error on both, no hang
        out["mismatch"] = error(lambda: distributed.sync(load_metric(f"ece[n_bins={10 + 5 * rank}]")))
        # a group of one (rank 0 alone): a no-op there, an error on rank 1, which is not in it
        solo = dist.new_group([0])
        m = fed("accuracy", acc, rank)
        out["subgroup"] = error(lambda: distributed.sync(m, group=solo))
        out["subgroup"]["scores"] = encode(m.compute_scores())
        # the same metric with another option on each rank (f1 macro vs micro: 'additive' differs as a consequence)
        out["average_mismatch"] = error(
            lambda: distributed.sync(load_metric(f"f1[average={['macro', 'micro'][rank]}]")))
        # a different number of metrics on the two ranks
        out["count_mismatch"] = error(lambda: distributed.sync([load_metric("accuracy")] * (1 + rank)))
        # a different metric on the two ranks
        out["class_mismatch"] = error(lambda: distributed.sync(load_metric(["accuracy", "ece"][rank])))
        # the process group still works after the errors
        out["after_mismatch"] = encode(distributed.sync(fed(acc["metric"], acc, rank)).compute_scores())
    except Exception:  # noqa: BLE001 - report, then leave
        out["crash"] = traceback.format_exc()
    finally:
        dist.destroy_process_group()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
