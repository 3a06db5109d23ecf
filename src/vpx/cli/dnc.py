"""`vpx dnc …`: the national Do-Not-Call registry's data, imported by area code."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Annotated, Any

import typer

from vpx.cli.output import JsonOption, emit, emit_rows, fail, file_problem, run_with_database
from vpx.clock import Clock
from vpx.compliance.dnc import service as dnc_service
from vpx.compliance.dnc.files import DncFileError
from vpx.config import Settings
from vpx.db import Database

dnc_app = typer.Typer(
    no_args_is_help=True,
    help="The national Do-Not-Call registry's numbers, imported by area code: every revealed phone says "
    "whether the registry lists it, and which version says so.",
)


def _version(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(f"{value!r} is not a date (YYYY-MM-DD)") from None


@dnc_app.command("import")
def import_command(
    file: Annotated[
        Path, typer.Argument(help="A registry file (or a .zip of one), as downloaded.", show_default=False)
    ],
    version_date: Annotated[
        str, typer.Option("--version-date", help="The date the registry's data was obtained (YYYY-MM-DD).")
    ],
    full: Annotated[bool, typer.Option("--full", help="A full list: each area code's numbers replaced.")] = False,
    changes: Annotated[bool, typer.Option("--changes", help="A change list: additions and deletions.")] = False,
    area_codes: Annotated[
        str | None,
        typer.Option(
            "--area-codes",
            help="Comma-separated area codes the file covers (a full list's codes with no number listed; a change "
            "list's codes with no change).",
        ),
    ] = None,
    as_json: bool = JsonOption,
) -> None:
    """Import registry data. A full list replaces its area codes' numbers; a change list applies its
    additions and deletions to area codes imported in full before. The same file again changes
    nothing. Lines: one number (2025550143), or area code and number (202,5550143), with an add or
    delete mark (A, D, add, delete…) in change lists; dates and headers are read past. Exits 2 for a
    file it cannot take, naming the line."""
    if full == changes:
        fail("give exactly one of --full or --changes", as_json=as_json, code="invalid_parameters")
    try:
        version = _version(version_date)
    except typer.BadParameter as exc:
        fail(str(exc), as_json=as_json, code="invalid_parameters")
    if not file.is_file():
        try:
            file.open("rb").close()
        except OSError as exc:
            fail(f"{file}: {file_problem(exc)}", as_json=as_json, code="unreadable_file")
    codes = [c.strip() for c in area_codes.split(",") if c.strip()] if area_codes else None

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        try:
            report = await dnc_service.import_file(
                database,
                file,
                mode="full" if full else "changes",
                version_date=version,
                area_codes=codes,
                now=Clock().now(),
            )
        except DncFileError as exc:
            return {"error": str(exc)}
        except OSError as exc:
            return {"error": f"{file}: {file_problem(exc)}"}
        return report.as_dict()

    result = run_with_database(work, as_json=as_json)
    if "error" in result:
        fail(f"{file}: {result['error']}", as_json=as_json, code="invalid_file")
    emit(result, as_json=as_json, title="Do-Not-Call data imported")


@dnc_app.command("status")
def status_command(as_json: bool = JsonOption) -> None:
    """Each area code imported: its registry version, its age, and whether it may still screen calls
    (31 days at most)."""

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        async with database.read_sessions() as session:
            return {"area_codes": await dnc_service.area_codes(session, now=Clock().now())}

    found = run_with_database(work, as_json=as_json)
    if as_json:
        emit(found, as_json=True)
        return
    columns = (
        ("area_code", "area code"),
        ("version_date", "version"),
        ("age_days", "age (days)"),
        ("fresh", "current"),
        ("usable_until", "usable until"),
        ("numbers", "numbers"),
    )
    emit_rows(found["area_codes"], columns, title="Do-Not-Call data", noun="area code")


def register(app: typer.Typer) -> None:
    app.add_typer(dnc_app, name="dnc")
