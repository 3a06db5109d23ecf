"""`vpx reports list|show|confirm|dismiss` (buyers' reports on wrong fields, the same as the admin
API's /api/v1/admin/reports; decisions are kept in the report's trail as `cli:<user>`) and
`vpx quality` (the data quality figures, as GET /api/v1/admin/quality). Every command takes --json
and prints one object (D35)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from vpx.cli.accounts import cli_actor
from vpx.cli.output import JsonOption, emit, emit_rows, fail, run_with_database
from vpx.clock import Clock
from vpx.config import Settings
from vpx.db import Database
from vpx.quality import figures, reports
from vpx.quality.schemas import AdminReport

reports_app = typer.Typer(
    no_args_is_help=True,
    help="Buyers' reports of wrong phones, emails, websites and addresses: list them, confirm (the field is "
    "bad: its reporters are refunded) or dismiss.",
)
ReportArgument = Annotated[str, typer.Argument(help="Report id (rpt_…).", show_default=False)]
NoteOption = Annotated[str | None, typer.Option(help="Why, kept in the report's trail.")]
LIST_COLUMNS = (
    ("id", "id"),
    ("contact_id", "contact"),
    ("field", "field"),
    ("problem", "problem"),
    ("status", "status"),
    ("account_id", "reporter"),
    ("credits_refunded", "refunded"),
    ("created_at", "reported"),
)
STATUSES = ("open", "confirmed", "dismissed")


def _view(report: AdminReport) -> dict[str, Any]:
    return report.model_dump(mode="json")


def _shown(view: dict[str, Any], as_json: bool) -> dict[str, Any]:
    """A report for a terminal: its trail in a line per step."""
    if as_json:
        return view
    shown = dict(view)
    shown["history"] = "; ".join(
        f"{step['at']} {step['action']} by {step['actor']}" + (f" ({step['note']})" if step["note"] else "")
        for step in view["history"]
    )
    return shown


@reports_app.command("list")
def list_command(
    status: Annotated[
        str | None, typer.Option(help="Only reports in this state: open, confirmed or dismissed.")
    ] = None,
    contact: Annotated[str | None, typer.Option(help="Only reports on this contact (ct_…).")] = None,
    after: Annotated[
        str | None, typer.Option(help="Continue after this report (the previous page's next_after).")
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="At most this many, 1–1000.")] = 100,
    as_json: bool = JsonOption,
) -> None:
    """List reports, oldest first, with their reporter, the refund paid and their trail."""
    if status is not None and status not in STATUSES:
        fail("--status must be open, confirmed or dismissed", as_json=as_json, code="invalid_parameters")

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        async with database.read_sessions() as session:
            page = await reports.list_reports(
                session,
                status=status,  # type: ignore[arg-type]  # checked above
                contact_id=contact,
                after=after,
                limit=limit,
            )
        return page.model_dump(mode="json")

    page = run_with_database(work, as_json=as_json)
    if as_json:
        emit(page, as_json=True)
        return
    emit_rows(page["reports"], LIST_COLUMNS, title="reports", noun="report")
    if page["next_after"]:
        typer.echo(f"more: --after {page['next_after']}")


@reports_app.command("show")
def show_command(report_id: ReportArgument, as_json: bool = JsonOption) -> None:
    """One report with the value reported and its trail."""

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        async with database.read_sessions() as session:
            return _view(await reports.get_report(session, report_id))

    emit(_shown(run_with_database(work, as_json=as_json), as_json), as_json=as_json, title="report")


@reports_app.command("confirm")
def confirm_command(report_id: ReportArgument, note: NoteOption = None, as_json: bool = JsonOption) -> None:
    """The field is bad: the reporter is refunded its share of the reveal, every buyer of the contact is
    told, and the other open reports on the same value are confirmed and refunded too."""
    actor = cli_actor()

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        async with database.writer_turn(), database.write_sessions() as session, session.begin():
            found = await reports.confirm_report(
                session, report_id=report_id, actor=actor, note=note, now=Clock().now(), settings=settings
            )
            return _view(found)

    emit(_shown(run_with_database(work, as_json=as_json), as_json), as_json=as_json, title="report")


@reports_app.command("dismiss")
def dismiss_command(report_id: ReportArgument, note: NoteOption = None, as_json: bool = JsonOption) -> None:
    """The field is right: no refund, and the report no longer counts towards another buyer's. A
    confirmed report cannot be dismissed."""
    actor = cli_actor()

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        async with database.writer_turn(), database.write_sessions() as session, session.begin():
            found = await reports.dismiss_report(
                session, report_id=report_id, actor=actor, note=note, now=Clock().now()
            )
            return _view(found)

    emit(_shown(run_with_database(work, as_json=as_json), as_json), as_json=as_json, title="report")


def quality_command(as_json: bool = JsonOption) -> None:
    """Data quality: the share of emails in each deliverability status, bounce rates by source and by
    import day, reports and what became of them, values found bad, refunds paid each month."""

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        async with database.read_sessions() as session:
            found = await figures.quality_figures(session, now=Clock().now())
        return found.model_dump(mode="json")

    found = run_with_database(work, as_json=as_json)
    if as_json:
        emit(found, as_json=True)
        return
    emit(
        {
            "emails": found["emails"],
            "bounce rate": found["bounce_rate"]["rate"],
            "reports opened": found["reports"]["opened"],
            "open": found["reports"]["open"],
            "confirmed": found["reports"]["confirmed"],
            "dismissed": found["reports"]["dismissed"],
        },
        as_json=False,
        title="data quality",
    )
    emit_rows(
        found["email_status"], (("status", "email status"), ("count", "emails"), ("share", "share")), noun="status row"
    )
    emit_rows(
        found["bounce_rate_by_source"],
        (("source", "source"), ("emails", "emails"), ("bounced", "bounced"), ("rate", "rate")),
        noun="source",
    )
    emit_rows(
        found["bounce_rate_by_import_date"],
        (("imported_on", "imported"), ("emails", "emails"), ("bounced", "bounced"), ("rate", "rate")),
        noun="day",
    )
    emit_rows(
        found["refunds_by_month"], (("month", "month"), ("count", "refunds"), ("credits", "credits")), noun="month"
    )


def register(app: typer.Typer) -> None:
    app.add_typer(reports_app, name="reports")
    app.command("quality")(quality_command)
