"""Issue 27, items 10 and 11: nothing requested is dropped silently, and absurd resample counts are clear
errors (before anything is allocated) with progress shown on long resampling."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from assay_interval_samples import FloatMAE, ScoreEvaluator, make_items

import assay
from assay import DataPool
from assay.cli import main
from assay.errors import InvalidParameterError, UndefinedMetricWarning
from assay.metrics import Metric

ABSURD = [10**9, 2**63]
ITEMS = make_items(60, seed=1)


# --------------------------------------------------------------------------- item 11: bounds
@pytest.mark.parametrize("n_resamples", ABSURD)
def test_evaluate_refuses_absurd_counts(n_resamples):
    with pytest.raises(InvalidParameterError, match="'n_resamples' parameter of assay.evaluate is too large"):
        assay.evaluate([1, 0, 1], [[1], [1], [1]], metrics=["accuracy"], n_resamples=n_resamples)


@pytest.mark.parametrize("n_resamples", ABSURD)
def test_compare_refuses_absurd_counts(n_resamples):
    a = assay.evaluate([1, 0, 1], [[1], [1], [1]], metrics=["accuracy"], n_resamples=0)
    b = assay.evaluate([1, 1, 1], [[1], [1], [1]], metrics=["accuracy"], n_resamples=0)
    with pytest.raises(InvalidParameterError, match="'n_resamples' parameter of assay.compare is too large"):
        assay.compare(a, b, metric="accuracy", n_resamples=n_resamples)


@pytest.mark.parametrize("n_resamples", ABSURD)
@pytest.mark.parametrize("method", ["sequentialEvaluate", "parallelEvaluate"])
def test_evaluators_refuse_absurd_counts(n_resamples, method):
    extra = {"executor": "serial"} if method == "parallelEvaluate" else {}
    with pytest.raises(InvalidParameterError, match=f"'n_resamples' parameter of {method} is too large"):
        getattr(ScoreEvaluator(), method)(DataPool(ITEMS), None, metrics=[FloatMAE()], n_resamples=n_resamples,
                                          **extra)


def test_the_bound_counts_the_instances():
    # 10**7 resamples of a few instances is allowed (with progress); of 10**6 instances it is hours of work
    with pytest.raises(InvalidParameterError, match="weights"):
        assay.evaluate(np.zeros(10**6), np.zeros((10**6, 1)), metrics=["mse"], n_resamples=10**7)


@pytest.mark.parametrize("n_resamples", ["1000000000", str(2**63)])
def test_cli_exits_2_with_one_line(tmp_path, capsys, n_resamples):
    (tmp_path / "p.jsonl").write_text("1\n0\n1\n1\n")
    (tmp_path / "r.jsonl").write_text("1\n1\n1\n0\n")
    rc = main(["evaluate", "-m", "accuracy", "-p", str(tmp_path / "p.jsonl"), "-r", str(tmp_path / "r.jsonl"),
               "--n-resamples", n_resamples])
    out, err = capsys.readouterr()
    assert rc == 2, err
    assert len(err.strip().splitlines()) == 1 and "--n-resamples" in err and "too large" in err, err
    for name in ("A", "B"):
        (tmp_path / f"{name}.jsonl").write_text("1\n0\n0\n1\n")
        assert main(["evaluate", "-m", "accuracy", "-p", str(tmp_path / f"{name}.jsonl"), "-r",
                     str(tmp_path / "r.jsonl"), "-o", str(tmp_path / f"{name}.json"), "--n-resamples", "0"]) == 0
    capsys.readouterr()
    rc = main(["compare", str(tmp_path / "A.json"), str(tmp_path / "B.json"), "-m", "accuracy",
               "--n-resamples", n_resamples])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "too large" in err, err


class SlowMedian(Metric):
    """A gathered metric whose reduce takes a moment, so that resampling runs past the bar's delay."""

    name = "slow_median"
    main_score = "median"
    per_instance = False
    needs_references = False

    def map(self, prediction, references=None, task_data=None):
        return float(prediction)

    def reduce(self, rows):
        return {"median": float(np.median(np.asarray(rows, dtype=float)))}


def test_long_resampling_shows_progress(capfd, monkeypatch):
    import assay.metrics.resample as resample

    monkeypatch.setattr(resample, "_progress", _eager_progress(resample._progress))
    assay.evaluate(list(np.linspace(0, 1, 50)), None, metrics=[SlowMedian()], n_resamples=3000, seed=0)
    err = capfd.readouterr().err
    assert "bootstrap resamples" in err and "3000/3000" in err, err


def _eager_progress(real):
    """The real bar with no delay and no size threshold (the test's run is short)."""
    def progress(total, work, desc):
        bar = real(total, 10**12, desc)
        bar.delay = 0
        bar.mininterval = 0
        return bar
    return progress


def test_progress_is_off_for_everyday_runs(capfd):
    assay.evaluate(list(np.linspace(0, 1, 50)), None, metrics=[SlowMedian()], n_resamples=200, seed=0)
    assert "bootstrap" not in capfd.readouterr().err


# --------------------------------------------------------------------------- item 10: nothing dropped
class OwnStateSum(Metric):
    """An additive-looking metric that keeps its own running state (like a torchmetrics wrapper)."""

    name = "own_state_mean"
    main_score = "mean"
    per_instance = False
    needs_references = False

    def map(self, prediction, references=None, task_data=None):
        return float(prediction)

    def update(self, predictions, references=None, task_data=None):
        self.__dict__.setdefault("_own", []).extend(float(p) for p in predictions)
        self.state.n += len(predictions)
        return self

    def compute_scores(self):
        own = self.__dict__.get("_own", [])
        return {"mean": float(np.mean(own)) if own else float("nan"), "score": float(np.mean(own)) if own
                else float("nan"), "score_name": "mean"}

    def reduce(self, rows):
        return {"mean": float(np.mean(rows))}


def test_a_metric_the_bootstrap_cannot_weight_is_named_in_a_warning():
    with pytest.warns(UndefinedMetricWarning, match=r"No confidence intervals for metric\(s\) \['own_state_mean'\]"):
        r = ScoreEvaluator().sequentialEvaluate(DataPool(ITEMS), None, metrics=[FloatMAE(), OwnStateSum()],
                                                n_resamples=50)
    assert "mae_ci_low" in r.metrics and "mean_ci_low" not in r.metrics


def test_macro_f1_gets_an_interval_from_the_sharded_evaluators():
    from assay_interval_samples import LabelEvaluator, make_label_items

    items = make_label_items(300, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UndefinedMetricWarning)
        r = LabelEvaluator().parallelEvaluate(DataPool(items), None, executor="serial", num_shards=3,
                                              metrics=["f1[average=macro]"], n_resamples=100, seed=0)
    ev = assay.evaluate([p for p, _ in items], [[g] for _, g in items], metrics=["f1[average=macro]"],
                        n_resamples=100, seed=0).global_scores
    assert (r.metrics["f1_ci_low"], r.metrics["f1_ci_high"]) == (ev["f1_ci_low"], ev["f1_ci_high"])
    assert json.dumps(r.metrics["f1_ci_low"])  # a number
