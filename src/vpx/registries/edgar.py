"""SEC EDGAR companies (`vpx import edgar FILE`): the company lists and the daily or full indexes.

Accepted files, recognised by their content:
- ``company_tickers.json``: ``{"0": {"cik_str", "ticker", "title"}, …}``;
- ``company_tickers_exchange.json``: ``{"fields": [...], "data": [[cik, name, ticker, exchange], …]}``;
- ``master.idx`` / ``master.YYYYMMDD.idx``: pipe-delimited ``CIK|Company Name|Form Type|Date Filed|File Name``;
- ``company.idx`` / ``form.idx``: the same columns at fixed positions, found from the header line.

Companies have no address in these files, so they are not contacts: they live in ``companies`` (CIK,
name, ticker, exchange, last filing date) and are linked to a contact when exactly one active contact
carries the same matching name. The signals work links Form D / 8-K / S-1 filings to them by CIK
(``vpx.registries.companies``); ``read_index`` gives it the parsed index entries.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from typing import Any, TextIO

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.contacts.normalise import name_key
from vpx.db import Database
from vpx.models import Company, CompanyTicker
from vpx.registries import companies as company_service
from vpx.registries.reader import ImportFailed, OpenedFile, SkipRow
from vpx.registries.sources import ImportContext, ReadBatch, Source, register

CHUNK = 1 << 16


@dataclass(frozen=True, slots=True)
class CompanyEntry:
    cik: int
    name: str
    ticker: str | None = None
    exchange: str | None = None
    filed_on: date | None = None


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """One line of an EDGAR index: a filing."""

    cik: int
    company_name: str
    form_type: str
    filed_on: date
    file_name: str

    @property
    def accession_number(self) -> str:
        """``edgar/data/1000045/0001564590-20-000123.txt`` → ``0001564590-20-000123``."""
        return self.file_name.rsplit("/", 1)[-1].removesuffix(".txt")


def clean_company_name(raw: str) -> str:
    """EDGAR's conformed name without its state suffix (``COSTCO WHOLESALE CORP /NEW``, ``US BANCORP \\DE\\``)."""
    name = " ".join(raw.replace("\\\\", "\\").split())
    for mark in (" /", " \\"):
        head, found, tail = name.rpartition(mark)
        if found and head and len(tail.strip("/\\ ")) <= 4:
            name = head
    return name.strip()


def _merge_company(company: Company, entry: CompanyEntry) -> bool:
    """Applies what an entry says about a known company; True when something changed."""
    before = (company.name, company.ticker, company.exchange, company.last_filed_on)
    if entry.ticker and (company.ticker is None or (entry.exchange and company.ticker == entry.ticker)):
        company.ticker, company.exchange = entry.ticker, entry.exchange or company.exchange
    if entry.filed_on and (company.last_filed_on is None or entry.filed_on > company.last_filed_on):
        company.last_filed_on = entry.filed_on
    if entry.ticker is not None and entry.name != company.name:
        company.name, company.name_key = entry.name, name_key(entry.name)  # the lists carry current names
    return before != (company.name, company.ticker, company.exchange, company.last_filed_on)


