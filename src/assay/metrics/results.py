"""What :func:`assay.evaluate` returns, saved as and loaded from JSON (never pickle).

:class:`EvaluationResults` is a list with one dict per instance, as unitxt returns:
``results[i]["prediction"]``, ``["references"]``, ``["task_data"]`` (when given) and
``results[i]["score"] = {"instance": {...}, "global": {...}}``; the global dict is the
same object for every instance. The list also carries ``global_scores``, ``info``
(seed, resampling settings, metric names, notes on degenerate intervals, and the
provenance ``signature`` string of :mod:`assay.provenance`) and, in memory,
each metric's intermediates, which :func:`assay.compare` reuses.

:meth:`EvaluationResults.save` writes standard JSON atomically through :mod:`assay.jsonio`
(a failed write leaves the previous file whole); non-finite scores are written as
``"NaN"``, ``"Infinity"``, ``"-Infinity"`` and :func:`load_results` reads them back as
floats in the score dicts (predictions, references and task data are left as written).
:func:`load_results` checks the layout and raises :class:`~assay.errors.SaveFormatError`
naming the file and the field.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from assay.errors import SaveFormatError
from assay.jsonio import decode_numbers, read_json, to_jsonable, write_json_atomic
from assay.render import Grid, render_grid

__all__ = ["EvaluationResults", "load_results", "to_jsonable"]

FORMAT = "assay.evaluation/1"


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
        """Write standard JSON atomically (see the module docstring); the old file survives a failed write."""
        return write_json_atomic(path, self.to_dict(), indent=1)

    def summary(self, *, digits: int = 4) -> str:
        """A readable table: one row per score, with its interval when there is one, and the signature under it."""
        table = format_table(self.global_scores, digits=digits)
        return table + (f"\nsignature: {self.info['signature']}" if self.info.get("signature") else "")

    @property
    def signature(self) -> Any:
        """The :class:`~assay.provenance.Signature` of these results (``info["signature"]``); None for
        results saved before assay recorded one."""
        from assay.provenance import read_signature

        return read_signature(self.info.get("signature"))

    def __repr__(self) -> str:
        return f"<EvaluationResults: {len(self)} instances, {self.global_scores.get('score_name')}=" \
               f"{self.global_scores.get('score')}>"


def format_table(g: dict[str, Any], *, digits: int = 4) -> str:
    """The global scores ``g`` as a fixed-width text table (score, value, interval), drawn by :mod:`assay.render`."""
    skip = {"score", "score_name", "score_ci_low", "score_ci_high", "num_of_instances"}
    rows = []
    for k, v in g.items():
        if k in skip or k.endswith("_ci_low") or k.endswith("_ci_high") or not isinstance(v, (int, float)):
            continue
        lo, hi = g.get(f"{k}_ci_low"), g.get(f"{k}_ci_high")
        ci = "" if lo is None else f"[{_fmt(lo, digits)}, {_fmt(hi, digits)}]"
        rows.append((k, _fmt(v, digits), ci))
    notes = ([f"({g['num_of_instances']} instances; main score: {g.get('score_name')})"]
             if "num_of_instances" in g else [])
    grid = Grid(header=("score", "value", "confidence interval"), rows=rows, align="lll", notes=notes)
    return render_grid(grid, "text")


def _fmt(v: Any, digits: int) -> str:
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    return f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def _field(cond: bool, p: Path, field: str, expected: str, got: Any) -> None:
    if not cond:
        raise SaveFormatError(f"{p}: field {field!r} must be {expected}; got {got!r:.80}.", path=p, field=field)


def _check_signature(p: Path, sig: Any) -> None:
    """``info.signature`` is optional (older files); when present it must parse (:mod:`assay.provenance`)."""
    from assay.errors import InvalidParameterError
    from assay.provenance import Signature

    if sig is None:
        return
    _field(isinstance(sig, str), p, "info.signature", "a signature string", sig)
    try:
        Signature.from_string(sig)
    except InvalidParameterError as exc:
        raise SaveFormatError(f"{p}: field 'info.signature' is not a valid signature: {exc}", path=p,
                              field="info.signature") from None


def load_results(path: str | os.PathLike[str]) -> EvaluationResults:
    """Read results written by :meth:`EvaluationResults.save` (JSON only, checked).

    Raises :class:`~assay.errors.SaveFormatError` naming the file and the field when the
    file is not valid JSON or not an assay results file. The bare ``NaN`` / ``Infinity``
    that assay 0.1 wrote are still read.
    """
    p = Path(path)
    data = read_json(p, what="results file", legacy_constants=True)
    _field(isinstance(data, dict), p, "<top level>", "a JSON object", type(data).__name__)
    _field(data.get("format") == FORMAT, p, "format", repr(FORMAT), data.get("format"))
    g = data.get("global")
    _field(isinstance(g, dict), p, "global", "an object of scores", g)
    g = decode_numbers(g)
    info = data.get("info", {})
    _field(isinstance(info, dict), p, "info", "an object", info)
    _check_signature(p, info.get("signature"))
    raw = data.get("instances")
    _field(isinstance(raw, list), p, "instances", "a list", raw)
    insts = []
    for i, d in enumerate(raw):
        _field(isinstance(d, dict), p, f"instances[{i}]", "an object", d)
        score = d.get("score")
        ok = isinstance(score, dict) and isinstance(score.get("instance"), dict)
        _field(ok, p, f"instances[{i}].score.instance", "an object of scores", score)
        inst = {k: v for k, v in d.items() if k != "score"}
        inst["score"] = {"instance": decode_numbers(score["instance"]), "global": g}
        insts.append(inst)
    return EvaluationResults(insts, g, info)
