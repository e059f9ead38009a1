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
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from assay.configfile import check_keys, close_match, key_path
from assay.errors import ConfigError, InvalidParameterError, MissingDependencyError
from assay.jsonio import atomic_output
from assay.report.collect import Column, ResultTable

__all__ = ["PLOT_KEYS", "bar_data", "bar_plot", "check_plot_options"]

#: the keys of a plot config (ValUES' plot config)
PLOT_KEYS = ("filter", "df_naming", "coloring", "ordering")


def _expect(cond: bool, file: str, at: tuple[Any, ...], expected: str, got: Any) -> None:
    if not cond:
        raise ConfigError(f"{file}: {key_path(at)}: expected {expected}, got {got!r:.80}")


def check_plot_options(options: Any, table: ResultTable, *, file: str = "<plot config>") -> dict[str, Any]:
    """Check a plot config against the table it draws; return it as a dict.

    Every key at every depth must be known: the top level takes :data:`PLOT_KEYS`;
    dimensions (in ``filter``, ``coloring``, ``ordering``) must be index names of the
    table; values named (to drop, colour, order or rename) must occur in the table, so a
    typo is an error (with the closest match), never a filter that silently drops
    nothing.
    """
    _expect(isinstance(options, dict), file, (), "a mapping with " + ", ".join(PLOT_KEYS), options)
    check_keys(options, PLOT_KEYS, file=file)
    dims = list(table.index_names)
    values = {d: sorted({table.row_value(r, d) for r in table.rows}) for d in dims}

    def dim(name: Any, at: tuple[Any, ...]) -> str:
        if name not in dims:
            raise ConfigError(f"{file}: {key_path(at)}: unknown dimension {name!r}.{close_match(name, dims)} "
                              f"Dimensions of these results: {', '.join(dims)}.")
        return name

    def known_values(d: str, given: Any, at: tuple[Any, ...]) -> None:
        items = given if isinstance(given, (list, tuple)) else [given]
        for i, v in enumerate(items):
            if str(v) not in values[d]:
                raise ConfigError(f"{file}: {key_path(at + ((i,) if isinstance(given, (list, tuple)) else ()))}: "
                                  f"unknown {d} {v!r}.{close_match(v, values[d])} Values in these results: "
                                  f"{', '.join(values[d])}.")

    for name in ("filter", "df_naming", "coloring", "ordering"):
        _expect(options.get(name) is None or isinstance(options[name], dict), file, (name,), "a mapping",
                options.get(name))
    for key, value in (options.get("filter") or {}).items():
        at = ("filter", key)
        dim(key, at)
        if isinstance(value, dict):
            for sub, vals in value.items():
                known_values(dim(sub, at + (sub,)), vals, at + (sub,))
        else:
            known_values(key, value, at)
    labels = {f"{c.task}: {c.label}" for c in table.columns} | {c.label for c in table.columns} | \
        {c.metric for c in table.columns} | {v for vs in values.values() for v in vs}
    for key, shown in (options.get("df_naming") or {}).items():
        if str(key) not in labels:
            raise ConfigError(f"{file}: {key_path(('df_naming', key))}: unknown label {key!r}."
                              f"{close_match(key, sorted(labels))} Labels are column titles ('task: metric split'),"
                              " metric names and row values.")
        _expect(isinstance(shown, str), file, ("df_naming", key), "the label to show (a string)", shown)
    for d, colours in (options.get("coloring") or {}).items():
        dim(d, ("coloring", d))
        _expect(isinstance(colours, dict), file, ("coloring", d), "a mapping of value -> colour", colours)
        for v, colour in colours.items():
            known_values(d, v, ("coloring", d, v))
            _expect(isinstance(colour, str), file, ("coloring", d, v), "a matplotlib colour (a string)", colour)
    for d, order in (options.get("ordering") or {}).items():
        dim(d, ("ordering", d))
        _expect(isinstance(order, list), file, ("ordering", d), "a list of values", order)
        known_values(d, order, ("ordering", d))
    return dict(options)


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
        raise InvalidParameterError(f"The 'along' parameter must be one of {list(table.index_names)}."
                                    f"{close_match(along, table.index_names)} Got {along!r} instead.")
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
    # provenance (issue 16): the run's signature as a small footer, in a band kept free for it
    footer = 0.0
    if table.signature:
        fig.text(0.005, 0.005, f"signature: {table.signature}", fontsize=4, ha="left", va="bottom", color="0.35")
        footer = 0.12 / (3.0 * nrows)
    # leave a band at the top for the title, or it overlaps the first row's panel titles
    fig.tight_layout(rect=(0, footer, 1, 1 - 0.35 / (3.0 * nrows)))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with atomic_output(path) as tmp:  # a failed write keeps the previous picture
            fig.savefig(tmp, dpi=dpi, format=path.suffix.lstrip(".") or "png")
    finally:
        plt.close(fig)
    return path
