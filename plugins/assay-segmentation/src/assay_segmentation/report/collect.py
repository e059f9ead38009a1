"""Collect the result trees of an ``assay run`` output folder into one table of mean and std over seeds.

Rows are (other iterated parameters..., ``pred_model``, ``unc_type``, ``aggregation``);
columns are (task, metric, split). A metric that does not depend on the uncertainty type
or the aggregation fills every row of its prediction model (ValUES' layout). Versions
that differ only in ``over`` (default ``seed``) are one row; the cell holds the mean and
the sample standard deviation (``ddof=1``; NaN for a single seed) of their ``mean``
values.

Every version x task x split listed in the run's manifest must have its result file: a
missing one is a :class:`~assay.errors.ResultFileError` naming it, so a mean over seeds
is never silently a mean over fewer seeds. With ``allow_missing=True`` the affected cells
hold no value and record how many of their files are missing (``ResultTable.missing``);
the tables show them as ``n/a (1 of 3 missing)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs

from assay.errors import InvalidParameterError, MissingResultError, ResultFileError, SaveFormatError
from assay.jsonio import decode_number
from assay_segmentation.downstream.results import MANIFEST, read_json

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
    #: cells whose result files are partly missing: (missing, expected) files
    missing: dict[tuple[tuple[str, ...], Column], tuple[int, int]] = attrs.field(factory=dict)
    #: the run's provenance signature (the manifest's ``signature``; "" for runs written before it)
    signature: str = ""
    #: the per-image values behind a cell, one ``{image id: value}`` per seed (in the order of
    #: ``values``), for cells whose value is the mean over images (bootstrap intervals, see
    #: :mod:`assay_segmentation.report.intervals`)
    cases: dict[tuple[tuple[str, ...], Column], tuple[dict[str, float], ...]] = attrs.field(factory=dict)
    #: lines printed under the table (what an empty cell means, say)
    notes: tuple[str, ...] = ()
    #: the index dimension whose values start separately coloured blocks of rows (ValUES colours
    #: each split value's block on its own scale); None: one scale per column
    blocks_by: str | None = None

    def cell(self, row: tuple[str, ...], column: Column) -> tuple[float, ...]:
        return self.values.get((row, column), ())

    def mean(self, row: tuple[str, ...], column: Column) -> float:
        if (row, column) in self.missing:
            return math.nan
        vals = [v for v in self.cell(row, column) if not math.isnan(v)]
        return math.fsum(vals) / len(vals) if vals else math.nan

    def std(self, row: tuple[str, ...], column: Column) -> float:
        if (row, column) in self.missing:
            return math.nan
        vals = [v for v in self.cell(row, column) if not math.isnan(v)]
        if len(vals) < 2:
            return math.nan
        m = math.fsum(vals) / len(vals)
        return math.sqrt(math.fsum((v - m) ** 2 for v in vals) / (len(vals) - 1))

    def row_value(self, row: tuple[str, ...], dim: str) -> str:
        return row[self.index_names.index(dim)]

    def select_metrics(self, metrics: Iterable[str]) -> ResultTable:
        """Only the columns of these metric names; an unknown name is an error with the closest match."""
        from assay.configfile import close_match

        wanted = list(metrics)
        known = sorted({c.metric for c in self.columns})
        for name in wanted:
            if name not in known:
                raise InvalidParameterError(f"The 'metrics' parameter must name metrics of these results "
                                            f"({', '.join(known)}).{close_match(name, known)} Got {name!r} instead.")
        return self.select(c for c in self.columns if c.metric in wanted)

    def select(self, columns: Iterable[Column]) -> ResultTable:
        keep = tuple(columns)
        return attrs.evolve(self, columns=keep, values={k: v for k, v in self.values.items() if k[1] in keep},
                            missing={k: v for k, v in self.missing.items() if k[1] in keep},
                            cases={k: v for k, v in self.cases.items() if k[1] in keep})

    def filter_rows(self, exclude: dict[str, list[Any]]) -> ResultTable:
        """Drop the rows whose value of a dimension is listed in ``exclude[dimension]``."""
        def keep(row: tuple[str, ...]) -> bool:
            return not any(dim in self.index_names and self.row_value(row, dim) in {str(x) for x in values}
                           for dim, values in exclude.items())

        rows = tuple(r for r in self.rows if keep(r))
        return attrs.evolve(self, rows=rows, values={k: v for k, v in self.values.items() if k[0] in rows},
                            missing={k: v for k, v in self.missing.items() if k[0] in rows},
                            cases={k: v for k, v in self.cases.items() if k[0] in rows})


def _located(tree: dict, unc: str, agg: str, levels: list[str], start: str = "mean") -> tuple[dict | None, str]:
    """The mapping that holds one cell's metrics in a result file, and its key path (for messages)."""
    node: Any = tree.get(start, {})
    at = [start]
    if "unc_type" in levels:
        node = node.get(unc) if isinstance(node, dict) else None
        at.append(unc)
    if "aggregation" in levels and isinstance(node, dict):
        node = node.get(agg)
        at.append(agg)
    if not isinstance(node, dict):
        return None, ".".join(at)
    if isinstance(node.get("metrics"), dict):
        return node["metrics"], ".".join(at + ["metrics"])
    return node, ".".join(at)


