"""Spark's own chatter stays out of assay's output unless asked for (one subprocess: a fresh JVM).

Before, ``assay parse-eval --spark local[1]`` printed the JVM's console lines on stderr
(``Using Spark's default log4j profile``, ``Setting default log level to "WARN"``, log4j
``WARN`` lines). Now a context assay creates logs errors only, and the JVM's console output
goes to a log file shown only when the JVM fails to start.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyspark  # noqa: F401 - the spark extra, installed by make test; a missing one must fail
import pytest

pytestmark = pytest.mark.spark  # a subprocess that starts its own local Spark context

ROOT = Path(__file__).resolve().parents[2]
GOLD = ("1\tA\ta\tNOUN\t_\t_\t2\tnsubj\t_\t_\n2\tB\tb\tVERB\t_\t_\t0\troot\t_\t_\n"
        "3\tC\tc\tNOUN\t_\t_\t2\tobj\t_\t_\n\n")


def test_spark_run_prints_no_spark_chatter(tmp_path):
    (tmp_path / "g.conllu").write_text(GOLD)
    (tmp_path / "s.conllu").write_text(GOLD.replace("\t2\tobj", "\t1\tobj"))
    env = {k: v for k, v in os.environ.items() if k not in ("ASSAY_SPARK_LOG", "PYSPARK_GATEWAY_PORT")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    done = subprocess.run([sys.executable, "-m", "assay", "parse-eval", str(tmp_path / "g.conllu"),
                           str(tmp_path / "s.conllu"), "--spark", "local[1]", "--json"],
                          env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for chatter in ("log4j", "WARN", "Setting default log level", "setLogLevel", "incubator", "[Stage"):
        assert chatter not in done.stderr, done.stderr
    assert '"correct": 2' in done.stdout  # UAS 2 of 3: C attached to A
    assert "UAS (parallel, Spark (master local[1])):" in done.stderr
