"""The compiled kernels (numba, ``assay.compiled``) against the numpy path and plain formulas.

Every test runs on both paths: ``path`` is "numba" (the kernels, asserted to be loaded: the
test environment installs the ``fast`` extra) or "numpy" (the selector replaced by one that
finds no numba). Values are compared with the numpy reference bit for bit and with formulas
written here; bad input must give the same error, naming the same place, on both paths.
"""

from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay import compiled
from assay.errors import InvalidParameterError, UndefinedMetricWarning
from assay.functional import bin_edges
from assay.validation import PROB_ATOL
from assay_uncertainty.calibration import (
    ECE,
    MCE,
    RMSCE,
    AdaptiveECE,
    multiclass_tallies,
    multiclass_tallies_numpy,
    top_label,
)
from assay_uncertainty.ensemble import Disagreement

NAN = math.nan
ECE_ROWS = (1 << 17) // 10  # rows per summation chunk of multiclass_tallies for 10 classes
EDGES_15 = bin_edges(15)  # the float64 edges of 15 bins (the probabilities of those tests are float64)
VOTE_ROWS = (1 << 18) // (5 * 10)  # examples per check chunk of the numpy votes() for (B, 5, 10)


@pytest.fixture(params=["numba", "numpy"])
def path(request, monkeypatch):
    if request.param == "numba":
        assert compiled.kernels() is not None, "numba is not importable: install the 'fast' extra (make setup does)"
    else:
        monkeypatch.setattr(compiled, "kernels", lambda: None)
    return request.param


def _numpy_only(monkeypatch):
    monkeypatch.setattr(compiled, "kernels", lambda: None)


def _outcome(fn):
    """The value, or the type and message of the error."""
    try:
        return ("value", fn())
    except (InvalidParameterError, ValueError) as exc:
        return ("error", type(exc).__name__, str(exc))


def _same(a, b):
    assert a[0] == b[0], (a, b)
    if a[0] == "error":
        assert a == b
    else:
        np.testing.assert_array_equal(np.asarray(a[1]), np.asarray(b[1]))


def _probs(rng, n, c, dtype=np.float64):
    lg = rng.standard_normal((n, c))
    p = np.exp(lg)
    p /= p.sum(axis=1, keepdims=True)
    return p.astype(dtype)


def _reference_tallies(p, y, n_bins):
    """Per bin: count and sum of acc - conf, from a loop over rows (bins: floor(n_bins * conf), 1.0 in the last).

    ``acc - conf`` and ``n_bins * conf`` are computed in the input's dtype, as assay does (float32 in, float32
    differences, summed in float64)."""
    t = p.dtype.type
    count = np.zeros(n_bins)
    gap = np.zeros(n_bins)
    for row, label in zip(p, y):
        k = int(np.argmax(row))
        conf = row[k]
        b = min(int(math.floor(conf * t(n_bins))), n_bins - 1)
        count[b] += 1
        gap[b] += float(t(1.0 if k == label else 0.0) - conf)
    return count, gap


# ----------------------------------------------------------------------------- values


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_tallies_equal_the_numpy_path_to_the_last_bit_and_a_row_loop(path, dtype):
    rng = np.random.default_rng(3)
    n = 3 * ECE_ROWS + 7  # several summation chunks, the last one short
    p = _probs(rng, n, 10, dtype)
    p[::97] = np.float32(0.1)  # ten-way ties: argmax is the first class
    p[5] = 0.0
    p[5, 4] = 1.0  # confidence exactly 1.0: the last bin
    y = rng.integers(0, 10, n)
    got = multiclass_tallies(p, y, 15, validate=True)
    ref = multiclass_tallies_numpy(p, y, 15, validate=True)
    np.testing.assert_array_equal(got, ref)  # same order of summation: identical
    count, gap = _reference_tallies(p[:2000], y[:2000], 15)
    small = multiclass_tallies(p[:2000], y[:2000], 15, validate=True)
    np.testing.assert_array_equal(small[0], count)
    np.testing.assert_allclose(small[1], gap, rtol=1e-12, atol=1e-12)


