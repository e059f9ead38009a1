"""The manager's model loop: run a language model over the dataset batch by batch.

``UEManager(dataset, model=..., ...)`` hands the model to a *model backend*, found in
the ``model_backend`` registry (``assay_register_model_backends``; ``assay-transformers``
registers ``transformers``). The manager never imports a backend or its libraries. For
each batch of ``batch_size`` examples, as LM-Polygraph's manager does:

1. **statistics**: the backend's stat calculators (they read ``input_texts``, the
   prompts) and the registered ones, ordered by the statistics graph;
2. **estimators** on the batch's statistics;
3. **generation metrics** on the batch's statistics.

A backend with ``shared_stats(seed=...)`` puts what it returns in every batch's statistics
(not saved): ``assay-transformers`` passes the model and its tokenizer as ``model`` and
``tokenizer``, as LM-Polygraph's manager does, for the estimators that ask the model a
follow-up question or read its config. A ``shared_stats`` that takes ``generation_params``
also gets the run's (the black-box model asks its follow-up questions with them).

The batches' values are then joined and the UE metrics scored once, as for stored
outputs. With ``ignore_exceptions=True`` an estimator or generation metric that raises
is dropped for the rest of the run: the manager warns, adds a note naming it, the batch
and the error, and lists it in ``failed``. With ``False`` (the default) the error
propagates. A statistic calculator that raises always propagates (nothing could be
computed from the batch); so does any error with ``ignore_exceptions=False``. Then the
finished batches are not lost: ``man.partial`` holds their results (``n_examples``: how many
examples, from the first; ``stats``, ``estimations`` and ``gen_metrics`` by name, one value per
example), a note says where the run stopped, and the error carries the same note. A
backend may keep more (the ``openai`` backend of assay-transformers keeps every answer
received, so a second run with it sends only the requests not answered yet).

**Resuming** (``cache_dir=``): after each batch, its kept statistics and values are written to
disk (:mod:`assay_uncertainty.manager.resume`); a run started again, in any process, reads the
examples done back and runs only the others, batched as an uninterrupted run batches them. Every
batch's statistics hold ``example_positions`` (:data:`assay.uncertainty.base.EXAMPLE_POSITIONS`):
the examples' positions in the run, which a backend uses to seed an example's sampling.

A backend's ``base_stats`` (when it has one) names the stored-output fields it gives for
every run (default: ``answer``, ``log_probs``, ``token_entropies``; a black-box model
without log-probabilities gives ``answer`` only).

The dataset is what the stored-output path reads (records, columns or a file) with an
``input`` field: the prompt of each example; other fields (``reference``, ``references``,
``correct``, ``id`` ...) are kept and read by the generation metrics.

What is kept in ``stats`` (and saved): the stored-output fields (see
:mod:`assay_uncertainty.manager.inputs`: ``answer``, ``log_probs``, ``token_entropies``,
``sample_texts``, ``sample_log_probs`` ... and the dataset's fields), ``input_texts``, and
the statistics named in ``save_stats`` (``greedy_log_probs`` is a ``(T, V)`` array per
example: only saved when asked for). A loaded manager re-runs estimators and rescoring
from these without the model. A note records the run (the backend's ``repr``, batch size,
``max_new_tokens``, ``samples_n``, generation parameters, seed); notes are saved.
"""

from __future__ import annotations

import inspect
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.uncertainty.base import EXAMPLE_POSITIONS

__all__ = ["GENERATION_PARAMS", "INSTALL_HINT", "POSITIONS", "resolve_model_backend", "run_model_loop"]

#: the keys of ``generation_params`` (what every model backend understands)
GENERATION_PARAMS = ("temperature", "top_k", "top_p", "stop_strings", "repetition_penalty")

#: what to install when no model backend is
INSTALL_HINT = "pip install assay-transformers"

#: statistics the loop always computes (the gen metrics read ``answer`` without declaring it)
BASE_STATS = ("answer", "log_probs", "token_entropies")

#: the statistic the loop adds to every batch: the positions of its examples in the run (0-based), so a model
#: backend seeds or names an example the same way whichever batch, or resumed run, computes it
POSITIONS = EXAMPLE_POSITIONS


