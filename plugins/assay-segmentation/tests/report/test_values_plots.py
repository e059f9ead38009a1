"""ValUES' plot config: the bars equal ValUES' computation (``rows="table"``), the distinct-value bars a hand
computation, the files land where ValUES puts them, and a metric that does not vary gets no figure."""

from __future__ import annotations

import json
import math

import attrs
import pandas as pd
import pytest
from assay_values_tree import values_checkout, values_table, write_tree

from assay.cli import main
from assay.errors import ConfigError, InvalidParameterError
from assay_segmentation.report import Column, ResultTable
from assay_segmentation.report.values_config import ValuesMetric, load_plot_config
from assay_segmentation.report.values_plots import bar_groups, dataset_tables, plot_values


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("plots")
    configs = values_checkout(root)
    write_tree(root / "lidc", "lidc", n_images=3, seed=11)
    write_tree(root / "gta", "gta", n_images=3, seed=12, three_d=False)
    overrides = [f"datasets.LIDC.base_path={root / 'lidc'}", f"datasets.GTA.base_path={root / 'gta'}",
                 f"save_path={root / 'figures'}"]
    return root, load_plot_config(configs / "plot_config.yaml", overrides)


def _values_bars(frames, metric, label, dimension, drops):
    """ValUES' generate_barplot, recomputed with pandas: {dataset: (mu, {value: (mean, std)})}."""
    out = {}
    for name, frame in frames.items():
        df = frame[frame["col"] == (metric.task, label)]
        for dim, values in drops.items():
            df = df[~df[dim].isin(values)]
        mu = df["value"].mean()
        dev = (df["value"] - mu) * (1 if metric.higher_better else -1)
        g = dev.groupby(df[dimension])
        out[name] = (mu, {k: (m, s) for (k, m), s in zip(g.mean().items(), g.std().to_numpy())})
    return out


def _frames(root):
    """The ValUES mean tables of the three datasets, as pandas frames of (x100) values."""
    frames = {}
    for name, base, split in (("LIDC", root / "lidc", "shift"), ("GTA", root / "gta", None)):
        table = values_table(base, name.lower(), split, tasks_file="plot_tasks.yaml")
        records = [{"split": k[0] if split else None, "pred_model": k[-3], "unc_type": k[-2], "aggregation": k[-1],
                    "col": col, "value": mean} for (k, col), (mean, _) in table.items()]
        df = pd.DataFrame(records)
        if split:
            for value in ("texture", "malignancy"):
                frames[f"{name} {value.title()}"] = df[df["split"] == value]
        else:
            frames[name] = df
    return frames


def test_table_rows_bars_equal_values_computation(setup):
    root, config = setup
    tables = dataset_tables(config)
    assert list(tables) == ["LIDC Texture", "LIDC Malignancy", "GTA"]
    frames = _frames(root)
    checked = 0
    for metric in config.metrics:
        for split in metric.splits or [None]:
            label = f"{metric.name} {split}" if split else metric.name
            for dimension in metric.levels:
                groups, keys, _ = bar_groups(tables, metric, split, dimension, rows="table",
                                             ordering=config.ordering.get(dimension))
                want = _values_bars(frames, metric, label, dimension, metric.filter.get(dimension, {}))
                for g in groups:
                    mu, stats = want[g.dataset]
                    assert g.mu == pytest.approx(mu, rel=1e-12)
                    assert set(g.stats) == set(stats)
                    for k, (m, s) in g.stats.items():
                        assert m == pytest.approx(stats[k][0], rel=1e-9, abs=1e-9)
                        assert (math.isnan(s) and math.isnan(stats[k][1])) or s == pytest.approx(stats[k][1],
                                                                                                 rel=1e-9)
                        checked += 1
                if dimension == "pred_model":
                    assert keys == [k for k in config.ordering["pred_model"] if k in keys]
    assert checked > 100


def test_distinct_rows_count_each_value_once():
    """A per-model metric fills every row of its model; 'distinct' counts it once, 'table' once per row."""
    col = Column("amb", "ged", "id", False)
    rows = [("A", "u", "x"), ("A", "u", "y"), ("B", "u", "x"), ("B", "u", "y"), ("B", "v", "x"), ("B", "v", "y")]
    values = {(r, col): ({"A": 0.2, "B": 0.5}[r[0]],) for r in rows}
    table = ResultTable(("pred_model", "unc_type", "aggregation"), tuple(rows), (col,), values)
    metric = ValuesMetric("amb", "ged", "metrics.json", "ged", ("id",), ("pred_model",), False)
    (g,), keys, _ = bar_groups({"D": table}, metric, "id", "pred_model", rows="distinct")
    # distinct: mu = (20 + 50) / 2 = 35; lower is better -> A: -(20 - 35) = 15, B: -15; one value each: no std
    assert g.mu == pytest.approx(35.0) and keys == ["A", "B"]
    assert g.stats["A"][0] == pytest.approx(15.0) and g.stats["B"][0] == pytest.approx(-15.0)
    assert math.isnan(g.stats["A"][1])
    (g,), _, _ = bar_groups({"D": table}, metric, "id", "pred_model", rows="table")
    # ValUES: mu over the 6 rows = (2 * 20 + 4 * 50) / 6 = 40; A: 20, B: -10; std over equal rows: 0
    assert g.mu == pytest.approx(40.0)
    assert g.stats["A"] == pytest.approx((20.0, 0.0)) and g.stats["B"] == pytest.approx((-10.0, 0.0))


