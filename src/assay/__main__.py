"""``python -m assay`` is the ``assay`` command."""

from assay.cli import main

raise SystemExit(main())