def resolve_model_backend(model: Any, options: Mapping[str, Any] | None = None) -> Any:
    """The backend object for ``model``: ``model`` itself when it has ``calculators``, else the first
    registered model backend that accepts it, created with ``options``."""
    options = dict(options or {})
    if callable(getattr(model, "calculators", None)):
        if options:
            raise InvalidParameterError(
                f"'model_options' ({', '.join(sorted(options))}) apply when the model is loaded by a backend; "
                "the model given is already a backend object.")
        return model
    from assay.plugins import get_registry

    entries = list(get_registry("model_backend"))
    if not entries:
        raise InvalidParameterError(
            f"UEManager(model=...) needs a model backend, and none is installed: for Hugging Face models, "
            f"{INSTALL_HINT} (see docs/transformers.md).")
    for entry in entries:
        accepts = getattr(entry.factory, "accepts", None)
        if accepts is None or accepts(model):
            return entry.create(model=model, **options)
    names = ", ".join(e.name for e in entries)
    shown = str(model) if isinstance(model, (str, os.PathLike)) else type(model).__name__
    raise InvalidParameterError(f"No installed model backend ({names}) accepts the model {shown!r:.120}.")


def _take(column: Any, positions: Sequence[int]) -> Any:
    """The values of ``column`` at ``positions``: a slice when they are consecutive (an array stays an array)."""
    first = positions[0]
    if list(positions) == list(range(first, first + len(positions))):
        return column[first:first + len(positions)]
    if isinstance(column, np.ndarray):
        return column[np.asarray(positions)]
    return [column[p] for p in positions]


def _calculators(man: Any, backend: Any) -> list[Any]:
    from assay.plugins import get_registry

    calcs = list(man._extra_calcs)
    calcs.extend(backend.calculators(max_new_tokens=man.max_new_tokens, generation_params=man.generation_params,
                                     samples_n=man.samples_n, seed=man.seed))
    for entry in get_registry("stat_calculator"):
        try:
            calcs.append(entry.create())
        except Exception:  # noqa: BLE001 - a calculator that needs options cannot be a default producer
            continue
    return calcs


def _shared_stats(man: Any, backend: Any) -> dict[str, Any]:
    """The backend's ``shared_stats`` for this run (module docstring); none without one."""
    shared = getattr(backend, "shared_stats", None)
    if not callable(shared):
        return {}
    kwargs: dict[str, Any] = {"seed": man.seed}
    if "generation_params" in inspect.signature(shared).parameters:
        kwargs["generation_params"] = man.generation_params
    return dict(shared(**kwargs))


def _batch_values(values: Any, n: int, who: str, start: int) -> list[Any]:
    """An estimator's or metric's values for a batch of ``n`` examples, as a list (one item per example)."""
    if (isinstance(values, np.ndarray) and values.ndim >= 1) or isinstance(values, (list, tuple)):
        items = list(values)
    else:
        raise InvalidParameterError(f"{who} returned a {type(values).__name__} for the batch starting at example "
                                    f"{start}; expected one value per example.")
    if len(items) != n:
        raise InvalidParameterError(f"{who} returned {len(items)} values for the batch of {n} examples starting at "
                                    f"example {start}.")
    return items


def _open_cache(man: Any, backend: Any, data: Mapping[str, Any]) -> Any:
    """The run's :class:`~assay_uncertainty.manager.resume.ResumeCache` (``cache_dir``), or None."""
    if man.cache_dir is None:
        return None
    from assay_uncertainty.manager.resume import ResumeCache, example_digests, run_description

    digests = example_digests(data, man.n_examples)
    return ResumeCache(man.cache_dir, run_description(man, backend, digests), digests)


