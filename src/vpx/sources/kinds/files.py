"""Registries published as one whole file at a URL: ``nucc`` (the taxonomy code set) and ``cslb`` (the
CSLB licence master). A run asks for the file with the validators of the version last applied (a 304
ends the run), downloads it when it changed, unzips it when it comes zipped, checks its layout with
the registry importer's own checks and imports it (unchanged records are skipped by the importer)."""

from __future__ import annotations

import asyncio
import re
from datetime import date
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

from vpx.sources.fetch import Downloaded, SourceFailed, Validators
from vpx.sources.job import FileReport, Job, SourceConfig
from vpx.sources.kinds import InvalidSource, Kind, RunStatus, register
from vpx.sources.links import file_name, page_links
from vpx.sources.unpack import extract, off_loop

ZIP_MAGIC = b"PK\x03\x04"


def check_http_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidSource("url", "must be an http:// or https:// URL with a host")


async def fetch_file(
    job: Job, url: str, *, member: str = r"\.(csv|txt)$", headers: dict[str, str] | None = None
) -> tuple[Downloaded, Path | None]:
    """The file at ``url`` unless it is the version last applied (watermark ``file``): the download,
    and the file to import (the zip's ``member`` when the publisher zips it), or None when unchanged."""
    held: dict[str, Any] = job.watermark.get("file") or {}
    validators = Validators.of(held) if held.get("url") == url else Validators()
    got = await job.fetcher.download(
        url, job.file(file_name(url) or "download"), validators=validators, headers=headers
    )
    if got.not_modified or got.path is None:
        return got, None
    archive = got.path
    if await asyncio.to_thread(_is_zip, archive):
        limits, folder = job.limits, job.workdir / "unpacked"
        try:
            inner = await off_loop(
                lambda stop: extract(archive, member, folder, limits=limits, exclude="fileheader", stop=stop)
            )
        finally:
            await asyncio.to_thread(archive.unlink, True)
        return got, inner
    return got, archive


def _is_zip(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(4) == ZIP_MAGIC


def published_on(got: Downloaded) -> date | None:
    """The file's date by its ``Last-Modified``, when the server sends one."""
    if not got.validators.last_modified:
        return None
    try:
        return parsedate_to_datetime(got.validators.last_modified).date()
    except (TypeError, ValueError):
        return None


async def unchanged(job: Job, got: Downloaded, url: str, more: dict[str, Any] | None = None) -> RunStatus:
    """A run that found the file as it was: reported; new validators for the same bytes kept."""
    job.report.add(FileReport(name=file_name(url), url=url, status="not_modified"))
    held = job.watermark.get("file") or {}
    kept = {**job.watermark, **(more or {})}
    if got.validators.sha256 and Validators.of(held) != got.validators:
        kept["file"] = {"url": url, **got.validators.as_json()}
    if kept != job.watermark:
        await job.save(kept)
    return "not_modified"


class RegistryFileKind(Kind):
    """One file, one registry importer."""

    registry: ClassVar[str]

    def check(self, config: SourceConfig) -> None:
        check_http_url(config.url)

    async def file_url(self, job: Job) -> str | None:
        """The file to fetch; None when a page that names it has not changed since the last run."""
        return job.config.url

    async def run(self, job: Job) -> RunStatus:
        url = await self.file_url(job)
        if url is None:
            job.report.add(FileReport(name=file_name(job.config.url), url=job.config.url, status="not_modified"))
            return "not_modified"
        got, path = await fetch_file(job, url)
        if path is None:
            return await unchanged(job, got, url, self.more_watermark)
        try:
            await job.import_registry(self.registry, path, url=url, file_date=published_on(got))
        finally:
            await asyncio.to_thread(path.unlink, True)
        await job.save({**job.watermark, **self.more_watermark, "file": {"url": url, **got.validators.as_json()}})
        return "ok"

    @property
    def more_watermark(self) -> dict[str, Any]:
        return {}


@register
class NuccKind(RegistryFileKind):
    name = "nucc"
    registry = "nucc"
    title = "NUCC Health Care Provider Taxonomy code set"
    url_help = (
        "the code set's CSV (…/nucc_taxonomy_<version>.csv), or NUCC's CSV page: its newest "
        "nucc_taxonomy_<version>.csv link is followed"
    )
    default_every = 7 * 86_400

    page: Validators | None = None

    async def file_url(self, job: Job) -> str | None:
        url = job.config.url
        if urlsplit(url).path.lower().endswith(".csv"):
            return url
        # The page names each version's file: while it is unchanged, so is the code set.
        held = job.watermark.get("page") if job.watermark.get("file") else None
        page = await job.fetcher.get(url, validators=Validators.of(held) if held else None)
        if page.not_modified:
            return None
        self.page = page.validators
        versions = []
        for link in await asyncio.to_thread(lambda: page_links(page.text, page.url)):
            found = re.fullmatch(r"nucc_taxonomy_(\d+)\.csv", file_name(link), re.IGNORECASE)
            if found:
                versions.append((int(found.group(1)), link))
        if not versions:
            raise SourceFailed(
                f"{url} links to no nucc_taxonomy_<version>.csv file; has the page changed?", code="unexpected_layout"
            )
        return max(versions)[1]

    @property
    def more_watermark(self) -> dict[str, Any]:
        return {"page": self.page.as_json()} if self.page is not None else {}


@register
class CslbKind(RegistryFileKind):
    name = "cslb"
    registry = "cslb"
    title = "California CSLB contractor licence master file"
    url_help = "the licence master file's download URL (CSV, or a zip holding it)"
    default_every = 86_400
