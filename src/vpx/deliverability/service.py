"""The catalogue's email checks, run by the worker, and the bounce mark the sequences set.

One round (``EmailChecks.run_round``), a lane of the worker:
1. **Addresses.** Contacts whose email is not checked yet (new, or changed: a trigger puts a changed
   email back to unchecked) get their syntax and flags; a well-formed one takes its domain's last
   answer when there is one, else waits as ``valid_syntax``.
2. **Domains.** The domains contacts wait for, then those whose answer expired, are claimed (a lease
   in ``email_domains``: two workers never ask for the same domain at once), looked up at the
   configured pace, and each answer written to the domain and to all its contacts at once: one
   look-up answers every contact of a domain, for as long as the record's TTL allows (within the
   operator's bounds). A failed look-up keeps the domain's last answer, if it had one, and is tried
   again after ``VPX_MX_RETRY_SECONDS``.

``mark_bounced`` is the one way an email becomes ``bounced``; the sequences call it on a hard bounce
(``is_hard_bounce``), and anything else that learns of one may too.
"""

from __future__ import annotations

import asyncio
import logging
import re
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Table, bindparam, delete, func, literal_column, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.clock import Clock
from vpx.config import Settings
from vpx.db import Database
from vpx.deliverability.checks import check_address, flags_text
from vpx.deliverability.mx import MxAnswer, MxLookups, Pace
from vpx.models import Contact, EmailDomain
from vpx.nameservers import Nameservers

log = logging.getLogger("vpx.deliverability")

_contacts: Table = Contact.__table__  # type: ignore[assignment]

# Addresses checked per transaction.
ADDRESS_BATCH = 2_000
# Domains claimed per round: what the pace allows in this many seconds (short rounds, so that a
# stopping worker is not held up and new addresses are not kept waiting behind re-checks).
ROUND_SECONDS = 2.0
# Look-ups under way at once (they mostly wait for their turn of the pace, or for an answer).
MAX_IN_FLIGHT = 64
# Domains whose answers are written per transaction.
WRITE_BATCH = 500
# Statuses a domain's answer does not replace: they say something of the address itself.
ADDRESS_STATUSES = ("bounced", "invalid_syntax")
# Literal SQL, not a parameter: the planners use a partial index only for a condition they can see.
_WAITING: ColumnElement[str] = literal_column("'valid_syntax'")