def run_model_loop(man: Any) -> None:
    """Fill ``man.stats``, ``man.estimations`` and ``man.gen_metrics`` by running the model (module docstring)."""
    from assay.executors.base import progress_bar, show_progress
    from assay.uncertainty.base import check_level
    from assay.uncertainty.graph import plan_calculators
    from assay_uncertainty.manager.inputs import FIELDS

    backend = resolve_model_backend(man.model, man.model_options)
    man.notes.append(f"model run: {backend!r}, batch_size={man.batch_size}, max_new_tokens={man.max_new_tokens}, "
                     f"samples_n={man.samples_n}, generation_params={man.generation_params}, seed={man.seed}")
    data = man.stats
    n = man.n_examples
    if POSITIONS in data:
        raise InvalidParameterError(f"The dataset has a field {POSITIONS!r}: the model loop gives each batch that "
                                    "statistic (the examples' positions in the run); rename the field.")
    needed: dict[str, list[str]] = {s: ["the model loop"] for s in getattr(backend, "base_stats", BASE_STATS)}
    for name, obj in [*man._estimators, *man._gen]:
        for dep in getattr(obj, "dependencies", ()):
            needed.setdefault(dep, []).append(repr(name))
    for stat in man.save_stats:
        needed.setdefault(stat, []).append("save_stats")
    # objects every batch sees (the backend's ``shared_stats``: LM-Polygraph's ``model``, ``tokenizer``); never kept.
    # They are statistics like the data's columns: an estimator that declares one (Focus: ``tokenizer``) needs no
    # calculator for it
    shared = _shared_stats(man, backend)
    plan = plan_calculators(needed, [*data.keys(), *shared, POSITIONS], _calculators(man, backend))
    active = {"estimator": list(man._estimators), "generation metric": list(man._gen)}
    keep = set(FIELDS) | {"input_texts"} | set(man.save_stats)
    cache = _open_cache(man, backend, data)
    # per example: (kept statistics, {(role, name): value}); filled from the cache, then batch by batch
    done: dict[int, tuple[dict[str, Any], dict[tuple[str, str], Any]]] = {}
    dropped: list[dict[str, str]] = []
    if cache is not None:
        for pos, (kept_stats, kept_values, drops) in cache.load().items():
            done[pos] = (kept_stats, kept_values)
            dropped.extend(d for d in drops if d not in dropped)
        for d in dropped:  # dropped by an earlier process of this run: dropped here too, as it would have been
            role = d["role"]
            active[role] = [(nm, o) for nm, o in active.get(role, []) if nm != d["name"]]
            man.notes.append(d["note"])
            man.failed[d["name"]] = d["error"]
            warnings.warn(f"UEManager: {d['note']} (read from the cache)", RuntimeWarning, stacklevel=3)
        man.notes.append(f"model run cache: {cache.folder} ({len(done)} of {n} examples read back)")
    todo = [p for p in range(n) if p not in done]
    size = man.batch_size
    batches = [todo[i:i + size] for i in range(0, len(todo), size)]
    bar = progress_bar(len(batches), enabled=show_progress(man.progress, len(batches)), desc="UEManager batches")
    batch: list[int] = []
    try:
        for batch in batches:
            start, stop = batch[0], batch[-1] + 1
            stats = {**shared, **{k: _take(v, batch) for k, v in data.items()}, POSITIONS: list(batch)}
            for calc in plan:
                out = calc(stats)
                for stat in calc.stats:
                    if stat not in out:
                        raise InvalidParameterError(
                            f"Stat calculator {calc.name or type(calc).__name__!r} declared {stat!r} but did not "
                            "return it.")
                    if stat not in stats:
                        stats[stat] = list(out[stat])
            values: dict[tuple[str, str], list[Any]] = {}
            for role, objs in active.items():
                for name, obj in list(objs):
                    try:
                        values[(role, name)] = _batch_values(obj(stats), len(batch), f"{role} {name!r}", start)
                    except Exception as exc:
                        if not man.ignore_exceptions:
                            raise
                        objs.remove((name, obj))
                        note = (f"{role} {name!r} raised {type(exc).__name__} on the batch of examples {start} to "
                                f"{stop - 1} ({exc}); dropped for the rest of the run (ignore_exceptions=True).")
                        man.notes.append(note)
                        man.failed[name] = f"{type(exc).__name__}: {exc}"
                        dropped.append({"role": role, "name": name, "error": man.failed[name], "note": note})
                        warnings.warn(f"UEManager: {note}", RuntimeWarning, stacklevel=3)
            # the rest (T x V rows ...) is dropped with the batch
            kept = {k: list(v) for k, v in stats.items() if k not in data and k in keep and k not in shared}
            if cache is not None:
                cache.add(batch, kept, values, dropped)
            for i, pos in enumerate(batch):
                done[pos] = ({k: v[i] for k, v in kept.items()}, {key: v[i] for key, v in values.items()})
            bar.update(1)
    except Exception as exc:
        _keep_partial(man, exc, batch, data, done, active)
        raise
    finally:
        bar.close()
    columns, collected = _joined(done, n, active)
    data.update(columns)
    man.stats = data
    for name, est in active["estimator"]:
        level = check_level(getattr(est, "level", "sequence"), owner=f"estimator {name!r}")
        man.estimations[(level, name)] = man._checked(collected.get(("estimator", name), []), level,
                                                      f"estimator {name!r}")
        man.levels[name] = level
    for name, gm in active["generation metric"]:
        level = check_level(gm.level, owner=f"generation metric {name!r}")
        man.gen_metrics[(level, name)] = man._checked(collected.get(("generation metric", name), []), level,
                                                      f"generation metric {name!r}")
    man.estimator_names = [n for n, _ in active["estimator"]]
    man.gen_metric_names = [n for n, _ in active["generation metric"]]


