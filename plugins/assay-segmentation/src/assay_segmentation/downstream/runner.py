"""Run every task of an experiment config for every experiment version (``assay run``).

Work over images runs through an executor (``executor:`` in the config, default
``serial``; e.g. ``processes[workers=4]``): each image is loaded once per pass and every
task that needs it computes its per-image values there; the per-version reductions and
the writing happen in this process. Results are written atomically, one file per task,
version and split, plus a manifest (:data:`~assay_segmentation.downstream.results.MANIFEST`) that
``assay table`` and ``assay plot`` read. The manifest and every result file carry the
run's provenance signature under the top-level key ``"signature"`` (:mod:`assay.provenance`;
not an image id: readers that aggregate over images skip it).
"""

from __future__ import annotations

import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from assay.downstream import Task, TaskContext
from assay.errors import InvalidParameterError
from assay.provenance import KEY, Signature, signature_of
from assay_segmentation.downstream.config import ConfigError, load_config, validate_config
from assay_segmentation.downstream.data import list_images, load_image
from assay_segmentation.downstream.grid import ExperimentVersion, build_grid
from assay_segmentation.downstream.lock import output_lock
from assay_segmentation.downstream.results import MANIFEST, RunSummary, write_json_atomic

__all__ = ["RunSummary", "run_experiments"]


@attrs.frozen
class _Planned:
    key: str
    task: Task
    datasets: tuple[str, ...]


def _load_tasks(config: dict) -> list[_Planned]:
    from assay.plugins import get_registry, load_task

    file = config.get("config_file", "<config>")
    planned = []
    for key in config["tasks"]:
        entry = config.get("task_params", {}).get(key, {})
        fn = entry.get("function", key)
        try:
            if isinstance(fn, dict):
                overrides = {k: v for k, v in fn.items() if k != "name"}
                task = load_task(fn["name"], **overrides)
            else:
                task = load_task(fn)
        except LookupError as exc:
            known = ", ".join(get_registry("task").names()) or "none (is assay-segmentation installed?)"
            raise ConfigError(f"{file}: task_params.{key}.function: expected a registered task ({known}), got "
                              f"{fn!r}: {exc}") from None
        except InvalidParameterError as exc:
            raise ConfigError(f"{file}: task_params.{key}.function: {exc}") from None
        datasets = tuple(str(d) for d in entry.get("datasets", task.default_datasets))
        planned.append(_Planned(key=key, task=task, datasets=datasets))
    return planned


def _result_paths(planned: list[_Planned], versions: list[ExperimentVersion], out_dir: Path,
                  file: str) -> dict[tuple[str, int, tuple[str, ...]], Path]:
    """Every result file the run will write, checked before anything runs: under ``out_dir``, and each written once."""
    top = out_dir.resolve()
    paths = {}
    owners: dict[Path, str] = {}
    for p in planned:
        groups = [p.datasets] if p.task.combine_splits else [(s,) for s in p.datasets]
        for vi, v in enumerate(versions):
            for group in groups:
                combined = p.task.combine_splits and len(group) > 1
                path = (v.output_dir if combined else v.output_dir / group[0]) / p.task.file_name
                if not path.resolve().is_relative_to(top):
                    raise ConfigError(f"{file}: task_params.{p.key}.datasets: the result file of {v.key}, split "
                                      f"{'+'.join(group)!r}, resolves to {path.resolve()}, outside the output folder "
                                      f"{top}; expected split names without '/' or '..'")
                if path.resolve() in owners:
                    raise ConfigError(f"{file}: tasks: tasks {owners[path.resolve()]!r} and {p.key!r} would both "
                                      f"write {path.resolve()} (the same task file {p.task.file_name!r}); expected "
                                      "one result file per task, version and split")
                owners[path.resolve()] = p.key
                paths[(p.key, vi, group)] = path
    return paths


