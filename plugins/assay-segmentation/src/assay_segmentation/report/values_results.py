"""Read a ValUES experiment tree's result files into a :class:`~assay_segmentation.report.ResultTable`, as
ValUES' table does.

What ValUES' ``DsTaskTable`` computes, cell for cell:

- **versions**: every combination of an experiment's ``iter_params``; a version's folder is
  ``base_path / naming_scheme_pred_model / "test_results" / naming_scheme_version`` (the
  schemes formatted with the iterated parameters and the experiment's settings);
- **rows**: versions that differ only in ``seed`` form one group; each group gives one
  row per uncertainty type x aggregation of its prediction model, indexed by (the
  ``split_param`` value, when the config has one), ``pred_model``, ``unc_measure``,
  ``unc_type``, ``aggregation`` (``Dropout-Final`` is shown as ``Dropout``, as ValUES does);
- **columns**: ``(task, "metric split")`` for every split of ``dataset_splits``, or
  ``(task, "metric")`` when it is null (the file then lies in the version folder itself);
- **cells**: the ``metrics_key`` value under ``"mean"`` of ``<version>/<split>/<metrics_file_name>``,
  nested ``[unc_type][aggregation]`` as deep as the metric has ``levels``, with or without a
  ``"metrics"`` level, one value per seed; the table shows their mean and sample standard
  deviation (``ddof=1``) times 100. A metric with fewer levels fills every row of its
  prediction model (or uncertainty type).

Differences, each deliberate:

- an uncertainty type or aggregation absent from **every** seed's file leaves the cell empty
  (ValUES' AL improvement has no aleatoric entry; ValUES skips it by name); absent from
  **some** seeds only is an error naming the file, so a mean over seeds is never a mean over
  fewer seeds;
- a ``metrics_key`` that a file does not have is an error naming the config key and the keys
  the file has (ValUES raises ``KeyError``);
- a missing result file is an error naming it (``allow_missing=True``: the cell reads
  ``n/a (1 of 3 missing)``);
- the per-image entries of a file (every key but ``"mean"``) are kept as the cell's
  ``cases`` when the file's ``"mean"`` is their mean, for bootstrap intervals
  (:mod:`assay_segmentation.report.intervals`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from assay.configfile import key_path
from assay.errors import ConfigError, MissingResultError, ResultFileError, SaveFormatError
from assay.jsonio import read_json
from assay_segmentation.downstream.results import decode_numbers
from assay_segmentation.report.collect import Column, ResultTable
from assay_segmentation.report.values_config import VERSION_KEYS, Experiment, TableConfig, ValuesMetric

__all__ = ["INDEX", "Version", "load_values_results", "unc_measure", "versions"]

#: the row dimensions of a ValUES table after the split parameter
INDEX = ("pred_model", "unc_measure", "unc_type", "aggregation")

#: ValUES' shown names of prediction models (``ds_task_table.py``)
_RENAME = {"Dropout-Final": "Dropout"}


def unc_measure(pred_model: str, unc_type: str) -> str:
    """The uncertainty measure of a row, as ValUES' table names it.

    Softmax: MSR (maximum softmax response). SSN: PE (predictive entropy) for predictive,
    MI (mutual information) for aleatoric, EE (expected entropy) for epistemic uncertainty.
    Every other model: PE, EE for aleatoric, MI for epistemic.
    """
    if pred_model == "Softmax":
        return "MSR"
    if unc_type == "predictive_uncertainty":
        return "PE"
    if pred_model == "SSN":
        return "MI" if unc_type == "aleatoric_uncertainty" else "EE"
    return "EE" if unc_type == "aleatoric_uncertainty" else "MI"


class Version:
    """One experiment version: its parameters, its folder and its prediction model's settings."""

    def __init__(self, params: dict[str, str], settings: dict[str, Any], base: Path) -> None:
        self.params = params
        self.pred_model = params["pred_model"]
        fields = {k: v for k, v in settings.items() if k not in VERSION_KEYS}
        fields.update(params)
        self.version_name = str(settings["naming_scheme_version"]).format(**fields)
        model_dir = str(settings.get("naming_scheme_pred_model", "{pred_model}")).format(**fields)
        self.path = base / model_dir / "test_results" / self.version_name
        self.unc_types: tuple[str, ...] = tuple(settings["unc_types"])
        self.aggregations: tuple[str, ...] = tuple(settings["aggregations"])


def versions(experiment: Experiment, base: Path) -> list[Version]:
    """Every version of ``experiment`` in ValUES' order (the product of ``iter_params`` in their order)."""
    keys = list(experiment.iter_params)
    out = []
    for combo in itertools.product(*(experiment.iter_params[k] for k in keys)):
        params = dict(zip(keys, combo))
        out.append(Version(params, experiment.prediction_models[params["pred_model"]], base))
    return out


