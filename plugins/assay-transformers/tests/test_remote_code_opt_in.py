"""A model folder's own Python runs only with --trust-remote-code / trust_remote_code=True (issue 27, item 5).

The folder is the tiny GPT-2 with an ``auto_map`` naming ``custom_model.MarkerModel``, a
subclass whose ``__init__`` appends to a marker file: the marker's content says how often the
folder's code ran. A config file asking for it (``model.load_args.trust_remote_code`` or
``model.trust_remote_code``) is an error naming the key and the flag, and nothing runs.
"""

from __future__ import annotations

import json
import shutil

import pytest

from assay.cli import main
from assay.errors import InvalidParameterError
from assay.uncertainty import UEManager
from assay_transformers.generation import HFModel

pytestmark = pytest.mark.filterwarnings("ignore::assay.errors.UndefinedMetricWarning")

CUSTOM = '''
import os

from transformers import GPT2LMHeadModel


class MarkerModel(GPT2LMHeadModel):
    def __init__(self, config, *args, **kwargs):
        with open(os.environ["ASSAY_TEST_REMOTE_CODE_MARKER"], "a") as f:
            f.write("ran\\n")
        super().__init__(config, *args, **kwargs)
'''


@pytest.fixture
def remote_code_model(model_dirs, tmp_path, monkeypatch):
    import transformers.dynamic_module_utils as dmu

    monkeypatch.setattr(dmu, "HF_MODULES_CACHE", str(tmp_path / "hf-modules"))  # not the user's cache
    folder = tmp_path / "remote-model"
    shutil.copytree(model_dirs["causal"], folder)
    (folder / "custom_model.py").write_text(CUSTOM)
    cfg = json.loads((folder / "config.json").read_text())
    cfg["auto_map"] = {"AutoModelForCausalLM": "custom_model.MarkerModel"}
    (folder / "config.json").write_text(json.dumps(cfg))
    marker = tmp_path / "marker.txt"
    monkeypatch.setenv("ASSAY_TEST_REMOTE_CODE_MARKER", str(marker))
    return folder, marker


def _config(tmp_path, model_dir, **model_extra):
    (tmp_path / "qa.jsonl").write_text("".join(json.dumps({"question": q, "answer": a}) + "\n"
                                               for q, a in [("the capital of france is", "paris"), ("who", "two")]))
    cfg = {"model": {"path": str(model_dir), "max_new_tokens": 2, "samples_n": 2, **model_extra},
           "dataset": {"path": "qa.jsonl", "text_column": "question", "label_column": "answer"},
           "estimators": ["msp"], "gen_metrics": ["accuracy"], "ue_metrics": ["prr"], "save_path": "out",
           "plots": False}
    path = tmp_path / "ue.yaml"
    path.write_text(json.dumps(cfg))
    return path


@pytest.mark.parametrize("extra, key", [
    ({"load_args": {"trust_remote_code": True}}, "model.load_args.trust_remote_code"),
    ({"trust_remote_code": True}, "model.trust_remote_code"),
    ({"load_args": {"trust_remote_code": False}}, "model.load_args.trust_remote_code"),
])
def test_a_config_that_trusts_remote_code_is_an_error_naming_key_and_flag(remote_code_model, tmp_path, capsys,
                                                                          extra, key):
    folder, marker = remote_code_model
    assert main(["ue", str(_config(tmp_path, folder, **extra)), "--n-resamples", "0"]) == 2
    err = capsys.readouterr().err
    assert f"ue.yaml: {key}: a config file cannot set 'trust_remote_code'" in err, err
    assert "--trust-remote-code" in err and "Traceback" not in err, err
    assert not marker.exists() and not (tmp_path / "out").exists()


def test_without_the_flag_the_folders_code_does_not_run(remote_code_model, tmp_path):
    folder, marker = remote_code_model
    assert main(["ue", str(_config(tmp_path, folder)), "--n-resamples", "0"]) == 0
    assert not marker.exists()  # the built-in GPT-2 class (model_type) served, not MarkerModel
    assert UEManager.load(tmp_path / "out").n_examples == 2


def test_the_flag_opts_in(remote_code_model, tmp_path):
    folder, marker = remote_code_model
    assert main(["ue", str(_config(tmp_path, folder)), "--n-resamples", "0", "--trust-remote-code"]) == 0
    assert marker.read_text() == "ran\n"  # MarkerModel was built once, for every seed


def test_the_flag_without_a_model_section_is_an_error(tmp_path, capsys):
    (tmp_path / "out.jsonl").write_text(json.dumps({"greedy_log_probs": [[-0.1]], "accuracy": 1.0}) + "\n")
    path = tmp_path / "ue.yaml"
    path.write_text(json.dumps({"data": "out.jsonl", "estimators": ["msp"], "gen_metrics": ["accuracy"],
                                "ue_metrics": ["prr"]}))
    assert main(["ue", str(path), "--trust-remote-code"]) == 2
    assert "--trust-remote-code: applies to a config with a model: section" in capsys.readouterr().err


def test_python_keyword_is_the_opt_in_and_load_args_cannot_carry_it(remote_code_model):
    folder, marker = remote_code_model
    with pytest.raises(InvalidParameterError, match=r"load_args\['trust_remote_code'\].*trust_remote_code=True"):
        HFModel(str(folder), device="cpu", load_args={"trust_remote_code": True})
    assert not marker.exists()
    HFModel(str(folder), device="cpu")
    assert not marker.exists()
    model = HFModel(str(folder), device="cpu", trust_remote_code=True)
    assert type(model.model).__name__ == "MarkerModel" and marker.read_text() == "ran\n"
