"""``assay ue CONFIG.yaml``: score uncertainty estimators on stored model outputs.

A command of this plugin, added to ``assay`` through the ``assay_register_commands`` hook
(:mod:`assay_uncertainty.plugin`; it was ``assay.cli.ue`` before issue 23).

The config (YAML, read with :func:`assay.configfile.load_yaml`: safe, bounded, UTF-8)::

    data: outputs.jsonl            # JSON Lines / .json / .npz, relative to the config file
    estimators: [msp, perplexity, mean_token_entropy]
    gen_metrics: [accuracy]
    ue_metrics: [prr, "prr[max_rejection=0.5]", roc_auc, aurc]
    save_path: ue-run              # output folder (relative to the config file); --output overrides
    nan_policy: drop               # optional: drop | raise
    plots: true                    # optional: PNG pictures (needs matplotlib)

Or, instead of ``data``, run a model (needs a model backend: ``pip install assay-transformers``)
with ``model:`` and ``dataset:`` sections and ``seed: [...]`` (one saved manager per seed in
``save_path/seed-<s>``); see :mod:`assay_uncertainty.command.model_sections` and docs/transformers.md.

Writes the saved manager (``manager.json`` + ``arrays.npz``), ``table.md`` (estimator x UE
metric for each level and generation metric) and the PNG plots into the output folder,
and prints the tables, with the provenance signature (:mod:`assay.provenance`) under them.

Every score comes with its percentile bootstrap interval (``0.4120 [0.3800, 0.4410]``;
``--n-resamples``, default 1000, 0 for none; ``--confidence-level``; ``--seed``), and per
column the best estimator and those not significantly worse than it are bold: each is
compared with the best by the paired bootstrap of the difference on shared resample
indices (:meth:`~assay.uncertainty.UEManager.compare_to_best`), and is worse when the
interval of the difference excludes 0. The tables' notes state the interval, the test and
the level; ``--json`` carries the same fields.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from assay.cli.commands import (
    add_json,
    add_metric,
    add_output,
    check_output,
    flag,
    json_mode,
    non_negative_int,
    print_json,
    probability,
)

KEYS = {"data", "estimators", "gen_metrics", "ue_metrics", "save_path", "nan_policy", "plots", "model", "dataset",
        "seed"}


HELP = "score uncertainty estimators on stored model outputs (a YAML config)"
DESCRIPTION = ("Compute uncertainty estimators, generation metrics and UE metrics (PRR, AURC, ROC-AUC ...) on stored "
               "model outputs described by a YAML config; write the saved manager, a Markdown table and plots.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``assay ue`` (the parser is made by assay: :mod:`assay.cli._plugin_commands`)."""
    p.add_argument("config", type=Path, help="YAML config (keys: " + ", ".join(sorted(KEYS)) + ")")
    add_metric(p, "a registered UE metric, with overrides: 'prr[max_rejection=0.5]'; replaces ue_metrics of "
               "the config")
    add_output(p, "folder", "the saved manager, table.md and the plots", default="save_path of the config")
    p.add_argument("--no-plots", action="store_true", help="do not draw the PNG plots")
    p.add_argument("--n-resamples", type=non_negative_int, default=1000,
                   help="bootstrap resamples for the intervals and the comparisons with the best estimator "
                   "(0: no intervals, no marks; default 1000)")
    p.add_argument("--confidence-level", type=probability, default=0.95,
                   help="level of the intervals and of the paired test, between 0 and 1 (default 0.95)")
    p.add_argument("--seed", type=non_negative_int, default=None,
                   help="resampling seed, >= 0 (default 0); with a model: section, the seed of the run (sampling and "
                   "resampling) when the config has no seed: (default: a fresh one)")
    p.add_argument("--trust-remote-code", action="store_true",
                   help="with a model: section, run the model folder's own Python (auto_map in its config.json); "
                   "the only opt-in: a config file cannot set trust_remote_code")
    add_json(p, "the scores (one object per level, estimator, generation metric and UE metric)")


_SPEC_KINDS = {"estimators": "estimator", "ue_metrics": "ue_metric"}