def _read(path: Path) -> dict[str, Any]:
    try:
        tree = decode_numbers(read_json(path, what="result file", legacy_constants=True))
    except (SaveFormatError, OSError) as exc:
        raise ResultFileError(f"{path}: expected a ValUES result file (JSON), got an unreadable file: {exc}") from None
    if not isinstance(tree, dict):
        raise ResultFileError(f"{path}: expected a ValUES result file (a JSON object), got a JSON "
                              f"{type(tree).__name__}")
    if not isinstance(tree.get("mean"), dict):
        raise ResultFileError(f"{path}: mean: expected the mean over images (a mapping), got "
                              f"{tree.get('mean')!r:.60}")
    return tree


def _locate(node: Any, unc: str, agg: str, depth: int) -> tuple[Any, tuple[str, ...]]:
    """``(mapping holding the metric, key path)``, or ``(None, path to the first absent key)``."""
    path: tuple[str, ...] = ()
    for part in ((unc,) if depth >= 2 else ()) + ((agg,) if depth >= 3 else ()):
        path += (part,)
        if not isinstance(node, dict) or part not in node:
            return None, path
        node = node[part]
    if isinstance(node, dict) and isinstance(node.get("metrics"), dict):
        node, path = node["metrics"], path + ("metrics",)
    return (node, path) if isinstance(node, dict) else (None, path)


def _value(holder: dict[str, Any], key: str, path: Path, at: tuple[str, ...]) -> float:
    """A metric value: a JSON number (``NaN`` / ``null`` already decoded); anything else, a string such as
    ``"0.9"`` included, is a :class:`ResultFileError` naming the file and the key path (issue 27, item 9)."""
    v = holder[key]
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    raise ResultFileError(f"{path}: {key_path(at + (key,))}: expected a number, got {v!r:.60} (a "
                          f"{type(v).__name__}); a result file holds its values as JSON numbers")


def _cases(tree: dict[str, Any], metric: ValuesMetric, unc: str, agg: str, path: Path) -> dict[str, float] | None:
    """The per-image values of the cell, or None when the file has none (or not for every image)."""
    out = {}
    for image, entry in tree.items():
        if image == "mean" or not isinstance(entry, dict):
            continue
        holder, at = _locate(entry, unc, agg, len(metric.levels))
        if holder is None or metric.key not in holder:
            return None
        out[image] = _value(holder, metric.key, path, (image,) + at)
    if not out:
        return None
    values = [v for v in out.values()]
    mean = math.fsum(values) / len(values)
    stated, at = _locate(tree["mean"], unc, agg, len(metric.levels))
    if stated is None or metric.key not in stated:
        return None
    target = _value(stated, metric.key, path, ("mean",) + at)
    if not (math.isfinite(mean) and math.isfinite(target) and abs(mean - target) <= 1e-9 * max(1.0, abs(target))):
        return None  # the file's mean is not the plain mean of its images: no interval rather than a wrong one
    return out


def _groups(config: TableConfig) -> list[list[Version]]:
    """Versions that differ only in ``seed``, in order of first appearance."""
    groups: dict[tuple[Any, ...], list[Version]] = {}
    for exp in config.experiments:
        for v in versions(exp, config.base_path):
            key = (id(exp),) + tuple((k, x) for k, x in v.params.items() if k != "seed")
            groups.setdefault(key, []).append(v)
    return list(groups.values())


