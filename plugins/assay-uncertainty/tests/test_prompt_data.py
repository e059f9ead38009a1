"""Bad datasets for the model loop's prompts (assay_uncertainty.manager.prompt_data): each is an error naming
the place."""

from __future__ import annotations

import json

import pytest

from assay.errors import InvalidParameterError, MissingDependencyError
from assay_uncertainty.manager.prompt_data import load_rows, prompt_records

ROWS = [{"q": f"question {i}", "a": f"answer {i}"} for i in range(6)]


def test_good_rows_become_records_with_few_shot_subsample_and_size():
    recs = prompt_records(ROWS, text_column="q", label_column="a", template="{few_shot}Q: {text}", few_shot=2,
                          few_shot_template="[{text}={label}]", subsample=3, size=2, seed=0)
    assert len(recs) == 2
    assert all(r["input"].startswith("[question 0=answer 0][question 1=answer 1]Q: question ") for r in recs)
    assert all(r["id"] >= 2 for r in recs) and recs[0]["id"] < recs[1]["id"]  # demonstrations left out, file order
    assert {r["reference"] for r in recs} <= {f"answer {i}" for i in range(2, 6)}
    again = prompt_records(ROWS, text_column="q", label_column="a", template="{few_shot}Q: {text}", few_shot=2,
                           few_shot_template="[{text}={label}]", subsample=3, size=2, seed=0)
    assert again == recs  # the subsample is reproducible


def test_a_list_label_makes_references_for_every_record():
    rows = [{"q": "a", "a": "x"}, {"q": "b", "a": ["y", "z"]}]
    recs = prompt_records(rows, text_column="q", label_column="a")
    assert [r["references"] for r in recs] == [["x"], ["y", "z"]] and all("reference" not in r for r in recs)


@pytest.mark.parametrize("kwargs, match", [
    ({"text_column": "question"}, r"row 0: no column 'question'"),
    ({"label_column": "answer"}, r"row 0: no column 'answer'"),
    ({"template": "Q:"}, r"must contain \{text\}"),
    ({"template": "{text} {oops}"}, r"placeholder other than"),
    ({"few_shot": 6, "label_column": "a"}, r"few_shot=6 needs"),
    ({"few_shot": 1}, r"needs a 'label_column'"),
    ({"size": -1}, r"'size'"),
    ({"subsample": 1.5}, r"'subsample'"),
    ({"size": 0}, r"no examples left"),
])
def test_bad_options_name_the_problem(kwargs, match):
    opts = {"text_column": "q", **kwargs}
    with pytest.raises(InvalidParameterError, match=match):
        prompt_records(ROWS, **opts)


def test_bad_rows_name_the_row():
    with pytest.raises(InvalidParameterError, match=r"row 1: column 'q' must be a string"):
        prompt_records([{"q": "a"}, {"q": 3}], text_column="q")
    with pytest.raises(InvalidParameterError, match=r"row 0: the label must be a string"):
        prompt_records([{"q": "a", "a": None}], text_column="q", label_column="a")
    with pytest.raises(InvalidParameterError, match=r"row 0: expected an object"):
        prompt_records(["just text"], text_column="q")


def test_files(tmp_path):
    (tmp_path / "d.jsonl").write_text(json.dumps({"q": "a"}) + "\n\n{broken\n")
    with pytest.raises(InvalidParameterError, match=r"d.jsonl:3: invalid JSON"):
        load_rows(tmp_path / "d.jsonl")
    (tmp_path / "d.csv").write_text("q,a\nhello,world\n")
    assert load_rows(tmp_path / "d.csv") == [{"q": "hello", "a": "world"}]
    (tmp_path / "d.json").write_text(json.dumps({"q": "a"}))
    with pytest.raises(InvalidParameterError, match=r"must hold a list"):
        load_rows(tmp_path / "d.json")
    with pytest.raises(FileNotFoundError, match="No such dataset"):
        load_rows(tmp_path / "missing.jsonl")


def test_a_datasets_folder_without_the_datasets_package_says_what_to_install(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "datasets", None)  # "not installed", whether or not it is
    (tmp_path / "saved").mkdir()
    with pytest.raises(MissingDependencyError, match="pip install datasets"):
        load_rows(tmp_path / "saved")
