"""``nppes``: CMS's NPPES data dissemination, kept current from its download page (``NPI_Files.html``).

The page links the newest monthly full file, the weekly update files since, and the monthly
deactivation report. A run reads the page (a 304 when it has not changed ends the run), then applies
in order: the newest monthly file if it is newer than the one applied, each weekly file not yet applied
whose week ends after the data the monthly file covers, and the newest deactivation report; each
through the NPPES importer, and each remembered as applied once its data is committed. Where CMS
publishes two variants of a file (``…_V2.zip``, with longer name fields, and the original), the V2
one is taken. A ``--url`` ending in ``.zip`` names one such file instead of the page.
"""

from __future__ import annotations

import asyncio
import csv
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from vpx.sources.fetch import SourceFailed, Validators
from vpx.sources.job import FileReport, Job, SourceConfig
from vpx.sources.kinds import Kind, RunStatus, register
from vpx.sources.kinds.files import check_http_url, unchanged
from vpx.sources.limits import Limits
from vpx.sources.links import file_name, page_links
from vpx.sources.unpack import excel_day, extract, members, off_loop, xlsx_rows

MONTHLY = re.compile(r"NPPES_Data_Dissemination_(?P<month>[A-Za-z]+)_(?P<year>\d{4})(?P<v2>_V2)?\.zip", re.I)
WEEKLY = re.compile(r"NPPES_Data_Dissemination_(?P<start>\d{6})_(?P<end>\d{6})_Weekly(?P<v2>_V2)?\.zip", re.I)
DEACTIVATIONS = re.compile(r"NPPES_Deactivated_NPI_Report_(?P<day>\d{6})(?P<v2>_V2)?\.zip", re.I)
DATA_MEMBER = r"^npidata_pfile_.*\.csv$"
MONTHS = {
    name: number
    for number, names in enumerate(
        [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
         ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
         ("november", "nov"), ("december", "dec")],
        start=1,
    )
    for name in names
}  # fmt: skip
_LAST_DATE = re.compile(r"(\d{8})(?!.*\d{8})")
# The columns the NPPES importer requires, and the deactivation date: a deactivation report becomes a
# file in the importer's layout whose rows carry an NPI, an empty entity type and the date (the way
# the full file lists a deactivated NPI).
DEACTIVATION_HEADER = (
    "NPI", "Entity Type Code", "Provider Organization Name (Legal Business Name)", "Provider Last Name (Legal Name)",
    "Provider First Name", "Provider First Line Business Practice Location Address",
    "Provider Business Practice Location Address City Name", "Provider Business Practice Location Address State Name",
    "Provider Business Practice Location Address Postal Code", "NPI Deactivation Date",
    "Healthcare Provider Taxonomy Code_1",
)  # fmt: skip


@dataclass(frozen=True)
class NppesFile:
    """One file the page links: ``kind`` monthly, weekly or deactivations; ``first`` and ``last`` the
    days it covers as its name says (a monthly file: the first of its month, both)."""

    kind: str
    name: str
    url: str
    first: date
    last: date
    v2: bool


def _mmddyy(text: str) -> date | None:
    try:
        return date(2000 + int(text[4:6]), int(text[:2]), int(text[2:4]))
    except ValueError:
        return None


def classify(url: str) -> NppesFile | None:
    """What a linked file is, by its name; None for anything else the page links."""
    name = file_name(url)
    if found := MONTHLY.fullmatch(name):
        month = MONTHS.get(found["month"].lower())
        if month is None:
            return None
        first = date(int(found["year"]), month, 1)
        return NppesFile("monthly", name, url, first, first, bool(found["v2"]))
    if found := WEEKLY.fullmatch(name):
        start, end = _mmddyy(found["start"]), _mmddyy(found["end"])
        if start is None or end is None:
            return None
        return NppesFile("weekly", name, url, start, end, bool(found["v2"]))
    if found := DEACTIVATIONS.fullmatch(name):
        day = _mmddyy(found["day"])
        return None if day is None else NppesFile("deactivations", name, url, day, day, bool(found["v2"]))
    return None


