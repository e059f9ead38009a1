"""``evaluate``'s label and number modules, computed with scikit-learn and SciPy as those modules do.

accuracy, f1, precision, recall, matthews_correlation, roc_auc, mae, mse, pearsonr, spearmanr
and glue. Each instance keeps its label (or number, or score row); ``reduce`` calls the
library function ``evaluate``'s module calls, with ``evaluate``'s argument order
(``function(references, predictions)``) and result key.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from assay.errors import InvalidParameterError
from assay_interop._common import check_numeric_inputs, require
from assay_interop.evaluate_modules.base import Module, choice, one_reference

__all__ = ["MODULES"]

_WEIGHTS = "per-instance weights cannot follow the bootstrap resamples; evaluate without them"
_SKLEARN = {"sklearn": "scikit-learn"}
_SCIPY = {"scipy": "scipy"}


class _Labelled(Module):
    """A module of one label (or label row) per instance: map keeps (prediction, reference).

    evaluate casts the inputs to its module's features before computing: labels to int32,
    numbers (``Value("float")``) to float32, then hands them over as Python numbers (or, for
    ``glue``, as NumPy arrays of those types). assay casts the same way, so the values agree to
    the last bit (float32 rounding moves a correlation by about 1e-9).
    """

    #: evaluate's feature type of the (predictions, references)
    features: ClassVar[tuple[str, str]] = ("int32", "int32")
    #: evaluate hands the function NumPy arrays of the feature type (glue's format="numpy")
    numpy_format: ClassVar[bool] = False

    def map(self, prediction: Any, references: Any) -> Any:
        return prediction, one_reference(references, self.where)

    def arrays(self, items: list[Any]) -> tuple[np.ndarray, np.ndarray]:
        preds = np.asarray([p for p, _ in items])
        refs = np.asarray([r for _, r in items])
        check_numeric_inputs(preds, refs, self.where)
        return self._cast(preds, self.features[0]), self._cast(refs, self.features[1])

    def _cast(self, values: np.ndarray, feature: str) -> np.ndarray:
        if values.dtype.kind not in "biuf" or values.dtype == object:
            return values
        if feature == "int32" and values.dtype.kind == "f" and not np.all(np.mod(values, 1) == 0):
            raise InvalidParameterError(f"{self.where}: evaluate's module takes integer labels; got "
                                        f"{values[np.mod(values, 1) != 0][0]!r}.")
        cast = values.astype(np.dtype(feature))
        if self.numpy_format:
            return cast
        return cast.astype(np.float64 if feature == "float32" else np.int64)


class Accuracy(_Labelled):
    name = "accuracy"
    defaults: ClassVar[dict[str, Any]] = {"normalize": True}
    rejected = {"sample_weight": _WEIGHTS}
    configs = (None, "multilabel")
    per_instance = True

    def reduce(self, items: list[Any]) -> dict[str, Any]:
        preds, refs = self.arrays(items)
        metrics = require("sklearn.metrics")
        return {"accuracy": float(metrics.accuracy_score(refs, preds, normalize=self.options["normalize"]))}


class _PRF(_Labelled):
    """f1, precision, recall: scikit-learn's ``*_score(references, predictions, ...)``."""

    defaults: ClassVar[dict[str, Any]] = {"labels": None, "pos_label": 1, "average": "binary"}
    rejected = {"sample_weight": _WEIGHTS}
    configs = (None, "multilabel")
    function: ClassVar[str]

    def check(self) -> None:
        choice(self, "average", ["binary", "micro", "macro", "weighted", "samples"],
               " (average=None gives one score per class, a list; load one metric per class with labels=[c] "
               "and average='macro' instead)")

    def reduce(self, items: list[Any]) -> dict[str, Any]:
        preds, refs = self.arrays(items)
        function = getattr(require("sklearn.metrics"), self.function)
        try:
            value = function(refs, preds, **self.options)
        except ValueError as exc:
            raise InvalidParameterError(f"{self.where}: scikit-learn rejected the "
                                        f"call: {exc}") from exc
        return {self.name: float(value)}


class F1(_PRF):
    name = "f1"
    function = "f1_score"


class Precision(_PRF):
    name = "precision"
    function = "precision_score"
    defaults: ClassVar[dict[str, Any]] = {**_PRF.defaults, "zero_division": "warn"}


class Recall(_PRF):
    name = "recall"
    function = "recall_score"
    defaults: ClassVar[dict[str, Any]] = {**_PRF.defaults, "zero_division": "warn"}


class MatthewsCorrelation(_Labelled):
    name = "matthews_correlation"
    defaults: ClassVar[dict[str, Any]] = {"average": None}
    rejected = {"sample_weight": _WEIGHTS}
    configs = (None, "multilabel")

    def check(self) -> None:
        if self.config == "multilabel":
            choice(self, "average", ["macro"], " (the multilabel configuration gives one score per label "
                   "without average='macro')")
        else:
            choice(self, "average", [None], " (average applies to config_name=multilabel only; evaluate "
                   "ignores it otherwise)")

    def reduce(self, items: list[Any]) -> dict[str, Any]:
        preds, refs = self.arrays(items)
        mcc = require("sklearn.metrics").matthews_corrcoef
        if self.config == "multilabel":
            if preds.ndim != 2 or refs.ndim != 2:
                raise InvalidParameterError(f"{self.where}: the multilabel "
                                            "configuration takes one row of labels per instance.")
            # evaluate's argument order here: matthews_corrcoef(predictions[:, i], references[:, i])
            return {"matthews_correlation": float(np.mean([mcc(preds[:, i], refs[:, i])
                                                           for i in range(refs.shape[1])]))}
        return {"matthews_correlation": float(mcc(refs, preds))}


