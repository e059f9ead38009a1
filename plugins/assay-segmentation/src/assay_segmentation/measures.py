"""Segmentation measures used by the ValUES downstream tasks: Dice, GED, NCC, AL improvement.

All functions take numpy arrays of any spatial dimension (2-D images, 3-D volumes);
masks are read as foreground where the value is non-zero.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.functional import divide
from assay.validation import check_array, check_choice, check_number, undefined_metric

__all__ = ["al_improvement", "dice", "ged", "ncc"]


def _mask(x: Any, name: str, owner: str = "dice") -> np.ndarray:
    arr = check_array(x, name, owner=owner, dtype=None, what="mask values")  # numbers, finite (NaN is no mask value)
    if arr.ndim == 0:
        raise InvalidParameterError(f"Expected `{name}` to be an array mask, got a scalar {arr!r}.")
    return arr != 0


def dice(pred: Any, ref: Any, *, empty_value: float = 0.0) -> float:
    """Foreground Dice between a predicted and a reference mask.

    ``Dice = 2 |P & R| / (|P| + |R|)``, foreground = non-zero.

    Parameters
    ----------
    pred, ref : array_like
        Masks of the same shape (2-D or 3-D, any dtype).
    empty_value : float, default 0.0
        The value when both masks are empty (0 / 0). ValUES uses 0 (the ``nan`` of
        ``2 TP / (2 TP + FP + FN)`` replaced by 0); 1.0 ("both agree there is nothing") is
        the other common choice.

    Returns
    -------
    float

    Examples
    --------
    >>> dice([[1, 1], [0, 0]], [[1, 0], [0, 0]])
    0.6666666666666666
    """
    p, r = _mask(pred, "pred"), _mask(ref, "ref")
    if p.shape != r.shape:
        raise InvalidParameterError(f"Expected `pred` and `ref` of the same shape, got {p.shape} and {r.shape}.")
    inter = int(np.count_nonzero(p & r))
    total = int(np.count_nonzero(p)) + int(np.count_nonzero(r))
    if total == 0:
        return float(empty_value)
    return 2.0 * inter / total


def _stack(x: Any, name: str, owner: str = "ged") -> np.ndarray:
    arr = check_array(x, name, owner=owner, dtype=None, what="mask values")
    if arr.ndim < 2:
        raise InvalidParameterError(
            f"Expected `{name}` as a stack of masks of shape (n, *spatial), got shape {arr.shape}."
        )
    if arr.shape[0] == 0:
        raise InvalidParameterError(f"Expected at least one mask in `{name}`, got an empty stack {arr.shape}.")
    return (arr != 0).reshape(arr.shape[0], -1)


def _pair_counts(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Intersections and sizes for all pairs of rows (as float64 matrices)."""
    af, bf = a.astype(np.float64), b.astype(np.float64)
    inter = af @ bf.T
    return inter, af.sum(axis=1)[:, None], bf.sum(axis=1)[None, :]


def _mean_iou_distance(a: np.ndarray, b: np.ndarray) -> float:
    inter, sa, sb = _pair_counts(a, b)
    union = sa + sb - inter
    d = 1.0 - divide(inter, union, 1.0)  # two empty masks (union 0): IoU 1, distance 0
    return float(d.mean())


def _pooled_dice_distance(a: np.ndarray, b: np.ndarray) -> float:
    inter, sa, sb = _pair_counts(a, b)
    tp = inter.sum()
    fp = (sa - inter).sum()
    fn = (sb - inter).sum()
    denom = 2 * tp + fp + fn
    return 0.0 if denom == 0 else float(1.0 - 2 * tp / denom)


