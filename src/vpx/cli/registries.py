"""`vpx import SOURCE PATH`: registry files into the catalogue (D35); `vpx registries duplicates`: the
pairs entity resolution held apart, for an operator to merge or dismiss."""

from __future__ import annotations

import getpass
import sys
from datetime import date
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

from vpx.cli.output import JsonOption, emit, fail, run_with_database
from vpx.clock import Clock
from vpx.config import Settings, get_settings
from vpx.db import Database
from vpx.registries import duplicates, importer, load_modes
from vpx.registries.reader import ImportFailed
from vpx.registries.sources import all_sources


def import_command(
    source: Annotated[str, typer.Argument(help="nppes, nucc, cslb or edgar.", show_default=False)],
    path: Annotated[Path, typer.Argument(help="The publisher's file.", show_default=False)],
    limit: Annotated[int | None, typer.Option(min=1, help="Stop after this many rows.")] = None,
    file_date: Annotated[
        str | None, typer.Option(help="The file's publication date (YYYY-MM-DD); default: from its name.")
    ] = None,
    batch_size: Annotated[int, typer.Option(min=1, max=50_000, help="Rows per transaction.")] = importer.DEFAULT_BATCH,
    mode: Annotated[
        str, typer.Option(help="batches, bulk or auto: how the file is written (see docs/registries.md).")
    ] = load_modes.AUTO,
    as_json: bool = JsonOption,
) -> None:
    """Import a registry file: streamed in constant memory, upserted on the registry's own ids, safe
    to run again (NUCC before NPPES: specialties come from the taxonomy)."""
    sources = all_sources()
    if source not in sources:
        fail(f"unknown source {source!r}; sources: {', '.join(sources)}", as_json=as_json, code="invalid_parameters")
    if mode not in load_modes.MODES:
        fail(f"--mode must be one of {', '.join(load_modes.MODES)}", as_json=as_json, code="invalid_parameters")
    published: date | None = None
    if file_date is not None:
        try:
            published = date.fromisoformat(file_date)
        except ValueError:
            fail(f"--file-date {file_date!r} is not YYYY-MM-DD", as_json=as_json, code="invalid_parameters")
    settings = get_settings()
    from vpx.migrations import upgrade

    upgrade(settings)
    show_bar = not as_json and sys.stderr.isatty()

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        chosen = sources[source]()
        options: dict[str, Any] = {
            "now": Clock().now(),
            "limit": limit,
            "file_date": published,
            "batch_size": batch_size,
            "mode": mode,
        }
        if not show_bar:
            return (await importer.run_import(database, chosen, path, **options)).as_dict()
        from rich.console import Console

        bar = Progress(
            TextColumn(f"[bold]{source}"),
            BarColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[rows]:,} rows"),
            TextColumn("{task.fields[rate]:,.0f} rows/s"),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
        )
        with bar:
            task = bar.add_task(source, total=max(path.stat().st_size, 1), rows=0, rate=0.0)

            def on_progress(done: importer.Progress) -> None:
                elapsed = bar.tasks[task].elapsed or 0.0
                rate = done.rows / elapsed if elapsed > 0 else 0.0
                bar.update(task, completed=done.bytes_read, rows=done.rows, rate=rate)

            summary = await importer.run_import(database, chosen, path, progress=on_progress, **options)
        return summary.as_dict()

    try:
        result = run_with_database(work, as_json=as_json, settings=settings)
    except ImportFailed as exc:
        fail(str(exc), as_json=as_json, code=exc.code)
    emit(result, as_json=as_json, title=f"import {source}")
    if result.get("error"):
        if not as_json:
            typer.echo(f"error: {result['error']['message']}", err=True)
        raise typer.Exit(1)


registries_app = typer.Typer(
    help="The registry catalogue: entity resolution's possible duplicates.", no_args_is_help=True
)
duplicates_app = typer.Typer(
    help="Possible duplicates: contacts a matching rule would have joined but conflicting evidence "
    "(phone, website domain, house number, licence, NPI, EIN, CIK) kept apart. Without a subcommand, "
    "lists them (oldest first)."
)
registries_app.add_typer(duplicates_app, name="duplicates")


def _operator() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


@duplicates_app.callback(invoke_without_command=True)
def duplicates_list(
    ctx: typer.Context,
    status: Annotated[str, typer.Option(help="open, merged, dismissed or all.")] = "open",
    limit: Annotated[int, typer.Option(min=1, max=1000, help="Pairs to list.")] = 100,
    after: Annotated[str | None, typer.Option(help="List pairs after this one (pd_…): the next page.")] = None,
    as_json: bool = JsonOption,
) -> None:
    """List possible duplicates with both contacts, the evidence they disagree on and the name score."""
    if ctx.invoked_subcommand is not None:
        return

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        async with database.read_sessions() as session:
            return await duplicates.list_pairs(
                session, status=None if status == "all" else status, limit=limit, after=after
            )

    result = run_with_database(work, as_json=as_json)
    if as_json:
        emit(result, as_json=True)
        return
    for pair in result["duplicates"]:
        names = " | ".join(f"{c['id']} {c['business_name']} ({c['city']}, {c['phone'] or 'no phone'})"
                           for c in pair["contacts"])  # fmt: skip
        typer.echo(f"{pair['id']} [{pair['status']}] {pair['reason']} (names {pair['name_score']}% alike): {names}")
    typer.echo(f"open {result['counts']['open']}, merged {result['counts']['merged']}, "
               f"dismissed {result['counts']['dismissed']}")  # fmt: skip


@duplicates_app.command("merge")
def duplicates_merge(
    duplicate_id: Annotated[str, typer.Argument(help="The pair (pd_…).", show_default=False)],
    keep: Annotated[str | None, typer.Option(help="The contact to keep (ct_…); default: the older.")] = None,
    as_json: bool = JsonOption,
) -> None:
    """Merge the pair into one contact: sources, signals, reveals and purchases move to the kept one."""

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        async with database.write_sessions() as session, session.begin():
            return await duplicates.merge(session, duplicate_id, keep=keep, by=_operator(), now=Clock().now())

    emit(run_with_database(work, as_json=as_json), as_json=as_json, title="merged")


@duplicates_app.command("dismiss")
def duplicates_dismiss(
    duplicate_id: Annotated[str, typer.Argument(help="The pair (pd_…).", show_default=False)],
    as_json: bool = JsonOption,
) -> None:
    """The two are different businesses: close the pair (it is never listed as open again)."""

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        async with database.write_sessions() as session, session.begin():
            return await duplicates.dismiss(session, duplicate_id, by=_operator(), now=Clock().now())

    emit(run_with_database(work, as_json=as_json), as_json=as_json, title="dismissed")


def register(app: typer.Typer) -> None:
    app.command("import")(import_command)
    app.add_typer(registries_app, name="registries")
