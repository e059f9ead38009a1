"""UEManager(model=..., cache_dir=...): the model loop's batches kept on disk, a run started again resumes.

A fake backend (no torch) whose answers are computed by hand; the killed-process tests (SIGKILL)
are in assay-transformers' tests/test_manager_resume.py, on a real model.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

from assay.errors import EvaluationError, InvalidParameterError
from assay.uncertainty import Estimator, StatCalculator
from assay_uncertainty.manager import UEManager

RECORDS = [{"input": "x" * (i + 1), "reference": "yes" if i < 3 else "no"} for i in range(7)]
MSP = [0.1 * n * (n + 1) / 2 for n in range(1, 8)]  # -sum log p, log p = -0.1 * k for k = 1 .. n (by hand)
ACCURACY = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0]  # answers yes (odd length) / no against yes, yes, yes, no, no, no, no


class FakeGreedy(StatCalculator):
    """Answer "yes" for odd-length prompts; log-probabilities -0.1 * k; raises on the prompt ``fail_on``."""

    name = "fake_greedy"
    stats = ("answer", "log_probs", "token_entropies")
    dependencies = ("input_texts",)

    def __init__(self, backend):
        super().__init__()
        self.backend = backend

    def __call__(self, stats):
        texts = list(stats["input_texts"])
        self.backend.positions.append(list(stats["example_positions"]))
        if self.backend.fail_on in texts:
            raise ConnectionError(f"the server is down (prompt {self.backend.fail_on!r})")
        self.backend.sent.extend(texts)
        return {"answer": ["yes" if len(t) % 2 else "no" for t in texts],
                "log_probs": [-0.1 * np.arange(1, len(t) + 1) for t in texts],
                "token_entropies": [np.full(len(t), 0.5) for t in texts]}


class FakeBackend:
    def __init__(self, fail_on=None, name="fake-1"):
        self.sent, self.positions, self.fail_on, self.name = [], [], fail_on, name

    def fingerprint(self):
        return {"backend": "fake", "name": self.name}

    def calculators(self, *, max_new_tokens, generation_params, samples_n, seed):
        return [FakeGreedy(self)]


class FailsOnThirdCall(Estimator):
    name, level, dependencies = "flaky", "sequence", ("log_probs",)

    def __init__(self):
        super().__init__()
        self.calls = 0

    def __call__(self, stats):
        self.calls += 1
        if self.calls == 3:
            raise ValueError("boom")
        return np.array([-np.sum(v) for v in stats["log_probs"]])


def manager(backend, cache, **kw):
    kw.setdefault("estimators", ["msp"])
    return UEManager(RECORDS, model=backend, gen_metrics=["accuracy"], ue_metrics=["prr"], batch_size=2, seed=1,
                     cache_dir=cache, **kw)


def interrupted(cache, fail_on="xxxxx", **kw):
    """A run whose backend fails on the batch of examples 4 and 5: batches 0-1 and 2-3 are cached."""
    backend = FakeBackend(fail_on=fail_on)
    man = manager(backend, cache, **kw)
    with pytest.raises(ConnectionError, match="the server is down") as err:
        man()
    assert "running again resumes" in "".join(getattr(err.value, "__notes__", []))
    assert man.partial["n_examples"] == 4
    assert len(list(cache.glob("ue-run-*/batch-*.npz"))) == 2
    return man


def test_a_run_that_failed_resumes_with_only_the_missing_examples(tmp_path):
    interrupted(tmp_path / "cache")
    again = FakeBackend()
    man = manager(again, tmp_path / "cache")
    man()
    assert again.sent == ["x" * 5, "x" * 6, "x" * 7]          # examples 4, 5, 6 only
    assert again.positions == [[4, 5], [6]]                    # in the batches an uninterrupted run makes
    np.testing.assert_allclose(man.estimations[("sequence", "msp")], MSP, rtol=0, atol=1e-12)
    assert man.gen_metrics[("sequence", "accuracy")].tolist() == ACCURACY
    fresh = FakeBackend()
    full = manager(fresh, None)
    full()
    assert len(fresh.sent) == 7
    assert man.metrics == full.metrics
    assert man.stats["answer"] == full.stats["answer"]
    for a, b in zip(man.stats["log_probs"], full.stats["log_probs"]):
        np.testing.assert_array_equal(a, b)
    assert any("4 of 7 examples read back" in n for n in man.notes)
    # a third run reads everything back and sends nothing
    third = FakeBackend()
    man3 = manager(third, tmp_path / "cache")
    man3()
    assert third.sent == [] and man3.metrics == full.metrics


def test_another_batch_size_reuses_the_examples_done(tmp_path):
    interrupted(tmp_path / "cache")
    again = FakeBackend()
    man = UEManager(RECORDS, model=again, estimators=["msp"], gen_metrics=["accuracy"], ue_metrics=["prr"],
                    batch_size=3, seed=1, cache_dir=tmp_path / "cache")
    man()
    assert again.positions == [[4, 5, 6]]
    np.testing.assert_allclose(man.estimations[("sequence", "msp")], MSP, rtol=0, atol=1e-12)


def test_a_cache_of_another_run_is_not_used_and_the_warning_names_why(tmp_path):
    interrupted(tmp_path / "cache")
    for kw, field in (({"seed": 2}, "seed"), ({"estimators": ["msp", "perplexity"]}, "components"),
                      ({"max_new_tokens": 7}, "max_new_tokens")):
        backend = FakeBackend()
        opts = {"estimators": ["msp"], "seed": 1, **kw}
        man = UEManager(RECORDS, model=backend, gen_metrics=["accuracy"], ue_metrics=["prr"], batch_size=2,
                        cache_dir=tmp_path / "cache", **opts)
        with pytest.warns(UserWarning, match=rf"another model run's results, not used by this run \(they differ in: "
                                             rf"[^)]*{field}"):
            man()
        assert len(backend.sent) == 7, kw
    other_model, other_data = FakeBackend(name="fake-2"), FakeBackend()
    with pytest.warns(UserWarning, match=r"differ in: [^)]*model"):
        manager(other_model, tmp_path / "cache")()
    records = [dict(r) for r in RECORDS]
    records[0]["reference"] = "no"
    with pytest.warns(UserWarning, match=r"differ in: [^)]*data_sha256"):
        UEManager(records, model=other_data, estimators=["msp"], gen_metrics=["accuracy"], ue_metrics=["prr"],
                  batch_size=2, seed=1, cache_dir=tmp_path / "cache")()
    assert len(other_model.sent) == len(other_data.sent) == 7


def test_a_truncated_or_damaged_batch_file_is_an_error_naming_it(tmp_path):
    interrupted(tmp_path / "cache")
    first, second = sorted((tmp_path / "cache").glob("ue-run-*/batch-*.npz"))
    data = first.read_bytes()
    first.write_bytes(data[: len(data) // 2])
    with pytest.raises(EvaluationError, match=rf"{first.name}.*truncated or damaged.*delete it"):
        manager(FakeBackend(), tmp_path / "cache")()
    first.write_bytes(data)
    raw = bytearray(second.read_bytes())
    # a flipped byte inside the stored arrays: the zip's CRC or the file's checksum catches it
    i = raw.index(np.float64(-0.1).tobytes())  # the first log-probability stored
    raw[i] ^= 0x01
    second.write_bytes(bytes(raw))
    with pytest.raises(EvaluationError, match=rf"{second.name}"):
        manager(FakeBackend(), tmp_path / "cache")()


def test_a_file_left_by_a_killed_write_is_removed_with_a_warning(tmp_path):
    interrupted(tmp_path / "cache")
    (folder,) = (tmp_path / "cache").glob("ue-run-*")
    leftover = folder / ".batch-00000004-abcdef12.npz.k3j2.tmp.npz"
    leftover.write_bytes(b"PK\x03\x04 half a zip")
    again = FakeBackend()
    with pytest.warns(UserWarning, match="whose write did not finish"):
        manager(again, tmp_path / "cache")()
    assert not leftover.exists() and len(again.sent) == 3


def test_an_estimator_dropped_by_ignore_exceptions_stays_dropped_when_resumed(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        # the flaky estimator raises on its 3rd batch (examples 4, 5): the run fails on the same batch
        full = manager(FakeBackend(), None, estimators=["msp", FailsOnThirdCall()], ignore_exceptions=True)
        full()
    assert full.estimator_names == ["msp"] and "flaky" in full.failed
    # now the estimator raises on batch 2 (examples 2, 3) and the server fails on batch 3 (4, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        est = FailsOnThirdCall()
        est.calls = 1
        interrupted(tmp_path / "cache", estimators=["msp", est], ignore_exceptions=True)
    again = FakeBackend()
    man = manager(again, tmp_path / "cache", estimators=["msp", FailsOnThirdCall()], ignore_exceptions=True)
    with pytest.warns(RuntimeWarning, match=r"'flaky' raised ValueError on the batch of examples 2 to 3.*read from "
                                            "the cache"):
        man()
    assert again.sent == ["x" * 5, "x" * 6, "x" * 7]
    assert man.estimator_names == ["msp"] and man.failed["flaky"] == "ValueError: boom"
    np.testing.assert_allclose(man.estimations[("sequence", "msp")], MSP, rtol=0, atol=1e-12)


def test_cache_dir_is_checked():
    with pytest.raises(InvalidParameterError, match="'cache_dir'.*runs no model"):
        UEManager(RECORDS, estimators=["msp"], cache_dir="somewhere")
    with pytest.raises(InvalidParameterError, match="'cache_dir' parameter must be a folder path"):
        UEManager(RECORDS, model=FakeBackend(), estimators=["msp"], cache_dir=3)


def test_a_cache_dir_that_is_a_file_is_an_error(tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(InvalidParameterError, match="is a file, not a folder"):
        manager(FakeBackend(), tmp_path / "f")()


def test_the_folder_is_named_by_the_run_and_holds_no_pickle(tmp_path):
    interrupted(tmp_path / "cache")
    for path in (tmp_path / "cache").glob("ue-run-*/batch-*.npz"):
        with np.load(path, allow_pickle=False) as z:
            assert all(z[k].dtype.kind != "O" for k in z.files)
    assert os.path.isfile(next((tmp_path / "cache").glob("ue-run-*")) / "run.json")
