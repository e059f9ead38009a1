"""A model run killed mid-run (SIGKILL) resumes from its cache_dir: only the missing examples run, same numbers.

The child process runs the UEManager with ``cache_dir`` and kills itself (SIGKILL, its default
disposition set) the first time the model is asked to generate once two batch files are on disk:
no timing is involved. The parent then runs the same manager again, counting what reaches the
model, and compares every value with an uninterrupted run's.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from assay.uncertainty import UEManager

# random tiny models answer nothing right: PRR on constant accuracy is NaN with this warning
pytestmark = pytest.mark.filterwarnings("ignore::assay.errors.UndefinedMetricWarning")

QA = [("the capital of france is", "paris"), ("what", "small"), ("who is the big red river city of two", "two"),
      ("yes no", "no"), ("a small blue", "red"), ("one two three", "three"), ("is the river big", "yes")]
RECORDS = [{"input": q, "reference": a} for q, a in QA]
ESTIMATORS = ["msp", "perplexity", "mean_token_entropy", "mc_sequence_entropy", "lexical_similarity"]
OPTIONS = {"estimators": ESTIMATORS, "gen_metrics": ["accuracy"], "ue_metrics": ["prr"], "batch_size": 2,
           "max_new_tokens": 5, "samples_n": 3, "seed": 3}

_HF_CHILD = textwrap.dedent("""
    import json, os, signal, sys, warnings
    signal.signal(signal.SIGINT, signal.SIG_DFL)   # the default dispositions this test relies on
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    from pathlib import Path
    from assay.uncertainty import UEManager
    from assay_transformers.generation import HFModel

    folder, cache, kill_after = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    generate = HFModel.generate

    def killing(self, texts, **kw):   # the model is asked for more once kill_after batches are on disk: die
        if len(list(cache.glob("ue-run-*/batch-*.npz"))) >= kill_after:
            os.kill(os.getpid(), signal.SIGKILL)
        return generate(self, texts, **kw)

    HFModel.generate = killing
    warnings.simplefilter("ignore")
    man = UEManager(json.loads(sys.argv[4]), model=folder, cache_dir=str(cache), **json.loads(sys.argv[5]))
    man()
    print("finished")
""")


def _counting(folder):
    """An HFModel whose generate() records the prompts it is given."""
    from assay_transformers.generation import HFModel

    hf = HFModel(str(folder))
    hf.prompts = []
    generate = hf.generate

    def counted(texts, **kw):
        hf.prompts.extend(texts)
        return generate(texts, **kw)

    hf.generate = counted
    return hf


def _assert_same_run(a, b):
    assert a.estimations.keys() == b.estimations.keys() and a.gen_metrics.keys() == b.gen_metrics.keys()
    for key in a.estimations:
        np.testing.assert_array_equal(a.estimations[key], b.estimations[key])
    for key in a.gen_metrics:
        np.testing.assert_array_equal(a.gen_metrics[key], b.gen_metrics[key])
    np.testing.assert_equal(a.metrics, b.metrics)  # NaN == NaN here
    assert a.stats.keys() == b.stats.keys()
    assert a.stats["answer"] == b.stats["answer"] and a.stats["sample_texts"] == b.stats["sample_texts"]
    for name in ("log_probs", "token_entropies"):
        for x, y in zip(a.stats[name], b.stats[name]):
            assert x.dtype == y.dtype
            np.testing.assert_array_equal(x, y)


def _kill_child(script, *args):
    import json

    child = subprocess.run([sys.executable, "-c", script, *map(str, args[:3]), json.dumps(args[3]),
                            json.dumps(args[4])], capture_output=True, text=True, timeout=600,
                           env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert child.returncode == -signal.SIGKILL, child.stderr[-3000:]
    assert "finished" not in child.stdout


def test_a_killed_hf_run_resumes_with_only_the_missing_examples_and_the_same_numbers(model_dirs, tmp_path):
    folder, cache = model_dirs["causal"], tmp_path / "cache"
    _kill_child(_HF_CHILD, folder, cache, 2, RECORDS, OPTIONS)
    files = sorted(cache.glob("ue-run-*/batch-*.npz"))
    assert [f.name[:14] for f in files] == ["batch-00000000", "batch-00000002"]  # examples 0-1 and 2-3

    resumed_model, fresh_model = _counting(folder), _counting(folder)
    resumed = UEManager(RECORDS, model=resumed_model, cache_dir=cache, **OPTIONS)
    resumed()
    fresh = UEManager(RECORDS, model=fresh_model, **OPTIONS)
    fresh()
    missing = [q for q, _ in QA[4:]]
    # the greedy pass (a batch at a time) and the sampling (a prompt at a time) saw the missing prompts only
    assert sorted(resumed_model.prompts) == sorted(missing * 2)
    assert sorted(fresh_model.prompts) == sorted([q for q, _ in QA] * 2)
    assert any("4 of 7 examples read back" in n for n in resumed.notes)
    _assert_same_run(resumed, fresh)


def test_resumed_with_another_batch_size(model_dirs, tmp_path):
    """Batch layout: the cache is not keyed by batch_size; a run resumed in batches of 3 computes the examples
    left, equal to an uninterrupted run's up to the padding of a batched greedy pass (as across batch sizes)."""
    from assay_transformers.generation import HFModel

    folder, cache = model_dirs["causal"], tmp_path / "cache"
    failing = _counting(folder)
    generate = HFModel.generate

    def fail_on_third_batch(texts, **kw):
        if QA[4][0] in texts:
            raise RuntimeError("out of memory")
        return generate(failing, texts, **kw)

    failing.generate = fail_on_third_batch
    with pytest.raises(RuntimeError, match="out of memory"):
        UEManager(RECORDS, model=failing, cache_dir=cache, **OPTIONS)()
    again = _counting(folder)
    resumed = UEManager(RECORDS, model=again, cache_dir=cache, **{**OPTIONS, "batch_size": 3})
    resumed()
    assert sorted(again.prompts) == sorted([q for q, _ in QA[4:]] * 2)
    fresh = UEManager(RECORDS, model=str(folder), **OPTIONS)
    fresh()
    assert resumed.stats["answer"] == fresh.stats["answer"]
    assert resumed.stats["sample_texts"] == fresh.stats["sample_texts"]  # seeded by position, not by batch
    for key in fresh.estimations:
        np.testing.assert_allclose(resumed.estimations[key], fresh.estimations[key], atol=1e-4, rtol=0)


