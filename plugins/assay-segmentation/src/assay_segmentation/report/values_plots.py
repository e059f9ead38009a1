"""ValUES' bar plots (``ds_task_barplots.py``) from a ValUES plot config, drawn for a paper.

For every metric of the plot config's ``ds_tasks``, every split of its ``dataset_splits``
and every dimension of its ``levels``, one figure ``save_path/<dimension>/<metric>[_<split>].png``
(ValUES' file layout) with one group of bars per dataset (``LIDC Texture``, ``LIDC
Malignancy``, ``GTA``: a dataset with a ``split_param`` gives one group per split value):

1. the dataset's table (:func:`~assay_segmentation.report.values_results.load_values_results`, values
   x100 as in the tables) without the rows that ``filter[dimension]`` drops;
2. each value minus the dataset's mean ``µ`` of the metric, negated when lower is better,
   so that higher bars are always better;
3. per value of the dimension, the bar is the mean of those deviations and the error bar
   their sample standard deviation (``ddof=1``; none for a single value).

What is averaged in step 3 is, by default (``rows="distinct"``), every **distinct** value of
the metric once: a metric defined per prediction model (GED) or per prediction model and
uncertainty type (ACE, NCC) fills several table rows with the same value, and ValUES
averages the table rows, so such a value counts once per aggregation (or uncertainty type
x aggregation). ``rows="table"`` reproduces ValUES' bars exactly (same µ, same bars, same
error bars).

The figure says what it shows: the title names the metric, the split and the dimension;
bars and legend use readable names (``df_naming``, else
:data:`assay_segmentation.report.plots.READABLE`); the axis states the scale (x100, like the tables, or
percentage points for ``percent: true``); the caption under the plot says what a bar and an
error bar are and what the filter dropped. A figure in which the metric does not vary along
the dimension in any dataset is not drawn (the returned :class:`PlotResult` says why); a
dataset in which it does not vary gets no group, and the caption names it.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from assay.configfile import close_match, key_path
from assay.errors import ConfigError, InvalidParameterError, MissingDependencyError
from assay_segmentation.report.collect import Column, ResultTable
from assay_segmentation.report.plots import readable, save_figure
from assay_segmentation.report.values_config import PlotConfig, ValuesMetric
from assay_segmentation.report.values_results import load_values_results

__all__ = ["ROWS", "Bars", "PlotResult", "bar_groups", "check_plot_config", "dataset_tables", "plot_values"]

#: what a bar averages: every distinct value of the metric once, or every table row (ValUES)
ROWS = ("distinct", "table")
_HATCH_CHARS = set("/\\|-+xXoO.*")
_MIN_SPREAD = 1e-12


@attrs.frozen
class Bars:
    """The bars of one dataset: ``{dimension value: (mean, std)}`` and the dataset's mean µ (both x100)."""

    dataset: str
    mu: float
    stats: dict[str, tuple[float, float]]
    n: dict[str, int]


@attrs.frozen
class PlotResult:
    """One figure: where it went (or None and why it was not drawn)."""

    metric: str
    dimension: str
    path: Path | None
    skipped: str = ""


def dataset_tables(config: PlotConfig, *, allow_missing: bool = False) -> dict[str, ResultTable]:
    """One table per dataset label, as ValUES' plot script builds them (``"LIDC Texture"`` per split value)."""
    out: dict[str, ResultTable] = {}
    for name, table_config in config.datasets.items():
        table = load_values_results(table_config, metrics=config.metrics, allow_missing=allow_missing)
        if table_config.split_name:
            for value in table_config.split_values:
                rows = tuple(r for r in table.rows if table.row_value(r, table_config.split_name) == value)
                part = attrs.evolve(table, rows=rows, blocks_by=None)
                out[f"{name} {value.title()}"] = part.filter_rows({})
        else:
            out[name] = table
    return out


def _column(metric: ValuesMetric, split: str | None) -> Column:
    return Column(metric.task, metric.name, split, metric.higher_better)


