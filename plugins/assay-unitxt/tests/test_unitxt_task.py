"""unitxt's ``Task`` (``assay_unitxt.Task``): the tutorial's declaration, unitxt's checks, and
evaluation with the task's metrics, against unitxt 1.26.10's own ``Task`` and metrics run live.
Every test runs with sockets blocked."""

from __future__ import annotations

import re
from typing import Any

import nltk
import pytest
import unitxt.blocks as unitxt_blocks  # the reference, installed by make setup (a missing one fails)

import assay
from assay.errors import InvalidParameterError
from assay_unitxt import Task

# slow: importing unitxt (datasets, pandas) takes seconds
# no_network (conftest.py): every socket connection fails the test
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_network")]


DATA = [{"question": "What sat on the mat?", "answer": "The cat sat."},
        {"question": "Who ran?", "answer": "A dog ran in the park."},
        {"question": "Who sang?", "answer": "Birds sang."}]
PREDICTIONS = ["The cat sat.", "a dog ran", "birds sing"]


def test_tutorial_task_evaluates_like_unitxts_metrics(monkeypatch):
    # unitxt's tutorial, imports changed; punkt_tab is not on disk: one sentence splitter for both sides
    monkeypatch.setattr(nltk, "download", lambda *a, **k: True)
    monkeypatch.setattr(nltk, "sent_tokenize", lambda text, *a, **k: [s for s in re.split(r"(?<=[.!?])\s+", text) if s])
    task = Task(input_fields={"question": str}, reference_fields={"answer": str}, prediction_type=str,
                metrics=["metrics.rouge", "metrics.string_containment"])
    unitxt_task = unitxt_blocks.Task(input_fields={"question": str}, reference_fields={"answer": str},
                                     prediction_type=str, metrics=["metrics.rouge", "metrics.string_containment"])
    assert task.process(DATA[0]) == {"input_fields": {"question": DATA[0]["question"]},
                                     "reference_fields": {"answer": DATA[0]["answer"]},
                                     "metrics": unitxt_task.metrics}
    res = task.evaluate(PREDICTIONS, DATA, n_resamples=0)

    from unitxt.artifact import fetch_artifact
    from unitxt.test_utils.metrics import apply_metric

    refs = [[d["answer"]] for d in DATA]
    for name in task.metrics:
        metric, _ = fetch_artifact(name)
        out = apply_metric(metric, PREDICTIONS, refs)
        for key, value in out[0]["score"]["global"].items():
            if isinstance(value, float) and "_ci_" not in key and key != "score":
                assert res.global_scores[key] == pytest.approx(value, rel=1e-12), (name, key)
        for i, o in enumerate(out):
            for key, value in o["score"]["instance"].items():
                if isinstance(value, float) and key != "score":
                    assert res[i]["score"]["instance"][key] == pytest.approx(value, rel=1e-12), (name, i, key)
    assert res.global_scores["score_name"] == "rougeL"  # the first metric's main score, as in unitxt
    assert res[0]["task_data"] == DATA[0]


def test_prediction_type_mismatch_is_an_error_as_in_unitxt():
    from unitxt.error_utils import UnitxtError

    with pytest.raises(UnitxtError, match="prediction type"):
        unitxt_blocks.Task(input_fields={"x": float}, reference_fields={"y": float}, prediction_type=str,
                           metrics=["metrics.kendalltau_b"])
    with pytest.raises(InvalidParameterError, match=r"prediction type .*metrics.kendalltau_b"):
        Task(input_fields={"x": float}, reference_fields={"y": float}, prediction_type=str,
             metrics=["metrics.kendalltau_b"])
    # a member of the metric's Union is compatible, as in unitxt (RetrievalMetric: List[str] | List[int])
    Task(input_fields=["q"], reference_fields={"ids": list[str]}, prediction_type=list[str], metrics=["metrics.mrr"])


def test_fields_defaults_and_older_spellings():
    task = Task(input_fields=["question"], reference_fields={"answers": list[str]}, metrics="metrics.accuracy",
                defaults={"question": "?"})
    assert task.input_fields == {"question": Any} and task.metrics == ["metrics.accuracy"]
    assert task.references({"answers": ["a", "b"]}) == ["a", "b"]  # a list field holds the references
    res = task.evaluate(["b", "c"], [{"answers": ["a", "b"]}, {"answers": ["a"]}], n_resamples=0)
    assert res.global_scores["accuracy"] == 0.5
    with pytest.warns(DeprecationWarning, match="input_fields"):
        old = Task(inputs=["q"], outputs=["a"], metrics=["metrics.accuracy"])
    assert old.reference_fields == {"a": Any}
    with pytest.raises(InvalidParameterError, match="reference_fields' is not set"):
        Task(input_fields=["q"], metrics=["metrics.accuracy"])
    with pytest.raises(InvalidParameterError, match="lacks the fields"):
        task.process({"question": "q"})
    with pytest.raises(InvalidParameterError, match="not one of the input or reference fields"):
        Task(input_fields=["q"], reference_fields=["a"], metrics=["metrics.accuracy"], defaults={"z": 1})
    with pytest.raises(assay.errors.UnknownNameError):
        Task(input_fields=["q"], reference_fields=["a"], metrics=["metrics.no_such_metric"])
