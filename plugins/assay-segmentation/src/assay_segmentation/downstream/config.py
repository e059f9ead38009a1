"""Experiment configs for downstream tasks: YAML, ``defaults`` composition, interpolation, checks.

The structure follows ValUES' evaluation configs::

    defaults:                      # other files merged in order; "_self_" marks this file's place
      - segmentation/tasks         # relative to this file, ".yaml" optional (needs "# @package _global_")
      - models@experiments_base    # "FILE@key.path" places that file's content under key.path
    base_path: data                # relative paths are relative to the config file
    output_path: results
    executor: processes[workers=2]
    experiments:
      - iter_params: {pred_model: [Softmax, Ensemble], seed: [1, 2, 3]}
        naming_scheme_version: "seed{seed}"
        prediction_models:
          Softmax: {unc_types: [predictive_uncertainty], aggregations: [image_mean]}
    tasks: [segmentation_performance, ood_detection]
    task_params:
      ood_detection:
        datasets: [id, ood]
        function: ood_detection[query_fraction=0.5]

Composition is Hydra's and interpolation OmegaConf's (:mod:`assay_segmentation.downstream.compose`):
``defaults`` lists with ``_self_`` and ``FILE@package``, ``# @package _global_`` headers
(a defaults file in a subfolder goes under that folder's key without one), ``${a.b}`` and
``${oc.env:VAR}``, and command-line overrides (``load_config(path, ["base_path=/data"])``).
Without ``_self_`` in ``defaults`` the file's own keys come last (they override the
defaults). A ValUES config (:mod:`assay_segmentation.downstream.values`) is checked against ValUES'
keys and run on ValUES' experiment tree.

Every error is a :class:`ConfigError` naming the file, the key path and what was
expected, e.g. ``experiments.yaml: experiments[0].iter_params.seed: expected a non-empty
list, got 3``. Unknown keys are errors at every depth, with the closest known key (see
:func:`validate_config`); files are read by :func:`assay.configfile.load_yaml` (bounded
in size, alias expansion and nesting) before Hydra sees them, interpolations may produce
at most :data:`~assay.configfile.MAX_NODES` values and ``defaults`` may read at most
:data:`MAX_FILES` files.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.configfile import close_match
from assay.configfile import key_path as _path_text
from assay.errors import ConfigError
from assay_segmentation.downstream.compose import (
    MAX_FILES,
    Origins,
    check_group_keys,
    compose_config,
    referenced_keys,
    resolve,
)

__all__ = ["CODE_KEYS", "MAX_FILES", "ConfigError", "load_config", "validate_config"]

#: keys of the composed config, of an experiment, and of a prediction model's settings
TOP_KEYS = ("base_path", "output_path", "executor", "experiments", "tasks", "task_params")
SETTING_KEYS = ("unc_types", "aggregations", "naming_scheme_version", "naming_scheme_pred_model", "references")
EXPERIMENT_KEYS = ("name", "iter_params", "prediction_models") + SETTING_KEYS
TASK_KEYS = ("function", "datasets")
#: keys that load_config adds itself
_INTERNAL = ("config_dir", "config_file")
#: keys a config file may not set because they let it run code: key -> the only opt-in (issue 27, item 5)
CODE_KEYS = {"allow_import": "the command-line flag 'assay run --allow-import' (in Python: "
                             "run_experiments(..., allow_import=True) or load_config(..., allow_import=True))"}


def _fail(origins: Origins, root: str, path: tuple[Any, ...], expected: str, got: Any) -> ConfigError:
    got_text = repr(got) if len(repr(got)) < 80 else repr(got)[:77] + "..."
    return ConfigError(f"{origins.file(path, root)}: {_path_text(path)}: expected {expected}, got {got_text}")


#: keys whose relative paths resolve against the config file (or, set on the command line, the working folder)
PATH_KEYS = ("base_path", "output_path", "second_cycle_path")


def _absolute_overrides(overrides: Sequence[str]) -> list[str]:
    """Overrides of path keys with a relative value made absolute against the working folder."""
    out = []
    for item in overrides:
        key, sep, value = item.partition("=")
        if sep and key.lstrip("+") in PATH_KEYS and value and value != "null" and not value.startswith(("$", "/", "~")):
            item = f"{key}={Path(value).resolve()}"
        out.append(item)
    return out


def load_config(path: str | Path, overrides: Sequence[str] = (), *, allow_import: bool = False,
                tasks: Sequence[str] | None = None) -> dict:
    """Read, compose, interpolate and check an experiment config; relative paths resolve against its folder.

    Composition is Hydra's (:func:`assay_segmentation.downstream.compose.compose_config`): ``defaults``
    lists, ``# @package`` headers, ``${...}`` interpolation (OmegaConf, ``oc.env``
    included) and ``overrides`` in Hydra's syntax (``["base_path=/data/toy"]``).

    Two kinds of config are accepted: assay's own (``prediction_models`` with
    ``aggregations`` named by registered spec, ``task_params`` entries with a ``function``
    spec) and ValUES' (an experiment with ``image_ending`` / ``unc_ending`` /
    ``n_reference_segs``, or a task ``function`` given by ``_target_``; see
    :mod:`assay_segmentation.downstream.values`). ``tasks`` replaces the config's ``tasks`` list (Hydra
    cannot override it where a ``tasks/`` config group exists, as in ValUES' configs).
    ``allow_import`` lets ``_target_`` import dotted paths (:mod:`assay_segmentation.downstream.targets`);
    it is the only opt-in: a config (or an override) that sets ``allow_import`` is a ``ConfigError``
    naming the key and the flag, since a config is data and must not be able to run code.
    Returns the composed config as plain dicts and lists,
    with ``base_path``, ``output_path`` (assay's configs: default ``results``),
    ``config_dir`` and ``config_file`` as absolute paths. Every key is checked (see
    :func:`validate_config`), and so is the grid, before anything runs.
    """
    from assay_segmentation.downstream.grid import build_grid
    from assay_segmentation.downstream.values import is_values_config, load_values_config

    path = Path(path).resolve()
    overrides = _absolute_overrides(list(overrides))
    cfg, origins = compose_config(path, overrides)
    from omegaconf import OmegaConf

    if tasks is not None:  # Hydra cannot override 'tasks' where a tasks/ config group exists (ValUES' folders)
        OmegaConf.update(cfg, "tasks", list(tasks), force_add=True)
        origins.record(None, ("tasks",), "the command line (--tasks)")

    raw = OmegaConf.to_container(cfg, resolve=False)
    assert isinstance(raw, dict)
    for key, opt_in in CODE_KEYS.items():  # before anything is resolved or instantiated
        if key in raw:
            raise ConfigError(f"{origins.file((key,), str(path))}: {key}: a config file cannot set {key!r} (it would "
                              f"let the file run code); the only opt-in is {opt_in}")
    definitions = referenced_keys(raw)
    if is_values_config(raw):
        return load_values_config(cfg, raw, path, origins, definitions, allow_import=allow_import)
    config = resolve(cfg, None, file=str(path), origins=origins)
    check_group_keys(config, list(TOP_KEYS) + sorted(definitions), origins)
    validate_config(config, origins=origins, root=str(path), definitions=definitions)
    for key, default in (("base_path", None), ("output_path", "results")):
        value = config.get(key, default)
        if value is not None:
            p = Path(value).expanduser()
            config[key] = str(p if p.is_absolute() else (path.parent / p).resolve())
    config["config_dir"] = str(path.parent)
    config["config_file"] = str(path)
    build_grid(config, origin=lambda key: origins.file(key, str(path)))
    return config


def _expect_str_list(
    cfg: Any, origins: Origins, root: str, path: tuple[Any, ...], *, allow_empty: bool = False
) -> list[str | int]:
    """``cfg`` when it is a list of names (strings or integers), non-empty unless ``allow_empty``."""
    if not isinstance(cfg, list) or (not cfg and not allow_empty) or not all(isinstance(v, (str, int)) for v in cfg):
        raise _fail(origins, root, path, "a non-empty list of names", cfg)
    return cfg


def _unknown(mapping: dict, allowed: tuple[str, ...] | list[str], origins: Origins, root: str,
             at: tuple[Any, ...], what: str = "key") -> None:
    for key in mapping:
        if key not in allowed:
            raise ConfigError(f"{origins.file(at + (key,), root)}: {_path_text(at + (key,))}: unknown {what} "
                              f"{key!r}.{close_match(key, allowed)} Allowed here: {', '.join(map(str, allowed))}.")


def _check_task_function(fn: Any, origins: Origins, root: str, at: tuple[Any, ...]) -> None:
    """The task is registered and every option is a parameter of its factory (its signature)."""
    from assay.plugins import get_registry
    from assay.plugins.names import parse_name

    if isinstance(fn, dict):
        name, options, where = fn["name"], {k: v for k, v in fn.items() if k != "name"}, at + ("function",)
    else:
        try:
            name, options = parse_name(fn)
        except (ValueError, TypeError) as exc:
            raise _fail(origins, root, at + ("function",), f"a task spec such as 'ood_detection[tpr=0.95]' ({exc})",
                        fn) from None
        where = at + ("function",)
    registry = get_registry("task")
    if name not in registry:
        known = registry.names()
        hint = close_match(name, known) if known else " No task is registered: is assay-segmentation installed?"
        raise ConfigError(f"{origins.file(where, root)}: {_path_text(where)}: expected a registered task, got "
                          f"{name!r}.{hint} Registered: {', '.join(known) or 'none'}.")
    accepted = registry.get(name).accepted_keys()
    if accepted is not None:
        _unknown(options, accepted, origins, root, where, what=f"parameter of task {name!r}")


def validate_config(config: dict, *, origins: Any = None, root: str = "<config>",
                    definitions: set[str] | None = None) -> None:
    """Check the structure and every key of a composed config; raise :class:`ConfigError` at the first problem.

    Unknown keys are errors at every depth (the message gives the key path and the
    closest known key): the top level takes :data:`TOP_KEYS` plus the keys that
    ``${...}`` interpolations refer to (``definitions``); an experiment
    :data:`EXPERIMENT_KEYS`; a prediction model's settings :data:`SETTING_KEYS`;
    ``task_params`` one entry per task listed in ``tasks``, each with
    :data:`TASK_KEYS`; a task's options must be parameters of the registered task.
    """
    origins = origins if origins is not None else Origins()
    _unknown(config, list(TOP_KEYS) + sorted(definitions or ()) + list(_INTERNAL), origins, root, ())
    if not isinstance(config.get("base_path"), str):
        raise _fail(origins, root, ("base_path",), "a path string (where the experiment data lives)",
                    config.get("base_path"))
    experiments = config.get("experiments")
    if not isinstance(experiments, list) or not experiments:
        raise _fail(origins, root, ("experiments",), "a non-empty list of experiments", experiments)
    for i, exp in enumerate(experiments):
        at = ("experiments", i)
        if not isinstance(exp, dict):
            raise _fail(origins, root, at, "a mapping with iter_params and prediction_models", exp)
        _unknown(exp, EXPERIMENT_KEYS, origins, root, at)
        iters = exp.get("iter_params")
        if not isinstance(iters, dict) or "pred_model" not in iters:
            raise _fail(origins, root, at + ("iter_params",), "a mapping with at least 'pred_model'", iters)
        for key, values in iters.items():
            if not isinstance(values, list) or not values:
                raise _fail(origins, root, at + ("iter_params", key), "a non-empty list", values)
            for j, value in enumerate(values):
                if not isinstance(value, (str, int, float)):  # bool is an int
                    raise _fail(origins, root, at + ("iter_params", key, j), "a string or a number (it names folders)",
                                value)
        models = exp.get("prediction_models")
        if not isinstance(models, dict):
            raise _fail(origins, root, at + ("prediction_models",), "a mapping of prediction model -> settings",
                        models)
        for pm in models:  # settings of models not iterated over are allowed (shared model files)
            if isinstance(models[pm], dict):
                _unknown(models[pm], SETTING_KEYS, origins, root, at + ("prediction_models", pm))
        for pm in iters["pred_model"]:
            if pm not in models:
                raise _fail(origins, root, at + ("prediction_models",),
                            f"settings for pred_model {pm!r} (listed in iter_params)", sorted(models))
            settings = models[pm]
            if not isinstance(settings, dict):
                raise _fail(origins, root, at + ("prediction_models", pm), "a mapping with unc_types", settings)
            unc_types = settings.get("unc_types", exp.get("unc_types"))
            _expect_str_list(unc_types, origins, root, at + ("prediction_models", pm, "unc_types"))
            aggs = settings.get("aggregations", exp.get("aggregations", []))
            if isinstance(aggs, dict):
                for name, spec in aggs.items():
                    if not isinstance(spec, str):
                        raise _fail(origins, root, at + ("prediction_models", pm, "aggregations", name),
                                    "a registered aggregation such as 'patch_max[patch_size=10]'", spec)
            else:
                _expect_str_list(aggs, origins, root, at + ("prediction_models", pm, "aggregations"),
                                 allow_empty=True)
    tasks = _expect_str_list(config.get("tasks"), origins, root, ("tasks",))
    params = config.get("task_params", {})
    if not isinstance(params, dict):
        raise _fail(origins, root, ("task_params",), "a mapping of task -> parameters", params)
    _unknown(params, [str(t) for t in tasks], origins, root, ("task_params",), what="task (not listed in tasks)")
    for task in tasks:
        entry = params.get(task, {"function": task})
        if not isinstance(entry, dict):
            raise _fail(origins, root, ("task_params", task), "a mapping with 'function' and 'datasets'", entry)
        _unknown(entry, TASK_KEYS, origins, root, ("task_params", task))
        fn = entry.get("function", task)
        if isinstance(fn, dict):
            if not isinstance(fn.get("name"), str):
                raise _fail(origins, root, ("task_params", task, "function", "name"), "a registered task name",
                            fn.get("name"))
        elif not isinstance(fn, str):
            raise _fail(origins, root, ("task_params", task, "function"),
                        "a registered task such as 'ood_detection' or a mapping with 'name'", fn)
        if "datasets" in entry:
            _expect_str_list(entry["datasets"], origins, root, ("task_params", task, "datasets"))
        _check_task_function(fn, origins, root, ("task_params", task))
    executor = config.get("executor", "serial")
    if not isinstance(executor, str):
        raise _fail(origins, root, ("executor",), "a registered executor such as 'processes[workers=4]'", executor)
