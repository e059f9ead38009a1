"""The commands of assay-segmentation: ``assay run``, ``assay table`` and ``assay plot``.

Each module has ``HELP``, ``DESCRIPTION``, ``add_arguments(parser)`` and ``run(args) -> int``;
:mod:`assay_segmentation.plugin` registers them with the ``assay_register_commands`` hook, and
the plugin's ``pyproject.toml`` declares them in the ``assay.commands`` entry-point group, so
``assay run ...`` loads this plugin alone.
"""