def _check_spec(spec: str, kind: str, *, file: Path, at: tuple) -> None:
    """A registered name (or a generation metric) whose ``[key=value]`` options its factory accepts."""
    from assay.configfile import check_keys, close_match, key_path
    from assay.errors import ConfigError
    from assay.plugins import get_registry
    from assay.plugins.names import parse_name

    try:
        name, options = parse_name(spec)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{file}: {key_path(at)}: expected a name such as 'prr[max_rejection=0.5]', got "
                          f"{spec!r} ({exc})") from None
    if kind == "gen_metric":
        import inspect

        from assay.uncertainty import GENERATION_METRICS

        known, factory = list(GENERATION_METRICS), GENERATION_METRICS.get(name)
    else:
        registry = get_registry(kind)
        known = registry.names()
        factory = registry.get(name).factory if name in registry else None
    if factory is None:
        what = {"gen_metric": "generation metric", "ue_metric": "UE metric"}.get(kind, kind)
        raise ConfigError(f"{file}: {key_path(at)}: unknown {what} {name!r}."
                          f"{close_match(name, known)} Known: {', '.join(known) or 'none'}.")
    if kind == "gen_metric":
        params = inspect.signature(factory).parameters.values()
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            check_keys(options, [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)],
                       file=file, path=at, what=f"option of {name!r}")
    else:
        accepted = registry.get(name).accepted_keys()
        if accepted is not None:
            check_keys(options, accepted, file=file, path=at, what=f"option of {name!r}")


def load_config(path: Path) -> dict:
    """Read and check an ``assay ue`` config; every error is a ``ConfigError`` naming the file and key.

    Unknown keys (with the closest known key), wrong types, unknown estimator / metric
    names and unknown ``[key=value]`` options are errors; YAML is read through
    :func:`assay.configfile.load_yaml` (bounded, UTF-8 only).
    """
    from assay.configfile import check_keys, load_yaml
    from assay.errors import ConfigError

    cfg = load_yaml(path)
    if not isinstance(cfg, dict):
        raise ConfigError(f"{path}: (top level): expected a mapping of keys ({', '.join(sorted(KEYS))}), "
                          f"got {type(cfg).__name__}")
    check_keys(cfg, sorted(KEYS), file=path)
    if "model" in cfg or "dataset" in cfg or "seed" in cfg:  # the model loop (assay_uncertainty.command.model_sections)
        from assay_uncertainty.command.model_sections import check_model_sections

        check_model_sections(cfg, path)
    for key in ("estimators", "gen_metrics", "ue_metrics") if "model" in cfg else (
            "data", "estimators", "gen_metrics", "ue_metrics"):
        if key not in cfg:
            raise ConfigError(f"{path}: {key}: expected this key (required: data, estimators, gen_metrics, "
                              "ue_metrics), got none")
    for key in ("data", "save_path"):
        if key in cfg and not (isinstance(cfg[key], str) and cfg[key].strip()):
            raise ConfigError(f"{path}: {key}: expected a path (a non-empty string), got {cfg[key]!r}")
    if cfg.get("nan_policy", "drop") not in ("drop", "raise"):
        raise ConfigError(f"{path}: nan_policy: expected 'drop' or 'raise', got {cfg['nan_policy']!r}")
    if not isinstance(cfg.get("plots", True), bool):
        raise ConfigError(f"{path}: plots: expected true or false, got {cfg['plots']!r}")
    for key in ("estimators", "gen_metrics", "ue_metrics"):
        if not isinstance(cfg[key], list) or not cfg[key] or not all(isinstance(x, str) for x in cfg[key]):
            raise ConfigError(f"{path}: {key}: expected a non-empty list of names, got {cfg[key]!r}")
        for i, spec in enumerate(cfg[key]):
            _check_spec(spec, _SPEC_KINDS.get(key, "gen_metric"), file=path, at=(key, i))
    return cfg


