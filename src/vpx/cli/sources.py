"""`vpx sources …`: the publishers' files and portals the worker keeps in sync, and how fresh each is
(D35: every command takes --json and prints one object)."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Annotated, Any

import typer

from vpx.cli.output import JsonOption, cell, emit, emit_rows, fail, file_problem, run_with_database
from vpx.clock import Clock
from vpx.config import Settings, get_settings
from vpx.db import Database
from vpx.secrets import SecretsUnavailable, load_box
from vpx.sources import service as source_service
from vpx.sources.kinds import InvalidSource, all_kinds

sources_app = typer.Typer(
    no_args_is_help=True,
    help="Sources the worker keeps in sync on a schedule (registry files, permit exports), and their freshness.",
)
Name = Annotated[str, typer.Argument(help="The source's name.", show_default=False)]
LIST_COLUMNS = (
    ("name", "name"),
    ("kind", "kind"),
    ("state", "state"),
    ("every", "every"),
    ("last_success_at", "last success"),
    ("age", "age"),
    ("newest_record_at", "newest record"),
    ("next_run_at", "next run"),
    ("last_error", "last error"),
)


def _kinds_help() -> str:
    return ", ".join(all_kinds())


@sources_app.command("add")
def add_command(
    name: Name,
    kind: Annotated[
        str,
        typer.Argument(
            help="nppes, nucc, cslb, edgar-daily, permits-csv, permits-socrata or permits-arcgis.", show_default=False
        ),
    ],
    url: Annotated[str, typer.Option(help="Where the publisher publishes (see docs/operator-guide.md).")],
    every: Annotated[
        str | None, typer.Option(help="How often: 30m, 6h, 1d, 1w… (at least 1m; default: the kind's).")
    ] = None,
    mapping_file: Annotated[
        Path | None,
        typer.Option("--mapping", help="A permit mapping file (TOML), as `vpx signals import permits` takes."),
    ] = None,
    option: Annotated[
        list[str] | None, typer.Option(help="key=value, a kind's option; repeatable. Secret ones are never shown.")
    ] = None,
    as_json: bool = JsonOption,
) -> None:
    """Add a source: checked now, due at once, then run by the worker every interval."""
    mapping: str | None = None
    mapping_name: str | None = None
    if mapping_file is not None:
        try:
            mapping = mapping_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            fail(f"--mapping {mapping_file}: {file_problem(exc)}", as_json=as_json, code="invalid_parameters")
        mapping_name = mapping_file.stem
    try:
        new = source_service.check_new(
            name=name,
            kind=kind,
            url=url,
            every=every,
            mapping=mapping,
            mapping_name=mapping_name,
            options=source_service.parse_options(list(option or [])),
        )
    except InvalidSource as exc:
        fail(_in_cli_words(exc), as_json=as_json, code="invalid_parameters")
    settings = get_settings()
    box = _box(settings, as_json=as_json)

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        now = Clock().now()
        async with database.write_sessions() as session, session.begin():
            source = await source_service.add_source(session, new, box=box, now=now)
            return source_service.view(source, now)

    emit(_shown(run_with_database(work, as_json=as_json, settings=settings), as_json), as_json=as_json, title="source")


def _in_cli_words(exc: InvalidSource) -> str:
    """A refusal named as the command line names the value (--url, --every, --option key=…)."""
    field = exc.field
    if field.startswith("options."):
        return f"--option {field.removeprefix('options.')}: {exc.message}"
    if field in ("name", "kind"):
        return f"{field.upper()}: {exc.message}"
    return f"--{field}: {exc.message}"


def _box(settings: Settings, *, as_json: bool) -> Any:
    try:
        return load_box(settings)
    except SecretsUnavailable as exc:
        fail(str(exc), as_json=as_json, code="secrets_unavailable")


def _shown(view: dict[str, Any], as_json: bool) -> dict[str, Any]:
    """A source's view for a terminal: the last run's report summed up in a line."""
    if as_json:
        return view
    shown = dict(view)
    run = shown.pop("last_run")
    if run:
        shown["last_run"] = (
            f"{run['status']} at {run['started_at']}: {run['rows_read']} rows read, {run['created']} created, "
            f"{run['updated']} updated, {run['deactivated']} deactivated, {run['requests']} requests"
        )
    return shown


@sources_app.command("list")
def list_command(as_json: bool = JsonOption) -> None:
    """Every source with its state and freshness: last success, age, newest record, next run, last error."""

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        now = Clock().now()
        async with database.read_sessions() as session:
            return {"sources": [source_service.view(s, now) for s in await source_service.list_sources(session)]}

    found = run_with_database(work, as_json=as_json)
    if as_json:
        emit(found, as_json=True)
        return
    rows = []
    for source in found["sources"]:
        age = source["age_seconds"]
        state = source["state"] + (", stale" if source["stale"] else "") + (", running" if source["running"] else "")
        rows.append({**source, "state": state, "age": None if age is None else _duration(age)})
    emit_rows(rows, LIST_COLUMNS, title="sources", noun="source")


def _duration(seconds: float) -> str:
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f}{unit}"
    return f"{seconds:.0f}s"


@sources_app.command("show")
def show_command(name: Name, as_json: bool = JsonOption) -> None:
    """One source: its settings (secret options hidden), freshness and last run's report."""

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        async with database.read_sessions() as session:
            return source_service.view(await source_service.get_source(session, name), Clock().now())

    emit(_shown(run_with_database(work, as_json=as_json), as_json), as_json=as_json, title=f"source {name}")


