"""ValUES' evaluation configs and experiment trees, as ValUES lays them out.

A ValUES config (``evaluation/configs/eval_config_*.yaml``) is recognised by an experiment
with ``image_ending`` / ``unc_ending`` / ``n_reference_segs``, a ``second_cycle_path``, or a
``_target_`` anywhere. Its versions are ValUES' (``EvalExperiments._init_versions``): every
combination of ``iter_params``; the other keys of the experiment, then the prediction
model's settings, are the version's parameters. Data and results live in ValUES' tree::

    <base_path>/<naming_scheme_pred_model>/test_results/<naming_scheme_version>/<split>/
        pred_seg/ID_01.nii.gz ... ID_mean.nii.gz   predictions (image_ending); ID_01 for "Softmax"
        gt_seg/ID_00.nii.gz ...                    n_reference_segs reference segmentations
        pred_prob/ID_01_01.nii.gz ...              class probabilities (n_classes; Softmax only)
        pred_entropy/ID.nii.gz                     predictive_uncertainty (unc_ending)
        aleatoric_uncertainty/ID.nii.gz ...        one folder per other uncertainty type
        metrics.json                               per-image Dice written by ValUES' test scripts

Keys of a ValUES config that assay implements (anything else is an error naming the key
path): top level ``base_path``, ``second_cycle_path``, ``experiments``, ``tasks``,
``task_params``, plus assay's ``output_path`` and ``executor``, plus the
keys that ``${...}`` interpolations refer to (``TOY``, ``QUANTILE``, ...); an experiment's
``iter_params``, ``prediction_models``, :data:`SETTINGS` and any scalar that a naming
scheme uses as a field (``fold``, ``epochs``, ``case``, ...); a prediction model's
:data:`SETTINGS`; a ``task_params`` entry :data:`ENTRY_KEYS` (or a list of such entries).
GTA's ``datamodule_config``, ``pred_seg_loading`` and ``gt_unc_map_loading`` are refused
(they instantiate ValUES' PyTorch data modules).
"""

from __future__ import annotations

import itertools
import string
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from assay.configfile import close_match
from assay.configfile import key_path as _path_text
from assay.errors import ConfigError, InvalidParameterError
from assay_segmentation.downstream.compose import Origins, resolve
from assay_segmentation.downstream.data import ImageData, check_image, read_array

__all__ = ["ENTRY_KEYS", "SETTINGS", "TOP_KEYS", "ValuesVersion", "build_values_grid", "is_values_config",
           "list_values_images", "load_values_config", "load_values_image", "task_entries"]

TOP_KEYS = ("base_path", "second_cycle_path", "output_path", "executor", "experiments", "tasks", "task_params")
#: settings of an experiment or a prediction model
SETTINGS = ("naming_scheme_version", "naming_scheme_pred_model", "unc_types", "aggregations", "image_ending",
            "unc_ending", "n_reference_segs", "n_classes")
#: keys of one task_params entry
ENTRY_KEYS = ("datasets", "function", "accumulated", "postprocess_function")
#: ValUES keys refused with a reason
UNSUPPORTED = {
    "datamodule_config": "it instantiates ValUES' PyTorch data module (GTA); store gt_seg/ files instead",
    "pred_seg_loading": "it calls ValUES' GTA loader; store pred_seg/ files as NIfTI or .npy instead",
    "gt_unc_map_loading": "it calls ValUES' GTA loader; store gt_seg/ files instead",
}
#: the registry kinds whose aliases a task_params function may name
STEP_KINDS = ("task", "aggregation")
_INTERNAL = ("config_dir", "config_file", "layout")
_VALUES_MARKS = ("image_ending", "unc_ending", "n_reference_segs", "_target_")


def is_values_config(raw: Any) -> bool:
    """Whether a composed (unresolved) config is a ValUES one (see the module docstring)."""
    if isinstance(raw, dict):
        if "second_cycle_path" in raw or any(k in raw for k in _VALUES_MARKS):
            return True
        return any(is_values_config(v) for v in raw.values())
    if isinstance(raw, list):
        return any(is_values_config(v) for v in raw)
    return False


