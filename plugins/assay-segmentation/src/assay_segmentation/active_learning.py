"""Second-cycle split files for the active-learning task (ValUES).

A first-cycle split file is JSON with ``train``, ``val``, ``id_unlabeled_pool`` and
``ood_unlabeled_pool`` lists of image ids. From the aggregated uncertainties of the
unlabeled pool, the most uncertain ``fraction`` (default 50 %; ``int(n * fraction)``
images) moves to ``train``; the baselines query ``random`` (uniformly), ``best`` (every
OoD image first, the rest at random from the ID pool) and ``worst`` (ID images only), as
ValUES' split scripts do. A second training cycle reads the written files; the
``al_improvement`` task then compares the cycles.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.jsonio import read_json, write_json_atomic

__all__ = ["BASELINES", "baseline_query", "query_most_uncertain", "read_splits", "second_cycle_splits",
           "write_splits"]

BASELINES = ("random", "best", "worst")
_POOLS = ("id_unlabeled_pool", "ood_unlabeled_pool")


def read_splits(path: str | Path) -> dict[str, list[str]]:
    """Read a split file (JSON); an error names the file and any missing pool."""
    splits = read_json(path, what="split file")
    if not isinstance(splits, dict):
        raise InvalidParameterError(f"Split file {path} must hold a JSON object; got a JSON {type(splits).__name__}.")
    missing = [k for k in ("train", *_POOLS) if k not in splits]
    if missing:
        raise InvalidParameterError(f"Split file {path} lacks {missing}; expected keys train, {', '.join(_POOLS)}.")
    return {k: [str(x) for x in v] for k, v in splits.items()}


def _n_query(pool_size: int, fraction: float) -> int:
    if not 0.0 <= fraction <= 1.0:
        raise InvalidParameterError(f"The 'fraction' parameter must be in [0, 1]. Got {fraction!r} instead.")
    return int(pool_size * fraction)


def query_most_uncertain(
    uncertainties: Mapping[str, float], pool: Sequence[str], *, fraction: float = 0.5
) -> list[str]:
    """The ``int(len(pool) * fraction)`` pool images with the highest aggregated uncertainty.

    Ties keep the pool order (a stable sort), so the result never depends on dict order.
    """
    missing = [p for p in pool if p not in uncertainties]
    if missing:
        raise InvalidParameterError(f"No aggregated uncertainty for pool images {missing[:5]} "
                                    f"({len(missing)} missing).")
    values = np.array([float(uncertainties[p]) for p in pool])
    order = np.argsort(-values, kind="stable")
    return [pool[i] for i in order[: _n_query(len(pool), fraction)]]


def baseline_query(splits: Mapping[str, Sequence[str]], kind: str, *, fraction: float = 0.5,
                   seed: int = 0) -> list[str]:
    """The images a baseline queries: ``random``, ``best`` (OoD first) or ``worst`` (ID only)."""
    id_pool, ood_pool = list(splits["id_unlabeled_pool"]), list(splits["ood_unlabeled_pool"])
    n = _n_query(len(id_pool) + len(ood_pool), fraction)
    rng = np.random.default_rng(seed)
    if kind == "random":
        pool = id_pool + ood_pool
        return [pool[i] for i in sorted(rng.choice(len(pool), size=n, replace=False))]
    if kind == "best":
        chosen = ood_pool[:n]
        rest = n - len(chosen)
        return chosen + [id_pool[i] for i in sorted(rng.choice(len(id_pool), size=min(rest, len(id_pool)),
                                                                replace=False))]
    if kind == "worst":
        return [id_pool[i] for i in sorted(rng.choice(len(id_pool), size=min(n, len(id_pool)), replace=False))]
    raise InvalidParameterError(f"The baseline must be one of {set(BASELINES)}. Got {kind!r} instead.")


def second_cycle_splits(splits: Mapping[str, Sequence[str]], queried: Sequence[str]) -> dict[str, list[str]]:
    """The split after moving ``queried`` from the unlabeled pools to ``train`` (plus a ``queried`` list)."""
    q = set(queried)
    pools = set(splits["id_unlabeled_pool"]) | set(splits["ood_unlabeled_pool"])
    unknown = sorted(q - pools)
    if unknown:
        raise InvalidParameterError(f"Queried images {unknown[:5]} are not in the unlabeled pools.")
    new = {k: list(v) for k, v in splits.items()}
    for key in _POOLS:
        new[key] = [x for x in splits[key] if x not in q]
    new["train"] = list(splits["train"]) + list(queried)
    new["queried"] = list(queried)
    return new


def write_splits(path: str | Path, splits: Mapping[str, Any]) -> Path:
    """Write a split file atomically (JSON; an atomic rename, without fsync)."""
    return write_json_atomic(path, dict(splits), fsync=False)
