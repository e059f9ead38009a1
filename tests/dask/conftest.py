"""One real Dask ``LocalCluster`` per test module: two single-threaded worker processes.

Never skipped: dask[distributed] is in the ``dask`` extra that ``scripts/setup.sh``
installs, and the tests must run in CI.
"""

from __future__ import annotations

import copyreg
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def client():
    # The spawned worker processes inherit sys.path, so they import the helpers module too.
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    # Importing distributed installs tblib's pickling for every exception class, process-wide (copyreg);
    # undo it afterwards, so that the other test modules see Python's own pickling.
    saved = dict(copyreg.dispatch_table)
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    yield client
    client.close()
    cluster.close()
    copyreg.dispatch_table.clear()
    copyreg.dispatch_table.update(saved)


@pytest.fixture
def helpers(client):
    """The helper module, importable here and on the workers; waits for both workers (after a crash test)."""
    import assay_dask_helpers

    client.wait_for_workers(2, timeout=120)
    return assay_dask_helpers
