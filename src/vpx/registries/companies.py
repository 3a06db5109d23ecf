"""SEC companies by CIK: the lookup the signals work uses to link filings (funding_ma) to companies,
and the link from a company to the contact it is."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.errors import NotFound
from vpx.models import Company, CompanyTicker, Contact


@dataclass(frozen=True)
class CompanyRef:
    cik: int
    name: str
    ticker: str | None
    tickers: tuple[str, ...]
    exchange: str | None
    contact_id: int | None
    last_filed_on: date | None

    @property
    def padded_cik(self) -> str:
        """The ten-digit form EDGAR paths use."""
        return f"{self.cik:010d}"


async def companies_by_cik(session: AsyncSession, ciks: Iterable[int]) -> dict[int, CompanyRef]:
    """The known companies among these CIKs (unknown ones are absent)."""
    wanted = sorted(set(ciks))
    if not wanted:
        return {}
    companies = list(await session.scalars(select(Company).where(Company.cik.in_(wanted))))
    tickers: dict[int, list[str]] = {}
    for cik, ticker in await session.execute(
        select(CompanyTicker.cik, CompanyTicker.ticker)
        .where(CompanyTicker.cik.in_(wanted))
        .order_by(CompanyTicker.ticker)
    ):
        tickers.setdefault(cik, []).append(ticker)
    return {
        c.cik: CompanyRef(
            cik=c.cik,
            name=c.name,
            ticker=c.ticker,
            tickers=tuple(tickers.get(c.cik, ())),
            exchange=c.exchange,
            contact_id=c.contact_id,
            last_filed_on=c.last_filed_on,
        )
        for c in companies
    }


async def company_by_cik(session: AsyncSession, cik: int) -> CompanyRef | None:
    return (await companies_by_cik(session, [cik])).get(cik)


async def link_company(session: AsyncSession, *, cik: int, contact_id: int, now: datetime) -> None:
    """Links a company to its contact (when an address becomes known, say)."""
    result = await session.execute(
        update(Company).where(Company.cik == cik).values(contact_id=contact_id, updated_at=now)
    )
    if not getattr(result, "rowcount", 0):
        raise NotFound(f"No company with CIK {cik}.")


async def link_companies(session: AsyncSession, *, now: datetime) -> int:
    """Links every unlinked company to the contact with its matching name, when exactly one active
    contact has that name (two or more: ambiguous without an address, left alone). Returns how many."""
    only_match = (
        select(func.min(Contact.id))
        .where(Contact.name_key == Company.name_key, Contact.status == "active")
        .having(func.count() == 1)
        .scalar_subquery()
    )
    result = await session.execute(
        update(Company)
        .where(Company.contact_id.is_(None), only_match.is_not(None))
        .values(contact_id=only_match, updated_at=now)
        .execution_options(synchronize_session=False)
    )
    return int(getattr(result, "rowcount", 0) or 0)
