"""The one JSON Lines reader/writer of assay.jsonio and its three users (data formats, UE data, ``assay evaluate``).

Bad inputs per entry point: parse_jsonl 4 (syntax error on line 3, truncated object,
bare word, CRLF file with a bad line), read_jsonl 3 (invalid UTF-8, a folder, a missing
file), JsonLinesFormat.parse 1, load_ue_data 2 (bad line, malformed ``.json``),
read_column 1. Each error names the source and the line.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.core.formats import DataFormatError, JsonLinesFormat
from assay.errors import InvalidParameterError
from assay.jsonio import dumps_jsonl, parse_jsonl, read_jsonl, to_jsonable

SEP = "\u2028"  # a line separator: valid inside a JSON string, and json.dumps(ensure_ascii=False) keeps it raw


def _records_with_separators():
    recs = [{"id": 0, "answer": f"a{SEP}b", "correct": 1}, {"id": 1, "answer": "c\x0cd", "correct": 0}]
    return recs, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs)


def test_parse_jsonl_keeps_records_holding_unicode_line_separators():
    recs, text = _records_with_separators()
    assert parse_jsonl(text) == recs  # str.splitlines() cut these records in two


def test_parse_jsonl_reads_crlf_blank_lines_and_nan_literals():
    got = parse_jsonl('{"a": 1}\r\n\r\n[NaN, Infinity, -Infinity, "NaN"]\r\n')
    assert got[0] == {"a": 1}
    assert math.isnan(got[1][0]) and got[1][1] == math.inf and got[1][2] == -math.inf
    assert got[1][3] == "NaN"  # free text stays text


@pytest.mark.parametrize("text, line, fragment", [
    ('1\n2\n{oops\n', 3, "column 2"),
    ('{"a": 1\n', 1, "column 8"),
    ('\n\nyes\n', 3, "column 1"),
    ('1\r\n2\r\n[1,,]\r\n', 3, "column 4"),
])
def test_parse_jsonl_names_the_source_and_the_line(text, line, fragment):
    with pytest.raises(InvalidParameterError, match=rf"^f\.jsonl:{line}: invalid JSON \(.*{fragment}\)\.$"):
        parse_jsonl(text, source="f.jsonl")


def test_read_jsonl_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'1\n"\xff"\n')
    with pytest.raises(InvalidParameterError, match=r"bad\.jsonl:2: not UTF-8"):
        read_jsonl(bad)
    with pytest.raises(InvalidParameterError, match="found a folder"):
        read_jsonl(tmp_path)
    with pytest.raises(FileNotFoundError, match="missing.jsonl"):
        read_jsonl(tmp_path / "missing.jsonl")


def test_dumps_jsonl_follows_the_one_nonfinite_rule():
    text = dumps_jsonl([{"x": float("nan"), "y": np.float32(np.inf)}, [-math.inf, 1.5]])
    assert text == '{"x": "NaN", "y": "Infinity"}\n["-Infinity", 1.5]\n'
    for line in text.splitlines():  # standard JSON: a strict parser accepts every line
        json.loads(line, parse_constant=lambda c: pytest.fail(f"literal {c}"))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=80, deadline=None)
@given(items=st.lists(json_values, max_size=6))
def test_dumps_then_parse_round_trips_to_the_jsonable_form(items):
    assert parse_jsonl(dumps_jsonl(items)) == [to_jsonable(v) for v in items]


def test_data_format_uses_the_one_reader_and_writer():
    fmt = JsonLinesFormat()
    recs, text = _records_with_separators()
    assert fmt.parse(text) == recs
    with pytest.raises(DataFormatError, match=r"^s\.jsonl:2: invalid JSON") as info:
        fmt.parse("1\n{x\n", source="s.jsonl")
    assert info.value.line == 2 and info.value.source == "s.jsonl"
    assert fmt.dumps([{"v": float("nan")}]) == '{"v": "NaN"}\n'  # was a bare NaN (not JSON)


def test_ue_data_uses_the_one_reader(tmp_path):
    from assay_uncertainty.manager.inputs import UEDataError, load_ue_data

    recs, text = _records_with_separators()
    (tmp_path / "d.jsonl").write_text(text, encoding="utf-8")
    assert [r["answer"] for r in load_ue_data(tmp_path / "d.jsonl")] == [r["answer"] for r in recs]
    (tmp_path / "bad.jsonl").write_text('{"correct": 1}\n{"correct": \n', encoding="utf-8")
    with pytest.raises(UEDataError, match=r"bad\.jsonl:2: invalid JSON"):
        load_ue_data(tmp_path / "bad.jsonl")
    (tmp_path / "bad.json").write_text('[{"correct": 1},\n {"correct" 0}]', encoding="utf-8")
    with pytest.raises(UEDataError, match=r"bad\.json: invalid JSON at line 2, column 13"):
        load_ue_data(tmp_path / "bad.json")


def test_evaluate_columns_use_the_one_reader(tmp_path):
    from assay.cli.evaluate import read_column

    path = tmp_path / "p.jsonl"
    path.write_text(f'{{"prediction": "a{SEP}b"}}\n\n"c"\n', encoding="utf-8")
    assert read_column(path, "prediction") == [f"a{SEP}b", "c"]
    path.write_text('{"prediction": 1}\n\n{"other": 2}\n', encoding="utf-8")
    with pytest.raises(InvalidParameterError, match=r"p\.jsonl:3: object without a prediction"):
        read_column(path, "prediction")
    path.write_text('1\n[\n', encoding="utf-8")
    with pytest.raises(InvalidParameterError, match=r"p\.jsonl:2: invalid JSON"):
        read_column(path, "prediction")