def _number(node: dict, name: str, path: Path, at: str) -> float:
    """A metric value of a result file: a JSON number, or ``"NaN"`` / ``"Infinity"`` / ``null`` (assay's rule
    for non-finite values); anything else, a string such as ``"0.9"`` included, is a :class:`ResultFileError`
    naming the file and the key path (issue 27, item 9: ``"0.9"`` was read as 0.9 and shown without interval)."""
    try:
        return float(decode_number(node[name], where=f"{path}: {at}.{name}"))
    except SaveFormatError as exc:
        raise ResultFileError(f"{exc} A result file of 'assay run' holds its values as JSON numbers.") from None


def _image_values(tree: dict, unc: str, agg: str, levels: list[str], name: str, mean: float,
                  path: Path) -> dict[str, float] | None:
    """The per-image values of one cell of one file, when the file's ``mean`` is their plain mean (else None)."""
    out: dict[str, float] = {}
    for image, entry in tree.items():
        if image in ("mean", "signature") or not isinstance(entry, dict):
            continue
        node, at = _located(tree, unc, agg, levels, start=image)
        if not node or name not in node:
            return None
        out[image] = _number(node, name, path, at)
    if not out:
        return None
    vals = list(out.values())
    avg = math.fsum(vals) / len(vals)
    if not (math.isfinite(avg) and math.isfinite(mean) and abs(avg - mean) <= 1e-9 * max(1.0, abs(mean))):
        return None
    return out


def _read_manifest(results_dir: Path) -> dict[str, Any]:
    """The manifest, checked for the keys the table reads; errors name the file and the key."""
    path = results_dir / MANIFEST
    if not path.is_file():
        raise MissingResultError(f"{path}: expected the manifest of 'assay run' here, got no such file "
                              f"(is {results_dir} the output folder of 'assay run'?)")
    manifest = _read_tree(path, "the manifest of 'assay run'")
    for key, kind in (("versions", list), ("tasks", dict)):
        if not isinstance(manifest.get(key), kind):
            raise ResultFileError(f"{path}: {key}: expected a {kind.__name__}, got {manifest.get(key)!r:.60}")
    for i, v in enumerate(manifest["versions"]):
        need: tuple[str, ...] = ("pred_model", "params", "unc_types", "aggregations", "output_dir")
        if not isinstance(v, dict) or any(k not in v for k in need):
            raise ResultFileError(f"{path}: versions[{i}]: expected a mapping with {', '.join(need)}, got {v!r:.60}")
    for key, info in manifest["tasks"].items():
        need = ("file_name", "datasets", "combine_splits", "metrics")
        if not isinstance(info, dict) or any(k not in info for k in need):
            raise ResultFileError(f"{path}: tasks.{key}: expected a mapping with {', '.join(need)}, "
                                  f"got {info!r:.60}")
    return manifest