class EmailChecks:
    """The worker's email checks: MX look-ups through the operator's resolver at the configured pace
    (none when VPX_MX_LOOKUPS_PER_SECOND is 0: addresses are then checked for syntax only)."""

    def __init__(self, database: Database, settings: Settings, *, clock: Clock, lookups: MxLookups | None) -> None:
        self.database = database
        self.settings = settings
        self.clock = clock
        self.lookups = lookups

    @classmethod
    def from_settings(cls, database: Database, settings: Settings, *, clock: Clock) -> EmailChecks:
        lookups = None
        if settings.mx_lookups_per_second > 0:
            nameservers = Nameservers.from_settings(settings, purpose="MX look-ups are off")
            own_servers = bool(settings.dns_servers.strip())
            lookups = MxLookups(nameservers, Pace(settings.mx_lookups_per_second), ask_reserved=own_servers)
        return cls(database, settings, clock=clock, lookups=lookups)

    async def run_round(self) -> int:
        """One round; how many addresses and domains it checked (0: nothing to do)."""
        checked = await check_new_addresses(self.database, now=self.clock.now())
        return checked + await self.check_domains()

    async def check_domains(self) -> int:
        """Claims the domains due, looks them up and writes their answers; how many it looked up."""
        if self.lookups is None:
            return 0
        claimed = await self._claim()
        if not claimed:
            return 0
        in_flight = asyncio.Semaphore(MAX_IN_FLIGHT)
        lookups = self.lookups

        async def look_up(domain: str) -> tuple[str, MxAnswer]:
            async with in_flight:
                return domain, await lookups.look_up(domain)

        answers = await asyncio.gather(*(look_up(domain) for domain in claimed))
        for start in range(0, len(answers), WRITE_BATCH):
            await self._write(answers[start : start + WRITE_BATCH])
        return len(answers)

    async def _claim(self) -> list[str]:
        """The domains this worker looks up this round, leased to it: first those that contacts
        wait for (a domain already answered is applied to them instead), then expired answers."""
        settings = self.settings
        per_round = max(1, int(settings.mx_lookups_per_second * ROUND_SECONDS))
        now = self.clock.now()
        # Long enough for the round: its queries at the pace, each possibly timing out.
        lease_until = now + timedelta(seconds=ROUND_SECONDS * 4 + settings.dns_timeout_seconds * 3 + 60)
        # Read first: an idle round takes no write lock (SQLite has one writer for everything).
        async with self.database.read_sessions() as session:
            waiting = [
                domain
                for domain in await session.scalars(
                    select(Contact.email_domain)
                    .where(Contact.email_status == _WAITING, Contact.email_domain.is_not(None))
                    .distinct()
                    .limit(per_round)
                )
                if domain is not None
            ]
            expired = await session.scalar(select(EmailDomain.domain).where(EmailDomain.expires_at <= now).limit(1))
        if not waiting and expired is None:
            return []
        async with self.database.writer_turn(), self.database.write_sessions() as session, session.begin():
            claimed = await _claim_new(session, waiting, lease_until)
            if len(claimed) < per_round:
                claimed += await _claim_expired(
                    session, now=now, lease_until=lease_until, limit=per_round - len(claimed)
                )
        return claimed

    async def _write(self, answers: list[tuple[str, MxAnswer]]) -> None:
        settings = self.settings
        now = self.clock.now()
        async with self.database.writer_turn(), self.database.write_sessions() as session, session.begin():
            previous = dict(
                (
                    await session.execute(
                        select(EmailDomain.domain, EmailDomain.status).where(
                            EmailDomain.domain.in_([domain for domain, _ in answers])
                        )
                    )
                ).all()
            )
            rows: list[dict[str, Any]] = []
            changed: list[dict[str, Any]] = []
            for domain, answer in answers:
                known = previous.get(domain)
                if answer.status == "unknown" and known in ("mx_found", "no_mx"):
                    # A failure says nothing new: the last answer stands until a look-up succeeds.
                    rows.append(_domain_row(domain, known, None, now + timedelta(seconds=settings.mx_retry_seconds)))
                    continue
                if answer.status == "unknown":
                    seconds = float(settings.mx_retry_seconds)
                else:
                    ttl = answer.ttl if answer.ttl is not None else settings.mx_cache_min_seconds
                    seconds = min(max(ttl, settings.mx_cache_min_seconds), settings.mx_cache_max_seconds)
                rows.append(_domain_row(domain, answer.status, now, now + timedelta(seconds=seconds)))
                changed.append({"b_domain": domain, "b_status": answer.status})
            await _upsert_domains(session, rows)
            if changed:
                await session.execute(
                    update(_contacts)
                    .where(
                        _contacts.c.email_domain == bindparam("b_domain"),
                        *(_contacts.c.email_status != literal_column(f"'{s}'") for s in ADDRESS_STATUSES),
                    )
                    .values(email_status=bindparam("b_status"), email_checked_at=now),
                    changed,
                )


