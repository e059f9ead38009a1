"""The experiment grid: one :class:`ExperimentVersion` per combination of ``iter_params``."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import attrs

__all__ = ["ExperimentVersion", "build_grid"]


@attrs.frozen
class ExperimentVersion:
    """One experiment version: a prediction model with one value of every iterated parameter.

    ``data_dir`` holds the version's splits (``data_dir / split``); results go to
    ``output_dir / split``. ``aggregations`` maps the name used in results to the
    registered aggregation spec (``"patch_max[patch_size=10]"``).
    """

    experiment: str
    pred_model: str
    params: dict[str, Any]
    version_name: str
    unc_types: tuple[str, ...]
    aggregations: dict[str, str]
    data_dir: Path
    output_dir: Path
    references: str | None = None
    settings: dict[str, Any] = attrs.field(factory=dict)

    @property
    def key(self) -> str:
        """A stable identifier: ``pred_model/version_name``."""
        return f"{self.pred_model}/{self.version_name}"

    def group_params(self, over: str = "seed") -> dict[str, Any]:
        """The parameters without ``over``: versions with equal group params differ only in ``over``."""
        return {k: v for k, v in self.params.items() if k != over}

    def reference_dir(self, split: str, base_path: str) -> Path | None:
        if self.references is None:
            return None
        return Path(self.references.format(split=split, base_path=base_path, **self.params))

    def to_dict(self) -> dict[str, Any]:
        return {
            "experiment": self.experiment, "pred_model": self.pred_model, "params": self.params,
            "version_name": self.version_name, "unc_types": list(self.unc_types),
            "aggregations": dict(self.aggregations), "data_dir": str(self.data_dir),
            "output_dir": str(self.output_dir),
        }


def _default_naming(params: dict[str, Any]) -> str:
    parts = [f"{k}{v}" for k, v in params.items() if k != "pred_model"]
    return "_".join(parts) or "default"


def build_grid(config: dict) -> list[ExperimentVersion]:
    """Expand every experiment's ``iter_params`` into versions, in config order (last key varies fastest).

    Per-model settings (``prediction_models[pred_model]``) override experiment-wide ones.
    Data lives in ``base_path / naming_scheme_pred_model / naming_scheme_version`` (default
    ``{pred_model}`` and ``seed{seed}``-style ``key{value}`` parts joined by ``_``); results
    in ``output_path`` under the same relative path.
    """
    base = Path(config["base_path"])
    out = Path(config.get("output_path", "results"))
    versions: list[ExperimentVersion] = []
    for i, exp in enumerate(config["experiments"]):
        name = str(exp.get("name", f"experiment{i}"))
        iters = exp["iter_params"]
        keys = list(iters)
        for combo in itertools.product(*(iters[k] for k in keys)):
            params = dict(zip(keys, combo))
            pm = str(params["pred_model"])
            settings = {k: v for k, v in exp.items() if k not in ("iter_params", "prediction_models", "name")}
            settings.update(exp["prediction_models"][params["pred_model"]])
            scheme = settings.get("naming_scheme_version")
            version_name = scheme.format(**params, **{k: v for k, v in settings.items() if isinstance(v, (str, int))}) \
                if scheme else _default_naming(params)
            model_dir = str(settings.get("naming_scheme_pred_model", "{pred_model}")).format(**params)
            aggs = settings.get("aggregations", [])
            aggregations = dict(aggs) if isinstance(aggs, dict) else {str(a): str(a) for a in aggs}
            versions.append(ExperimentVersion(
                experiment=name, pred_model=pm, params=params, version_name=version_name,
                unc_types=tuple(str(u) for u in settings["unc_types"]), aggregations=aggregations,
                data_dir=base / model_dir / version_name, output_dir=out / model_dir / version_name,
                references=settings.get("references"), settings=settings,
            ))
    return versions
