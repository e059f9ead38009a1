"""The experiment grid: one :class:`ExperimentVersion` per combination of ``iter_params``."""

from __future__ import annotations

import difflib
import functools
import itertools
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay.configfile import key_path
from assay.downstream import ExperimentVersion
from assay.errors import ConfigError

__all__ = ["ExperimentVersion", "build_grid"]


def _setting_path(i: int, pred_model: Any, model_settings: Any, key: str) -> tuple[Any, ...]:
    """The key path of setting ``key`` of experiment ``i``: in its prediction model when set there."""
    if key in model_settings:
        return ("experiments", i, "prediction_models", pred_model, key)
    return ("experiments", i, key)


def _default_naming(params: dict[str, Any]) -> str:
    parts = [f"{k}{v}" for k, v in params.items() if k != "pred_model"]
    return "_".join(parts) or "default"


def format_scheme(scheme: Any, fields: dict[str, Any], *, file: str, at: tuple[Any, ...]) -> str:
    """``scheme.format(**fields)``, or a :class:`ConfigError` naming the file, key, scheme and the fields.

    Only plain ``{name}`` fields (with an optional format spec such as ``{seed:03d}``)
    are accepted; ``{name.attr}``, ``{name[0]}`` and positional ``{}`` / ``{0}`` are not.
    """
    where = f"{file}: {key_path(at)}"
    available = ", ".join(sorted(fields)) or "none"
    if not isinstance(scheme, str):
        raise ConfigError(f"{where}: expected a format string such as 'seed{{seed}}', got {scheme!r}")
    try:
        names = [name for _, name, _, _ in string.Formatter().parse(scheme) if name is not None]
    except ValueError as exc:
        raise ConfigError(f"{where}: expected a valid format string, got {scheme!r} ({exc}; write '{{{{' and "
                          f"'}}}}' for literal braces). Available fields: {available}") from None
    for name in names:
        if name not in fields:
            hint = ""
            if name:
                close = difflib.get_close_matches(name, list(fields), n=1, cutoff=0.6)
                hint = f" Did you mean {{{close[0]}}}?" if close else ""
            raise ConfigError(f"{where}: unknown field {{{name}}} in the naming scheme {scheme!r}.{hint} "
                              f"Available fields: {available}")
    try:
        return scheme.format(**fields)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
        raise ConfigError(f"{where}: expected a format string that formats, got {scheme!r} "
                          f"({type(exc).__name__}: {exc}). Available fields: {available}") from None


def _confined(path: Path, root: Path, *, file: str, at: tuple[Any, ...], scheme: Any) -> None:
    resolved, top = path.resolve(), root.resolve()
    if not resolved.is_relative_to(top):
        raise ConfigError(f"{file}: {key_path(at)}: the naming scheme {scheme!r} puts results in {resolved}, "
                          f"outside the output folder {top}; expected a relative path without '..'")


def build_grid(config: dict, *, origin: Callable[[tuple[Any, ...]], str] | None = None) -> list[ExperimentVersion]:
    """Expand every experiment's ``iter_params`` into versions, in config order (last key varies fastest).

    Per-model settings (``prediction_models[pred_model]``) override experiment-wide ones.
    Data lives in ``base_path / naming_scheme_pred_model / naming_scheme_version`` (default
    ``{pred_model}`` and ``seed{seed}``-style ``key{value}`` parts joined by ``_``); results
    in ``output_path`` under the same relative path.

    Raises :class:`~assay.errors.ConfigError` (naming the file, the key path and the
    naming scheme) for a naming scheme that does not format, one whose output folder
    resolves outside ``output_path`` (``..``, an absolute path), and two versions with the
    same output folder (naming both). ``origin(key_path)`` tells the file that set a key
    (default: the config's ``config_file``).
    """
    base = Path(config["base_path"])
    out = Path(config.get("output_path", "results"))
    default_file = str(config.get("config_file", "<config>"))
    where = origin or (lambda at: default_file)
    versions: list[ExperimentVersion] = []
    seen: dict[Path, ExperimentVersion] = {}
    for i, exp in enumerate(config["experiments"]):
        name = str(exp.get("name", f"experiment{i}"))
        iters = exp["iter_params"]
        keys = list(iters)
        for combo in itertools.product(*(iters[k] for k in keys)):
            params = dict(zip(keys, combo))
            pm = str(params["pred_model"])
            model_settings = exp["prediction_models"][params["pred_model"]]
            settings = {k: v for k, v in exp.items() if k not in ("iter_params", "prediction_models", "name")}
            settings.update(model_settings)

            at = functools.partial(_setting_path, i, params["pred_model"], model_settings)

            scheme = settings.get("naming_scheme_version")
            fields = {**{k: v for k, v in settings.items() if isinstance(v, (str, int))}, **params}
            version_name = format_scheme(scheme, fields, file=where(at("naming_scheme_version")),
                                         at=at("naming_scheme_version")) if scheme else _default_naming(params)
            model_scheme = settings.get("naming_scheme_pred_model", "{pred_model}")
            model_dir = format_scheme(model_scheme, dict(params), file=where(at("naming_scheme_pred_model")),
                                      at=at("naming_scheme_pred_model"))
            references = settings.get("references")
            if references is not None:
                format_scheme(references, {**params, "split": "id", "base_path": str(base)},
                              file=where(at("references")), at=at("references"))
            output_dir = out / model_dir / version_name
            _confined(out / model_dir, out, file=where(at("naming_scheme_pred_model")),
                      at=at("naming_scheme_pred_model"), scheme=model_scheme)
            _confined(output_dir, out, file=where(at("naming_scheme_version")), at=at("naming_scheme_version"),
                      scheme=scheme or "key{value} parts")
            aggs = settings.get("aggregations", [])
            aggregations = dict(aggs) if isinstance(aggs, dict) else {str(a): str(a) for a in aggs}
            version = ExperimentVersion(
                experiment=name, pred_model=pm, params=params, version_name=version_name,
                unc_types=tuple(str(u) for u in settings["unc_types"]), aggregations=aggregations,
                data_dir=base / model_dir / version_name, output_dir=output_dir,
                references=references, settings=settings,
            )
            resolved = output_dir.resolve()
            if resolved in seen:
                other = seen[resolved]
                raise ConfigError(
                    f"{where(at('naming_scheme_version'))}: {key_path(at('naming_scheme_version'))}: versions "
                    f"{other.experiment}:{other.key} {other.params} and {name}:{version.key} {params} resolve to the "
                    f"same output folder {resolved}; expected one folder per version (add the differing "
                    f"parameters to the naming scheme {scheme or '(default)'!r})")
            seen[resolved] = version
            versions.append(version)
    return versions
