"""Unit tests of :mod:`assay.validation` (parameter and array checks, the one warning)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.errors import InvalidParameterError, UndefinedMetricWarning
from assay.uncertainty.base import nan_with_warning
from assay.validation import (
    check_array,
    check_bool,
    check_choice,
    check_int,
    check_labels,
    check_number,
    check_probabilities,
    check_same_length,
    check_seed,
    check_type,
    undefined_metric,
)

# ------------------------------------------------------------------------------------------ parameters


@pytest.mark.parametrize("seed", [0, 7, 2**40, np.int64(3), None])
def test_check_seed_accepts_non_negative_integers_and_none(seed):
    got = check_seed(seed)
    assert got == (None if seed is None else int(seed))
    assert got is None or type(got) is int


@pytest.mark.parametrize("seed", [1.9, 1.0, -1, True, False, "3", np.float64(2.0), [1]])
def test_check_seed_rejects_floats_negatives_and_bools(seed):
    with pytest.raises(InvalidParameterError) as info:
        check_seed(seed, owner="evaluate")
    msg = str(info.value)
    assert msg.startswith("The 'seed' parameter of evaluate must be an integer >= 0 (or None). Got ")
    assert repr(seed)[:20] in msg and type(seed).__name__ in msg


def test_check_seed_without_none():
    with pytest.raises(InvalidParameterError, match=r"an integer >= 0\. Got None"):
        check_seed(None, allow_none=False)


def test_check_int_bounds_and_closed_ends():
    assert check_int(3, "n_bins", low=1) == 3
    assert check_int(np.int32(5), "k", low=0, high=5) == 5
    with pytest.raises(InvalidParameterError, match=r"The 'k' parameter of f must be an integer in \[0, 5\)\. Got 5"):
        check_int(5, "k", low=0, high=5, closed="left", owner="f")
    with pytest.raises(InvalidParameterError, match=r"integer >= 1\. Got True \(bool\)"):
        check_int(True, "n_bins", low=1)
    with pytest.raises(InvalidParameterError, match=r"Got 2\.0 \(float\)"):
        check_int(2.0, "n_bins")
    assert check_int(None, "n", allow_none=True) is None


def test_check_number():
    assert check_number(0.5, "tpr", low=0, high=1, closed="right") == 0.5
    assert check_number(1, "tpr", low=0, high=1) == 1.0
    for bad in (0, math.nan, math.inf, "0.5", True, None):
        with pytest.raises(InvalidParameterError, match=r"The 'tpr' parameter must be a finite number in \(0, 1\]"):
            check_number(bad, "tpr", low=0, high=1, closed="right")
    assert check_number(math.inf, "x", finite=False) == math.inf
    with pytest.raises(InvalidParameterError, match="must be a number"):
        check_number(math.nan, "x", finite=False)  # NaN is never a number here


def test_check_choice_bool_type():
    assert check_choice("macro", "average", ("micro", "macro")) == "macro"
    with pytest.raises(InvalidParameterError,
                       match=r"The 'average' parameter of f1 must be one of \{'micro', 'macro'\}\. Got 'mean' \(str\)"):
        check_choice("mean", "average", ("micro", "macro"), owner="f1")
    with pytest.raises(InvalidParameterError, match="one of"):
        check_choice(["unhashable"], "average", {"micro"})
    assert check_bool(np.bool_(True), "normalize") is True
    with pytest.raises(InvalidParameterError, match=r"true or false\. Got 1 \(int\)"):
        check_bool(1, "normalize")
    assert check_type(2.5, "beta", float) == 2.5
    with pytest.raises(InvalidParameterError, match=r"must be of type int or float\. Got True"):
        check_type(True, "beta", (int, float))


# ------------------------------------------------------------------------------------------ arrays


def test_check_array_shape_dtype_and_finite():
    a = check_array([1, 2, 3], "x")
    assert a.dtype == np.float64 and a.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(InvalidParameterError, match=r"f: expected `x` of shape \(N, C\); got shape \(3,\)"):
        check_array([1, 2, 3], "x", ndim=2, shape="(N, C)", owner="f")
    for bad, kind in ((["a", "b"], "string"), ([1 + 1j], "complex"), (np.array([1, None], dtype=object), "object")):
        with pytest.raises(InvalidParameterError,
                           match=rf"expected boolean or integer or .* in `x`; got dtype .*{kind}"):
            check_array(bad, "x")
    with pytest.raises(InvalidParameterError, match=r"`x\[1, 0\]` is -inf; expected finite values"):
        check_array([[1.0, 2.0], [-np.inf, np.nan]], "x")
    with pytest.raises(InvalidParameterError, match="ragged"):
        check_array([[1, 2], [3]], "x")
    with pytest.raises(InvalidParameterError, match="is empty"):
        check_array([], "x", allow_empty=False)
    with pytest.raises(InvalidParameterError, match=r"`x\[2\]` is 1\.5; expected values in \[0, 1\]"):
        check_array([0.0, 1.0, 1.5, -1.0], "x", low=0, high=1)
    with pytest.raises(InvalidParameterError, match="required; got None"):
        check_array(None, "x")


def test_check_array_overflowing_sum_of_finite_values_passes():
    # the finiteness screen is a sum; a sum that overflows falls back to the exact check
    big = np.full(4, 1e308)
    assert check_array(big, "x") is big


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=1, max_size=30))
def test_check_array_finite_agrees_with_numpy(values):
    a = np.array(values)
    finite = np.isfinite(a)
    if finite.all():
        check_array(a, "x")
    else:
        first = int(np.flatnonzero(~finite)[0])
        with pytest.raises(InvalidParameterError, match=rf"`x\[{first}\]` is "):
            check_array(a, "x")


def test_check_probabilities_names_the_first_bad_position():
    p = check_probabilities([[0.2, 0.8], [1.0, 0.0]])
    assert p.tolist() == [[0.2, 0.8], [1.0, 0.0]]
    with pytest.raises(InvalidParameterError, match=r"ece: `probs\[1, 0\]` is NaN; expected finite probabilities"):
        check_probabilities([[0.2, 0.8], [np.nan, 1.0]], owner="ece")
    with pytest.raises(InvalidParameterError, match=r"`probs\[0, 0\]` is -0\.2; expected probabilities in \[0, 1\]"):
        check_probabilities([[-0.2, 1.2]])
    with pytest.raises(InvalidParameterError, match=r"`probs\[0, 1\]` is 1\.2; expected probabilities in \[0, 1\]"):
        check_probabilities([[0.0, 1.2]])
    with pytest.raises(InvalidParameterError, match=r"`probs\[1, :\]` sums to 0\.9; expected each row"):
        check_probabilities([[0.5, 0.5], [0.4, 0.5]])
    with pytest.raises(InvalidParameterError, match=r"`probs\[3, 0, :\]` sums to 0\.8"):
        check_probabilities(np.full((3, 1, 2), 0.4), offset=3)  # a chunk starting at example 3
    # binary probabilities: values only
    assert check_probabilities([0.1, 0.9, 1.0], rows_sum_to_one=False).shape == (3,)
    with pytest.raises(InvalidParameterError, match=r"`probs\[2\]` is inf"):
        check_probabilities([0.1, 0.9, np.inf], rows_sum_to_one=False)


def test_check_same_length():
    assert check_same_length("f", a=[1, 2], b=np.zeros((2, 3))) == 2
    with pytest.raises(InvalidParameterError, match=r"f: expected the same length .*`a` has 2, `b` has 1"):
        check_same_length("f", a=[1, 2], b=[1])


def test_check_labels():
    labels = ["a", "b", 3]
    assert check_labels(labels) is labels
    for bad, shown in ((np.nan, "NaN"), (None, "None"), (np.inf, "inf"), ({"a": 1}, "{'a': 1}")):
        with pytest.raises(InvalidParameterError, match=rf"f: `labels\[1\]` is {shown}; expected a label"):
            check_labels([1, bad, 2], owner="f")
    with pytest.raises(InvalidParameterError, match=r"`y\[6\]` is NaN"):
        check_labels(np.array([0.0, 1.0, 2.0, 3.0, np.nan]), "y", offset=2)  # a chunk starting at 2
    y = check_labels([0.0, 1.0, 2.0], integer=True, n_classes=3)
    assert y.dtype == np.int64 and y.tolist() == [0, 1, 2]
    with pytest.raises(InvalidParameterError, match=r"`labels\[1\]` is 1\.5; expected integer class labels"):
        check_labels([0, 1.5], integer=True)
    with pytest.raises(InvalidParameterError, match=r"`labels\[1\]` is 3; expected a class index in \[0, 2\]"):
        check_labels([0, 3], integer=True, n_classes=3)
    with pytest.raises(InvalidParameterError, match="sequence of labels"):
        check_labels("abc")


def test_undefined_metric_and_its_old_name():
    for fn in (undefined_metric, nan_with_warning):
        with pytest.warns(UndefinedMetricWarning, match="no data"):
            assert math.isnan(fn("no data"))
    assert issubclass(UndefinedMetricWarning, UserWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UndefinedMetricWarning):
            undefined_metric("x")


def test_check_probabilities_keeps_a_float_dtype():
    # float32 ensembles stay float32: a float64 copy would double the memory of the check, and make the
    # metric's numbers depend on validate_args (the unchecked path computes in float32)
    from assay.validation import check_probabilities

    p = np.full((3, 2, 4), 0.25, dtype=np.float32)
    assert check_probabilities(p, "probs").dtype == np.float32
    assert check_probabilities(p, "probs") is p
    assert check_probabilities([[0.5, 0.5]], "probs").dtype == np.float64