@attrs.frozen
class ValuesVersion:
    """One ValUES experiment version: where its data is and how its files are named."""

    pred_model: str
    params: dict[str, Any]
    version_name: str
    exp_path: Path
    unc_types: tuple[str, ...]
    aggregations: tuple[str, ...]
    image_ending: str
    unc_ending: str
    n_reference_segs: int
    n_classes: int = 2
    second_cycle_path: Path | None = None
    base_path: Path = Path(".")

    @property
    def key(self) -> str:
        return f"{self.pred_model}/{self.version_name}"

    def dataset_path(self, split: str | None) -> Path:
        return self.exp_path / split if split else self.exp_path

    def to_dict(self) -> dict[str, Any]:
        return {"pred_model": self.pred_model, "params": self.params, "version_name": self.version_name,
                "exp_path": str(self.exp_path), "unc_types": list(self.unc_types),
                "aggregations": list(self.aggregations)}


def _fields(scheme: str) -> list[str]:
    try:
        return [name for _, name, _, _ in string.Formatter().parse(scheme) if name]
    except ValueError:
        return []


def _format(scheme: Any, fields: dict[str, Any], file: str, at: tuple[Any, ...]) -> str:
    from assay_segmentation.downstream.grid import format_scheme

    return format_scheme(scheme, fields, file=file, at=at)


def build_values_grid(config: dict, *, origins: Origins | None = None) -> list[ValuesVersion]:
    """ValUES' versions: every combination of ``iter_params`` (last key fastest), experiment order kept."""
    origins = origins or Origins()
    root = str(config.get("config_file", "<config>"))
    base = Path(config["base_path"])
    second = config.get("second_cycle_path")
    versions: list[ValuesVersion] = []
    seen: dict[Path, str] = {}
    for i, exp in enumerate(config["experiments"]):
        iters = exp["iter_params"]
        keys = list(iters)
        for combo in itertools.product(*(iters[k] for k in keys)):
            params: dict[str, Any] = dict(zip(keys, combo))
            pm = params["pred_model"]
            settings = {k: v for k, v in exp.items() if k not in ("iter_params", "prediction_models")}
            model = exp["prediction_models"][pm]
            settings.update(model)
            params.update({k: v for k, v in settings.items() if k not in SETTINGS})

            def at(key: str, pm: Any = pm, model: dict = model, i: int = i) -> tuple[Any, ...]:
                return ("experiments", i, "prediction_models", pm, key) if key in model else ("experiments", i, key)

            fields = {k: v for k, v in params.items() if k != "pred_model"}
            for key in ("naming_scheme_version", "image_ending", "unc_ending", "n_reference_segs", "unc_types",
                        "aggregations"):
                if key not in settings:
                    raise ConfigError(f"{origins.file(('experiments', i), root)}: "
                                      f"{_path_text(('experiments', i, 'prediction_models', pm))}: expected the "
                                      f"setting {key!r} (in the experiment or the prediction model), got none")
            version_name = _format(settings["naming_scheme_version"], {**fields, "pred_model": pm},
                                   origins.file(at("naming_scheme_version"), root), at("naming_scheme_version"))
            model_dir = _format(settings.get("naming_scheme_pred_model", "{pred_model}"), {**fields, "pred_model": pm},
                                origins.file(at("naming_scheme_pred_model"), root), at("naming_scheme_pred_model"))
            exp_path = base / model_dir / "test_results" / version_name
            if exp_path in seen:
                raise ConfigError(f"{origins.file(at('naming_scheme_version'), root)}: "
                                  f"{_path_text(at('naming_scheme_version'))}: versions {seen[exp_path]} and "
                                  f"{params} share the folder {exp_path}; expected one folder per version")
            seen[exp_path] = str(params)
            versions.append(ValuesVersion(
                pred_model=str(pm), params=params, version_name=version_name, exp_path=exp_path,
                unc_types=tuple(map(str, settings["unc_types"])),
                aggregations=tuple(map(str, settings["aggregations"])),
                image_ending=str(settings["image_ending"]), unc_ending=str(settings["unc_ending"]),
                n_reference_segs=int(settings["n_reference_segs"]), n_classes=int(settings.get("n_classes", 2)),
                second_cycle_path=Path(second) if second else None, base_path=base))
    return versions


# --------------------------------------------------------------------------- config checks
def _unknown(mapping: dict, allowed: list[str], file: str, at: tuple[Any, ...], what: str = "key") -> None:
    for key in mapping:
        if key in UNSUPPORTED:
            raise ConfigError(f"{file}: {_path_text(at + (key,))}: not supported by assay: {UNSUPPORTED[key]}.")
        if key not in allowed:
            raise ConfigError(f"{file}: {_path_text(at + (key,))}: unknown {what} {key!r}.{close_match(key, allowed)}"
                              f" Allowed here: {', '.join(map(str, allowed))}.")


