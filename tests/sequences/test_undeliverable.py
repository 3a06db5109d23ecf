"""A sequence never writes to an address the catalogue knows takes no mail (issue 39): an email that is
`no_mx`, `invalid_syntax` or `bounced` is refused at enrollment (`undeliverable`, with its
`email_status`, counted in the answer's `counts`), and an enrollment whose address turns out so later
stops at its next send (`stop_reason: undeliverable`) with nothing sent. An address not checked yet is
enrolled."""

from __future__ import annotations

import httpx
from fastapi import FastAPI
from sqlalchemy import update

from tests.factories import Factory
from tests.sequences.smtp_server import SmtpSink
from tests.sequences.test_sequences import enrollments, mailbox, monday, revealed, run, sequence, settings
from vpx.deliverability import service as deliverability_service
from vpx.ids import parse_number_id
from vpx.models import Contact

__all__ = ["monday", "settings"]  # the fixtures of the sequence tests, used here as they are there


async def _answer(app: FastAPI, domain: str, status: str) -> None:
    """The domain's look-up answered, as the worker writes an answer, and new addresses checked."""
    database, now = app.state.database, app.state.clock.now()
    async with database.write_sessions() as session, session.begin():
        await deliverability_service.record_domain_answers(session, {domain: status}, now=now, expires_at=now)
    while await deliverability_service.check_new_addresses(database, now=now):
        pass


async def test_undeliverable_addresses_are_refused_at_enrollment_and_counted(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink
) -> None:
    account = await factory.account(credits=10)
    created = await sequence(client, account, await mailbox(client, account, smtp_sink))
    good, dead, malformed, bounced, unchecked = await revealed(client, factory, account, 5)
    await _answer(app, "acme0.example", "mx_found")
    await _answer(app, "acme1.example", "no_mx")
    await _answer(app, "acme3.example", "mx_found")
    async with app.state.database.write_sessions() as session, session.begin():
        for contact_id, email in ((malformed, "owner2@@acme2.example"), (bounced, None)):
            number = parse_number_id("ct", contact_id)
            if email is not None:
                await session.execute(update(Contact).where(Contact.id == number).values(email=email))
            else:
                assert await deliverability_service.mark_bounced(session, number or 0, app.state.clock.now())
    while await deliverability_service.check_new_addresses(app.state.database, now=app.state.clock.now()):
        pass
    answer = await client.post(
        f"/api/v1/sequences/{created['id']}/enrollments",
        json={"contact_ids": [good, dead, malformed, bounced, unchecked]},
        headers=account.headers("full"),
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert [(r["contact_id"], r["status"], r["email_status"]) for r in body["results"]] == [
        (good, "enrolled", "mx_found"),
        (dead, "undeliverable", "no_mx"),
        (malformed, "undeliverable", "invalid_syntax"),
        (bounced, "undeliverable", "bounced"),
        (unchecked, "enrolled", "valid_syntax"),  # its domain not looked up yet: written to
    ]
    assert body["counts"] == {"enrolled": 2, "undeliverable": 3}
    assert all(r["enrollment_id"] is None for r in body["results"] if r["status"] == "undeliverable")
    assert await run(app) == 2 and len(smtp_sink.received) == 2


async def test_an_address_found_undeliverable_after_enrollment_stops_it_at_the_next_send(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink
) -> None:
    account = await factory.account(credits=10)
    created = await sequence(client, account, await mailbox(client, account, smtp_sink))
    [contact] = await revealed(client, factory, account)
    path = f"/api/v1/sequences/{created['id']}/enrollments"
    answer = await client.post(path, json={"contact_ids": [contact]}, headers=account.headers("full"))
    assert answer.json()["results"][0]["status"] == "enrolled"
    await _answer(app, "acme0.example", "no_mx")
    assert await run(app) == 1
    assert smtp_sink.received == []
    [shown] = await enrollments(client, account, created["id"])
    assert (shown["status"], shown["stop_reason"]) == ("stopped", "undeliverable")
