"""assay.jsonio: the non-finite rule, atomic writes, strict reads (hand-written expected values)."""

from __future__ import annotations

import errno
import json
import math
import os

import numpy as np
import pytest

from assay import jsonio
from assay.errors import SaveFormatError


def test_to_jsonable_and_dumps_are_standard_json():
    data = {1: np.float32(1.5), "a": (np.int64(2), {3}), "n": [math.nan, math.inf, -math.inf],
            "arr": np.array([[1.0, np.nan]]), "0d": np.array(np.inf)}
    assert jsonio.to_jsonable(data) == {"1": 1.5, "a": [2, [3]], "n": ["NaN", "Infinity", "-Infinity"],
                                        "arr": [[1.0, "NaN"]], "0d": "Infinity"}
    json.loads(jsonio.dumps(data, indent=None), parse_constant=lambda c: pytest.fail(c))


def test_decode_number_and_numbers():
    assert [jsonio.decode_number(v, where="w") for v in (1, 2.5, "-Infinity")] == [1, 2.5, -math.inf]
    assert math.isnan(jsonio.decode_number("NaN", where="w")) and math.isnan(jsonio.decode_number(None, where="w"))
    for bad in ("nan", "1.0", True, [1], {}):
        with pytest.raises(SaveFormatError, match="^field x must be a number"):
            jsonio.decode_number(bad, where="field x")
    out = jsonio.decode_numbers({"a": ["Infinity", None, "text"], "b": 3})
    assert out["a"][0] == math.inf and math.isnan(out["a"][1]) and out["a"][2] == "text" and out["b"] == 3


def test_atomic_write_failures_keep_the_old_file_and_leave_no_temporary(tmp_path, monkeypatch):
    path = jsonio.write_json_atomic(tmp_path / "f.json", {"v": 1})
    with pytest.raises(TypeError):
        jsonio.write_json_atomic(path, {"v": object()})
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(errno.ENOSPC, "full")))
    with pytest.raises(OSError, match="full"):
        jsonio.write_json_atomic(path, {"v": 2})
    monkeypatch.undo()
    with pytest.raises(RuntimeError), jsonio.atomic_output(path) as tmp:
        tmp.write_text("half")
        raise RuntimeError("writer died")
    assert json.loads(path.read_text()) == {"v": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.json"]
    with jsonio.atomic_output(path) as tmp:
        tmp.write_text('{"v": 3}')
    assert jsonio.read_json(path) == {"v": 3}


@pytest.mark.parametrize("raw, message", [
    (b'{"a": NaN}', "non-standard JSON constant NaN"),
    (b'{"a": -Infinity}', "non-standard JSON constant -Infinity"),
    (b'{"a": 1,\n  "b" 2}', "line 2, column 7"),
    (b"", "line 1, column 1"),
    (b'\n\n{"a": "\xc3\x28"}', r"not UTF-8 text \(byte 9, line 3\)"),
])
def test_read_json_is_strict_and_names_file_and_position(tmp_path, raw, message):
    path = tmp_path / "x.json"
    path.write_bytes(raw)
    with pytest.raises(SaveFormatError, match=message) as info:
        jsonio.read_json(path)
    assert str(info.value).startswith(f"{path}:") and info.value.path == path
    with pytest.raises(FileNotFoundError, match="nope.json"):
        jsonio.read_json(tmp_path / "nope.json")


@pytest.mark.parametrize("name", ["assay.jsonio", "assay_uncertainty.manager._columns"])
def test_docstring_examples(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0 and result.attempted > 0


def test_atomic_files_get_ordinary_permissions_and_keep_changed_ones(tmp_path):
    plain = tmp_path / "plain.txt"
    with open(plain, "w") as f:  # what an ordinary write gives under this umask
        f.write("x")
    path = jsonio.write_json_atomic(tmp_path / "new.json", {"v": 1})
    assert path.stat().st_mode & 0o777 == plain.stat().st_mode & 0o777
    os.chmod(path, 0o640)
    jsonio.write_json_atomic(path, {"v": 2})
    assert path.stat().st_mode & 0o777 == 0o640
