"""Read what assay writes and turn it into a report's tables and charts.

Five kinds of input, told apart by their saved format (never by the file name):

- ``evaluation``: a results file of ``assay evaluate --output`` / :meth:`assay.EvaluationResults.save`
  (``"format": "assay.evaluation/1"``), read with :func:`assay.metrics.api.load_results`;
- ``comparison``: what ``assay compare -o`` writes (``Comparison.to_dict()``);
- ``parse-eval``: what ``assay parse-eval --json`` (or ``-o``) writes, plain or ``--conll18``;
- ``uemanager``: a folder saved by :meth:`assay.UEManager.save` (``manager.json``), read with
  :meth:`assay.UEManager.load`;
- ``run``: the output folder of ``assay run`` (its manifest ``assay-results.json`` and the result
  trees it lists), or a ValUES-layout tree (``assay-values-run.json``: each version's
  ``<exp_path>/<task>.json``).

Every problem is an :class:`~assay.errors.AssayError` whose message starts with the path.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

import assay
from assay.errors import AssayError, InvalidParameterError, ResultFileError
from assay.jsonio import decode_numbers, read_json
from assay.metrics.api import load_results
from assay_report.model import Chart, Column, Report, Series, Source, Table, number

__all__ = ["KINDS", "build_report", "detect", "group_key"]

KINDS = ("evaluation", "comparison", "parse-eval", "uemanager", "run")
EVALUATION_FORMAT = "assay.evaluation/1"
MANAGER_FILE, RUN_MANIFEST, VALUES_MANIFEST = "manager.json", "assay-results.json", "assay-values-run.json"
COMPARISON_KEYS = ("score_a", "score_b", "difference", "ci_low", "ci_high", "p_value_randomization")
# the verdict and the p-value of its test side by side; the two other tests after them, labelled so
_P_COLUMNS = (Column("p-value (decides: inverts the interval)"), Column("verdict", "text"),
              Column("p-value (second test: randomization)"), Column("p-value (second test: shifted bootstrap)"))
P_NOTE = ("The verdict follows the paired percentile-bootstrap interval of b - a; the p-value beside it inverts that "
          "interval (it is below 1 - level exactly when the interval excludes 0). The randomization and shifted-"
          "bootstrap p-values test other hypotheses and decide nothing.")
OLD_COMPARISON_NOTE = ("{names}: written by an assay before the p-value that inverts the interval (its 'p_value' is "
                       "the randomization one); the verdict follows the interval.")
EXPECTED = ("an assay result: a results or comparison JSON file ('assay evaluate -o', 'assay compare -o'), "
            "a 'parse-eval --json' file, a saved UEManager folder (manager.json) or an 'assay run' output "
            "folder (assay-results.json)")


# --------------------------------------------------------------------------- detection
def detect(path: Path) -> tuple[str, Any]:
    """``(kind, data)`` of one input: data is the parsed JSON of a file, None for a folder."""
    if path.is_dir():
        if (path / MANAGER_FILE).is_file():
            return "uemanager", None
        if (path / RUN_MANIFEST).is_file() or (path / VALUES_MANIFEST).is_file():
            return "run", None
        raise ResultFileError(f"{path}: this folder holds no assay result (expected {EXPECTED}).")
    if not path.exists():
        raise ResultFileError(f"{path}: no such file or folder.")
    data = read_json(path, what="result file", legacy_constants=True)  # errors name the file, line and column
    if isinstance(data, dict):
        if data.get("format") == EVALUATION_FORMAT:
            return "evaluation", data
        if all(k in data for k in COMPARISON_KEYS):
            return "comparison", data
        scores = data.get("scores")
        if isinstance(scores, list) and scores and all(isinstance(s, dict) and "metric" in s for s in scores):
            return "parse-eval", data
    raise ResultFileError(f"{path}: not {EXPECTED}.")


def group_key(path: Path) -> tuple[Any, ...]:
    """What inputs must share to be compared on one page: their kind and, for results, scores and runs,
    the names of their metrics (read cheaply; the report itself checks again)."""
    kind, data = detect(path)
    if kind == "evaluation":
        g = data.get("global")
        return (kind, tuple(sorted(_score_names(g))) if isinstance(g, dict) else ())
    if kind == "parse-eval":
        return (kind, tuple(s.get("metric") for s in data["scores"]), all("f1" in s for s in data["scores"]))
    if kind == "run":
        name = RUN_MANIFEST if (path / RUN_MANIFEST).is_file() else VALUES_MANIFEST
        manifest = read_json(path / name, what="the manifest of 'assay run'")
        tasks = manifest.get("tasks") if isinstance(manifest, dict) else None
        return (kind, json.dumps(tasks, sort_keys=True, default=str))
    return (kind,)


# --------------------------------------------------------------------------- the report
def build_report(paths: Sequence[Path], *, title: str | None = None, n_resamples: int | None = None,
                 seed: int = 0) -> Report:
    """One report of every input, the inputs of a kind compared with each other."""
    if not paths:
        raise InvalidParameterError("'paths' must name at least one result.")
    by_kind: dict[str, list[tuple[Path, Any]]] = {}
    for p in paths:
        kind, data = detect(Path(p))
        by_kind.setdefault(kind, []).append((Path(p), data))
    labels = _labels([Path(p) for p in paths])
    sources: list[Source] = []
    sections: list[Table | Chart] = []
    for kind in KINDS:
        items = by_kind.get(kind, [])
        if not items:
            continue
        build = {"evaluation": _evaluations, "comparison": _comparisons, "parse-eval": _parse_evals,
                 "uemanager": _managers, "run": _runs}[kind]
        src, sec = build(items, labels, n_resamples=n_resamples, seed=seed)
        sources += src
        sections += sec
    kinds = ", ".join(dict.fromkeys(s.kind for s in sources))
    return Report(title=title or f"assay report: {len(sources)} result{'s' if len(sources) > 1 else ''} ({kinds})",
                  sources=tuple(sources), sections=tuple(sections), versions={"assay": assay.__version__})


def _labels(paths: list[Path]) -> dict[Path, str]:
    """A short, distinct label per path: the file or folder name, with parent folders added until distinct."""
    parts = {p: p.resolve().parts for p in paths}
    depth = 1
    while True:
        labels = {p: "/".join(parts[p][-depth:]) for p in paths}
        if len(set(labels.values())) == len(paths) or depth > max(len(v) for v in parts.values()):
            return labels
        depth += 1


def _cell(value: Any, low: Any = None, high: Any = None) -> Any:
    v = number(value)
    if low is None and high is None:
        return v
    return [v, number(low), number(high)]


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _best_rows(values: list[Any], higher_is_better: bool) -> list[int]:
    """The rows holding a column's best finite value (ties: all of them)."""
    finite = [(i, v) for i, v in enumerate(values) if _finite(v)]
    if not finite:
        return []
    target = (max if higher_is_better else min)(v for _, v in finite)
    return [i for i, v in finite if v == target]