def _check_writable(out_dir: Path, file: str) -> None:
    """Fail before hours of work, not after: the output folder can be created and written."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out_dir):
            pass
    except OSError as exc:
        raise ConfigError(f"{file}: output_path: expected a folder assay can write to, got {out_dir} "
                          f"({exc.strerror or exc})") from None


def _load_aggregations(versions: list[ExperimentVersion]) -> dict[str, Any]:
    from assay.plugins import load_aggregation

    objects: dict[str, Any] = {}
    for v in versions:
        for spec in v.aggregations.values():
            if spec not in objects:
                objects[spec] = load_aggregation(spec)
    return objects


def _fit_aggregations(versions: list[ExperimentVersion], objects: dict[str, Any], base_path: str,
                      progress: bool | None) -> tuple[dict[int, dict[str, dict[str, Any]]], dict[str, Any]]:
    """Per version: unc_type -> aggregation name -> callable; fits (thresholds) pooled per prediction model."""
    needs_fit = {spec for spec, obj in objects.items() if getattr(obj, "needs_fit", False)}
    fitted: dict[tuple[str, str, str], Any] = {}
    info: dict[str, Any] = {}
    if needs_fit:
        pools: dict[tuple[str, str], tuple[list, list]] = defaultdict(lambda: ([], []))
        for v in versions:
            if not any(spec in needs_fit for spec in v.aggregations.values()):
                continue
            split_dir = v.data_dir / "val"
            try:
                ids = list_images(split_dir)
            except FileNotFoundError:
                raise ConfigError(f"Aggregations {sorted(needs_fit)} of {v.key} are fitted on the 'val' split, "
                                  f"but {split_dir} does not exist.") from None
            for image_id in ids:
                img = load_image(split_dir, image_id, split="val", kinds=("pred_seg", *v.unc_types))
                for unc in v.unc_types:
                    maps, preds = pools[(v.pred_model, unc)]
                    maps.append(img.uncertainty[unc])
                    preds.append(img.pred_seg)
        for (pm, unc), (maps, preds) in pools.items():
            for spec in needs_fit:
                obj = objects[spec].fit(maps, preds)
                fitted[(pm, unc, spec)] = obj
                info.setdefault(pm, {}).setdefault(unc, {})[spec] = obj.fit_info() if hasattr(obj, "fit_info") else {}
    per_version: dict[int, dict[str, dict[str, Any]]] = {}
    for i, v in enumerate(versions):
        per_version[i] = {
            unc: {name: fitted.get((v.pred_model, unc, spec), objects[spec]) for name, spec in v.aggregations.items()}
            for unc in v.unc_types
        }
    return per_version, info


def run_signature(planned: list[_Planned], aggregations: dict[str, Any]) -> Signature:
    """The provenance signature of a run (:mod:`assay.provenance`): tasks and aggregations with their options."""
    return signature_of({"tasks": [p.task for p in planned], "aggregations": list(aggregations.items())})


def _chunk_job(job: tuple, shared: dict) -> list[dict[str, Any]]:
    """A chunk of images of one version and split, every task that needs them (runs in a worker)."""
    vi, split, image_ids, keys, phase = job
    return [_image_job((vi, split, image_id, keys, phase), shared) for image_id in image_ids]


def _image_job(job: tuple, shared: dict) -> dict[str, Any]:
    """One image, every task that needs it in this pass."""
    vi, split, image_id, keys, phase = job
    version: ExperimentVersion = shared["versions"][vi]
    tasks: dict[str, Task] = shared["tasks"]
    needs = set().union(*(tasks[k].needs for k in keys))
    kinds: list[str] = [k for k in ("pred_seg", "pred_samples", "ref_segs") if k in needs]
    if needs & {"uncertainty", "aggregated"}:
        kinds += list(version.unc_types)
    ref_dir = version.reference_dir(split, shared["base_path"])
    image = load_image(version.data_dir / split, image_id, split=split, kinds=kinds, reference_dir=ref_dir)
    if "aggregated" in needs:
        aggs = shared["aggregations"][vi]
        image = attrs.evolve(image, aggregated={
            unc: {name: float(fn(image.uncertainty[unc])) for name, fn in aggs[unc].items()}
            for unc in version.unc_types})
    out = {}
    for key in keys:
        ctx = shared["contexts"][(key, vi, split)]
        task = tasks[key]
        out[key] = task.fit_image(image, ctx) if phase == "fit" else task.image_metrics(image, ctx)
    return out


# One pass of run_experiments: (task key, version index, split) -> image id -> the task's result,
# and the task contexts under the same keys.
_Gathered = dict[tuple[str, int, str], dict[str, Any]]
_Contexts = dict[tuple[str, int, str], TaskContext]


def _context(p: _Planned, v: ExperimentVersion, split: str, aggs: dict, base_path: str, fitted: Any) -> TaskContext:
    return TaskContext(version=v, split=split, splits=p.datasets, aggregations=aggs, base_path=base_path,
                       output_dir=v.output_dir / split, fitted=fitted)


def run_experiments(config: dict | str | Path, *, output: str | Path | None = None, executor: Any = None,
                    progress: bool | None = None, verbose: bool = False, overrides: Sequence[str] = (),
                    allow_import: bool = False, tasks: Sequence[str] | None = None) -> RunSummary:
    """Run every configured task for every experiment version and write the result trees.

    A ValUES config (:mod:`assay_segmentation.downstream.values`) runs as ValUES does, on its
    experiment tree (:func:`assay_segmentation.downstream.values_runner.run_values`).

    The output folder (a ValUES run without one: its experiment tree) is locked for the run
    (:mod:`assay_segmentation.downstream.lock`): a second run into it while this one runs is a
    :class:`~assay_segmentation.downstream.lock.FolderInUseError` naming the folder and this
    process' pid; a lock left by a killed run is taken over with a ``StaleLockWarning``.

    Parameters
    ----------
    config : dict or path
        A config file (see :mod:`assay_segmentation.downstream.config`) or an already loaded config.
        A dict not made by :func:`~assay_segmentation.downstream.load_config` is checked with
        :func:`~assay_segmentation.downstream.validate_config` (unknown keys are errors).
    output : path, optional
        The results folder (default: the config's ``output_path``).
    executor : str or executor, optional
        A registered executor spec (``"processes[workers=4]"``) or an executor object;
        default: the config's ``executor`` or ``"serial"``.
    overrides : sequence of str
        Hydra overrides applied when ``config`` is a file (``["base_path=/data/toy"]``).
    allow_import : bool
        Let ``_target_`` import a dotted path that no plugin registers (see
        :mod:`assay_segmentation.downstream.targets`).
    tasks : sequence of str, optional
        Run these tasks instead of the config's ``tasks`` (when ``config`` is a file).
    """
    start = time.perf_counter()
    if not isinstance(config, dict):
        config = load_config(config, overrides, allow_import=allow_import, tasks=tasks)
    if config.get("layout") == "values":
        from assay_segmentation.downstream.values_runner import run_values

        if allow_import:
            config = {**config, "allow_import": True}
        out = output if output is not None else config.get("output_path")
        with output_lock(Path(out).resolve() if out is not None else Path(config["base_path"])):
            return run_values(config, output=output, executor=executor, progress=progress, verbose=verbose)
    elif "config_file" not in config:  # a dict built in Python, not by load_config: check it the same way
        validate_config(config, root="<config dict>")
    if output is not None:
        config = {**config, "output_path": str(Path(output).resolve())}
    versions = build_grid(config)
    planned = _load_tasks(config)
    out_dir = Path(config["output_path"])
    paths = _result_paths(planned, versions, out_dir, config.get("config_file", "<config>"))
    _check_writable(out_dir, config.get("config_file", "<config>"))
    with output_lock(out_dir):  # one run writes a folder at a time (issue 27, item 15)
        return _run_grid(config, versions, planned, paths, out_dir, executor=executor, progress=progress,
                         verbose=verbose, start=start)


def _run_grid(config: dict, versions: list[ExperimentVersion], planned: list[_Planned], paths: dict,
              out_dir: Path, *, executor: Any, progress: bool | None, verbose: bool, start: float) -> RunSummary:
    """The tasks of an assay config over its grid, with the output folder locked (see run_experiments)."""
    from assay.plugins import load_executor

    base_path = config["base_path"]
    objects = _load_aggregations(versions)
    aggs, agg_info = _fit_aggregations(versions, objects, base_path, progress)
    spec = executor if executor is not None else config.get("executor", "serial")
    ex = load_executor(spec) if isinstance(spec, str) else spec
    owned = isinstance(spec, str)
    task_objects = {p.key: p.task for p in planned}
    images: dict[tuple[int, str], list[str]] = {}

    def ids(vi: int, split: str) -> list[str]:
        if (vi, split) not in images:
            images[(vi, split)] = list_images(versions[vi].data_dir / split)
        return images[(vi, split)]

    def run_pass(phase: str, fitted: dict) -> tuple[_Gathered, _Contexts]:
        """One pass over the images: the per-image results and the task contexts they were computed in."""
        grouped: dict[tuple[int, str], list[str]] = defaultdict(list)
        contexts: _Contexts = {}
        for p in planned:
            splits = ((p.task.fit_split,) if p.task.fit_split else ()) if phase == "fit" else p.datasets
            for vi, v in enumerate(versions):
                for split in splits:
                    contexts[(p.key, vi, split)] = _context(p, v, split, aggs[vi], base_path,
                                                            fitted.get((p.key, vi)))
                    if phase == "fit" or p.task.needs:
                        grouped[(vi, split)].append(p.key)
        total = sum(len(ids(vi, split)) for vi, split in grouped)
        size = max(1, -(-total // (4 * max(1, int(getattr(ex, "workers", 1) or 1)))))  # ~4 chunks per worker
        jobs: list[tuple[int, str, tuple[str, ...], tuple[str, ...], str]] = []
        for (vi, split), keys in grouped.items():
            names = ids(vi, split)
            jobs += [(vi, split, tuple(names[i:i + size]), tuple(keys), phase) for i in range(0, len(names), size)]
        shared = {"versions": versions, "tasks": task_objects, "contexts": contexts, "aggregations": aggs,
                  "base_path": base_path}
        results = ex.run(_chunk_job, jobs, shared, progress=progress, desc=f"assay run ({phase})") if jobs else []
        gathered: _Gathered = defaultdict(dict)
        for (vi, split, image_ids, job_keys, _), chunk in zip(jobs, results):
            for image_id, res in zip(image_ids, chunk):
                for key in job_keys:
                    gathered[(key, vi, split)][image_id] = res[key]
        return gathered, contexts

    signature = run_signature(planned, objects).to_string()
    written: list[Path] = []
    n_images = 0
    try:
        fitted: dict[tuple[str, int], Any] = {}
        if any(p.task.fit_split for p in planned):
            fit_results, contexts = run_pass("fit", {})
            for p in planned:
                if p.task.fit_split:
                    for vi in range(len(versions)):
                        ctx = contexts[(p.key, vi, p.task.fit_split)]
                        fitted[(p.key, vi)] = p.task.fit(fit_results.get((p.key, vi, p.task.fit_split), {}), ctx)
        results, contexts = run_pass("eval", fitted)
        for p in planned:
            for vi, v in enumerate(versions):
                groups = [p.datasets] if p.task.combine_splits else [(s,) for s in p.datasets]
                for group in groups:
                    per_image: dict[str, Any] = {}
                    for split in group:
                        part = results.get((p.key, vi, split), {})
                        n_images += len(part)
                        prefix = f"{split}/" if p.task.combine_splits and len(group) > 1 else ""
                        per_image.update({prefix + k: val for k, val in part.items()})
                    ctx = contexts[(p.key, vi, group[0])]
                    if p.task.combine_splits and len(group) > 1:
                        ctx = attrs.evolve(ctx, split="+".join(group), output_dir=v.output_dir)
                    tree = p.task.reduce(per_image, ctx)
                    if isinstance(tree, dict) and KEY not in tree:  # provenance; readers skip it (not an image)
                        tree = {**tree, KEY: signature}
                    written.append(write_json_atomic(paths[(p.key, vi, group)], tree, fsync=False))
                    if verbose:
                        print(f"wrote {written[-1]}")
    finally:
        if owned:
            ex.close()
    manifest = {
        "config_dir": config.get("config_dir"),
        "base_path": base_path,
        "versions": [v.to_dict() | {"output_dir": str(v.output_dir.relative_to(out_dir))
                                    if v.output_dir.is_relative_to(out_dir) else str(v.output_dir)}
                     for v in versions],
        "tasks": {p.key: {"function": p.task.name, "file_name": p.task.file_name, "datasets": list(p.datasets),
                          "combine_splits": bool(p.task.combine_splits and len(p.datasets) > 1),
                          "metrics": [m.to_dict() for m in p.task.metrics]} for p in planned},
        "fitted_aggregations": agg_info,
        # every result file of the run (version x task x split), relative to the output folder
        "files": [str(path.resolve().relative_to(out_dir.resolve())) for path in paths.values()],
        KEY: signature,  # provenance (issue 16): tasks and aggregations with options, versions
    }
    written.append(write_json_atomic(out_dir / MANIFEST, manifest))
    return RunSummary(output_dir=out_dir, versions=len(versions), tasks=tuple(p.key for p in planned),
                      files=tuple(written), images=n_images, fitted=agg_info,
                      seconds=time.perf_counter() - start)
