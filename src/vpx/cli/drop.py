"""`vpx drop …`: California's Delete Request and Opt-out Platform, by hand (the worker runs the same
cycle on its schedule once VPX_DROP_URL and VPX_DROP_API_KEY are set)."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import typer

from vpx.cli.accounts import cli_actor
from vpx.cli.output import JsonOption, emit, fail, run_with_database
from vpx.clock import Clock
from vpx.compliance.drop import cycle
from vpx.compliance.drop.schedule import status as drop_status
from vpx.config import Settings, get_settings
from vpx.db import Database
from vpx.secrets import SecretsUnavailable, load_box

drop_app = typer.Typer(
    no_args_is_help=True,
    help="California's Delete Request and Opt-out Platform (DROP): download deletion requests, answer them, "
    "and see the deadlines. The worker does the same on its schedule.",
)
FAILURES = {"open_batch", "nothing_to_report", "not_found", "already_decided", "drop_refused"}


def _fail(exc: cycle.DropCycleError, as_json: bool) -> None:
    code = exc.code if exc.code != "not_configured" else "invalid_settings"
    fail(str(exc), as_json=as_json, code=code)


def _box(settings: Settings, as_json: bool) -> Any:
    try:
        return load_box(settings)
    except SecretsUnavailable as exc:
        fail(str(exc), as_json=as_json, code="secrets_unavailable")


@drop_app.command("pull")
def pull_command(
    wait: Annotated[
        int,
        typer.Option(
            min=0, max=3600, help="Seconds to wait, polling as DROP asks, while it packages the batch (0: not at all)."
        ),
    ] = 600,
    as_json: bool = JsonOption,
) -> None:
    """Download the next batch of deletion requests and keep its work items (nothing is deleted yet:
    `vpx drop report` decides and answers them). Refused while a batch is open. Exits 1 when DROP
    refuses, or is still packaging after --wait."""
    settings = get_settings()
    box = _box(settings, as_json)

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        clock = Clock()
        deadline = asyncio.get_running_loop().time() + wait
        try:
            async with cycle.drop_client(database, settings, box) as client:
                while True:
                    pulled = await cycle.pull(database, client=client, now=clock.now())
                    left = deadline - asyncio.get_running_loop().time()
                    if pulled.status != "waiting" or pulled.retry_after is None or pulled.retry_after > left:
                        return pulled.as_dict()
                    await asyncio.sleep(pulled.retry_after)
        except cycle.DropCycleError as exc:
            return {"error": exc}

    result = run_with_database(work, as_json=as_json, settings=settings)
    if isinstance(result.get("error"), cycle.DropCycleError):
        _fail(result["error"], as_json)
    emit(result, as_json=as_json, title="DROP download")
    if result["status"] == "waiting":
        raise typer.Exit(1)


@drop_app.command("report")
def report_command(as_json: bool = JsonOption) -> None:
    """Decide the open batch's work items (one contact: erased, 3; several: all taken off sale, 4; none:
    kept to screen later imports, 5; exempted by you: 2) and upload one answer per list. Exits 1 when
    DROP refuses (a later run sends the files again under new names)."""
    settings = get_settings()
    box = _box(settings, as_json)

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        try:
            async with cycle.drop_client(database, settings, box) as client:
                return await cycle.report(database, client=client, now=Clock().now())
        except cycle.DropCycleError as exc:
            return {"error": exc}

    result = run_with_database(work, as_json=as_json, settings=settings)
    if isinstance(result.get("error"), cycle.DropCycleError):
        _fail(result["error"], as_json)
    emit(result, as_json=as_json, title="DROP answer")
    if result["status"] != "reported":
        raise typer.Exit(1)


@drop_app.command("exempt")
def exempt_command(
    item_id: Annotated[str, typer.Argument(help="The work item's 12-character id.", show_default=False)],
    reason: Annotated[str, typer.Option(help="Why the law exempts it (kept in the audit trail).")],
    as_json: bool = JsonOption,
) -> None:
    """Declare a work item of the open batch exempt before it is decided: it is answered 2 and nothing
    is deleted. Whether an exemption applies is a legal judgement: yours and your counsel's."""
    if not reason.strip():
        fail("--reason is required: say why the law exempts it", as_json=as_json, code="invalid_parameters")

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        try:
            return await cycle.exempt(
                database, item_id=item_id.strip(), reason=reason.strip(), actor=cli_actor(), now=Clock().now()
            )
        except cycle.DropCycleError as exc:
            return {"error": exc}

    result = run_with_database(work, as_json=as_json)
    if isinstance(result.get("error"), cycle.DropCycleError):
        _fail(result["error"], as_json)
    emit(result, as_json=as_json, title="exempted")


@drop_app.command("status")
def status_command(as_json: bool = JsonOption) -> None:
    """The last download, when the next is due and when the law needs one at the latest (45 days after
    the last), the open batch with its deadline (45 days after its download), and warnings from day 40."""

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        async with database.read_sessions() as session:
            return await drop_status(session, settings, now=Clock().now())

    emit(run_with_database(work, as_json=as_json), as_json=as_json, title="DROP")


def register(app: typer.Typer) -> None:
    app.add_typer(drop_app, name="drop")