def test_another_model_in_the_same_cache_dir_is_not_reused(model_dirs, tmp_path):
    cache = tmp_path / "cache"
    UEManager(RECORDS[:3], model=str(model_dirs["causal"]), cache_dir=cache, **OPTIONS)()
    counted = _counting(model_dirs["seq2seq"])
    with pytest.warns(UserWarning, match=r"another model run's results.*differ in: model"):
        UEManager(RECORDS[:3], model=counted, cache_dir=cache, **OPTIONS)()
    assert sorted(counted.prompts) == sorted([q for q, _ in QA[:3]] * 2)


def test_a_model_given_as_objects_is_keyed_by_its_weights(model_dirs, tmp_path):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from assay_transformers.generation import HFModel

    folder = model_dirs["causal"]
    model = AutoModelForCausalLM.from_pretrained(folder)
    tok = AutoTokenizer.from_pretrained(folder)
    a, b = HFModel((model, tok)).fingerprint(), HFModel((model, tok)).fingerprint()
    assert a == b and "weights_sha256" in a
    UEManager(RECORDS[:1], model=(model, tok), cache_dir=tmp_path / "c", **OPTIONS)()
    with torch.no_grad():
        next(model.parameters()).view(-1)[0] += 1.0
    assert HFModel((model, tok)).fingerprint()["weights_sha256"] != a["weights_sha256"]
    assert HFModel(str(folder)).fingerprint()["files_sha256"]
    with pytest.warns(UserWarning, match=r"differ in: model"):  # the changed weights: another run
        UEManager(RECORDS[:1], model=(model, tok), cache_dir=tmp_path / "c", **OPTIONS)()


_BLACKBOX_CHILD = textwrap.dedent("""
    import json, os, signal, sys, warnings
    signal.signal(signal.SIGINT, signal.SIG_DFL)   # the default dispositions this test relies on
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    from pathlib import Path
    from assay.uncertainty import UEManager
    from assay_transformers.blackbox import OpenAIModel
    from assay_transformers.openai_api import OpenAIClient

    url, cache, kill_after = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    records, opts = json.loads(sys.argv[4]), json.loads(sys.argv[5])
    complete = OpenAIClient.complete

    def killing(self, *a, **kw):   # a request once kill_after batches are on disk: die before sending it
        if len(list(cache.glob("ue-run-*/batch-*.npz"))) >= kill_after:
            os.kill(os.getpid(), signal.SIGKILL)
        return complete(self, *a, **kw)

    OpenAIClient.complete = killing
    warnings.simplefilter("ignore")
    man = UEManager(records, model=OpenAIModel(url, name=opts.pop("name"), timeout=60), cache_dir=str(cache), **opts)
    man()
    print("finished")
""")

