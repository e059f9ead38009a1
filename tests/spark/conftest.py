"""One real ``local[2,2]`` SparkContext for the whole session (Spark allows one per process).

``local[2,2]``: two cores, and a failed task is tried twice, so the failure tests go
through Spark's own retries as on a cluster.

Never skipped: when pyspark or Java is missing the fixture errors, as the tests must run
in CI (``scripts/setup.sh`` installs both).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
MASTER = "local[2,2]"


def _java_home() -> str | None:
    """The JAVA_HOME of a Java 17+ runtime, from ``scripts/ensure-java.sh`` (which installs one if needed)."""
    out = subprocess.run(["bash", str(ROOT / "scripts" / "ensure-java.sh")], check=True,
                         capture_output=True, text=True).stdout.strip().splitlines()
    return out[-1].split("=", 1)[1] if out and out[-1].startswith("JAVA_HOME=") else None


@pytest.fixture(scope="session")
def sc():
    home = _java_home()
    if home:
        os.environ["JAVA_HOME"] = home
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers import this venv's assay
    from pyspark import SparkConf, SparkContext

    conf = (SparkConf().setMaster(MASTER).setAppName("assay-tests")
            .set("spark.ui.enabled", "false").set("spark.ui.showConsoleProgress", "false"))
    context = SparkContext.getOrCreate(conf)
    context.setLogLevel("FATAL")  # the failure tests make tasks fail on purpose
    context.addPyFile(str(HERE / "assay_spark_helpers.py"))
    yield context
    context.stop()


@pytest.fixture(scope="session")
def helpers(sc):
    """The helper module, importable on the driver and (through ``addPyFile``) on the workers."""
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    import assay_spark_helpers

    return assay_spark_helpers