async def check_new_addresses(database: Database, *, now: datetime, limit: int = ADDRESS_BATCH) -> int:
    """Checks the syntax and flags of up to ``limit`` emails not checked yet; how many it checked."""
    # Read first: an idle round takes no write lock (SQLite has one writer for everything).
    async with database.read_sessions() as session:
        rows = (
            await session.execute(
                select(Contact.id, Contact.email)
                .where(Contact.email.is_not(None), Contact.email_checked_at.is_(None))
                .order_by(Contact.id)
                .limit(limit)
            )
        ).all()
        if not rows:
            return 0
        checks = [(row.id, row.email, check_address(row.email)) for row in rows]
        domains = sorted({check.domain for _, _, check in checks if check.domain is not None})
        known = dict(
            (
                await session.execute(
                    select(EmailDomain.domain, EmailDomain.status).where(
                        EmailDomain.domain.in_(domains), EmailDomain.status.is_not(None)
                    )
                )
            ).all()
        )
    params = [
        {
            "b_id": contact_id,
            "b_email": email,
            "b_status": "invalid_syntax" if check.domain is None else known.get(check.domain, "valid_syntax"),
            "b_flags": flags_text(check.flags),
            "b_domain": check.domain,
        }
        for contact_id, email, check in checks
    ]
    async with database.writer_turn(), database.write_sessions() as session, session.begin():
        # The email as read, still unchecked: one changed meanwhile is left for the next round (its
        # trigger unchecked it), one another worker checked meanwhile is left as it checked it.
        await session.execute(
            update(_contacts)
            .where(
                _contacts.c.id == bindparam("b_id"),
                _contacts.c.email == bindparam("b_email"),
                _contacts.c.email_checked_at.is_(None),
            )
            .values(
                email_status=bindparam("b_status"),
                email_flags=bindparam("b_flags"),
                email_domain=bindparam("b_domain"),
                email_checked_at=now,
            ),
            params,
        )
    return len(rows)


async def _claim_new(session: AsyncSession, domains: list[str], lease_until: datetime) -> list[str]:
    """Domains never looked up are claimed by inserting their row (pending: no status yet); those
    already answered are applied to the contacts that wait for them, without a look-up."""
    if not domains:
        return []
    answered = dict(
        (
            await session.execute(
                select(EmailDomain.domain, EmailDomain.status).where(
                    EmailDomain.domain.in_(domains), EmailDomain.status.is_not(None)
                )
            )
        ).all()
    )
    if answered:
        await session.execute(
            update(_contacts)
            .where(_contacts.c.email_domain == bindparam("b_domain"), _contacts.c.email_status == _WAITING)
            .values(email_status=bindparam("b_status")),
            [{"b_domain": domain, "b_status": status} for domain, status in answered.items()],
        )
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    inserted = await session.execute(
        dialect.insert(EmailDomain)
        .values([{"domain": domain, "status": None, "expires_at": lease_until} for domain in domains])
        .on_conflict_do_nothing(index_elements=["domain"])
        .returning(EmailDomain.domain)
    )
    return sorted(inserted.scalars())


async def _claim_expired(session: AsyncSession, *, now: datetime, lease_until: datetime, limit: int) -> list[str]:
    """Domains whose answer expired, oldest first, leased; a domain no contact has any more is
    forgotten instead."""
    due = list(
        await session.scalars(
            select(EmailDomain.domain)
            .where(EmailDomain.expires_at <= now)
            .order_by(EmailDomain.expires_at)
            .limit(limit)
        )
    )
    if not due:
        return []
    used = set(await session.scalars(select(Contact.email_domain).where(Contact.email_domain.in_(due)).distinct()))
    unused = [domain for domain in due if domain not in used]
    if unused:
        await session.execute(delete(EmailDomain).where(EmailDomain.domain.in_(unused), EmailDomain.expires_at <= now))
    claimed = await session.execute(
        update(EmailDomain)
        .where(EmailDomain.domain.in_(sorted(used)), EmailDomain.expires_at <= now)
        .values(expires_at=lease_until)
        .returning(EmailDomain.domain)
    )
    return sorted(claimed.scalars())


def _domain_row(domain: str, status: str, checked_at: datetime | None, expires_at: datetime) -> dict[str, Any]:
    return {"domain": domain, "status": status, "checked_at": checked_at, "expires_at": expires_at}


