"""UEManager(dataset, model="folder") end to end, and `assay ue` with model / dataset / seed sections."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from assay.cli import main
from assay.uncertainty import UEManager

# random tiny models answer nothing right: PRR / ROC-AUC on constant accuracy are NaN with this warning
pytestmark = pytest.mark.filterwarnings("ignore::assay.errors.UndefinedMetricWarning")

QA = [("the capital of france is", "paris"), ("what", "small"), ("who is the big red river city of two", "two"),
      ("yes no", "no"), ("a small blue", "red")]
RECORDS = [{"input": q, "reference": a} for q, a in QA]
ESTIMATORS = ["msp", "perplexity", "mean_token_entropy", "mc_sequence_entropy"]


def run(model_dir, batch_size, **kw):
    man = UEManager(RECORDS, model=str(model_dir), estimators=ESTIMATORS, gen_metrics=["accuracy"],
                    ue_metrics=["prr"], batch_size=batch_size, max_new_tokens=5, samples_n=2, seed=3, **kw)
    man()
    return man


@pytest.mark.parametrize("kind", ["causal", "seq2seq"])
def test_manager_estimations_equal_a_manual_forward_pass_in_batches_of_1_and_4(model_dirs, kind):
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    one, four = run(model_dirs[kind], 1), run(model_dirs[kind], 4)  # 4: a full batch and a batch of one
    auto = AutoModelForCausalLM if kind == "causal" else AutoModelForSeq2SeqLM
    model, tok = auto.from_pretrained(model_dirs[kind]), AutoTokenizer.from_pretrained(model_dirs[kind])
    vocab = tok.convert_ids_to_tokens(list(range(len(tok))))
    for i, (prompt, _) in enumerate(QA):
        ids = tok(prompt, return_tensors="pt")["input_ids"]
        answer = one.stats["answer"][i]
        gen = [vocab.index(w) for w in answer.split()]
        if len(gen) < len(one.stats["log_probs"][i]):  # the model ended with EOS (or padding): the token id 1
            gen.append(1)
        g = torch.tensor([gen])
        with torch.no_grad():
            if kind == "causal":
                logits = model(input_ids=torch.cat([ids, g], 1)).logits[0, ids.shape[1] - 1: ids.shape[1] - 1 + len(gen)]
            else:
                dec = torch.cat([torch.tensor([[0]]), g[:, :-1]], 1)
                logits = model(input_ids=ids, decoder_input_ids=dec).logits[0]
        rows = torch.log_softmax(logits.double(), -1).numpy()
        lp = rows[np.arange(len(gen)), gen]
        ent = -(np.exp(rows) * rows).sum(1)
        np.testing.assert_allclose(one.stats["log_probs"][i], lp, atol=2e-4, rtol=0)
        np.testing.assert_allclose(one.stats["token_entropies"][i], ent, atol=2e-4, rtol=0)
        assert one.estimations[("sequence", "msp")][i] == pytest.approx(-lp.sum(), abs=1e-3)
        assert one.estimations[("sequence", "perplexity")][i] == pytest.approx(-lp.mean(), abs=2e-4)
        assert one.estimations[("sequence", "mean_token_entropy")][i] == pytest.approx(ent.mean(), abs=2e-4)
    assert one.stats["answer"] == four.stats["answer"]
    # samples are drawn one prompt at a time with a per-example seed: identical whatever the batch size
    assert one.stats["sample_texts"] == four.stats["sample_texts"]
    np.testing.assert_array_equal(one.estimations[("sequence", "mc_sequence_entropy")],
                                  four.estimations[("sequence", "mc_sequence_entropy")])
    for name in ESTIMATORS[:3]:
        np.testing.assert_allclose(one.estimations[("sequence", name)], four.estimations[("sequence", name)],
                                   atol=1e-3, rtol=0)
    correct = [float(a == ref) for a, (_, ref) in zip(one.stats["answer"], QA)]
    assert one.gen_metrics[("sequence", "accuracy")].tolist() == correct


def test_saved_manager_loads_and_rescores_without_the_model(model_dirs, tmp_path):
    man = run(model_dirs["causal"], 2, save_stats=["greedy_tokens"])
    assert {"input_texts", "answer", "log_probs", "token_entropies", "sample_texts", "sample_log_probs",
            "greedy_tokens", "reference"} <= set(man.stats)
    assert "greedy_log_probs" not in man.stats  # (T, V) per example: saved only when asked for
    man.save(tmp_path / "run")
    loaded = UEManager.load(tmp_path / "run")
    assert loaded.stats["answer"] == man.stats["answer"]
    for a, b in zip(loaded.stats["log_probs"], man.stats["log_probs"]):
        np.testing.assert_array_equal(a, b)
    new = loaded.rescore(["rcc_auc"])
    assert set(new) == {("sequence", e, "accuracy", "rcc_auc") for e in ESTIMATORS}
    # the saved statistics let an estimator run again with no model
    again = UEManager(loaded.stats, estimators=["msp"], gen_metrics=["accuracy"], ue_metrics=["prr"])
    again()
    np.testing.assert_array_equal(again.estimations[("sequence", "msp")], man.estimations[("sequence", "msp")])


def test_a_missing_model_folder_fails_before_generating(tmp_path):
    man = UEManager(RECORDS, model=str(tmp_path / "missing"), estimators=["msp"], gen_metrics=["accuracy"],
                    ue_metrics=["prr"])
    with pytest.raises(Exception, match="is not on disk"):
        man()


def _config(tmp_path, model_dir, **extra):
    (tmp_path / "qa.jsonl").write_text("".join(json.dumps({"question": q, "answer": a}) + "\n" for q, a in QA))
    cfg = {"model": {"path": str(model_dir), "batch_size": 2, "max_new_tokens": 4, "samples_n": 2,
                     "generation_params": {"temperature": 1.0, "top_k": 10}},
           "dataset": {"path": "qa.jsonl", "text_column": "question", "label_column": "answer",
                       "template": "{text} is", "size": 4},
           "seed": [1, 2], "estimators": ["msp", "mc_sequence_entropy"], "gen_metrics": ["accuracy"],
           "ue_metrics": ["prr"], "save_path": "out", "plots": False, **extra}
    path = tmp_path / "ue.yaml"
    path.write_text(json.dumps(cfg))  # JSON is YAML
    return path


def test_assay_ue_with_a_model_writes_one_manager_per_seed(model_dirs, tmp_path, capsys):
    assert main(["ue", str(_config(tmp_path, model_dirs["causal"]))]) == 0
    first, second = UEManager.load(tmp_path / "out" / "seed-1"), UEManager.load(tmp_path / "out" / "seed-2")
    assert first.n_examples == second.n_examples == 4
    assert first.stats["input_texts"][0] == "the capital of france is is"
    assert first.stats["answer"] == second.stats["answer"]  # greedy: the seed does not matter
    assert first.stats["sample_texts"] != second.stats["sample_texts"]  # sampling: it does
    assert (tmp_path / "out" / "seed-2" / "table.md").exists()
    assert ("sequence", "msp", "accuracy", "prr") in first.rescore(["prr"])
    assert "## seed 2" in capsys.readouterr().out


@pytest.mark.parametrize("section, key, where", [
    ("model", "batchsize", "model.batchsize"),
    ("dataset", "text_col", "dataset.text_col"),
])
def test_an_unknown_key_in_a_section_names_its_path(model_dirs, tmp_path, capsys, section, key, where):
    path = _config(tmp_path, model_dirs["causal"])
    cfg = json.loads(path.read_text())
    cfg[section][key] = 1
    path.write_text(json.dumps(cfg))
    assert main(["ue", str(path)]) != 0
    assert f"{where}: unknown key {key!r}" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_an_unknown_generation_parameter_names_its_path(model_dirs, tmp_path, capsys):
    path = _config(tmp_path, model_dirs["causal"])
    cfg = json.loads(path.read_text())
    cfg["model"]["generation_params"]["temprature"] = 1
    path.write_text(json.dumps(cfg))
    assert main(["ue", str(path)]) != 0
    assert "model.generation_params.temprature: unknown generation parameter" in capsys.readouterr().err


def test_assay_ue_with_a_seq2seq_model_and_one_seed(model_dirs, tmp_path):
    path = _config(tmp_path, model_dirs["seq2seq"])
    cfg = json.loads(path.read_text())
    cfg["model"]["type"] = "seq2seq"
    cfg["seed"] = 5
    cfg["estimators"] = ["msp"]
    cfg["dataset"].update(few_shot=1, template="{few_shot}{text}", few_shot_template="{text} {label} ")
    path.write_text(json.dumps(cfg))
    assert main(["ue", str(path)]) == 0
    man = UEManager.load(tmp_path / "out" / "seed-5")
    assert man.n_examples == 4 and man.stats["input_texts"][0] == f"{QA[0][0]} {QA[0][1]} {QA[1][0]}"
