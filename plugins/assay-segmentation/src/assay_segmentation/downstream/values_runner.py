"""Running a ValUES config on a ValUES experiment tree (``assay run eval_config_toy.yaml base_path=...``).

ValUES' ``eval_experiments.py`` runs, for each name in ``tasks``, the entry
``task_params[name]`` (or each entry of a list, in order): its ``function`` on every
version and dataset split, or, with ``accumulated: True``, on all of them and then the
``postprocess_function`` on the merged results. assay does the same, with the work over
images spread over an executor, and the steps are plugin objects (ValUES' dotted paths
resolve to them through aliases, :mod:`assay_segmentation.downstream.targets`). A step object has:

``needs``
    the arrays it reads per image (``pred_seg``, ``pred_samples``, ``ref_segs``,
    ``uncertainty``, ``aggregated``); empty for steps that read result files only;
``image_values(image, ctx)``
    per image, in a worker (:class:`~assay.downstream.ImageData`, :class:`StepContext`);
``version_files(per_image, ctx, store)``
    (not accumulated) the files of one version and split: ``{path: JSON tree}``;
``accumulate(per_image, ctx)``
    (accumulated) a nested dict; the dicts of every version and split are merged
    key by key (pydantic's ``deep_update``, as ValUES does);
``postprocess(results, store)`` and ``outputs()``
    (postprocess steps) the files made from the merged results, and the paths it writes
    (so that a step needing one of them can run its entry first).

Aggregations come from the step objects that carry ``aggregations`` (ValUES'
``aggregate_uncertainties``), bound per prediction model and uncertainty type with
``bind(pred_model=..., unc_type=..., read_json=...)`` when they have it (ValUES'
``threshold_aggregation`` reads ``threshold_analysis.json``). Their ``requires()`` lists
files they read.

Dependencies: when a step needs aggregated uncertainties whose threshold file does not
exist yet, the ``task_params`` entry whose postprocess writes it (ValUES' ``threshold``)
runs first, in memory: its files are written only when its name is in ``tasks``.
Aggregated uncertainties are always computed from the maps (a stale
``aggregated_*.json`` is never read).

Files go where ValUES writes them, or, with an output folder, to the same relative path
under it (paths outside ``base_path`` keep their full path below the output folder); reads
look in the output folder first. A manifest, :data:`MANIFEST`, lists the files written.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from assay.errors import ConfigError
from assay.jsonio import decode_numbers, read_json
from assay_segmentation.downstream.results import RunSummary, write_json_atomic
from assay_segmentation.downstream.values import (
    STEP_KINDS,
    ValuesVersion,
    build_values_grid,
    list_values_images,
    load_values_image,
    task_entries,
)

__all__ = ["MANIFEST", "StepContext", "Store", "run_values"]

#: the list of files a ValUES run wrote, at the top of the output folder (or of base_path)
MANIFEST = "assay-values-run.json"


class Store:
    """Result files by their ValUES path: written (or kept in memory), and read back, output folder first."""

    def __init__(self, base_path: Path, output: Path | None) -> None:
        self.base_path = Path(base_path)
        self.output = Path(output) if output is not None else None
        self.memory: dict[Path, Any] = {}
        self.written: list[Path] = []

    def real(self, path: str | Path) -> Path:
        """Where a ValUES path is written: itself, or its place under the output folder."""
        path = Path(path)
        if self.output is None:
            return path
        try:
            return self.output / path.relative_to(self.base_path)
        except ValueError:
            return self.output / path.relative_to(path.anchor)

    def exists(self, path: str | Path) -> bool:
        path = Path(path)
        return path in self.memory or self.real(path).is_file() or path.is_file()

    def read_json(self, path: str | Path) -> Any:
        """A result file (in memory, under the output folder, or in the tree); None when there is none."""
        path = Path(path)
        if path in self.memory:
            return self.memory[path]
        for candidate in (self.real(path), path):
            if candidate.is_file():
                return decode_numbers(read_json(candidate, what="result file", legacy_constants=True))
        return None

    def write(self, path: str | Path, tree: Any, *, persist: bool) -> None:
        path = Path(path)
        self.memory[path] = tree
        if persist:
            self.written.append(write_json_atomic(self.real(path), tree, fsync=False))


@attrs.frozen
class StepContext:
    """What a step knows about the version and split it works on."""

    version: ValuesVersion
    split: str | None
    #: uncertainty type -> aggregation name -> bound aggregation (every name the config defines)
    aggregations: dict[str, dict[str, Any]]
    entry: str
    #: what the step's fit() returned for this version (steps with ``fit_split``), else None
    fitted: Any = None

    @property
    def dataset_path(self) -> Path:
        return self.version.dataset_path(self.split)

    @property
    def exp_path(self) -> Path:
        return self.version.exp_path


def deep_update(base: dict, new: Mapping) -> dict:
    """``base`` with ``new`` merged in, mapping by mapping (pydantic's ``deep_update``, in place)."""
    for key, value in new.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            deep_update(base[key], value)
        else:
            base[key] = dict(value) if isinstance(value, Mapping) else value
    return base


def _kinds(step: Any, version: ValuesVersion) -> tuple[str, ...]:
    needs = set(getattr(step, "needs", ()))
    kinds = [k for k in ("pred_seg", "pred_samples", "ref_segs") if k in needs]
    if needs & {"uncertainty", "aggregated"}:
        kinds += list(version.unc_types)
    return tuple(kinds)


def _chunk(job: tuple, shared: dict) -> list[Any]:
    vi, split, image_ids = job
    version: ValuesVersion = shared["versions"][vi]
    step = shared["step"]
    ctx: StepContext = shared["contexts"][(vi, split)]
    needs = set(getattr(step, "needs", ()))
    out = []
    for image_id in image_ids:
        image = load_values_image(version, split, image_id, _kinds(step, version))
        if "aggregated" in needs:
            image = attrs.evolve(image, aggregated={
                unc: {name: float(ctx.aggregations[unc][name](image.uncertainty[unc]))
                      for name in version.aggregations}
                for unc in version.unc_types})
        out.append(step.fit_image(image, ctx) if shared["phase"] == "fit" else step.image_values(image, ctx))
    return out


class _Run:
    def __init__(self, config: dict, output: Path | None, executor: Any, verbose: bool, progress: bool | None):
        from assay_segmentation.downstream.targets import instantiate

        self.config = config
        self.file = str(config.get("config_file", "<config>"))
        self.versions = build_values_grid(config)
        self.store = Store(Path(config["base_path"]), output)
        self.verbose = verbose
        self.progress = progress
        self.executor = executor
        self.allow_import = bool(config.get("allow_import", False))
        self.instantiate = instantiate
        self.done: set[str] = set()
        self.running: list[str] = []
        self.images = 0
        self._bound: dict[tuple[int, str], dict[str, Any]] = {}
        self.aggregations = self._aggregations()

    # ---- steps of an entry
    def _steps(self, name: str) -> list[tuple[dict, Any, Any, tuple[Any, ...]]]:
        if name not in self.config["task_params"]:
            reason = self.config.get("unresolved_task_params", {}).get(name)
            raise ConfigError(reason or f"{self.file}: task_params: expected an entry {name!r}, got none")
        entry = self.config["task_params"][name]
        out = []
        for k, spec in enumerate(task_entries(entry)):
            at = ("task_params", name) + ((k,) if isinstance(entry, list) else ())
            fn = self.instantiate(spec["function"], kinds=STEP_KINDS, file=self.file, at=at + ("function",),
                                  allow_import=self.allow_import)
            post = None
            if "postprocess_function" in spec:
                post = self.instantiate(spec["postprocess_function"], kinds=STEP_KINDS, file=self.file,
                                        at=at + ("postprocess_function",), allow_import=self.allow_import)
            out.append((spec, fn, post, at))
        return out

    def _aggregations(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for name in self.config["task_params"]:
            for _, fn, _, _ in self._steps(name):
                found.update(dict(getattr(fn, "aggregations", None) or {}))
        return found

    def _producer(self, path: Path) -> str | None:
        for name in self.config["task_params"]:
            if name in self.done or name in self.running:
                continue
            for _, _, post, _ in self._steps(name):
                if post is not None and hasattr(post, "outputs") and Path(path) in {Path(p) for p in post.outputs()}:
                    return name
        return None

    def _bind(self, vi: int, unc: str) -> dict[str, Any]:
        """The aggregations of one version and uncertainty type, bound (thresholds read), dependencies run."""
        key = (vi, unc)
        if key in self._bound:
            return self._bound[key]
        version = self.versions[vi]
        bound = {}
        for name, agg in self.aggregations.items():
            for req in getattr(agg, "requires", lambda: [])():
                if not self.store.exists(req):
                    producer = self._producer(Path(req))
                    if producer is None:
                        raise ConfigError(
                            f"{self.file}: aggregation {name!r} reads {req}, which does not exist, and no task_params "
                            f"entry writes it (ValUES' 'threshold' entry does: add it to tasks or to task_params)")
                    self.run_entry(producer, persist=producer in self.config["tasks"])
            if hasattr(agg, "bind"):
                agg = agg.bind(pred_model=version.pred_model, unc_type=unc, read_json=self.store.read_json)
            bound[name] = agg
        self._bound[key] = bound
        return bound

    def _contexts(self, name: str, step: Any, datasets: list[str | None]) -> dict[tuple[int, str | None], StepContext]:
        needs = set(getattr(step, "needs", ()))
        contexts = {}
        for vi, v in enumerate(self.versions):
            aggs: dict[str, dict[str, Any]] = {}
            if needs & {"aggregated"} or getattr(step, "aggregations", None):
                for unc in v.unc_types:
                    aggs[unc] = self._bind(vi, unc)
                missing = [a for a in v.aggregations if a not in self.aggregations] if "aggregated" in needs else []
                if missing:
                    raise ConfigError(f"{self.file}: experiments: {v.key} lists aggregations {missing} that no "
                                      f"task_params entry defines (ValUES: task_params.aggregation.function."
                                      f"aggregations); defined: {', '.join(self.aggregations) or 'none'}")
            for split in datasets:
                contexts[(vi, split)] = StepContext(version=v, split=split, aggregations=aggs, entry=name)
        return contexts

    def _image_pass(self, step: Any, contexts: dict[tuple[int, str | None], StepContext],
                    phase: str = "eval") -> dict[tuple, dict]:
        from assay.plugins import load_executor

        per: dict[tuple, dict[str, Any]] = {key: {} for key in contexts}
        if not getattr(step, "needs", ()):
            for (vi, split) in contexts:
                with contextlib.suppress(FileNotFoundError):
                    per[(vi, split)] = dict.fromkeys(list_values_images(self.versions[vi], split))
            return per
        jobs = []
        total = {key: list_values_images(self.versions[key[0]], key[1]) for key in contexts}
        spec = self.executor if self.executor is not None else self.config.get("executor", "serial")
        ex = load_executor(spec) if isinstance(spec, str) else spec
        workers = max(1, int(getattr(ex, "workers", 1) or 1))
        n = sum(len(v) for v in total.values())
        size = max(1, -(-n // (4 * workers)))
        for (vi, split), ids in total.items():
            jobs += [(vi, split, tuple(ids[i:i + size])) for i in range(0, len(ids), size)]
        shared = {"versions": self.versions, "step": step, "contexts": contexts, "phase": phase}
        try:
            results = ex.run(_chunk, jobs, shared, progress=self.progress, desc="assay run (ValUES)") if jobs else []
        finally:
            if isinstance(spec, str):
                ex.close()
        for (vi, split, chunk), values in zip(jobs, results):
            per[(vi, split)].update(zip(chunk, values))
            self.images += len(chunk)
        return per

    def _fit(self, name: str, step: Any, persist: bool) -> dict[int, Any]:
        """Per version, what ``step.fit`` makes of its ``fit_split`` images (or ``step.load_fit`` finds saved)."""
        split = step.fit_split
        fitted: dict[int, Any] = {}
        contexts = {}
        for (vi, _), ctx in self._contexts(name, step, [split]).items():
            saved = step.load_fit(ctx, self.store) if hasattr(step, "load_fit") else None
            if saved is None:
                contexts[(vi, split)] = ctx
            else:
                fitted[vi] = saved
        per = self._image_pass(step, contexts, phase="fit") if contexts else {}
        for (vi, _), ctx in contexts.items():
            fitted[vi], files = step.fit(per[(vi, split)], ctx)
            for path, tree in files.items():
                self._write(path, tree, persist)
        return fitted

    def run_entry(self, name: str, *, persist: bool) -> None:
        """Run one task_params entry (each of its steps, in order) on every version and split."""
        if name in self.done:
            return
        self.running.append(name)
        for spec, fn, post, _at in self._steps(name):
            datasets: list[str | None] = list(spec.get("datasets") or [None])
            contexts = self._contexts(name, fn, datasets)
            fitted = self._fit(name, fn, persist) if getattr(fn, "fit_split", None) else {}
            if fitted:
                contexts = {k: attrs.evolve(c, fitted=fitted[k[0]]) for k, c in contexts.items()}
            per = self._image_pass(fn, contexts)
            if spec.get("accumulated", False):
                merged: dict[str, Any] = {}
                for key, ctx in contexts.items():
                    deep_update(merged, fn.accumulate(per[key], ctx))
                files = post.postprocess(merged, self.store)
                for path, tree in files.items():
                    self._write(path, tree, persist)
            else:
                for key, ctx in contexts.items():
                    if key[0] in fitted:
                        ctx = attrs.evolve(ctx, fitted=fitted[key[0]])
                    for path, tree in fn.version_files(per[key], ctx, self.store).items():
                        self._write(path, tree, persist)
        self.running.remove(name)
        self.done.add(name)

    def _write(self, path: Any, tree: Any, persist: bool) -> None:
        self.store.write(path, tree, persist=persist)
        if persist and self.verbose:
            print(f"wrote {self.store.written[-1]}")


def run_values(config: dict, *, output: str | Path | None = None, executor: Any = None,
               progress: bool | None = None, verbose: bool = False) -> RunSummary:
    """Run every task of a loaded ValUES config (see the module docstring); return what was done."""
    start = time.perf_counter()
    out = output if output is not None else config.get("output_path")
    run = _Run(config, Path(out).resolve() if out is not None else None, executor, verbose, progress)
    for name in config["tasks"]:
        run.run_entry(name, persist=True)
    top = run.store.output or Path(config["base_path"])
    files = [str(p) for p in run.store.written]
    manifest = {"layout": "values", "config_file": config.get("config_file"), "base_path": config["base_path"],
                "second_cycle_path": config.get("second_cycle_path"), "tasks": list(config["tasks"]),
                "versions": [v.to_dict() for v in run.versions], "files": files}
    path = write_json_atomic(top / MANIFEST, manifest)
    return RunSummary(output_dir=top, versions=len(run.versions), tasks=tuple(config["tasks"]),
                      files=(*run.store.written, path), images=run.images, fitted={},
                      seconds=time.perf_counter() - start)
