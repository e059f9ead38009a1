"""The manager's model loop with a fake backend (no torch): batches, order, ignore_exceptions, errors."""

from __future__ import annotations

import numpy as np
import pytest

from assay.errors import InvalidParameterError
from assay.plugins import PluginSystem, use_plugin_system
from assay.uncertainty import Estimator, StatCalculator
from assay_uncertainty.manager import UEManager
from assay_uncertainty.manager.model_loop import resolve_model_backend

RECORDS = [{"input": "x" * (i + 1), "reference": "yes" if i < 2 else "no"} for i in range(5)]


class FakeGreedy(StatCalculator):
    """Answer "yes" for odd-length prompts; one log-probability -0.1 * k per character."""

    name = "fake_greedy"
    stats = ("answer", "log_probs", "token_entropies")
    dependencies = ("input_texts",)

    def __init__(self, calls):
        super().__init__()
        self.calls = calls

    def __call__(self, stats):
        texts = list(stats["input_texts"])
        self.calls.append(texts)
        return {"answer": ["yes" if len(t) % 2 else "no" for t in texts],
                "log_probs": [-0.1 * np.arange(1, len(t) + 1) for t in texts],
                "token_entropies": [np.full(len(t), 0.5) for t in texts]}


class FakeBackend:
    def __init__(self):
        self.calls = []
        self.options = None

    def calculators(self, *, max_new_tokens, generation_params, samples_n, seed):
        self.options = {"max_new_tokens": max_new_tokens, "generation_params": generation_params,
                        "samples_n": samples_n, "seed": seed}
        return [FakeGreedy(self.calls)]


class FailsOnSecondBatch(Estimator):
    name, level, dependencies = "flaky", "sequence", ("log_probs",)

    def __init__(self):
        super().__init__()
        self.batches = 0

    def __call__(self, stats):
        self.batches += 1
        if self.batches == 2:
            raise ValueError("boom")
        return np.array([-np.sum(v) for v in stats["log_probs"]])


def test_the_loop_runs_batch_by_batch_and_joins_the_values():
    backend = FakeBackend()
    man = UEManager(RECORDS, model=backend, estimators=["msp"], gen_metrics=["accuracy"], ue_metrics=["prr"],
                    batch_size=2, max_new_tokens=7, samples_n=3, seed=5, generation_params={"top_k": 2})
    man()
    assert backend.calls == [["x", "xx"], ["xxx", "xxxx"], ["xxxxx"]]
    assert backend.options == {"max_new_tokens": 7, "generation_params": {"top_k": 2}, "samples_n": 3, "seed": 5}
    # msp = -sum log p = 0.1 * (1 + ... + n) for a prompt of n characters (computed by hand)
    expected = [0.1 * n * (n + 1) / 2 for n in range(1, 6)]
    np.testing.assert_allclose(man.estimations[("sequence", "msp")], expected)
    # answers: yes, no, yes, no, yes (odd lengths); references: yes, yes, no, no, no
    assert man.gen_metrics[("sequence", "accuracy")].tolist() == [1.0, 0.0, 0.0, 1.0, 0.0]
    assert man.stats["input_texts"] == [r["input"] for r in RECORDS] and "input" not in man.stats
    assert any(n.startswith("model run: ") and "seed=5" in n and "max_new_tokens=7" in n for n in man.notes)


def test_an_estimator_that_raises_is_dropped_with_ignore_exceptions():
    man = UEManager(RECORDS, model=FakeBackend(), estimators=["msp", FailsOnSecondBatch()],
                    gen_metrics=["accuracy"], ue_metrics=["prr"], batch_size=2, ignore_exceptions=True)
    with pytest.warns(RuntimeWarning, match="'flaky' raised ValueError on the batch of examples 2 to 3"):
        man()
    assert ("sequence", "flaky") not in man.estimations and "flaky" not in man.estimator_names
    assert man.failed == {"flaky": "ValueError: boom"}
    assert any("dropped for the rest of the run" in n for n in man.notes)
    assert ("sequence", "msp") in man.estimations
    assert all(k[1] != "flaky" for k in man.metrics)


def test_without_ignore_exceptions_the_error_propagates():
    man = UEManager(RECORDS, model=FakeBackend(), estimators=[FailsOnSecondBatch()], gen_metrics=["accuracy"],
                    ue_metrics=["prr"], batch_size=2)
    with pytest.raises(ValueError, match="boom"):
        man()


