"""``UEManager``: estimators, generation metrics and UE metrics over stored model outputs.

>>> man = UEManager(records, estimators=["msp"], gen_metrics=["accuracy"], ue_metrics=["prr"])  # doctest: +SKIP
>>> man()                                                                                         # doctest: +SKIP
>>> man.metrics[("sequence", "msp", "accuracy", "prr")]                                          # doctest: +SKIP

Keys: ``estimations[(level, estimator)]``, ``gen_metrics[(level, gen_metric)]`` and
``metrics[(level, estimator, gen_metric, ue_metric)]``, with names as given (``"prr[max_rejection=0.5]"``).
A UE metric with named extra scores (its ``extra_scores``: PRR's ``prr_normalized``) adds
one entry per extra score, named like the metric with the score's name in front of the
same overrides (``"prr_normalized[max_rejection=0.5]"``); the manager tests no name.
Only pairs of the same level are scored; token- and claim-level values are flattened over the examples.
A UE metric that needs binary quality (ROC-AUC) is skipped, with a note in ``notes``,
for a generation metric that is not 0 / 1; a calibration UE metric (``requires_unit_interval``)
likewise for an estimator whose values leave [0, 1].

NaN policy (``nan_policy=``): ``"drop"`` (default) scores each (estimator, generation
metric) pair on the examples where both are finite, warns with the count dropped, and
records it in ``dropped``; no value is ever replaced by a "most confident" substitute.
``"raise"`` makes a NaN an error naming the estimator or metric and the example.
No finite pair left gives NaN.

Intervals and comparisons (``n_resamples=``, ``confidence_level=``, ``seed=``): with
``n_resamples > 0`` every score gets a percentile bootstrap interval in
``intervals[key] -> (low, high)``, computed as :func:`assay.evaluate` computes them (the
UE metric is a :class:`~assay.metrics.Metric` over ``(u, q)`` rows; all UE metrics of one
(estimator, generation metric) pair share one resampling draw). ``compare(key_a, key_b)``
is the paired test of two estimators under one generation metric and UE metric
(:func:`assay.compare`: shared resample indices, a bootstrap interval of the difference, a
p-value). The default ``n_resamples=0`` keeps a run as cheap as before (no intervals):
each resample re-sorts the examples once per UE metric and pair.

``save(path)`` writes ``manager.json`` (names, levels, metrics, notes, a manifest with
checksums) and ``arrays.npz`` (estimations, generation-metric values and ``stats``; ragged
ones flat with their lengths), all or nothing; ``UEManager.load(path)`` verifies and reads
them back without pickle, ``rescore`` computes further UE metrics on the saved values,
and the saved ``stats`` let estimators run again (see :mod:`assay_uncertainty.manager.persist`).
An estimator with a fitted state (the density-based estimators) is saved with it, and
``estimate(data)`` runs a loaded manager's estimators on new data without their training data.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from assay.errors import AssayError, InvalidParameterError, UndefinedMetricWarning, UnknownNameError
from assay.metrics.api import new_seed
from assay.metrics.ci import intervals as bootstrap_intervals
from assay.metrics.significance import Comparison
from assay.plugins.names import parse_name
from assay.render import Grid, render_grid
from assay.uncertainty.base import Estimator, GenerationMetric, StatCalculator, UEMetric, check_level
from assay.uncertainty.graph import plan_calculators
from assay.validation import check_int, check_number, check_seed
from assay_uncertainty.manager.comparisons import compare_estimators, compare_to_best
from assay_uncertainty.manager.inputs import load_ue_data, records_to_columns
from assay_uncertainty.manager.persist import FORMAT_VERSION, load_manager, save_manager  # noqa: F401 - FORMAT_VERSION kept here
from assay_uncertainty.manager.tables import manager_grid

__all__ = ["UEManager"]

NAN_POLICIES = ("drop", "raise")


def _label(obj: Any, spec: Any) -> str:
    return spec if isinstance(spec, str) else (getattr(obj, "name", "") or type(obj).__name__)


def extra_label(ue_label: str, score_name: str) -> str:
    """The key of a UE metric's named extra score: ``prr[max_rejection=0.5]`` + ``prr_normalized``
    -> ``prr_normalized[max_rejection=0.5]`` (the score's name with the metric's overrides)."""
    head = ue_label.split("[", 1)[0]
    return score_name + ue_label[len(head):].strip()


def score_labels(ue_label: str, metric: Any) -> dict[str, str]:
    """``{score name: key}`` of every score a UE metric declares (``main_score`` first)."""
    names = getattr(metric, "score_names", None) or (getattr(metric, "main_score", ue_label),)
    main = names[0]
    return {name: ue_label if name == main else extra_label(ue_label, name) for name in names}


class _CallableUEMetric(UEMetric):
    """A plain function ``f(u, q) -> float`` as a UE metric (so it gets intervals too)."""

    def __init__(self, fn: Any, name: str) -> None:
        super().__init__(higher_is_better=getattr(fn, "higher_is_better", True))
        self.fn = fn
        self.name = name
        self.requires_binary = bool(getattr(fn, "requires_binary", False))
        self.requires_unit_interval = bool(getattr(fn, "requires_unit_interval", False))

    def _score(self, u: np.ndarray, q: np.ndarray) -> float:
        return float(self.fn(u, q))


class UEManager:
    """Compute uncertainty estimations, generation metrics and every same-level UE metric.

    Parameters
    ----------
    data : path, list of records, or mapping of columns
        Stored model outputs (see :mod:`assay_uncertainty.manager.inputs` for the schema).
    estimators : sequence of registered names or :class:`Estimator`
    gen_metrics : sequence of names from :data:`~assay.uncertainty.gen_metrics.GENERATION_METRICS`
        or :class:`GenerationMetric` instances
    ue_metrics : sequence of registered names (``"prr[max_rejection=0.5]"``) or :class:`UEMetric`
    stat_calculators : optional extra :class:`StatCalculator` objects (or names); they take
        precedence over the registered ones when two produce the same statistic
    nan_policy : {"drop", "raise"}
    model : optional; a folder path, a ``(model, tokenizer)`` pair or a backend object
        Run this language model over ``data`` (records with an ``input`` prompt) instead of
        reading stored outputs; see :mod:`assay_uncertainty.manager.model_loop` (needs a model backend
        such as ``pip install assay-transformers``). The remaining parameters apply to it:
    model_options : mapping passed to the backend (``type``, ``device``, ``dtype``, ``load_args``)
    batch_size, max_new_tokens, samples_n : int
        Examples per batch (default 1), tokens generated at most (100), sampled answers per
        example when an estimator reads samples (10).
    generation_params : mapping (``temperature``, ``top_k``, ``top_p``, ``stop_strings`` ...)
    ignore_exceptions : bool
        True: an estimator or generation metric that raises is dropped for the rest of the
        run, with a warning, a note and an entry in ``failed``; False (default): it raises.
    save_stats : statistic names kept (and saved) beyond the stored-output fields
    progress : bool or None; a progress bar over the batches on stderr (None: on a terminal)
    cache_dir : folder path or None
        Keep the model run's results on disk after every batch, so a run that was killed
        (a signal, Ctrl-C, a crashed machine) resumes when run again with the same folder:
        only the examples not computed yet go to the model, and the numbers are those of an
        uninterrupted run. Only with ``model``; see :mod:`assay_uncertainty.manager.resume`.
    n_resamples : int, default 0
        Bootstrap resamples for the intervals of every score (0: no intervals, as cheap as
        scoring alone; 1000 is the usual choice for reporting).
    confidence_level : float, default 0.95
        Coverage of the intervals, strictly between 0 and 1.
    seed : int or None, default 0
        Seed of the resampling, an int ``>= 0`` (``None``: a fresh one, kept in ``seed``), and
        of the model's sampling when ``model`` is given (per example for assay-transformers).

    Attributes
    ----------
    metrics : dict
        ``(level, estimator, gen_metric, ue_metric) -> float``.
    intervals : dict
        ``(level, estimator, gen_metric, ue_metric) -> (low, high)``, for every key of
        ``metrics`` when ``n_resamples > 0`` (NaN bounds with a reason in ``interval_notes``
        when the score is undefined on some resamples).
    partial : dict or None
        After a model run that raised: the results of the batches finished before the error
        (``n_examples``, ``stats``, ``estimations``, ``gen_metrics``; see
        :mod:`assay_uncertainty.manager.model_loop`).
    """

    def __init__(
        self,
        data: Any = None,
        estimators: Sequence[Any] = (),
        gen_metrics: Sequence[Any] = (),
        ue_metrics: Sequence[Any] = (),
        *,
        stat_calculators: Sequence[Any] = (),
        nan_policy: str = "drop",
        n_resamples: int = 0,
        confidence_level: float = 0.95,
        seed: int | None = 0,
        model: Any = None,
        model_options: Mapping[str, Any] | None = None,
        batch_size: int = 1,
        max_new_tokens: int = 100,
        samples_n: int = 10,
        generation_params: Mapping[str, Any] | None = None,
        ignore_exceptions: bool = False,
        save_stats: Sequence[str] = (),
        progress: bool | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        if nan_policy not in NAN_POLICIES:
            raise InvalidParameterError(f"The 'nan_policy' parameter must be 'drop' or 'raise'; got {nan_policy!r}.")
        self.nan_policy = nan_policy
        self.n_resamples = int(check_int(n_resamples, "n_resamples", low=0, owner="UEManager"))
        self.confidence_level = float(check_number(confidence_level, "confidence_level", low=0, high=1,
                                                   closed="neither", owner="UEManager"))
        seed = check_seed(seed, "seed", owner="UEManager")
        if seed is None:
            seed = new_seed()
        self.seed: int = seed
        self.stats: dict[str, Any] = self._columns(data) if data is not None else {}
        self.n_examples = len(next(iter(self.stats.values()))) if self.stats else 0
        self._estimators = [(_label(e, e), self._load("estimator", e, Estimator)) for e in estimators]
        self._gen = [(_label(g, g), self._gen_metric(g)) for g in gen_metrics]
        self._ue = [(_label(m, m), self._load("ue_metric", m, UEMetric)) for m in ue_metrics]
        self._extra_calcs = [self._load("stat_calculator", c, StatCalculator) for c in stat_calculators]
        self.estimations: dict[tuple[str, str], Any] = {}
        self.gen_metrics: dict[tuple[str, str], Any] = {}
        self.metrics: dict[tuple[str, str, str, str], float] = {}
        self.intervals: dict[tuple[str, str, str, str], tuple[float, float]] = {}
        self.interval_notes: dict[tuple[str, str, str, str], str] = {}
        self.dropped: dict[tuple[str, str, str], int] = {}
        self.notes: list[str] = []
        self.estimator_names = [n for n, _ in self._estimators]
        self.gen_metric_names = [n for n, _ in self._gen]
        self.ue_metric_names = [n for n, _ in self._ue]
        self.levels: dict[str, str] = {}
        self._check_score_labels(self._ue)
        self._init_model_loop(model, model_options, batch_size, max_new_tokens, samples_n, generation_params, seed,
                              ignore_exceptions, save_stats, progress, cache_dir)

    # ---------------------------------------------------------------- construction helpers
    @staticmethod
    def _columns(data: Any) -> dict[str, Any]:
        if isinstance(data, (str, os.PathLike)):
            return records_to_columns(load_ue_data(data), source=str(data))
        if isinstance(data, Mapping):
            from assay_uncertainty.manager.inputs import columns_to_records

            return records_to_columns(columns_to_records(data), source="<columns>")
        return records_to_columns(data)

    @staticmethod
    def _load(kind: str, spec: Any, cls: type) -> Any:
        if isinstance(spec, str):
            from assay.plugins import load

            obj = load(kind, spec)
        elif not isinstance(spec, cls) and not callable(spec):
            raise InvalidParameterError(f"Expected a registered {kind} name or a {cls.__name__}; got {spec!r}.")
        else:
            obj = spec
        if cls is UEMetric and not isinstance(obj, UEMetric):
            obj = _CallableUEMetric(obj, _label(obj, spec))
        return obj

    def _check_score_labels(self, ue_metrics: Sequence[tuple[str, Any]]) -> None:
        """Two different UE metric specs must not report a score under the same key."""
        seen: dict[str, str] = {}
        for name in self.ue_metric_names if hasattr(self, "ue_metric_names") else ():
            if name not in [n for n, _ in ue_metrics]:
                for label in self._labels_of(name).values():
                    seen.setdefault(label, name)
        for name, metric in ue_metrics:
            for label in score_labels(name, metric).values():
                other = seen.setdefault(label, name)
                if other != name:
                    raise InvalidParameterError(
                        f"UE metrics {other!r} and {name!r} both report a score named {label!r}; pass one of them "
                        "with other options or drop it."
                    )

    @staticmethod
    def _gen_metric(spec: Any) -> GenerationMetric:
        if isinstance(spec, str):  # a registered name (kind generation_metric), "name[key=value]"
            import difflib

            from assay.plugins import get_registry

            registry = get_registry("generation_metric")
            name, _ = parse_name(spec)
            if name not in registry:
                known = registry.names()
                close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
                hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
                raise UnknownNameError(
                    f"Unknown generation metric {spec!r}.{hint} Registered: {', '.join(known) or 'none'} "
                    "(assay list generation_metric); or pass a GenerationMetric instance."
                )
            return registry.load(spec)
        if not isinstance(spec, GenerationMetric):
            raise InvalidParameterError(f"Expected a generation metric name or a GenerationMetric; got {spec!r}.")
        return spec

    # ---------------------------------------------------------------- the model loop (model=...)
    def _init_model_loop(self, model: Any, model_options: Mapping[str, Any] | None, batch_size: int,
                         max_new_tokens: int, samples_n: int, generation_params: Mapping[str, Any] | None,
                         seed: int, ignore_exceptions: bool, save_stats: Sequence[str],
                         progress: bool | None, cache_dir: str | os.PathLike[str] | None) -> None:
        from assay_uncertainty.manager.model_loop import check_loop_options

        check_loop_options(batch_size=batch_size, max_new_tokens=max_new_tokens, samples_n=samples_n, seed=seed,
                           save_stats=save_stats)
        self.model, self.model_options = model, dict(model_options or {})
        self.batch_size, self.max_new_tokens, self.samples_n = int(batch_size), int(max_new_tokens), int(samples_n)
        self.generation_params = dict(generation_params or {})  # the sampling uses self.seed, the one seed
        self.ignore_exceptions, self.save_stats, self.progress = bool(ignore_exceptions), list(save_stats), progress
        #: estimator / generation metric name -> the error that dropped it (``ignore_exceptions=True``)
        self.failed: dict[str, str] = {}
        #: after a model run that raised: the finished batches' results (see assay_uncertainty.manager.model_loop)
        self.partial: dict[str, Any] | None = None
        if cache_dir is not None and not isinstance(cache_dir, (str, os.PathLike)):
            raise InvalidParameterError(f"The 'cache_dir' parameter must be a folder path or None; got {cache_dir!r}.")
        if cache_dir is not None and model is None:
            raise InvalidParameterError("The 'cache_dir' parameter keeps a model run's batches (model=...); this "
                                        "manager reads stored outputs and runs no model.")
        #: where the model run keeps its finished batches (see assay_uncertainty.manager.resume), or None
        self.cache_dir = None if cache_dir is None else os.fspath(cache_dir)
        if model is None:
            return
        if "input" not in self.stats:
            raise InvalidParameterError(
                "UEManager(model=...) needs the prompts: records with an 'input' field (one string per example); "
                f"the data has: {', '.join(sorted(self.stats)) or 'nothing'}.")
        bad = next((i for i, t in enumerate(self.stats["input"]) if not isinstance(t, str)), None)
        if bad is not None:
            raise InvalidParameterError(f"Field 'input' of example {bad} must be a string (the prompt); got "
                                        f"{self.stats['input'][bad]!r:.80}.")
        self.stats["input_texts"] = self.stats.pop("input")

    # ---------------------------------------------------------------- running
    def __call__(self) -> dict[tuple[str, str, str, str], float]:
        """Compute statistics, estimations, generation metrics and UE metrics; return ``metrics``."""
        if self.model is not None:
            from assay_uncertainty.manager.model_loop import run_model_loop

            run_model_loop(self)
            self.model = None  # the model ran once; a second call scores the statistics now stored
            self._score(self._ue)
            return self.metrics
        self._compute_stats()
        for name, est in self._estimators:
            level = check_level(getattr(est, "level", "sequence"), owner=f"estimator {name!r}")
            self.estimations[(level, name)] = self._checked(est(self.stats), level, f"estimator {name!r}")
            self.levels[name] = level
        for name, gm in self._gen:
            level = check_level(gm.level, owner=f"generation metric {name!r}")
            self.gen_metrics[(level, name)] = self._checked(gm(self.stats), level, f"generation metric {name!r}")
        self._score(self._ue)
        return self.metrics

    def _compute_stats(self) -> None:
        needed: dict[str, list[str]] = {}
        for name, obj in [*self._estimators, *self._gen]:
            for dep in getattr(obj, "dependencies", ()):
                needed.setdefault(dep, []).append(repr(name))
        from assay.plugins import get_registry

        calcs = list(self._extra_calcs)
        for entry in get_registry("stat_calculator"):
            try:
                calcs.append(entry.create())
            except Exception as exc:  # noqa: BLE001 - a calculator that needs options cannot be a default producer
                self.notes.append(f"stat calculator {entry.name!r} not used as a default producer: {exc}")
        for calc in plan_calculators(needed, self.stats.keys(), calcs):
            out = calc(self.stats)
            for stat in calc.stats:
                if stat not in out:
                    raise InvalidParameterError(
                        f"Stat calculator {calc.name or type(calc).__name__!r} declared {stat!r} but did not return it."
                    )
                if stat not in self.stats:
                    self.stats[stat] = out[stat]

    def _expected_lengths(self, level: str) -> list[int] | None:
        if level == "token":
            for f in ("log_probs", "token_entropies", "token_correct"):
                if f in self.stats:
                    return [len(v) for v in self.stats[f]]
        if level == "claim":
            for f in ("claim_spans", "claims"):
                if f in self.stats:
                    return [len(v) for v in self.stats[f]]
        return None

    def _checked(self, values: Any, level: str, who: str) -> Any:
        n = self.n_examples
        if level == "sequence":
            arr = np.asarray(values, dtype=np.float64)
            if arr.shape != (n,):
                raise InvalidParameterError(f"{who} must return one value per example, shape ({n},); got {arr.shape}.")
            return arr
        if len(values) != n:
            raise InvalidParameterError(
                f"{who} ({level} level) must return one array per example ({n}); got {len(values)}."
            )
        out = [np.asarray(v, dtype=np.float64).reshape(-1) for v in values]
        # An estimator's tokens / claims are its own, as in LM-Polygraph's manager (its token-level classes
        # leave out the last step; a claim estimator may score only some claims): they are checked against a
        # generation metric's when the two are paired (_pair). A generation metric's are checked here.
        expected = None if who.startswith("estimator") else self._expected_lengths(level)
        if expected is not None:
            for i, (v, m) in enumerate(zip(out, expected)):
                if v.size != m:
                    raise InvalidParameterError(
                        f"{who} returned {v.size} values for example {i}, which has {m} {level}s."
                    )
        return out

    def _pair(self, level: str, est: str, gen: str) -> tuple[np.ndarray, np.ndarray]:
        u, q = self.estimations[(level, est)], self.gen_metrics[(level, gen)]
        if level != "sequence":
            for i, (a, b) in enumerate(zip(u, q)):
                if a.size != b.size:
                    raise InvalidParameterError(
                        f"Estimator {est!r} and generation metric {gen!r} disagree on the number of {level}s in "
                        f"example {i}: {a.size} and {b.size}."
                    )
            u = np.concatenate(u) if u else np.zeros(0)
            q = np.concatenate(q) if q else np.zeros(0)
        ok = np.isfinite(u) & np.isfinite(q)
        if not ok.all():
            if self.nan_policy == "raise":
                i = int(np.flatnonzero(~ok)[0])
                who = f"estimator {est!r}" if not np.isfinite(u[i]) else f"generation metric {gen!r}"
                raise InvalidParameterError(f"{who} is NaN at {level} {i} (nan_policy='raise').")
            dropped = int((~ok).sum())
            self.dropped[(level, est, gen)] = dropped
            warnings.warn(
                f"UEManager: dropped {dropped} of {u.size} {level}s with a NaN estimation ({est!r}) or quality "
                f"({gen!r}).", RuntimeWarning, stacklevel=3,
            )
            u, q = u[ok], q[ok]
        return u, q

    def _score(self, ue_metrics: Iterable[tuple[str, Any]]) -> dict[tuple[str, str, str, str], float]:
        new: dict[tuple[str, str, str, str], float] = {}
        ue_metrics = list(ue_metrics)
        for (level, est) in self.estimations:
            for (glevel, gen) in self.gen_metrics:
                if glevel != level:
                    continue
                u, q = self._pair(level, est, gen)
                binary = bool(np.all((q == 0) | (q == 1)))
                usable = []
                for ue_name, metric in ue_metrics:
                    if getattr(metric, "requires_binary", False) and not binary:
                        note = f"{ue_name} skipped for generation metric {gen!r} ({level} level): needs binary quality."
                        if note not in self.notes:
                            self.notes.append(note)
                        continue
                    if getattr(metric, "requires_unit_interval", False) and u.size and (u.min() < 0 or u.max() > 1):
                        self.notes.append(f"{ue_name} skipped for estimator {est!r} ({level} level): needs "
                                          "uncertainty in [0, 1] (one minus a probability of being correct).")
                        continue
                    usable.append((ue_name, metric))
                new.update(self._score_pair(level, est, gen, u, q, usable))
        self.metrics.update(new)
        return new

    def _score_pair(self, level: str, est: str, gen: str, u: np.ndarray, q: np.ndarray,
                    usable: list[tuple[str, Any]]) -> dict[tuple[str, str, str, str], float]:
        """Every score of the usable UE metrics on one (estimator, generation metric) pair, and their intervals
        (one resampling draw shared by all of them)."""
        new: dict[tuple[str, str, str, str], float] = {}
        if not usable:
            return new
        if u.size == 0:
            for ue_name, metric in usable:
                warnings.warn(f"UEManager: no finite pair for ({level}, {est}, {gen}); {ue_name} is NaN.",
                              UndefinedMetricWarning, stacklevel=3)
                for label in score_labels(ue_name, metric).values():
                    new[(level, est, gen, label)] = math.nan
                    if self.n_resamples:
                        self.intervals[(level, est, gen, label)] = (math.nan, math.nan)
                        self.interval_notes[(level, est, gen, label)] = "no finite pair to resample"
            return new
        rows, raws = [], []
        for ue_name, metric in usable:
            inter = metric.map_all(u, q)
            raw = metric.scores_of(inter)
            rows.append(inter)
            raws.append(raw)
            labels = score_labels(ue_name, metric)
            for name, value in raw.items():  # whatever the metric returns is stored, declared or not
                new[(level, est, gen, labels.get(name, extra_label(ue_name, name)))] = value
        if self.n_resamples:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UndefinedMetricWarning)
                warnings.simplefilter("ignore", RuntimeWarning)
                cis, why = bootstrap_intervals([m for _, m in usable], rows, raws, n=int(u.size),
                                               n_resamples=self.n_resamples, confidence_level=self.confidence_level,
                                               method="percentile", seed=self.seed)
            for (ue_name, metric), ci in zip(usable, cis):
                labels = score_labels(ue_name, metric)
                for name, bounds in ci.items():
                    key = (level, est, gen, labels[name])
                    self.intervals[key] = (float(bounds[0]), float(bounds[1]))
                    note = why.get((metric.score_prefix or "") + name)
                    if note:
                        self.interval_notes[key] = note
                    else:
                        self.interval_notes.pop(key, None)
        return new

    def rescore(self, ue_metrics: Sequence[Any]) -> dict[tuple[str, str, str, str], float]:
        """Score further UE metrics on the saved estimations; returns the new entries (also added to ``metrics``).

        Intervals of the new scores are computed with the manager's ``n_resamples``,
        ``confidence_level`` and ``seed`` (saved with it), into ``intervals``.
        """
        loaded = [(_label(m, m), self._load("ue_metric", m, UEMetric)) for m in ue_metrics]
        self._check_score_labels(loaded)
        for name, metric in loaded:
            if name not in self.ue_metric_names:
                self.ue_metric_names.append(name)
            self._ue = [(n, m) for n, m in self._ue if n != name] + [(name, metric)]
        return self._score(loaded)

    def estimate(self, data: Any) -> dict[tuple[str, str], Any]:
        """Run this manager's estimators on new data; returns ``{(level, estimator): values}``.

        ``data`` is what the constructor reads (records, columns, a stored-output file); its
        statistics are computed through the statistics graph as for a run. The estimator
        objects are this manager's: a loaded manager's fitted estimators (the density
        estimators) score with the state saved with it, without their training data; the
        other estimators are loaded again by name. Nothing of this manager changes.
        """
        objects = dict(self._estimators)
        estimators = [(name, objects[name] if name in objects else self._load("estimator", name, Estimator))
                      for name in self.estimator_names]
        run = UEManager(data, stat_calculators=self._extra_calcs, nan_policy=self.nan_policy)
        run._estimators, run.estimator_names = estimators, [name for name, _ in estimators]
        run()
        return dict(run.estimations)

    # ---------------------------------------------------------------- comparisons
    def _metric_named(self, name: str) -> Any:
        """The UE metric object of a name in ``ue_metric_names`` (loaded again by name for a loaded manager)."""
        for n, m in self._ue:
            if n == name:
                return m
        metric = self._load("ue_metric", name, UEMetric)
        self._ue.append((name, metric))
        return metric

    def _labels_of(self, name: str) -> dict[str, str]:
        """``{score: key}`` of a UE metric name; just ``{name: name}`` for a saved custom metric that
        cannot be loaded by name again."""
        try:
            return score_labels(name, self._metric_named(name))
        except AssayError:
            return {name: name}

    def _score_named(self, label: str) -> tuple[Any, str]:
        """(UE metric, score name) of a key's last part: a UE metric's name or one of its extra scores' keys."""
        for name in self.ue_metric_names:
            for score, lab in self._labels_of(name).items():
                if lab == label:
                    try:
                        return self._metric_named(name), score
                    except AssayError as exc:
                        raise InvalidParameterError(f"UEManager.compare: UE metric {name!r} cannot be loaded again "
                                                    f"by its name ({exc}).") from None
        raise InvalidParameterError(
            f"UEManager.compare: {label!r} is not a score of this manager's UE metrics "
            f"({', '.join(repr(k) for k in dict.fromkeys(k[3] for k in self.metrics)) or 'none'})."
        )

    def compare(self, key_a: Sequence[str], key_b: Sequence[str], *, n_resamples: int | None = None,
                confidence_level: float | None = None, seed: int | None = None) -> Comparison:
        """Paired comparison of two estimators under one generation metric and UE metric.

        Parameters
        ----------
        key_a, key_b : tuple of str
            ``(level, estimator, gen_metric, ue_metric)`` keys of ``metrics`` that differ in
            the estimator only; ``a`` is the baseline (``difference = score_b - score_a``).
        n_resamples, confidence_level, seed : optional
            Default: the manager's (``n_resamples`` 1000 when the manager's is 0).

        Returns
        -------
        assay.Comparison
            From :func:`assay.compare` on the two estimators' ``(u, q)`` rows: the scores, the
            difference, its paired-bootstrap interval (both sides resampled with the same
            indices), ``p_value`` (the p-value that inverts that interval: below
            ``1 - confidence_level`` exactly when the interval excludes 0), ``significant``,
            ``better`` and ``verdict`` (which quotes both), and two second tests'
            p-values (``p_value_randomization``: approximate randomization;
            ``p_value_bootstrap``: shifted bootstrap). The rows
            are the examples where both estimations and the quality are finite (with
            ``nan_policy="drop"`` the two stored scores may rest on different examples; a
            note then says so).

        Examples
        --------
        >>> man.compare(("sequence", "msp", "accuracy", "prr"),
        ...             ("sequence", "perplexity", "accuracy", "prr")).p_value   # doctest: +SKIP
        """
        return compare_estimators(self, key_a, key_b, n_resamples=n_resamples, confidence_level=confidence_level,
                                  seed=seed)

    def compare_to_best(self, level: str, gen_metric: str, ue_metric: str, **options: Any
                        ) -> tuple[str | None, dict[str, Comparison]]:
        """The best estimator of one column and each other estimator's :meth:`compare` against it.

        Returns ``(best, {estimator: Comparison})``, ``a`` being the best estimator (by value,
        respecting the UE metric's ``higher_is_better``; a NaN score is never best) and ``b``
        the other; ``(None, {})`` when no score of the column is finite. An estimator is
        significantly worse than the best when its comparison's ``better`` is ``"a"`` (the
        paired-bootstrap interval of the difference excludes 0). ``options`` go to :meth:`compare`.
        """
        return compare_to_best(self, level, gen_metric, ue_metric, **options)

    # ---------------------------------------------------------------- tables
    def grid(self, *, level: str = "sequence", gen_metric: str | None = None, intervals: bool | None = None,
             mark_best: bool = False, digits: int = 4) -> Grid:
        """The table of :meth:`table` as an :class:`assay.render.Grid` (one row per estimator,
        one column per UE metric score and generation metric)."""
        return manager_grid(self, level=level, gen_metric=gen_metric, intervals=intervals, mark_best=mark_best,
                            digits=digits)

    def table(self, *, level: str = "sequence", gen_metric: str | None = None, intervals: bool | None = None,
              mark_best: bool = False, fmt: str = "markdown", digits: int = 4) -> str:
        """A table (Markdown by default): one row per estimator, one column per UE metric score.

        ``intervals`` (default: when there are any) writes ``0.4120 [0.3800, 0.4410]``;
        ``mark_best`` bolds, per column, the estimators not significantly worse than the
        best (:meth:`compare_to_best`); ``fmt`` is any format of :func:`assay.render.render_grid`.
        """
        return render_grid(self.grid(level=level, gen_metric=gen_metric, intervals=intervals, mark_best=mark_best,
                                     digits=digits), fmt)

    # ---------------------------------------------------------------- provenance
    @property
    def signature(self) -> Any:
        """The provenance :class:`~assay.provenance.Signature`: estimators, generation and UE metrics
        with their options and conventions, assay and plugin versions (saved in ``manager.json``)."""
        from assay_uncertainty.manager.persist import manager_signature

        return manager_signature(self)

    # ---------------------------------------------------------------- persistence
    def save(self, path: str | os.PathLike[str]) -> Path:
        """Save into the folder ``path``, all or nothing: ``manager.json`` (names, metrics, manifest) and
        ``arrays.npz`` (values and statistics); no pickle. See :mod:`assay_uncertainty.manager.persist`."""
        return save_manager(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> UEManager:
        """Read and verify a folder written by :meth:`save`.

        Raises :class:`~assay.errors.SaveFormatError` naming the file and the field for a
        damaged, tampered, mixed or newer save; never unpickles.
        """
        return load_manager(cls, path)

    def __repr__(self) -> str:
        return (f"UEManager({self.n_examples} examples, estimators={self.estimator_names}, "
                f"gen_metrics={self.gen_metric_names}, ue_metrics={self.ue_metric_names})")