def _joined(done: Mapping[int, tuple[dict[str, Any], dict[tuple[str, str], Any]]], n: int,
            active: Mapping[str, list[tuple[str, Any]]]
            ) -> tuple[dict[str, list[Any]], dict[tuple[str, str], list[Any]]]:
    """The examples ``0 .. n - 1`` of ``done`` joined into columns and value lists (active estimators / metrics)."""
    columns: dict[str, list[Any]] = {}
    collected: dict[tuple[str, str], list[Any]] = {}
    wanted = [(role, name) for role, objs in active.items() for name, _ in objs]
    names = list(done[0][0]) if n else []
    for pos in range(n):
        stats, values = done[pos]
        if sorted(stats) != sorted(names):
            raise InvalidParameterError(f"UEManager: example {pos} has the statistics {sorted(stats)}, example 0 "
                                        f"{sorted(names)} (a cache of another run?).")
        for name in names:
            columns.setdefault(name, []).append(stats[name])
        for key in wanted:
            if key not in values:
                raise InvalidParameterError(f"UEManager: example {pos} has no value of {key[0]} {key[1]!r}.")
            collected.setdefault(key, []).append(values[key])
    return columns, collected


def _keep_partial(man: Any, exc: Exception, batch: Sequence[int], data: Mapping[str, Any],
                  done: Mapping[int, tuple[dict[str, Any], dict[tuple[str, str], Any]]],
                  active: Mapping[str, list[tuple[str, Any]]]) -> None:
    """On an error in the batch ``batch``: keep the results of the examples done before the first one missing in
    ``man.partial`` (the first ``n_examples`` examples), note it, and add the note to the error."""
    count = next((p for p in range(man.n_examples) if p not in done), man.n_examples)
    columns, collected = _joined({p: done[p] for p in range(count)}, count, active)
    stats = {k: v[:count] for k, v in data.items()} | columns

    def role_values(role: str) -> dict[str, list[Any]]:
        return {name: values for (r, name), values in collected.items() if r == role}

    man.partial = {"n_examples": count, "stats": stats, "estimations": role_values("estimator"),
                   "gen_metrics": role_values("generation metric")}
    where = f"the batch of examples {batch[0]} to {batch[-1]}" if batch else "its start"
    note = (f"model run stopped at {where} ({type(exc).__name__}: {exc}); the results of the {count} examples "
            f"before it are kept in UEManager.partial.")
    if man.cache_dir is not None:
        note += f" The batches finished are in the cache folder {str(man.cache_dir)!r}: running again resumes."
    man.notes.append(note)
    if hasattr(exc, "add_note"):  # Python 3.11+
        exc.add_note(f"UEManager: {note}")


def check_loop_options(*, batch_size: Any, max_new_tokens: Any, samples_n: Any, seed: Any,
                       save_stats: Sequence[Any]) -> None:
    """Validate the model-loop parameters of ``UEManager``; errors name the parameter."""
    for name, value in (("batch_size", batch_size), ("max_new_tokens", max_new_tokens), ("samples_n", samples_n)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise InvalidParameterError(f"The {name!r} parameter must be an integer >= 1; got {value!r}.")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise InvalidParameterError(f"The 'seed' parameter must be an integer >= 0 or None; got {seed!r}.")
    if isinstance(save_stats, str) or not all(isinstance(s, str) for s in save_stats):
        raise InvalidParameterError(f"The 'save_stats' parameter must be a list of statistic names; got "
                                    f"{save_stats!r}.")