@sources_app.command("run")
def run_command(name: Name, as_json: bool = JsonOption) -> None:
    """Run the source now, in the foreground, and print its report (paused or not). Exits 1 when the
    run fails, and the source is then failing until a run succeeds.

    When the run finds nothing new, its report names the last run that did (often the worker's,
    moments before)."""
    from vpx.sources import runner

    settings = get_settings()
    box = _box(settings, as_json=as_json)
    owner = f"cli:{socket.gethostname()}:{os.getpid()}"

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        try:
            report = await runner.run_source(database, settings, name=name, owner=owner, box=box)
        except runner.SourceBusy as exc:
            fail(str(exc), as_json=as_json, code="source_busy")
        return report.as_dict()

    report = run_with_database(work, as_json=as_json, settings=settings)
    if as_json:
        emit(report, as_json=True)
    else:
        files = report.pop("files")
        error = report.pop("error")
        applied = report.pop("last_applied")
        if report["status"] == "not_modified":
            report["note"] = _nothing_new(applied)
        emit({k: (v if not isinstance(v, dict) else cell(str(v) if v else None)) for k, v in report.items()},
             as_json=False, title=f"run {name}")  # fmt: skip
        if files:
            columns = (("name", "file"), ("status", "status"), ("rows_read", "rows"), ("created", "created"),
                       ("updated", "updated"), ("deactivated", "deactivated"), ("note", "note"))  # fmt: skip
            emit_rows(files, columns, title="files", noun="file")
        if error:
            typer.echo(f"error: {error['message']}", err=True)
    if report["status"] == "failed":
        raise typer.Exit(1)


def _nothing_new(applied: dict[str, Any] | None) -> str:
    """A run that found nothing new, told with the run that last brought something (often the
    worker's, moments before: a source is due as soon as it is added)."""
    if not applied:
        return "nothing new at the source"
    return (
        f"nothing new since the run of {applied['started_at']}, which read {applied['rows_read']} rows: "
        f"{applied['created']} created, {applied['updated']} updated, {applied['deactivated']} deactivated, "
        f"{applied['ingested']} signals"
    )


def _change(verb: str, name: str, as_json: bool) -> None:
    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        now = Clock().now()
        async with database.write_sessions() as session, session.begin():
            if verb == "pause":
                source = await source_service.pause_source(session, name, now=now)
            elif verb == "resume":
                source = await source_service.resume_source(session, name, now=now)
            else:
                source = await source_service.remove_source(session, name, data_dir=settings.data_dir)
                return {**source_service.view(source, now), "removed": True}
            return source_service.view(source, now)

    emit(_shown(run_with_database(work, as_json=as_json), as_json), as_json=as_json, title=f"{verb}d {name}")


@sources_app.command("pause")
def pause_command(name: Name, as_json: bool = JsonOption) -> None:
    """Stop running the source on its schedule (a run in progress finishes)."""
    _change("pause", name, as_json)


@sources_app.command("resume")
def resume_command(name: Name, as_json: bool = JsonOption) -> None:
    """Run the source on its schedule again (at once, if its time came while paused)."""
    _change("resume", name, as_json)


@sources_app.command("remove")
def remove_command(name: Name, as_json: bool = JsonOption) -> None:
    """Remove the source and its partial downloads; what it imported stays in the catalogue."""
    _change("remove", name, as_json)


def register(app: typer.Typer) -> None:
    app.add_typer(sources_app, name="sources")
