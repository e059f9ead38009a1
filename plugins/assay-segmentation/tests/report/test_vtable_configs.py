"""A typo anywhere in ValUES' table and plot configs is an error naming the key path (never a silent default).

Each case copies the published configs (a ValUES checkout layout, with stubs for the
``uncertainty_modeling`` files that ``datasets/gta.yaml`` names), changes one thing and
expects a :class:`ConfigError` whose message names the key path.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "report"))
from assay_values_tree import values_checkout, write_tree

from assay.errors import ConfigError
from assay_segmentation.report.values_config import load_plot_config, load_table_config
from assay_segmentation.report.values_plots import plot_values
from assay_segmentation.report.values_results import load_values_results


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    root = tmp_path_factory.mktemp("trees")
    write_tree(root / "lidc", "lidc", n_images=2)
    write_tree(root / "gta", "gta", n_images=2, three_d=False)
    return root


def _checkout(tmp_path: Path, file: str | None = None, old: str = "", new: str = "") -> Path:
    configs = values_checkout(tmp_path)
    if file:
        path = configs / file
        text = path.read_text()
        assert old in text, (file, old)
        path.write_text(text.replace(old, new, 1))
    return configs


# (file, old text, new text, what the message must contain)
TABLE_CASES = [
    ("tasks/table_tasks.yaml", "metrics_key: \"auroc\"", "metrics_kye: \"auroc\"",
     "ds_tasks.ood_detection.auroc.metrics_kye: unknown key 'metrics_kye'. Did you mean 'metrics_key'?"),
    ("tasks/table_tasks.yaml", "higher_better: True", "higher_better: Yes please",
     "ds_tasks.seg_performance.dice.higher_better: expected true or false"),
    ("tasks/table_tasks.yaml", "levels: [\"pred_model\", \"unc_type\"]", "levels: [\"pred_model\", \"unc_tpe\"]",
     "ds_tasks.calibration.ace.levels[1]: unknown level 'unc_tpe'. Did you mean 'unc_type'?"),
    ("tasks/table_tasks.yaml", "levels: [\"pred_model\", \"unc_type\"]", "levels: [\"pred_model\", \"aggregation\"]",
     "ds_tasks.calibration.ace.levels: expected [pred_model], [pred_model, unc_type] or all"),
    ("tasks/table_tasks.yaml", "    dataset_splits: [\"ood\"]\n", "",
     "ds_tasks.active_learning.al_improvement.dataset_splits: expected a value (required)"),
    ("table_config_lidc.yaml", "name: \"shift\"", "name: \"shfit\"",
     "split_param.name: unknown iterated parameter 'shfit'. Did you mean 'shift'?"),
    ("table_config_lidc.yaml", "- \"malignancy\"", "- \"malignacy\"",
     "split_param.split_values[1]: unknown shift 'malignacy'. Did you mean 'malignancy'?"),
    ("table_config_lidc.yaml", "split_param:", "split_parm:",
     "split_parm: unknown key 'split_parm'. Did you mean 'split_param'?"),
    ("datasets/lidc.yaml", "      unc_types: [ \"predictive_uncertainty\" ]",
     "      unc_type: [ \"predictive_uncertainty\" ]",
     "experiments[0].prediction_models.Softmax.unc_type: unknown key 'unc_type'. Did you mean 'unc_types'?"),
    ("datasets/lidc.yaml", "\"{shift}_fold{fold}_seed{seed}\"", "\"{shift}_fold{flod}_seed{seed}\"",
     "experiments[0].prediction_models.Softmax.naming_scheme_version: unknown field {flod}"),
    ("datasets/lidc.yaml", "  image_ending:", "  image_endng:",
     "experiments[0].image_endng: unknown key 'image_endng'. Did you mean 'image_ending'?"),
]


@pytest.mark.parametrize(("file", "old", "new", "message"), TABLE_CASES, ids=[c[3][:40] for c in TABLE_CASES])
def test_table_config_typo_names_the_key_path(tmp_path, trees, file, old, new, message):
    configs = _checkout(tmp_path, file, old, new)
    with pytest.raises(ConfigError) as info:
        load_values_results(load_table_config(configs / "table_config_lidc.yaml", [f"base_path={trees / 'lidc'}"]))
    assert message in str(info.value)
    assert "table_config_lidc.yaml" in str(info.value)


def test_metrics_key_absent_from_the_files_names_the_key_and_the_file(tmp_path, trees):
    configs = _checkout(tmp_path, "tasks/table_tasks.yaml", "metrics_key: \"eaurc\"", "metrics_key: \"e_aurc\"")
    with pytest.raises(ConfigError, match=r"ds_tasks\.failure_detection\.eaurc\.metrics_key: 'e_aurc' is not in "
                                          r".*failure_detection\.json at mean\.predictive_uncertainty\.patch_level"
                                          r"\.metrics; keys there: aurc, eaurc"):
        load_values_results(load_table_config(configs / "table_config_lidc.yaml", [f"base_path={trees / 'lidc'}"]))


def test_unknown_override_names_the_command_line(tmp_path, trees):
    configs = _checkout(tmp_path)
    with pytest.raises(ConfigError, match=r"the command line: Could not override 'base_pth'"):
        load_table_config(configs / "table_config_lidc.yaml", ["base_pth=/x"])


PLOT = ["datasets.LIDC.base_path={lidc}", "datasets.GTA.base_path={gta}", "save_path={out}"]

PLOT_CASES = [
    ("plot_config.yaml", "hatches:", "hatchs:", "hatchs: unknown key 'hatchs'. Did you mean 'hatches'?"),
    ("plot_config.yaml", "    aleatoric_uncertainty: \"tab:cyan\"", "    aleatoric_uncertanty: \"tab:cyan\"",
     "coloring.unc_type.aleatoric_uncertanty: unknown unc_type 'aleatoric_uncertanty'. Did you mean "
     "'aleatoric_uncertainty'?"),
    ("plot_config.yaml", "\"tab:pink\"", "\"tab:pnik\"",
     "coloring.unc_type.epistemic_uncertainty: expected a matplotlib colour"),
    ("plot_config.yaml", "    SSN: \"oo\"", "    SSN: \"oq\"", "hatches.pred_model.SSN: expected a matplotlib hatch"),
    ("plot_config.yaml", "\"Ensemble\", \"TTA\"", "\"Ensemble\", \"TAT\"",
     "ordering.pred_model[3]: unknown pred_model 'TAT'. Did you mean 'TTA'?"),
    ("plot_config.yaml", "  LIDC Texture:", "  LIDC Textur:",
     "df_naming.LIDC Textur: unknown label 'LIDC Textur'. Did you mean 'LIDC Texture'?"),
    ("plot_config.yaml", "coloring:\n  unc_type:", "coloring:\n  unc_typ:",
     "coloring.unc_typ: unknown dimension 'unc_typ'. Did you mean 'unc_type'?"),
    ("tasks/plot_tasks.yaml", "pred_model: [\"Softmax\"]", "pred_model: [\"Sofmax\"]",
     "ds_tasks.ood_detection.auroc.filter.unc_type.pred_model[0]: unknown pred_model 'Sofmax'. Did you mean "
     "'Softmax'?"),
    ("tasks/plot_tasks.yaml", "    percent: true", "    precent: true",
     "ds_tasks.active_learning.al_improvement.precent: unknown key 'precent'. Did you mean 'percent'?"),
    ("tasks/plot_tasks.yaml", "    filter:\n      unc_type:", "    filter:\n      unc_typo:",
     "ds_tasks.ood_detection.auroc.filter.unc_typo: unknown dimension 'unc_typo'. Did you mean 'unc_type'?"),
]


@pytest.mark.parametrize(("file", "old", "new", "message"), PLOT_CASES, ids=[c[3][:40] for c in PLOT_CASES])
def test_plot_config_typo_names_the_key_path(tmp_path, trees, file, old, new, message):
    configs = _checkout(tmp_path, file, old, new)
    overrides = [o.format(lidc=trees / "lidc", gta=trees / "gta", out=tmp_path / "out") for o in PLOT]
    with pytest.raises(ConfigError) as info:
        plot_values(load_plot_config(configs / "plot_config.yaml", overrides))
    assert message in str(info.value)
    assert not (tmp_path / "out").exists()  # checked before anything is drawn


def test_case_counts():
    """The counts quoted in docs/reliability.d/vtable.md."""
    assert (len(TABLE_CASES), len(PLOT_CASES)) == (11, 10)


def test_table_and_plot_configs_swapped_say_which_command(tmp_path):
    configs = _checkout(tmp_path)
    with pytest.raises(ConfigError, match="got a plot config; draw it with 'assay plot'"):
        load_table_config(configs / "plot_config.yaml")
    with pytest.raises(ConfigError, match="got a table config; render it with 'assay table'"):
        load_plot_config(configs / "table_config_lidc.yaml", ["base_path=/x"])