# --------------------------------------------------------------------------- evaluations
_SKIP_SCORES = {"score", "score_name", "num_of_instances"}


def _score_names(g: dict[str, Any]) -> list[str]:
    return [k for k, v in g.items() if k not in _SKIP_SCORES and not k.endswith(("_ci_low", "_ci_high"))
            and isinstance(v, (int, float)) and not isinstance(v, bool)]


def _evaluations(items: list[tuple[Path, Any]], labels: dict[Path, str], *, n_resamples: int | None, seed: int
                 ) -> tuple[list[Source], list[Table | Chart]]:
    loaded = []
    for path, _ in items:
        try:
            res = load_results(path)
        except AssayError as exc:
            raise ResultFileError(_with_path(path, exc)) from None
        loaded.append((path, res))
    sources = [Source(str(p), "evaluation", f"{len(r)} instances; metrics {', '.join(r.info.get('metrics', []))}",
                      str(r.info.get("signature") or "")) for p, r in loaded]
    sections: list[Table | Chart] = []
    if len(loaded) == 1:
        path, res = loaded[0]
        g = res.global_scores
        rows = tuple((name, _cell(g[name], g.get(f"{name}_ci_low"), g.get(f"{name}_ci_high")))
                     for name in _score_names(g))
        columns = (Column("score", "text"), Column("value", spread="interval"))
        note = f"{g.get('num_of_instances', len(res))} instances; main score: {g.get('score_name')}"
        sections.append(Table(f"Scores of {labels[path]}", columns, rows, notes=(note,)))
    else:
        sections += _compare_systems(loaded, labels, n_resamples=n_resamples, seed=seed)
    for path, res in loaded:
        sections.append(_instances_table(labels[path], res))
    return sources, sections


