"""The ``assay ue`` command, registered by this plugin (``assay_register_commands``).

:mod:`~assay_uncertainty.command.ue` reads the config and writes the saved manager, the
tables and the plots; :mod:`~assay_uncertainty.command.model_sections` checks and runs the
``model:`` / ``dataset:`` / ``seed:`` sections (the model loop).
"""