def test_ece_mce_rmsce_against_the_formula(path):
    rng = np.random.default_rng(4)
    p = _probs(rng, 5000, 7)
    y = rng.integers(0, 7, 5000)
    pred = p.argmax(axis=1)
    conf = p.max(axis=1)
    acc = (pred == y).astype(float)
    b = np.minimum(np.floor(conf * 15).astype(int), 14)
    ece, mce, rms = 0.0, 0.0, 0.0
    for k in range(15):
        sel = b == k
        if sel.any():
            g = abs(acc[sel].mean() - conf[sel].mean())
            ece += sel.mean() * g
            mce = max(mce, g)
            rms += sel.mean() * g * g
    assert ECE().update(p, y).compute_scores()["ece"] == pytest.approx(ece, rel=1e-12)
    assert MCE().update(p, y).compute_scores()["mce"] == pytest.approx(mce, rel=1e-12)
    assert RMSCE().update(p, y).compute_scores()["rmsce"] == pytest.approx(math.sqrt(rms), rel=1e-12)


def test_non_contiguous_read_only_and_empty_inputs(path):
    rng = np.random.default_rng(5)
    wide = _probs(rng, 600, 8)
    y = rng.integers(0, 4, 300)
    p = np.asfortranarray(wide[::2, :4] / wide[::2, :4].sum(axis=1, keepdims=True))  # strided, then Fortran
    ro = np.ascontiguousarray(p)
    ro.setflags(write=False)
    big_endian = p.astype(">f8")  # no kernel for a non-native byte order: numpy
    ref = _reference_tallies(p, y, 10)
    for q in (p, ro, big_endian):
        t = multiclass_tallies(q, y, 10, validate=True)
        np.testing.assert_array_equal(t[0], ref[0])
        np.testing.assert_allclose(t[1], ref[1], rtol=1e-12, atol=1e-12)
        conf, acc = top_label(q, y, validate=True)
        np.testing.assert_array_equal(conf, p.max(axis=1))
        np.testing.assert_array_equal(acc, p.argmax(axis=1) == y)
    with pytest.warns(UndefinedMetricWarning, match="no data"):
        assert math.isnan(ECE().update(np.zeros((0, 3)), []).compute_scores()["ece"])
    np.testing.assert_array_equal(multiclass_tallies(np.zeros((0, 3)), np.zeros(0, int), 4), np.zeros((2, 4)))
    assert Disagreement(reduction="none").update(np.zeros((0, 3, 2))).compute().shape == (0,)


def test_signed_zero_and_single_class_rows(path):
    p = np.array([[-0.0, 1.0, 0.0], [0.5, -0.0, 0.5], [0.0, 0.0, 1.0], [-0.0, 0.0, 1.0]])
    conf, acc = top_label(p, np.array([1, 0, 2, 1]), validate=True)
    np.testing.assert_array_equal(conf, [1.0, 0.5, 1.0, 1.0])
    np.testing.assert_array_equal(acc, [True, True, True, False])
    one = np.ones((4, 1))
    np.testing.assert_array_equal(multiclass_tallies(one, np.zeros(4, int), 3, validate=True), [[0, 0, 4], [0, 0, 0]])


def _reference_disagreement(p):
    n = p.shape[1]
    out = []
    for e in p:
        votes = Counter(int(np.argmax(m)) for m in e)
        out.append(1.0 - sum(k * (k - 1) / 2 for k in votes.values()) / (n * (n - 1) / 2))
    return np.array(out)


@pytest.mark.parametrize("members", [2, 3, 10, 15])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_disagreement_against_the_vote_count(path, members, dtype):
    rng = np.random.default_rng(members)
    p = rng.dirichlet(np.full(6, 0.3), size=(400, members)).astype(dtype)
    p[::7, :, :] = p[::7, :1, :]  # all members agree
    p[3] = 1 / 6  # six-way ties in every member: all vote class 0
    # float16 (no kernel: numpy) rounds row sums by more than 1e-4, so its checks are off here
    got = Disagreement(reduction="none", validate_args=dtype is not np.float16).update(p).compute()
    np.testing.assert_array_equal(got, _reference_disagreement(p))