BLACKBOX_OPTIONS = {"estimators": ["lexical_similarity", "num_distinct_answers"], "gen_metrics": ["accuracy"],
                    "ue_metrics": ["prr"], "batch_size": 2, "max_new_tokens": 5, "samples_n": 3, "seed": 3}


def test_a_killed_black_box_run_resumes_with_only_the_missing_requests(openai_server, tmp_path):
    from assay_transformers.blackbox import OpenAIModel

    cache, records = tmp_path / "cache", RECORDS[:5]
    _kill_child(_BLACKBOX_CHILD, openai_server.base_url, cache, 2, records,
                {**BLACKBOX_OPTIONS, "name": openai_server.model})
    assert len(list(cache.glob("ue-run-*/batch-*.npz"))) == 2  # examples 0-3

    resumed_model = OpenAIModel(openai_server.base_url, name=openai_server.model, timeout=60)
    fresh_model = OpenAIModel(openai_server.base_url, name=openai_server.model, timeout=60)
    resumed = UEManager(records, model=resumed_model, cache_dir=cache, **BLACKBOX_OPTIONS)
    resumed()
    fresh = UEManager(records, model=fresh_model, **BLACKBOX_OPTIONS)
    fresh()
    # one example of five left: the uninterrupted run sends 5 times as many requests (greedy and samples, as
    # many per example; counted by the client), and the resumed one asked only for example 4
    assert fresh_model.client.requests == 5 * resumed_model.client.requests
    assert {k[3] for k in resumed_model.answers_cached} == {records[4]["input"]}
    assert resumed.stats["answer"] == fresh.stats["answer"]
    assert resumed.stats["sample_texts"] == fresh.stats["sample_texts"]
    for key in fresh.estimations:
        np.testing.assert_array_equal(resumed.estimations[key], fresh.estimations[key])
    np.testing.assert_equal(resumed.metrics, fresh.metrics)


def _ue_config(tmp_path, model_dir, **model):
    import json

    (tmp_path / "qa.jsonl").write_text("".join(json.dumps({"question": q, "answer": a}) + "\n" for q, a in QA))
    cfg = {"model": {"path": str(model_dir), "batch_size": 2, "max_new_tokens": 4, "samples_n": 2, **model},
           "dataset": {"path": "qa.jsonl", "text_column": "question", "label_column": "answer", "size": 4},
           "seed": [1, 2], "estimators": ["msp", "mc_sequence_entropy"], "gen_metrics": ["accuracy"],
           "ue_metrics": ["prr"], "save_path": "out", "plots": False}
    path = tmp_path / "ue.yaml"
    path.write_text(json.dumps(cfg))  # JSON is YAML
    return path


def test_assay_ue_model_cache_dir_keeps_one_run_per_seed_and_resumes(model_dirs, tmp_path, monkeypatch):
    from assay.cli import main
    from assay_transformers.generation import HFModel

    path = _ue_config(tmp_path, model_dirs["causal"], cache_dir="cache")  # relative to the config file
    assert main(["ue", str(path)]) == 0
    for seed in (1, 2):
        assert len(list((tmp_path / "cache" / f"seed-{seed}").glob("ue-run-*/batch-*.npz"))) == 2
    first = UEManager.load(tmp_path / "out" / "seed-2")

    def no_model(self, texts, **kw):
        raise AssertionError(f"the model was asked for {texts}")

    monkeypatch.setattr(HFModel, "generate", no_model)  # every example is in the cache: the model never runs
    assert main(["ue", str(path)]) == 0
    again = UEManager.load(tmp_path / "out" / "seed-2")
    assert again.stats["sample_texts"] == first.stats["sample_texts"]
    np.testing.assert_array_equal(again.estimations[("sequence", "msp")], first.estimations[("sequence", "msp")])


def test_assay_ue_model_cache_dir_must_be_a_path(model_dirs, tmp_path, capsys):
    from assay.cli import main

    assert main(["ue", str(_ue_config(tmp_path, model_dirs["causal"], cache_dir=3))]) != 0
    assert "model.cache_dir: expected a non-empty string, got 3" in capsys.readouterr().err
