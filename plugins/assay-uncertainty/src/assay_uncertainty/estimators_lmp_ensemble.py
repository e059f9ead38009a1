"""LM-Polygraph 0.7.0's ensemble token- and sequence-level measures (EPT*, PET*, EPS*, PES*; issue 28).

Malinin & Gales 2021, "Uncertainty Estimation in Autoregressive Structured Prediction" (ICLR):
an ensemble of ``M`` models decodes ``B`` beams; ``pe`` (product of expectations: the ensemble
averages the members' token distributions) and ``ep`` (expectation of products: it averages their
sequence probabilities) are the two ways to combine them.

All read LM-Polygraph's ``ensemble_token_scores`` statistic as its ``EnsembleTokenLevelData``
calculator builds it, a dict with

- ``weights``: ``(N, B)``, the beams' weights ``w_b`` (of the model's ensembling mode);
- ``pe_token_level_scores`` / ``ep_token_level_scores``: dicts holding, per measure, an
  ``(N, B)`` array of beam-level scores (``total_uncertainty``, ``data_uncertainty``,
  ``mutual_information``, ``rmi``, ``epkl``, ``entropy_top5``, ``entropy_top10``,
  ``entropy_top15``) and ``log_probas``, ``(N, M, B)``: each member's log-probability of each beam.

Token-derived measures (``EPT*``, ``PET*``): ``u = sum_b w_b s_b``, the weighted sum of the beams'
scores ``s_b`` of that measure. Sequence measures (``EPS*``, ``PES*``), from ``log_probas``
``l_{m,b}``: the ensemble's ``log P_b = logsumexp_m l_{m,b} - log M``, ``P_b = exp log P_b``,
``v_b = P_b / sum_b P_b``; then ``tu = -sum_b v_b P_b``, ``rmi = mean_m sum_b v_b (log P_b - l_{m,b})``,
``rmi_abs = mean_m sum_b v_b |log P_b - l_{m,b}|``.

The statistic needs an ensemble model (LM-Polygraph's ``EnsembleTokenLevelData`` runs its
ensemble generation); assay computes the estimators on the statistic, however it was made.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.uncertainty.base import Estimator

__all__ = ["ENSEMBLE_SEQUENCE_CLASSES", "ENSEMBLE_TOKEN_CLASSES", "EnsembleSequenceMeasure", "EnsembleTokenMeasure",
           "batch_scores", "sequence_level_measures"]

#: LM-Polygraph's measure keys, by the suffix of its class names
TOKEN_MEASURES = {"tu": "total_uncertainty", "du": "data_uncertainty", "mi": "mutual_information", "rmi": "rmi",
                  "epkl": "epkl", "ent5": "entropy_top5", "ent10": "entropy_top10", "ent15": "entropy_top15"}


def _plain(value: Any) -> np.ndarray:
    # .cpu() for torch tensors on a device; numpy arrays and CPU tensors go through np.asarray
    return np.asarray(value.cpu() if hasattr(value, "cpu") else value, dtype=np.float64)


def _array(value: Any, what: str, ndim: int) -> np.ndarray:
    arr = _plain(value)
    if arr.ndim != ndim:
        raise InvalidParameterError(f"ensemble_token_scores: {what} must have {ndim} dimensions; "
                                    f"got shape {arr.shape}.")
    return arr


def batch_scores(column: Any, who: str = "ensemble_token_scores") -> Mapping[str, Any]:
    """LM-Polygraph's whole-batch dict from either layout of ``ensemble_token_scores``.

    LM-Polygraph's calculator returns one dict for the batch (arrays whose first axis is the
    example); assay's statistics are one value per example, so the column may also be a list
    with one such dict per example (``weights`` ``(B,)``, each measure ``(B,)``, ``log_probas``
    ``(M, B)``), which is stacked here. Both give the same values.
    """
    if isinstance(column, Mapping):
        return column
    rows = list(column)
    if not rows or not all(isinstance(r, Mapping) for r in rows):
        raise InvalidParameterError(f"estimator {who!r}: 'ensemble_token_scores' must be LM-Polygraph's dict or a "
                                    "list of one such dict per example.")

    def stack(get: Any, what: str) -> np.ndarray:
        try:
            return np.stack([_plain(get(r)) for r in rows])
        except (KeyError, ValueError) as exc:
            raise InvalidParameterError(f"estimator {who!r}: ensemble_token_scores {what}: every example needs it, "
                                        f"with the same shape ({exc}).") from None

    out: dict[str, Any] = {}
    if "weights" in rows[0]:
        out["weights"] = stack(lambda r: r["weights"], "weights")
    for key in ("ep_token_level_scores", "pe_token_level_scores"):
        if key in rows[0]:
            out[key] = {m: stack(lambda r, m=m, key=key: r[key][m], f"{key}[{m!r}]") for m in rows[0][key]}
    return out


def _scores(stats: Mapping[str, Any], mode: str, who: str) -> Mapping[str, Any]:
    data = batch_scores(stats["ensemble_token_scores"], who)
    key = f"{mode}_token_level_scores"
    if not isinstance(data, Mapping) or key not in data:
        have = ", ".join(sorted(map(str, data))) if isinstance(data, Mapping) else type(data).__name__
        raise InvalidParameterError(f"estimator {who!r}: 'ensemble_token_scores' must be LM-Polygraph's dict with "
                                    f"{key!r}; got {have}.")
    return data[key]


class EnsembleTokenMeasure(Estimator):
    r"""``u = sum_b w_b s_b``: a beam-weighted token-derived ensemble measure (LM-Polygraph's EPT* / PET*)."""

    level, dependencies = "sequence", ("ensemble_token_scores",)
    mode = ""
    measure = ""

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        scores = _scores(stats, self.mode, self.name)
        if self.measure not in scores:
            raise InvalidParameterError(f"estimator {self.name!r}: ensemble_token_scores"
                                        f"[{self.mode}_token_level_scores] has no {self.measure!r}.")
        ue = _array(scores[self.measure], f"{self.mode}_token_level_scores[{self.measure!r}]", 2)
        data = batch_scores(stats["ensemble_token_scores"], self.name)
        if "weights" not in data:
            raise InvalidParameterError(f"estimator {self.name!r}: ensemble_token_scores has no 'weights'.")
        w = _array(data["weights"], "weights", 2)
        if w.shape != ue.shape:
            raise InvalidParameterError(f"estimator {self.name!r}: weights {w.shape} and {self.measure!r} {ue.shape} "
                                        "must have the same shape (examples, beams).")
        return (w * ue).sum(-1)


def sequence_level_measures(log_probas: Any) -> dict[str, np.ndarray]:
    """``tu``, ``rmi``, ``rmi-abs`` of each example from its members' beam log-probabilities ``(N, M, B)``."""
    lp = _array(log_probas, "log_probas", 3)
    m = lp.shape[1]
    ens_lp = np.logaddexp.reduce(lp, axis=1) - np.log(m)  # (N, B)
    ens_p = np.exp(ens_lp)
    weights = ens_p / ens_p.sum(-1, keepdims=True)
    base = (ens_lp[:, None, :] - lp) * weights[:, None, :]  # (N, M, B)
    return {"tu": -(ens_p * weights).sum(-1), "rmi": base.sum(-1).mean(1), "rmi-abs": np.abs(base).sum(-1).mean(1)}


class EnsembleSequenceMeasure(Estimator):
    r"""A sequence-level ensemble measure from the members' beam log-probabilities (LM-Polygraph's EPS* / PES*)."""

    level, dependencies = "sequence", ("ensemble_token_scores",)
    mode = ""
    measure = ""

    def __call__(self, stats: Mapping[str, Any]) -> np.ndarray:
        scores = _scores(stats, self.mode, self.name)
        if "log_probas" not in scores:
            raise InvalidParameterError(f"estimator {self.name!r}: ensemble_token_scores"
                                        f"[{self.mode}_token_level_scores] has no 'log_probas'.")
        return sequence_level_measures(scores["log_probas"])[self.measure]


def _token_class(mode: str, suffix: str) -> type[EnsembleTokenMeasure]:
    cls_name = f"{mode.upper()}T{suffix}"
    doc = (f"``sum_b w_b s_b`` of ``{TOKEN_MEASURES[suffix]}`` under the ``{mode}`` posterior "
           f"(LM-Polygraph's {cls_name}; Malinin & Gales 2021).")
    return type(cls_name, (EnsembleTokenMeasure,), {"__doc__": doc, "name": f"{mode}t_{suffix}", "mode": mode,
                                                    "measure": TOKEN_MEASURES[suffix], "__module__": __name__})


def _sequence_class(mode: str, suffix: str) -> type[EnsembleSequenceMeasure]:
    key = {"tu": "tu", "rmi": "rmi", "rmiabs": "rmi-abs"}[suffix]
    cls_name = f"{mode.upper()}S{suffix}"
    doc = (f"``{key}`` from the members' beam log-probabilities under the ``{mode}`` posterior "
           f"(LM-Polygraph's {cls_name}; Malinin & Gales 2021).")
    snake = f"{mode}s_{'rmi_abs' if suffix == 'rmiabs' else suffix}"
    return type(cls_name, (EnsembleSequenceMeasure,), {"__doc__": doc, "name": snake, "mode": mode, "measure": key,
                                                       "__module__": __name__})


#: LM-Polygraph class name -> class, EPTtu ... PETent15 (16)
ENSEMBLE_TOKEN_CLASSES: dict[str, type[EnsembleTokenMeasure]] = {
    c.__name__: c for c in (_token_class(mode, s) for mode in ("ep", "pe") for s in TOKEN_MEASURES)}
#: LM-Polygraph class name -> class, EPStu ... PESrmiabs (6)
ENSEMBLE_SEQUENCE_CLASSES: dict[str, type[EnsembleSequenceMeasure]] = {
    c.__name__: c for c in (_sequence_class(mode, s) for mode in ("ep", "pe") for s in ("tu", "rmi", "rmiabs"))}
globals().update(ENSEMBLE_TOKEN_CLASSES)
globals().update(ENSEMBLE_SEQUENCE_CLASSES)