class _JsonStream:
    """Members of a top-level JSON object, read piece by piece; one array member can be streamed."""

    def __init__(self, text: TextIO) -> None:
        self.text, self.buffer, self.pos, self.eof = text, "", 0, False
        self.decoder = json.JSONDecoder()

    def _more(self) -> bool:
        if self.eof:
            return False
        chunk = self.text.read(CHUNK)
        if not chunk:
            self.eof = True
            return False
        self.buffer = self.buffer[self.pos :] + chunk
        self.pos = 0
        return True

    def peek(self) -> str:
        while True:
            while self.pos < len(self.buffer) and self.buffer[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos < len(self.buffer):
                return self.buffer[self.pos]
            if not self._more():
                raise ImportFailed("the JSON document ends early: the file looks cut off", code="truncated_file")

    def expect(self, char: str) -> None:
        if self.peek() != char:
            raise ImportFailed(
                f"unexpected {self.peek()!r} in the JSON document (expected {char!r})", code="corrupt_file"
            )
        self.pos += 1

    def value(self) -> Any:
        self.peek()
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buffer, self.pos)
            except json.JSONDecodeError as exc:
                if self._more():
                    continue
                raise ImportFailed(f"the JSON document is cut off or corrupt ({exc.msg})", code="corrupt_file") from exc
            # A number at the very end of the buffer may continue in the next chunk.
            if end == len(self.buffer) and not self.eof and self._more():
                continue
            self.pos = end
            return value

    def members(self, streamed: str) -> Iterator[tuple[str, Any]]:
        """(key, value) pairs; the array under ``streamed`` comes as (streamed, item) per item."""
        self.expect("{")
        if self.peek() == "}":
            return
        while True:
            key = self.value()
            self.expect(":")
            if key == streamed and self.peek() == "[":
                self.pos += 1
                if self.peek() != "]":
                    while True:
                        yield key, self.value()
                        if self.peek() == ",":
                            self.pos += 1
                            continue
                        break
                self.expect("]")
            else:
                yield key, self.value()
            if self.peek() == ",":
                self.pos += 1
                continue
            self.expect("}")
            return


def read_company_json(text: TextIO) -> Iterator[CompanyEntry | SkipRow]:
    stream = _JsonStream(text)
    fields: list[str] | None = None
    for number, (key, value) in enumerate(stream.members("data"), start=1):
        if key == "fields":
            fields = [str(f) for f in value]
            continue
        if key == "data":
            if fields is None:
                raise ImportFailed("'data' comes before 'fields' in the exchange list", code="unexpected_layout")
            item = dict(zip(fields, value, strict=False)) if isinstance(value, list) else {}
            cik, name, ticker, exchange = item.get("cik"), item.get("name"), item.get("ticker"), item.get("exchange")
        elif isinstance(value, dict):
            cik, name, ticker, exchange = value.get("cik_str"), value.get("title"), value.get("ticker"), None
        else:
            yield SkipRow("malformed_entry", f"entry {number}: not an object")
            continue
        try:
            cik_number = int(str(cik))
        except ValueError:
            yield SkipRow("invalid_cik", f"entry {number}: {cik!r}")
            continue
        if not isinstance(name, str) or not name.strip():
            yield SkipRow("missing_name", f"entry {number}: CIK {cik_number}")
            continue
        yield CompanyEntry(
            cik=cik_number,
            name=clean_company_name(name),
            ticker=str(ticker).strip().upper() or None if ticker else None,
            exchange=str(exchange) if exchange else None,
        )


_FIXED = re.compile(r"^(?P<left>.+?)\s+(?P<cik>\d+)\s+(?P<filed>\d{8}|\d{4}-\d{2}-\d{2})\s+(?P<file>\S+)\s*$")


