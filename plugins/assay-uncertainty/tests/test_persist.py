"""UEManager save / load: manifest, stats, non-finite values, and every tampered field.

Expected values come from the in-memory manager that was saved (the save must give it
back exactly) and, for the format, from a second reading of the files with ``json`` /
``hashlib`` / ``numpy`` in the test.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import warnings

import numpy as np
import pytest

from assay.errors import SaveFormatError
from assay_uncertainty.manager import UEManager

RECORDS = [
    {"id": "a", "answer": "x", "log_probs": [-0.1, -0.2], "correct": 1, "claim_spans": [[0, 1], [1, 2]],
     "claim_correct": [1, 0], "top_logprobs": [[-0.1, -3.0], [-0.2]]},
    {"id": "b", "answer": "NaN", "log_probs": [-1.0], "correct": 0, "claim_spans": [[0, 1]], "claim_correct": [0],
     "top_logprobs": [[-1.0, -1.5, -2.0]]},
    {"id": "c", "answer": "z", "log_probs": [-0.5, -0.5, -0.5], "correct": 1, "claim_spans": [[0, 3]],
     "claim_correct": [1], "top_logprobs": [[-0.5], [-0.6, -0.9], [-0.5]]},
]
ESTIMATORS = ["msp", "claim_probability", "mean_token_entropy"]


def _manager():
    man = UEManager(RECORDS, estimators=ESTIMATORS, gen_metrics=["accuracy", "claim_accuracy"],
                    ue_metrics=["prr", "roc_auc"])
    man()
    return man


def assert_same(a, b):
    """Two managers hold the same values (NaN equals NaN)."""
    assert a.n_examples == b.n_examples
    assert (a.estimator_names, a.gen_metric_names, a.ue_metric_names) == \
        (b.estimator_names, b.gen_metric_names, b.ue_metric_names)
    for x, y in ((a.estimations, b.estimations), (a.gen_metrics, b.gen_metrics)):
        assert x.keys() == y.keys()
        for k in x:
            if k[0] == "sequence":
                np.testing.assert_array_equal(x[k], y[k])
            else:
                assert len(x[k]) == len(y[k])
                for u, v in zip(x[k], y[k]):
                    np.testing.assert_array_equal(u, v)
    assert a.metrics.keys() == b.metrics.keys()
    for k in a.metrics:
        assert a.metrics[k] == b.metrics[k] or (math.isnan(a.metrics[k]) and math.isnan(b.metrics[k])), k
    assert a.dropped == b.dropped and a.notes == b.notes


def test_roundtrip_keeps_everything_and_stats_let_estimators_run_again(tmp_path):
    man = _manager()
    man.save(tmp_path / "run")
    again = UEManager.load(tmp_path / "run")
    assert_same(man, again)
    # the statistics are saved: the same estimators on the loaded stats give the same values
    assert set(again.stats) == set(man.stats)
    rerun = UEManager(again.stats, estimators=ESTIMATORS, gen_metrics=["accuracy", "claim_accuracy"],
                      ue_metrics=["prr", "roc_auc"])
    rerun()
    assert_same(man, rerun)
    from assay.plugins import load

    for name in ESTIMATORS:
        est = load("estimator", name)
        level = man.levels[name]
        fresh, loaded = est(man.stats), est(again.stats)
        for u, v in zip(fresh, loaded):
            np.testing.assert_array_equal(np.asarray(u, dtype=float), np.asarray(v, dtype=float))
        assert (level, name) in again.estimations
    # rescore on a loaded manager equals rescore on the original
    assert again.rescore(["rcc_auc"]) == man.rescore(["rcc_auc"])
    # the answer "NaN" is text and stays text
    assert again.stats["answer"] == ["x", "NaN", "z"]
    assert again.stats["correct"] == [1, 0, 1]


def test_non_finite_metrics_are_standard_json_and_round_trip(tmp_path):
    man = _manager()
    keys = list(man.metrics)
    man.metrics[keys[0]], man.metrics[keys[1]], man.metrics[keys[2]] = math.inf, -math.inf, math.nan
    man.save(tmp_path / "run")
    text = (tmp_path / "run" / "manager.json").read_text()

    def refuse(name):
        raise AssertionError(f"non-standard constant {name}")

    doc = json.loads(text, parse_constant=refuse)  # standard JSON only
    values = {(m["level"], m["estimator"], m["gen_metric"], m["ue_metric"]): m["value"] for m in doc["metrics"]}
    assert [values[k] for k in keys[:3]] == ["Infinity", "-Infinity", "NaN"]
    again = UEManager.load(tmp_path / "run")
    assert again.metrics[keys[0]] == math.inf and again.metrics[keys[1]] == -math.inf
    assert math.isnan(again.metrics[keys[2]])


def test_manifest_names_shapes_dtypes_and_checksum(tmp_path):
    _manager().save(tmp_path / "run")
    doc = json.loads((tmp_path / "run" / "manager.json").read_text())
    raw = (tmp_path / "run" / "arrays.npz").read_bytes()
    assert doc["version"] == 2 and doc["npz"]["size"] == len(raw)
    assert doc["npz"]["sha256"] == hashlib.sha256(raw).hexdigest()
    with np.load(io.BytesIO(raw), allow_pickle=False) as z:
        assert {k: {"dtype": z[k].dtype.str, "shape": list(z[k].shape)} for k in z.files} == doc["npz"]["arrays"]
    body = {k: v for k, v in doc.items() if k != "content_sha256"}
    canon = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert doc["content_sha256"] == hashlib.sha256(canon.encode()).hexdigest()


def test_other_files_in_the_folder_survive_a_new_save(tmp_path):
    man = _manager()
    man.save(tmp_path / "run")
    (tmp_path / "run" / "table.md").write_text("my table")
    (tmp_path / "run" / "plots").mkdir()
    (tmp_path / "run" / "plots" / "a.png").write_bytes(b"png")
    (tmp_path / "run").chmod(0o750)
    man.save(tmp_path / "run")
    assert (tmp_path / "run").stat().st_mode & 0o777 == 0o750
    assert (tmp_path / "run" / "table.md").read_text() == "my table"
    assert (tmp_path / "run" / "plots" / "a.png").read_bytes() == b"png"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # no .old, no temporary folder left


def test_version_1_saves_still_load(tmp_path):
    # the layout assay 0.1 wrote: no manifest, no stats, NaN as null
    run = tmp_path / "old"
    run.mkdir()
    np.savez(run / "arrays.npz", a0=np.array([0.3, 1.0, 1.5]), a1=np.array([1.0, 0.0, 1.0]))
    doc = {"format": "assay.uncertainty.UEManager", "version": 1, "n_examples": 3, "nan_policy": "drop",
           "estimators": ["msp"], "gen_metrics": ["accuracy"], "ue_metrics": ["prr"],
           "arrays": [{"kind": "estimation", "level": "sequence", "name": "msp", "key": "a0"},
                      {"kind": "gen_metric", "level": "sequence", "name": "accuracy", "key": "a1"}],
           "metrics": [{"level": "sequence", "estimator": "msp", "gen_metric": "accuracy", "ue_metric": "prr",
                        "value": None}], "dropped": [], "notes": []}
    (run / "manager.json").write_text(json.dumps(doc))
    man = UEManager.load(run)
    np.testing.assert_array_equal(man.estimations[("sequence", "msp")], [0.3, 1.0, 1.5])
    assert math.isnan(man.metrics[("sequence", "msp", "accuracy", "prr")])
    # msp order .3, 1.0, 1.5 -> correct 1, 0, 1 -> raw PRR 13/18 (hand value of test_manager)
    assert man.rescore(["prr"])[("sequence", "msp", "accuracy", "prr")] == pytest.approx(13 / 18)


# ---------------------------------------------------------------- tampering
def _doc(run):
    return json.loads((run / "manager.json").read_text())


def _write(run, doc):
    (run / "manager.json").write_text(json.dumps(doc, indent=1))


def _reseal(run, arrays=None, doc=None):
    """Rewrite the npz (when given) and update size, sha256, shapes and the digest, as a careful forger would."""
    if arrays is not None:
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        (run / "arrays.npz").write_bytes(buf.getvalue())
    doc = doc if doc is not None else _doc(run)
    raw = (run / "arrays.npz").read_bytes()
    doc["npz"]["size"], doc["npz"]["sha256"] = len(raw), hashlib.sha256(raw).hexdigest()
    try:
        with np.load(io.BytesIO(raw), allow_pickle=False) as z:
            doc["npz"]["arrays"] = {k: {"dtype": z[k].dtype.str, "shape": list(z[k].shape)} for k in z.files}
    except Exception:  # noqa: BLE001 - an unreadable npz keeps its old manifest
        pass
    body = {k: v for k, v in doc.items() if k != "content_sha256"}
    canon = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    doc["content_sha256"] = hashlib.sha256(canon.encode()).hexdigest()
    _write(run, doc)


def _arrays(run):
    with np.load(run / "arrays.npz", allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _set(path, value):
    def edit(doc):
        obj = doc
        for p in path[:-1]:
            obj = obj[p]
        if value is KeyError:
            del obj[path[-1]]
        else:
            obj[path[-1]] = value
    return edit


def _swap_keys(doc):
    # a0 (msp) and the accuracy values (both sequence level): shapes agree, the digest does not
    keys = [e["key"] for e in doc["arrays"]]
    i, j = 0, [e["name"] for e in doc["arrays"]].index("accuracy")
    doc["arrays"][i]["key"], doc["arrays"][j]["key"] = keys[j], keys[i]


def _drop_entry(doc):
    del doc["arrays"][0]


def _metric_value(doc):
    doc["metrics"][0]["value"] = 0.5 if doc["metrics"][0]["value"] != 0.5 else 0.25


# (edit of manager.json, field the error must name)
JSON_TAMPERS = [
    (_set(["format"], "other"), "format"),
    (_set(["version"], 99), "version"),
    (_set(["version"], "2"), "version"),
    (_set(["version"], KeyError), "version"),
    (_set(["version"], 0), "version"),
    (_set(["n_examples"], 999), "n_examples"),
    (_set(["n_examples"], -1), "n_examples"),
    (_set(["n_examples"], "3"), "n_examples"),
    (_set(["n_examples"], True), "n_examples"),
    (_set(["n_examples"], KeyError), "n_examples"),
    (_set(["nan_policy"], "skip"), "nan_policy"),
    (_set(["estimators"], "msp"), "estimators"),
    (_set(["estimators"], KeyError), "estimators"),
    (_set(["gen_metrics"], [1]), "gen_metrics[0]"),
    (_set(["ue_metrics"], KeyError), "ue_metrics"),
    (_set(["arrays"], {}), "arrays"),
    (_set(["arrays", 0, "level"], "paragraph"), "arrays[0].level"),
    (_set(["arrays", 0, "kind"], "weights"), "arrays[0].kind"),
    (_set(["arrays", 0, "name"], "other"), "arrays[0].name"),
    (_set(["arrays", 0, "key"], "a99"), "arrays[0].key"),
    (_set(["arrays", 1, "key"], "a0"), "arrays[1].key"),
    (_set(["arrays", 0, "level"], KeyError), "arrays[0].level"),
    (_set(["arrays", 0], "a0"), "arrays[0]"),
    (_swap_keys, "content_sha256"),
    (_drop_entry, "a0"),
    (_set(["metrics", 0, "value"], "high"), "metrics[0].value"),
    (_set(["metrics", 0, "value"], [1]), "metrics[0].value"),
    (_set(["metrics", 0, "value"], KeyError), "metrics[0].value"),
    (_metric_value, "content_sha256"),
    (_set(["metrics", 0, "estimator"], "nope"), "metrics[0].estimator"),
    (_set(["metrics", 0, "gen_metric"], "claim_accuracy"), "metrics[0].gen_metric"),
    (_set(["metrics", 0, "ue_metric"], KeyError), "metrics[0].ue_metric"),
    (_set(["dropped"], [{"level": "sequence", "estimator": "msp", "gen_metric": "accuracy", "count": -1}]),
     "dropped[0].count"),
    (_set(["dropped"], [{"level": "sequence"}]), "dropped[0].estimator"),
    (_set(["dropped"], [{"level": "sequence", "estimator": "nope", "gen_metric": "accuracy", "count": 1}]),
     "dropped[0].estimator"),
    (_set(["notes"], "x"), "notes"),
    (_set(["notes"], ["ok"]), "content_sha256"),
    (_set(["stats", 0, "depth"], 99), "stats[0].depth"),
    (_set(["stats", 0, "key"], "zz"), "stats[0].key"),
    (_set(["stats", 1, "name"], "id"), "stats[1].name"),
    (_set(["stats"], KeyError), "stats"),
    (_set(["npz", "sha256"], "0" * 64), "npz.sha256"),
    (_set(["npz", "size"], 1), "npz.size"),
    (_set(["npz", "arrays", "a0", "shape"], [4]), "npz.arrays.a0"),
    (_set(["npz", "arrays", "a0", "dtype"], "<i8"), "npz.arrays.a0"),
    (_set(["npz", "arrays", "a0"], KeyError), "npz.arrays"),
    (_set(["npz"], KeyError), "npz"),
    (_set(["content_sha256"], KeyError), "content_sha256"),
    (_set(["content_sha256"], "0" * 64), "content_sha256"),
]


@pytest.mark.parametrize("edit, field", JSON_TAMPERS, ids=[f"{i}-{f}" for i, (_, f) in enumerate(JSON_TAMPERS)])
def test_tampered_manager_json_names_file_and_field(tmp_path, edit, field):
    run = tmp_path / "run"
    _manager().save(run)
    doc = _doc(run)
    edit(doc)
    _write(run, doc)
    with pytest.raises(SaveFormatError) as info:
        UEManager.load(run)
    msg = str(info.value)
    assert str(run / ("arrays.npz" if field in ("a0",) else "manager.json")) in msg
    assert repr(field) in msg, msg
    assert info.value.field == field


RAW_JSON_TAMPERS = [
    (lambda t: t[: len(t) // 2], "line"),                        # truncated
    (lambda t: "", "line 1"),                                    # empty
    (lambda t: "[1, 2]", "<top level>"),
    (lambda t: t.replace('"n_examples": 3', '"n_examples": NaN'), "non-standard"),
    (lambda t: t.replace('"n_examples": 3', '"n_examples": Infinity'), "non-standard"),
]


@pytest.mark.parametrize("edit, what", RAW_JSON_TAMPERS)
def test_broken_manager_json_names_file_and_position(tmp_path, edit, what):
    run = tmp_path / "run"
    _manager().save(run)
    text = (run / "manager.json").read_text()
    (run / "manager.json").write_text(edit(text))
    with pytest.raises(SaveFormatError, match=str(run / "manager.json")) as info:
        UEManager.load(run)
    assert what in str(info.value)


def test_non_utf8_manager_json(tmp_path):
    run = tmp_path / "run"
    _manager().save(run)
    (run / "manager.json").write_bytes(b'{"format": "\xff\xfe"}')
    with pytest.raises(SaveFormatError, match=r"manager.json: not UTF-8 text \(byte 12, line 1\)"):
        UEManager.load(run)


def _neg_lengths(a):
    lens = a["a1__lengths"].copy()
    lens[0], lens[1] = -1, lens[1] + lens[0] + 1
    a["a1__lengths"] = lens


def _sum_lengths(a):
    a["a1__lengths"] = a["a1__lengths"] + 1


def _swap_arrays(a):
    a["a0"], a["a3"] = a["a3"].copy(), a["a0"].copy()


def _set_array(key, value):
    def edit(a):
        if value is KeyError:
            del a[key]
        else:
            a[key] = value
    return edit


# (edit of the arrays, resealed?, field the error must name, file named)
NPZ_TAMPERS = [
    (_swap_arrays, False, "npz.sha256", "manager.json"),
    (_set_array("a0", np.zeros(60)), False, "npz.size", "manager.json"),
    (_neg_lengths, True, "a1__lengths", "arrays.npz"),
    (_sum_lengths, True, "a1__lengths", "arrays.npz"),
    (_set_array("a1__lengths", np.array([1.0, 1.0, 2.0])), True, "a1__lengths", "arrays.npz"),
    (_set_array("a1__lengths", KeyError), True, "a1__lengths", "arrays.npz"),
    (_set_array("a0", np.zeros(60)), True, "n_examples", "manager.json"),
    (_set_array("a0", np.array([1, 2, 3])), True, "a0", "arrays.npz"),
    (_set_array("a0", np.array(["1", "2", "3"])), True, "a0", "arrays.npz"),
    (_set_array("a0", np.zeros((3, 1))), True, "a0", "arrays.npz"),
    (_set_array("a0", KeyError), True, "arrays[0].key", "manager.json"),
    (_set_array("extra", np.zeros(3)), True, "extra", "arrays.npz"),
    (_set_array("s2__lengths0", np.array([5, 0, 0])), True, "s2__lengths0", "arrays.npz"),
    (_set_array("s2__lengths0", np.array([6])), True, "n_examples", "manager.json"),
    (_set_array("s0", np.array(["a", "b"])), True, "n_examples", "manager.json"),
]


@pytest.mark.parametrize("edit, reseal, field, file", NPZ_TAMPERS, ids=[f"{i}-{f}" for i, (_, _, f, _) in
                                                                        enumerate(NPZ_TAMPERS)])
def test_tampered_arrays_name_file_and_field(tmp_path, edit, reseal, field, file):
    run = tmp_path / "run"
    _manager().save(run)
    doc = _doc(run)
    assert [s["name"] for s in doc["stats"]][:3] == ["id", "answer", "log_probs"]  # s0, s1, s2 as used above
    arrays = _arrays(run)
    edit(arrays)
    if reseal:
        _reseal(run, arrays)
    else:
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        (run / "arrays.npz").write_bytes(buf.getvalue())
    with pytest.raises(SaveFormatError) as info:
        UEManager.load(run)
    msg = str(info.value)
    assert str(run / file) in msg and repr(field) in msg, msg


BAD_NPZ_BYTES = [
    lambda raw: raw[: len(raw) // 2],          # BadZipFile
    lambda raw: b"",                           # EOFError / empty
    lambda raw: b"PK\x03\x04" + b"\0" * 40,    # a zip header and nothing else
    lambda raw: b"not a zip at all" * 8,
    "pickle",                                  # an object array: loading would unpickle
]


@pytest.mark.parametrize("bad", BAD_NPZ_BYTES)
def test_unreadable_npz_is_a_save_format_error(tmp_path, bad):
    run = tmp_path / "run"
    _manager().save(run)
    if bad == "pickle":
        buf = io.BytesIO()
        arrays = _arrays(run)
        arrays["a0"] = np.array([{"x": 1}, 2, 3], dtype=object)
        np.savez(buf, **arrays)
        raw = buf.getvalue()
    else:
        raw = bad((run / "arrays.npz").read_bytes())
    (run / "arrays.npz").write_bytes(raw)
    _reseal(run)
    with pytest.raises(SaveFormatError, match=str(run / "arrays.npz")):
        UEManager.load(run)


def test_missing_files(tmp_path):
    run = tmp_path / "run"
    _manager().save(run)
    (run / "arrays.npz").unlink()
    with pytest.raises(SaveFormatError, match=r"arrays.npz: missing"):
        UEManager.load(run)
    _manager().save(run)
    (run / "manager.json").unlink()
    with pytest.raises(SaveFormatError, match=r"manager.json: missing beside arrays.npz"):
        UEManager.load(run)
    with pytest.raises(FileNotFoundError, match="no such folder"):
        UEManager.load(tmp_path / "nothing")


def test_unsaveable_stat_is_skipped_with_a_warning(tmp_path):
    man = _manager()
    man.stats["mine"] = [{"a": 1}, None, 3]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        man.save(tmp_path / "run")
    assert any("['mine']" in str(w.message) for w in caught)
    again = UEManager.load(tmp_path / "run")
    assert "mine" not in again.stats and _doc(tmp_path / "run")["stats_not_saved"] == ["mine"]


# ---------------------------------------------------------------- statistics: any nesting round-trips
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from assay_uncertainty.manager._columns import decode_column, encode_column  # noqa: E402

_LEAVES = {
    "float": st.floats(allow_nan=True, allow_infinity=True),
    "int": st.integers(-2**62, 2**62),
    "bool": st.booleans(),
    "str": st.text(max_size=5).filter(lambda t: not t.endswith("\x00")),
}


def _nested(leaf, depth):
    return leaf if depth == 0 else st.lists(_nested(leaf, depth - 1), max_size=4)


@st.composite
def columns(draw):
    kind = draw(st.sampled_from(sorted(_LEAVES)))
    depth = draw(st.integers(0, 3))
    return kind, draw(st.lists(_nested(_LEAVES[kind], depth), max_size=5))


def _plain(x):
    if isinstance(x, np.ndarray):
        return [_plain(v) for v in x.tolist()]
    if isinstance(x, list):
        return [_plain(v) for v in x]
    return x


def _same(a, b):
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_same(u, v) for u, v in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b and type(a) is type(b)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(columns())
def test_any_nested_column_of_one_leaf_type_round_trips(col):
    kind, values = col
    enc = encode_column(values)
    assert enc is not None
    leaf, lengths = enc
    assert leaf.dtype.kind in "biufU"  # never an object array
    back = _plain(decode_column(leaf, lengths))
    assert _same(values, back), (values, back)


def test_columns_that_need_pickle_are_refused():
    for values in ([{"a": 1}], [None, 1.0], [[1, 2], 3], [[1, [2]]], ["a", 1], [2**70], ["a\x00"]):
        assert encode_column(values) is None, values


def test_numpy_values_round_trip():
    values = [np.arange(6.0).reshape(2, 3), np.zeros((0, 3))]
    back = decode_column(*encode_column(values))
    assert [np.asarray(v).tolist() for v in back] == [[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], []]
    assert decode_column(*encode_column([])) == []