def _read_tree(path: Path, what: str) -> dict[str, Any]:
    try:
        tree = read_json(path)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ResultFileError(f"{path}: expected {what} (JSON), got an unreadable file: {exc}") from None
    if not isinstance(tree, dict):
        raise ResultFileError(f"{path}: expected {what} (a JSON object), got a JSON {type(tree).__name__}")
    return tree


def load_results(results_dir: str | Path, *, over: str = "seed", tasks: Iterable[str] | None = None,
                 allow_missing: bool = False) -> ResultTable:
    """Read the manifest and result files of ``results_dir`` into a :class:`ResultTable`.

    Parameters
    ----------
    results_dir : path
        The output folder of ``assay run``.
    over : str
        The iterated parameter the cells average over (default ``seed``).
    tasks : list of str, optional
        Only these tasks.
    allow_missing : bool
        By default a result file listed in the manifest but absent is an error naming
        it. With ``True`` the cells it feeds hold no value and are recorded in
        ``ResultTable.missing`` (shown as ``n/a (k of n missing)``).
    """
    results_dir = Path(results_dir)
    manifest = _read_manifest(results_dir)
    over = str(over)
    chosen = list(tasks) if tasks is not None else list(manifest["tasks"])
    unknown = [t for t in chosen if t not in manifest["tasks"]]
    if unknown:
        raise ResultFileError(f"{results_dir / MANIFEST}: no results for tasks {unknown}; it has "
                              f"{list(manifest['tasks'])}.")
    params = {k for v in manifest["versions"] for k in v["params"]}
    if over != "seed" and over not in params:
        from assay.configfile import close_match

        raise InvalidParameterError(f"The 'over' parameter must be an iterated parameter of these results "
                                    f"({', '.join(sorted(params))}).{close_match(over, params)} Got {over!r} instead.")
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
    absent: list[tuple[Path, str, str]] = []
    counts: dict[tuple[tuple[str, ...], Column], list[int]] = {}
    per_case: dict[tuple[tuple[str, ...], Column], list[dict[str, float] | None]] = {}
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
                        cache[path] = _read_tree(path, f"the results of task {key!r}") if path.is_file() else None
                        if cache[path] is None:
                            absent.append((path, f"{v['pred_model']}/{v.get('version_name', v['output_dir'])}", key))
                    tree = cache[path]
                    column = Column(key, m["name"], split, bool(m["higher_is_better"]))
                    for unc, agg in version_rows:
                        node, at = _located(tree, unc, agg, m["levels"]) if tree is not None else (None, "")
                        value = _number(node, m["name"], path, at) if node and m["name"] in node else math.nan
                        cell_key = (prefix + (v["pred_model"], unc, agg), column)
                        cells.setdefault(cell_key, []).append(value)
                        if m.get("per_image") and tree is not None:
                            per_case.setdefault(cell_key, []).append(
                                _image_values(tree, unc, agg, m["levels"], m["name"], value, path))
                        count = counts.setdefault(cell_key, [0, 0])
                        count[0] += tree is None
                        count[1] += 1
    if absent and not allow_missing:
        listing = "; ".join(f"{p} (version {ver}, task {task})" for p, ver, task in absent[:5])
        more = f" and {len(absent) - 5} more" if len(absent) > 5 else ""
        raise MissingResultError(f"{results_dir / MANIFEST}: {len(absent)} result file(s) listed by the manifest are "
                              f"missing: {listing}{more}. A mean over seeds would silently use fewer seeds; rerun "
                              "'assay run', or pass --allow-missing (allow_missing=True) to show those cells as n/a.")
    missing = {k: (c[0], c[1]) for k, c in counts.items() if c[0]}
    signature = manifest.get("signature")
    if signature is not None and not isinstance(signature, str):
        raise ResultFileError(f"{results_dir / MANIFEST}: signature: expected a signature string, "
                              f"got {signature!r:.60}")
    cases = {k: tuple(c for c in v if c is not None) for k, v in per_case.items()
             if k not in missing and len(v) == len(cells[k]) and all(c is not None for c in v)}
    return ResultTable(index_names=index_names, rows=tuple(rows), columns=tuple(columns),
                       values={k: tuple(v) for k, v in cells.items()}, missing=missing, signature=signature or "",
                       cases=cases)
