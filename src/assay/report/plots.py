"""Bar plots of downstream-task results aggregated along one dimension (ValUES' bar plots).

For each metric column, every row's mean over seeds is taken relative to the column's
mean over all rows (the ``µ`` line at 0) and negated for lower-is-better metrics, so
higher bars are always better; rows are then grouped by the values of ``along``
(``pred_model``, ``unc_type``, ``aggregation`` or another iterated parameter) and the
bar shows the group mean with the group's standard deviation as error bar.

Options as in ValUES' plot config:

``filter``
    ``{dimension: [values to drop]}``, or ValUES' nested form ``{along: {dimension:
    [values]}}`` that applies only when plotting along ``along``.
``df_naming``
    ``{label: shown label}`` for column titles and bar labels.
``coloring``
    ``{dimension: {value: colour}}``; colours of the bars of ``along``.
``ordering``
    ``{dimension: [values]}``; the order of the bars (values not listed follow).

matplotlib is an optional extra (``pip install 'assay[plot]'``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Mapping, Sequence

from assay.errors import InvalidParameterError, MissingDependencyError
from assay.report.collect import Column, ResultTable

__all__ = ["bar_data", "bar_plot"]


def _filters(table: ResultTable, along: str, filter: Mapping[str, Any] | None) -> dict[str, list[Any]]:
    if not filter:
        return {}
    out: dict[str, list[Any]] = {}
    for key, value in filter.items():
        if isinstance(value, Mapping):  # ValUES: {along: {dim: [values]}}
            if key == along:
                for dim, values in value.items():
                    out.setdefault(dim, []).extend(values)
        else:
            out.setdefault(key, []).extend(value if isinstance(value, (list, tuple)) else [value])
    return out


def bar_data(table: ResultTable, along: str, *, filter: Mapping[str, Any] | None = None,
             ordering: Mapping[str, Sequence[str]] | None = None) -> dict[Column, dict[str, tuple[float, float]]]:
    """Per column, ``{group value: (mean, std)}`` of the centred, orientation-corrected row means."""
    if along not in table.index_names:
        raise InvalidParameterError(f"The 'along' parameter must be one of {list(table.index_names)}. "
                                    f"Got {along!r} instead.")
    table = table.filter_rows(_filters(table, along, filter))
    out: dict[Column, dict[str, tuple[float, float]]] = {}
    for col in table.columns:
        means = {row: table.mean(row, col) for row in table.rows}
        finite = [v for v in means.values() if not math.isnan(v)]
        if not finite:
            continue
        centre = math.fsum(finite) / len(finite)
        groups: dict[str, list[float]] = {}
        for row, v in means.items():
            if not math.isnan(v):
                groups.setdefault(table.row_value(row, along), []).append((v - centre) * (1 if col.higher_is_better
                                                                                           else -1))
        order = list(ordering.get(along, [])) if ordering else []
        keys = [k for k in order if k in groups] + [k for k in groups if k not in order]
        stats = {}
        for k in keys:
            vals = groups[k]
            m = math.fsum(vals) / len(vals)
            s = math.sqrt(math.fsum((v - m) ** 2 for v in vals) / (len(vals) - 1)) if len(vals) > 1 else 0.0
            stats[k] = (m, s)
        out[col] = stats
    return out


def bar_plot(table: ResultTable, along: str, path: str | Path, *, filter: Mapping[str, Any] | None = None,
             df_naming: Mapping[str, str] | None = None, coloring: Mapping[str, Mapping[str, str]] | None = None,
             ordering: Mapping[str, Sequence[str]] | None = None, columns_per_row: int = 4, dpi: int = 110) -> Path:
    """Draw one bar chart per metric column into a single PNG (or any format matplotlib knows)."""
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingDependencyError("matplotlib", extra="plot", purpose="bar plots (assay plot)") from None
    data = bar_data(table, along, filter=filter, ordering=ordering)
    if not data:
        raise InvalidParameterError(f"Nothing to plot along {along!r}: every selected column is empty.")
    naming = dict(df_naming or {})
    colours = dict((coloring or {}).get(along, {}))
    default = plt.rcParams["axes.prop_cycle"].by_key().get("color", ["C0"])
    n = len(data)
    ncols = min(columns_per_row, n)
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.2 * ncols, 3.0 * nrows), squeeze=False)
    all_keys: list[str] = []
    for stats in data.values():
        all_keys += [k for k in stats if k not in all_keys]
    for ax, (col, stats) in zip(axes.flat, data.items()):
        keys = list(stats)
        heights = [stats[k][0] for k in keys]
        errors = [stats[k][1] for k in keys]
        bar_colours = [colours.get(k, default[all_keys.index(k) % len(default)]) for k in keys]
        ax.bar(range(len(keys)), heights, yerr=errors, capsize=3, color=bar_colours)
        ax.axhline(0.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels([naming.get(k, k) for k in keys], rotation=30, ha="right", fontsize=7)
        title = f"{col.task}: {col.label}"
        ax.set_title(naming.get(title, naming.get(col.label, title)), fontsize=8)
        ax.tick_params(axis="y", labelsize=7)
        ax.set_ylabel("better than µ →" if ax in axes[:, 0] else "", fontsize=7)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    fig.suptitle(f"Relative to the column mean µ (higher is better), grouped by {along}", fontsize=9)
    # leave a band at the top for the title, or it overlaps the first row's panel titles
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.35 / (3.0 * nrows)))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path
