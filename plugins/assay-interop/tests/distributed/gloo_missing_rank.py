"""One rank of the missing-rank ``sync`` tests (run by ``test_sync_missing_rank.py``).

Usage: ``python gloo_missing_rank.py RANK ABSENT`` with ``MASTER_ADDR`` and ``MASTER_PORT`` set:
rank ``ABSENT`` leaves (``os._exit(3)``) right after the process group is up, without calling
``sync``; the other rank calls ``sync`` with no ``timeout=`` (the group's own, 5 s here) and prints
one JSON object with the class and message of what it raised.
"""

from __future__ import annotations

import datetime
import json
import os
import sys

import torch.distributed as dist

import assay_interop.distributed as distributed
from assay.plugins import load_metric


def main() -> None:
    rank, absent = int(sys.argv[1]), int(sys.argv[2])
    dist.init_process_group("gloo", rank=rank, world_size=2, timeout=datetime.timedelta(seconds=5))
    if rank == absent:
        os._exit(3)  # dies without calling sync (and without leaving the group cleanly)
    m = load_metric("accuracy").update([1, 0], [[1], [1]])
    try:
        distributed.sync(m)
        out = {"error": None}
    except Exception as exc:  # noqa: BLE001 - the test reads the class and the message
        out = {"error": type(exc).__name__, "message": str(exc), "mro": [c.__name__ for c in type(exc).__mro__]}
    print(json.dumps(out), flush=True)
    os._exit(0)  # the group is broken: leave without torch's teardown waiting on the dead rank


if __name__ == "__main__":
    main()
