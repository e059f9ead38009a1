"""Bad `model:` / `dataset:` / `seed:` sections of an `assay ue` config: a ConfigError naming the key path."""

from __future__ import annotations

import copy
import json

import pytest

from assay.errors import ConfigError
from assay_uncertainty.command.ue import load_config

GOOD = {"model": {"path": "m", "batch_size": 2, "generation_params": {"top_k": 5}},
        "dataset": {"path": "d.jsonl", "text_column": "q"}, "seed": [1, 2],
        "estimators": ["msp"], "gen_metrics": ["accuracy"], "ue_metrics": ["prr"]}


def _write(tmp_path, cfg):
    path = tmp_path / "ue.yaml"
    path.write_text(json.dumps(cfg))
    return path


def test_a_good_config_loads(tmp_path):
    assert load_config(_write(tmp_path, GOOD))["model"]["batch_size"] == 2


@pytest.mark.parametrize("edit, match", [
    (lambda c: c["model"].update(batchsize=1), r"model\.batchsize: unknown key"),
    (lambda c: c["dataset"].update(text_col="q"), r"dataset\.text_col: unknown key"),
    (lambda c: c["model"]["generation_params"].update(temprature=1), r"model\.generation_params\.temprature"),
    (lambda c: c["model"].update(type="decoder"), r"model\.type: expected causal or seq2seq"),
    (lambda c: c["model"].update(dtype="int8"), r"model\.dtype"),
    (lambda c: c["model"].update(batch_size=0), r"model\.batch_size: expected an integer >= 1"),
    (lambda c: c["model"].update(save_stats="greedy_log_probs"), r"model\.save_stats"),
    (lambda c: c["model"].update(ignore_exceptions="yes"), r"model\.ignore_exceptions"),
    (lambda c: c["model"].pop("path"), r"model\.path: expected a path"),
    (lambda c: c.pop("dataset"), r"dataset: expected this section"),
    (lambda c: c.update(data="x.jsonl"), r"data: expected no 'data' beside 'model'"),
    (lambda c: c.update(seed=[1, 1]), r"seed: expected distinct seeds"),
    (lambda c: c.update(seed=["1"]), r"seed: expected an integer >= 0"),
    (lambda c: c["dataset"].update(template="Q:"), r"dataset\.template: expected a template containing \{text\}"),
    (lambda c: c["dataset"].update(size=-2), r"dataset\.size"),
    (lambda c: c.update(model="m"), r"model: expected a mapping"),
])
def test_bad_sections_name_the_key_path(tmp_path, edit, match):
    cfg = copy.deepcopy(GOOD)
    edit(cfg)
    with pytest.raises(ConfigError, match=match):
        load_config(_write(tmp_path, cfg))


def test_a_config_without_model_still_needs_data(tmp_path):
    cfg = {k: v for k, v in GOOD.items() if k not in ("model", "dataset", "seed")}
    with pytest.raises(ConfigError, match="data: expected this key"):
        load_config(_write(tmp_path, cfg))