def test_adaptive_ece_on_both_paths(path):
    rng = np.random.default_rng(6)
    p = _probs(rng, 3000, 5)
    y = rng.integers(0, 5, 3000)
    conf, acc = p.max(axis=1), (p.argmax(axis=1) == y).astype(float)
    order = np.lexsort((acc, conf))
    parts = np.array_split(order, 15)
    ref = sum(abs(acc[i].sum() - conf[i].sum()) for i in parts) / 3000
    assert AdaptiveECE().update(p, y).compute_scores()["adaptive_ece"] == pytest.approx(ref, rel=1e-12)


# ----------------------------------------------------------------------------- errors

_ECE_N = 3 * ECE_ROWS + 7
_ECE_PLACES = [0, ECE_ROWS - 1, ECE_ROWS, _ECE_N // 2, _ECE_N - 1]
_BAD_VALUES = {
    "NaN": (NAN, "is NaN; expected finite probabilities"),
    "inf": (math.inf, "is inf; expected finite probabilities"),
    "-inf": (-math.inf, "is -inf; expected finite probabilities"),
    "negative": (-0.25, "is -0.25; expected probabilities in [0, 1]"),
    "above one": (1.5, "is 1.5; expected probabilities in [0, 1]"),
}


@pytest.mark.parametrize("place", _ECE_PLACES)
@pytest.mark.parametrize("bad", list(_BAD_VALUES))
def test_ece_bad_value_error_names_the_place_on_both_paths(monkeypatch, place, bad):
    rng = np.random.default_rng(place)
    p = _probs(rng, _ECE_N, 10)
    y = rng.integers(0, 10, _ECE_N)
    value, text = _BAD_VALUES[bad]
    p[place, 3] = value
    flagged = compiled.top_label_tallies(p, y, 15, edges=EDGES_15, rows=ECE_ROWS, validate=True, atol=PROB_ATOL)
    assert flagged is None
    fast = _outcome(lambda: ECE().update(p, y))
    _numpy_only(monkeypatch)
    slow = _outcome(lambda: ECE().update(p, y))
    assert fast == slow
    assert fast[0] == "error" and f"ece: `probs[{place}, 3]` {text}." == fast[2]


@pytest.mark.parametrize("place", _ECE_PLACES)
@pytest.mark.parametrize("moved", [1e-12, 0.01, 0.6])
def test_a_negative_value_in_a_row_that_sums_to_one_is_an_error_on_both_paths(monkeypatch, place, moved):
    rng = np.random.default_rng(place)
    p = _probs(rng, _ECE_N, 10)
    y = rng.integers(0, 10, _ECE_N)
    p[place, 8] += p[place, 2] + moved  # the row still sums to 1 (to rounding), probs[place, 2] < 0
    p[place, 2] = -moved
    q = p[: 2 * VOTE_ROWS].reshape(-1, 2, 10)
    assert compiled.top_label_tallies(p, y, 15, edges=EDGES_15, rows=ECE_ROWS, validate=True,
                                      atol=PROB_ATOL) is None
    fast = [_outcome(lambda: ECE().update(p, y)), _outcome(lambda: AdaptiveECE().update(p, y)),
            _outcome(lambda: Disagreement().update(q).compute())]
    _numpy_only(monkeypatch)
    assert fast == [_outcome(lambda: ECE().update(p, y)), _outcome(lambda: AdaptiveECE().update(p, y)),
                    _outcome(lambda: Disagreement().update(q).compute())]
    assert fast[0][2] == f"ece: `probs[{place}, 2]` is {-moved!r}; expected probabilities in [0, 1]."
    if place < 2 * VOTE_ROWS:
        e, m = divmod(place, 2)
        assert f"`probs[{e}, {m}, 2]` (example {e}, member {m}, class 2) is {-moved!r}" in fast[2][2]


@pytest.mark.parametrize("place", _ECE_PLACES)
def test_ece_row_sum_error_names_the_row_on_both_paths(monkeypatch, place):
    rng = np.random.default_rng(place)
    p = _probs(rng, _ECE_N, 10)
    y = rng.integers(0, 10, _ECE_N)
    p[place] *= 0.9
    fast = _outcome(lambda: ECE().update(p, y))
    _numpy_only(monkeypatch)
    assert fast == _outcome(lambda: ECE().update(p, y))
    assert fast[0] == "error" and re.match(rf"ece: `probs\[{place}, :\]` sums to 0\.(9|8999)", fast[2])


def test_the_first_problem_in_order_is_named_on_both_paths(monkeypatch):
    # a NaN after a negative value in the same chunk: the numpy checks name the NaN (finiteness first)
    rng = np.random.default_rng(7)
    p = _probs(rng, 1000, 10)
    y = rng.integers(0, 10, 1000)
    p[10, 1] = -0.5
    p[20, 2] = NAN
    fast = _outcome(lambda: ECE().update(p, y))
    fast_top = _outcome(lambda: AdaptiveECE().update(p, y))
    _numpy_only(monkeypatch)
    assert fast == _outcome(lambda: ECE().update(p, y))
    assert fast_top == _outcome(lambda: AdaptiveECE().update(p, y))
    assert "`probs[20, 2]` is NaN" in fast[2] and "`probs[20, 2]` is NaN" in fast_top[2]


@pytest.mark.parametrize("offset", [0.99e-4, 0.99999e-4, 1.00001e-4, 1.01e-4, -0.99e-4, -1.01e-4])
def test_rows_at_the_tolerance_are_judged_as_numpy_judges_them(monkeypatch, offset):
    rng = np.random.default_rng(8)
    p = _probs(rng, 100, 4)
    y = rng.integers(0, 4, 100)
    p[50, 0] += offset
    e = _outcome(lambda: ECE().update(p, y).compute_scores()["ece"])
    a = _outcome(lambda: AdaptiveECE().update(p, y).compute_scores()["adaptive_ece"])
    _numpy_only(monkeypatch)
    _same(e, _outcome(lambda: ECE().update(p, y).compute_scores()["ece"]))
    _same(a, _outcome(lambda: AdaptiveECE().update(p, y).compute_scores()["adaptive_ece"]))
    assert (e[0] == "error") == (abs(p[50].sum() - 1) > PROB_ATOL)


_DIS_B = 2 * VOTE_ROWS + 3
_DIS_PLACES = [(0, 0), (VOTE_ROWS - 1, 4), (VOTE_ROWS, 2), (_DIS_B // 2, 1), (_DIS_B - 1, 4)]


@pytest.mark.parametrize("place", _DIS_PLACES)
@pytest.mark.parametrize("bad", [*_BAD_VALUES, "row sum"])
def test_disagreement_errors_name_the_place_on_both_paths(monkeypatch, place, bad):
    rng = np.random.default_rng(place[0])
    p = rng.dirichlet(np.ones(10), size=(_DIS_B, 5)).astype(np.float32)
    e, m = place
    if bad == "row sum":
        p[e, m] *= np.float32(1.01)
    else:
        p[e, m, 6] = _BAD_VALUES[bad][0]
    assert compiled.vote_pairs(p, validate=True, atol=PROB_ATOL) is None  # flagged
    fast = _outcome(lambda: Disagreement().update(p))
    _numpy_only(monkeypatch)
    assert fast == _outcome(lambda: Disagreement().update(p))
    where = f"`probs[{e}, {m}, :]` (example {e}, member {m})" if bad == "row sum" else \
        f"`probs[{e}, {m}, 6]` (example {e}, member {m}, class 6) {_BAD_VALUES[bad][1]}."
    assert fast[0] == "error" and where in fast[2] and fast[2].startswith("disagreement: ")


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning")
@pytest.mark.parametrize("value", [NAN, math.inf, -0.5, 1.5, 20.0])
def test_unchecked_input_gives_what_the_numpy_path_gives(monkeypatch, value):
    rng = np.random.default_rng(9)
    p = _probs(rng, 200, 6)
    y = rng.integers(0, 6, 200)
    p[17, 2] = value
    q = rng.dirichlet(np.ones(6), size=(50, 4))
    q[17, 1, 2] = value
    outcomes = [
        _outcome(lambda: ECE(validate_args=False).update(p, y).compute_scores()["ece"]),
        _outcome(lambda: top_label(p, y, validate=False)),
        _outcome(lambda: Disagreement(reduction="none", validate_args=False).update(q).compute()),
    ]
    _numpy_only(monkeypatch)
    numpy_outcomes = [
        _outcome(lambda: ECE(validate_args=False).update(p, y).compute_scores()["ece"]),
        _outcome(lambda: top_label(p, y, validate=False)),
        _outcome(lambda: Disagreement(reduction="none", validate_args=False).update(q).compute()),
    ]
    for a, b in zip(outcomes, numpy_outcomes):
        _same(a, b)


_SPECIAL = st.sampled_from([0.0, -0.0, 1.0, 0.5, 0.25, NAN, -NAN, math.inf, -math.inf, -1e-9, 1 + 5e-5, 1e-300])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_small_input_gives_the_same_outcome_on_both_paths(monkeypatch, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    c = data.draw(st.integers(1, 9))
    dtype = data.draw(st.sampled_from([np.float64, np.float32]))
    p = rng.dirichlet(np.ones(c), size=30)
    for _ in range(data.draw(st.integers(0, 4))):  # a few special values at random places
        p[rng.integers(30), rng.integers(c)] = data.draw(_SPECIAL)
    for _ in range(data.draw(st.integers(0, 2))):  # mass moved inside a row: negative or above 1, sum kept
        r, i, j = rng.integers(30), rng.integers(c), rng.integers(c)
        d = data.draw(st.sampled_from([1e-9, 0.3, 1.0]))
        p[r, i] -= d
        p[r, j] += d
    p = p.astype(dtype)
    y = rng.integers(0, c, 30)
    validate = data.draw(st.booleans())
    b = data.draw(st.integers(1, 16))
    q = p.reshape(6, 5, c)
    runs = [
        lambda: multiclass_tallies(p, y, b, validate=validate),
        lambda: top_label(p, y, validate=validate),
        lambda: Disagreement(reduction="none", validate_args=validate).update(q).compute(),
    ]
    with np.errstate(all="ignore"):
        fast = [_outcome(r) for r in runs]
        with monkeypatch.context() as mp:
            _numpy_only(mp)
            slow = [_outcome(r) for r in runs]
    for a, s in zip(fast, slow):
        if a[0] == "value" and isinstance(a[1], tuple):
            assert s[0] == "value"
            for x, z in zip(a[1], s[1]):
                np.testing.assert_array_equal(x, z)
        else:
            _same(a, s)


# ----------------------------------------------------------------------------- the screen's threshold


def test_the_threshold_covers_the_rounding_of_both_row_sums():
    assert compiled.threshold(np.dtype(np.float64), 10, PROB_ATOL) == pytest.approx(PROB_ATOL, abs=1e-14)
    t32 = compiled.threshold(np.dtype(np.float32), 100, PROB_ATOL)
    assert PROB_ATOL - 7e-6 < t32 < PROB_ATOL - 5.9e-6  # 99 unit roundoffs of float32, and a little
    assert compiled.threshold(np.dtype(np.float32), 5000, PROB_ATOL) < 0


def test_float32_rows_too_wide_for_the_screen_use_numpy(path):
    rng = np.random.default_rng(10)
    p = rng.dirichlet(np.ones(3000), size=(4, 3)).astype(np.float32)
    assert compiled.vote_pairs(p, validate=True, atol=PROB_ATOL) is None  # no threshold left: numpy
    np.testing.assert_array_equal(Disagreement(reduction="none").update(p).compute(), _reference_disagreement(p))