def run(args: argparse.Namespace) -> int:
    from assay_uncertainty.manager import UEManager

    cfg = load_config(args.config)
    check_output(args)
    if args.trust_remote_code and "model" not in cfg:
        from assay.errors import InvalidParameterError

        raise InvalidParameterError(f"{flag(args, 'trust_remote_code')}: applies to a config with a model: section "
                                    f"(it loads a model); {args.config} has none")
    if args.metric:
        _check_metric_flag(args)
    if "model" in cfg and args.seed is not None and cfg.get("seed") is not None:
        from assay.errors import InvalidParameterError

        raise InvalidParameterError(f"{flag(args, 'seed')} {args.seed}: {args.config} has seed: {cfg['seed']!r}, which "
                                    "seeds each model run and its resampling; give one or the other")
    base = args.config.parent
    out = args.output or base / str(cfg.get("save_path", "ue-run"))
    if "model" in cfg:
        from assay_uncertainty.command.model_sections import run_seeds

        marks: dict[Path, dict] = {}

        def write(m: Any, folder: Path) -> None:
            marks[folder] = _compute_and_write(m, folder, cfg, args)

        with json_mode(args):
            runs = run_seeds(cfg, args, base, out, write)
        if args.json:  # each run as the data: case reports it (intervals, marks, resampling settings)
            print_json({"output": str(out), "runs": [{"seed": seed, **_json_report(m, folder, marks[folder])}
                                                     for seed, folder, m in runs]})
        return 0
    man = UEManager(base / str(cfg["data"]), estimators=cfg["estimators"], gen_metrics=cfg["gen_metrics"],
                    ue_metrics=args.metric or cfg["ue_metrics"], nan_policy=cfg.get("nan_policy", "drop"),
                    n_resamples=args.n_resamples, confidence_level=args.confidence_level,
                    seed=0 if args.seed is None else args.seed)
    with json_mode(args):  # with --json, everything but the JSON goes to stderr
        marks = _compute_and_write(man, out, cfg, args)
    if args.json:
        print_json(_json_report(man, out, marks))
    return 0


def _json_report(man: Any, out: Path, marks: dict) -> dict:
    """What ``--json`` prints: every score with its interval and its mark, the resampling settings and the test."""
    scores = []
    for key, value in man.metrics.items():
        level, est, gen, uem = key
        low, high = man.intervals.get(key, (None, None))
        scores.append({"level": level, "estimator": est, "gen_metric": gen, "ue_metric": uem, "value": value,
                       "ci_low": low, "ci_high": high,
                       "not_worse_than_best": marks.get((level, gen, uem), {}).get(est)})
    return {"output": str(out), "scores": scores,
            "resampling": {"n_resamples": man.n_resamples, "confidence_level": man.confidence_level,
                           "seed": man.seed, "interval": "percentile bootstrap" if man.n_resamples else None,
                           "test": "paired bootstrap of the difference to the column's best estimator on shared "
                                   "resample indices; worse when its percentile interval excludes 0 (equivalently, "
                                   "when the p-value inverting it is below 1 - confidence_level)"
                                   if man.n_resamples else None},
            "notes": list(dict.fromkeys(man.notes)), "signature": str(man.signature)}


def _check_metric_flag(args: argparse.Namespace) -> None:
    """Each ``-m`` is a registered UE metric whose options its factory accepts; errors name the flag."""
    from assay.errors import AssayError, InvalidParameterError

    for spec in args.metric:
        try:
            _check_spec(spec, "ue_metric", file=Path(flag(args, "metric")), at=())
        except AssayError as exc:
            reason = str(exc).split(": ", 1)[-1].removeprefix("(top level): ")
            raise InvalidParameterError(f"{flag(args, 'metric')} {spec!r}: {reason}") from None


def _compute_and_write(man: Any, out: Path, cfg: dict, args: argparse.Namespace) -> dict:
    """Compute every score, save the manager, write ``table.md`` (and print it) and the plots into ``out``.

    Returns the marks: ``{(level, gen_metric, ue_metric): {estimator: not significantly worse than the best}}``
    (empty without resampling; ``None`` for an estimator whose comparison is undefined).
    """
    from assay.jsonio import write_text_atomic
    from assay.render import render_grid
    from assay_uncertainty.manager.tables import manager_grid, marks_for

    man()
    man.save(out)
    marks = marks_for(man) if man.n_resamples else {}
    sections = []
    for level, gen in dict.fromkeys((k[0], k[2]) for k in man.metrics):
        grid = manager_grid(man, level=level, gen_metric=gen, mark_best=bool(marks), marks=marks)
        sections.append(f"## {level} level, quality = {gen}\n\n{render_grid(grid, 'markdown')}\n")
    if man.notes:
        sections.append("## Notes\n\n" + "\n".join(f"- {n}" for n in dict.fromkeys(man.notes)) + "\n")
    sections.append(f"Signature: `{man.signature}`\n")  # provenance (issue 16), as in manager.json
    text = "\n".join(sections)
    write_text_atomic(out / "table.md", text)
    print(text)
    if cfg.get("plots", True) and not args.no_plots:
        from assay_uncertainty.manager.plots import draw_all

        written = draw_all(man, out)
        print(f"{len(written)} plot(s) written to {out}")
    print(f"Saved manager, table.md in {out}")
    return marks