def files_on_page(links: list[str]) -> list[NppesFile]:
    """The page's NPPES files, one per period: the V2 variant where both are linked."""
    chosen: dict[tuple[str, date, date], NppesFile] = {}
    for link in links:
        found = classify(link)
        if found is None:
            continue
        key = (found.kind, found.first, found.last)
        if key not in chosen or (found.v2 and not chosen[key].v2):
            chosen[key] = found
    return sorted(chosen.values(), key=lambda f: (f.last, f.kind != "monthly", f.name))


def covered_through(member: str, fallback: date) -> date:
    """The last day a data file covers, from its name (``npidata_pfile_20050523-20261109.csv``)."""
    found = _LAST_DATE.search(member)
    if found:
        text = found.group(1)
        try:
            return date(int(text[:4]), int(text[4:6]), int(text[6:]))
        except ValueError:
            pass
    return fallback


def write_deactivations(rows: Iterable[list[str]], out: Path) -> int:
    """A deactivation report's rows (a title line or two, a header naming ``NPI`` and the deactivation
    date, then one NPI a row) as a file in the NPPES importer's layout; returns the NPIs written."""
    npi_at = day_at = None
    written = 0
    with out.open("w", newline="", encoding="ascii") as handle:
        writer = csv.writer(handle, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow(DEACTIVATION_HEADER)
        blank = [""] * (len(DEACTIVATION_HEADER) - 3)
        for line, cells in enumerate(rows, start=1):
            if npi_at is None:
                names = [str(c).strip().lower() for c in cells]
                if "npi" in names:
                    npi_at = names.index("npi")
                    day_at = next((i for i, n in enumerate(names) if "deactivation date" in n), None)
                elif line >= 20:
                    break
                continue
            npi = str(cells[npi_at]).strip() if npi_at < len(cells) else ""
            if len(npi) != 10 or not npi.isdigit():
                continue
            raw = str(cells[day_at]).strip() if day_at is not None and day_at < len(cells) else ""
            day = excel_day(raw) if raw and "/" not in raw else None
            writer.writerow([npi, "", *blank, day.strftime("%m/%d/%Y") if day else raw, ""])
            written += 1
    if npi_at is None:
        out.unlink(missing_ok=True)
        raise SourceFailed(
            "the deactivation report has no header row naming an NPI column; has its layout changed?",
            code="unexpected_layout",
        )
    return written


@register
class NppesKind(Kind):
    name = "nppes"
    title = "CMS NPPES NPI registry (monthly full file, weekly updates, deactivations)"
    url_help = (
        "CMS's download page (https://download.cms.gov/nppes/NPI_Files.html), or one NPPES file (a URL ending in .zip)"
    )
    default_every = 86_400

    def check(self, config: SourceConfig) -> None:
        check_http_url(config.url)

    async def run(self, job: Job) -> RunStatus:
        url = job.config.url
        if urlsplit(url).path.lower().endswith(".zip"):
            return await self._one_file(job, url)
        held = job.watermark.get("page")
        page = await job.fetcher.get(url, validators=Validators.of(held) if held else None)
        if page.not_modified:
            job.report.add(FileReport(name=file_name(url), url=url, status="not_modified"))
            return "not_modified"
        listed = files_on_page(await asyncio.to_thread(lambda: page_links(page.text, page.url)))
        applied: list[str] = list(job.watermark.get("applied", []))
        monthlies = [f for f in listed if f.kind == "monthly"]
        if not monthlies and not job.watermark.get("monthly"):
            raise SourceFailed(
                f"{url} links to no monthly NPPES file (NPPES_Data_Dissemination_<Month>_<Year>.zip); has the "
                "page changed?",
                code="unexpected_layout",
            )
        done = 0
        newest = max(monthlies, key=lambda f: f.first, default=None)
        held_month = job.watermark.get("monthly_of")
        if (
            newest is not None
            and newest.name not in applied
            and (held_month is None or newest.first > date.fromisoformat(held_month))
        ):
            through = await self._apply(job, newest)
            applied.append(newest.name)
            await job.save(
                {
                    **job.watermark,
                    "monthly": newest.name,
                    "monthly_of": newest.first.isoformat(),
                    "through": through.isoformat(),
                    "applied": applied,
                }
            )
            done += 1
        through_text = job.watermark.get("through")
        through = date.fromisoformat(through_text) if through_text else date.min
        reports = [f for f in listed if f.kind == "deactivations"]
        newest_report = max(reports, key=lambda f: f.first, default=None)
        for item in listed:
            if item.kind == "monthly" or item.name in applied:
                continue
            if item.kind == "deactivations" and item is not newest_report:
                continue
            if item.last <= through:
                job.report.add(
                    FileReport(name=item.name, url=item.url, status="skipped", note="covered by the monthly file")
                )
                applied.append(item.name)  # never fetched, and not reported again
                continue
            await self._apply(job, item)
            applied.append(item.name)
            await job.save({**job.watermark, "applied": applied})
            done += 1
        # Files no longer on the page cannot come back: forgotten, so the list stays short.
        linked = {f.name for f in listed} | {job.watermark.get("monthly")}
        await job.save(
            {**job.watermark, "applied": [n for n in applied if n in linked], "page": page.validators.as_json()}
        )
        return "ok" if done else "not_modified"

    async def _one_file(self, job: Job, url: str) -> RunStatus:
        held: dict[str, Any] = job.watermark.get("file") or {}
        validators = Validators.of(held) if held.get("url") == url else Validators()
        got = await job.fetcher.download(url, job.file(file_name(url)), validators=validators)
        if got.not_modified or got.path is None:
            return await unchanged(job, got, url)
        item = classify(url) or NppesFile("data", file_name(url), url, date.min, date.min, False)
        await self._apply(job, item, downloaded=got.path)
        await job.save({**job.watermark, "file": {"url": url, **got.validators.as_json()}})
        return "ok"

    async def _apply(self, job: Job, item: NppesFile, *, downloaded: Path | None = None) -> date:
        """Downloads (unless given), unpacks and imports one file; returns the last day its data covers."""
        archive = downloaded
        if archive is None:
            got = await job.fetcher.download(item.url, job.file(item.name))
            assert got.path is not None  # no validators were sent: never not_modified
            archive = got.path
        unpacked, limits = job.workdir / "unpacked", job.limits
        try:
            names = await asyncio.to_thread(members, archive)
            if item.kind == "deactivations" or not any(
                re.search(DATA_MEMBER, n.rsplit("/", 1)[-1], re.I) for n in names
            ):
                report = await off_loop(
                    lambda stop: extract(archive, r"\.(xlsx|csv)$", unpacked, limits=limits, stop=stop)
                )
                day = item.last if item.last != date.min else job.clock.now().date()
                converted = unpacked / f"deactivated_npi_report_{day:%Y%m%d}.csv"
                try:
                    if report.suffix.lower() != ".xlsx":
                        await job.check_lines(report)
                    await asyncio.to_thread(_convert_report, report, converted, limits)
                    await job.import_registry("nppes", converted, url=item.url, file_date=day)
                finally:
                    await asyncio.to_thread(report.unlink, True)
                    await asyncio.to_thread(converted.unlink, True)
                return day
            data = await off_loop(
                lambda stop: extract(archive, DATA_MEMBER, unpacked, limits=limits, exclude="fileheader", stop=stop)
            )
            try:
                await job.import_registry("nppes", data, url=item.url)
            finally:
                await asyncio.to_thread(data.unlink, True)
            return covered_through(data.name, item.last)
        finally:
            await asyncio.to_thread(archive.unlink, True)


def _convert_report(report: Path, out: Path, limits: Limits) -> None:
    """The deactivation report (.xlsx as CMS ships it, or a CSV) in the importer's layout."""
    if report.suffix.lower() == ".xlsx":
        write_deactivations(xlsx_rows(report, limits), out)
        return
    with report.open(newline="", encoding="utf-8-sig", errors="replace") as handle:
        write_deactivations(csv.reader(handle), out)
