"""`vpx privacy …`: consumers' privacy requests, the yearly figures, the audit trail, and where the
operator stands with the law."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from vpx.cli.accounts import cli_actor
from vpx.cli.output import JsonOption, emit, emit_rows, fail, run_with_database
from vpx.clock import Clock
from vpx.compliance import audit
from vpx.compliance.overview import overview
from vpx.compliance.privacy import fulfilment, metrics, service
from vpx.compliance.privacy.schemas import DenyReason
from vpx.config import Settings
from vpx.db import Database

privacy_app = typer.Typer(
    no_args_is_help=True,
    help="Consumers' privacy requests (know, delete, correct, opt out), the yearly figures the law asks to "
    "publish, the audit trail, and the deadlines.",
)
requests_app = typer.Typer(no_args_is_help=True, help="Privacy requests people made (POST /api/v1/privacy-requests).")
privacy_app.add_typer(requests_app, name="requests")
RequestId = Annotated[str, typer.Argument(help="The request's id (pr_…).", show_default=False)]
COLUMNS = (
    ("id", "id"),
    ("type", "type"),
    ("status", "status"),
    ("received_at", "received"),
    ("expected_by", "due by"),
    ("days_left", "days left"),
    ("verified", "verified"),
)


@requests_app.command("list")
def list_command(
    status: Annotated[str | None, typer.Option(help="open, fulfilled or denied.")] = None,
    as_json: bool = JsonOption,
) -> None:
    """Requests, soonest due first."""
    if status is not None and status not in ("open", "fulfilled", "denied"):
        fail("--status is open, fulfilled or denied", as_json=as_json, code="invalid_parameters")

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        now = Clock().now()
        async with database.read_sessions() as session:
            found = await service.list_requests(session, status=status, limit=1000)
            return {"requests": [service.view(r, now=now).model_dump(mode="json") for r in found]}

    found = run_with_database(work, as_json=as_json)
    if as_json:
        emit(found, as_json=True)
        return
    rows = [{**r, "verified": r["verification"]["verified"]} for r in found["requests"]]
    emit_rows(rows, COLUMNS, title="privacy requests", noun="request")


def _one(work_on: Any, as_json: bool, title: str) -> None:
    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        now = Clock().now()
        async with database.write_sessions() as session, session.begin():
            found = await work_on(session, now)
            result: dict[str, Any] = service.view(found, now=now).model_dump(mode="json")
            return result

    emit(run_with_database(work, as_json=as_json), as_json=as_json, title=title)


@requests_app.command("show")
def show_command(request_id: RequestId, as_json: bool = JsonOption) -> None:
    """One request: the data points given, what verified it, what was decided and produced."""

    async def show(session: Any, now: Any) -> Any:
        return await service.get_request(session, request_id)

    _one(show, as_json, "privacy request")


@requests_app.command("fulfil")
def fulfil_command(
    request_id: RequestId,
    note: Annotated[str | None, typer.Option(help="Kept with the request.")] = None,
    as_json: bool = JsonOption,
) -> None:
    """Fulfil a verified request: an access request gets its report (what the catalogue holds, how many
    accounts bought each record and when); a deletion erases the records found and keeps them erased;
    a correction is recorded with the note. Exits 1 for a request not verified or already answered."""

    async def done(session: Any, now: Any) -> Any:
        return await fulfilment.fulfil(session, request_id, actor=cli_actor(), note=note, now=now)

    _one(done, as_json, "fulfilled")


@requests_app.command("deny")
def deny_command(
    request_id: RequestId,
    reason: Annotated[str, typer.Option(help="no_match, insuf_verification, exempt, not_a_consumer or other.")],
    note: Annotated[str | None, typer.Option(help="Kept with the request.")] = None,
    as_json: bool = JsonOption,
) -> None:
    """Deny a request, with the reason the yearly figures count it under."""
    if reason not in DenyReason.__args__:  # type: ignore[attr-defined]
        fail(
            "--reason is no_match, insuf_verification, exempt, not_a_consumer or other",
            as_json=as_json,
            code="invalid_parameters",
        )

    async def done(session: Any, now: Any) -> Any:
        return await fulfilment.deny(session, request_id, reason=reason, actor=cli_actor(), note=note, now=now)

    _one(done, as_json, "denied")


@privacy_app.command("metrics")
def metrics_command(
    year: Annotated[int, typer.Option(min=2020, max=2100, help="The calendar year (UTC).")],
    as_json: bool = JsonOption,
) -> None:
    """The year's figures the law asks to publish by 1 July: requests received, complied with, denied
    (by reason), mean and median days to answer; DROP's and direct requests apart."""

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        async with database.read_sessions() as session:
            return await metrics.yearly(session, year=year)

    found = run_with_database(work, as_json=as_json)
    if as_json:
        emit(found, as_json=True)
        return
    rows = [{"source": "direct", "type": kind, **figures} for kind, figures in found["direct"].items()]
    rows.append({"source": "DROP", "type": "deletion", **found["drop"]})
    columns = (
        ("source", "source"),
        ("type", "type"),
        ("received", "received"),
        ("complied", "complied"),
        ("denied", "denied"),
        ("denied_by_reason", "denied by reason"),
        ("mean_days", "mean days"),
        ("median_days", "median days"),
    )
    emit_rows(rows, columns, title=f"privacy requests in {year}", noun="row")


@privacy_app.command("audit")
def audit_command(
    verify: Annotated[bool, typer.Option("--verify", help="Check every entry's chain of hashes.")] = False,
    as_json: bool = JsonOption,
) -> None:
    """The audit trail: with --verify, every entry is checked against the one before. Exits 1 when an
    entry was changed or removed after it was written."""

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        async with database.read_sessions() as session:
            if verify:
                return (await audit.verify(session)).as_dict()
            return {"entries": await audit.count(session)}

    found = run_with_database(work, as_json=as_json)
    emit(found, as_json=as_json, title="audit trail")
    if verify and not found["ok"]:
        raise typer.Exit(1)


@privacy_app.command("status")
def status_command(as_json: bool = JsonOption) -> None:
    """The next DROP deadline, the Do-Not-Call data's age per area code, the privacy requests coming due."""

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        async with database.read_sessions() as session:
            return await overview(session, settings, now=Clock().now())

    found = run_with_database(work, as_json=as_json)
    if as_json:
        emit(found, as_json=True)
        return
    drop, dnc, requests = found["drop"], found["dnc"], found["privacy_requests"]
    batch = drop["open_batch"] or {}
    summary = {
        "DROP last download": drop["last_pull_at"] or "never",
        "DROP next deadline": drop["next_deadline"] or "",
        "DROP open batch": f"{batch['decided']} of {batch['items']} decided, due {batch['deadline']}" if batch else "",
        "Do-Not-Call area codes": len(dnc["area_codes"]),
        "Do-Not-Call stale": ", ".join(dnc["stale"]),
        "privacy requests open": requests["open"],
        "privacy requests overdue": requests["overdue"],
        "audit entries": found["audit_entries"],
    }
    for number, warning in enumerate(drop["warnings"], start=1):
        summary[f"warning {number}"] = warning
    emit(summary, as_json=False, title="compliance")


def register(app: typer.Typer) -> None:
    app.add_typer(privacy_app, name="privacy")
