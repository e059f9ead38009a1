"""The assay plugin module of ``assay-report`` (entry point ``report`` in group ``assay``)."""

from __future__ import annotations

from typing import Any

from assay import hookimpl


def _run_report(args: Any) -> int:
    from assay_report import command  # deferred: loaded only when 'assay report' runs

    return command.run(args)


def _report_arguments(parser: Any) -> None:
    from assay_report import command

    command.add_arguments(parser)


@hookimpl
def assay_register_commands(register: Any) -> None:
    from assay_report import command

    register("report", _run_report, help=command.HELP, description=command.DESCRIPTION, epilog=command.EPILOG,
             add_arguments=_report_arguments)


def _run_demo(out_dir: Any) -> None:
    from assay_report.demo import run

    run(out_dir)


@hookimpl
def assay_register_demo_sections(register: Any) -> None:
    register("report", _run_demo, order=1000,
             title="one interactive HTML report per section that ran before it (assay report), listed to open")
