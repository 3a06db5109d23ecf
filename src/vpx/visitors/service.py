"""Sites, visits and what they add up to (D33). An identified visit counts as research activity of the
business for topic_surge and raises ``visitor.identified`` (at most once per business, site and 30
minutes), in the transaction that records it."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import and_, delete, func, or_, select, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.accounts import caps
from vpx.cursors import decode_keyed_cursor, decode_pair_cursor, encode_keyed_cursor, encode_pair_cursor
from vpx.errors import Conflict, NotFound
from vpx.ids import new_id, public_number_id, random_base62
from vpx.models import Contact, Visit, VisitorAlert, VisitorSite
from vpx.signals.sources import surge
from vpx.visitors.resolution import Resolution
from vpx.visitors.schemas import Company, CompanyActivity, Identification, SiteCreate, SiteView, VisitView
from vpx.webhooks import events, outbox

ALERT_EVERY = timedelta(minutes=30)
# An account's sites, at most (as its webhooks are capped): the public endpoints' budgets are per site.
MAX_SITES_PER_ACCOUNT = 100
SITE_KEY_PREFIX = "vpxs_"
SITE_KEY = re.compile(r"^vpxs_[A-Za-z0-9]{1,35}$")
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


# --- Sites ---


def site_domain(text: str) -> str:
    host = text.strip().lower()
    for scheme in ("https://", "http://"):
        host = host.removeprefix(scheme)
    return host.rstrip("/")


async def create_site(session: AsyncSession, *, account_id: str, body: SiteCreate, now: datetime) -> VisitorSite:
    """A new site of the account; a 409 once it has ``MAX_SITES_PER_ACCOUNT``."""
    await caps.count_in_turn(session, account_id)  # two creations at once count one after the other
    count = await session.scalar(
        select(func.count()).select_from(VisitorSite).where(VisitorSite.account_id == account_id)
    )
    if (count or 0) >= MAX_SITES_PER_ACCOUNT:
        raise Conflict(f"An account may have at most {MAX_SITES_PER_ACCOUNT} sites; delete one first.")
    domain = site_domain(body.domain)
    site = VisitorSite(
        id=new_id("site"),
        account_id=account_id,
        domain=domain,
        name=body.name,
        topic=(body.topic or domain).strip().lower(),
        site_key=SITE_KEY_PREFIX + random_base62(24),
        created_at=now,
    )
    session.add(site)
    await session.flush()
    return site


async def get_site(session: AsyncSession, *, account_id: str, site_id: str) -> VisitorSite:
    """The account's site; another account's, or none, is a 404."""
    site = await session.get(VisitorSite, site_id) if len(site_id) <= 32 else None
    if site is None or site.account_id != account_id:
        raise NotFound(f"No site {site_id}.")
    return site


async def list_sites(
    session: AsyncSession, *, account_id: str, limit: int, cursor: str | None
) -> tuple[list[VisitorSite], str | None]:
    """The account's sites, oldest first, with the next page's cursor."""
    query = (
        select(VisitorSite)
        .where(VisitorSite.account_id == account_id)
        .order_by(VisitorSite.created_at, VisitorSite.id)
        .limit(limit + 1)
    )
    if cursor is not None:
        micros, last_id = decode_keyed_cursor(cursor, "sites")
        at = _from_micros(micros)
        query = query.where(
            or_(VisitorSite.created_at > at, and_(VisitorSite.created_at == at, VisitorSite.id > last_id))
        )
    rows = list(await session.scalars(query))
    next_cursor = None
    if len(rows) > limit:
        last = rows[limit - 1]
        next_cursor = encode_keyed_cursor("sites", _micros(last.created_at), last.id)
    return rows[:limit], next_cursor


async def site_by_key(session: AsyncSession, site_key: str) -> VisitorSite | None:
    # Anything but a key's letters and digits names no site, and is not sent to the database.
    if not SITE_KEY.match(site_key):
        return None
    return await session.scalar(select(VisitorSite).where(VisitorSite.site_key == site_key))


async def delete_site(session: AsyncSession, site: VisitorSite) -> None:
    """Deletes the site with its visits: its key stops collecting at once."""
    await session.execute(delete(Visit).where(Visit.site_id == site.id))
    await session.delete(site)
    await session.flush()


def site_view(site: VisitorSite, public_url: str) -> SiteView:
    base = public_url.rstrip("/")
    return SiteView(
        id=site.id,
        domain=site.domain,
        name=site.name,
        topic=site.topic,
        site_key=site.site_key,
        snippet=f'<script async src="{base}/v/{site.site_key}.js"></script>',
        pixel_url=f"{base}/v/{site.site_key}/pixel.gif",
        created_at=site.created_at,
    )


# --- Visits ---


async def record_visit(
    session: AsyncSession,
    *,
    site: VisitorSite,
    resolution: Resolution,
    url: str,
    referrer: str | None,
    title: str | None,
    channel: str,
    occurred_at: datetime,
    now: datetime,
) -> Visit:
    """Stores the visit; an identified one also counts toward topic_surge and may raise an alert.

    On PostgreSQL the transaction does not wait for its WAL flush (``synchronous_commit`` off for it
    alone): a crash in the fraction of a second after the commit may lose the visit together with its
    alert and activity, all or nothing, which a page view can afford; credits and keys are never
    written this way."""
    if session.get_bind().dialect.name == "postgresql":
        await session.execute(text("SET LOCAL synchronous_commit TO OFF"))
    contact = resolution.contact
    visit = Visit(
        site_id=site.id,
        account_id=site.account_id,
        occurred_at=occurred_at,
        url=url,
        referrer=referrer or None,
        title=(title or None) and title[:300],
        channel=channel,
        identified=resolution.identified,
        contact_id=contact.id if contact is not None else None,
        method=resolution.method,
        confidence=resolution.confidence,
        reason=resolution.reason,
        network=resolution.network,
        created_at=now,
    )
    session.add(visit)
    await session.flush()
    if contact is not None:
        await surge.add_activity(session, contact_id=contact.id, topic=site.topic, at=occurred_at, now=now)
        if await _alert_due(session, site.id, contact.id, now):
            await outbox.enqueue_event(
                session,
                account_id=site.account_id,
                event_type=events.VISITOR_IDENTIFIED,
                data=_alert(visit, site, contact),
                now=now,
            )
    return visit


async def _alert_due(session: AsyncSession, site_id: str, contact_id: int, now: datetime) -> bool:
    """True, and the alert counted, unless this business's last alert for the site is under 30 minutes old
    (one statement: two visits at once raise one alert)."""
    insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
    statement = insert(VisitorAlert).values(site_id=site_id, contact_id=contact_id, last_alert_at=now)
    upsert = statement.on_conflict_do_update(
        index_elements=["site_id", "contact_id"],
        set_={"last_alert_at": now},
        where=VisitorAlert.last_alert_at <= now - ALERT_EVERY,
    ).returning(VisitorAlert.site_id)
    return (await session.execute(upsert)).first() is not None


def company_of(contact: Contact) -> Company:
    return Company(
        contact_id=public_number_id("ct", contact.id),
        business_name=contact.business_name,
        domain=contact.website_domain,
        city=contact.city,
        state=contact.state,
        industry=contact.industry,
    )


def _alert(visit: Visit, site: VisitorSite, contact: Contact) -> dict[str, Any]:
    return {
        "visit_id": public_number_id("vis", visit.id),
        "site_id": site.id,
        "company": company_of(contact).model_dump(),
        "url": visit.url,
        "method": visit.method,
        "confidence": visit.confidence,
        "occurred_at": visit.occurred_at.isoformat().replace("+00:00", "Z"),
    }


def identification(visit: Visit, contact: Contact | None) -> Identification:
    return Identification(
        visit_id=public_number_id("vis", visit.id),
        identified=visit.identified,
        company=company_of(contact) if contact is not None else None,
        method=visit.method,
        confidence=visit.confidence,
        reason=visit.reason,
    )


async def list_visits(
    session: AsyncSession,
    *,
    account_id: str,
    site_id: str | None,
    identified: bool | None,
    since: datetime | None,
    limit: int,
    cursor: str | None,
) -> tuple[list[VisitView], str | None]:
    """The account's visits, newest ``occurred_at`` first, with the next page's cursor."""
    query = (
        select(Visit, Contact)
        .outerjoin(Contact, Contact.id == Visit.contact_id)
        .where(Visit.account_id == account_id)
        .order_by(Visit.occurred_at.desc(), Visit.id.desc())
        .limit(limit + 1)
    )
    if site_id is not None:
        await get_site(session, account_id=account_id, site_id=site_id)
        query = query.where(Visit.site_id == site_id)
    if identified is not None:
        query = query.where(Visit.identified.is_(identified))
    if since is not None:
        query = query.where(Visit.occurred_at >= since)
    if cursor is not None:
        micros, last_id = decode_pair_cursor(cursor, "visits")
        at = _from_micros(micros)
        query = query.where(or_(Visit.occurred_at < at, and_(Visit.occurred_at == at, Visit.id < last_id)))
    rows = (await session.execute(query)).all()
    page = [
        VisitView(
            **identification(visit, contact).model_dump(),
            site_id=visit.site_id,
            url=visit.url,
            occurred_at=visit.occurred_at,
        )
        for visit, contact in rows[:limit]
    ]
    next_cursor = None
    if len(rows) > limit:
        last = rows[limit - 1][0]
        next_cursor = encode_pair_cursor("visits", _micros(last.occurred_at), last.id)
    return page, next_cursor


async def companies(
    session: AsyncSession, *, account_id: str, site_id: str | None, since: datetime | None, limit: int
) -> list[CompanyActivity]:
    """One row per business identified among the account's visits, the most recently seen first."""
    conditions = [Visit.account_id == account_id, Visit.identified.is_(True), Visit.contact_id.is_not(None)]
    if site_id is not None:
        await get_site(session, account_id=account_id, site_id=site_id)
        conditions.append(Visit.site_id == site_id)
    if since is not None:
        conditions.append(Visit.occurred_at >= since)
    totals = (
        select(
            Visit.contact_id,
            func.count().label("visits"),
            func.count(func.distinct(Visit.url)).label("pages"),
            func.min(Visit.occurred_at).label("first_seen"),
            func.max(Visit.occurred_at).label("last_seen"),
        )
        .where(*conditions)
        .group_by(Visit.contact_id)
        .subquery()
    )
    rows = await session.execute(
        select(Contact, totals.c.visits, totals.c.pages, totals.c.first_seen, totals.c.last_seen)
        .join(totals, totals.c.contact_id == Contact.id)
        .order_by(totals.c.last_seen.desc(), Contact.id)
        .limit(limit)
    )
    return [
        CompanyActivity(
            **company_of(contact).model_dump(), visits=visits, pages=pages, first_seen=first, last_seen=last
        )
        for contact, visits, pages, first, last in rows
    ]


async def purge_visits(session: AsyncSession, *, before: datetime, batch: int = 5000) -> int:
    """Deletes up to ``batch`` visits older than ``before``; returns how many."""
    ids = list(await session.scalars(select(Visit.id).where(Visit.occurred_at < before).limit(batch)))
    if ids:
        await session.execute(delete(Visit).where(Visit.id.in_(ids)))
    return len(ids)


def _micros(at: datetime) -> int:
    return (at - EPOCH) // timedelta(microseconds=1)


def _from_micros(micros: int) -> datetime:
    return EPOCH + timedelta(microseconds=micros)
