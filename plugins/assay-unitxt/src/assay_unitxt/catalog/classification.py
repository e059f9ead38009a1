"""unitxt's label metrics under its conventions: ``accuracy_fast``, ``string_containment``,
``f1_fast`` (``metrics.f1_micro``, ``metrics.f1_macro``), ``f1_weighted`` and ``ner``.

Each class reproduces the unitxt 1.26.10 class named in its docstring (score names, main score,
instance scores = the metric on one instance alone, which scores get intervals). Written here
rather than configured from assay-classic's ``accuracy`` / ``f1`` because unitxt's conventions
differ: labels are compared as ``str(value)``, the label set of F1 is the references' labels only
(predicted labels outside it count as errors, not as classes), and the per-class scores are
named ``f1_<label>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.metrics import GlobalMetric, InstanceMetric, Metric
from assay.validation import check_number, undefined_metric
from assay_unitxt.catalog.custom_f1 import CustomF1
from assay_unitxt.catalog.inputs import CheckedInputs

#: what assay accepts where unitxt types a prediction ``Any`` and compares ``str(prediction)``: a label
LABEL = str | int | float | bool


def no_nan(metric: Any, prediction: Any) -> Any:
    """unitxt compares ``str(prediction)`` and so scores a NaN as the label ``"nan"``; assay rejects it."""
    if isinstance(prediction, float) and prediction != prediction:
        check_number(prediction, "prediction", owner=metric.name or type(metric).__name__)
    return prediction


def _floats(metric: Any, predictions: list[Any]) -> list[float]:
    owner = metric.name or type(metric).__name__
    return [check_number(p, "prediction", owner=owner) for p in predictions]

__all__ = ["Accuracy", "BinaryF1", "ExactMatchMM", "F1Fast", "F1Weighted", "MultiLabelF1", "Ner", "RocAuc",
           "LABEL", "StringContainment", "no_nan"]


class Accuracy(CheckedInputs, InstanceMetric):
    """unitxt's ``AccuracyFast`` (``metrics.accuracy``): 1.0 when ``str(prediction)`` equals
    ``str(reference)`` for some reference."""

    input_type = "label"

    examples = [{"predictions": ["a", "b", "a", "c"], "references": [["a"], ["a"], ["a"], ["c"]]}]

    prediction_type = LABEL
    main_score = "accuracy"
    ci_scores = ["accuracy"]

    def compute_instance(self, prediction: Any, references: Any, task_data: Any = None) -> float:
        return float(str(no_nan(self, prediction)) in [str(r) for r in references])


class StringContainment(CheckedInputs, InstanceMetric):
    """unitxt's ``StringContainment`` (``metrics.string_containment``): 1.0 when some
    ``str(reference)`` is a substring of ``str(prediction)``."""

    input_type = "label"

    examples = [{"predictions": ["a b c", "d e", "f"], "references": [["a b"], ["d e"], ["g"]]}]

    prediction_type = LABEL
    main_score = "string_containment"
    ci_scores = ["string_containment"]

    def compute_instance(self, prediction: Any, references: Any, task_data: Any = None) -> float:
        return float(any(str(r) in str(no_nan(self, prediction)) for r in references))


def _f1(y_true: list[str], y_pred: list[str], labels: list[str], average: str | None) -> Any:
    # scikit-learn is unitxt's reference implementation of these averages; deferred: heavy optional import
    from sklearn.metrics import f1_score  # type: ignore[import-untyped]  # deferred: heavy optional import

    return f1_score(y_true, y_pred, labels=labels, average=average, zero_division=0)


class F1Fast(CheckedInputs, Metric):
    """unitxt's ``F1Fast`` (``metrics.f1_micro``, ``metrics.f1_macro``): scikit-learn's F1 over the
    labels found among the references (first reference of each instance), ``zero_division=0``.

    ``averages`` picks the scores: ``f1`` (macro, named ``f1``), ``micro`` (``f1_micro``),
    ``macro`` (``f1_macro``), ``per_class`` (``f1_<label>``). The intermediate of an instance is
    its ``(prediction, reference)`` pair, so an instance score is the F1 of that instance alone,
    as in unitxt.
    """

    input_type = "label"

    examples = [{"predictions": ["a", "b", "a", "c"], "references": [["a"], ["a"], ["b"], ["c"]]}]

    requirements = {"sklearn": "scikit-learn"}
    main_score = "f1"
    prediction_type = str

    def __init__(self, *, averages: Sequence[str] = ("f1", "micro", "macro", "per_class"),
                 main_score: str = "f1", ci_score_names: Sequence[str] | None = None,
                 score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        unknown = sorted(set(averages) - {"f1", "micro", "macro", "per_class"})
        if unknown:
            from assay.errors import InvalidParameterError

            raise InvalidParameterError(
                f"f1_fast: unknown averages {unknown}; choose among ['f1', 'micro', 'macro', 'per_class'].")
        self.averages = list(averages)
        self.main_score = main_score
        self.ci_score_names = list(ci_score_names) if ci_score_names is not None else None
        # unitxt bootstraps every float score unless ci_score_names is given; the per-class scores
        # depend on the labels present, so assay's intervals cover the averaged scores
        self.ci_scores = (list(ci_score_names) if ci_score_names is not None else
                          [{"f1": "f1", "micro": "f1_micro", "macro": "f1_macro"}[a]
                           for a in self.averages if a != "per_class"])

    def map(self, prediction: Any, references: Any, task_data: Any = None) -> tuple[Any, Any]:
        return (prediction, references[0])

    def reduce(self, intermediates: Any) -> dict[str, float]:
        if len(intermediates) == 0:
            return {self.main_score: undefined_metric(f"{self.main_score}: no instances; NaN.")}
        y_pred = [p for p, _ in intermediates]
        y_true = [r for _, r in intermediates]
        labels = list(dict.fromkeys(y_true))
        out: dict[str, float] = {}
        if "f1" in self.averages:
            out["f1"] = float(_f1(y_true, y_pred, labels, "macro"))
        if "micro" in self.averages:
            out["f1_micro"] = float(_f1(y_true, y_pred, labels, "micro"))
        if "macro" in self.averages:
            out["f1_macro"] = float(_f1(y_true, y_pred, labels, "macro"))
        if "per_class" in self.averages:
            for label, value in zip(labels, _f1(y_true, y_pred, labels, None)):
                out[f"f1_{label}"] = float(value)
        return out


class F1Weighted(CheckedInputs, GlobalMetric):
    """unitxt's ``F1Weighted`` (``metrics.f1_weighted``): scikit-learn's weighted F1 over the
    references' labels (scikit-learn's default ``zero_division``, as unitxt)."""

    input_type = "label"

    examples = [{"predictions": ["a", "b", "a", "c"], "references": [["a"], ["a"], ["b"], ["c"]]}]

    requirements = {"sklearn": "scikit-learn"}
    main_score = "f1_weighted"
    prediction_type = str
    single_reference_per_prediction = True

    def compute_global(self, predictions: list[Any], references: list[Any], task_data: list[Any]) -> float:
        import warnings

        from sklearn.metrics import f1_score  # deferred: heavy optional import

        if not references:
            return undefined_metric("f1_weighted: no instances; NaN.")
        y_true = [r[0] for r in references]
        with warnings.catch_warnings():  # unitxt passes no zero_division: 0.0 with scikit-learn's warning
            warnings.simplefilter("ignore")
            return float(f1_score(y_true, list(predictions), labels=list(dict.fromkeys(y_true)),
                                  average="weighted"))


class Ner(CustomF1):
    """unitxt's ``NER`` (``metrics.ner``, a ``CustomF1``): entity-level F1 of ``(entity, type)`` pairs.

    Per type: precision = matched predicted pairs / predicted pairs, recall = matched reference
    pairs / reference pairs (a pair matches up to its count on the other side); ``f1_<type>`` for
    the types found in the references, ``f1_macro`` (the sum of those F1s divided by the number
    of scores reported so far, unitxt's formula), ``recall_macro``, ``precision_macro``,
    ``in_classes_support``, ``f1_micro`` (main), ``recall_micro``, ``precision_micro``
    (:class:`~assay_unitxt.catalog.custom_f1.CustomF1`).
    """

    input_type = "list[list[text]]"

    examples = [{"predictions": [[("J", "PER"), ("P", "LOC")], [("I", "ORG")], []],
                 "references": [[[("J", "PER")]], [[("I", "ORG"), ("B", "PER")]], [[("X", "LOC")]]]}]

    prediction_type = list[tuple[str, str]]

    def group(self, element: Any, task_data: Any) -> Any:
        return element[1]

    def representation(self, element: Any, task_data: Any) -> Any:
        return str(element)


class BinaryF1(CheckedInputs, GlobalMetric):
    """unitxt's ``F1Binary`` / ``PrecisionBinary`` / ``RecallBinary`` (``metrics.f1_binary``,
    ``metrics.precision_binary``, ``metrics.recall_binary``): predictions above 0.5 are positive;
    scikit-learn's per-class precision, recall and F1 of labels 0 and 1 reported as
    ``<metric>_binary`` (class 1) and ``<metric>_binary_neg`` (class 0); no instance scores;
    intervals for ``f1_binary`` and ``f1_binary_neg`` (unitxt's, whatever the main score)."""

    input_type = "number"

    examples = [{"predictions": [0.9, 0.2, 0.6, 0.4, 0.8], "references": [[1.0], [0.0], [0.0], [1.0], [1.0]]}]

    per_instance = False
    prediction_type = float
    single_reference_per_prediction = True
    ci_scores = ["f1_binary", "f1_binary_neg"]
    requirements = {"sklearn": "scikit-learn"}

    def __init__(self, *, main_score: str = "f1_binary", threshold: float = 0.5, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.main_score = main_score
        self.threshold = float(threshold)

    def compute_global(self, predictions: list[Any], references: list[Any], task_data: list[Any]) -> dict[str, float]:
        import warnings

        from sklearn.metrics import precision_recall_fscore_support  # deferred: heavy optional import

        if not references:
            return {self.main_score: undefined_metric(f"{self.main_score}: no instances; NaN.")}
        y_true = [int(r[0]) for r in references]
        y_pred = [int(p > self.threshold) for p in _floats(self, predictions)]
        with warnings.catch_warnings():  # unitxt passes no zero_division: 0.0 with scikit-learn's warning
            warnings.simplefilter("ignore")
            p, r, f, _ = precision_recall_fscore_support(y_true, y_pred, labels=[0, 1], average=None)
        return {"f1_binary": float(f[1]), "f1_binary_neg": float(f[0]), "recall_binary": float(r[1]),
                "recall_binary_neg": float(r[0]), "precision_binary": float(p[1]),
                "precision_binary_neg": float(p[0])}


class RocAuc(CheckedInputs, GlobalMetric):
    """unitxt's ``RocAuc`` (``metrics.roc_auc``): scikit-learn's ``auc(roc_curve(references,
    predictions))``; no instance scores."""

    input_type = "number"

    examples = [{"predictions": [0.9, 0.2, 0.6, 0.4, 0.8], "references": [[1.0], [0.0], [0.0], [1.0], [1.0]]}]

    requirements = {"sklearn": "scikit-learn"}
    main_score = "roc_auc"
    per_instance = False
    single_reference_per_prediction = True
    prediction_type = float

    def compute_global(self, predictions: list[Any], references: list[Any], task_data: list[Any]) -> float:
        from sklearn.metrics import auc, roc_curve  # deferred: heavy optional import

        if not references:
            return undefined_metric("roc_auc: no instances; NaN.")
        fpr, tpr, _ = roc_curve([r[0] for r in references], _floats(self, predictions))
        return float(auc(fpr, tpr))


class MultiLabelF1(CheckedInputs, GlobalMetric):
    """unitxt's ``F1MultiLabel`` family (``metrics.f1_micro_multi_label``, ``f1_macro_multi_label``,
    ``precision_*_multi_label``, ``recall_*_multi_label``): predictions and the single reference are
    lists of labels; scikit-learn's ``metric`` (f1, precision, recall) of their indicator rows over
    the references' labels (predicted labels outside them are ignored), with ``average`` micro or
    macro, or per label (``average=None``: ``<metric>_<label>`` and their NaN-ignoring mean as the
    main score); NaN when the references have no label."""

    input_type = "list[label]"

    examples = [{"predictions": [["a", "b"], ["c"], [], ["a"]],
                 "references": [[["a"]], [["c", "b"]], [["a"]], [["a"]]]}]

    prediction_type = list[str]
    requirements = {"sklearn": "scikit-learn"}
    single_reference_per_prediction = True

    def __init__(self, *, main_score: str, metric: str = "f1", average: str | None = None,
                 score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.main_score = main_score
        self.metric = metric
        self.average = average

    def compute_global(self, predictions: list[Any], references: list[Any], task_data: list[Any]) -> dict[str, float]:
        import math
        import warnings

        from sklearn import metrics  # type: ignore[import-untyped]  # deferred: heavy optional import

        refs = [r[0] for r in references]
        labels = list({label for ref in refs for label in ref})
        if not labels:
            return {self.main_score: math.nan}
        index = {label: i for i, label in enumerate(labels)}

        def rows(lists: list[Any]) -> list[list[int]]:
            out = []
            for values in lists:
                row = [0] * len(labels)
                for v in values:
                    if v in index:
                        row[index[v]] = 1
                out.append(row)
            return out

        fn = {"f1": metrics.f1_score, "precision": metrics.precision_score, "recall": metrics.recall_score}[self.metric]
        kwargs: dict[str, Any] = {"average": self.average}
        if len(labels) == 1:  # unitxt's guard: a single indicator column is read as class ids otherwise
            kwargs["labels"] = [1]
        with warnings.catch_warnings():  # unitxt passes no zero_division: 0.0 with scikit-learn's warning
            warnings.simplefilter("ignore")
            score = fn(rows(refs), rows(predictions), **kwargs)
        if self.average is None:
            values = [float(s) for s in score]
            finite = [v for v in values if not math.isnan(v)]
            out = {self.main_score: sum(finite) / len(finite) if finite else math.nan}
            out.update({f"{self.metric}_{label}": v for label, v in zip(labels, values)})
            return out
        return {self.main_score: float(score)}


class ExactMatchMM(CheckedInputs, InstanceMetric):
    """unitxt's ``ExactMatchMM`` (``metrics.exact_match_mm``, MMStar's rule): the lower-cased,
    stripped reference equals the prediction's first character, or the one after ``(``,
    ``option `` or ``the answer is ``; best over the references. No interval (``n_resamples`` null)."""

    input_type = "label"

    examples = [{"predictions": ["A", "(b)", "option c"], "references": [["a"], ["c"], ["C"]]}]

    prediction_type = LABEL
    main_score = "exact_match_mm"
    ci_scores: list[str] = []

    @staticmethod
    def _match(pred: str, gt: str) -> float:
        answer = gt.lower().strip().replace("\n", " ")
        predict = pred.lower().strip().replace("\n", " ")
        try:
            if answer == predict[0]:
                return 1.0
            if predict[0] == "(" and answer == predict[1]:
                return 1.0
            if predict[0:7] == "option " and answer == predict[7]:
                return 1.0
            if predict[0:14] == "the answer is " and answer == predict[14]:
                return 1.0
        except IndexError:
            return 0.0
        return 0.0

    def compute_instance(self, prediction: Any, references: Any, task_data: Any = None) -> float:
        return max(self._match(str(no_nan(self, prediction)), str(r)) for r in references)
