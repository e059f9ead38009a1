"""Moved: unitxt's field operators (``Copy``, ``Rename``, ``ListFieldValues`` ...) now live in the
assay-unitxt plugin, :mod:`assay_unitxt.operators`.

This module keeps the old import path working (and catalog entries that name
``assay.metrics.operators.<name>`` loading): each name is imported from
:mod:`assay_unitxt.operators` when first read, and without the plugin reading it raises
:class:`~assay.errors.MissingDependencyError` naming ``pip install assay-unitxt``.
"""

from __future__ import annotations

from assay._relocated import alias_module

__all__ = [
    "Copy", "CopyFields", "FieldOperator", "ListFieldValues", "Rename", "RenameFields", "dict_get", "dict_set",
]

__getattr__, __dir__ = alias_module(__name__, "assay_unitxt.operators", "assay-unitxt", names=__all__)
