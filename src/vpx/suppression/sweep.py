"""The worker's second look at new suppression entries, for the buyers their own transaction could
not see.

A reveal checks the list in a read of its own and charges afterwards (on PostgreSQL one autocommitted
statement: vpx.contacts.reveal), with no lock shared with the list. A reveal whose read comes before
an entry commits, and whose charge commits after the entry read the contact's buyers, is neither
refused nor told (vpx.suppression.notices tells the buyers the entry's transaction sees). The same
holds for batch reveals, signal purchases and auto-buy, which write reveals the same way.

So the worker reads the entries made in the last ``WINDOW`` (far longer than any reveal takes from
its read to its commit) every ``EVERY``, and announces again, through the same code as the entry did,
each one that a covered reveal has no notice for yet: the missing notices and their events, once per
account and contact, and the covered enrollments stopped. With no recent entry a round is one read
on an index; with recent entries all told, one more read each (the entry's own look-up of its
buyers, asking only whether one lacks a notice).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from sqlalchemy import exists, select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.db import Database
from vpx.models import Contact, Reveal, Suppression, SuppressionNotice
from vpx.suppression import notices

log = logging.getLogger("vpx.suppression")

# How far back the sweep looks: an entry is swept for this long after it was made. A racing reveal
# commits within a statement or two of the entry's own commit; minutes leave room for slow commits and
# a worker that was busy or restarting.
WINDOW = timedelta(minutes=5)
# How often the worker sweeps: the longest a buyer caught in the race waits for its notice.
EVERY = timedelta(seconds=10)


async def sweep_recent(database: Database, *, now: datetime) -> int:
    """Tells the buyers that entries made since ``now - WINDOW`` missed; returns how many accounts and
    contacts were told (0 when none was missing)."""
    async with database.read_sessions() as session:
        recent = list(
            await session.scalars(
                select(Suppression).where(Suppression.created_at >= now - WINDOW).order_by(Suppression.id)
            )
        )
        untold = [entry.id for entry in recent if await _has_untold_buyer(session, entry)]
    told = 0
    for entry_id in untold:
        async with database.writer_turn(), database.write_sessions() as session, session.begin():
            entry = await session.get(Suppression, entry_id)
            if entry is not None:
                told += await notices.announce_suppression(session, entry, now=now)
    if told:
        log.info("suppression notices written late for reveals that raced their entry", extra={"told": told})
    return told


async def _has_untold_buyer(session: AsyncSession, entry: Suppression) -> bool:
    """Whether some account revealed a contact the entry covers and has no notice of it."""
    condition = notices.covering(entry)
    if condition is None:
        return False
    noticed = exists().where(
        SuppressionNotice.account_id == Reveal.account_id, SuppressionNotice.contact_id == Reveal.contact_id
    )
    found = await session.scalar(
        select(Reveal.id).join(Contact, Contact.id == Reveal.contact_id).where(condition, ~noticed).limit(1)
    )
    return found is not None
