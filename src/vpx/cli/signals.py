"""`vpx signals …`: the operator's signal tools (D35, D36)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from vpx.cli.output import JsonOption, emit, fail, run_with_database
from vpx.clock import Clock
from vpx.config import Settings, get_settings
from vpx.db import Database
from vpx.registries.reader import ImportFailed
from vpx.signals.events import SignalEvent
from vpx.signals.evidence import JsonLinesReader
from vpx.signals.pipeline import BATCH_SIZE, ingest_events

signals_app = typer.Typer(no_args_is_help=True, help="Intent signals: ingest evidence, import permits and filings.")


@signals_app.command("ingest")
def ingest_command(
    path: Annotated[Path, typer.Argument(help="A JSON Lines file of evidence events.", show_default=False)],
    batch_size: Annotated[int, typer.Option(min=1, max=20_000, help="Events per transaction.")] = BATCH_SIZE,
    as_json: bool = JsonOption,
) -> None:
    """Ingest evidence events, one JSON object per line: each given its intent level (fcra_blocked when
    its evidence holds FCRA-regulated attributes), linked to the catalogue, committed as a signal. A bad
    line is reported with its line number and skipped; the others go in. Running the same file again
    inserts nothing new."""
    if not path.is_file():
        fail(f"no such file: {path}", as_json=as_json, code="invalid_parameters")
    settings = get_settings()
    from vpx.migrations import upgrade

    upgrade(settings)

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        reader = JsonLinesReader(path)
        report = await ingest_events(database, reader, settings=settings, clock=Clock(), batch_size=batch_size)
        found = [(bad.line, "invalid_event", bad.message) for bad in reader.bad]
        found += [(reader.lines[s.index], s.reason, s.message) for s in report.skipped]
        skipped = [{"line": line, "reason": reason, "message": message} for line, reason, message in sorted(found)]
        return {
            "ingested": report.ingested,
            "duplicates": report.duplicates,
            "fcra_blocked": report.fcra_blocked,
            "contacts_linked": report.contacts_linked,
            "contacts_created": report.contacts_created,
            "skipped": skipped,
        }

    result = run_with_database(work, as_json=as_json, settings=settings)
    if as_json:
        emit(result, as_json=True)
        return
    emit({k: v for k, v in result.items() if k != "skipped"} | {"skipped": len(result["skipped"])}, as_json=False)
    for item in result["skipped"]:
        typer.echo(f"line {item['line']}: {item['reason']}: {item['message']}", err=True)


import_app = typer.Typer(no_args_is_help=True, help="Read published files into signals.")
signals_app.add_typer(import_app, name="import")


@import_app.command("permits")
def import_permits_command(
    path: Annotated[Path, typer.Argument(help="A city's building-permit CSV export.", show_default=False)],
    city: Annotated[str | None, typer.Option(help="A packaged city's mapping: chicago or sf.")] = None,
    mapping_file: Annotated[
        Path | None,
        typer.Option("--mapping", help="Your own mapping file (TOML) for any city: see docs/signal-sources.md."),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Read the file, write nothing: the first rows as they would be imported.")
    ] = False,
    show: Annotated[int, typer.Option(min=0, max=1000, help="Rows a dry run shows.")] = 10,
    batch_size: Annotated[int, typer.Option(min=1, max=20_000, help="Events per transaction.")] = BATCH_SIZE,
    as_json: bool = JsonOption,
) -> None:
    """permit_filed signals from a city's building permits, one per permit that names a contractor
    (placeholders such as "SELF CONTRACTOR …" skipped). Running the same file again inserts nothing new."""
    from vpx.signals.sources import permits

    if (city is None) == (mapping_file is None):
        fail("give one of --city and --mapping", as_json=as_json, code="invalid_parameters")
    if not path.is_file():
        fail(f"no such file: {path}", as_json=as_json, code="invalid_parameters")
    try:
        mapping = permits.load_mapping(city) if city is not None else permits.load_mapping_file(Path(str(mapping_file)))
    except permits.MappingError as exc:
        fail(str(exc), as_json=as_json, code=exc.code)
    skipped: list[permits.PermitSkip] = []
    reading = permits.PermitReading()
    if dry_run:
        try:
            result = _dry_run(permits.read_permits(path, mapping, skipped, reading), reading, mapping.source, show)
        except permits.MappingError as exc:
            fail(str(exc), as_json=as_json, code=exc.code)
        except ImportFailed as exc:
            fail(str(exc), as_json=as_json, code=exc.code)
        emit(result, as_json=as_json, title=f"dry run: {mapping.source}")
        return
    settings = get_settings()
    from vpx.migrations import upgrade

    upgrade(settings)

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        events = permits.read_permits(path, mapping, skipped, reading)
        report = await ingest_events(database, events, settings=settings, clock=Clock(), batch_size=batch_size)
        found = [{"line": s.line, "reason": s.reason, "message": s.message} for s in skipped]
        found += [{"line": None, "reason": s.reason, "message": s.message} for s in report.skipped]
        return {
            "source": mapping.source,
            "encoding": reading.encoding,
            "rows_read": reading.rows_read,
            "ingested": report.ingested,
            "duplicates": report.duplicates,
            "fcra_blocked": report.fcra_blocked,
            "contacts_linked": report.contacts_linked,
            "contacts_created": report.contacts_created,
            "distinct_contractors": len(reading.contractors),
            "skipped_by_reason": _count(item["reason"] for item in found),
            "skipped": found,
        }

    try:
        result = run_with_database(work, as_json=as_json, settings=settings)
    except permits.MappingError as exc:
        fail(str(exc), as_json=as_json, code=exc.code)
    except ImportFailed as exc:
        fail(str(exc), as_json=as_json, code=exc.code)
    if as_json:
        emit(result, as_json=True)
        return
    emit({k: v for k, v in result.items() if k != "skipped"}, as_json=False)


def _dry_run(events: Iterator[SignalEvent], reading: Any, source: str, show: int) -> dict[str, Any]:
    """A permit import that writes nothing: the first events as the pipeline would receive them."""
    first: list[dict[str, Any]] = []
    made = 0
    for event in events:
        made += 1
        if len(first) < show:
            business = event.business
            first.append(
                {
                    "permit_number": event.source_record_id,
                    "observed_at": event.observed_at,
                    "industry": event.industry,
                    "topic": event.topic,
                    "summary": event.summary,
                    "contractor": None if business is None else {
                        "name": business.name, "city": business.city, "state": business.state,
                        "phone": business.phone, "address": business.address, "postal_code": business.postal_code,
                    },
                    "evidence": event.evidence,
                }
            )  # fmt: skip
    return {
        "source": source,
        "dry_run": True,
        "encoding": reading.encoding,
        "rows_read": reading.rows_read,
        "signals": made,
        "distinct_contractors": len(reading.contractors),
        "skipped_by_reason": _count(s.reason for s in reading.skipped),
        "first": first,
    }


@import_app.command("edgar")
def import_edgar_command(
    path: Annotated[Path, typer.Argument(help="An EDGAR daily or full index (master, company or form).")],
    batch_size: Annotated[int, typer.Option(min=1, max=20_000, help="Events per transaction.")] = BATCH_SIZE,
    as_json: bool = JsonOption,
) -> None:
    """funding_ma signals from the filings of an EDGAR index whose filer is a company of the catalogue
    (Form D and S-1 offerings; S-4, 425, merger proxies and tender offers). Run `vpx import edgar` on
    the SEC company lists first. Running the same file again inserts nothing new."""
    from vpx.signals.sources import edgar

    if not path.is_file():
        fail(f"no such file: {path}", as_json=as_json, code="invalid_parameters")
    settings = get_settings()
    from vpx.migrations import upgrade

    upgrade(settings)
    skipped: list[edgar.FilingSkip] = []

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        filings = list(edgar.relevant_filings(path, skipped))
        async with database.read_sessions() as session:
            events = await edgar.filing_events(session, filings, skipped)
        report = await ingest_events(database, events, settings=settings, clock=Clock(), batch_size=batch_size)
        found = [{"entry": s.entry, "reason": s.reason, "message": s.message} for s in skipped]
        found += [{"entry": None, "reason": s.reason, "message": s.message} for s in report.skipped]
        return {
            "source": edgar.SOURCE,
            "filings_considered": len(filings),
            "ingested": report.ingested,
            "duplicates": report.duplicates,
            "fcra_blocked": report.fcra_blocked,
            "contacts_linked": report.contacts_linked,
            "skipped_by_reason": _count(item["reason"] for item in found),
            "skipped": found,
        }

    try:
        result = run_with_database(work, as_json=as_json, settings=settings)
    except ImportFailed as exc:
        fail(str(exc), as_json=as_json, code=exc.code)
    if as_json:
        emit(result, as_json=True)
        return
    emit({k: v for k, v in result.items() if k != "skipped"}, as_json=False)


@signals_app.command("activity")
def activity_command(
    path: Annotated[
        Path, typer.Argument(help="JSON Lines of research activity: contact_id, topic, observed_at, count?")
    ],
    as_json: bool = JsonOption,
) -> None:
    """Records research activity per business, topic and day, for topic_surge scoring (`vpx signals surge`).
    A bad line or an unknown contact is reported with its line number and skipped."""
    from vpx.signals.sources import surge

    if not path.is_file():
        fail(f"no such file: {path}", as_json=as_json, code="invalid_parameters")
    settings = get_settings()
    from vpx.migrations import upgrade

    upgrade(settings)
    skipped: list[surge.ActivitySkip] = []

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        recorded = await surge.record_activity(database, surge.read_activity(path, skipped), skipped, now=Clock().now())
        found = [
            {"line": s.line, "reason": s.reason, "message": s.message} for s in sorted(skipped, key=lambda s: s.line)
        ]
        return {"recorded": recorded, "skipped_by_reason": _count(i["reason"] for i in found), "skipped": found}

    result = run_with_database(work, as_json=as_json, settings=settings)
    emit(result if as_json else {k: v for k, v in result.items() if k != "skipped"}, as_json=as_json)


@signals_app.command("surge")
def surge_command(
    at: Annotated[
        str | None, typer.Option(help="Score the week ending with this UTC day (YYYY-MM-DD); default: today.")
    ] = None,
    threshold: Annotated[int, typer.Option(min=1, max=100, help="The score (0–100) that makes a signal.")] = 60,
    as_json: bool = JsonOption,
) -> None:
    """Scores research activity and ingests a topic_surge signal for every business and topic well
    above its own baseline and its peers' (see docs/signal-sources.md). Scoring a day twice adds nothing."""
    from datetime import date

    from vpx.signals.sources import surge

    try:
        day = date.fromisoformat(at) if at else Clock().now().date()
    except ValueError:
        fail(f"--at {at!r} is not a date (YYYY-MM-DD)", as_json=as_json, code="invalid_parameters")
    settings = get_settings()
    from vpx.migrations import upgrade

    upgrade(settings)

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        async with database.read_sessions() as session:
            scored = await surge.compute_surges(session, at=day)
        events = surge.surge_events(scored, at=day, threshold=threshold)
        report = await ingest_events(database, events, settings=settings, clock=Clock())
        return {
            "at": day.isoformat(),
            "threshold": threshold,
            "scored": len(scored),
            "surging": len(events),
            "ingested": report.ingested,
            "duplicates": report.duplicates,
            "signal_ids": report.signal_ids,
        }

    emit(run_with_database(work, as_json=as_json, settings=settings), as_json=as_json)


def _count(reasons: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for reason in reasons:
        counts[reason] = counts.get(reason, 0) + 1
    return dict(sorted(counts.items()))


def register(app: typer.Typer) -> None:
    app.add_typer(signals_app, name="signals")
