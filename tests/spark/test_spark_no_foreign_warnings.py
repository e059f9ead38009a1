"""Starting Spark prints nothing of pyspark's own (issue 27, item 20).

pyspark imports ``pyspark.testing`` while it converts the SparkConf, which warns (a
``FutureWarning``) that its pandas API does not support pandas >= 3; the line leaked into
``assay demo``'s output. A fresh interpreter (the import happens once per process) starts the
spark executor and runs a job; its stderr must not carry the warning.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parents[2]

JOB = """
import warnings
warnings.simplefilter("default")  # show every warning, as a user's script would see it
from assay import load_executor

def double(task, shared):
    return task * 2

ex = load_executor("spark", master="local[1]")
try:
    print(ex.run(double, [1, 2, 3], None))
finally:
    ex.close()
"""


def test_starting_spark_leaks_no_pandas_future_warning():
    import pandas

    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    run = subprocess.run([sys.executable, "-c", JOB], cwd=ROOT, env=env, capture_output=True, text=True, timeout=540)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip().splitlines()[-1] == "[2, 4, 6]"
    assert "PySpark does not yet fully support pandas" not in run.stderr, (pandas.__version__, run.stderr[-2000:])
    assert "FutureWarning" not in run.stderr, run.stderr[-2000:]
