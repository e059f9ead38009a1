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

What the figure shows is written on it: values are multiplied by ``scale`` (100, as in
the tables) and the axis says so; the caption says what a bar and an error bar are; a
metric whose bars are all equal along ``along`` gets no panel (the caption names it);
names are readable (``df_naming``, else :func:`readable`: ``pred_model`` is "Prediction
model", ``ood_detection`` "OoD detection", ``auroc`` "AUROC").

matplotlib is a dependency of assay-segmentation, imported only when a plot is drawn.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from assay.configfile import check_keys, close_match, key_path
from assay.errors import ConfigError, InvalidParameterError, MissingDependencyError
from assay.jsonio import atomic_output
from assay_segmentation.report.collect import Column, ResultTable

__all__ = ["PLOT_KEYS", "READABLE", "bar_data", "bar_plot", "check_plot_options", "readable", "split_flat"]

#: the keys of a plot config (ValUES' plot config)
PLOT_KEYS = ("filter", "df_naming", "coloring", "ordering")

#: default display names of the dimensions, tasks, metrics and splits of downstream results
READABLE: dict[str, str] = {
    "pred_model": "Prediction model", "unc_type": "Uncertainty type", "aggregation": "Aggregation",
    "seed": "Seed", "segmentation_performance": "Segmentation", "ood_detection": "OoD detection",
    "failure_detection": "Failure detection", "calibration": "Calibration",
    "ambiguity_modeling": "Ambiguity modeling", "al_improvement": "Active-learning improvement",
    "al_split_files": "Active-learning split", "dice": "Dice", "auroc": "AUROC", "aurc": "AURC",
    "e_aurc": "E-AURC", "augrc": "AUGRC", "ace": "ACE", "ece": "ECE", "ncc": "NCC", "ged": "GED",
    "id": "ID", "ood": "OoD", "val": "val", "test": "test",
    "predictive_uncertainty": "Predictive", "aleatoric_uncertainty": "Aleatoric",
    "epistemic_uncertainty": "Epistemic", "image_mean": "Image mean", "patch_max": "Patch max",
    "threshold_mean": "Threshold mean", "ged_iou": "GED (IoU)", "fpr95": "FPR@95%TPR",
    "ood_detection_rate": "OoD detection rate", "adaptive_ece": "Adaptive ECE",
    "aurc_fd_shifts": "AURC (fd-shifts)", "e_aurc_fd_shifts": "E-AURC (fd-shifts)",
    "ood_share_queried_unlabeled": "OoD share of the queried", "ood_detection_rate_unlabeled": "OoD detection rate",
    "dice_second_cycle": "Dice, 2nd cycle", "unlabeled": "unlabeled",
    # ValUES' own names (its table and plot configs)
    "eaurc": "E-AURC", "seg_performance": "Segmentation", "active_learning": "Active learning",
    "patch_level": "Patch level", "image_level": "Image level", "threshold": "Threshold", "shift": "Shift",
    "unc_measure": "Uncertainty measure", "texture": "Texture", "malignancy": "Malignancy",
}


def readable(label: str, naming: Mapping[str, str] | None = None) -> str:
    """The display name of ``label``: ``naming`` (a config's ``df_naming``) first, then :data:`READABLE`
    word by word (``"dice id"`` -> "Dice ID"), else the words with ``_`` as spaces, first letter capital."""
    if naming and label in naming:
        return naming[label]
    if label in READABLE:
        return READABLE[label]
    words = [READABLE.get(w, w.replace("_", " ")) for w in str(label).split(" ")]
    text = " ".join(words)
    return text[:1].upper() + text[1:]


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


def split_flat(data: Mapping[Column, Mapping[str, tuple[float, float]]]
               ) -> tuple[dict[Column, Mapping[str, tuple[float, float]]], list[Column]]:
    """``(columns to draw, columns whose bars are all equal)``: a metric with one value for every group
    (to 1e-12 of its largest bar) does not vary along the grouping, so it gets no panel."""
    shown: dict[Column, Mapping[str, tuple[float, float]]] = {}
    flat: list[Column] = []
    for col, stats in data.items():
        means = [m for m, _ in stats.values()]
        spread = max(means) - min(means) if means else 0.0
        if len(means) < 2 or spread <= 1e-12 * max(1.0, max(abs(m) for m in means)):
            flat.append(col)
        else:
            shown[col] = stats
    return shown, flat


def bar_plot(table: ResultTable, along: str, path: str | Path, *, filter: Mapping[str, Any] | None = None,
             df_naming: Mapping[str, str] | None = None, coloring: Mapping[str, Mapping[str, str]] | None = None,
             ordering: Mapping[str, Sequence[str]] | None = None, columns_per_row: int = 4, dpi: int = 110,
             scale: float = 100.0) -> Path:
    """Draw one bar chart per metric column into a single PNG (or any format matplotlib knows).

    Heights and error bars are multiplied by ``scale`` (100: the tables' scale); a column
    whose bars are all equal along ``along`` (nothing to compare) gets no panel, and the
    caption names it.
    """
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingDependencyError("matplotlib", purpose="bar plots (assay plot)") from None
    data = bar_data(table, along, filter=filter, ordering=ordering)
    if not data:
        raise InvalidParameterError(f"Nothing to plot along {along!r}: every selected column is empty.")
    naming = dict(df_naming or {})

    def title_of(col: Column) -> str:
        full = f"{col.task}: {col.label}"
        if full in naming:
            return naming[full]
        return f"{readable(col.task, naming)}\n{readable(col.label, naming)}"

    shown, flat = split_flat(data)
    if not shown:
        raise InvalidParameterError(f"Nothing to plot along {along!r}: no metric varies along it "
                                    f"({', '.join(title_of(c).replace(chr(10), ': ') for c in flat)}).")
    colours = dict((coloring or {}).get(along, {}))
    default = plt.rcParams["axes.prop_cycle"].by_key().get("color", ["C0"])
    n = len(shown)
    ncols = min(columns_per_row, n)
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.2 * ncols, 2.9 * nrows + 0.9), squeeze=False,
                             layout="constrained")
    all_keys: list[str] = []
    for stats in shown.values():
        all_keys += [k for k in stats if k not in all_keys]
    axis_label = f"Δ to µ{f' (×{scale:g})' if scale != 1 else ''}, better ↑"
    for ax, (col, stats) in zip(axes.flat, shown.items()):
        keys = list(stats)
        heights = [stats[k][0] * scale for k in keys]
        errors = [stats[k][1] * scale for k in keys]
        bar_colours = [colours.get(k, default[all_keys.index(k) % len(default)]) for k in keys]
        ax.bar(range(len(keys)), heights, yerr=errors, capsize=3, color=bar_colours)
        ax.axhline(0.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels([readable(k, naming) for k in keys], rotation=30, ha="right", fontsize=7)
        ax.set_title(title_of(col), fontsize=8)
        ax.tick_params(axis="y", labelsize=7)
        ax.set_ylabel(axis_label if ax in axes[:, 0] else "", fontsize=7)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    fig.suptitle(f"By {readable(along, naming).lower()}: each metric relative to its mean µ over all rows "
                 "(lower-is-better metrics negated, so higher bars are better)", fontsize=9)
    caption = (f"Bar: mean over the rows of the group (each row a mean over seeds); error bar: ±1 standard "
               f"deviation across those rows (none for a single row). Values ×{scale:g}, as in the tables.")
    if flat:
        caption += f" Not shown, equal for every {readable(along, naming).lower()}: " + \
            ", ".join(title_of(c).replace("\n", ": ") for c in flat) + "."
    text = textwrap.fill(caption, width=max(50, int(3.2 * ncols * 17)))  # ~17 characters per inch at 6 pt
    if table.signature:
        # provenance (issue 16): the run's signature as a small footer, left-aligned on one line; the empty
        # last line of the caption keeps its band free
        fig.text(0.005, 0.004, f"signature: {table.signature}", fontsize=4, ha="left", va="bottom", color="0.35")
        text += "\n "
    fig.supxlabel(text, fontsize=6, color="0.3")
    return save_figure(fig, path, dpi)


def save_figure(fig: Any, path: str | Path, dpi: int) -> Path:
    """Write ``fig`` all or nothing (the format by the suffix; a failed write keeps the previous picture), close it."""
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with atomic_output(path) as tmp:
            fig.savefig(tmp, dpi=dpi, format=path.suffix.lstrip(".") or "png")
    finally:
        plt.close(fig)
    return path
