"""Stored model outputs: the JSON Lines / ``.npz`` schema and its loader.

Nothing runs a model: the manager scores what a model already produced. One record per
example (a JSON object per line in ``.jsonl``); every field is optional, but a field
present in one record must be present in all. Known fields and their checks:

==================  ==========================================  =====================================
field               value                                       used by
==================  ==========================================  =====================================
``id``              string or integer                           reports
``answer``          string (the generated answer)               ``accuracy``
``reference``       string; or ``references``: list of strings  ``accuracy``
``correct``         0 / 1 (or true / false)                     ``accuracy``
``quality``         number (higher = better)                    ``quality``
``label``           integer class                               ``accuracy`` with ``ensemble_probs``
``log_probs``       list of numbers <= 0: log-probability of    ``msp``, ``perplexity``, token and
                    each generated token                        claim estimators
``top_logprobs``    list (one per token) of lists of log-       ``token_entropies`` (entropy of the
                    probabilities of the top candidates         stored distribution, renormalised)
``token_entropies`` list of numbers >= 0, one per token         token-entropy estimators
``token_correct``   list of 0 / 1, one per token                ``token_accuracy``
``sample_texts``    list of strings (sampled answers)           lexical similarity, distinct answers
``sample_log_probs`` list (one per sample) of token log-probs   Monte Carlo sequence entropy
``similarity_matrix`` K x K list of numbers (K samples)         ``eigval_laplacian``
``claim_spans``     list of [start, end) token index pairs      ``claim_probability``
``claim_correct``   list of 0 / 1, one per claim                ``claim_accuracy``
``ensemble_probs``  M x C list: each member's class probabilities  ensemble estimators
==================  ==========================================  =====================================

Other fields are kept as they are (for your own stat calculators).

``.npz`` (loaded with ``allow_pickle=False``): one array per field with the example as the
first axis (``correct``: ``(N,)``, ``ensemble_probs``: ``(N, M, C)``, strings as a
unicode array). A ragged field is stored flat, concatenated over the examples along
its first axis, with ``<field>__lengths`` (``(N,)`` integers) giving each example's share.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError, SaveFormatError
from assay.jsonio import read_json, read_jsonl
from assay.validation import check_probabilities

__all__ = ["FIELDS", "UEDataError", "load_ue_data", "records_to_columns", "columns_to_records"]


class UEDataError(InvalidParameterError):
    """A stored-output record breaks the schema; the message names the source, the record and the field."""


def _num(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) and math.isfinite(float(v))


def _is_list(v: Any) -> bool:
    return isinstance(v, (list, tuple, np.ndarray)) and not isinstance(v, str)


def _binary(v: Any) -> bool:
    return isinstance(v, (bool, np.bool_)) or (_num(v) and float(v) in (0.0, 1.0))


def _check_value(field: str, v: Any) -> str | None:
    """None if ``v`` is a valid value of ``field``, else what was expected."""
    if field == "id":
        return None if isinstance(v, (str, int, np.integer)) else "a string or an integer"
    if field in ("answer", "reference"):
        return None if isinstance(v, str) else "a string"
    if field in ("references", "sample_texts"):
        return None if _is_list(v) and all(isinstance(s, str) for s in v) else "a list of strings"
    if field == "correct":
        return None if _binary(v) else "0 or 1 (or true / false)"
    if field == "quality":
        return None if _num(v) else "a finite number"
    if field == "label":
        return None if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 0 else "a class index >= 0"
    if field == "log_probs":
        ok = _is_list(v) and all(_num(x) and float(x) <= 1e-9 for x in v)
        return None if ok else "a list of log-probabilities (finite numbers <= 0)"
    if field == "token_entropies":
        return None if _is_list(v) and all(_num(x) and float(x) >= 0 for x in v) else "a list of numbers >= 0"
    if field in ("token_correct", "claim_correct"):
        return None if _is_list(v) and all(_binary(x) for x in v) else "a list of 0 / 1"
    if field == "top_logprobs":
        ok = _is_list(v) and all(_is_list(row) and len(row) > 0 and all(_num(x) and float(x) <= 1e-9 for x in row)
                                 for row in v)
        return None if ok else "a list (one per token) of non-empty lists of log-probabilities"
    if field == "sample_log_probs":
        ok = _is_list(v) and all(_is_list(row) and all(_num(x) and float(x) <= 1e-9 for x in row) for row in v)
        return None if ok else "a list (one per sample) of lists of log-probabilities"
    if field == "similarity_matrix":
        ok = _is_list(v) and all(_is_list(row) and len(row) == len(v) and all(_num(x) for x in row) for row in v)
        return None if ok else "a square K x K list of numbers"
    if field == "claim_spans":
        ok = _is_list(v) and all(_is_list(s) and len(s) == 2 and all(isinstance(x, (int, np.integer)) for x in s)
                                 and 0 <= s[0] < s[1] for s in v)
        return None if ok else "a list of [start, end) integer pairs with 0 <= start < end"
    if field == "ensemble_probs":
        rows_ok = _is_list(v) and len(v) > 0 and all(_is_list(r) and len(r) == len(v[0]) and len(r) > 0 for r in v)
        if not rows_ok:
            return "an M x C list of probabilities (M members, C classes)"
        try:
            check_probabilities(v, "ensemble_probs", ndim=2, shape="(M, C)")
        except InvalidParameterError as exc:
            return ("an M x C list whose rows are probability distributions (in [0, 1], summing to 1) "
                    f"({str(exc).rstrip('.')})")
        return None
    return None


#: the fields the schema knows (others pass through unchecked)
FIELDS: tuple[str, ...] = (
    "id", "answer", "reference", "references", "correct", "quality", "label", "log_probs", "top_logprobs",
    "token_entropies", "token_correct", "sample_texts", "sample_log_probs", "similarity_matrix", "claim_spans",
    "claim_correct", "ensemble_probs",
)


def _cross_checks(rec: Mapping[str, Any]) -> tuple[str, str] | None:
    n_tok = len(rec["log_probs"]) if "log_probs" in rec else None
    for f in ("top_logprobs", "token_entropies", "token_correct"):
        if f in rec and n_tok is not None and len(rec[f]) != n_tok:
            return f, f"one entry per token of 'log_probs' ({n_tok}); got {len(rec[f])}"
    if "claim_spans" in rec:
        if n_tok is not None and any(s[1] > n_tok for s in rec["claim_spans"]):
            return "claim_spans", f"spans inside the {n_tok} tokens of 'log_probs'"
        if "claim_correct" in rec and len(rec["claim_correct"]) != len(rec["claim_spans"]):
            spans, labels = len(rec["claim_spans"]), len(rec["claim_correct"])
            return "claim_correct", f"one label per claim span ({spans}); got {labels}"
    if "sample_texts" in rec and "sample_log_probs" in rec and len(rec["sample_texts"]) != len(rec["sample_log_probs"]):
        return "sample_log_probs", f"one entry per sample of 'sample_texts' ({len(rec['sample_texts'])})"
    if "sample_texts" in rec and "similarity_matrix" in rec \
            and len(rec["similarity_matrix"]) != len(rec["sample_texts"]):
        return "similarity_matrix", f"a K x K matrix for the K = {len(rec['sample_texts'])} samples"
    return None


def records_to_columns(records: Iterable[Mapping[str, Any]], *, source: str = "<records>") -> dict[str, list]:
    """Check records against the schema and turn them into columns (``{field: [value per record]}``)."""
    records = list(records)
    columns: dict[str, list] = {}
    first_fields: set[str] | None = None
    for i, rec in enumerate(records):
        where = f"{source}: record {i}" + (f" (id {rec['id']!r})" if isinstance(rec, Mapping) and "id" in rec else "")
        if not isinstance(rec, Mapping):
            raise UEDataError(f"{where}: expected a JSON object; got {type(rec).__name__}.")
        fields = set(rec)
        if first_fields is None:
            first_fields = fields
        elif fields != first_fields:
            missing = sorted(first_fields - fields)
            extra = sorted(fields - first_fields)
            what = f"lacks field {missing[0]!r}" if missing else f"has field {extra[0]!r}"
            raise UEDataError(f"{where}: {what}, unlike record 0 (every record must have the same fields).")
        for field, value in rec.items():
            expected = _check_value(field, value)
            if expected is not None:
                raise UEDataError(f"{where}: field {field!r} must be {expected}; got {value!r:.120}.")
        bad = _cross_checks(rec)
        if bad is not None:
            raise UEDataError(f"{where}: field {bad[0]!r} must have {bad[1]}.")
        for field, value in rec.items():
            columns.setdefault(field, []).append(value)
    return columns


def columns_to_records(columns: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The inverse of :func:`records_to_columns` (for columns from ``.npz`` or Python)."""
    n = _column_length(columns)
    return [{k: _plain(v[i]) for k, v in columns.items()} for i in range(n)]


