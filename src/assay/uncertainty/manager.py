"""``UEManager``: estimators, generation metrics and UE metrics over stored model outputs.

>>> man = UEManager(records, estimators=["msp"], gen_metrics=["accuracy"], ue_metrics=["prr"])  # doctest: +SKIP
>>> man()                                                                                         # doctest: +SKIP
>>> man.metrics[("sequence", "msp", "accuracy", "prr")]                                          # doctest: +SKIP

Keys: ``estimations[(level, estimator)]``, ``gen_metrics[(level, gen_metric)]`` and
``metrics[(level, estimator, gen_metric, ue_metric)]``, with names as given (``"prr[max_rejection=0.5]"``).
Every ``prr`` entry has a ``prr_normalized`` sibling (same overrides). Only pairs of the
same level are scored; token- and claim-level values are flattened over the examples.
A UE metric that needs binary quality (ROC-AUC) is skipped, with a note in ``notes``,
for a generation metric that is not 0 / 1; a calibration UE metric (``requires_unit_interval``)
likewise for an estimator whose values leave [0, 1].

NaN policy (``nan_policy=``): ``"drop"`` (default) scores each (estimator, generation
metric) pair on the examples where both are finite, warns with the count dropped, and
records it in ``dropped``; no value is ever replaced by a "most confident" substitute.
``"raise"`` makes a NaN an error naming the estimator or metric and the example.
No finite pair left gives NaN.

``save(path)`` writes ``manager.json`` (names, levels, metrics, notes, a manifest with
checksums) and ``arrays.npz`` (estimations, generation-metric values and ``stats``; ragged
ones flat with their lengths), all or nothing; ``UEManager.load(path)`` verifies and reads
them back without pickle, ``rescore`` computes further UE metrics on the saved values,
and the saved ``stats`` let estimators run again (see :mod:`assay.uncertainty.persist`).
"""

from __future__ import annotations

import math
import os
import warnings
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from assay.errors import InvalidParameterError, UndefinedMetricWarning
from assay.plugins.names import parse_name
from assay.uncertainty.base import Estimator, GenerationMetric, StatCalculator, UEMetric, check_level
from assay.uncertainty.gen_metrics import GENERATION_METRICS
from assay.uncertainty.graph import plan_calculators
from assay.uncertainty.inputs import load_ue_data, records_to_columns
from assay.uncertainty.persist import FORMAT_VERSION, load_manager, save_manager  # noqa: F401 - FORMAT_VERSION kept here

__all__ = ["UEManager"]

NAN_POLICIES = ("drop", "raise")


def _label(obj: Any, spec: Any) -> str:
    return spec if isinstance(spec, str) else (getattr(obj, "name", "") or type(obj).__name__)


def _sibling(ue_name: str) -> str | None:
    """``prr[...]`` -> ``prr_normalized[...]``; None for other metrics."""
    base = ue_name.split("[", 1)[0].strip()
    if base != "prr":
        return None
    return "prr_normalized" + ue_name[len(ue_name.split("[", 1)[0]):].strip()