def _need(cond: bool, file: str, at: tuple[Any, ...], expected: str, got: Any) -> None:
    if not cond:
        text = repr(got) if len(repr(got)) < 80 else repr(got)[:77] + "..."
        raise ConfigError(f"{file}: {_path_text(at)}: expected {expected}, got {text}")


def _check_experiment(exp: Any, i: int, origins: Origins, root: str) -> None:
    at: tuple[Any, ...] = ("experiments", i)
    file = origins.file(at, root)
    _need(isinstance(exp, dict), file, at, "a mapping with iter_params and prediction_models", exp)
    iters = exp.get("iter_params")
    _need(isinstance(iters, dict) and "pred_model" in iters, origins.file(at + ("iter_params",), root),
          at + ("iter_params",), "a mapping with at least 'pred_model'", iters)
    for key, values in iters.items():
        _need(isinstance(values, list) and bool(values) and all(isinstance(v, (str, int, float)) for v in values),
              origins.file(at + ("iter_params", key), root), at + ("iter_params", key),
              "a non-empty list of strings or numbers", values)
    models = exp.get("prediction_models")
    _need(isinstance(models, dict), origins.file(at + ("prediction_models",), root), at + ("prediction_models",),
          "a mapping of prediction model -> settings", models)
    schemes = [exp.get("naming_scheme_version", ""), exp.get("naming_scheme_pred_model", "")]
    schemes += [m.get(k, "") for m in models.values() if isinstance(m, dict)
                for k in ("naming_scheme_version", "naming_scheme_pred_model")]
    used = {f for s in schemes if isinstance(s, str) for f in _fields(s)}
    allowed = ["iter_params", "prediction_models", *SETTINGS, *sorted(k for k in exp if k in used)]
    _unknown(exp, allowed, origins.file(at, root), at)
    for pm, model in models.items():
        where = at + ("prediction_models", pm)
        _need(isinstance(model, dict), origins.file(where, root), where, "a mapping of settings", model)
        _unknown(model, list(SETTINGS), origins.file(where, root), where)
    for pm in iters["pred_model"]:
        _need(pm in models, origins.file(at + ("prediction_models",), root), at + ("prediction_models",),
              f"settings for pred_model {pm!r} (listed in iter_params)", sorted(models))
        settings = {**{k: v for k, v in exp.items() if k in SETTINGS}, **models[pm]}
        for key in ("unc_types", "aggregations"):
            value = settings.get(key)
            where = at + (("prediction_models", pm, key) if key in models[pm] else (key,))
            _need(isinstance(value, list) and all(isinstance(v, str) for v in value), origins.file(where, root),
                  where, "a list of names", value)
        for key in ("image_ending", "unc_ending"):
            value = settings.get(key)
            where = at + (("prediction_models", pm, key) if key in models[pm] else (key,))
            _need(isinstance(value, str) and value.startswith("."), origins.file(where, root), where,
                  "a file ending such as '.nii.gz'", value)
        for key in ("n_reference_segs", "n_classes"):
            value = settings.get(key, 2)
            where = at + (("prediction_models", pm, key) if key in models[pm] else (key,))
            _need(isinstance(value, int) and not isinstance(value, bool) and value >= 1, origins.file(where, root),
                  where, "a positive integer", value)


def task_entries(entry: Any) -> list[dict]:
    """The steps of one task_params entry: a list of entries (ValUES' subtasks) or one entry."""
    return list(entry) if isinstance(entry, list) else [entry]


