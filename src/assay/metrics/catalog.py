"""Metrics by registered name, with ``[key=value]`` overrides, and score-name bookkeeping.

``score_prefix`` is understood for every metric, whether or not its constructor takes
it. When one registered metric is used in several configurations in one evaluation
(``["f1[average=macro]", "f1[average=micro]"]``) and a configuration gives no
``score_prefix``, its scores are prefixed with its catalog name and a slash
(``f1[average=macro]/f1``), so the override is visible in every score name. Any other
clash of score names between metrics is an error that asks for ``score_prefix``,
unless the caller chooses unitxt's precedence (``collisions="first"``, from
``assay.evaluate(..., score_collisions="first")``): then the metric listed first keeps
the name.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from assay.errors import InvalidParameterError
from assay.metrics._params import check_str
from assay.metrics.base import Metric
from assay.plugins import format_name, get_registry, parse_name

__all__ = ["COLLISION_RULES", "check_collisions", "resolve_metric", "resolve_metrics"]

#: what a clash of score names between metrics does: an error (assay) or the first metric wins (unitxt)
COLLISION_RULES = ("error", "first")


def resolve_metric(spec: Any) -> tuple[Metric, str, bool]:
    """``(metric, base name, explicit prefix?)`` for a name, a ``name[k=v]`` spec or a Metric."""
    if isinstance(spec, Metric):
        return spec, spec.name or type(spec).__name__, bool(spec.score_prefix)
    if not isinstance(spec, str):
        raise InvalidParameterError(
            f"Each entry of 'metrics' must be a registered name or a Metric; got {type(spec).__name__} {spec!r:.60}."
        )
    name, overrides = parse_name(spec)
    prefix = overrides.pop("score_prefix", None)
    entry = get_registry("metric").get(name)
    accepted = entry.accepted_keys()
    if prefix is not None and (accepted is None or "score_prefix" in accepted):
        metric = entry.create(score_prefix=prefix, **overrides)
    else:
        metric = entry.create(**overrides)
        if prefix is not None:
            metric.score_prefix = check_str(
                prefix, name="score_prefix", owner=f"metric {name!r}",
                hint=" Quote a prefix that looks like a number: name[score_prefix='123']."
                if isinstance(prefix, (int, float)) else "")
    if not isinstance(metric, Metric):
        raise InvalidParameterError(
            f"Metric {name!r} (from plugin {entry.plugin!r}) is a {type(metric).__name__}, not an assay.metrics.Metric."
        )
    shown = dict(overrides)
    if prefix is not None:
        shown["score_prefix"] = prefix
    metric.name = format_name(name, shown)
    return metric, name, prefix is not None


def resolve_metrics(metrics: Any, *, collisions: str = "error") -> list[Metric]:
    """Resolve every entry, giving same-named configurations distinct score prefixes."""
    if isinstance(metrics, (str, Metric)):
        metrics = [metrics]
    metrics = list(metrics)
    resolved = [resolve_metric(m) for m in metrics]
    if not resolved:
        raise InvalidParameterError("'metrics' must name at least one metric.")
    count = Counter(base for _, base, _ in resolved)
    for spec, (metric, base, explicit) in zip(metrics, resolved):
        # only catalog specs with overrides get the automatic prefix; Metric objects are never altered
        if isinstance(spec, str) and count[base] > 1 and not explicit and metric.name != base:
            metric.score_prefix = f"{metric.name}/"
    check_collisions((resolved_metric for resolved_metric, _, _ in resolved), collisions=collisions)
    return [m for m, _, _ in resolved]


def check_collisions(metrics: Iterable[Metric], score_names: dict[int, Iterable[str]] | None = None, *,
                     collisions: str = "error") -> None:
    """Raise if two metrics would report the same (prefixed) main score name.

    With ``collisions="first"`` (unitxt's precedence) a clash is allowed: the caller
    keeps the first metric's score.
    """
    if collisions == "first":
        return
    seen: dict[str, str] = {}
    for i, m in enumerate(metrics):
        label = m.name or type(m).__name__
        names = [m.main_score] if score_names is None else list(score_names[i])
        for raw in names:
            full = (m.score_prefix or "") + raw
            if full in seen and seen[full] == label:
                raise InvalidParameterError(
                    f"Metric {label!r} is listed twice with the same configuration (both report {full!r}); remove "
                    f"one or give it a score_prefix."
                )
            if full in seen:
                raise InvalidParameterError(
                    f"Metrics {seen[full]!r} and {label!r} both report the score {full!r}; give one of them a "
                    f"score_prefix (e.g. '{label}[score_prefix=b_]' or Metric(score_prefix='b_'))."
                )
            seen[full] = label