def bar_groups(tables: dict[str, ResultTable], metric: ValuesMetric, split: str | None, dimension: str, *,
               rows: str = "distinct", ordering: Sequence[str] | None = None,
               scale: float = 100.0) -> tuple[list[Bars], list[str], bool]:
    """The bars of one figure: per dataset, ``(mean, std)`` per value of ``dimension`` (step 1-3 above).

    Returns ``(bars per dataset, the dimension's values in drawing order, whether the
    filter left out any value)``; a value without a bar in any dataset is left out, as
    ValUES drops all-empty rows (an ``ordering`` names the order and which values are
    drawn, as ValUES' ``reindex``).
    """
    if rows not in ROWS:
        raise InvalidParameterError(f"The 'rows' parameter must be one of {', '.join(ROWS)}. Got {rows!r} instead.")
    col = _column(metric, split)
    drops = metric.filter.get(dimension, {})
    depth = len(metric.levels)
    groups: list[Bars] = []
    changed = False
    units = ("pred_model", "unc_type", "aggregation")[:depth]
    for label, table in tables.items():
        before = {tuple(table.row_value(r, d) for d in units) for r in table.rows
                  if not math.isnan(table.mean(r, col))}
        table = table.filter_rows({d: list(v) for d, v in drops.items()})
        after = {tuple(table.row_value(r, d) for d in units) for r in table.rows
                 if not math.isnan(table.mean(r, col))}
        changed = changed or after != before
        seen: set[tuple[str, ...]] = set()
        entries: list[tuple[str, float]] = []
        for row in table.rows:
            value = table.mean(row, col)
            if math.isnan(value):
                continue
            if rows == "distinct":
                unit = tuple(table.row_value(row, d) for d in units)
                if unit in seen:
                    continue
                seen.add(unit)
            entries.append((table.row_value(row, dimension), value * scale))
        if not entries:
            continue
        mu = math.fsum(v for _, v in entries) / len(entries)
        sign = 1.0 if metric.higher_better else -1.0
        by: dict[str, list[float]] = {}
        for key, v in entries:
            by.setdefault(key, []).append(sign * (v - mu))
        stats: dict[str, tuple[float, float]] = {}
        for key, vals in by.items():
            m = math.fsum(vals) / len(vals)
            s = math.sqrt(math.fsum((x - m) ** 2 for x in vals) / (len(vals) - 1)) if len(vals) > 1 else math.nan
            stats[key] = (m, s)
        groups.append(Bars(dataset=label, mu=mu, stats=stats, n={k: len(v) for k, v in by.items()}))
    present = list(dict.fromkeys(k for g in groups for k in g.stats))
    order = list(ordering) if ordering else present
    return groups, [k for k in order if k in present], changed


def dataset_labels(config: PlotConfig) -> dict[str, str]:
    """Each dataset label of the figures (``"LIDC Texture"``: one per split value) -> its ``datasets`` key."""
    return {(f"{name} {value.title()}" if tc.split_name else name): name
            for name, tc in config.datasets.items() for value in (tc.split_values if tc.split_name else ("",))}


def declared_values(config: PlotConfig) -> dict[str, set[str]]:
    """The values of each dimension that the config's datasets declare (their prediction models, uncertainty
    types and aggregations), drawn or not."""
    values: dict[str, set[str]] = {d: set() for d in ("pred_model", "unc_type", "aggregation")}
    for tc in config.datasets.values():
        for exp in tc.experiments:
            for model, settings in exp.prediction_models.items():
                values["pred_model"].add(model)
                values["unc_type"].update(settings["unc_types"])
                values["aggregation"].update(settings["aggregations"])
    return values


def check_plot_config(config: PlotConfig, tables: dict[str, ResultTable]) -> None:
    """Every value the plot config names must occur in the data or be declared by one of its datasets (one
    left out with ``datasets=``, say): a typo is an error naming the key path."""
    file = config.file
    values = declared_values(config)
    for table in tables.values():
        for d in values:
            values[d].update(table.row_value(r, d) for r in table.rows)

    def known(dim: str, value: str, at: tuple[Any, ...]) -> None:
        if value not in values[dim]:
            options = sorted(values[dim])
            raise ConfigError(f"{file}: {key_path(at)}: unknown {dim} {value!r}.{close_match(value, options)} "
                              f"Values in these results and datasets: {', '.join(options)}.")

    for m in config.metrics:
        for along, drops in m.filter.items():
            for dim, vals in drops.items():
                for i, v in enumerate(vals):
                    known(dim, v, m.at + ("filter", along, dim, i))
    for key, per_dim in (("coloring", config.coloring), ("hatches", config.hatches)):
        for dim, mapping in per_dim.items():
            for v, look in mapping.items():
                known(dim, v, (key, dim, v))
                if key == "coloring":
                    from matplotlib.colors import is_color_like

                    if not is_color_like(look):
                        raise ConfigError(f"{file}: {key_path((key, dim, v))}: expected a matplotlib colour "
                                          f"(such as 'tab:cyan' or '#1f77b4'), got {look!r}")
                elif not look or set(look) - _HATCH_CHARS:
                    raise ConfigError(f"{file}: {key_path((key, dim, v))}: expected a matplotlib hatch pattern "
                                      f"(characters of {''.join(sorted(_HATCH_CHARS))}), got {look!r}")
    for dim, order in config.ordering.items():
        for i, v in enumerate(order):
            known(dim, v, ("ordering", dim, i))
    every = list(dataset_labels(config))
    labels = set(tables) | set(every) | {m.name for m in config.metrics} | {v for vs in values.values() for v in vs}
    for key in config.df_naming:
        if key not in labels:
            raise ConfigError(f"{file}: {key_path(('df_naming', key))}: unknown label {key!r}."
                              f"{close_match(key, sorted(labels))} Labels are the datasets ({', '.join(every)}), "
                              "metric names and values of the dimensions.")


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingDependencyError("matplotlib", purpose="bar plots (assay plot)") from None
    return plt