def _plain(value: Any) -> Any:
    """numpy arrays and scalars as Python lists and numbers (so the schema checks see JSON-like values)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def _column_length(columns: Mapping[str, Any]) -> int:
    lengths = {k: len(v) for k, v in columns.items()}
    if len(set(lengths.values())) > 1:
        raise UEDataError(f"<columns>: every field needs one value per example; got lengths {lengths}.")
    return next(iter(lengths.values()), 0)


def _read_npz(path: Path) -> dict[str, list]:
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    cols: dict[str, Any] = {}
    for key, arr in arrays.items():
        if key.endswith("__lengths"):
            continue
        lengths = arrays.get(key + "__lengths")
        if lengths is None:
            cols[key] = list(arr)
            continue
        lengths = np.asarray(lengths, dtype=np.int64)
        if lengths.sum() != len(arr):
            raise UEDataError(
                f"{path}: array {key + '__lengths'!r} sums to {int(lengths.sum())} but {key!r} has {len(arr)} entries."
            )
        cols[key] = np.split(arr, np.cumsum(lengths)[:-1])
    return cols


def load_ue_data(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read stored model outputs (``.jsonl`` / ``.json`` list / ``.npz``), check them, return the records.

    Errors name the file, the record (index and ``id``) and the field.
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"No such data file: {str(p)!r}")
    if p.suffix == ".npz":
        try:
            records = columns_to_records(_read_npz(p))
        except ValueError as exc:
            if isinstance(exc, UEDataError):
                raise
            raise UEDataError(f"{p}: not a readable .npz without pickled objects ({exc}).") from None
    elif p.suffix == ".json":
        try:
            records = read_json(p, what="data file", legacy_constants=True)
        except SaveFormatError as exc:  # malformed JSON: the message names the file, line and column
            raise UEDataError(str(exc)) from None
        if not isinstance(records, list):
            raise UEDataError(f"{p}: a .json file must hold a list of records; got {type(records).__name__}.")
    else:
        records = read_jsonl(p, what="data file", error=lambda reason, line: UEDataError(f"{p}:{line}: {reason}."))
    records_to_columns(records, source=str(p))  # validate
    return records
