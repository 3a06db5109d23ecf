"""Replies and bounces read from the customer's mailbox over IMAP (a real Dovecot), without changing
it; and a send whose answer was lost settled by the mailbox's Sent folder."""

from __future__ import annotations

from datetime import timedelta

import httpx
from fastapi import FastAPI

from tests.factories import Factory
from tests.sequences import mail_samples
from tests.sequences.dovecot import Mailbox as ImapBox
from tests.sequences.smtp_server import SmtpSink
from tests.sequences.test_sequences import (
    MONDAY_9AM_UTC,
    STEPS,
    enroll,
    enrollments,
    mailbox,
    monday,
    revealed,
    run,
    sequence,
    settings,
)
from vpx.clock import FixedClock
from vpx.sequences import replies

__all__ = ["monday", "settings"]


async def poll(app: FastAPI) -> int:
    return await replies.poll_mailboxes(
        app.state.database, box=app.state.secrets, settings=app.state.settings, clock=app.state.clock
    )


def imap_fields(box: ImapBox) -> dict[str, object]:
    return {
        "imap_host": box.host,
        "imap_port": box.port,
        "imap_security": "none",
        "imap_username": box.username,
        "imap_password": box.password,
    }


async def test_replies_and_bounces_are_read_over_imap_and_nothing_is_marked_read(
    client: httpx.AsyncClient,
    factory: Factory,
    app: FastAPI,
    smtp_sink: SmtpSink,
    imap_mailbox: ImapBox,
    clock: FixedClock,
) -> None:
    account = await factory.account(credits=10)
    mailbox_id = await mailbox(client, account, smtp_sink, **imap_fields(imap_mailbox))
    verified = await client.post(f"/api/v1/mailboxes/{mailbox_id}/verify", headers=account.headers("full"))
    assert verified.json() == {"smtp": "ok", "imap": "ok"}
    created = await sequence(client, account, mailbox_id)
    replier, bouncer, quiet = await revealed(client, factory, account, 3)
    await enroll(client, account, created["id"], [replier, bouncer, quiet])
    assert await run(app) == 3
    by_to = {r.message()["To"]: r for r in smtp_sink.received}
    reply_uid = imap_mailbox.deliver(mail_samples.plain_reply(by_to["owner0@acme0.example"].message_id or ""))
    auto_uid = imap_mailbox.deliver(
        mail_samples.exchange_out_of_office(by_to["owner2@acme2.example"].message_id or "").replace(
            b"reply-1@", b"ooo-1@"
        )
    )
    imap_mailbox.deliver(mail_samples.dsn_failed(by_to["owner1@acme1.example"].data))
    assert await poll(app) == 3
    shown = {e["contact_id"]: e for e in await enrollments(client, account, created["id"])}
    assert (shown[replier]["status"], shown[bouncer]["status"], shown[quiet]["status"]) == (
        "replied",
        "bounced",
        "active",
    )
    assert "\\Seen" not in imap_mailbox.flags_of(reply_uid) and "\\Seen" not in imap_mailbox.flags_of(auto_uid)
    # Read again on the next poll: nothing new, nothing counted twice.
    clock.set(MONDAY_9AM_UTC + timedelta(minutes=2))
    assert await poll(app) == 0


async def test_a_send_whose_answer_was_lost_is_settled_by_the_sent_folder(
    client: httpx.AsyncClient,
    factory: Factory,
    app: FastAPI,
    smtp_sink: SmtpSink,
    imap_mailbox: ImapBox,
    clock: FixedClock,
) -> None:
    account = await factory.account(credits=10)
    mailbox_id = await mailbox(client, account, smtp_sink, **imap_fields(imap_mailbox))
    created = await sequence(client, account, mailbox_id, steps=STEPS[:1])
    taken, lost = await revealed(client, factory, account, 2)
    await enroll(client, account, created["id"], [taken])
    # The server takes the message, then the connection drops before its answer: in doubt. The
    # provider keeps a copy in Sent (as Gmail and Exchange do), which settles it: not sent again.
    smtp_sink.vanish_next()
    await run(app)
    assert len(smtp_sink.received) == 1
    imap_mailbox.deliver(smtp_sink.received[0].data, folder="Sent")
    clock.set(MONDAY_9AM_UTC + timedelta(seconds=1))
    await run(app)
    assert len(smtp_sink.received) == 1
    [shown] = await enrollments(client, account, created["id"])
    assert shown["status"] == "finished" and len(shown["messages"]) == 1
    # Another one in doubt whose copy is not in Sent: the server did not take it, so it goes again,
    # with the same Message-ID.
    await enroll(client, account, created["id"], [lost])
    smtp_sink.vanish_next()
    await run(app)
    first = smtp_sink.received[-1].message_id
    smtp_sink.received.pop()  # as if the server had lost it
    clock.set(MONDAY_9AM_UTC + timedelta(seconds=2))
    await run(app)
    assert smtp_sink.received[-1].message_id == first
    shown_all = {e["contact_id"]: e for e in await enrollments(client, account, created["id"])}
    assert shown_all[lost]["status"] == "finished"
