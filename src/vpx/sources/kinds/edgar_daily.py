"""``edgar-daily``: the SEC's EDGAR daily indexes, every business day's since the last one read.

The tree under the daily-index root (``https://www.sec.gov/Archives/edgar/daily-index/``) is
``<year>/QTR<n>/master.<YYYYMMDD>.idx`` (``--option index=form`` reads ``form.<YYYYMMDD>.idx``
instead). A run asks for each business day (Monday to Friday, the day in New York) after the last
one read, up to today, in order; each index goes through the EDGAR importer (`vpx import edgar`: the
filers as companies) and then the signal importer (`vpx signals import edgar`: offerings and business
combinations of companies of the catalogue), and the day is saved as the watermark once both are
committed. A day the SEC published no index for (a federal holiday) answers 404: it is passed over
once a later day's index is found; the most recent days without one (not published yet: the SEC
builds a day's indexes from about 10 p.m. New York time) are asked again on the next run. The first
run starts at ``--option since=YYYY-MM-DD``, else five business days before today.

The SEC's fair-access rules: every request declares who is asking in its ``User-Agent`` (a name and
an email address, ``--option user_agent``, required), and at most ten requests a second are made.
"""

from __future__ import annotations

import asyncio
import re
from datetime import date, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from vpx.signals.sources import edgar as edgar_signals
from vpx.sources.fetch import SourceFailed
from vpx.sources.job import FileReport, Job, SourceConfig
from vpx.sources.kinds import Kind, RunStatus, register
from vpx.sources.kinds.files import check_http_url
from vpx.sources.options import OptionSpec

SEC_ZONE = ZoneInfo("America/New_York")
REQUESTS_PER_SECOND = 10  # the SEC's published limit
FIRST_RUN_DAYS = 5  # business days before today read by a first run without --option since
# This many business days in a row without an index means the URL is not the daily-index root (the
# SEC's holidays never close it for more than a day or two in a row).
MOST_DAYS_MISSING = 5
EMAIL = re.compile(r"[^\s@<>]+@[^\s@<>]+\.[A-Za-z]{2,}")
INDEXES = ("master", "form")
SEC_ASKS = "the SEC requires a User-Agent naming you and an email address"


def check_user_agent(value: str) -> str:
    text = " ".join(value.split())
    found = EMAIL.search(text)
    if found is None or not text.replace(found.group(0), "").strip(" <>()"):
        raise ValueError(f'{SEC_ASKS}, such as "Sample Company Name admin@sample.example"')
    return text


def check_since(value: str) -> str:
    try:
        return date.fromisoformat(value.strip()).isoformat()
    except ValueError:
        raise ValueError("must be a day, YYYY-MM-DD") from None


def check_index(value: str) -> str:
    text = value.strip().lower()
    if text not in INDEXES:
        raise ValueError(f"must be one of: {', '.join(INDEXES)}")
    return text


def business_days(first: date, last: date) -> list[date]:
    """Monday to Friday from ``first`` to ``last``, both included."""
    days = []
    day = first
    while day <= last:
        if day.weekday() < 5:
            days.append(day)
        day += timedelta(days=1)
    return days


def business_days_before(day: date, count: int) -> date:
    """The business day ``count`` business days before ``day``."""
    while count:
        day -= timedelta(days=1)
        if day.weekday() < 5:
            count -= 1
    return day


def index_path(day: date, index: str) -> str:
    """Where a day's index sits under the root: ``2026/QTR4/master.20261102.idx``."""
    return f"{day.year}/QTR{(day.month - 1) // 3 + 1}/{index}.{day:%Y%m%d}.idx"


@register
class EdgarDailyKind(Kind):
    name = "edgar-daily"
    title = "SEC EDGAR daily filing indexes"
    url_help = "the daily-index root, https://www.sec.gov/Archives/edgar/daily-index/"
    default_every = 86_400
    options = (
        OptionSpec(
            "user_agent",
            f'{SEC_ASKS} ("Sample Company Name admin@sample.example"); it is sent with every request',
            required=True,
            check=check_user_agent,
        ),
        OptionSpec(
            "since", "the first day a first run reads, YYYY-MM-DD (default: five business days back)", check=check_since
        ),
        OptionSpec("index", "which daily index: master (default) or form", check=check_index),
    )

    def check(self, config: SourceConfig) -> None:
        check_http_url(config.url)

    async def run(self, job: Job) -> RunStatus:
        options = job.config.options
        root = job.config.url if job.config.url.endswith("/") else job.config.url + "/"
        index = options.get("index", "master")
        # Fair access: the operator's declared User-Agent on every request, ten requests a second at most.
        job.fetcher.headers["User-Agent"] = options["user_agent"]
        job.fetcher.requests_per_second = REQUESTS_PER_SECOND
        today = job.clock.now().astimezone(SEC_ZONE).date()
        held = job.watermark.get("day")
        if held:
            first = date.fromisoformat(held) + timedelta(days=1)
        elif options.get("since"):
            first = date.fromisoformat(options["since"])
        else:
            first = business_days_before(today, FIRST_RUN_DAYS)
        missing: list[date] = []
        read = 0
        for day in business_days(first, today):
            url = root + index_path(day, index)
            name = url.rsplit("/", 1)[-1]
            try:
                got = await job.fetcher.download(url, job.file(name))
            except SourceFailed as exc:
                if exc.status != 404:
                    raise
                missing.append(day)
                if len(missing) >= MOST_DAYS_MISSING:
                    raise SourceFailed(
                        f"no EDGAR daily index for {len(missing)} business days in a row ({missing[0]} to {day}, "
                        f"{root} answering 404); is the URL the daily-index root?",
                        code="unexpected_layout",
                    ) from None
                continue
            assert got.path is not None  # no validators were sent: never not_modified
            # The days before it without an index were holidays: passed over with this one.
            for holiday in missing:
                job.report.add(
                    FileReport(
                        name=f"{index}.{holiday:%Y%m%d}.idx",
                        url=root + index_path(holiday, index),
                        status="skipped",
                        note="no index that day (a holiday)",
                    )
                )
            missing = []
            try:
                await self._import(job, got.path, url, day)
            finally:
                await asyncio.to_thread(got.path.unlink, True)
            await job.save({**job.watermark, "day": day.isoformat()})
            read += 1
        for pending in missing:
            job.report.add(
                FileReport(
                    name=f"{index}.{pending:%Y%m%d}.idx",
                    url=root + index_path(pending, index),
                    status="not_modified",
                    note="not published yet: asked again on the next run",
                )
            )
        return "ok" if read else "not_modified"

    async def _import(self, job: Job, path: Path, url: str, day: date) -> None:
        """One day's index as `vpx import edgar` and then `vpx signals import edgar` would take it."""
        companies = await job.import_registry("edgar", path, url=url, file_date=day)
        skipped: list[edgar_signals.FilingSkip] = []
        filings = await asyncio.to_thread(lambda: list(edgar_signals.relevant_filings(path, skipped)))
        async with job.database.read_sessions() as session:
            events = await edgar_signals.filing_events(session, filings, skipped)
        piece = await job.ingest(events, name=f"{path.name} (filings)", url=url)
        for item in skipped:
            if item.reason in companies.skipped:
                continue  # a line the company import counted already (malformed, no CIK…)
            piece.skipped[item.reason] = piece.skipped.get(item.reason, 0) + 1
            job.report.skipped[item.reason] += 1
