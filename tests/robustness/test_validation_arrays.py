"""Random bad arrays for every registered metric, UE metric and aggregation.

Each entry point gets inputs holding NaN, +/-inf, None, a wrong dtype (strings, complex
numbers, objects), no examples, a wrong shape or number of dimensions, or mismatched
lengths, built by Hypothesis from a valid input (a metric's declared example). The only
accepted outcomes (docs/reliability.md):

- an :class:`~assay.errors.AssayError` (all are ``ValueError`` / ``TypeError``-family
  where they stand for bad input) whose message names the parameter or the position;
- NaN with an :class:`~assay.errors.UndefinedMetricWarning` (empty input).

Never a finite number, never a raw numpy / Python error (IndexError, ZeroDivisionError,
AxisError ...). The number of distinct bad inputs tried per entry point is counted and
checked by the last test (the counts are quoted in the reliability policy).
"""

from __future__ import annotations

import math
import re
import types
import typing
import warnings
from collections import defaultdict
from collections.abc import Hashable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import assay
from assay.errors import AssayError, UndefinedMetricWarning
from assay.plugins import PluginSystem

PS = PluginSystem()
EXAMPLES = 40  # Hypothesis examples per entry point
#: a message must name the parameter or the position that failed
NAMED = re.compile(r"predictions|references|probs|labels|uncertainty|quality|instance|uncertainty_map|features|"
                   r"\w\[\d")
NONFINITE = [math.nan, math.inf, -math.inf]
#: values that are never a valid number (for metrics on numbers)
NOT_NUMBERS = ["x", 1 + 2j, {"a": 1}, None, b"1", [0, 1]]
#: values that are never a valid label or text (for metrics on labels and strings)
NOT_LABELS = [None, {"a": 1}, math.nan, math.inf, [0, 1]]

TRIED: dict[str, set[str]] = defaultdict(set)


def _leaves(x, path=()):
    if isinstance(x, (list, tuple)):
        for i, v in enumerate(x):
            yield from _leaves(v, path + (i,))
    else:
        yield path


def _replace(x, path, value):
    if not path:
        return value
    out = list(x)
    out[path[0]] = _replace(out[path[0]], path[1:], value)
    return out


def _plain(x):
    return x.tolist() if isinstance(x, np.ndarray) else x