def _words(text: str) -> set[str]:
    return set(text.lower().replace("-", " ").replace(":", " ").split())


def _title(metric: ValuesMetric, split: str | None, dimension: str, naming: dict[str, str]) -> str:
    """``AUROC (OoD detection) by prediction model``; the task is left out when the metric's name says it."""
    name = readable(metric.name, naming)
    task = readable(metric.task, naming)
    parts = [f"{readable(split, naming)} split"] if split else []
    if not _words(task) & _words(name):
        parts.insert(0, task)
    return name + (f" ({', '.join(parts)})" if parts else "") + f" by {readable(dimension, naming).lower()}"


def _draw(path: Path, groups: list[Bars], keys: list[str], metric: ValuesMetric, split: str | None, dimension: str,
          config: PlotConfig, *, rows: str, flat: list[str], dropped: dict[str, tuple[str, ...]], dpi: int) -> None:
    plt = _pyplot()
    from matplotlib.patches import Patch

    naming = config.df_naming
    colours = config.coloring.get(dimension, {})
    hatches = config.hatches.get(dimension, {})
    cycle = plt.rcParams["axes.prop_cycle"].by_key().get("color", ["C0"])
    colour_of = {k: colours.get(k, cycle[i % len(cycle)]) for i, k in enumerate(keys)}
    width = 0.8 / max(1, len(keys))
    fig, ax = plt.subplots(figsize=(max(4.2, 1.1 + 1.3 * len(groups) * max(1.0, len(keys) / 3)), 4.6),
                           layout="constrained")
    for j, key in enumerate(keys):
        xs, hs, es = [], [], []
        for i, g in enumerate(groups):
            if key in g.stats:
                xs.append(i - 0.4 + width * (j + 0.5))
                hs.append(g.stats[key][0])
                es.append(0.0 if math.isnan(g.stats[key][1]) else g.stats[key][1])  # NaN: a single value
        if not xs:
            continue
        bars = ax.bar(xs, hs, width=width * 0.95, color=colour_of[key])
        with_error = [(x, h, e) for x, h, e in zip(xs, hs, es) if e > 0]
        if with_error:  # no error bar where there is a single value (no spread to show)
            ax.errorbar([x for x, _, _ in with_error], [h for _, h, _ in with_error],
                        yerr=[e for _, _, e in with_error], fmt="none", capsize=3, elinewidth=1.0, ecolor="0.15")
        if key in hatches:
            for bar in bars:
                face = bar.get_facecolor()
                bar.set_facecolor((face[0], face[1], face[2], 0.6))
                bar.set_edgecolor(face[:3])
                bar.set_hatch(hatches[key])
                bar.set_linewidth(0)
    ax.axhline(0.0, color="black", linewidth=0.9)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{naming.get(g.dataset, g.dataset)}\nµ = {g.mu:.2f}" for g in groups], fontsize=10)
    ax.set_xlim(-0.55, len(groups) - 0.45)
    unit = "percentage points" if metric.percent else "×100"
    ax.set_ylabel(f"Δ to µ ({unit}), higher is better", fontsize=10)
    ax.tick_params(axis="y", labelsize=9)
    ax.grid(axis="y", color="0.9", linewidth=0.8)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    handles = [Patch(facecolor=colour_of[k] if k not in hatches else (*_rgb(colour_of[k]), 0.6),
                     edgecolor=colour_of[k] if k in hatches else "none", hatch=hatches.get(k),
                     label=readable(k, naming))
               for k in keys]
    ax.legend(handles=handles, title=readable(dimension, naming), fontsize=9, title_fontsize=9, frameon=False,
              loc="upper left", bbox_to_anchor=(1.0, 1.0))
    title = _title(metric, split, dimension, naming)
    ax.set_title(textwrap.fill(title, width=int(fig.get_size_inches()[0] * 8)), fontsize=11)
    lower = "" if metric.higher_better else " (lower is better: deviations negated)"
    what = ("table rows (ValUES' bars)" if rows == "table" else
            "values of the group (each distinct " + " x ".join(readable(d, naming).lower() for d in
                                                             ("pred_model", "unc_type", "aggregation")[
                                                                 :len(metric.levels)]) + " once)")
    caption = (f"Bar: mean deviation from the dataset's mean µ{lower} over the {what}, each a mean over seeds; "
               "error bar: ±1 sample standard deviation of those deviations (none for a single value). "
               f"Values ×100{' (percentage points)' if metric.percent else ''}, as in the tables.")
    if dropped:
        caption += " Left out: " + "; ".join(f"{readable(d, naming).lower()} " + ", ".join(
            readable(v, naming) for v in vals) for d, vals in dropped.items()) + "."
    if flat:
        caption += f" Not shown, equal for every {readable(dimension, naming).lower()}: " + ", ".join(
            naming.get(f, f) for f in flat) + "."
    fig.supxlabel(textwrap.fill(caption, width=int(fig.get_size_inches()[0] * 15)), fontsize=7, color="0.3")
    save_figure(fig, path, dpi)


