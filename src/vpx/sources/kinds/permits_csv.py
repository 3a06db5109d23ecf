"""``permits-csv``: a city's whole building-permit export at a URL, read again whenever it changes,
with the mapping `vpx signals import permits --mapping` takes. Permits already imported are counted
as duplicates by the signal pipeline, so re-reading the whole export adds only what is new."""

from __future__ import annotations

import asyncio
import csv
from pathlib import Path

from vpx.registries.reader import ImportFailed
from vpx.signals.sources import permits
from vpx.signals.sources.permit_mapping import MappingError, PermitMapping, parse_mapping
from vpx.sources.fetch import SourceFailed
from vpx.sources.job import Job, SourceConfig
from vpx.sources.kinds import InvalidSource, Kind, RunStatus, register
from vpx.sources.kinds.files import check_http_url, fetch_file, unchanged
from vpx.sources.links import file_name
from vpx.sources.options import OptionSpec


def source_mapping(config: SourceConfig) -> PermitMapping:
    """The mapping kept with the source, parsed as `vpx signals import permits --mapping` would."""
    if config.mapping is None:
        raise SourceFailed(f"source {config.name} has no mapping", code="invalid_mapping")
    try:
        return parse_mapping(
            config.mapping, slug=config.mapping_name or config.name, origin=f"the mapping of source {config.name}"
        )
    except MappingError as exc:
        raise SourceFailed(str(exc), code=exc.code) from None


def check_source_mapping(config: SourceConfig) -> None:
    """At add: the source's mapping file loads (refused as the ``mapping`` field otherwise)."""
    try:
        source_mapping(config)
    except SourceFailed as exc:
        raise InvalidSource("mapping", str(exc)) from None


def check_permit_header(path: Path, mapping: PermitMapping) -> None:
    """The export's header holds every column the mapping names; SourceFailed saying which is missing."""
    try:
        opened = permits.open_permits(path, mapping.encoding)
    except ImportFailed as exc:
        raise SourceFailed(str(exc), code=exc.code) from None
    try:
        header = [name.strip() for name in next(csv.reader(opened.text), [])]
        if not header:
            raise SourceFailed(f"{path.name} is empty", code="empty_file")
        mapping.check_header(header)
    except MappingError as exc:
        raise SourceFailed(str(exc), code="unexpected_layout") from None
    finally:
        opened.close()


@register
class PermitsCsvKind(Kind):
    name = "permits-csv"
    title = "A city's building-permit export (CSV)"
    url_help = "the URL of the whole export (CSV, or a zip holding it)"
    default_every = 86_400
    takes_mapping = True
    options = (
        OptionSpec(
            "app_token",
            "an application token, sent as X-App-Token (Socrata portals serve exports faster with one)",
            secret=True,
        ),
    )

    def check(self, config: SourceConfig) -> None:
        check_http_url(config.url)
        check_source_mapping(config)

    async def run(self, job: Job) -> RunStatus:
        mapping = source_mapping(job.config)
        url = job.config.url
        token = job.config.options.get("app_token")
        got, path = await fetch_file(job, url, headers={"X-App-Token": token} if token else None)
        if path is None:
            return await unchanged(job, got, url)
        try:
            await job.check_lines(path)
            await asyncio.to_thread(check_permit_header, path, mapping)
            skipped: list[permits.PermitSkip] = []
            reading = permits.PermitReading()
            try:
                piece = await job.ingest(
                    permits.read_permits(path, mapping, skipped, reading), name=file_name(url) or path.name, url=url
                )
            except (ImportFailed, MappingError) as exc:
                raise SourceFailed(str(exc), code=exc.code) from None
            piece.rows_read = reading.rows_read
            job.report.rows_read += reading.rows_read
            for item in skipped:
                piece.skipped[item.reason] = piece.skipped.get(item.reason, 0) + 1
                job.report.skipped[item.reason] += 1
        finally:
            await asyncio.to_thread(path.unlink, True)
        await job.save({**job.watermark, "file": {"url": url, **got.validators.as_json()}})
        return "ok"
