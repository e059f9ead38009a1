"""Smooth ECE (Błasiok & Nakkiran 2023), torch-uncertainty's ``SmoothCalibrationError``: kernel-smoothed calibration.

Our own numpy, because no maintained numpy package computes it the way torch-uncertainty 0.13.0
does (relplot's reference implementation, as torch-uncertainty ports it): the residuals
``conf - acc`` and the confidences are spread onto a grid (linear weights to the two nearest
points), convolved with a Gaussian (in logit space, ``kernel_type="logit"``, or in probability
space with reflection at 0 and 1, ``"reflected"``), read back at ``t = linspace(0, 1, M)`` by
linear interpolation, and

``SmECE = sum_t |r(t)| f(t) / sum_t f(t)``

with ``r`` the smoothed residual and ``f`` the smoothed density. ``bandwidth="auto"`` finds the
bandwidth ``h`` with ``h ~ SmECE(h)`` by ``refine_steps`` bisections of [0, 1]. The metric keeps
``(confidence, correct)`` rows (gathered: shards concatenate, intervals resample the rows).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.metrics import Metric
from assay.validation import check_choice, check_int, check_number, undefined_metric
from assay_uncertainty.calibration import _as_inputs, top_label

__all__ = ["SmoothCalibrationError", "smooth_ece"]


def _to_grid(f: np.ndarray, y: np.ndarray, m: int) -> np.ndarray:
    """``y`` spread onto ``m`` grid points over [0, 1]: weight ``1 - frac`` to the point below, ``frac`` above."""
    scaled = f * (m - 1)
    bins = np.clip(scaled.astype(np.int64), 0, m - 2)
    frac = scaled - bins
    return (np.bincount(bins, weights=(1 - frac) * y, minlength=m)
            + np.bincount(bins + 1, weights=frac * y, minlength=m))


def _interpolate(t: np.ndarray, y: np.ndarray) -> np.ndarray:
    m = y.size
    step = 1.0 / (m - 1)
    inds = np.clip((t * (m - 1)).astype(np.int64), 0, m - 2)
    residual = (t - inds * step) / step
    return y[inds] * (1 - residual) + y[inds + 1] * residual


def _gaussian(m: int, sigma: float) -> np.ndarray:
    t = np.linspace(0.0, 1.0, m)
    return np.exp(-((t - 0.5) ** 2) / (2 * sigma**2)) / (math.sqrt(2 * math.pi) * sigma)


def _apply(f: np.ndarray, y: np.ndarray, at: np.ndarray, sigma: float, reflect: bool) -> np.ndarray:
    """Grid, convolve (cross-correlate, as torch's ``conv1d``), interpolate back at ``at``."""
    m = max(2000, round(20 / sigma)) // 2
    if m % 2 == 0:
        m += 1  # an odd kernel, centred
    values = _to_grid(f, y, m)
    ker = _gaussian(m, sigma)
    if reflect:
        flip = values[::-1]
        ext = np.concatenate([flip[:-1], values, flip[1:]])
        smoothed = np.correlate(ext, ker, mode="valid")[m // 2:m // 2 + m]
    else:
        smoothed = np.correlate(np.pad(values, (m // 2, m // 2)), ker, mode="valid")  # conv1d, padding="same"
    return _interpolate(at, smoothed)


def _smooth(f: np.ndarray, y: np.ndarray, at: np.ndarray, sigma: float, reflect: bool,
            eps: float = 1e-4) -> tuple[np.ndarray, np.ndarray]:
    ys = _apply(f, y, at, sigma, reflect)
    dens = _apply(f, np.ones_like(y), at, sigma, reflect) + eps
    return ys / dens, dens


def _smooth_logit(f: np.ndarray, y: np.ndarray, t: np.ndarray, sigma: float,
                  eps: float = 0.001) -> tuple[np.ndarray, np.ndarray]:
    """The Gaussian smoother in normalised logit space, the density corrected by ``1 / (t (1 - t))``."""
    z = t[1:-1]
    logit_z = np.log(z / (1 - z))
    fc = np.clip(f, eps, 1 - eps)
    logit_f = np.log(fc / (1 - fc))
    lo, hi = min(logit_f.min(), logit_z.min()), max(logit_f.max(), logit_z.max())
    span = hi - lo if hi > lo else 1e-9
    ys, dens = _smooth((logit_f - lo) / span, y, (logit_z - lo) / span, sigma * 4 / span, reflect=False)
    dens = dens / (z * (1 - z))
    dens = dens * (f.size * t.size / (dens.sum() + 1e-9))
    return np.concatenate([ys[:1], ys, ys[-1:]]), np.concatenate([dens[:1], dens, dens[-1:]])


def smooth_ece(conf: np.ndarray, acc: np.ndarray, bandwidth: float, *, kernel_type: str = "logit",
               mesh_pts: int = 200) -> float:
    """SmECE of confidences and 0 / 1 correctness at a fixed ``bandwidth`` (see the module docstring)."""
    t = np.linspace(0.0, 1.0, max(int(10 / bandwidth), mesh_pts))
    residuals = conf - acc
    if kernel_type == "logit":
        ys, dens = _smooth_logit(conf, residuals, t, bandwidth)
    else:
        ys, dens = _smooth(conf, residuals, t, bandwidth, reflect=True)
    rs = np.where(dens > 1e-8, np.abs(ys), 0.0)
    return float(np.sum(rs * dens) / (dens.sum() + 1e-8))


def search_bandwidth(conf: np.ndarray, acc: np.ndarray, *, kernel_type: str, eps: float, mesh_pts: int,
                     refine_steps: int) -> float:
    """The fixed point ``h ~ SmECE(h)`` by bisection of [0, 1] (relplot's and torch-uncertainty's search)."""
    def above(alpha: float) -> bool:
        return alpha < eps or alpha < smooth_ece(conf, acc, alpha, kernel_type=kernel_type, mesh_pts=mesh_pts)

    start, end = 1.0, 0.0
    if above(start):
        return start
    for _ in range(refine_steps):
        mid = (start + end) / 2.0
        if above(mid):
            end = mid
        else:
            start = mid
    return start


class SmoothCalibrationError(Metric):
    r"""Smooth ECE (torch-uncertainty's ``SmoothCalibrationError``); lower is better.

    Top-label: ``(N, C)`` probabilities give ``conf = max_c p_c`` and ``acc = [argmax == y]``;
    ``(N,)`` binary probabilities give ``conf = max(p, 1 - p)`` and the prediction
    ``p >= 0.5`` (a tie predicts class 1, as torch-uncertainty here). Options as
    torch-uncertainty's: ``kernel_type`` ``"logit"`` (default) or ``"reflected"``,
    ``bandwidth`` a float in (0, 1] or ``"auto"`` (default), ``eps`` (the search's lower
    limit), ``mesh_pts`` and ``refine_steps``. torch-uncertainty turns logits (values outside
    [0, 1]) into probabilities with a warning; here they are an error (``validate_args``).
    Reference: Błasiok & Nakkiran, "Smooth ECE: Principled Reliability Diagrams via Kernel
    Smoothing", ICLR 2024.
    """

    name = "smooth_ece"
    main_score = "smooth_ece"
    higher_is_better = False
    per_instance = False
    # four examples, bandwidth 0.5: the value torch-uncertainty 0.13.0's class prints for them (float64 default
    # dtype; it sums the last step in float32, 0.0105671873), not derivable by hand; the tests run it live
    examples = [{"predictions": [[0.9, 0.1], [0.3, 0.7], [0.6, 0.4], [0.2, 0.8]], "references": [0, 0, 0, 1],
                 "overrides": {"bandwidth": 0.5}, "global_target": {"smooth_ece": 0.0105671873}}]

    def __init__(self, *, kernel_type: str = "logit", bandwidth: Any = "auto", eps: float = 0.001,
                 mesh_pts: int = 200, refine_steps: int = 10, validate_args: bool = True,
                 score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.kernel_type = check_choice(kernel_type, "kernel_type", ("logit", "reflected"), owner=self.name)
        if bandwidth != "auto":
            if isinstance(bandwidth, str):
                raise InvalidParameterError(f"{self.name}: bandwidth is a float in (0, 1] or 'auto'; got "
                                            f"{bandwidth!r}.")
            bandwidth = check_number(bandwidth, "bandwidth", low=0.0, high=1.0, closed="right", owner=self.name)
        self.bandwidth = bandwidth
        self.eps = check_number(eps, "eps", low=0.0, high=1.0, closed="neither", owner=self.name)
        self.mesh_pts = check_int(mesh_pts, "mesh_pts", low=2, owner=self.name)
        self.refine_steps = check_int(refine_steps, "refine_steps", low=0, owner=self.name)
        self.validate_args = bool(validate_args)

    def map_batch(self, predictions, references, task_data=None):
        p, y = _as_inputs(predictions, references, validate=self.validate_args, name=self.name)
        if p.ndim == 1:
            pred = p >= 0.5
            conf, right = np.where(pred, p, 1.0 - p), pred == (y == 1)
        else:
            conf, right = top_label(p, y, validate=self.validate_args, name=self.name)
        return np.column_stack([np.asarray(conf, dtype=np.float64), right.astype(np.float64)])

    def reduce(self, intermediates):
        rows = np.asarray(intermediates, dtype=np.float64).reshape(-1, 2)
        if rows.shape[0] == 0:
            return {self.name: undefined_metric(f"{self.name}: no examples; NaN.")}
        conf, acc = rows[:, 0], rows[:, 1]
        h = self.bandwidth
        if h == "auto":
            h = search_bandwidth(conf, acc, kernel_type=self.kernel_type, eps=self.eps, mesh_pts=self.mesh_pts,
                                 refine_steps=self.refine_steps)
        return {self.name: smooth_ece(conf, acc, h, kernel_type=self.kernel_type, mesh_pts=self.mesh_pts)}