def test_without_a_backend_the_error_says_what_to_install():
    with use_plugin_system(PluginSystem(entry_points=False)), \
            pytest.raises(InvalidParameterError, match="pip install assay-transformers"):
        resolve_model_backend("some/folder")


def test_the_progress_bar_goes_to_stderr(capsys):
    UEManager(RECORDS, model=FakeBackend(), estimators=["msp"], gen_metrics=["accuracy"], ue_metrics=["prr"],
              batch_size=2, progress=True)()
    captured = capsys.readouterr()
    assert "UEManager batches" in captured.err and "UEManager batches" not in captured.out


@pytest.mark.parametrize("kwargs, match", [
    ({"batch_size": 0}, "'batch_size'"),
    ({"max_new_tokens": 1.5}, "'max_new_tokens'"),
    ({"samples_n": True}, "'samples_n'"),
    ({"seed": -1}, "'seed'"),
    ({"save_stats": "greedy_log_probs"}, "'save_stats'"),
])
def test_bad_loop_parameters_name_the_parameter(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        UEManager(RECORDS, model=FakeBackend(), estimators=["msp"], **kwargs)


def test_the_prompts_are_required():
    with pytest.raises(InvalidParameterError, match="'input' field"):
        UEManager([{"reference": "a"}], model=FakeBackend(), estimators=["msp"])
    with pytest.raises(InvalidParameterError, match="'input' of example 1 must be a string"):
        UEManager([{"input": "a"}, {"input": 3}], model=FakeBackend(), estimators=["msp"])


def test_model_options_with_a_backend_object_are_an_error():
    with pytest.raises(InvalidParameterError, match="'model_options'"):
        resolve_model_backend(FakeBackend(), {"device": "cpu"})


class TextOnlyBackend(FakeBackend):
    """A backend that gives ``answer`` only (a black-box model) and whose calculator fails on the third batch."""

    base_stats = ("answer",)

    def calculators(self, **kw):
        calls = self.calls

        class Answers(StatCalculator):
            name, stats, dependencies = "answers", ("answer",), ("input_texts",)

            def __call__(self, stats):
                calls.append(list(stats["input_texts"]))
                if len(calls) == 3:
                    raise ConnectionError("server gone at prompt 4")
                return {"answer": ["yes" if len(t) % 2 else "no" for t in stats["input_texts"]]}

        return [Answers()]


class AnswerLength(Estimator):
    name, level, dependencies = "answer_length", "sequence", ("answer",)

    def __call__(self, stats):
        return np.array([float(len(a)) for a in stats["answer"]])


def test_a_failed_batch_keeps_the_finished_batches_in_partial():
    backend = TextOnlyBackend()  # base_stats: no log_probs asked of it (FakeGreedy is not there to give them)
    man = UEManager(RECORDS, model=backend, estimators=[AnswerLength()], gen_metrics=["accuracy"],
                    ue_metrics=["prr"], batch_size=2)
    with pytest.raises(ConnectionError, match="server gone") as info:
        man()
    # batches [0, 1], [2, 3] finished; [4] failed
    assert backend.calls == [["x", "xx"], ["xxx", "xxxx"], ["xxxxx"]]
    part = man.partial
    assert part["n_examples"] == 4
    assert part["stats"]["answer"] == ["yes", "no", "yes", "no"]
    assert part["stats"]["input_texts"] == ["x", "xx", "xxx", "xxxx"]
    assert part["stats"]["reference"] == ["yes", "yes", "no", "no"]
    assert [float(v) for v in part["estimations"]["answer_length"]] == [3.0, 2.0, 3.0, 2.0]
    assert [float(v) for v in part["gen_metrics"]["accuracy"]] == [1.0, 0.0, 0.0, 1.0]
    note = "model run stopped at the batch of examples 4 to 4 (ConnectionError: server gone at prompt 4)"
    assert any(note in n for n in man.notes)
    assert any(note in n for n in info.value.__notes__)
    assert man.estimations == {} and man.metrics == {}  # nothing half-filled outside partial


def test_a_run_that_finishes_leaves_partial_none():
    man = UEManager(RECORDS, model=FakeBackend(), estimators=["msp"], gen_metrics=["accuracy"], ue_metrics=["prr"])
    man()
    assert man.partial is None