def _outcome(key: str, run, *, empty_value: float | None = None) -> None:
    """Run ``run()``: an AssayError naming the place, or NaN with an UndefinedMetricWarning.

    ``empty_value``: the documented value of an empty input besides NaN (the
    ``zero_division`` value of precision / recall / F1, as scikit-learn), also with the warning.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = run()
        except AssayError as exc:
            assert NAMED.search(str(exc)), f"{key}: the error names no parameter or position: {exc}"
            return
        except Exception as exc:  # noqa: BLE001 - the point of the test
            pytest.fail(f"{key}: raw {type(exc).__name__} instead of an assay error: {exc}")
    ok = isinstance(value, float) and (math.isnan(value) or value == empty_value)
    assert ok, f"{key}: returned {value!r} for a bad input"
    assert any(issubclass(w.category, UndefinedMetricWarning) for w in caught), (
        f"{key}: NaN without an UndefinedMetricWarning ({[str(w.message) for w in caught]})")


# --------------------------------------------------------------------------------------- metrics
def _metric_cases():
    out = []
    for entry in PS.registry("metric"):
        examples = entry.metadata.get("examples") or getattr(entry.factory, "examples", None)
        out.append(pytest.param(entry, examples[0], id=entry.name))
    return out


def _score(metric, predictions, references, task_data=None):
    res = assay.evaluate(predictions, references, metrics=[metric], n_resamples=0, task_data=task_data)
    return float(res.global_scores["score"])


def _label_type(tp, inside: bool = False) -> bool:
    """Whether ``tp`` types labels or text: ``str``, ``Hashable``, a union holding ``str`` (a label
    ``str | int | float | bool``), or a list / set / tuple of labels (a ranking, a multi-label set, NER pairs)."""
    if tp in (str, Hashable) or (inside and tp in (int, Any)):
        return True
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return str in args or all(_label_type(a, inside) for a in args)
    if origin in (list, set, frozenset, tuple):
        return bool(args) and all(_label_type(a, True) for a in args if a is not Ellipsis)
    return False


def _is_text_or_label(metric) -> bool:
    return _label_type(getattr(metric, "prediction_type", None))


@st.composite
def _bad_metric_input(draw, example, text_or_label: bool):
    preds = _plain(example["predictions"])
    refs = _plain(example.get("references"))
    kind = draw(st.sampled_from(["value", "value", "empty", "deeper", "length"]))
    if kind == "empty":
        return "empty", [], ([] if refs is not None else None)
    if kind == "deeper":
        return "deeper", [[p] for p in preds], refs
    if kind == "length":
        if refs is None:
            return "length", preds[:-1] + [[preds[-1]]], None  # a ragged batch
        return "length", preds, refs[:-1]
    target = draw(st.sampled_from(["predictions", "references"] if refs is not None else ["predictions"]))
    arr = preds if target == "predictions" else refs
    path = draw(st.sampled_from(list(_leaves(arr))))
    value = draw(st.sampled_from(NOT_LABELS if text_or_label else NONFINITE + NOT_NUMBERS))
    arr = _replace(arr, path, value)
    label = f"{target}{list(path)}={value!r}"
    return (label, arr, refs) if target == "predictions" else (label, preds, arr)


@pytest.mark.parametrize(("entry", "example"), _metric_cases())
def test_every_metric_rejects_bad_arrays(entry, example):
    overrides = example.get("overrides", {})
    text_or_label = _is_text_or_label(entry.create(**overrides))

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(_bad_metric_input(example, text_or_label))
    def check(case):
        label, preds, refs = case
        TRIED[f"metric {entry.name}"].add(f"{label} {preds!r} {refs!r}")
        metric = entry.create(**overrides)
        zero_division = getattr(metric, "zero_division", None)
        empty_value = (0.0 if zero_division == "warn" else zero_division) if label == "empty" else None
        # a metric of three inputs (SCOD's is_ood) gets its example's task_data: the bad value is in the other two
        task_data = _plain(example.get("task_data"))
        if task_data is not None and label == "empty":
            task_data = []
        _outcome(f"metric {entry.name} ({label})", lambda: _score(metric, preds, refs, task_data),
                 empty_value=empty_value)

    check()


# --------------------------------------------------------------------------------------- UE metrics
@st.composite
def _bad_ue_input(draw):
    n = draw(st.integers(2, 8))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    u = rng.random(n).tolist()
    q = rng.integers(0, 2, n).astype(float).tolist()
    kind = draw(st.sampled_from(["value", "value", "empty", "ndim", "length", "dtype"]))
    if kind == "empty":
        return "empty", [], []
    if kind == "ndim":
        which = draw(st.sampled_from(["2-D u", "2-D q", "scalar u"]))
        if which == "2-D u":
            return which, [u, u], q
        if which == "2-D q":
            return which, u, [q]
        return which, 0.5, q
    if kind == "length":
        return "length", u, q[:-1]
    target = draw(st.sampled_from(["uncertainty", "quality"]))
    i = draw(st.integers(0, n - 1))
    value = draw(st.sampled_from(NONFINITE + NOT_NUMBERS))
    if kind == "dtype":  # the whole array of another dtype
        arr = np.array(u if target == "uncertainty" else q, dtype=draw(st.sampled_from(["U8", "complex128", "O"])))
        if arr.dtype == object:
            arr[i] = {"a": 1}
        return f"{target} as {arr.dtype}", (arr if target == "uncertainty" else u), (arr if target == "quality" else q)
    arr = list(u if target == "uncertainty" else q)
    arr[i] = value
    label = f"{target}[{i}]={value!r}"
    return (label, arr, q) if target == "uncertainty" else (label, u, arr)


@pytest.mark.parametrize("entry", [pytest.param(e, id=e.name) for e in PS.registry("ue_metric")])
def test_every_ue_metric_rejects_bad_arrays(entry):
    metric = entry.create()

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(_bad_ue_input())
    def check(case):
        label, u, q = case
        TRIED[f"ue_metric {entry.name}"].add(f"{label} {u!r} {q!r}")
        _outcome(f"ue_metric {entry.name} ({label})", lambda: metric(u, q))

    check()


# --------------------------------------------------------------------------------------- aggregations
@st.composite
def _bad_map(draw):
    shape = draw(st.sampled_from([(6, 7), (3, 4, 5)]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    u = rng.random(shape)
    kind = draw(st.sampled_from(["value", "value", "empty", "ndim", "dtype"]))
    if kind == "empty":
        return "empty", np.zeros(draw(st.sampled_from([(0, 0), (0, 4), (2, 0, 3)])))
    if kind == "ndim":
        which = draw(st.sampled_from(["1-D", "4-D", "scalar", "nested ragged"]))
        return which, {"1-D": u.ravel(), "4-D": u[None, ...] if u.ndim == 3 else u[None, None],
                       "scalar": 0.5, "nested ragged": [[0.1, 0.2], [0.3]]}[which]
    if kind == "dtype":
        dt = draw(st.sampled_from(["U8", "complex128", "O"]))
        arr = u.astype(dt)
        if dt == "O":
            arr.flat[0] = None
        return f"dtype {dt}", arr
    pos = tuple(draw(st.integers(0, s - 1)) for s in shape)
    value = draw(st.sampled_from(NONFINITE))
    u[pos] = value
    return f"map{list(pos)}={value}", u


@pytest.mark.parametrize("entry", [pytest.param(e, id=e.name) for e in PS.registry("aggregation")])
def test_every_aggregation_rejects_bad_maps(entry):
    agg = entry.create(threshold=0.5) if entry.name == "threshold_mean" else entry.create()

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(_bad_map())
    def check(case):
        label, u = case
        TRIED[f"aggregation {entry.name}"].add(f"{label} {np.asarray(u, dtype=object).tolist()!r}")
        _outcome(f"aggregation {entry.name} ({label})", lambda: agg(u))

    check()


def test_zz_every_entry_point_got_enough_bad_inputs():
    """The count of distinct bad inputs per entry point (quoted in docs/reliability.md)."""
    assert TRIED, "run with the tests above"
    few = {k: len(v) for k, v in TRIED.items() if len(v) < 10}
    assert not few, f"too few distinct bad inputs: {few}"
    print("\nbad inputs tried:", ", ".join(f"{k}: {len(v)}" for k, v in sorted(TRIED.items())),
          "; total", sum(len(v) for v in TRIED.values()))
