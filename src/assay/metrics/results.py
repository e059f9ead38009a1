"""What :func:`assay.evaluate` returns, saved as and loaded from JSON (never pickle).

:class:`EvaluationResults` is a sequence with one dict per instance, as unitxt returns:
``results[i]["prediction"]``, ``["references"]``, ``["task_data"]`` (when given) and
``results[i]["score"] = {"instance": {...}, "global": {...}}``; the global dict is the
same object for every instance. It is **columnar**: :func:`assay.evaluate` keeps the
predictions, references and task data as the lists it was given and each metric's
instance scores as one array per score; the dict of instance ``i`` is built when it is
first read (then kept, so edits to it stay). Indexing, slicing, ``len``, iteration,
``==`` with a list, ``list(results)``, :meth:`~EvaluationResults.to_dict` and
:meth:`~EvaluationResults.save` behave as for a list of dicts; ``json.dumps(results)``
needs ``list(results)`` or ``results.to_dict()`` (it is not a ``list`` subclass, so the
encoder refuses it rather than writing it wrongly). It also carries ``global_scores``, ``info``
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
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError, SaveFormatError
from assay.jsonio import decode_numbers, read_json, to_jsonable, write_json_atomic
from assay.provenance import Signature, read_signature
from assay.render import Grid, render_grid

__all__ = ["EvaluationResults", "load_results", "to_jsonable"]

FORMAT = "assay.evaluation/1"


class EvaluationResults(Sequence[dict[str, Any]]):
    """Per-instance result dicts (built on first access), with ``global_scores`` and ``info`` attached.

    Build it from a list of instance dicts (``EvaluationResults(instances, global_scores,
    info)``, as :func:`load_results` does) or from columns (:meth:`from_columns`, as
    :func:`assay.evaluate` does).
    """

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value like a list

    def __init__(self, instances: list[dict[str, Any]] | None, global_scores: dict[str, Any], info: dict[str, Any],
                 records: dict[str, tuple[Any, Any]] | None = None) -> None:
        self._built: dict[int, dict[str, Any]] = dict(enumerate(instances or []))
        self._n = len(instances or [])
        self._columns: dict[str, Any] | None = None
        self.global_scores = global_scores
        self.info = info
        #: metric name -> (metric, intermediates); in memory only
        self.records = records or {}

    @classmethod
    def from_columns(cls, n: int, predictions: Sequence[Any], references: Sequence[Any] | None,
                     task_data: Sequence[Any] | None, scores: list[Any], *, main_key: str | None, first: bool,
                     global_scores: dict[str, Any], info: dict[str, Any],
                     records: dict[str, tuple[Any, Any]] | None = None) -> EvaluationResults:
        """Results kept as columns: ``scores`` holds, per metric, ``{name: float array}`` or a list of dicts.

        ``first``: unitxt's precedence for a score name two metrics report (the earlier
        metric keeps it); otherwise later metrics' names win (they never clash then).
        """
        out = cls(None, global_scores, info, records)
        out._n = n
        out._columns = {"predictions": predictions, "references": references, "task_data": task_data,
                        "scores": scores, "main_key": main_key, "first": first}
        return out

    # ------------------------------------------------------------------ the sequence
    def __len__(self) -> int:
        return self._n

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self._instance(i) for i in range(*index.indices(self._n))]
        try:
            i = int(index.__index__())
        except AttributeError:
            raise TypeError(f"EvaluationResults indices must be integers or slices, not {type(index).__name__}") \
                from None
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(f"EvaluationResults index {index} out of range ({self._n} instances)")
        return self._instance(i)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (self._instance(i) for i in range(self._n))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, EvaluationResults)):
            return len(other) == self._n and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def _instance(self, i: int) -> dict[str, Any]:
        inst = self._built.get(i)
        if inst is None:
            inst = self._build(i)
            self._built[i] = inst
        return inst

    def _build(self, i: int) -> dict[str, Any]:
        c = self._columns
        assert c is not None  # instances given as dicts are all in _built
        sc: dict[str, Any] = {}
        for cols in c["scores"]:
            items = ((k, float(a[i])) for k, a in cols.items()) if isinstance(cols, dict) else cols[i].items()
            if c["first"]:
                for key, value in items:
                    sc.setdefault(key, value)
            else:
                sc.update(items)
        main_key = c["main_key"]
        if main_key is not None and main_key in sc:
            sc["score"] = sc[main_key]
            sc["score_name"] = main_key
        inst: dict[str, Any] = {"prediction": _plain(c["predictions"][i])}
        if c["references"] is not None:
            inst["references"] = _plain(c["references"][i])
        if c["task_data"] is not None:
            inst["task_data"] = c["task_data"][i]
        inst["score"] = {"instance": sc, "global": self.global_scores}
        return inst

    # ------------------------------------------------------------------ columns
    @property
    def instance_scores(self) -> list[dict[str, Any]]:
        return [inst["score"]["instance"] for inst in self]

    @property
    def predictions(self) -> list[Any]:
        if self._columns is not None and not self._built:
            return [_plain(p) for p in self._columns["predictions"]]
        return [inst.get("prediction") for inst in self]

    @property
    def references(self) -> list[Any] | None:
        if self._columns is not None and not self._built:
            refs = self._columns["references"]
            return None if refs is None else [_plain(r) for r in refs]
        return [inst.get("references") for inst in self] if self and "references" in self[0] else None

    @property
    def task_data(self) -> list[Any] | None:
        if self._columns is not None and not self._built:
            tds = self._columns["task_data"]
            return None if tds is None else list(tds)
        return [inst.get("task_data") for inst in self] if self and "task_data" in self[0] else None

    def to_dict(self) -> dict[str, Any]:
        insts = []
        for inst in self:
            d = {k: v for k, v in inst.items() if k != "score"}
            d["score"] = {"instance": inst["score"]["instance"]}
            insts.append(d)
        data: dict[str, Any] = to_jsonable({"format": FORMAT, "global": self.global_scores, "info": self.info,
                                            "instances": insts})
        return data

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
        return read_signature(self.info.get("signature"))

    def __repr__(self) -> str:
        return f"<EvaluationResults: {len(self)} instances, {self.global_scores.get('score_name')}=" \
               f"{self.global_scores.get('score')}>"


def _plain(value: Any) -> Any:
    """A numpy row or scalar as the Python value a list of results holds (``tolist`` semantics)."""
    return value.tolist() if isinstance(value, (np.ndarray, np.generic)) else value


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
