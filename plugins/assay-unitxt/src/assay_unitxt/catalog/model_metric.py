"""What the catalog's model entries share (``bert_score``, ``sentence_bert``, ``reward``, ``perplexity``).

Each scores text predictions with a model read from a local folder (:mod:`assay_unitxt.catalog.models`):
:class:`ModelEntryMetric` sets the entry's name, its folder and the ``model_name`` / ``model`` options
read back by ``add_to_catalog``, and gives the conformance suite the same sample inputs.
"""

from __future__ import annotations

from typing import Any

from assay.metrics import BulkInstanceMetric
from assay_unitxt.catalog.inputs import CheckedInputs
from assay_unitxt.catalog.models import ModelFolder

__all__ = ["ModelEntryMetric"]


class ModelEntryMetric(CheckedInputs, BulkInstanceMetric):
    """A catalog entry that runs a local model on text predictions (module docstring).

    Parameters
    ----------
    entry : str
        The catalog entry's name, for messages.
    model_name : str
        The Hub id of the entry's model (names the folder under ``ASSAY_HF_MODELS_PATH``).
    model : str or path, optional
        The local folder of the model (else found from ``model_name``).
    """

    prediction_type = str
    input_type = "text"
    #: sample inputs for assay's conformance suite (it skips the checks that score them while the folder is missing)
    examples = [{"predictions": ["the cat sat on the mat", "a dog ran", "paris"],
                 "references": [["a cat sat on a mat"], ["the dog ran in the park", "dogs ran"], ["paris is big"]],
                 "atol": 1e-6}]

    def __init__(self, *, entry: str, model_name: str, model: Any, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.entry = entry
        self.folder = ModelFolder(entry, model_name, model)
        self.model_name, self.model = model_name, self.folder.model  # the options, read back by add_to_catalog
