"""The ``evaluate:`` namespace: Hugging Face ``evaluate``'s common modules by name, offline.

``assay.load_metric("evaluate:bleu")`` gives what ``evaluate.load("bleu").compute(...)``
gives (its result keys, values and scales: BLEU 0-1 here, 0-100 in assay's own ``bleu``),
without ``evaluate`` and without any download: assay computes each module with the library
that module wraps (scikit-learn, SciPy, sacrebleu, rouge-score, jiwer, NLTK), or with its own
code where the module vendors a script (TensorFlow NMT's BLEU, the SQuAD scripts). Options
are ``compute()``'s keyword arguments (``evaluate:f1[average=macro]``,
``evaluate:rouge[rouge_types=[rougeL], use_stemmer=true]``), and ``config_name`` is
``evaluate.load``'s second argument (``evaluate:glue[config_name=mrpc]``). See
``docs/metrics.md`` ("Hugging Face evaluate modules by name").
"""

from __future__ import annotations

from typing import Any

from assay.errors import UnknownNameError
from assay_interop._common import close_matches
from assay_interop.evaluate_modules import classification, squad, text
from assay_interop.evaluate_modules.base import NAMESPACE, EvaluateModuleMetric, Module, check_names

__all__ = ["MODULES", "EvaluateModuleMetric", "Module", "resolve"]

#: evaluate module name -> its description, for every name the namespace loads
MODULES: dict[str, type[Module]] = {**classification.MODULES, **text.MODULES, **squad.MODULES}


def resolve(name: str, **options: Any) -> EvaluateModuleMetric:
    """The resolver of the ``evaluate`` namespace: ``resolve("f1", average="macro")``."""
    prefix = options.pop("score_prefix", "")
    config = options.pop("config_name", None)
    module_cls = MODULES.get(name)
    if module_cls is None:
        raise UnknownNameError(
            f"No evaluate module named {name!r} in assay's 'evaluate:' namespace ({NAMESPACE}:{name}); it computes "
            f"{', '.join(sorted(MODULES))}. Another module's script on disk loads with "
            f"HuggingfaceMetric(hf_metric_name=PATH).{close_matches(name, MODULES)}")
    check_names(module_cls, config, options)
    module = module_cls(config, options)
    module.check()
    return EvaluateModuleMetric(module, score_prefix=prefix)
