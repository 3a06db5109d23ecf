"""SEC companies by CIK: the lookup the signals work uses to link filings (funding_ma) to companies,
and the link from a company to the contact it is."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from typing import cast

from sqlalchemy import Table, Text, bindparam, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.contacts.identifiers import cik_token, identifiers_added, parsed
from vpx.errors import Conflict, NotFound
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
    """Links a company to its contact (when an address becomes known, say); a contact that is another
    company already (its own CIK) is refused: two CIKs are two filers (a veto of entity resolution)."""
    company = await session.get(Company, cik)
    if company is None:
        raise NotFound(f"No company with CIK {cik}.")
    others = await _other_ciks(session, [(cik, contact_id)])
    if others:
        raise Conflict(f"contact ct_{contact_id} is the company with CIK {others[0][1]}; it cannot be CIK {cik} too")
    company.contact_id, company.updated_at = contact_id, now
    await _add_cik(session, [(cik, contact_id)], now)


async def link_companies(session: AsyncSession, *, now: datetime) -> int:
    """Links every unlinked company to the contact with its matching name, when exactly one active
    contact has that name (two or more: ambiguous without an address, left alone), no other company
    claims that contact in the same pass, and the contact is not another CIK's. Returns how many."""
    only_match = (
        select(func.min(Contact.id))
        .where(Contact.name_key == Company.name_key, Contact.status == "active")
        .having(func.count() == 1)
        .scalar_subquery()
    )
    found = [
        (int(cik), int(contact_id))
        for cik, contact_id in await session.execute(
            select(Company.cik, only_match).where(Company.contact_id.is_(None), only_match.is_not(None))
        )
    ]
    claims = Counter(contact_id for _, contact_id in found)
    found = [(cik, contact_id) for cik, contact_id in found if claims[contact_id] == 1]
    refused = {cik for cik, _ in await _other_ciks(session, found)}
    links = [(cik, contact_id) for cik, contact_id in found if cik not in refused]
    for start in range(0, len(links), 500):
        part = links[start : start + 500]
        # The table, not the mapped class: an ORM update given a list of rows is a "bulk UPDATE by
        # primary key" to SQLAlchemy, which wants each row's cik under the column's own name.
        companies: Table = Company.__table__  # type: ignore[assignment]
        await session.execute(
            update(companies)
            .where(companies.c.cik == bindparam("b_cik"))
            .values(contact_id=bindparam("b_contact"), updated_at=now),
            [{"b_cik": cik, "b_contact": contact_id} for cik, contact_id in part],
        )
    await _add_cik(session, links, now)
    return len(links)


async def _other_ciks(session: AsyncSession, links: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The links (cik, contact) whose contact is already another CIK's: linked to another company, or
    carrying another ``cik:`` identifier. Returned as (cik, the other CIK)."""
    contact_ids = sorted({contact_id for _, contact_id in links})
    theirs: dict[int, set[int]] = {}
    for start in range(0, len(contact_ids), 500):
        part = contact_ids[start : start + 500]
        for cik, contact_id in await session.execute(
            select(Company.cik, Company.contact_id).where(Company.contact_id.in_(part))
        ):
            if contact_id is not None:
                theirs.setdefault(int(contact_id), set()).add(int(cik))
        for contact_id, identifiers in await session.execute(
            select(Contact.id, Contact.identifiers).where(Contact.id.in_(part), Contact.identifiers.is_not(None))
        ):
            for token in parsed(identifiers):
                if token.startswith("cik:") and token[4:].isdigit():
                    theirs.setdefault(int(contact_id), set()).add(int(token[4:]))
    refused = []
    for cik, contact_id in links:
        other = sorted(theirs.get(contact_id, set()) - {cik})
        if other:
            refused.append((cik, other[0]))
    return refused


async def _add_cik(session: AsyncSession, links: list[tuple[int, int]], now: datetime) -> None:
    """The linked contacts carry their CIK among their identifiers (vpx.contacts.identifiers)."""
    if not links:
        return
    table = cast(Table, Contact.__table__)
    await session.execute(
        update(table)
        .where(table.c.id == bindparam("b_id"))
        .values(identifiers=identifiers_added(table.c.identifiers, bindparam("b_token", type_=Text)), updated_at=now),
        [{"b_id": contact_id, "b_token": cik_token(cik)} for cik, contact_id in links],
    )