class RocAuc(_Labelled):
    """Predictions are evaluate's ``prediction_scores``: a score (binary) or a score row."""

    features = ("float32", "int32")
    name = "roc_auc"
    defaults: ClassVar[dict[str, Any]] = {"average": "macro", "max_fpr": None, "multi_class": "raise",
                                         "labels": None}
    rejected = {"sample_weight": _WEIGHTS}
    configs = (None, "multiclass", "multilabel")

    def check(self) -> None:
        choice(self, "average", ["macro", "weighted", "micro", "samples"],
               " (average=None gives one score per class, a list)")

    def reduce(self, items: list[Any]) -> dict[str, Any]:
        scores, refs = self.arrays(items)
        try:
            value = require("sklearn.metrics").roc_auc_score(refs, scores, **self.options)
        except ValueError as exc:
            raise InvalidParameterError(f"{self.where}: scikit-learn rejected the "
                                        f"call: {exc}") from exc
        return {"roc_auc": float(value)}


class _Error(_Labelled):
    higher_is_better = False
    features = ("float32", "float32")
    rejected = {"sample_weight": _WEIGHTS}
    configs = (None, "multilist")
    per_instance = True

    def check(self) -> None:
        choice(self, "multioutput", ["uniform_average"],
               " ('raw_values' gives one score per output, a list; an array of weights is not supported)")


class Mae(_Error):
    name = "mae"
    defaults: ClassVar[dict[str, Any]] = {"multioutput": "uniform_average"}

    def reduce(self, items: list[Any]) -> dict[str, Any]:
        preds, refs = self.arrays(items)
        return {"mae": float(require("sklearn.metrics").mean_absolute_error(refs, preds, **self.options))}


class Mse(_Error):
    name = "mse"
    defaults: ClassVar[dict[str, Any]] = {"multioutput": "uniform_average", "squared": True}

    def reduce(self, items: list[Any]) -> dict[str, Any]:
        preds, refs = self.arrays(items)
        metrics = require("sklearn.metrics")
        if self.options["squared"]:
            value = metrics.mean_squared_error(refs, preds, multioutput=self.options["multioutput"])
        else:
            value = metrics.root_mean_squared_error(refs, preds, multioutput=self.options["multioutput"])
        return {"mse": float(value)}


class _Correlation(_Labelled):
    features = ("float32", "float32")
    defaults: ClassVar[dict[str, Any]] = {"return_pvalue": False}
    requirements = _SCIPY
    pvalue_key: ClassVar[str]

    def result_keys(self) -> tuple[str, ...]:
        return (self.name, self.pvalue_key) if self.options["return_pvalue"] else (self.name,)

    def reduce(self, items: list[Any]) -> dict[str, Any]:
        preds, refs = self.arrays(items)
        stats = require("scipy.stats")
        statistic, pvalue = getattr(stats, self.name)(refs, preds)[:2]
        out = {self.name: float(statistic)}
        if self.options["return_pvalue"]:
            out[self.pvalue_key] = float(pvalue)
        return out


class Pearsonr(_Correlation):
    name = "pearsonr"
    pvalue_key = "p-value"


class Spearmanr(_Correlation):
    name = "spearmanr"
    pvalue_key = "spearmanr_pvalue"


class Glue(_Labelled):
    """GLUE's metric of each task (``config_name`` names the task, as in ``evaluate.load("glue", "mrpc")``)."""

    name = "glue"
    keys = ("accuracy", "f1", "matthews_correlation", "pearson", "spearmanr")
    main_score = "accuracy"
    configs = ("sst2", "mnli", "mnli_mismatched", "mnli_matched", "cola", "stsb", "mrpc", "qqp", "qnli", "rte",
               "wnli", "hans")
    requirements = {**_SKLEARN, **_SCIPY}
    _MAIN: ClassVar[dict[str, str]] = {"cola": "matthews_correlation", "stsb": "pearson"}
    numpy_format = True

    def __init__(self, config: str | None, options: dict[str, Any]) -> None:
        super().__init__(config, options)
        self.features = ("float32", "float32") if config == "stsb" else ("int64", "int64")  # type: ignore[misc]
        self.main_score = self._MAIN.get(config or "", "accuracy")  # type: ignore[misc]

    def result_keys(self) -> tuple[str, ...]:
        return {"cola": ("matthews_correlation",), "stsb": ("pearson", "spearmanr"),
                "mrpc": ("accuracy", "f1"), "qqp": ("accuracy", "f1")}.get(self.config or "", ("accuracy",))

    def reduce(self, items: list[Any]) -> dict[str, Any]:
        preds, refs = self.arrays(items)
        metrics = require("sklearn.metrics")
        if self.config == "cola":
            return {"matthews_correlation": float(metrics.matthews_corrcoef(refs, preds))}
        if self.config == "stsb":
            stats = require("scipy.stats")
            return {"pearson": float(stats.pearsonr(preds, refs)[0]),
                    "spearmanr": float(stats.spearmanr(preds, refs)[0])}
        accuracy = float((preds == refs).mean())
        if self.config in ("mrpc", "qqp"):
            return {"accuracy": accuracy, "f1": float(metrics.f1_score(y_true=refs, y_pred=preds))}
        return {"accuracy": accuracy}


MODULES: dict[str, type[Module]] = {m.name: m for m in (Accuracy, F1, Precision, Recall, MatthewsCorrelation,
                                                         RocAuc, Mae, Mse, Pearsonr, Spearmanr, Glue)}
for _m in MODULES.values():
    if not _m.requirements:
        _m.requirements = _SKLEARN