async def _upsert_domains(session: AsyncSession, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    statement = dialect.insert(EmailDomain)
    await session.execute(
        statement.on_conflict_do_update(
            index_elements=["domain"],
            set_={
                "status": statement.excluded.status,
                "expires_at": statement.excluded.expires_at,
                # A failed re-check keeps the time of the answer that stands.
                "checked_at": func.coalesce(statement.excluded.checked_at, EmailDomain.checked_at),
            },
        ),
        rows,
    )


async def record_domain_answers(
    session: AsyncSession, answers: dict[str, str], *, now: datetime, expires_at: datetime
) -> None:
    """Domains' answers given rather than looked up (the demo's own, vpx.demo.deliverability), written
    as a look-up's are, in the caller's transaction: each domain's row, kept until ``expires_at``, and
    the status of its contacts already checked (a bounce or a malformed address stays as it is;
    contacts not checked yet take it when they are)."""
    items = sorted(answers.items())
    for start in range(0, len(items), WRITE_BATCH):
        part = items[start : start + WRITE_BATCH]
        await _upsert_domains(session, [_domain_row(domain, status, now, expires_at) for domain, status in part])
        await session.execute(
            update(_contacts)
            .where(
                _contacts.c.email_domain == bindparam("b_domain"),
                _contacts.c.email_status != bindparam("b_status"),
                *(_contacts.c.email_status != literal_column(f"'{s}'") for s in ADDRESS_STATUSES),
            )
            .values(email_status=bindparam("b_status"), email_checked_at=now),
            [{"b_domain": domain, "b_status": status} for domain, status in part],
        )


# --- bounces --------------------------------------------------------------------------------------

# An enhanced status code (RFC 3463) anywhere in a server's answer, or a basic reply code at its start.
_ENHANCED = re.compile(r"\b([245])\.(\d{1,3})\.(\d{1,3})\b")
_BASIC = re.compile(r"^\s*([245]\d\d)\b")
# Permanent failures about the recipient's address (RFC 3463): 5.1.x bad destination mailbox or
# system (5.1.7 and 5.1.8 are about the sender's address, not the recipient's); 5.2.1 mailbox disabled.
_SENDER_SIDE = frozenset({"7", "8"})
# Without an enhanced code: 550 mailbox unavailable, 551 user not local, 553 mailbox name not allowed.
_HARD_BASIC = frozenset({"550", "551", "553"})


def is_hard_bounce(diagnostic: str | None) -> bool:
    """Whether a bounce's diagnostic (a server's answer such as "550 5.1.1 user unknown", or a
    delivery report's "5.1.1 …") says the address itself will never take mail: an unknown user or
    domain, or a disabled mailbox. A full mailbox, a message refused as spam or a policy block, a
    temporary failure, or a bounce that gives no reason are not hard bounces."""
    if not diagnostic:
        return False
    enhanced = _ENHANCED.search(diagnostic)
    if enhanced is not None:
        kind, subject, detail = enhanced.groups()
        return kind == "5" and ((subject == "1" and detail not in _SENDER_SIDE) or (subject, detail) == ("2", "1"))
    basic = _BASIC.match(diagnostic)
    return basic is not None and basic.group(1) in _HARD_BASIC


async def mark_bounced(session: AsyncSession, contact_id: int, at: datetime, *, email: str | None = None) -> bool:
    """Marks the contact's email ``bounced`` for every account, in the caller's transaction (it
    flushes nothing else and commits nothing). ``email``: the address that bounced; the mark is only
    set when it is the contact's current email (compared without regard to case), so that a
    decision-maker's own address, or an email that changed since, leaves the contact's alone.

    True when this call set the mark; False when the contact has no such email or was already
    marked (two concurrent calls: exactly one gets True). The mark stays until the email changes."""
    row = (
        await session.execute(select(Contact.email, Contact.email_status).where(Contact.id == contact_id))
    ).one_or_none()
    if row is None or row.email is None or row.email_status == "bounced":
        return False
    if email is not None and email.strip().casefold() != row.email.strip().casefold():
        return False
    check = check_address(row.email)
    result = await session.execute(
        update(Contact)
        .where(Contact.id == contact_id, Contact.email == row.email, Contact.email_status != "bounced")
        .values(
            email_status="bounced", email_checked_at=at, email_domain=check.domain, email_flags=flags_text(check.flags)
        )
        .execution_options(synchronize_session=False)
    )
    marked = bool(getattr(result, "rowcount", 0))
    if marked:
        log.info("email marked bounced", extra={"contact_id": contact_id})
    return marked