def load_values_results(config: TableConfig, *, metrics: Iterable[ValuesMetric] | None = None,
                        allow_missing: bool = False) -> ResultTable:
    """The :class:`ResultTable` of a ValUES table config: values per seed, per-image cases, notes.

    Parameters
    ----------
    config : TableConfig
        From :func:`assay_segmentation.report.values_config.load_table_config` (or one dataset of a plot config).
    metrics : iterable of ValuesMetric, optional
        The columns (default: the config's ``ds_tasks``).
    allow_missing : bool
        By default a missing result file is an error naming it; with ``True`` its cells read
        ``n/a (k of n missing)``.
    """
    if config.base_path_error:
        raise ConfigError(config.base_path_error)
    chosen = tuple(config.metrics if metrics is None else metrics)
    file = config.file
    groups = _groups(config)
    split = config.split_name
    extra = [k for k in dict.fromkeys(k for g in groups for k in g[0].params)
             if k not in ("pred_model", "seed", split) and len({g[0].params.get(k) for g in groups}) > 1]
    index = ((split,) if split else ()) + tuple(extra) + INDEX
    if split:
        order = {v: i for i, v in enumerate(config.split_values)}
        groups = [g for g in groups if g[0].params[split] in order]
        groups.sort(key=lambda g: order[g[0].params[split]])  # stable: ValUES concatenates split by split
    columns: list[tuple[Column, ValuesMetric]] = []
    for m in chosen:
        for s in m.splits if m.splits is not None else (None,):
            columns.append((Column(m.task, m.name, s, m.higher_better), m))
    rows: list[tuple[str, ...]] = []
    values: dict[tuple[tuple[str, ...], Column], tuple[float, ...]] = {}
    cases: dict[tuple[tuple[str, ...], Column], tuple[dict[str, float], ...]] = {}
    missing: dict[tuple[tuple[str, ...], Column], tuple[int, int]] = {}
    absent_files: list[Path] = []
    empty: dict[str, set[str]] = {}
    cache: dict[Path, dict[str, Any] | None] = {}
    for group in groups:
        first = group[0]
        prefix = ((first.params[split],) if split else ()) + tuple(first.params.get(k, "") for k in extra)
        shown = _RENAME.get(first.pred_model, first.pred_model)
        group_rows = [(unc, agg, prefix + (shown, unc_measure(first.pred_model, unc), unc, agg))
                      for unc in first.unc_types for agg in first.aggregations]
        for *_, row in group_rows:
            if row in rows:
                raise ConfigError(f"{file}: {key_path(config.at + ('experiments',))}: two groups of versions give the "
                                  f"same table row {row}; iterate the parameter that tells them apart or split by it")
            rows.append(row)
        for column, metric in columns:
            trees = []
            for v in group:
                path = v.path / column.split / metric.file_name if column.split else v.path / metric.file_name
                if path not in cache:
                    cache[path] = _read(path) if path.is_file() else None
                    if cache[path] is None:
                        absent_files.append(path)
                trees.append((path, cache[path]))
            gone = sum(t is None for _, t in trees)
            seen_units: set[tuple[str, str]] = set()
            for unc, agg, row in group_rows:
                if gone:
                    missing[(row, column)] = (gone, len(trees))
                    continue
                unit = (unc if len(metric.levels) >= 2 else "", agg if len(metric.levels) >= 3 else "")
                found: list[float] = []
                per_image: list[dict[str, float] | None] = []
                absent_at: list[tuple[Path, tuple[str, ...]]] = []
                for path, tree in trees:
                    assert tree is not None
                    holder, at = _locate(tree["mean"], unc, agg, len(metric.levels))
                    if holder is None:
                        absent_at.append((path, ("mean",) + at))
                        continue
                    if metric.key not in holder:
                        keys = ", ".join(sorted(map(str, holder))) or "none"
                        raise ConfigError(f"{file}: {key_path(metric.at + ('metrics_key',))}: {metric.key!r} is not "
                                          f"in {path} at {key_path(('mean',) + at)}; keys there: {keys}")
                    found.append(_value(holder, metric.key, path, ("mean",) + at))
                    per_image.append(_cases(tree, metric, unc, agg, path))
                if absent_at and found:
                    path, at = absent_at[0]
                    raise ResultFileError(f"{path}: {key_path(at)}: expected an entry (the other seeds' files of "
                                          f"{first.pred_model} have one), got none; a mean over seeds would use fewer "
                                          "seeds")
                if absent_at:
                    if unit not in seen_units:
                        empty.setdefault(f"{column.task}: {column.label}", set()).add(".".join(absent_at[0][1]))
                    seen_units.add(unit)
                    continue
                values[(row, column)] = tuple(found)
                if all(c is not None for c in per_image):
                    cases[(row, column)] = tuple(c for c in per_image if c is not None)
    if absent_files and not allow_missing:
        listing = "; ".join(map(str, absent_files[:5]))
        more = f" and {len(absent_files) - 5} more" if len(absent_files) > 5 else ""
        raise MissingResultError(f"{file}: {len(absent_files)} result file(s) of the experiment tree under "
                                 f"{config.base_path} are missing: {listing}{more}. A mean over seeds would silently "
                                 "use fewer seeds; run the evaluation first, check base_path, or pass --allow-missing "
                                 "(allow_missing=True) to show those cells as n/a.")
    notes = tuple(f"– in {col}: the result files have no entry {', '.join(sorted(at))} (nothing to show)"
                  for col, at in empty.items())
    return ResultTable(index_names=index, rows=tuple(rows), columns=tuple(c for c, _ in columns), values=values,
                       missing=missing, cases=cases, notes=notes, blocks_by=split)

