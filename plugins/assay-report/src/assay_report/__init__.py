"""assay-report: ``assay report``, one self-contained interactive HTML page per evaluation.

:func:`assay_report.sources.build_report` reads assay's saved results and
:func:`assay_report.page.write` writes the page. Nothing is imported here, so loading the
plugin (its entry point :mod:`assay_report.plugin`) stays cheap.
"""