def load_values_config(cfg: Any, raw: dict, path: Path, origins: Origins, definitions: set[str], *,
                       allow_import: bool = False) -> dict:
    """Check and resolve a ValUES config (see the module docstring); the steps are instantiated to check them."""
    from assay_segmentation.downstream.compose import check_group_keys
    from assay_segmentation.downstream.targets import instantiate

    root = str(path)
    check_group_keys(raw, list(TOP_KEYS) + sorted(definitions), origins)
    _unknown(raw, list(TOP_KEYS) + sorted(definitions - set(TOP_KEYS)), origins.file((), root), ())
    config: dict[str, Any] = {}
    for key in ("base_path", "second_cycle_path", "output_path", "executor", "experiments", "tasks"):
        if key in raw:
            config[key] = resolve(cfg, key, file=root, origins=origins)
    _need(isinstance(config.get("base_path"), str), origins.file(("base_path",), root), ("base_path",),
          "a path string (the first cycle's experiment tree)", config.get("base_path"))
    for key in ("base_path", "second_cycle_path", "output_path"):
        if isinstance(config.get(key), str):
            p = Path(config[key]).expanduser()
            config[key] = str(p if p.is_absolute() else (path.parent / p).resolve())
        elif config.get(key) is not None:
            _need(False, origins.file((key,), root), (key,), "a path string", config[key])
    experiments: Any = config.get("experiments")
    _need(isinstance(experiments, list) and bool(experiments), origins.file(("experiments",), root), ("experiments",),
          "a non-empty list of experiments", experiments)
    for i, exp in enumerate(experiments):
        _check_experiment(exp, i, origins, root)
    tasks: Any = config.get("tasks")
    _need(isinstance(tasks, list) and bool(tasks) and all(isinstance(t, str) for t in tasks),
          origins.file(("tasks",), root), ("tasks",), "a non-empty list of task names (keys of task_params)", tasks)
    params_raw = raw.get("task_params", {})
    _need(isinstance(params_raw, dict), origins.file(("task_params",), root), ("task_params",),
          "a mapping of task -> parameters", params_raw)
    for j, task in enumerate(tasks):
        if task not in params_raw:
            raise ConfigError(f"{origins.file(('tasks', j), root)}: tasks[{j}]: expected a key of task_params, got "
                              f"{task!r}.{close_match(task, list(params_raw))} task_params has: "
                              f"{', '.join(params_raw) or 'none'}.")
    config["allow_import"] = bool(allow_import)  # the caller's opt-in (--allow-import), never the file's
    task_params: dict[str, Any] = {}
    unresolved: dict[str, str] = {}
    for name in params_raw:
        try:
            entry = resolve(cfg.task_params, name, file=root, origins=origins, at=("task_params",))
        except ConfigError as exc:
            if name in tasks:
                raise
            # ValUES resolves lazily: an entry no task uses may name an unset variable; its keys are checked as written
            unresolved[name] = str(exc)
            entry = raw["task_params"][name]
        steps = task_entries(entry)
        for k, step in enumerate(steps):
            at = ("task_params", name) + ((k,) if isinstance(entry, list) else ())
            file = origins.file(at, root)
            _need(isinstance(step, dict), file, at, "a mapping with 'function' (and 'datasets')", step)
            _unknown(step, list(ENTRY_KEYS), file, at)
            if "datasets" in step:
                ds = step["datasets"]
                _need(isinstance(ds, list) and bool(ds) and all(isinstance(d, str) for d in ds),
                      origins.file(at + ("datasets",), root), at + ("datasets",), "a non-empty list of split names", ds)
            _need(isinstance(step.get("accumulated", False), bool), origins.file(at + ("accumulated",), root),
                  at + ("accumulated",), "true or false", step.get("accumulated"))
            for key in ("function", "postprocess_function"):
                if key in step or key == "function":
                    obj = instantiate(step.get(key), kinds=STEP_KINDS, file=origins.file(at + (key,), root),
                                      at=at + (key,), allow_import=allow_import)
                    method = "postprocess" if key == "postprocess_function" else (
                        "accumulate" if step.get("accumulated") else "version_files")
                    if not callable(getattr(obj, method, None)):
                        raise ConfigError(f"{origins.file(at + (key,), root)}: {_path_text(at + (key,))}: the target "
                                          f"{step[key].get('_target_')!r} cannot be used here: it has no {method}() "
                                          f"({'an accumulated step' if method == 'accumulate' else 'a ValUES step'} "
                                          "needs one; see docs/downstream.md)")
            if step.get("accumulated") and "postprocess_function" not in step:
                raise ConfigError(f"{origins.file(at, root)}: {_path_text(at)}: expected a postprocess_function with "
                                  "accumulated: true (it receives the accumulated results), got none")
        if name not in unresolved:
            task_params[name] = entry
    config["task_params"] = task_params
    config["unresolved_task_params"] = unresolved
    config["config_dir"] = str(path.parent)
    config["config_file"] = str(path)
    config["layout"] = "values"
    build_values_grid(config, origins=origins)
    return config


# --------------------------------------------------------------------------- the experiment tree
def _image_id(name: str, ending: str) -> str | None:
    if not name.endswith(ending):
        return None
    stem = name[: -len(ending)]
    return "_".join(stem.split("_")[:-1]) if "_" in stem else None


def list_values_images(version: ValuesVersion, split: str | None) -> list[str]:
    """ValUES' image ids of a split: the names in ``pred_seg/`` without their last ``_part`` and ending, sorted."""
    folder = version.dataset_path(split) / "pred_seg"
    if not folder.is_dir():
        raise FileNotFoundError(f"No pred_seg folder {folder} for {version.key} split {split!r} (expected "
                                f"pred_seg/ID_mean{version.image_ending} or ID_01{version.image_ending} files).")
    return sorted({i for p in folder.iterdir() if (i := _image_id(p.name, version.image_ending))})


