"""ValUES' table and plot configs (``table_config_*.yaml``, ``plot_config.yaml``), read as ValUES reads them.

The files are Hydra configs: :func:`compose` reads one with Hydra's compose API
(``defaults`` lists with ``_self_`` and ``FILE@package`` entries, ``#@package _global_``
headers, ``${KEY}`` and ``${oc.env:VAR}`` interpolation resolved by OmegaConf) and applies
command-line overrides (``base_path=/data/lidc``, ``datasets.GTA.base_path=...``,
``hydra.searchpath=[file:///path/to/values/evaluation/configs]`` for defaults that reach
outside the config folder, as ValUES' ``datasets/gta.yaml`` does).

:func:`load_table_config` and :func:`load_plot_config` then check every key at every depth
and return plain attrs objects; a typo is a :class:`~assay.errors.ConfigError` naming the
config file, the key path and the closest known key:

table config (``DsTaskTable``)
    ``base_path``, ``experiments`` (each with ``iter_params``, ``prediction_models`` and
    the version settings ValUES' ``ExperimentVersion`` takes), ``split_param`` (``name``,
    ``split_values``), ``ds_tasks``.
``ds_tasks``
    ``{task: {metric: {metrics_file_name, metrics_key, dataset_splits, levels,
    higher_better, percent, filter}}}``; ``levels`` is ``[pred_model]``,
    ``[pred_model, unc_type]`` or all three of ``pred_model``, ``unc_type``,
    ``aggregation`` in any order (ValUES reads the result file as deep as there are
    levels); ``filter`` is ``{plotted dimension: {dimension: [values to drop]}}``.
plot config (``ds_task_barplots``)
    ``datasets`` (``{name: table config}``), ``ds_tasks``, ``save_path``, ``df_naming``,
    ``coloring``, ``hatches``, ``ordering``.

Other top-level keys are accepted only as definitions that an interpolation refers to
(``LIDC`` in ``experiments: [${LIDC}]``); anything else is a typo.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from assay.configfile import check_keys, close_match, key_path
from assay.errors import ConfigError
from assay_segmentation.downstream.compose import referenced_keys

__all__ = ["DIMENSIONS", "Experiment", "PlotConfig", "TableConfig", "ValuesMetric", "compose", "load_plot_config",
           "load_table_config"]

#: the dimensions of a ValUES table row, in the order ValUES nests its result files
DIMENSIONS = ("pred_model", "unc_type", "aggregation")

#: the keys of one metric in ``ds_tasks`` (the first five are required)
METRIC_KEYS = ("metrics_file_name", "metrics_key", "dataset_splits", "levels", "higher_better", "percent", "filter")
#: the settings of an experiment version that ValUES' ``ExperimentVersion`` takes by name
VERSION_KEYS = ("naming_scheme_version", "naming_scheme_pred_model", "unc_types", "aggregations", "image_ending",
                "unc_ending", "n_reference_segs", "second_cycle_path", "n_classes", "datamodule_config",
                "pred_seg_loading", "gt_unc_map_loading")
TABLE_KEYS = ("base_path", "experiments", "split_param", "ds_tasks")
PLOT_KEYS = ("datasets", "ds_tasks", "save_path", "df_naming", "coloring", "hatches", "ordering")



@attrs.frozen
class ValuesMetric:
    """One metric of ``ds_tasks``: where its values are and how to read them."""

    task: str
    name: str
    file_name: str
    key: str
    splits: tuple[str, ...] | None
    levels: tuple[str, ...]
    higher_better: bool
    percent: bool = False
    #: ``{plotted dimension: {dimension: (values to drop, ...)}}``
    filter: dict[str, dict[str, tuple[str, ...]]] = attrs.field(factory=dict)
    #: the key path of this metric in its config (for messages)
    at: tuple[Any, ...] = ()


@attrs.frozen
class Experiment:
    """One entry of ``experiments``: the grid of versions and the settings of each prediction model."""

    iter_params: dict[str, tuple[str, ...]]
    settings: dict[str, Any]
    prediction_models: dict[str, dict[str, Any]]
    at: tuple[Any, ...] = ()


@attrs.frozen
class TableConfig:
    """A ValUES table config: where the experiment tree is, its grid, the split parameter, the metrics."""

    file: str
    base_path: Path
    experiments: tuple[Experiment, ...]
    split_name: str | None
    split_values: tuple[str, ...]
    metrics: tuple[ValuesMetric, ...]
    at: tuple[Any, ...] = ()
    #: why ``base_path`` could not be resolved (a plot config's dataset naming an unset ``${oc.env:USER}``):
    #: an error when the dataset is read, so that ``datasets=`` can leave it out
    base_path_error: str = ""


@attrs.frozen
class PlotConfig:
    """A ValUES plot config: the datasets (table configs), the metrics and the look of the bar plots."""

    file: str
    datasets: dict[str, TableConfig]
    metrics: tuple[ValuesMetric, ...]
    save_path: Path | None
    df_naming: dict[str, str]
    coloring: dict[str, dict[str, str]]
    hatches: dict[str, dict[str, str]]
    ordering: dict[str, tuple[str, ...]]
    #: why ``save_path`` could not be resolved (an unset ``${oc.env:USER}``, say): an error only when no
    #: other output folder is given
    save_path_error: str = ""


# --------------------------------------------------------------------------- composing
def compose(path: str | Path, overrides: Sequence[str] = ()) -> tuple[Any, dict[str, Any]]:
    """Compose ``path`` with Hydra; return ``(DictConfig, unresolved plain dict)``.

    The composition is :func:`assay_segmentation.downstream.compose.compose_config`'s, the one ``assay
    run`` uses: every file read first by the bounded loader, errors naming the file (or the
    command line, for an override).
    """
    from omegaconf import OmegaConf

    from assay_segmentation.downstream.compose import compose_config

    cfg, _origins = compose_config(path, overrides)
    raw = OmegaConf.to_container(cfg, resolve=False)
    return cfg, {str(k): v for k, v in raw.items()}  # type: ignore[union-attr]  # compose_config checked: a mapping


def _resolved(cfg: Any, at: tuple[Any, ...], file: str) -> Any:
    """The node at ``at`` as plain data, interpolations resolved; errors name the key path."""
    from omegaconf import DictConfig, ListConfig, OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    try:
        node = cfg
        for part in at:
            node = node[part]
        if isinstance(node, (DictConfig, ListConfig)):
            return OmegaConf.to_container(node, resolve=True)
        return node
    except OmegaConfBaseException as exc:
        message = " ".join(str(exc).splitlines()[0].split())
        raise ConfigError(f"{file}: {key_path(at)}: expected a value whose interpolations resolve, got an error: "
                          f"{message}") from None


def _fail(file: str, at: tuple[Any, ...], expected: str, got: Any) -> ConfigError:
    return ConfigError(f"{file}: {key_path(at)}: expected {expected}, got {got!r:.80}")


def _names(value: Any, file: str, at: tuple[Any, ...], *, allow_empty: bool = False) -> tuple[str, ...]:
    if not isinstance(value, list) or (not value and not allow_empty) or \
            not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
        raise _fail(file, at, "a list of names", value)
    return tuple(str(v) for v in value)


def _mapping(value: Any, file: str, at: tuple[Any, ...], what: str = "a mapping") -> dict:
    if not isinstance(value, dict):
        raise _fail(file, at, what, value)
    return value


# --------------------------------------------------------------------------- ds_tasks
def _levels(value: Any, file: str, at: tuple[Any, ...]) -> tuple[str, ...]:
    levels = _names(value, file, at)
    for i, level in enumerate(levels):
        if level not in DIMENSIONS:
            raise ConfigError(f"{file}: {key_path(at + (i,))}: unknown level {level!r}.{close_match(level, DIMENSIONS)}"
                              f" Levels are {', '.join(DIMENSIONS)}.")
    if len(set(levels)) != len(levels) or set(levels) != set(DIMENSIONS[: len(levels)]):
        raise _fail(file, at, "[pred_model], [pred_model, unc_type] or all of pred_model, unc_type, aggregation "
                    "(ValUES reads the result file as deep as there are levels)", value)
    return levels


def _filter(value: Any, file: str, at: tuple[Any, ...]) -> dict[str, dict[str, tuple[str, ...]]]:
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    for along, drops in _mapping(value, file, at, "a mapping {plotted dimension: {dimension: [values]}}").items():
        if along not in DIMENSIONS:
            raise ConfigError(f"{file}: {key_path(at + (along,))}: unknown dimension {along!r}."
                              f"{close_match(along, DIMENSIONS)} Dimensions are {', '.join(DIMENSIONS)}.")
        inner: dict[str, tuple[str, ...]] = {}
        for dim, values in _mapping(drops, file, at + (along,), "a mapping {dimension: [values to drop]}").items():
            if dim not in DIMENSIONS:
                raise ConfigError(f"{file}: {key_path(at + (along, dim))}: unknown dimension {dim!r}."
                                  f"{close_match(dim, DIMENSIONS)} Dimensions are {', '.join(DIMENSIONS)}.")
            inner[dim] = _names(values, file, at + (along, dim))
        out[along] = inner
    return out


def _metrics(value: Any, file: str, at: tuple[Any, ...]) -> tuple[ValuesMetric, ...]:
    out = []
    for task, metrics in _mapping(value, file, at, "a mapping {task: {metric: settings}}").items():
        for name, spec in _mapping(metrics, file, at + (task,), "a mapping {metric: settings}").items():
            here = at + (task, name)
            spec = _mapping(spec, file, here, "the settings of a metric (" + ", ".join(METRIC_KEYS) + ")")
            check_keys(spec, METRIC_KEYS, file=file, path=here)
            for key in METRIC_KEYS[:5]:
                if key not in spec:
                    raise ConfigError(f"{file}: {key_path(here + (key,))}: expected a value (required), got none")
            for key in ("metrics_file_name", "metrics_key"):
                if not isinstance(spec[key], str) or not spec[key]:
                    raise _fail(file, here + (key,), "a non-empty string", spec[key])
            for key in ("higher_better", "percent"):
                if key in spec and not isinstance(spec[key], bool):
                    raise _fail(file, here + (key,), "true or false", spec[key])
            splits = spec["dataset_splits"]
            out.append(ValuesMetric(
                task=str(task), name=str(name), file_name=spec["metrics_file_name"], key=spec["metrics_key"],
                splits=None if splits is None else _names(splits, file, here + ("dataset_splits",)),
                levels=_levels(spec["levels"], file, here + ("levels",)), higher_better=spec["higher_better"],
                percent=bool(spec.get("percent", False)),
                filter=_filter(spec["filter"], file, here + ("filter",)) if spec.get("filter") is not None else {},
                at=here))
    if not out:
        raise _fail(file, at, "at least one task with one metric", value)
    return tuple(out)


# --------------------------------------------------------------------------- experiments
def _scheme_fields(scheme: Any, file: str, at: tuple[Any, ...]) -> list[str]:
    if not isinstance(scheme, str):
        raise _fail(file, at, "a naming scheme (a format string such as '{shift}_fold{fold}_seed{seed}')", scheme)
    try:
        parts = list(string.Formatter().parse(scheme))
    except ValueError as exc:
        raise ConfigError(f"{file}: {key_path(at)}: expected a format string, got {scheme!r} ({exc})") from None
    fields = []
    for _, field, spec, conv in parts:
        if field is None:
            continue
        if not field.isidentifier() or spec or conv:
            raise _fail(file, at, "plain {field}s in the naming scheme", scheme)
        fields.append(field)
    return fields


def _experiment(value: Any, file: str, at: tuple[Any, ...]) -> Experiment:
    spec = _mapping(value, file, at, "an experiment (a mapping with iter_params and prediction_models)")
    for key in ("iter_params", "prediction_models"):
        if key not in spec:
            raise ConfigError(f"{file}: {key_path(at + (key,))}: expected a value (required), got none")
    iter_params = {str(k): _names(v, file, at + ("iter_params", k))
                   for k, v in _mapping(spec["iter_params"], file, at + ("iter_params",)).items()}
    if "pred_model" not in iter_params:
        raise ConfigError(f"{file}: {key_path(at + ('iter_params',))}: expected the iterated parameter 'pred_model', "
                          f"got {sorted(iter_params)}")
    models = _mapping(spec["prediction_models"], file, at + ("prediction_models",))
    settings = {k: v for k, v in spec.items() if k not in ("iter_params", "prediction_models")}
    fields_used: set[str] = set()
    for name in ("naming_scheme_version", "naming_scheme_pred_model"):
        if name in settings:
            fields_used.update(_scheme_fields(settings[name], file, at + (name,)))
    for model, msettings in models.items():
        here = at + ("prediction_models", model)
        msettings = _mapping(msettings, file, here, "the settings of a prediction model")
        for name in ("naming_scheme_version", "naming_scheme_pred_model"):
            if name in msettings:
                fields_used.update(_scheme_fields(msettings[name], file, here + (name,)))
    known = set(VERSION_KEYS) | set(iter_params) | fields_used
    check_keys(settings, sorted(known), file=file, path=at)
    parsed_models: dict[str, dict[str, Any]] = {}
    for model in iter_params["pred_model"]:
        if model not in models:
            raise ConfigError(f"{file}: {key_path(at + ('prediction_models',))}: expected settings for every "
                              f"pred_model of iter_params, got none for {model!r}.{close_match(model, models)}")
    for model, msettings in models.items():
        here = at + ("prediction_models", model)
        check_keys(msettings, sorted(known), file=file, path=here)
        merged = {**settings, **msettings}
        for key in ("naming_scheme_version", "unc_types", "aggregations"):
            if key not in merged:
                raise ConfigError(f"{file}: {key_path(here + (key,))}: expected a value (required), got none")
        merged["unc_types"] = _names(merged["unc_types"], file, here + ("unc_types",))
        merged["aggregations"] = _names(merged["aggregations"], file, here + ("aggregations",))
        available = set(iter_params) | {k for k, v in merged.items() if isinstance(v, (str, int, float))}
        for name in ("naming_scheme_version", "naming_scheme_pred_model"):
            for field in _scheme_fields(merged.get(name, "{pred_model}"), file, here + (name,)):
                if field not in available:
                    raise ConfigError(f"{file}: {key_path(here + (name,))}: unknown field {{{field}}} in "
                                      f"{merged.get(name)!r}.{close_match(field, available)} Fields: "
                                      f"{', '.join(sorted(available))}.")
        parsed_models[str(model)] = merged
    return Experiment(iter_params=iter_params, settings=settings, prediction_models=parsed_models, at=at)


#: settings of an experiment that only ValUES' evaluation uses (data loading): kept unresolved by the table
_UNUSED = ("datamodule_config", "pred_seg_loading", "gt_unc_map_loading")


def _experiments(cfg: Any, at: tuple[Any, ...], file: str) -> list[dict[str, Any]]:
    """The experiments, each resolved key by key; the data-loading settings stay unresolved (the table reads no
    data), so their interpolations into files the table does not need cannot fail it."""
    from omegaconf import DictConfig, ListConfig, OmegaConf

    node = _resolved_node(cfg, at + ("experiments",), file)
    if not isinstance(node, ListConfig) or len(node) == 0:
        got = OmegaConf.to_container(node, resolve=False) if isinstance(node, (DictConfig, ListConfig)) else node
        raise _fail(file, at + ("experiments",), "a non-empty list of experiments (such as [${LIDC}])", got)
    out = []
    for i in range(len(node)):
        here = at + ("experiments", i)
        exp = _resolved_node(cfg, here, file)
        if not isinstance(exp, DictConfig):
            raise _fail(file, here, "an experiment (a mapping with iter_params and prediction_models)",
                        _resolved(cfg, here, file))
        out.append({str(k): (None if k in _UNUSED else _resolved(cfg, here + (k,), file)) for k in exp})
    return out


def _resolved_node(cfg: Any, at: tuple[Any, ...], file: str) -> Any:
    """The node at ``at`` (an interpolation such as ``${LIDC}`` followed), still an OmegaConf node."""
    from omegaconf.errors import OmegaConfBaseException

    try:
        node = cfg
        for part in at:
            node = node[part]
        return node
    except OmegaConfBaseException as exc:
        message = " ".join(str(exc).splitlines()[0].split())
        raise ConfigError(f"{file}: {key_path(at)}: expected a value whose interpolations resolve, got an error: "
                          f"{message}") from None


def _check_top(raw: dict[str, Any], allowed: Sequence[str], file: str, at: tuple[Any, ...] = ()) -> None:
    refs = referenced_keys(raw) - {"oc"}
    node = raw
    for part in at:
        node = node[part]
    check_keys({k: v for k, v in node.items() if k not in refs}, list(allowed), file=file, path=at)


def _table(cfg: Any, raw: dict[str, Any], file: str, at: tuple[Any, ...], *, need_tasks: bool = True) -> TableConfig:
    node = raw
    for part in at:
        node = node[part]
    _mapping(node, file, at, "a table config (" + ", ".join(TABLE_KEYS) + ")")
    if at:
        check_keys(node, TABLE_KEYS, file=file, path=at)
    else:
        _check_top(raw, TABLE_KEYS, file)
    required = ("base_path", "experiments") + (("ds_tasks",) if need_tasks else ())
    for key in required:
        if key not in node:
            raise ConfigError(f"{file}: {key_path(at + (key,))}: expected a value (required), got none")
    base_error = ""
    try:
        base = _resolved(cfg, at + ("base_path",), file)
    except ConfigError as exc:
        if need_tasks:  # a table config's own base_path: always read
            raise
        base, base_error = "", str(exc)  # a plot config's dataset: an error only when it is drawn
    if not base_error and (not isinstance(base, str) or not base):
        raise _fail(file, at + ("base_path",), "a folder (the first cycle's experiment root)", base)
    exps = tuple(_experiment(e, file, at + ("experiments", i)) for i, e in enumerate(_experiments(cfg, at, file)))
    split_name: str | None = None
    split_values: tuple[str, ...] = ()
    if node.get("split_param") is not None:
        sp = _mapping(_resolved(cfg, at + ("split_param",), file), file, at + ("split_param",),
                      "a mapping with name and split_values")
        check_keys(sp, ("name", "split_values"), file=file, path=at + ("split_param",))
        if not isinstance(sp.get("name"), str):
            raise _fail(file, at + ("split_param", "name"), "the name of an iterated parameter", sp.get("name"))
        split_name = sp["name"]
        split_values = _names(sp.get("split_values"), file, at + ("split_param", "split_values"))
        for e in exps:
            if split_name not in e.iter_params:
                raise ConfigError(f"{file}: {key_path(at + ('split_param', 'name'))}: unknown iterated parameter "
                                  f"{split_name!r}.{close_match(split_name, e.iter_params)} Iterated: "
                                  f"{', '.join(e.iter_params)}.")
            for i, v in enumerate(split_values):
                if v not in e.iter_params[split_name]:
                    raise ConfigError(f"{file}: {key_path(at + ('split_param', 'split_values', i))}: unknown "
                                      f"{split_name} {v!r}.{close_match(v, e.iter_params[split_name])} Values: "
                                      f"{', '.join(e.iter_params[split_name])}.")
    metrics: tuple[ValuesMetric, ...] = ()
    if "ds_tasks" in node:
        metrics = _metrics(_resolved(cfg, at + ("ds_tasks",), file), file, at + ("ds_tasks",))
    return TableConfig(file=file, base_path=Path(base), experiments=exps, split_name=split_name,
                       split_values=split_values, metrics=metrics, at=at, base_path_error=base_error)


def load_table_config(path: str | Path, overrides: Sequence[str] = ()) -> TableConfig:
    """Compose and check a ValUES table config (``table_config_lidc.yaml``); see the module docstring.

    >>> cfg = load_table_config("table_config_lidc.yaml", ["base_path=/data/lidc"])   # doctest: +SKIP
    >>> [m.name for m in cfg.metrics]                                                 # doctest: +SKIP
    ['dice', 'auroc', 'aurc', 'eaurc', 'al_improvement', 'ace', 'ncc', 'ged']
    """
    cfg, raw = compose(path, overrides)
    if "datasets" in raw and "experiments" not in raw:
        raise ConfigError(f"{path}: datasets: expected a table config (base_path, experiments, split_param, "
                          "ds_tasks), got a plot config; draw it with 'assay plot'")
    return _table(cfg, raw, str(path), ())


def _string_map(value: Any, file: str, at: tuple[Any, ...], what: str) -> dict[str, str]:
    out = {}
    for k, v in _mapping(value, file, at).items():
        if not isinstance(v, str):
            raise _fail(file, at + (k,), what, v)
        out[str(k)] = v
    return out


def _by_dimension(value: Any, file: str, at: tuple[Any, ...], what: str) -> dict[str, dict[str, str]]:
    out = {}
    for dim, inner in _mapping(value, file, at, "a mapping {dimension: {value: ...}}").items():
        if dim not in DIMENSIONS:
            raise ConfigError(f"{file}: {key_path(at + (dim,))}: unknown dimension {dim!r}."
                              f"{close_match(dim, DIMENSIONS)} Dimensions are {', '.join(DIMENSIONS)}.")
        out[str(dim)] = _string_map(inner, file, at + (dim,), what)
    return out


def load_plot_config(path: str | Path, overrides: Sequence[str] = ()) -> PlotConfig:
    """Compose and check a ValUES plot config (``plot_config.yaml``); see the module docstring.

    Each entry of ``datasets`` is a table config (its own ``ds_tasks`` are checked too);
    the bars are drawn for the plot config's ``ds_tasks``.
    """
    cfg, raw = compose(path, overrides)
    file = str(path)
    if "experiments" in raw and "datasets" not in raw:
        raise ConfigError(f"{file}: experiments: expected a plot config (datasets, ds_tasks, save_path, ...), got "
                          "a table config; render it with 'assay table'")
    _check_top(raw, PLOT_KEYS, file)
    for key in ("datasets", "ds_tasks"):
        if key not in raw:
            raise ConfigError(f"{file}: {key}: expected a value (required), got none")
    datasets = {str(name): _table(cfg, raw, file, ("datasets", name), need_tasks=False)
                for name in _mapping(raw["datasets"], file, ("datasets",), "a mapping {dataset: table config}")}
    if not datasets:
        raise _fail(file, ("datasets",), "at least one dataset", raw["datasets"])
    metrics = _metrics(_resolved(cfg, ("ds_tasks",), file), file, ("ds_tasks",))
    save, save_error = None, ""
    if raw.get("save_path") is not None:
        try:
            save = _resolved(cfg, ("save_path",), file)
        except ConfigError as exc:
            save_error = str(exc)
    if save is not None and (not isinstance(save, str) or not save):
        raise _fail(file, ("save_path",), "a folder", save)
    looks = {k: _resolved(cfg, (k,), file) if raw.get(k) is not None else {}
             for k in ("df_naming", "coloring", "hatches", "ordering")}
    ordering = {}
    for dim, values in _mapping(looks["ordering"], file, ("ordering",)).items():
        if dim not in DIMENSIONS:
            raise ConfigError(f"{file}: ordering.{dim}: unknown dimension {dim!r}.{close_match(dim, DIMENSIONS)} "
                              f"Dimensions are {', '.join(DIMENSIONS)}.")
        ordering[str(dim)] = _names(values, file, ("ordering", dim))
    return PlotConfig(file=file, datasets=datasets, metrics=metrics, save_path=Path(save) if save else None,
                      df_naming=_string_map(looks["df_naming"], file, ("df_naming",), "the name to show (a string)"),
                      coloring=_by_dimension(looks["coloring"], file, ("coloring",), "a matplotlib colour"),
                      hatches=_by_dimension(looks["hatches"], file, ("hatches",), "a matplotlib hatch pattern"),
                      ordering=ordering, save_path_error=save_error)
