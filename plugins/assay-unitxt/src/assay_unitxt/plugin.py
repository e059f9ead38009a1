"""The assay-unitxt plugin, loaded through the entry point ``unitxt = "assay_unitxt.plugin"`` (group ``assay``).

It registers no names: what it adds are classes to import (``MetricPipeline``, the field
operators) and the handlers of unitxt's metric class attributes, declared in the entry-point
group ``assay.metric_attributes`` (see :mod:`assay_unitxt.attributes`). The entry point
makes it an installed assay plugin (``assay plugins`` lists it) and lets catalog entries
name its classes (``assay_unitxt.pipeline.MetricPipeline``).
"""

from __future__ import annotations