def _read(path: Path, what: str) -> np.ndarray:
    if not path.is_file():
        raise FileNotFoundError(f"No {what} file {path}.")
    return read_array(path)


def unc_map(version: ValuesVersion, split: str | None, image_id: str, unc: str) -> np.ndarray:
    """One uncertainty map; ``predictive_uncertainty`` is ``pred_entropy/``, or for "Softmax" without that
    folder ``1 - max`` over the class probabilities in ``pred_prob/ID_01_CC`` (ValUES)."""
    data = version.dataset_path(split)
    if unc == "predictive_uncertainty":
        if version.pred_model == "Softmax" and not (data / "pred_entropy").is_dir():
            probs = [_read(data / "pred_prob" / f"{image_id}_01_{c + 1:02d}{version.unc_ending}", "class probability")
                     for c in range(version.n_classes)]
            return 1 - np.max(np.array(probs), axis=0)
        return _read(data / "pred_entropy" / f"{image_id}{version.unc_ending}", "uncertainty map")
    return _read(data / unc / f"{image_id}{version.unc_ending}", "uncertainty map")


def load_values_image(version: ValuesVersion, split: str | None, image_id: str, kinds: tuple[str, ...]) -> ImageData:
    """The arrays of one image in ValUES' layout.

    ``pred_seg``: ``pred_seg/ID_mean`` (``ID_01`` for "Softmax"); ``pred_samples``: every
    file of the image in ``pred_seg/`` (the mean included, sorted by name: ValUES'
    ``get_pred_segs``); ``ref_segs``: ``gt_seg/ID_00 .. ID_{n-1}`` stacked; uncertainty types
    by :func:`unc_map`.
    """
    data = version.dataset_path(split)
    end = version.image_ending
    arrays: dict[str, Any] = {}
    files: dict[str, str] = {}
    kinds = tuple(dict.fromkeys(kinds))
    if any(k in version.unc_types for k in kinds) and "pred_seg" not in kinds:
        kinds = ("pred_seg",) + kinds  # an uncertainty map is checked against its prediction's shape
    for kind in kinds:
        if kind == "pred_seg":
            suffix = "01" if version.pred_model == "Softmax" else "mean"
            path = data / "pred_seg" / f"{image_id}_{suffix}{end}"
            arrays[kind], files[kind] = _read(path, "prediction"), str(path)
        elif kind == "pred_samples":
            names = sorted(p.name for p in (data / "pred_seg").iterdir() if _image_id(p.name, end) == image_id)
            arrays[kind] = _stack([read_array(data / "pred_seg" / n) for n in names], data / "pred_seg", names)
            files[kind] = f"{data / 'pred_seg'}/{image_id}_*{end}"
        elif kind == "ref_segs":
            names = [f"{image_id}_{i:02d}{end}" for i in range(version.n_reference_segs)]
            arrays[kind] = _stack([_read(data / "gt_seg" / n, "reference segmentation") for n in names],
                                  data / "gt_seg", names)
            files[kind] = f"{data / 'gt_seg'}/{image_id}_00..{version.n_reference_segs - 1:02d}{end}"
        elif kind in version.unc_types:
            arrays.setdefault("uncertainty", {})[kind] = unc_map(version, split, image_id, kind)
            folder = "pred_entropy" if kind == "predictive_uncertainty" else kind
            files[kind] = str(data / folder / f"{image_id}{version.unc_ending}")
            if kind == "predictive_uncertainty" and not (data / folder).is_dir():
                files[kind] = f"{data / 'pred_prob'}/{image_id}_01_*{version.unc_ending}"
        else:
            raise InvalidParameterError(f"Unknown array kind {kind!r} for the ValUES layout.")
    image = ImageData(image_id=image_id, split=split or "", **arrays)
    check_image(image, files, labels=range(version.n_classes))
    return image


def _stack(arrays: list[np.ndarray], folder: Path, names: list[str]) -> np.ndarray:
    """``np.stack`` of one image's files; files of different shapes are an error naming two of them."""
    for name, arr in zip(names[1:], arrays[1:]):
        if arr.shape != arrays[0].shape:
            raise InvalidParameterError(f"{folder / name}: shape {arr.shape} does not match {folder / names[0]}: "
                                        f"shape {arrays[0].shape}; the files of one image must have one shape.")
    return np.stack(arrays)