def _compare_systems(loaded: list[tuple[Path, Any]], labels: dict[Path, str], *, n_resamples: int | None,
                     seed: int) -> list[Table | Chart]:
    first_path, first = loaded[0]
    names = _score_names(first.global_scores)
    for path, res in loaded[1:]:
        other = _score_names(res.global_scores)
        if set(other) != set(names):
            raise ResultFileError(f"{path}: its scores ({', '.join(other)}) differ from those of {first_path} "
                                  f"({', '.join(names)}); a report compares results of the same metrics.")
    columns = [Column("system", "text")]
    rows: list[list[Any]] = [[labels[p]] for p, _ in loaded]
    best: list[tuple[int, int]] = []
    tied: list[tuple[int, int]] = []
    notes: list[str] = []
    comp_rows: list[tuple[Any, ...]] = []
    rounds = 1000 if n_resamples is None else n_resamples
    for c, name in enumerate(names, start=1):
        for r, (_, res) in enumerate(loaded):
            g = res.global_scores
            rows[r].append(_cell(g[name], g.get(f"{name}_ci_low"), g.get(f"{name}_ci_high")))
        values = [res.global_scores[name] for _, res in loaded]
        hib, why = _direction(loaded, name, rounds, seed)
        columns.append(Column(name, spread="interval", higher_is_better=hib))
        if hib is None:
            notes.append(f"{name}: nothing marked ({why}).")
            continue
        winners = _best_rows(values, hib)
        best += [(r, c) for r in winners]
        if not winners:
            continue
        b = winners[0]
        for r, (_, res) in enumerate(loaded):
            if r in winners or not _finite(values[r]):
                if r in winners and r != b:
                    tied.append((r, c))
                continue
            comp = _paired(loaded[b][1], res, name, rounds, seed)
            if comp is None:
                notes.append(f"{name}: {labels[loaded[r][0]]} not tested against the best (the results are not "
                             "paired on the same instances, or no metric of them reports this score).")
                continue
            if comp.better != "a":
                tied.append((r, c))
            comp_rows.append((name, labels[loaded[b][0]], labels[loaded[r][0]],
                              _cell(comp.difference, comp.ci_low, comp.ci_high), number(comp.p_value), comp.verdict,
                              number(comp.p_value_randomization), number(comp.p_value_bootstrap)))
    table = Table("Systems compared", tuple(columns), tuple(tuple(r) for r in rows), tuple(best), tuple(tied),
                  tuple(notes) + ("Bold: not significantly worse than the best of its column (paired bootstrap, "
                                  f"{rounds} resamples, seed {seed}); ▲ marks the best.",))
    out: list[Table | Chart] = [table]
    if comp_rows:
        out.append(Table("Paired comparisons with the best of each score (a: the best, b: the other)",
                         (Column("score", "text"), Column("a (best)", "text"), Column("b", "text"),
                          Column("b - a", spread="interval"), *_P_COLUMNS), tuple(comp_rows), notes=(P_NOTE,)))
    return out


def _paired(a: Any, b: Any, score: str, rounds: int, seed: int) -> Any:
    """:func:`assay.compare` of ``score`` between two results, trying each metric they hold; None when unpaired."""
    for metric in a.info.get("metrics", []):
        try:
            return assay.compare(a, b, metric, score=score, n_resamples=max(rounds, 1), seed=seed,
                                 allow_signature_mismatch=True)
        except (AssayError, KeyError):  # not this metric's score (assay.compare raises KeyError for that)
            continue
    return None


def _direction(loaded: list[tuple[Path, Any]], score: str, rounds: int, seed: int) -> tuple[bool | None, str]:
    """Whether higher is better for ``score`` (the results' ``info["higher_is_better"]``, else from a paired
    comparison's metric), or None and why not."""
    saved = loaded[0][1].info.get("higher_is_better")
    if isinstance(saved, dict) and isinstance(saved.get(score), bool):
        return saved[score], ""
    comp = _paired(loaded[0][1], loaded[1][1], score, 1, seed)
    if comp is None:
        return None, "the results are not paired on the same instances, or no metric of them reports this score"
    return bool(comp.higher_is_better), ""