def test_figures_land_where_values_puts_them(setup):
    root, config = setup
    results = plot_values(config, dimensions=["pred_model"], metrics=["auroc", "ged"], dpi=60)
    paths = sorted(str(r.path.relative_to(root / "figures")) for r in results)
    assert paths == ["pred_model/auroc.png", "pred_model/ged_id.png", "pred_model/ged_ood.png"]
    for r in results:
        assert r.path.read_bytes()[:4] == b"\x89PNG"


def test_metric_that_does_not_vary_gets_no_figure(tmp_path):
    write_tree(tmp_path / "lidc", "lidc", n_images=2)
    write_tree(tmp_path / "gta", "gta", n_images=2, three_d=False)
    for base in (tmp_path / "lidc", tmp_path / "gta"):
        for path in base.rglob("metrics.json"):
            tree = json.loads(path.read_text())
            mean = tree["mean"].get("metrics", tree["mean"])
            mean["ged"] = 0.25  # every model the same GED
            path.write_text(json.dumps(tree))
    configs = values_checkout(tmp_path)
    config = load_plot_config(configs / "plot_config.yaml", [
        f"datasets.LIDC.base_path={tmp_path / 'lidc'}", f"datasets.GTA.base_path={tmp_path / 'gta'}",
        f"save_path={tmp_path / 'fig'}"])
    (ged_id, ged_ood) = plot_values(config, metrics=["ged"], dpi=60)
    assert ged_id.path is None and "does not vary along pred_model" in ged_id.skipped
    assert not (tmp_path / "fig" / "pred_model" / "ged_id.png").exists()


def test_cli_plot_on_the_values_config(setup, tmp_path, capsys):
    root, _ = setup
    configs = root / "evaluation" / "configs"
    argv = ["plot", str(configs / "plot_config.yaml"), f"datasets.LIDC.base_path={root / 'lidc'}",
            f"datasets.GTA.base_path={root / 'gta'}", "-o", str(tmp_path / "f"), "--along", "aggregation",
            "-m", "al_improvement", "--json"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert [f["path"] for f in data["figures"]] == [str(tmp_path / "f" / "aggregation" / "al_improvement_ood.png")]
    assert main(["plot", str(configs / "plot_config.yaml"), "--config", "x.yaml"]) == 2
    assert "--config: not used with a ValUES plot config" in capsys.readouterr().err


def test_datasets_draws_only_those_and_keeps_the_others_values_valid(setup, monkeypatch, tmp_path):
    root, _ = setup
    monkeypatch.delenv("USER", raising=False)  # GTA's published base_path names ${oc.env:USER}: unresolvable here
    configs = root / "evaluation" / "configs"
    config = load_plot_config(configs / "plot_config.yaml", [f"datasets.LIDC.base_path={root / 'lidc'}"])
    with pytest.raises(ConfigError, match=r"datasets\.GTA\.base_path: .*USER"):  # GTA drawn: its path is needed
        plot_values(config, save_path=tmp_path / "all", metrics=["auroc"], dimensions=["aggregation"], dpi=40)
    (fig,) = plot_values(config, save_path=tmp_path / "lidc", metrics=["auroc"], dimensions=["aggregation"],
                         datasets=["LIDC"], dpi=40)
    assert fig.path == tmp_path / "lidc" / "aggregation" / "auroc.png" and fig.path.is_file()
    # GTA's image_level hatch and its display name name what the config declares: valid although not drawn
    assert "image_level" in config.hatches["aggregation"] and "GTA" in config.df_naming
    # the LIDC bars alone, as ValUES computes them on the LIDC frames
    frames = {k: v for k, v in _frames(root).items() if k.startswith("LIDC")}
    metric = next(m for m in config.metrics if m.name == "auroc")
    tables = dataset_tables(attrs.evolve(config, datasets={"LIDC": config.datasets["LIDC"]}))
    groups, _, _ = bar_groups(tables, metric, None, "aggregation", rows="table")
    expected = _values_bars(frames, metric, "auroc", "aggregation", metric.filter.get("aggregation", {}))
    assert [g.dataset for g in groups] == list(expected)
    for g in groups:
        mu, stats = expected[g.dataset]
        assert g.mu == pytest.approx(mu, rel=1e-12)
        assert {k: v[0] for k, v in g.stats.items()} == pytest.approx({k: v[0] for k, v in stats.items()}, rel=1e-9)
    with pytest.raises(InvalidParameterError, match=r"'datasets' parameter must name datasets .*\(LIDC, GTA\)"):
        plot_values(config, save_path=tmp_path / "x", datasets=["LDIC"])