class UEManager:
    """Compute uncertainty estimations, generation metrics and every same-level UE metric.

    Parameters
    ----------
    data : path, list of records, or mapping of columns
        Stored model outputs (see :mod:`assay.uncertainty.inputs` for the schema).
    estimators : sequence of registered names or :class:`Estimator`
    gen_metrics : sequence of names from :data:`~assay.uncertainty.gen_metrics.GENERATION_METRICS`
        or :class:`GenerationMetric` instances
    ue_metrics : sequence of registered names (``"prr[max_rejection=0.5]"``) or :class:`UEMetric`
    stat_calculators : optional extra :class:`StatCalculator` objects (or names); they take
        precedence over the registered ones when two produce the same statistic
    nan_policy : {"drop", "raise"}
    model : optional; a folder path, a ``(model, tokenizer)`` pair or a backend object
        Run this language model over ``data`` (records with an ``input`` prompt) instead of
        reading stored outputs; see :mod:`assay.uncertainty.model_loop` (needs a model backend
        such as ``pip install assay-transformers``). The remaining parameters apply to it:
    model_options : mapping passed to the backend (``type``, ``device``, ``dtype``, ``load_args``)
    batch_size, max_new_tokens, samples_n : int
        Examples per batch (default 1), tokens generated at most (100), sampled answers per
        example when an estimator reads samples (10).
    generation_params : mapping (``temperature``, ``top_k``, ``top_p``, ``stop_strings`` ...)
    seed : int or None; seeds the sampling (the backend's: per example for assay-transformers)
    ignore_exceptions : bool
        True: an estimator or generation metric that raises is dropped for the rest of the
        run, with a warning, a note and an entry in ``failed``; False (default): it raises.
    save_stats : statistic names kept (and saved) beyond the stored-output fields
    progress : bool or None; a progress bar over the batches on stderr (None: on a terminal)
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
        model: Any = None,
        model_options: Mapping[str, Any] | None = None,
        batch_size: int = 1,
        max_new_tokens: int = 100,
        samples_n: int = 10,
        generation_params: Mapping[str, Any] | None = None,
        seed: int | None = None,
        ignore_exceptions: bool = False,
        save_stats: Sequence[str] = (),
        progress: bool | None = None,
    ) -> None:
        if nan_policy not in NAN_POLICIES:
            raise InvalidParameterError(f"The 'nan_policy' parameter must be 'drop' or 'raise'; got {nan_policy!r}.")
        self.nan_policy = nan_policy
        self.stats: dict[str, Any] = self._columns(data) if data is not None else {}
        self.n_examples = len(next(iter(self.stats.values()))) if self.stats else 0
        self._estimators = [(_label(e, e), self._load("estimator", e, Estimator)) for e in estimators]
        self._gen = [(_label(g, g), self._gen_metric(g)) for g in gen_metrics]
        self._ue = [(_label(m, m), self._load("ue_metric", m, UEMetric)) for m in ue_metrics]
        self._extra_calcs = [self._load("stat_calculator", c, StatCalculator) for c in stat_calculators]
        self.estimations: dict[tuple[str, str], Any] = {}
        self.gen_metrics: dict[tuple[str, str], Any] = {}
        self.metrics: dict[tuple[str, str, str, str], float] = {}
        self.dropped: dict[tuple[str, str, str], int] = {}
        self.notes: list[str] = []
        self.estimator_names = [n for n, _ in self._estimators]
        self.gen_metric_names = [n for n, _ in self._gen]
        self.ue_metric_names = [n for n, _ in self._ue]
        self.levels: dict[str, str] = {}
        self._init_model_loop(model, model_options, batch_size, max_new_tokens, samples_n, generation_params, seed,
                              ignore_exceptions, save_stats, progress)

    # ---------------------------------------------------------------- construction helpers
    @staticmethod
    def _columns(data: Any) -> dict[str, Any]:
        if isinstance(data, (str, os.PathLike)):
            return records_to_columns(load_ue_data(data), source=str(data))
        if isinstance(data, Mapping):
            from assay.uncertainty.inputs import columns_to_records

            return records_to_columns(columns_to_records(data), source="<columns>")
        return records_to_columns(data)

    @staticmethod
    def _load(kind: str, spec: Any, cls: type) -> Any:
        if isinstance(spec, str):
            from assay.plugins import load

            return load(kind, spec)
        if not isinstance(spec, cls) and not callable(spec):
            raise InvalidParameterError(f"Expected a registered {kind} name or a {cls.__name__}; got {spec!r}.")
        return spec

    @staticmethod
    def _gen_metric(spec: Any) -> GenerationMetric:
        if isinstance(spec, str):
            name, overrides = parse_name(spec)
            if name not in GENERATION_METRICS:
                raise InvalidParameterError(
                    f"Unknown generation metric {spec!r}; choose from {', '.join(GENERATION_METRICS)} "
                    "or pass a GenerationMetric instance."
                )
            return GENERATION_METRICS[name](**overrides)
        if not isinstance(spec, GenerationMetric):
            raise InvalidParameterError(f"Expected a generation metric name or a GenerationMetric; got {spec!r}.")
        return spec

    # ---------------------------------------------------------------- the model loop (model=...)
    def _init_model_loop(self, model: Any, model_options: Mapping[str, Any] | None, batch_size: int,
                         max_new_tokens: int, samples_n: int, generation_params: Mapping[str, Any] | None,
                         seed: int | None, ignore_exceptions: bool, save_stats: Sequence[str],
                         progress: bool | None) -> None:
        from assay.uncertainty.model_loop import check_loop_options

        check_loop_options(batch_size=batch_size, max_new_tokens=max_new_tokens, samples_n=samples_n, seed=seed,
                           save_stats=save_stats)
        self.model, self.model_options = model, dict(model_options or {})
        self.batch_size, self.max_new_tokens, self.samples_n = int(batch_size), int(max_new_tokens), int(samples_n)
        self.generation_params, self.seed = dict(generation_params or {}), seed
        self.ignore_exceptions, self.save_stats, self.progress = bool(ignore_exceptions), list(save_stats), progress
        #: estimator / generation metric name -> the error that dropped it (``ignore_exceptions=True``)
        self.failed: dict[str, str] = {}
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
            from assay.uncertainty.model_loop import run_model_loop

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
        if level == "claim" and "claim_spans" in self.stats:
            return [len(v) for v in self.stats["claim_spans"]]
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
        expected = self._expected_lengths(level)
        if expected is not None:
            for i, (v, m) in enumerate(zip(out, expected)):
                if v.size != m:
                    raise InvalidParameterError(
                        f"{who} returned {v.size} values for example {i}, which has {m} {level}s."
                    )
        return out

    def _pair(self, level: str, est: str, gen: str) -> tuple[np.ndarray, np.ndarray] | None:
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
                    sibling = _sibling(ue_name)
                    if u.size == 0:
                        warnings.warn(f"UEManager: no finite pair for ({level}, {est}, {gen}); {ue_name} is NaN.",
                                      UndefinedMetricWarning, stacklevel=2)
                        new[(level, est, gen, ue_name)] = math.nan
                        if sibling:
                            new[(level, est, gen, sibling)] = math.nan
                        continue
                    if sibling and hasattr(metric, "scores"):
                        s = metric.scores(u, q)
                        new[(level, est, gen, ue_name)] = s.normalized if metric.normalize else s.raw
                        new[(level, est, gen, sibling)] = s.normalized
                    else:
                        new[(level, est, gen, ue_name)] = float(metric(u, q))
        self.metrics.update(new)
        return new

    def rescore(self, ue_metrics: Sequence[Any]) -> dict[tuple[str, str, str, str], float]:
        """Score further UE metrics on the saved estimations; returns the new entries (also added to ``metrics``)."""
        loaded = [(_label(m, m), self._load("ue_metric", m, UEMetric)) for m in ue_metrics]
        for name, _ in loaded:
            if name not in self.ue_metric_names:
                self.ue_metric_names.append(name)
        return self._score(loaded)

    # ---------------------------------------------------------------- tables
    def table(self, *, level: str = "sequence", gen_metric: str | None = None) -> str:
        """A Markdown table: one row per estimator, one column per UE metric (and ``prr_normalized``)."""
        keys = [k for k in self.metrics if k[0] == level and (gen_metric is None or k[2] == gen_metric)]
        cols: list[tuple[str, str]] = []
        for k in keys:
            if (k[2], k[3]) not in cols:
                cols.append((k[2], k[3]))
        rows = list(dict.fromkeys(k[1] for k in keys))
        head = "| estimator | " + " | ".join(f"{u} ({g})" for g, u in cols) + " |"
        lines = [head, "|" + "---|" * (len(cols) + 1)]
        for est in rows:
            vals = [self.metrics.get((level, est, g, u)) for g, u in cols]
            lines.append(f"| {est} | " + " | ".join("" if v is None else f"{v:.4f}" for v in vals) + " |")
        return "\n".join(lines)

    # ---------------------------------------------------------------- provenance
    @property
    def signature(self) -> Any:
        """The provenance :class:`~assay.provenance.Signature`: estimators, generation and UE metrics
        with their options and conventions, assay and plugin versions (saved in ``manager.json``)."""
        from assay.uncertainty.persist import manager_signature

        return manager_signature(self)

    # ---------------------------------------------------------------- persistence
    def save(self, path: str | os.PathLike[str]) -> Path:
        """Save into the folder ``path``, all or nothing: ``manager.json`` (names, metrics, manifest) and
        ``arrays.npz`` (values and statistics); no pickle. See :mod:`assay.uncertainty.persist`."""
        return save_manager(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "UEManager":
        """Read and verify a folder written by :meth:`save`.

        Raises :class:`~assay.errors.SaveFormatError` naming the file and the field for a
        damaged, tampered, mixed or newer save; never unpickles.
        """
        return load_manager(cls, path)

    def __repr__(self) -> str:
        return (f"UEManager({self.n_examples} examples, estimators={self.estimator_names}, "
                f"gen_metrics={self.gen_metric_names}, ue_metrics={self.ue_metric_names})")