def read_index(text: TextIO) -> Iterator[IndexEntry | SkipRow]:
    """Filings of an EDGAR ``master``, ``company`` or ``form`` index (daily or full)."""
    lines = iter(text)
    header: list[str] = []
    for line in lines:
        stripped = line.rstrip("\r\n")
        if stripped.startswith("-----"):
            break
        if stripped.strip():
            header.append(stripped)
    else:
        raise ImportFailed("no '-----' line ending the preamble: not an EDGAR index", code="unexpected_layout")
    pipe = bool(header) and "|" in header[-1]
    # company.idx (and form.idx, form type first) pad their columns with spaces; the header may wrap.
    form_first = any(h.lstrip().startswith("Form Type") for h in header)
    if not pipe and not any("Company Name" in h for h in header):
        raise ImportFailed("unrecognised EDGAR index header: not an EDGAR index", code="unexpected_layout")
    for number, line in enumerate(lines, start=1):
        stripped = line.rstrip("\r\n")
        if not stripped.strip():
            continue
        if pipe:
            parts = stripped.split("|")
            if len(parts) != 5:
                yield SkipRow("malformed_row", f"entry {number}: {len(parts)} fields")
                continue
            cik, company, form, filed, file_name = (p.strip() for p in parts)
        else:
            found = _FIXED.match(stripped)
            if found is None:
                yield SkipRow("malformed_row", f"entry {number}: {stripped[:80]!r}")
                continue
            left = re.split(r"\s{2,}", found["left"].strip(), maxsplit=1) if form_first else None
            if left is None:
                parts = re.split(r"\s{2,}", found["left"].strip())
                company, form = (
                    " ".join(parts[:-1]) if len(parts) > 1 else parts[0],
                    parts[-1] if len(parts) > 1 else "",
                )
            else:
                form, company = left[0], left[1] if len(left) > 1 else ""
            cik, filed, file_name = found["cik"], found["filed"], found["file"]
        if not (cik.isascii() and cik.isdigit()):
            yield SkipRow("invalid_cik", f"entry {number}: {cik!r}")
            continue
        filed = filed.replace("-", "")
        try:
            filed_on = date(int(filed[:4]), int(filed[4:6]), int(filed[6:8]))
        except ValueError:
            yield SkipRow("invalid_date", f"entry {number}: {filed!r}")
            continue
        yield IndexEntry(int(cik), clean_company_name(company), form, filed_on, file_name)


@register
class Edgar(Source):
    name = "edgar"
    registry = "edgar"
    title = "SEC EDGAR company lists and filing indexes"

    def read(self, opened: OpenedFile, ctx: ImportContext) -> Iterator[CompanyEntry | SkipRow]:
        head = opened.head.removeprefix(b"\xef\xbb\xbf").lstrip()
        if not head:
            raise ImportFailed(f"{opened.path.name} is empty", code="empty_file")
        if head.startswith(b"{"):
            yield from read_company_json(opened.text)
            return
        for item in read_index(opened.text):
            if isinstance(item, SkipRow):
                yield item
            else:
                yield CompanyEntry(cik=item.cik, name=item.company_name, filed_on=item.filed_on)

    async def write(self, session: AsyncSession, read: ReadBatch, ctx: ImportContext) -> None:
        batch: list[CompanyEntry] = read.items
        ciks = sorted({entry.cik for entry in batch})
        known = {c.cik: c for c in await session.scalars(select(Company).where(Company.cik.in_(ciks)))}
        tickers = {t.ticker: t for t in await session.scalars(select(CompanyTicker).where(CompanyTicker.cik.in_(ciks)))}
        wanted = [e.ticker for e in batch if e.ticker and e.ticker not in tickers]
        if wanted:
            for t in await session.scalars(select(CompanyTicker).where(CompanyTicker.ticker.in_(wanted))):
                tickers[t.ticker] = t
        summary = ctx.summary
        for entry in batch:
            company = known.get(entry.cik)
            if company is None:
                known[entry.cik] = company = Company(
                    cik=entry.cik, name=entry.name, name_key=name_key(entry.name), ticker=entry.ticker,
                    exchange=entry.exchange, last_filed_on=entry.filed_on, created_at=ctx.now, updated_at=ctx.now,
                )  # fmt: skip
                session.add(company)
                summary.created += 1
                created, changed = True, False
            else:
                created, changed = False, _merge_company(company, entry)
            if entry.ticker:
                ticker = tickers.get(entry.ticker)
                if ticker is None:
                    tickers[entry.ticker] = CompanyTicker(ticker=entry.ticker, cik=entry.cik, exchange=entry.exchange)
                    session.add(tickers[entry.ticker])
                    changed = True
                elif ticker.cik != entry.cik or (entry.exchange and ticker.exchange != entry.exchange):
                    ticker.cik, ticker.exchange = entry.cik, entry.exchange or ticker.exchange
                    changed = True
            if created:
                continue
            if changed:
                company.updated_at = ctx.now
                summary.updated += 1
            else:
                summary.unchanged += 1
        await session.flush()

    async def finish(self, database: Database, ctx: ImportContext) -> None:
        async with database.write_sessions() as session, session.begin():
            await company_service.link_companies(session, now=ctx.now)