def _rgb(colour: str) -> tuple[float, float, float]:
    from matplotlib.colors import to_rgb

    r, g, b = to_rgb(colour)
    return r, g, b


def plot_values(config: PlotConfig, *, save_path: str | Path | None = None, rows: str = "distinct",
                dimensions: Sequence[str] | None = None, metrics: Sequence[str] | None = None,
                datasets: Sequence[str] | None = None, allow_missing: bool = False, dpi: int = 150,
                suffix: str = ".png") -> list[PlotResult]:
    """Draw every figure of a ValUES plot config; return what was drawn and what was not (and why).

    Parameters
    ----------
    config : PlotConfig
        From :func:`assay_segmentation.report.values_config.load_plot_config`.
    save_path : path, optional
        The output folder (default: the config's ``save_path``).
    rows : {"distinct", "table"}
        What a bar averages (see the module docstring); ``"table"`` reproduces ValUES' bars.
    dimensions, metrics : list of str, optional
        Only these dimensions / metric names.
    datasets : list of str, optional
        Only these keys of ``datasets`` (``["LIDC"]``); the others are neither read nor drawn,
        and the values they declare stay valid in ``coloring``, ``hatches``, ``ordering``,
        ``filter`` and ``df_naming``.
    """
    out_dir = Path(save_path) if save_path is not None else config.save_path
    if out_dir is None and config.save_path_error:
        raise ConfigError(config.save_path_error)
    if out_dir is None:
        raise InvalidParameterError(f"{config.file}: save_path: expected the output folder (in the config, as "
                                    "save_path=... on the command line, or -o), got none")
    _pyplot()  # the missing-dependency error before any file is read
    unknown = [d for d in datasets or () if d not in config.datasets]
    if unknown:
        raise InvalidParameterError(f"The 'datasets' parameter must name datasets of {config.file} "
                                    f"({', '.join(config.datasets)}).{close_match(unknown[0], list(config.datasets))} "
                                    f"Got {unknown[0]!r} instead.")
    drawn = attrs.evolve(config, datasets={k: v for k, v in config.datasets.items() if k in datasets}) \
        if datasets else config
    tables = dataset_tables(drawn, allow_missing=allow_missing)
    check_plot_config(config, tables)
    names = {m.name for m in config.metrics}
    for m in metrics or ():
        if m not in names:
            raise InvalidParameterError(f"The 'metrics' parameter must name metrics of {config.file} "
                                        f"({', '.join(sorted(names))}).{close_match(m, names)} Got {m!r} instead.")
    results: list[PlotResult] = []
    for metric in config.metrics:
        if metrics and metric.name not in metrics:
            continue
        for split in metric.splits if metric.splits is not None else (None,):
            label = f"{metric.name} {split}" if split else metric.name
            for dimension in metric.levels:
                if dimensions and dimension not in dimensions:
                    continue
                groups, keys, filtered = bar_groups(tables, metric, split, dimension, rows=rows,
                                                    ordering=config.ordering.get(dimension))
                flat = [g.dataset for g in groups if _flat(g, keys)]
                shown = [g for g in groups if g.dataset not in flat]
                if not shown:
                    why = (f"{label} does not vary along {dimension} in any dataset" if groups else
                           f"{label} has no value")
                    results.append(PlotResult(label, dimension, None, why))
                    continue
                path = out_dir / dimension / f"{'_'.join(label.lower().split(' '))}{suffix}"
                _draw(path, shown, keys, metric, split, dimension, config, rows=rows, flat=flat,
                      dropped=metric.filter.get(dimension, {}) if filtered else {}, dpi=dpi)
                results.append(PlotResult(label, dimension, path))
    return results


def _flat(group: Bars, keys: list[str]) -> bool:
    means = [group.stats[k][0] for k in keys if k in group.stats]
    if len(means) < 2:
        return True
    return max(means) - min(means) <= _MIN_SPREAD * max(1.0, max(abs(m) for m in means))
