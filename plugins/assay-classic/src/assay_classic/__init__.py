"""assay-classic: classic metrics for assay (accuracy, F1, MCC, correlations, errors, ROC AUC, BLEU).

The metrics are registered by :mod:`assay_classic.plugin` and loaded by name
(``assay.load_metric("f1[average=macro]")``); the numeric kernels are plain functions in
:mod:`assay_classic.functional`.
"""

from __future__ import annotations

__version__ = "0.1.0"
