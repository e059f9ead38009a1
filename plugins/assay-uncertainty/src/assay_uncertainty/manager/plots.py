"""Pictures for uncertainty results: reliability diagrams, risk-coverage curves, rejection curves (PNG).

matplotlib is optional (``pip install 'assay-uncertainty[plot]'``) and imported only when drawing.
The curves are computed here with plain numpy (ties in uncertainty grouped, as in the
metrics), so drawing them needs no metric object.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from assay.errors import MissingDependencyError
from assay.functional import divide, equal_width_bins
from assay.jsonio import atomic_output

__all__ = ["reliability_bins", "rejection_curve", "risk_coverage_curve", "plot_reliability", "plot_rejection",
           "plot_risk_coverage"]


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingDependencyError("matplotlib", purpose="uncertainty plots") from None
    return plt


def _save(plt, fig, path: Path) -> Path:
    """Lay out, write the PNG (atomically: a failed write keeps the previous picture) and free the figure."""
    fig.tight_layout()
    try:
        with atomic_output(path) as tmp:
            fig.savefig(tmp, dpi=120, format="png")
    finally:
        plt.close(fig)
    return path


def risk_coverage_curve(u: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Coverage and selective risk (``1 - quality``) at the end of each tie group of increasing ``u``."""
    order = np.argsort(u, kind="stable")
    us, r = u[order], 1.0 - q[order]
    ends = np.append(np.flatnonzero(us[1:] != us[:-1]), us.size - 1)
    k = ends + 1
    return k / u.size, np.cumsum(r)[ends] / k


def rejection_curve(u: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Rejected fraction, mean quality kept (model order), the oracle's, and the random baseline ``mean(q)``."""
    n = u.size
    order = np.argsort(u, kind="stable")
    k = np.arange(n, 0, -1)
    kept = np.cumsum(q[order])[k - 1] / k
    best = np.cumsum(np.sort(q)[::-1])[k - 1] / k
    return (n - k) / n, kept, best, float(q.mean())


def reliability_bins(conf: np.ndarray, correct: np.ndarray, n_bins: int = 15):
    """Per equal-width bin (:func:`assay.functional.equal_width_bins`): centre, mean confidence, accuracy, count.

    Empty bins have NaN mean confidence and accuracy.
    """
    b = equal_width_bins(conf, n_bins)
    cnt = np.bincount(b, minlength=n_bins).astype(float)
    mean_conf = divide(np.bincount(b, weights=conf, minlength=n_bins), cnt)
    acc = divide(np.bincount(b, weights=correct, minlength=n_bins), cnt)
    return (np.arange(n_bins) + 0.5) / n_bins, mean_conf, acc, cnt


def plot_risk_coverage(curves: Mapping[str, tuple[np.ndarray, np.ndarray]], path: Path, *, title: str = "") -> Path:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for name, (u, q) in curves.items():
        cov, risk = risk_coverage_curve(np.asarray(u, float), np.asarray(q, float))
        ax.step(np.concatenate(([0.0], cov)), np.concatenate(([risk[0]], risk)), where="pre", label=name)
    ax.set_xlabel("coverage")
    ax.set_ylabel("selective risk (1 - quality)")
    ax.set_title(title or "Risk-coverage curves (lower is better)")
    ax.legend(fontsize=7)
    return _save(plt, fig, path)


def plot_rejection(curves: Mapping[str, tuple[np.ndarray, np.ndarray]], path: Path, *, title: str = "") -> Path:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4.5))
    oracle_drawn = False
    for name, (u, q) in curves.items():
        frac, kept, best, rand = rejection_curve(np.asarray(u, float), np.asarray(q, float))
        ax.plot(frac, kept, label=name)
        if not oracle_drawn:
            ax.plot(frac, best, "k--", label="oracle")
            ax.axhline(rand, color="grey", linestyle=":", label="random")
            oracle_drawn = True
    ax.set_xlabel("rejected fraction (most uncertain first)")
    ax.set_ylabel("mean quality of the kept examples")
    ax.set_title(title or "Rejection curves (PRR: area between model and random, over oracle and random)")
    ax.legend(fontsize=7)
    return _save(plt, fig, path)


def plot_reliability(conf: np.ndarray, correct: np.ndarray, path: Path, *, n_bins: int = 15,
                     title: str = "") -> Path:
    plt = _pyplot()
    centre, mean_conf, acc, cnt = reliability_bins(np.asarray(conf, float), np.asarray(correct, float), n_bins)
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.bar(centre, np.nan_to_num(acc), width=1.0 / n_bins, edgecolor="black", alpha=0.7, label="accuracy")
    ax.plot([0, 1], [0, 1], "k--", label="perfect calibration")
    ax.plot(mean_conf, acc, "o", color="red", label="mean confidence")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("confidence")
    ax.set_ylabel("accuracy")
    ax.set_title(title or "Reliability diagram")
    ax.legend(fontsize=7, loc="upper left")
    return _save(plt, fig, path)


def draw_all(man, out_dir: Path, *, estimators: Sequence[str] | None = None) -> list[Path]:
    """Risk-coverage and rejection curves per sequence-level generation metric, and a reliability diagram
    for every estimator whose values lie in [0, 1] (read as ``1 - P(correct)``) against binary quality."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for (level, gen), q in man.gen_metrics.items():
        q = np.asarray(q if level == "sequence" else np.concatenate(q), dtype=float)
        curves = {}
        for (elevel, est), u in man.estimations.items():
            if elevel != level or (estimators and est not in estimators):
                continue
            u = np.asarray(u if level == "sequence" else np.concatenate(u), dtype=float)
            ok = np.isfinite(u) & np.isfinite(q)
            if ok.sum() == 0:
                continue
            curves[est] = (u[ok], q[ok])
            binary = np.all((q[ok] == 0) | (q[ok] == 1))
            if binary and u[ok].min() >= 0 and u[ok].max() <= 1:
                written.append(plot_reliability(1 - u[ok], q[ok], out_dir / f"reliability_{level}_{est}_{gen}.png",
                                                title=f"Reliability: 1 - {est} vs {gen}"))
        if curves:
            written.append(plot_risk_coverage(curves, out_dir / f"risk_coverage_{level}_{gen}.png",
                                              title=f"Risk-coverage ({level}, quality = {gen})"))
            written.append(plot_rejection(curves, out_dir / f"rejection_{level}_{gen}.png",
                                          title=f"Rejection curves ({level}, quality = {gen})"))
    return written
