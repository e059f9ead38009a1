"""Collect the result trees of an ``assay run`` output folder into one table of mean and std over seeds.

Rows are (other iterated parameters..., ``pred_model``, ``unc_type``, ``aggregation``);
columns are (task, metric, split). A metric that does not depend on the uncertainty type
or the aggregation fills every row of its prediction model (ValUES' layout). Versions
that differ only in ``over`` (default ``seed``) are one row; the cell holds the mean and
the sample standard deviation (``ddof=1``; NaN for a single seed) of their ``mean``
values.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterable

import attrs

from assay.downstream.results import read_json, read_manifest

__all__ = ["Column", "ResultTable", "load_results"]

ROW_DIMS = ("pred_model", "unc_type", "aggregation")


@attrs.frozen
class Column:
    """One table column: a metric of a task on a split (``split`` None for combined splits)."""

    task: str
    metric: str
    split: str | None
    higher_is_better: bool

    @property
    def label(self) -> str:
        return f"{self.metric} {self.split}" if self.split else self.metric


@attrs.frozen
class ResultTable:
    """Values per row and column, over seeds; ``mean`` / ``std`` give the summaries."""

    index_names: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    columns: tuple[Column, ...]
    values: dict[tuple[tuple[str, ...], Column], tuple[float, ...]]

    def cell(self, row: tuple[str, ...], column: Column) -> tuple[float, ...]:
        return self.values.get((row, column), ())

    def mean(self, row: tuple[str, ...], column: Column) -> float:
        vals = [v for v in self.cell(row, column) if not math.isnan(v)]
        return math.fsum(vals) / len(vals) if vals else math.nan

    def std(self, row: tuple[str, ...], column: Column) -> float:
        vals = [v for v in self.cell(row, column) if not math.isnan(v)]
        if len(vals) < 2:
            return math.nan
        m = math.fsum(vals) / len(vals)
        return math.sqrt(math.fsum((v - m) ** 2 for v in vals) / (len(vals) - 1))

    def row_value(self, row: tuple[str, ...], dim: str) -> str:
        return row[self.index_names.index(dim)]

    def select(self, columns: Iterable[Column]) -> "ResultTable":
        keep = tuple(columns)
        return attrs.evolve(self, columns=keep, values={k: v for k, v in self.values.items() if k[1] in keep})

    def filter_rows(self, exclude: dict[str, list[Any]]) -> "ResultTable":
        """Drop the rows whose value of a dimension is listed in ``exclude[dimension]``."""
        def keep(row: tuple[str, ...]) -> bool:
            return not any(dim in self.index_names and self.row_value(row, dim) in {str(x) for x in values}
                           for dim, values in exclude.items())

        rows = tuple(r for r in self.rows if keep(r))
        return attrs.evolve(self, rows=rows, values={k: v for k, v in self.values.items() if k[0] in rows})


def _subtree(tree: dict, unc: str, agg: str, levels: list[str]) -> dict | None:
    node: Any = tree.get("mean", {})
    if "unc_type" in levels:
        node = node.get(unc) if isinstance(node, dict) else None
    if "aggregation" in levels and isinstance(node, dict):
        node = node.get(agg)
    if not isinstance(node, dict):
        return None
    return node.get("metrics", node)


def load_results(results_dir: str | Path, *, over: str = "seed", tasks: Iterable[str] | None = None) -> ResultTable:
    """Read the manifest and result files of ``results_dir`` into a :class:`ResultTable`."""
    results_dir = Path(results_dir)
    manifest = read_manifest(results_dir)
    chosen = list(tasks) if tasks is not None else list(manifest["tasks"])
    unknown = [t for t in chosen if t not in manifest["tasks"]]
    if unknown:
        raise FileNotFoundError(f"No results for tasks {unknown} in {results_dir}; it has {list(manifest['tasks'])}.")
    extra: list[str] = []
    for v in manifest["versions"]:
        for key in v["params"]:
            if key not in ("pred_model", over) and key not in extra:
                extra.append(key)
    index_names = tuple(extra) + ROW_DIMS
    columns: list[Column] = []
    for key in chosen:
        info = manifest["tasks"][key]
        splits = [None] if info["combine_splits"] else info["datasets"]
        for m in info["metrics"]:
            for split in splits:
                columns.append(Column(key, m["name"], split, bool(m["higher_is_better"])))
    rows: list[tuple[str, ...]] = []
    cells: dict[tuple[tuple[str, ...], Column], list[float]] = {}
    cache: dict[Path, Any] = {}
    for v in manifest["versions"]:
        prefix = tuple(str(v["params"].get(k, "")) for k in extra)
        version_rows = [(unc, agg) for unc in v["unc_types"] for agg in (v["aggregations"] or ["-"])]
        for unc, agg in version_rows:
            row = prefix + (v["pred_model"], unc, agg)
            if row not in rows:
                rows.append(row)
        for key in chosen:
            info = manifest["tasks"][key]
            out = results_dir / v["output_dir"]
            for m in info["metrics"]:
                col_splits = [None] if info["combine_splits"] else info["datasets"]
                for split in col_splits:
                    path = out / info["file_name"] if split is None else out / split / info["file_name"]
                    if path not in cache:
                        cache[path] = read_json(path) if path.is_file() else None
                    tree = cache[path]
                    column = Column(key, m["name"], split, bool(m["higher_is_better"]))
                    for unc, agg in version_rows:
                        node = _subtree(tree, unc, agg, m["levels"]) if tree is not None else None
                        value = float(node[m["name"]]) if node and m["name"] in node else math.nan
                        cells.setdefault((prefix + (v["pred_model"], unc, agg), column), []).append(value)
    return ResultTable(index_names=index_names, rows=tuple(rows), columns=tuple(columns),
                       values={k: tuple(v) for k, v in cells.items()})
