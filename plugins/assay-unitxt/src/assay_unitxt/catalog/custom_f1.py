"""unitxt's ``CustomF1`` family with a matching rule of its own: ``fuzzy_ner``, ``metric_based_ner``, ``kpa``.

unitxt's ``CustomF1`` groups the elements of each prediction and reference (an entity type, a key
point), counts matched elements per group -- a predicted element matches a reference element of
its group up to the smaller count -- and reports ``f1_<group>`` / ``recall_<group>`` /
``precision_<group>`` for the groups found in the references, their macro means (``f1_macro``
divides by the number of scores reported so far, unitxt's formula), ``in_classes_support`` and
the micro scores (``f1_micro`` main). :class:`CustomF1` is that computation with the element's
group, representation, whether it is ignored and the match count as methods; ``metrics.ner``
(exact matches) is :class:`assay_unitxt.catalog.classification.Ner`.
"""

from __future__ import annotations

from collections import Counter
from difflib import SequenceMatcher
from typing import Any

from assay.errors import InvalidParameterError
from assay.metrics import GlobalMetric
from assay_unitxt.catalog.inputs import CheckedInputs

__all__ = ["CustomF1", "FuzzyNer", "Kpa", "MetricBasedNer"]


class CustomF1(CheckedInputs, GlobalMetric):
    """unitxt's ``CustomF1`` computation; subclasses say how an element is grouped, represented and matched."""

    main_score = "f1_micro"
    single_reference_per_prediction = True

    def __init__(self, *, zero_division: float = 0.0, report_per_group_scores: bool = True,
                 score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.zero_division = float(zero_division)
        self.report_per_group_scores = bool(report_per_group_scores)

    def group(self, element: Any, task_data: Any) -> Any:
        raise NotImplementedError

    def representation(self, element: Any, task_data: Any) -> Any:
        raise NotImplementedError

    def ignored(self, element: Any, task_data: Any) -> bool:
        return False

    def matched(self, actual: Counter[Any], total: Counter[Any], elements: dict[Any, Any]) -> float:
        """How many of ``actual``'s elements match one of ``total``'s (``elements``: representation -> element)."""
        return float(sum(min(actual[k], total[k]) for k in actual))

    def _grouped(self, elements: Any, td: Any, seen: dict[Any, Any]) -> dict[Any, Counter[Any]]:
        if not isinstance(elements, list):
            elements = [elements]
        keys = {self.group(e, td) for e in elements if not self.ignored(e, td)}
        out: dict[Any, Counter[Any]] = {k: Counter() for k in keys}
        for e in elements:
            g = self.group(e, td)
            if g in out:
                rep = self.representation(e, td)
                seen.setdefault(rep, e)
                out[g][rep] += 1
        return out

    def _ratio(self, num: float, den: float) -> float:
        return self.zero_division if num == 0 and den == 0 else num / den

    def _f1(self, pn: float, pd: float, rn: float, rd: float) -> float:
        p, r = self._ratio(pn, pd), self._ratio(rn, rd)
        return self.zero_division if p + r == 0 else 2 * p * r / (p + r)

    def compute_global(self, predictions: list[Any], references: list[Any], task_data: list[Any]) -> dict[str, float]:
        refs = [r[0] for r in references]
        tds = [td if td is not None else {} for td in task_data]
        known = {self.group(e, td) for sub, td in zip(refs, tds)
                 for e in (sub if isinstance(sub, list) else [sub]) if not self.ignored(e, td)}
        stats: dict[Any, list[float]] = {}
        seen: dict[Any, Any] = {}
        for ref, pred, td in zip(refs, predictions, tds):
            gr, gp = self._grouped(ref, td, seen), self._grouped(pred, td, seen)
            for group in set(gr) | set(gp):
                r_c, p_c = gr.get(group, Counter()), gp.get(group, Counter())
                s = stats.setdefault(group, [0.0, 0.0, 0.0, 0.0])
                s[0] += self.matched(p_c, r_c, seen)
                s[1] += sum(p_c.values())
                s[2] += self.matched(r_c, p_c, seen)
                s[3] += sum(r_c.values())
        out: dict[str, float] = {}
        rec: dict[str, float] = {}
        prec: dict[str, float] = {}
        unknown = 0.0
        tot = [0.0, 0.0, 0.0, 0.0]
        for group, (pn, pd, rn, rd) in stats.items():
            tot = [tot[0] + pn, tot[1] + pd, tot[2] + rn, tot[3] + rd]
            if group in known:
                out[f"f1_{group}"] = self._f1(pn, pd, rn, rd)
                rec[f"recall_{group}"] = self._ratio(rn, rd)
                prec[f"precision_{group}"] = self._ratio(pn, pd)
            else:
                unknown += pd
        if out:
            out["f1_macro"] = sum(out.values()) / len(out)
            out["recall_macro"] = sum(rec.values()) / len(rec)
            out["precision_macro"] = sum(prec.values()) / len(prec)
        else:
            out["f1_macro"] = out["recall_macro"] = out["precision_macro"] = self.zero_division
        out["in_classes_support"] = 1.0 if tot[1] == 0 else 1.0 - unknown / tot[1]
        pn, pd, rn, rd = tot
        out["f1_micro"] = self._f1(pn, pd, rn, rd)
        out["recall_micro"] = self._ratio(rn, rd)
        out["precision_micro"] = self._ratio(pn, pd)
        if not self.report_per_group_scores:
            for group in known:
                out.pop(f"f1_{group}", None)
        return out


class _SimilarityNer(CustomF1):
    """NER pairs ``(text, type)``: a predicted entity matches the reference entity of its type whose text is
    most similar, when the similarity reaches ``min_score_for_match`` (unitxt's ``CustomF1Fuzzy``)."""

    input_type = "list[list[text]]"
    prediction_type = list[tuple[str, str]] | list[list[str]]
    min_score_for_match: float = 0.75

    def group(self, element: Any, task_data: Any) -> Any:
        return element[1]

    def representation(self, element: Any, task_data: Any) -> Any:
        return str(element)

    def similarity(self, a: str, b: str) -> float:
        raise NotImplementedError

    def matched(self, actual: Counter[Any], total: Counter[Any], elements: dict[Any, Any]) -> float:
        count = 0.0
        for key in actual:
            best, best_key = self.min_score_for_match, None
            for other in total:
                a, b = elements[key], elements[other]
                if a[1] == b[1]:
                    score = self.similarity(a[0], b[0])
                    if score >= best:
                        best, best_key = score, other
            count += min(actual[key], total[best_key]) if best_key is not None else 0
        return count


class FuzzyNer(_SimilarityNer):
    """unitxt's ``FuzzyNer`` (``metrics.fuzzyner``): entity texts match when fuzzywuzzy's ``fuzz.ratio``
    (``round(100 * difflib ratio)``, 100 for equal texts, 0 for an empty one) reaches 76.

    fuzzywuzzy computes the ratio with ``difflib.SequenceMatcher`` unless python-Levenshtein is
    installed; this is the ``difflib`` ratio (standard library), as unitxt runs without it.
    """

    examples = [{"predictions": [[("John Smith", "PER"), ("Pariss", "LOC")], [("IBM", "ORG")]],
                 "references": [[[("John Smyth", "PER"), ("Paris", "LOC")]], [[("I.B.M.", "ORG")]]]}]

    min_score_for_match = 0.750001  # unitxt's threshold (a ratio of 76 or more)

    def similarity(self, a: str, b: str) -> float:
        if a == b:
            return 1.0
        if not a or not b:
            return 0.0
        return int(round(100 * SequenceMatcher(None, a, b).ratio())) / 100.0


class MetricBasedNer(_SimilarityNer):
    """unitxt's ``MetricBasedNer`` (``metrics.metric_based_ner``): entity texts match when another catalog
    metric's global ``score`` of the predicted text against the reference text reaches ``min_score_for_match``
    (``metric="metrics.accuracy"`` by default; any name :func:`assay.load_metric` resolves; ``task_data`` of
    each comparison: ``{"ground_truth": reference, "reference": reference}``, as unitxt passes)."""

    examples = [{"predictions": [[("John", "PER"), ("Paris", "LOC")]], "references": [[[("John", "PER")]]]}]

    def __init__(self, *, metric: Any = "metrics.accuracy", min_score_for_match: float = 0.75,
                 zero_division: float = 0.0, report_per_group_scores: bool = True, score_prefix: str = "") -> None:
        super().__init__(zero_division=zero_division, report_per_group_scores=report_per_group_scores,
                         score_prefix=score_prefix)
        if not isinstance(metric, str):
            raise InvalidParameterError(f"metric_based_ner: 'metric' must be a catalog name; got {metric!r:.80}.")
        import assay

        self.metric = metric
        self._inner = assay.load_metric(metric)
        self.min_score_for_match = float(min_score_for_match)

    def similarity(self, a: str, b: str) -> float:
        inner = self._inner.clone()
        inner.n_resamples = 0
        inner.update([a], [[b]], [{"ground_truth": b, "reference": b}])
        return float(inner.compute_scores()["score"])


class Kpa(CustomF1):
    """unitxt's ``KPA`` (``metrics.kpa``, key point analysis): one group per ``task_data["keypoint"]``; a
    prediction or reference ``"none"`` is ignored, any other text counts as the key point."""

    input_type = "text"
    prediction_type = str
    examples = [{"predictions": ["yes", "none", "yes"], "references": [["yes"], ["yes"], ["none"]],
                 "task_data": [{"keypoint": "k1"}, {"keypoint": "k1"}, {"keypoint": "k2"}]}]

    def _keypoint(self, task_data: Any) -> Any:
        if not isinstance(task_data, dict) or "keypoint" not in task_data:
            raise InvalidParameterError(f"metrics.kpa needs task_data with a 'keypoint' per instance; got "
                                        f"{task_data!r:.80}.")
        return task_data["keypoint"]

    def group(self, element: Any, task_data: Any) -> Any:
        return self._keypoint(task_data)

    def representation(self, element: Any, task_data: Any) -> Any:
        return self._keypoint(task_data)

    def ignored(self, element: Any, task_data: Any) -> bool:
        return bool(element == "none")