def _instances_table(label: str, res: Any) -> Table:
    """One row per instance: prediction, references and every instance score."""
    inst_scores = res.instance_scores
    names = [k for k in (inst_scores[0] if inst_scores else {}) if k not in ("score", "score_name")]
    refs = res.references
    columns = [Column("#", "int"), Column("prediction", "text")]
    if refs is not None:
        columns.append(Column("references", "text"))
    columns += [Column(n) for n in names]
    rows = []
    for i, (pred, sc) in enumerate(zip(res.predictions, inst_scores)):
        row: list[Any] = [i, _text(pred)]
        if refs is not None:
            row.append(_text(refs[i]))
        row += [number(sc.get(n)) if _is_number(sc.get(n)) else None for n in names]
        rows.append(tuple(row))
    return Table(f"Instances of {label}", tuple(columns), tuple(rows))


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _text(x: Any) -> str:
    return x if isinstance(x, str) else json.dumps(x, ensure_ascii=False)


def _with_path(path: Path, exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return text if text.startswith(str(path)) else f"{path}: {text}"


# --------------------------------------------------------------------------- comparisons
def _comparisons(items: list[tuple[Path, Any]], labels: dict[Path, str], **_: Any
                 ) -> tuple[list[Source], list[Table | Chart]]:
    sources, rows, old = [], [], []
    for path, d in items:
        try:
            d = decode_numbers(d)
            if "p_value_percentile" not in d:  # an older file: its p_value is not the verdict's
                old.append(labels[path])
            row = (labels[path], str(d.get("metric", "")), str(d.get("score_name", "")), int(d.get("n", 0)),
                   number(d["score_a"]), number(d["score_b"]), _cell(d["difference"], d["ci_low"], d["ci_high"]),
                   number(d.get("p_value_percentile")), str(d.get("verdict", "")), number(d["p_value_randomization"]),
                   number(d.get("p_value_bootstrap")))
        except (TypeError, ValueError, AttributeError) as exc:
            raise ResultFileError(f"{path}: a comparison file with a malformed field ({exc}).") from None
        rows.append(row)
        sig = " | ".join(f"{side}: {d[k]}" for side, k in (("a", "signature_a"), ("b", "signature_b")) if d.get(k))
        sources.append(Source(str(path), "comparison", f"{row[1]} / {row[2]} on {row[3]} paired instances", sig))
    notes = (P_NOTE,) + ((OLD_COMPARISON_NOTE.format(names=", ".join(old)),) if old else ())
    table = Table("Paired comparisons (b - a)", (
        Column("comparison", "text"), Column("metric", "text"), Column("score", "text"), Column("instances", "int"),
        Column("a"), Column("b"), Column("b - a", spread="interval"), *_P_COLUMNS), tuple(rows), notes=notes)
    return sources, [table]


# --------------------------------------------------------------------------- parse-eval
_FRACTIONS = ("value", "precision", "recall", "f1", "aligned_accuracy")


def _parse_eval_rows(path: Path, d: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """``("plain" | "conll18", scores)`` of a parse-eval document, checked."""
    scores = decode_numbers(d["scores"])
    conll18 = all("f1" in s for s in scores)
    need = ("f1", "precision", "recall") if conll18 else ("value",)
    for i, s in enumerate(scores):
        for k in need:
            if not _is_number(s.get(k)):
                raise ResultFileError(f"{path}: scores[{i}].{k}: expected a number, got {s.get(k)!r:.40}.")
    return ("conll18" if conll18 else "plain"), scores


def _parse_evals(items: list[tuple[Path, Any]], labels: dict[Path, str], **_: Any
                 ) -> tuple[list[Source], list[Table | Chart]]:
    parsed = [(p, *_parse_eval_rows(p, d)) for p, d in items]
    sources = [Source(str(p), "parse-eval", f"{len(s)} scores ({'CoNLL 2018 script' if k == 'conll18' else 'tally'})",
                      str(d.get("signature") or "")) for (p, d), (_, k, s) in zip(items, parsed)]
    if len(parsed) == 1:
        path, kind, scores = parsed[0]
        if kind == "conll18":
            keys: tuple[str, ...] = ("precision", "recall", "f1", "aligned_accuracy", "gold", "system", "correct")
        else:
            keys = ("value", "correct", "total", "sentences")
        cols = (Column("metric", "text"),) + tuple(Column(k, "num" if k in _FRACTIONS else "int") for k in keys)
        rows = tuple((s["metric"],) + tuple(number(s.get(k)) if _is_number(s.get(k)) else None for k in keys)
                     for s in scores)
        return sources, [Table(f"Parsing scores of {labels[path]}", cols, rows)]
    first_path, first_kind, first_scores = parsed[0]
    names = [s["metric"] for s in first_scores]
    for path, kind, scores in parsed[1:]:
        if kind != first_kind or [s["metric"] for s in scores] != names:
            raise ResultFileError(f"{path}: its scores ({', '.join(s['metric'] for s in scores)}, {kind}) differ "
                                  f"from those of {first_path} ({', '.join(names)}, {first_kind}); a report "
                                  "compares results of the same metrics.")
    key = "f1" if first_kind == "conll18" else "value"
    rows_: list[tuple[Any, ...]] = [(labels[p],) + tuple(number(s[key]) for s in sc) for p, _, sc in parsed]
    best = [(r, c) for c, _ in enumerate(names, start=1)
            for r in _best_rows([row[c] for row in rows_], True)]
    table = Table(f"Parsing systems compared ({key})",
                  (Column("system", "text"),) + tuple(Column(n, higher_is_better=True) for n in names),
                  tuple(rows_), tuple(best), (),
                  ("▲ marks the best of each column; parse-eval results hold no instances, so no significance "
                   "test is made.",))
    return sources, [table]


# --------------------------------------------------------------------------- UEManager
def _managers(items: list[tuple[Path, Any]], labels: dict[Path, str], *, n_resamples: int | None, seed: int
              ) -> tuple[list[Source], list[Table | Chart]]:
    sources: list[Source] = []
    sections: list[Table | Chart] = []
    for path, _ in items:
        try:
            man = assay.UEManager.load(path)
        except AssayError as exc:
            raise ResultFileError(_with_path(path, exc)) from None
        sources.append(Source(str(path), "uemanager",
                              f"{man.n_examples} examples; estimators {', '.join(man.estimator_names)}; "
                              f"generation metrics {', '.join(man.gen_metric_names)}; "
                              f"UE metrics {', '.join(man.ue_metric_names)}", str(man.signature)))
        sections += _manager_tables(man, labels[path], n_resamples=n_resamples, seed=seed)
        sections += _manager_charts(man, labels[path])
    return sources, sections


def _manager_tables(man: Any, label: str, *, n_resamples: int | None, seed: int) -> list[Table | Chart]:
    out: list[Table | Chart] = []
    rounds = man.n_resamples if n_resamples is None else n_resamples
    # rounds 0 (a manager saved without intervals, and no --n-resamples): no tests, the best marked only;
    # compare_to_best with one round still names the best and the UE metric's direction, cheaply
    options: dict[str, Any] = {"seed": seed, "n_resamples": rounds or 1}
    groups = dict.fromkeys((k[0], k[2]) for k in man.metrics)
    for level, gen in groups:
        keys = [k for k in man.metrics if k[0] == level and k[2] == gen]
        ests = list(dict.fromkeys(k[1] for k in keys))
        ues = list(dict.fromkeys(k[3] for k in keys))
        columns: list[Column] = [Column("estimator", "text")]
        rows: list[list[Any]] = [[e] for e in ests]
        best: list[tuple[int, int]] = []
        tied: list[tuple[int, int]] = []
        for c, ue in enumerate(ues, start=1):
            for r, est in enumerate(ests):
                key = (level, est, gen, ue)
                value = man.metrics.get(key)
                interval = man.intervals.get(key)
                rows[r].append(None if value is None else
                               _cell(value, *interval) if interval else _cell(value))
            try:
                if rounds:
                    winner, comps = man.compare_to_best(level, gen, ue, **options)
                else:  # no tests: one cheap comparison gives the direction, the best is picked as compare_to_best does
                    winner, comps = _best_only(man, level, gen, ue, ests, seed)
            except AssayError:  # a saved custom UE metric that cannot be loaded again: values only
                columns.append(Column(ue, spread="interval"))
                continue
            hib = None
            if winner is not None:
                best.append((ests.index(winner), c))
                for est, comp in comps.items():
                    hib = bool(comp.higher_is_better)
                    if rounds and math.isfinite(comp.ci_low) and math.isfinite(comp.ci_high) and comp.better != "a":
                        tied.append((ests.index(est), c))
            columns.append(Column(ue, spread="interval", higher_is_better=hib))
        settings = f"{man.n_resamples} resamples" if man.n_resamples else "none saved"
        tests = (f"Bold: not significantly worse than the best of its column (UEManager.compare_to_best, paired "
                 f"bootstrap, {rounds} resamples, seed {seed}); ▲ marks the best." if rounds else
                 "▲ marks the best of each column; no significance test (the manager was saved without intervals: "
                 "give --n-resamples to test).")
        out.append(Table(f"{label}: UE metrics, {level} level, quality = {gen}", tuple(columns),
                         tuple(tuple(r) for r in rows), tuple(best), tuple(tied),
                         (f"{tests} Intervals: {settings}.",)))
    return out


def _best_only(man: Any, level: str, gen: str, ue: str, ests: list[str], seed: int) -> tuple[str | None, dict]:
    """``(best, {one other: its Comparison})`` of a column without tests: the first finite value that is the
    highest (or lowest, by the UE metric's direction) of the column, like ``UEManager.compare_to_best``."""
    finite = [e for e in ests if _finite(man.metrics.get((level, e, gen, ue)))]
    if not finite:
        return None, {}
    if len(finite) == 1:
        return finite[0], {}
    comp = man.compare((level, finite[0], gen, ue), (level, finite[1], gen, ue), n_resamples=1, seed=seed)
    pick = max if comp.higher_is_better else min
    best = pick(finite, key=lambda e: man.metrics[(level, e, gen, ue)])
    return best, {finite[1] if best != finite[1] else finite[0]: comp}


def _flat(x: Any, level: str) -> np.ndarray:
    return np.asarray(x if level == "sequence" else np.concatenate([np.asarray(a, float) for a in x]), dtype=float)


def _manager_charts(man: Any, label: str) -> list[Table | Chart]:
    # deferred: assay-uncertainty computes the curves; it is installed wherever a UEManager could be loaded
    from assay_report import curves
    from assay_uncertainty.manager.plots import rejection_curve, risk_coverage_curve

    def series(name: str, x: np.ndarray, y: np.ndarray, style: str) -> Series:
        """A series of at most :data:`curves.MAX_POINTS` points (:func:`curves.thin`)."""
        tx, ty = curves.thin(x, y)
        return Series(name, tuple(tx.tolist()), tuple(ty.tolist()), style=style)

    out: list[Table | Chart] = []
    for (level, gen), q_raw in man.gen_metrics.items():
        q_all = _flat(q_raw, level)
        risk_series: list[Series] = []
        rej_series: list[Series] = []
        rel_series: list[Series] = []
        for (elevel, est), u_raw in man.estimations.items():
            if elevel != level:
                continue
            u_all = _flat(u_raw, level)
            ok = np.isfinite(u_all) & np.isfinite(q_all)
            if not ok.any():
                continue
            u, q = u_all[ok], q_all[ok]
            cov, risk = risk_coverage_curve(u, q)
            risk_series.append(series(est, cov, risk, "step"))
            frac, kept, _, _ = rejection_curve(u, q)
            rej_series.append(series(est, frac, kept, "line"))
            if np.all((q == 0) | (q == 1)) and u.min() >= 0 and u.max() <= 1:
                conf, acc, _ = curves.reliability(1 - u, q)
                rel_series.append(Series(f"1 - {est}", tuple(conf.tolist()), tuple(acc.tolist()), style="markers"))
        if not risk_series:
            continue
        q = q_all[np.isfinite(q_all)]
        ocov, orisk = curves.oracle_risk_coverage(q)
        frac, _, best, rand = rejection_curve(np.zeros(q.size), q)
        risk_series += [series("oracle", ocov, orisk, "dash"),
                        Series("random", (0.0, 1.0), (1 - rand, 1 - rand), style="dot")]
        rej_series += [series("oracle", frac, best, "dash"),
                       Series("random", (0.0, 1.0), (rand, rand), style="dot")]
        thinned = (f"Series of more than {curves.MAX_POINTS} points are drawn at {curves.MAX_POINTS} evenly spaced "
                   "points.",)
        out.append(Chart(f"{label}: risk-coverage, {level} level, quality = {gen} (lower is better)", "coverage",
                         "selective risk (1 - quality)", tuple(risk_series), thinned))
        out.append(Chart(f"{label}: rejection curves, {level} level, quality = {gen} (higher is better)",
                         "rejected fraction (most uncertain first)", "mean quality of the kept examples",
                         tuple(rej_series), thinned))
        if rel_series:
            rel_series.append(Series("perfect calibration", (0.0, 1.0), (0.0, 1.0), style="dash"))
            out.append(Chart(f"{label}: reliability, {level} level, correct = {gen}",
                             "mean confidence (1 - estimation) of the bin", "accuracy of the bin",
                             tuple(rel_series), ("15 equal-width bins, each closed on the right (as assay's ECE); "
                                                 "empty bins are left out.",)))
    return out


# --------------------------------------------------------------------------- assay run trees
def _tree(path: Path, what: str) -> dict[str, Any]:
    tree = decode_numbers(read_json(path, what=what))
    if not isinstance(tree, dict):
        raise ResultFileError(f"{path}: expected {what} (a JSON object), got a JSON {type(tree).__name__}.")
    return tree


def _node(tree: dict[str, Any], unc: str, agg: str, levels: list[str]) -> Any:
    node: Any = tree.get("mean", {})
    if "unc_type" in levels and isinstance(node, dict):
        node = node.get(unc)
    if "aggregation" in levels and isinstance(node, dict):
        node = node.get(agg)
    return node.get("metrics", node) if isinstance(node, dict) else None


def _mean_std(vals: list[float]) -> Any:
    """``[mean, sample std]`` of the non-NaN values (std NaN for one value); None for none."""
    vals = [x for x in vals if not math.isnan(x)]
    if not vals:
        return None
    mean = math.fsum(vals) / len(vals)
    std = math.sqrt(math.fsum((x - mean) ** 2 for x in vals) / (len(vals) - 1)) if len(vals) > 1 else math.nan
    return [number(mean), number(std)]


def _values_table(path: Path) -> tuple[Source, list[str], list[Column], list[list[Any]]]:
    """A ValUES-layout tree (``assay-values-run.json``): rows (pred_model, unc_type, aggregation) over seeds.

    Its manifest declares no metric direction, so nothing is marked."""
    manifest_path = path / VALUES_MANIFEST
    manifest = _tree(manifest_path, "the manifest of a ValUES-layout run")
    versions, tasks = manifest.get("versions"), manifest.get("tasks")
    if not isinstance(versions, list) or not isinstance(tasks, list):
        raise ResultFileError(f"{manifest_path}: expected 'versions' and 'tasks' (lists).")
    base = Path(str(manifest.get("base_path") or path))
    cells: dict[tuple[str, ...], dict[str, list[float]]] = {}
    col_keys: list[str] = []
    for i, v in enumerate(versions):
        try:
            exp = Path(v["exp_path"])
            rows = [(str(v["pred_model"]), str(unc), str(agg)) for unc in v["unc_types"]
                    for agg in (v["aggregations"] or ["-"])]
        except (KeyError, TypeError):
            raise ResultFileError(f"{manifest_path}: versions[{i}]: expected pred_model, exp_path, unc_types and "
                                  "aggregations.") from None
        if not exp.is_dir() and exp.is_relative_to(base):  # a tree moved since it was written
            exp = path / exp.relative_to(base)
        for task in tasks:
            file = exp / f"{task}.json"
            if not file.is_file():
                raise ResultFileError(f"{file}: listed by {manifest_path} but missing.")
            tree = _tree(file, "a result tree of a ValUES-layout run")
            for row in rows:
                node = tree.get("mean", {}).get(row[1], {})
                node = node.get(row[2], node) if isinstance(node, dict) else {}
                metrics = node.get("metrics", {}) if isinstance(node, dict) else {}
                for name, value in metrics.items() if isinstance(metrics, dict) else ():
                    key = f"{task}: {name}"
                    if key not in col_keys:
                        col_keys.append(key)
                    if _is_number(value):
                        cells.setdefault(row, {}).setdefault(key, []).append(float(value))
    columns = [Column(k, "text") for k in ("pred_model", "unc_type", "aggregation")]
    columns += [Column(k, spread="std") for k in col_keys]
    rows_ = [list(row) + [_mean_std(per.get(k, [])) for k in col_keys] for row, per in cells.items()]
    source = Source(str(path), "run", f"ValUES layout; {len(versions)} versions; tasks {', '.join(map(str, tasks))}",
                    str(manifest.get("signature") or ""))
    return source, col_keys, columns, rows_


def _run_table(path: Path) -> tuple[Source, list[str], list[Column], list[list[Any]]]:
    """The manifest's versions averaged over seeds: (source, columns' keys, columns, rows)."""
    if not (path / RUN_MANIFEST).is_file():
        return _values_table(path)
    manifest_path = path / RUN_MANIFEST
    manifest = _tree(manifest_path, "the manifest of 'assay run'")
    versions, tasks = manifest.get("versions"), manifest.get("tasks")
    if not isinstance(versions, list) or not isinstance(tasks, dict):
        raise ResultFileError(f"{manifest_path}: expected 'versions' (a list) and 'tasks' (an object).")
    extra = list(dict.fromkeys(k for v in versions for k in v.get("params", {}) if k not in ("pred_model", "seed")))
    col_keys: list[str] = []
    columns: list[Column] = [Column(k, "text") for k in (*extra, "pred_model", "unc_type", "aggregation")]
    specs = []
    for key, info in tasks.items():
        splits = [None] if info.get("combine_splits") else list(info.get("datasets", []))
        for m in info.get("metrics", []):
            for split in splits:
                label = f"{key}: {m['name']}" + (f" {split}" if split else "")
                col_keys.append(label)
                columns.append(Column(label, spread="std", higher_is_better=bool(m.get("higher_is_better", True))))
                specs.append((key, info, m, split))
    cells: dict[tuple[str, ...], dict[int, list[float]]] = {}
    cache: dict[Path, dict[str, Any]] = {}
    for i, v in enumerate(versions):
        try:
            prefix = tuple(str(v["params"].get(k, "")) for k in extra)
            out_dir = path / v["output_dir"]
            version_rows = [(unc, agg) for unc in v["unc_types"] for agg in (v["aggregations"] or ["-"])]
            pred = str(v["pred_model"])
        except (KeyError, TypeError, AttributeError):
            raise ResultFileError(f"{manifest_path}: versions[{i}]: expected pred_model, params, unc_types, "
                                  "aggregations and output_dir.") from None
        for unc, agg in version_rows:
            cells.setdefault(prefix + (pred, str(unc), str(agg)), {})
        for j, (_key, info, m, split) in enumerate(specs):
            file = out_dir / info["file_name"] if split is None else out_dir / split / info["file_name"]
            if file not in cache:
                if not file.is_file():
                    raise ResultFileError(f"{file}: listed by {manifest_path} but missing.")
                cache[file] = _tree(file, "a result tree of 'assay run'")
            for unc, agg in version_rows:
                node = _node(cache[file], str(unc), str(agg), list(m.get("levels", [])))
                value = float(node[m["name"]]) if isinstance(node, dict) and m["name"] in node else math.nan
                cells[prefix + (pred, str(unc), str(agg))].setdefault(j, []).append(value)
    rows = []
    for row_key, per_col in cells.items():
        row: list[Any] = list(row_key)
        row += [_mean_std(per_col.get(j, [])) for j in range(len(specs))]
        rows.append(row)
    source = Source(str(path), "run", f"{len(versions)} versions; tasks {', '.join(tasks)}",
                    str(manifest.get("signature") or ""))
    return source, col_keys, columns, rows


def _runs(items: list[tuple[Path, Any]], labels: dict[Path, str], **_: Any
          ) -> tuple[list[Source], list[Table | Chart]]:
    tables = [(p, *_run_table(p)) for p, _data in items]
    first_path, _first_src, first_keys, first_cols, _first_rows = tables[0]
    for path, _src, keys, cols, _rows in tables[1:]:
        if keys != first_keys or [c.label for c in cols] != [c.label for c in first_cols]:
            raise ResultFileError(f"{path}: its tasks and metrics ({', '.join(keys)}) differ from those of "
                                  f"{first_path} ({', '.join(first_keys)}); a report compares runs of the same "
                                  "metrics.")
    several = len(tables) > 1
    columns = ([Column("run", "text")] if several else []) + first_cols
    rows = [([labels[p]] if several else []) + r for p, _src, _keys, _cols, rs in tables for r in rs]
    best = []
    for c, col in enumerate(columns):
        if col.kind != "num" or col.higher_is_better is None:
            continue
        values = [r[c][0] if isinstance(r[c], list) else None for r in rows]
        best += [(r, c) for r in _best_rows(values, col.higher_is_better)]
    title = "Runs compared" if several else f"Results of {labels[first_path]}"
    marked = any(c.higher_is_better is not None for c in columns)
    table = Table(title, tuple(columns), tuple(tuple(r) for r in rows), tuple(best), (),
                  ("Mean ± sample standard deviation over seeds; " + (
                      "▲ marks the best mean of each column (no significance test: the run's tables give none)."
                      if marked else "nothing is marked: the ValUES manifest declares no metric direction."),))
    return [t[1] for t in tables], [table]
