"""The first name lookup imports no numpy (issue 23: ``load_metric("accuracy")`` within 0.15 s).

numpy's import alone costs 0.10-0.15 s; the modules on the lookup path import it through
:mod:`assay.deferred`, which imports it on first use. A module-level ``np.float64`` in any of
them would import numpy again at once: this test is what notices.
"""

from __future__ import annotations

import json
import subprocess
import sys

from assay.deferred import np

LOOKUP = """
import json, sys
import assay
metric = assay.load_metric("accuracy")
before = sorted(m for m in sys.modules if m == "numpy" or m.startswith("numpy."))
result = assay.evaluate(["a", "b", "c", "a"], ["a", "b", "b", "b"], metrics=["accuracy"], n_resamples=0)
print(json.dumps({"before": before, "after": "numpy" in sys.modules,
                  "value": result.global_scores["accuracy"]}))
"""


def test_load_metric_imports_no_numpy_and_the_first_update_does():
    run = subprocess.run([sys.executable, "-c", LOOKUP], capture_output=True, text=True, check=True)
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert seen["before"] == []
    assert seen["after"] is True
    assert seen["value"] == 2 / 4  # a, b right; c, a wrong


def test_the_deferred_numpy_is_numpy():
    import numpy

    assert np.asarray is numpy.asarray
    assert isinstance(np.arange(3), np.ndarray)
    assert np.float64 is numpy.float64
    assert "asarray" in dir(np)
