"""The demo's email deliverability: answers of its own for its own email domains.

The demo's emails are on ``.example`` domains, which take no mail (RFC 2606) and which the checker
answers ``no_mx`` without asking the DNS (vpx.deliverability.mx): left to the worker, every demo email
would have no mail server, every preview would say ``email_deliverable: false`` and a sequence would
have nobody to write to. So `vpx demo` records an answer for each of its domains itself, as though the
DNS had given it, through the same writer as the worker's look-ups: most take mail (``mx_found``),
about one in seven does not (``no_mx``), chosen by a hash of the domain so that every run, database and
machine agree. The answers are kept for fifty years, so the worker never asks the DNS about these
domains (it would only say ``no_mx``); a bounce in a sequence still marks an address ``bounced``.
Contacts the live demo feed or anyone else adds on other ``.example`` domains are checked as usual.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

from sqlalchemy import select

from vpx.db import Database
from vpx.deliverability import service as deliverability_service
from vpx.deliverability.checks import check_address
from vpx.models import Contact

# The share of the demo's domains that take no mail, in percent.
NO_MX_PERCENT = 15
# How long the demo's answers are kept: for as long as the demo is used.
KEPT = timedelta(days=365 * 50)


def demo_answer(domain: str) -> str:
    """What the demo says of one of its domains: ``mx_found``, or ``no_mx`` for about one in seven."""
    bucket = int(hashlib.sha256(domain.encode()).hexdigest()[:8], 16) % 100
    return "no_mx" if bucket < NO_MX_PERCENT else "mx_found"


async def record_demo_answers(database: Database, *, now: datetime) -> int:
    """The demo's answer for the domain of every demo contact's email, recorded, and the emails not
    checked yet checked (they take their domain's answer); how many domains were answered. Safe to
    run again: an answer already recorded changes nothing."""
    async with database.read_sessions() as session:
        emails = await session.scalars(
            select(Contact.email).where(Contact.origin == "demo", Contact.email.is_not(None))
        )
        domains = {check.domain for email in emails if email and (check := check_address(email)).domain}
    if not domains:
        return 0
    answers = {domain: demo_answer(domain) for domain in domains}
    async with database.writer_turn(), database.write_sessions() as session, session.begin():
        await deliverability_service.record_domain_answers(session, answers, now=now, expires_at=now + KEPT)
    while await deliverability_service.check_new_addresses(database, now=now):
        pass
    return len(answers)
