"""ValUES' published configs as written: loading, _target_ aliases, a typo anywhere an error naming the key path."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay_segmentation.downstream import load_config

#: ValUES' published eval configs, unchanged (the toy and LIDC ones and the files they read)
CONFIGS = Path(__file__).resolve().parents[3] / "examples" / "values" / "evaluation" / "configs"


@pytest.fixture
def configs(tmp_path):
    dest = tmp_path / "configs"
    shutil.copytree(CONFIGS, dest)
    return dest


def test_toy_config_loads_unchanged_with_base_path_overridden(tmp_path):
    cfg = load_config(CONFIGS / "eval_config_toy.yaml", [f"base_path={tmp_path}"])
    assert cfg["layout"] == "values" and cfg["base_path"] == str(tmp_path)
    assert cfg["tasks"] == ["ood_detection"]
    # TOY and TOY_SEED123 (toy_defaults@TOY, then the seed-123 overrides): 2 experiments
    assert [e["iter_params"]["seed"] for e in cfg["experiments"]] == [["128", "158"], ["123"]]
    # threshold_path: ${base_path}/threshold_analysis.json, interpolated after the override
    aggs = cfg["task_params"]["aggregation"]["function"]["aggregations"]
    assert aggs["threshold"]["threshold_path"] == f"{tmp_path}/threshold_analysis.json"
    from assay_segmentation.downstream.values import build_values_grid

    versions = build_values_grid(cfg)
    assert len(versions) == 15
    ssn = [v for v in versions if v.pred_model == "SSN"]
    assert [v.exp_path.relative_to(tmp_path).as_posix() for v in ssn] == [
        "SSN-Case-3-gradient-clip/test_results/epochs150_rank5_pretrain5_seed128",
        "SSN-Case-3-gradient-clip/test_results/epochs150_rank5_pretrain5_seed158",
        "SSN-Case-3-gradient-clip/test_results/epochs150_rank5_pretrain5"]


def test_lidc_config_resolves_lazily_like_hydra(tmp_path, monkeypatch):
    monkeypatch.delenv("USER", raising=False)
    cfg = load_config(CONFIGS / "eval_config_lidc.yaml", [f"base_path={tmp_path}/a", f"second_cycle_path={tmp_path}/b"])
    assert cfg["second_cycle_path"] == f"{tmp_path}/b" and cfg["tasks"] == ["al_improvement"]
    # entries that name ${oc.env:USER} and are not run stay unresolved, as in ValUES; their keys were still checked
    assert set(cfg["unresolved_task_params"]) == {"ood_detection", "second_cycle_splits", "second_cycle_splits_random"}
    with pytest.raises(ConfigError, match=r"task_params\.ood_detection\.function\.base_splits_path: .*USER"):
        load_config(CONFIGS / "eval_config_lidc.yaml", [f"base_path={tmp_path}/a", f"second_cycle_path={tmp_path}"],
                    tasks=["ood_detection"])
    monkeypatch.setenv("USER", "someone")
    cfg = load_config(CONFIGS / "eval_config_lidc.yaml", [f"base_path={tmp_path}/a"])
    assert cfg["second_cycle_path"] == "/home/someone/LIDC-IDRI/ActiveLearning/SecondCycle"
    assert cfg["task_params"]["ood_detection"]["function"]["base_splits_path"] == \
        "/home/someone/LIDC-IDRI/CroppedData/splits"


def test_env_interpolation_of_an_unset_variable_names_the_key(monkeypatch):
    monkeypatch.delenv("USER", raising=False)
    with pytest.raises(ConfigError, match=r"eval_config_toy\.yaml: base_path: expected an interpolation.*USER"):
        load_config(CONFIGS / "eval_config_toy.yaml")


# (file, text, replacement, what the message must contain): one typo per key ValUES' configs use
TYPOS = [
    ("eval_config_toy.yaml", "tasks: [", "taks: [", ["taks", "Did you mean 'tasks'?"]),
    ("eval_config_toy.yaml", "  ood_detection:\n    datasets", "  ood_detection:\n    dataset",
     ["task_params.ood_detection.dataset", "Did you mean 'datasets'?"]),
    ("eval_config_toy.yaml", "evaluation.metrics.auroc.ood_detection", "evaluation.metrics.auroc.ood_detecton",
     ["task_params.ood_detection.function._target_", "unknown target", "evaluation.metrics.auroc.ood_detection",
      "--allow-import"]),
    ("eval_config_toy.yaml", '  - ${TOY}\n', '  - ${TOYS}\n', ["experiments", "TOYS"]),
    ("datasets/toy_defaults.yaml", "image_ending:", "image_endng:",
     ["experiments[0].image_endng", "Did you mean 'image_ending'?"]),
    ("datasets/toy_defaults.yaml", 'unc_types: ["predictive_uncertainty"]', 'unc_type: ["predictive_uncertainty"]',
     ["experiments[0].prediction_models.Softmax.unc_type", "Did you mean 'unc_types'?"]),
    ("datasets/toy_defaults.yaml", "pretrain: 5", "pretrian: 5", ["experiments[0].pretrian"]),
    ("datasets/toy_defaults.yaml", "  pred_model: [", "  pred_modle: [", ["experiments[0].iter_params",
                                                                         "'pred_model'"]),
    ("datasets/toy_seed123.yaml", 'naming_scheme_version: "epochs{epochs}"\n    Dropout',
     'naming_scheme_verison: "epochs{epochs}"\n    Dropout',
     ["experiments[1].prediction_models.Softmax.naming_scheme_verison"]),
    ("tasks/threshold.yaml", "accumulated: True\n  function:\n    _target_: evaluation.uncertainty_aggregation"
                             ".find_threshold.get_foreground_quantile",
     "acumulated: True\n  function:\n    _target_: evaluation.uncertainty_aggregation"
     ".find_threshold.get_foreground_quantile", ["task_params.threshold[0].acumulated", "Did you mean 'accumulated'?"]),
    ("tasks/threshold.yaml", "quantile_path:", "quantile_pth:",
     ["task_params.threshold[1].postprocess_function.quantile_pth", "Did you mean 'quantile_path'?"]),
    ("tasks/aggregation_patch_thresh.yaml", "patch_size: 10", "patch_sise: 10",
     ["task_params.aggregation.function.aggregations.patch_level.patch_sise", "Did you mean 'patch_size'?"]),
    ("tasks/aggregation_patch_thresh.yaml", "threshold_path:", "treshold_path:",
     ["task_params.aggregation.function.aggregations.threshold.treshold_path", "Did you mean 'threshold_path'?"]),
    ("tasks/aggregation_patch_thresh.yaml", "aggregate_uncertainties.threshold_aggregation",
     "aggregate_uncertainties.treshold_aggregation",
     ["task_params.aggregation.function.aggregations.threshold._target_", "unknown target"]),
    ("tasks/aggregation_defaults.yaml", "datasets:", "datsets:", ["task_params.aggregation.datsets"]),
]


@pytest.mark.parametrize("file, old, new, expect", TYPOS, ids=[t[2][:30] for t in TYPOS])
def test_a_typo_anywhere_in_the_toy_config_names_the_key_path(configs, tmp_path, file, old, new, expect):
    path = configs / file
    text = path.read_text()
    assert old in text, (file, old)
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(ConfigError) as info:
        load_config(configs / "eval_config_toy.yaml", [f"base_path={tmp_path}"])
    msg = str(info.value)
    for part in expect:
        assert part in msg, msg


@pytest.mark.parametrize("file, old, new, expect", [
    ("eval_config_lidc.yaml", "second_cycle_path:", "second_cycle_pth:", ["second_cycle_pth"]),
    ("eval_config_lidc.yaml", "random_types:", "random_type:",
     ["task_params.second_cycle_splits_random.function.random_type", "Did you mean 'random_types'?"]),
    ("eval_config_lidc.yaml", "evaluation.metrics.ncc.main", "evaluation.metrics.ncc.mian",
     ["task_params.ambiguity_modeling.function._target_", "unknown target"]),
    ("datasets/lidc.yaml", "fold: 0", "flod: 0", ["experiments[0].flod"]),
    ("datasets/lidc.yaml", "n_reference_segs: 4", "n_reference_segs: four",
     ["experiments[0].n_reference_segs", "positive integer"]),
    ("tasks/failure_detection.yaml", "evaluation.metrics.aurc.main", "evaluation.metrics.aurc.mainn",
     ["task_params.failure_detection.function._target_", "evaluation.metrics.aurc.main"]),
])
def test_a_typo_in_the_lidc_config_names_the_key_path(configs, tmp_path, monkeypatch, file, old, new, expect):
    monkeypatch.setenv("USER", "someone")
    path = configs / file
    text = path.read_text()
    assert old in text, (file, old)
    path.write_text(text.replace(old, new, 1))
    overrides = [f"base_path={tmp_path}"]
    if "second_cycle_path:" in (configs / "eval_config_lidc.yaml").read_text():
        overrides.append(f"second_cycle_path={tmp_path}/2")
    with pytest.raises(ConfigError) as info:
        load_config(configs / "eval_config_lidc.yaml", overrides)
    for part in expect:
        assert part in str(info.value), str(info.value)


def test_override_typos_and_bad_overrides_are_errors(tmp_path):
    with pytest.raises(ConfigError, match=r"the command line: .*base_pth"):
        load_config(CONFIGS / "eval_config_toy.yaml", [f"base_pth={tmp_path}"])
    with pytest.raises(ConfigError, match=r"unknown key 'extra'"):  # added, but no meaning: still an error
        load_config(CONFIGS / "eval_config_toy.yaml", [f"base_path={tmp_path}", "+extra=1"])
    with pytest.raises(ConfigError, match=r"tasks\[0\]: expected a key of task_params, got 'ood_detecton'"):
        load_config(CONFIGS / "eval_config_toy.yaml", [f"base_path={tmp_path}"], tasks=["ood_detecton"])


def test_unknown_dotted_paths_are_imported_only_with_the_opt_in(configs, tmp_path):
    path = configs / "eval_config_toy.yaml"
    path.write_text(path.read_text().replace("evaluation.metrics.auroc.ood_detection",
                                             "assay_segmentation.values_steps.OodDetectionStep"))
    with pytest.raises(ConfigError, match="unknown target 'assay_segmentation.values_steps.OodDetectionStep'"):
        load_config(path, [f"base_path={tmp_path}"])
    cfg = load_config(path, [f"base_path={tmp_path}"], allow_import=True)
    assert cfg["allow_import"] is True
    with pytest.raises(ConfigError, match="--allow-import"):  # never in the config (tests/downstream/
        load_config(path, [f"base_path={tmp_path}", "+allow_import=true"])  # test_config_cannot_run_code.py)
    path.write_text(path.read_text().replace("assay_segmentation.values_steps.OodDetectionStep", "os.nope.system"))
    with pytest.raises(ConfigError, match="could not import 'os.nope.system'"):
        load_config(path, [f"base_path={tmp_path}"], allow_import=True)


def test_a_target_that_cannot_serve_as_a_step_is_refused(configs, tmp_path):
    path = configs / "eval_config_toy.yaml"
    path.write_text(path.read_text().replace("_target_: evaluation.metrics.auroc.ood_detection",
                                             "_target_: evaluation.uncertainty_aggregation.aggregate_uncertainties"
                                             ".image_level_aggregation"))
    with pytest.raises(ConfigError, match=r"task_params\.ood_detection\.function: the target .* has no version_files"):
        load_config(path, [f"base_path={tmp_path}"])


def test_refused_gta_keys_say_why(configs, tmp_path):
    path = configs / "datasets" / "toy_defaults.yaml"
    path.write_text(path.read_text().replace("case: 3", "case: 3\npred_seg_loading: {_target_: x.y}"))
    with pytest.raises(ConfigError, match=r"experiments\[0\]\.pred_seg_loading: not supported by assay"):
        load_config(configs / "eval_config_toy.yaml", [f"base_path={tmp_path}"])
