"""Prompts for the model loop from a local dataset: JSON Lines, CSV or a saved Hugging Face ``datasets`` folder.

>>> recs = prompt_records([{"q": "2+2?", "a": "4"}], text_column="q", label_column="a",
...                       template="Q: {text}\\nA:")
>>> recs[0]["input"], recs[0]["reference"]
('Q: 2+2?\\nA:', '4')

Each example becomes a record for ``UEManager(records, model=...)``: ``input`` (the
prompt: ``template`` with ``{text}`` and optional ``{few_shot}`` filled), ``reference`` (a
string label) or ``references`` (a list label), and ``id`` (the row's position in the
file). ``few_shot=k`` takes the first ``k`` rows as demonstrations (rendered with
``few_shot_template``, ``{text}`` and ``{label}``) and leaves them out of the evaluation.
Then ``subsample=n`` keeps ``n`` rows drawn without replacement with ``seed`` (in file
order), and ``size=n`` keeps the first ``n``.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError, MissingDependencyError

__all__ = ["load_rows", "prompt_records"]


def load_rows(path: str | os.PathLike[str], *, split: str | None = None) -> list[dict[str, Any]]:
    """The rows of a ``.jsonl`` / ``.json`` (a list) / ``.csv`` file, or of a ``datasets`` folder (``save_to_disk``)."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"No such dataset file or folder: {str(p)!r}")
    if p.is_dir():
        try:
            import datasets
        except ImportError:
            raise MissingDependencyError("datasets", purpose=f"reading the Hugging Face datasets folder {str(p)!r}") \
                from None
        ds = datasets.load_from_disk(str(p))
        if isinstance(ds, datasets.DatasetDict):
            if split is None or split not in ds:
                raise InvalidParameterError(f"{p}: the folder holds the splits {', '.join(ds)}; choose one with "
                                            f"'split' (got {split!r}).")
            ds = ds[split]
        return [dict(r) for r in ds]
    if p.suffix == ".csv":
        with open(p, encoding="utf-8", newline="") as f:
            return [dict(r) for r in csv.DictReader(f)]
    if p.suffix == ".json":
        rows = json.loads(p.read_text(encoding="utf-8"))
        if not isinstance(rows, list):
            raise InvalidParameterError(f"{p}: a .json dataset must hold a list of objects; got {type(rows).__name__}.")
        return rows
    rows = []
    for lineno, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise InvalidParameterError(f"{p}:{lineno}: invalid JSON ({exc.msg}, column {exc.colno}).") from None
    return rows


def _label(value: Any, where: str) -> tuple[str, Any]:
    if isinstance(value, str):
        return "reference", value
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return "references", list(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return "reference", str(value)
    raise InvalidParameterError(
        f"{where}: the label must be a string or a non-empty list of strings; got {value!r:.80}.")


def _fill(template: str, name: str, **values: Any) -> str:
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError) as exc:
        raise InvalidParameterError(f"The prompt {name!r} {template!r:.80} has a placeholder other than "
                                    f"{', '.join('{' + k + '}' for k in values)} ({type(exc).__name__}: {exc}); "
                                    "write a literal brace as {{ or }}.") from None


def prompt_records(rows: Sequence[Mapping[str, Any]], *, text_column: str = "input",
                   label_column: str | None = None, template: str = "{text}", few_shot: int = 0,
                   few_shot_template: str = "{text} {label}\n", subsample: int | None = None,
                   size: int | None = None, seed: int = 0, source: str = "<rows>") -> list[dict[str, Any]]:
    """Turn dataset rows into the model loop's records (see the module docstring)."""
    if "{text}" not in template:
        raise InvalidParameterError(f"The prompt 'template' must contain {{text}}; got {template!r}.")
    for name, value in (("few_shot", few_shot), ("subsample", subsample), ("size", size), ("seed", seed)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise InvalidParameterError(f"The dataset's {name!r} must be an integer >= 0; got {value!r}.")
    indexed = list(enumerate(rows))
    for i, row in indexed:
        where = f"{source}: row {i}"
        if not isinstance(row, Mapping):
            raise InvalidParameterError(f"{where}: expected an object with named columns; got {type(row).__name__}.")
        for col in (text_column, label_column):
            if col is not None and col not in row:
                raise InvalidParameterError(f"{where}: no column {col!r}; the row has: {', '.join(map(str, row))}.")
        if not isinstance(row[text_column], str):
            raise InvalidParameterError(f"{where}: column {text_column!r} must be a string; got "
                                        f"{row[text_column]!r:.80}.")
    if few_shot and (label_column is None or few_shot >= len(indexed)):
        raise InvalidParameterError(f"few_shot={few_shot} needs a 'label_column' and more than {few_shot} rows "
                                    f"(got {len(indexed)}).")
    shots = "".join(_fill(few_shot_template, "few_shot_template", text=r[text_column],
                          label=r[label_column] if label_column is not None else "")  # checked above
                    for _, r in indexed[:few_shot])
    indexed = indexed[few_shot:]
    if subsample is not None and subsample < len(indexed):
        keep = np.sort(np.random.default_rng(seed).choice(len(indexed), size=subsample, replace=False))
        indexed = [indexed[k] for k in keep]
    if size is not None:
        indexed = indexed[:size]
    records = []
    for i, row in indexed:
        rec: dict[str, Any] = {"id": i, "input": _fill(template, "template", text=row[text_column], few_shot=shots)}
        if label_column is not None:
            rec.update([_label(row[label_column], f"{source}: row {i}")])
        records.append(rec)
    if any("references" in r for r in records):  # one field for every record: lists everywhere
        for r in records:
            if "reference" in r:
                r["references"] = [r.pop("reference")]
    if not records:
        raise InvalidParameterError(f"{source}: no examples left to evaluate (after few_shot, subsample and size).")
    return records
