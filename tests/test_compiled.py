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
        "compiled.kernels()  # loaded explicitly: this small input alone would stay on the numpy path\n"
        "p = np.array([[0.25, 0.75], [0.5, 0.5]])\n"
        "pred, conf = compiled.top_label(p, validate=True, atol=1e-4)\n"
        "print(_kernels.CACHED, pred.tolist(), conf.tolist())\n"
    )
    out = _run(code, NUMBA_CACHE_LOCATOR_CLASSES="IPythonCacheLocator")
    assert out.split("\n")[0] == "False [1, 0] [0.75, 0.5]"
    assert _run(code).split("\n")[0] == "True [1, 0] [0.75, 0.5]"


@pytest.mark.slow
def test_a_small_input_does_not_load_numba_a_large_one_does_and_then_every_size_uses_it():
    # a fresh process: a small ECE stays on the numpy path (numba is not even imported), an input of
    # LOAD_MIN_VALUES values loads the kernels, and from then on a small input uses them as well
    code = (
        "import sys, numpy as np\n"
        "from assay import compiled\n"
        "from assay_uncertainty.calibration import multiclass_tallies\n"
        "rng = np.random.default_rng(0)\n"
        "def probs(n):\n"
        "    p = rng.random((n, 8)); return p / p.sum(1, keepdims=True), rng.integers(0, 8, n)\n"
        "used = []\n"
        "real = compiled.top_label_tallies\n"
        "def spy(*a, **k):\n"
        "    out = real(*a, **k); used.append(out is not None); return out\n"
        "compiled.top_label_tallies = spy\n"
        "import assay_uncertainty.calibration as cal\n"
        "small, big = probs(1000), probs(compiled.LOAD_MIN_VALUES // 8)\n"
        "multiclass_tallies(*small, 15, validate=True)\n"
        "print('numba' in sys.modules, used[-1])\n"
        "multiclass_tallies(*big, 15, validate=True)\n"
        "print('numba' in sys.modules, used[-1])\n"
        "multiclass_tallies(*small, 15, validate=True)\n"
        "print('numba' in sys.modules, used[-1])\n"
    )
    assert _run(code).split() == ["False", "False", "True", "True", "True", "True"]
