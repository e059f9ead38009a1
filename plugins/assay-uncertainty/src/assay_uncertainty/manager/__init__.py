"""LM-Polygraph's manager: ``UEManager`` over stored model outputs or a model run.

Moved from ``assay.uncertainty`` (issue 23); ``from assay.uncertainty import UEManager``
still works (a lazy alias). The modules:

- :mod:`~assay_uncertainty.manager.ue_manager`: :class:`UEManager` (estimators, generation
  metrics, UE metrics, intervals, comparisons, save / load);
- :mod:`~assay_uncertainty.manager.inputs`: the stored-output schema and its readers;
- :mod:`~assay_uncertainty.manager.persist` (with :mod:`~assay_uncertainty.manager._columns`):
  all-or-nothing saves and checked loads, without pickle;
- :mod:`~assay_uncertainty.manager.tables`, :mod:`~assay_uncertainty.manager.plots`,
  :mod:`~assay_uncertainty.manager.comparisons`: what the manager reports;
- :mod:`~assay_uncertainty.manager.model_loop` and :mod:`~assay_uncertainty.manager.prompt_data`:
  the batch loop over a model backend (``assay_register_model_backends``; assay-transformers
  registers the Hugging Face one) and the prompts it reads.
"""

from __future__ import annotations

from assay_uncertainty.manager.inputs import UEDataError, load_ue_data, records_to_columns
from assay_uncertainty.manager.ue_manager import UEManager

__all__ = ["UEDataError", "UEManager", "load_ue_data", "records_to_columns"]
