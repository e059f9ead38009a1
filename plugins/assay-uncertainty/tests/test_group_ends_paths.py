"""``group_ends`` on binary values takes a packed value sort for ``u >= 0`` and, mirrored, for ``u <= 0``
(``u = -confidence``, how torch-uncertainty's users pass it): both equal a plain stable argsort, exactly."""

from __future__ import annotations

import numpy as np
import pytest

from assay_uncertainty._curves import group_ends


def by_argsort(u, v):
    order = np.argsort(u, kind="stable")
    us, cum = u[order], np.cumsum(v[order])
    ends = np.append(np.flatnonzero(us[1:] != us[:-1]), u.size - 1)
    return ends + 1, cum[ends]


@pytest.mark.parametrize("seed", range(40))
def test_packed_and_mirrored_paths_equal_an_argsort(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    u = rng.random(n) if seed % 2 else rng.integers(0, 6, n) / 4  # with ties
    v = (rng.random(n) < rng.random()).astype(np.float64)
    if seed % 10 == 0:
        v[:] = 1.0
    for sign in (1.0, -1.0):
        K, S = group_ends(sign * u, v)
        K0, S0 = by_argsort(sign * u, v)
        assert K.dtype == np.int64 and S.dtype == np.float64
        np.testing.assert_array_equal(K, K0)
        np.testing.assert_array_equal(S, S0)
