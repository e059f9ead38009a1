"""What :func:`assay.evaluate` returns, saved as and loaded from JSON (never pickle).

:class:`EvaluationResults` is a list with one dict per instance, as unitxt returns:
``results[i]["prediction"]``, ``["references"]``, ``["task_data"]`` (when given) and
``results[i]["score"] = {"instance": {...}, "global": {...}}``; the global dict is the
same object for every instance. The list also carries ``global_scores``, ``info``
(seed, resampling settings, metric names, notes on degenerate intervals) and, in memory,
each metric's intermediates, which :func:`assay.compare` reuses.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError

__all__ = ["EvaluationResults", "load_results", "to_jsonable"]

FORMAT = "assay.evaluation/1"


def to_jsonable(x: Any) -> Any:
    """Plain JSON types for numpy scalars and arrays, tuples, sets (recursively)."""
    if isinstance(x, dict):
        return {str(k): to_jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return to_jsonable(x.tolist())
    if isinstance(x, np.generic):
        return x.item()
    return x


class EvaluationResults(list):
    """Per-instance result dicts, with ``global_scores`` and ``info`` attached."""

    def __init__(self, instances: list[dict[str, Any]], global_scores: dict[str, Any], info: dict[str, Any],
                 records: dict[str, tuple[Any, Any]] | None = None) -> None:
        super().__init__(instances)
        self.global_scores = global_scores
        self.info = info
        #: metric name -> (metric, intermediates); in memory only
        self.records = records or {}

    @property
    def instance_scores(self) -> list[dict[str, Any]]:
        return [inst["score"]["instance"] for inst in self]

    @property
    def predictions(self) -> list[Any]:
        return [inst.get("prediction") for inst in self]

    @property
    def references(self) -> list[Any] | None:
        return [inst.get("references") for inst in self] if self and "references" in self[0] else None

    @property
    def task_data(self) -> list[Any] | None:
        return [inst.get("task_data") for inst in self] if self and "task_data" in self[0] else None

    def to_dict(self) -> dict[str, Any]:
        insts = []
        for inst in self:
            d = {k: v for k, v in inst.items() if k != "score"}
            d["score"] = {"instance": inst["score"]["instance"]}
            insts.append(d)
        return to_jsonable({"format": FORMAT, "global": self.global_scores, "info": self.info, "instances": insts})

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write JSON (NaN written as ``NaN``, as Python's json module reads it back)."""
        p = Path(path)
        p.write_text(json.dumps(self.to_dict(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        return p

    def summary(self, *, digits: int = 4) -> str:
        """A readable table: one row per score, with its interval when there is one."""
        return format_table(self.global_scores, digits=digits)

    def __repr__(self) -> str:
        return f"<EvaluationResults: {len(self)} instances, {self.global_scores.get('score_name')}=" \
               f"{self.global_scores.get('score')}>"


def format_table(g: dict[str, Any], *, digits: int = 4) -> str:
    skip = {"score", "score_name", "score_ci_low", "score_ci_high", "num_of_instances"}
    rows = []
    for k, v in g.items():
        if k in skip or k.endswith("_ci_low") or k.endswith("_ci_high") or not isinstance(v, (int, float)):
            continue
        lo, hi = g.get(f"{k}_ci_low"), g.get(f"{k}_ci_high")
        ci = "" if lo is None else f"[{_fmt(lo, digits)}, {_fmt(hi, digits)}]"
        rows.append((k, _fmt(v, digits), ci))
    head = ("score", "value", "confidence interval")
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(3)]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    out = [line(head), line(tuple("-" * w for w in widths))] + [line(r) for r in rows]
    if "num_of_instances" in g:
        out.append(f"({g['num_of_instances']} instances; main score: {g.get('score_name')})")
    return "\n".join(out)


def _fmt(v: Any, digits: int) -> str:
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    return f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def load_results(path: str | os.PathLike[str]) -> EvaluationResults:
    """Read results written by :meth:`EvaluationResults.save` (JSON only)."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"No such results file: {str(p)!r}") from None
    except json.JSONDecodeError as exc:
        raise InvalidParameterError(f"{p}: not a results JSON file ({exc.msg} at line {exc.lineno}).") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InvalidParameterError(f"{p}: not an assay results file (expected \"format\": {FORMAT!r}).")
    g = data["global"]
    insts = []
    for d in data["instances"]:
        inst = {k: v for k, v in d.items() if k != "score"}
        inst["score"] = {"instance": d["score"]["instance"], "global": g}
        insts.append(inst)
    return EvaluationResults(insts, g, data.get("info", {}))
