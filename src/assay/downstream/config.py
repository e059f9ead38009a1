"""Experiment configs for downstream tasks: YAML, ``defaults`` composition, interpolation, checks.

The structure follows ValUES' evaluation configs::

    defaults:                      # other files merged in order; "_self_" marks this file's place
      - segmentation/tasks         # relative to this file, ".yaml" optional
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

Without ``_self_`` in ``defaults`` the file's own keys come last (they override the
defaults), as in Hydra. Mappings merge key by key; any other value replaces. A string
that is exactly ``${a.b}`` becomes the value at key path ``a.b`` of the composed config;
``${a.b}`` inside a longer string is replaced by its text.

Every error is a :class:`ConfigError` naming the file, the key path and what was
expected, e.g. ``experiments.yaml: experiments[0].iter_params.seed: expected a non-empty
list, got 3``. Unknown keys are errors at every depth, with the closest known key (see
:func:`validate_config`); files are read by :func:`assay.configfile.load_yaml` (bounded
in size, alias expansion and nesting), interpolations may produce at most
:data:`~assay.configfile.MAX_NODES` values and ``defaults`` may read at most
:data:`MAX_FILES` files.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.configfile import MAX_NODES, close_match, load_yaml
from assay.configfile import key_path as _path_text
from assay.errors import ConfigError

__all__ = ["ConfigError", "load_config", "parse_override", "validate_config"]

_REF = re.compile(r"\$\{([A-Za-z0-9_.\-]+)\}")

#: keys of the composed config, of an experiment, and of a prediction model's settings
TOP_KEYS = ("base_path", "output_path", "executor", "experiments", "tasks", "task_params")
SETTING_KEYS = ("unc_types", "aggregations", "naming_scheme_version", "naming_scheme_pred_model", "references")
EXPERIMENT_KEYS = ("name", "iter_params", "prediction_models") + SETTING_KEYS
TASK_KEYS = ("function", "datasets")
#: the most files read through nested ``defaults`` for one config
MAX_FILES = 200
#: keys that load_config adds itself
_INTERNAL = ("config_dir", "config_file")


class _Origins:
    """Which file set each key path (the deepest recorded prefix answers)."""

    def __init__(self) -> None:
        self.map: dict[tuple[Any, ...], str] = {}
        self.reads = 0  # files read through ``defaults``, bounded by MAX_FILES

    def record(self, value: Any, path: tuple[Any, ...], file: str) -> None:
        self.map[path] = file
        if isinstance(value, dict):
            for k, v in value.items():
                self.record(v, path + (k,), file)
        elif isinstance(value, list):
            for i, v in enumerate(value):
                self.record(v, path + (i,), file)

    def file(self, path: tuple[Any, ...], default: str) -> str:
        for n in range(len(path), -1, -1):
            if path[:n] in self.map:
                return self.map[path[:n]]
        return default


def _fail(origins: _Origins, root: str, path: tuple[Any, ...], expected: str, got: Any) -> ConfigError:
    got_text = repr(got) if len(repr(got)) < 80 else repr(got)[:77] + "..."
    return ConfigError(f"{origins.file(path, root)}: {_path_text(path)}: expected {expected}, got {got_text}")


def _merge(base: dict, new: dict, origins: _Origins, file: str, path: tuple[Any, ...] = ()) -> dict:
    out = dict(base)
    for key, value in new.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value, origins, file, path + (key,))
        else:
            out[key] = value
            origins.record(value, path + (key,), file)
    return out


def _read_yaml(path: Path, origins: _Origins, *, chain: tuple[Path, ...]) -> dict:
    if path in chain:
        raise ConfigError(f"{path}: defaults: expected no cycle, got {' -> '.join(str(p) for p in chain + (path,))}")
    origins.reads += 1
    if origins.reads > MAX_FILES:
        raise ConfigError(f"{chain[0] if chain else path}: defaults: expected at most {MAX_FILES} config files "
                          f"read in all, got more (files listed many times in nested defaults?)")
    if not path.exists():
        where = f" (listed in the defaults of {chain[-1]})" if chain else ""
        raise ConfigError(f"{path}: expected an existing config file{where}, got no such file")
    data = load_yaml(path)
    data = {} if data is None else data
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: (top level): expected a mapping of keys, got {type(data).__name__}")
    defaults = data.pop("defaults", [])
    if not isinstance(defaults, list):
        raise ConfigError(f"{path}: defaults: expected a list of file names, got {defaults!r}")
    own = {k: v for k, v in data.items() if not (isinstance(k, str) and k.startswith("#"))}
    result: dict = {}
    if "_self_" not in defaults:
        defaults = defaults + ["_self_"]
    for i, entry in enumerate(defaults):
        if entry == "_self_":
            result = _merge(result, own, origins, str(path))
            continue
        if not isinstance(entry, str) or not entry.strip():
            raise ConfigError(f"{path}: defaults[{i}]: expected a file name such as 'tasks/base', got {entry!r}")
        name, _, package = entry.partition("@")
        sub = Path(name.strip())
        if sub.suffix not in (".yaml", ".yml"):
            sub = sub.with_name(sub.name + ".yaml")
        content = _read_yaml((path.parent / sub).resolve(), origins, chain=chain + (path,))
        if package.strip():
            for key in reversed(package.strip().split(".")):
                content = {key: content}
        result = _merge(result, content, origins, str((path.parent / sub).resolve()))
    return result


def _lookup(config: dict, dotted: str) -> Any:
    node: Any = config
    for part in dotted.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise KeyError(dotted)
    return node


def _interpolate(value: Any, config: dict, origins: _Origins, root: str, path: tuple[Any, ...], depth: int = 0,
                 budget: list[int] | None = None) -> Any:
    """Resolve ``${...}``; ``budget`` counts the nodes built, so chained interpolations cannot blow up."""
    budget = budget if budget is not None else [MAX_NODES]
    budget[0] -= 1
    if budget[0] < 0:
        raise ConfigError(f"{origins.file(path, root)}: {_path_text(path)}: expected at most {MAX_NODES:,} "
                          "values once interpolations are expanded, got more (interpolations that repeat "
                          "large parts of the config?)")
    if depth > 20:
        raise _fail(origins, root, path, "interpolations without a cycle", value)
    if isinstance(value, dict):
        return {k: _interpolate(v, config, origins, root, path + (k,), depth, budget) for k, v in value.items()}
    if isinstance(value, list):
        return [_interpolate(v, config, origins, root, path + (i,), depth, budget) for i, v in enumerate(value)]
    if not isinstance(value, str) or "${" not in value:
        return value
    whole = _REF.fullmatch(value)
    try:
        if whole:
            return _interpolate(_lookup(config, whole.group(1)), config, origins, root, path, depth + 1, budget)
        return _REF.sub(lambda m: str(_interpolate(_lookup(config, m.group(1)), config, origins, root, path,
                                                    depth + 1, budget)), value)
    except KeyError as exc:
        raise _fail(origins, root, path, f"an interpolation of an existing key (no key {exc.args[0]!r})",
                    value) from None


def _references(value: Any, found: set[str]) -> set[str]:
    """The first segments of every ``${a.b}`` in ``value`` (the top-level keys used as definitions)."""
    if isinstance(value, dict):
        for v in value.values():
            _references(v, found)
    elif isinstance(value, list):
        for v in value:
            _references(v, found)
    elif isinstance(value, str):
        found.update(m.group(1).split(".")[0] for m in _REF.finditer(value))
    return found


#: where a command-line override is said to come from in error messages
COMMAND_LINE = "<command line>"
_OVERRIDE = re.compile(r"^(\+?)([A-Za-z_][A-Za-z0-9_\-]*(?:\.[A-Za-z0-9_\-]+)*)=(.*)$", re.S)


def parse_override(text: str) -> tuple[bool, tuple[str | int, ...], Any]:
    """``key.path=value`` (``+key.path=value`` adds a key): ``(add, path, value)``.

    The value is read as YAML (``3`` is a number, ``[a, b]`` a list, ``null`` None), as in
    Hydra's override grammar for plain values; a part of the path that is a number indexes
    a list (``experiments.0.naming_scheme_version=v{seed}``).
    """
    m = _OVERRIDE.match(text) if isinstance(text, str) else None
    if m is None:
        raise ConfigError(f"{COMMAND_LINE}: {text!r} is not an override; write KEY=VALUE (a dotted key path, e.g. "
                          "base_path=/data/toy or task_params.ood_detection.datasets=[id,ood]), or +KEY=VALUE to "
                          "add a key.")
    import yaml

    try:
        value = yaml.safe_load(m.group(3)) if m.group(3).strip() else ""
    except yaml.YAMLError as exc:
        raise ConfigError(f"{COMMAND_LINE}: {m.group(2)}: the value {m.group(3)!r} is not valid YAML "
                          f"({str(exc).splitlines()[0]}).") from None
    path = tuple(int(p) if p.isdigit() else p for p in m.group(2).split("."))
    return bool(m.group(1)), path, value


def _apply_override(config: dict, text: str, origins: _Origins) -> None:
    add, path, value = parse_override(text)
    node: Any = config
    for depth, part in enumerate(path[:-1]):
        ok = (isinstance(node, dict) and part in node) or (isinstance(node, list) and isinstance(part, int)
                                                           and 0 <= part < len(node))
        if not ok:
            raise ConfigError(f"{COMMAND_LINE}: {text!r}: the config has no key {_path_text(path[:depth + 1])}.")
        node = node[part]
    last = path[-1]
    if isinstance(node, list):
        if not (isinstance(last, int) and 0 <= last < len(node)):
            raise ConfigError(f"{COMMAND_LINE}: {text!r}: {_path_text(path[:-1])} is a list of {len(node)}; "
                              f"no item {last!r}.")
    elif not isinstance(node, dict):
        raise ConfigError(f"{COMMAND_LINE}: {text!r}: {_path_text(path[:-1])} is not a mapping.")
    elif add and last in node:
        raise ConfigError(f"{COMMAND_LINE}: {text!r}: {_path_text(path)} exists; override it without '+'.")
    elif not add and last not in node:
        hint = close_match(str(last), [str(k) for k in node])
        raise ConfigError(f"{COMMAND_LINE}: {text!r}: the config has no key {_path_text(path)}.{hint} To add a "
                          f"key, write +{text}.")
    node[last] = value
    origins.record(value, path, COMMAND_LINE)


def load_config(path: str | Path, overrides: Sequence[str] = ()) -> dict:
    """Read, compose, interpolate and check an experiment config; relative paths resolve against its folder.

    Returns the composed config as plain dicts and lists, with ``base_path``,
    ``output_path`` (default ``results``), ``config_dir`` and ``config_file`` as absolute
    paths. ``overrides`` (``"base_path=/data/toy"``, ``"+key=value"``: see
    :func:`parse_override`) apply to the composed config before interpolation, so a
    ``${base_path}`` elsewhere follows an overridden ``base_path``; a relative path given
    on the command line for ``base_path`` or ``output_path`` resolves against the current
    directory. Every key is checked (see :func:`validate_config`), and so is the grid
    (naming schemes, duplicate and escaping output folders; see
    :func:`assay.downstream.build_grid`), before anything runs.
    """
    from assay.downstream.grid import build_grid

    path = Path(path).resolve()
    origins = _Origins()
    raw = _read_yaml(path, origins, chain=())
    for text in overrides:
        _apply_override(raw, text, origins)
    definitions = _references(raw, set())
    config = _interpolate(raw, raw, origins, str(path), ())
    validate_config(config, origins=origins, root=str(path), definitions=definitions)
    for key, default in (("base_path", None), ("output_path", "results")):
        value = config.get(key, default)
        if value is not None:
            p = Path(value).expanduser()
            anchor = Path.cwd() if origins.file((key,), "") == COMMAND_LINE else path.parent
            config[key] = str(p if p.is_absolute() else (anchor / p).resolve())
    config["config_dir"] = str(path.parent)
    config["config_file"] = str(path)
    build_grid(config, origin=lambda key: origins.file(key, str(path)))
    return config


def _expect_str_list(
    cfg: Any, origins: _Origins, root: str, path: tuple[Any, ...], *, allow_empty: bool = False
) -> list[str | int]:
    """``cfg`` when it is a list of names (strings or integers), non-empty unless ``allow_empty``."""
    if not isinstance(cfg, list) or (not cfg and not allow_empty) or not all(isinstance(v, (str, int)) for v in cfg):
        raise _fail(origins, root, path, "a non-empty list of names", cfg)
    return cfg


def _unknown(mapping: dict, allowed: tuple[str, ...] | list[str], origins: _Origins, root: str,
             at: tuple[Any, ...], what: str = "key") -> None:
    for key in mapping:
        if key not in allowed:
            raise ConfigError(f"{origins.file(at + (key,), root)}: {_path_text(at + (key,))}: unknown {what} "
                              f"{key!r}.{close_match(key, allowed)} Allowed here: {', '.join(map(str, allowed))}.")


def _check_task_function(fn: Any, origins: _Origins, root: str, at: tuple[Any, ...]) -> None:
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
    origins = origins if origins is not None else _Origins()
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
