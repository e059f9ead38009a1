"""The optional compiled kernels (``assay.compiled``): imported lazily, usable without a disk cache.

Their values and errors against the numpy path are tested in the uncertainty plugin
(``plugins/assay-uncertainty/tests/test_compiled_paths.py``), where the metrics that use them live.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from assay import compiled


def _run(code: str, **env: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env})
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_test_environment_has_numba():
    # `make setup` installs the 'fast' extra: the tests of both paths must not silently run one
    assert compiled.kernels() is not None
    assert compiled.backend().startswith("numba ")


@pytest.mark.slow
def test_importing_assay_and_the_metrics_does_not_import_numba():
    out = _run("import sys, assay, assay.functional, assay_uncertainty.calibration, assay_uncertainty.ensemble; "
               "print('numba' in sys.modules)")
    assert out.strip() == "False"


@pytest.mark.slow
def test_without_a_writable_cache_location_the_kernels_compile_in_the_process():
    # NUMBA_CACHE_LOCATOR_CLASSES limits numba to a locator that never applies to a file (IPython cells
    # only): numba's decorator then raises "cannot cache function ... no locator available", as for a
    # read-only install with a read-only home directory. The kernels must work all the same.
    code = (
        "import numpy as np\n"
        "from assay import compiled\n"
        "from assay.compiled import _kernels\n"
        "p = np.array([[0.25, 0.75], [0.5, 0.5]])\n"
        "pred, conf = compiled.top_label(p, validate=True, atol=1e-4)\n"
        "print(_kernels.CACHED, pred.tolist(), conf.tolist())\n"
    )
    out = _run(code, NUMBA_CACHE_LOCATOR_CLASSES="IPythonCacheLocator")
    assert out.split("\n")[0] == "False [1, 0] [0.75, 0.5]"
    assert _run(code).split("\n")[0] == "True [1, 0] [0.75, 0.5]"