def ged(preds: Any, refs: Any, *, distance: str = "dice_pooled") -> float:
    """Generalized energy distance between predicted samples and reference segmentations.

    ``GED = 2 E[d(S, Y)] - E[d(S, S')] - E[d(Y, Y')]``, each expectation over all ordered
    pairs including self pairs (``S`` predicted samples, ``Y`` references).

    Parameters
    ----------
    preds : array_like, shape (n_samples, *spatial)
    refs : array_like, shape (n_refs, *spatial)
    distance : {"dice_pooled", "iou"}
        ``"iou"``: ``d = 1 - IoU`` per pair with ``d(empty, empty) = 0``, averaged over
        the pairs (Kohl et al., *A Probabilistic U-Net*, 2018). ``"dice_pooled"``: each
        expectation is ``1 - Dice`` computed once from TP / FP / FN summed over all its
        pairs (ValUES); all pairs empty gives distance 0.

    Returns
    -------
    float

    Examples
    --------
    >>> ged([[1, 0]], [[1, 0], [0, 1]], distance="iou")
    0.5
    """
    if distance not in ("dice_pooled", "iou"):
        raise InvalidParameterError(
            f"The 'distance' parameter of ged must be one of {{'dice_pooled', 'iou'}}. Got {distance!r} instead."
        )
    s, y = _stack(preds, "preds"), _stack(refs, "refs")
    if s.shape[1] != y.shape[1]:
        raise InvalidParameterError(
            f"Expected `preds` and `refs` with the same spatial shape, got {np.shape(preds)} and {np.shape(refs)}."
        )
    d = _mean_iou_distance if distance == "iou" else _pooled_dice_distance
    return 2.0 * d(s, y) - d(s, s) - d(y, y)


NCC_CONVENTIONS = ("binary", "values")


def ncc(uncertainty_map: Any, refs: Any, *, convention: str = "binary") -> float:
    """Normalised cross-correlation between an uncertainty map and the reference disagreement.

    The reference map is the per-voxel variance (``ddof=0``) over the reference
    segmentations, of

    - ``convention="binary"`` (default): the foreground masks ``ref != 0``, so on a
      multi-class map every disagreement between two labels counts the same;
    - ``convention="values"``: the raw label values, as ValUES computes it, so a
      disagreement between labels 1 and 3 counts more than one between 1 and 2. On binary
      references both conventions are equal.

    With ``N`` voxels, ValUES' normalisation is
    ``NCC = sum((g - mean g)(u - mean u)) / (N * std(g, ddof=1) * std(u, ddof=1))``,
    that is ``((N - 1) / N) * pearson(g, u)``.

    Parameters
    ----------
    uncertainty_map : array_like, shape spatial
    refs : array_like, shape (n_refs, *spatial)
    convention : {"binary", "values"}

    Returns
    -------
    float
        NaN with a warning when either map is constant (the correlation is undefined).
    """
    check_choice(convention, "convention", NCC_CONVENTIONS, owner="ncc")
    u = check_array(uncertainty_map, "uncertainty_map", owner="ncc", what="uncertainty values")
    r = check_array(refs, "refs", owner="ncc", dtype=None, what="mask values")
    if r.ndim != u.ndim + 1 or r.shape[1:] != u.shape:
        raise InvalidParameterError(
            f"Expected `refs` of shape (n_refs, *{u.shape}) for an uncertainty map of shape {u.shape}, "
            f"got {r.shape}."
        )
    labels = (r != 0) if convention == "binary" else r
    g = labels.astype(np.float64).var(axis=0).ravel()
    u = u.ravel()
    n = u.size
    if n < 2:
        return undefined_metric("ncc: fewer than two voxels; NCC is undefined, returning NaN.")
    gc, uc = g - g.mean(), u - u.mean()
    sg, su = np.sqrt((gc * gc).sum()), np.sqrt((uc * uc).sum())
    if sg == 0 or su == 0:
        which = "reference disagreement map" if sg == 0 else "uncertainty map"
        return undefined_metric(f"ncc: the {which} is constant; NCC is undefined, returning NaN.")
    return float((n - 1) / n * (gc * uc).sum() / (sg * su))


def al_improvement(dice_first: float, dice_uncertainty: float, dice_random: float) -> float:
    """Relative Dice gain of uncertainty-based querying over random querying (ValUES).

    ``(du - dr) / d1``, which equals ValUES' ``(du / d1 - 1) - (dr / d1 - 1)``: ``d1`` is
    the first cycle's mean Dice, ``du`` the second cycle's after querying the most
    uncertain images, ``dr`` after querying at random.

    Returns NaN with a warning when ``dice_first`` is 0.

    Examples
    --------
    >>> al_improvement(0.5, 0.7, 0.6)
    0.19999999999999996
    """
    d1 = check_number(dice_first, "dice_first", owner="al_improvement")
    du = check_number(dice_uncertainty, "dice_uncertainty", owner="al_improvement")
    dr = check_number(dice_random, "dice_random", owner="al_improvement")
    if d1 == 0:
        return undefined_metric("al_improvement: first-cycle Dice is 0; returning NaN.")
    return (du - dr) / d1
