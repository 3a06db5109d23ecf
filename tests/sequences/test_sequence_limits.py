"""What an outside security probe found in sequences and mailboxes, on both databases: templates over
their budget (or using what templates do not support) are a 422 at creation and at update, never a
500; a template that fails for one recipient stops that enrollment, never the worker's round; per
account caps and paging for sequences and mailboxes, with no query per item; unsubscribe tokens kept
as digests; a mailbox check answers in fixed words, never the remote server's."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from fastapi import FastAPI

from tests.factories import Factory
from tests.sequences.smtp_server import SmtpSink
from tests.sequences.test_sequences import (
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
from vpx.mailboxes import service as mailbox_service
from vpx.secrets import is_sealed
from vpx.sequences import service as sequence_service
from vpx.sequences import templates

__all__ = ["monday", "settings"]

OVER_BUDGET = [
    ("{{ 'x' * 30000000 }}", "characters"),
    ("{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}x", "steps"),
    ("{{ 9**(9**9) }}", "digits"),
    ("{{ 10**10000000 }}", "digits"),
    ("{{ '{:>999999999}'.format(1) }}", "characters"),
    ("{{ '%999999999d' % 1 }}", "characters"),
    ("{{ 'x'|center(999999999) }}", "characters"),
    ("{{ 'x'.ljust(999999999) }}", "characters"),
    ("{{ range(10**6)|length }}", "range"),
    ("{% import 'x' as y %}", "import"),
    ("{% include 'x' %}", "include"),
    ("{% extends 'x' %}", "extends"),
    ("{% from 'x' import y %}", "import"),
    ("{{ 1 // 0 }}", "division by zero"),
]


def email(body: str, subject: str = "Hello") -> dict[str, Any]:
    return {"type": "email", "subject": subject, "body": body}


@pytest.mark.parametrize(("template", "named"), OVER_BUDGET)
async def test_a_template_over_budget_or_unsupported_is_422_at_creation_and_update(
    client: httpx.AsyncClient, factory: Factory, smtp_sink: SmtpSink, template: str, named: str
) -> None:
    account = await factory.account()
    full = account.headers("full")
    mailbox_id = await mailbox(client, account, smtp_sink)
    steps = [email("Hi"), email(template)]
    created = await client.post(
        "/api/v1/sequences", json={"name": "x", "mailbox_id": mailbox_id, "steps": steps}, headers=full
    )
    assert created.status_code == 422, created.text
    [error] = created.json()["errors"]
    assert error["field"] == "steps[1].body" and named in error["message"], error
    assert (await client.get("/api/v1/sequences", headers=full)).json()["sequences"] == []
    good = await sequence(client, account, mailbox_id)
    path = f"/api/v1/sequences/{good['id']}"
    updated = await client.patch(path, json={"steps": [email("Hi", subject=template)]}, headers=full)
    assert updated.status_code == 422, updated.text
    assert updated.json()["errors"][0]["field"] == "steps[0].subject"
    assert (await client.get(path, headers=full)).json()["version"] == 1


async def test_a_subject_that_renders_a_line_break_is_refused(
    client: httpx.AsyncClient, factory: Factory, smtp_sink: SmtpSink
) -> None:
    account = await factory.account()
    mailbox_id = await mailbox(client, account, smtp_sink)
    for subject in ("Hi{{ '\\n' }}Bcc: x@y.example", "Hi {{ '\\u2028' }}", "{{ contact.city ~ '\\r' }}"):
        response = await client.post(
            "/api/v1/sequences",
            json={"name": "x", "mailbox_id": mailbox_id, "steps": [email("Hi", subject=subject)]},
            headers=account.headers("full"),
        )
        assert response.status_code == 422, response.text
        assert response.json()["errors"][0]["field"] == "steps[0].subject"


async def test_a_template_failing_for_one_recipient_stops_that_enrollment_not_the_round(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink
) -> None:
    """Both templates pass with the example values (a phone number); the recipients without one make
    one divide by zero and the other pass its budget. Each of those enrollments stops, saying why; the
    round goes on and the third recipient gets their email."""
    account = await factory.account(credits=10)
    mailbox_id = await mailbox(client, account, smtp_sink)
    fragile = await sequence(client, account, mailbox_id, steps=[email("{{ 1 // (contact.phone|length) }}")])
    heavy = await sequence(
        client, account, mailbox_id, steps=[email("{% if not contact.phone %}{{ 'x' * 30000000 }}{% endif %}ok")]
    )
    fine = await sequence(client, account, mailbox_id, steps=STEPS[:1])
    no_phone = await revealed(client, factory, account, 2)  # phone None
    [good] = await revealed(client, factory, account, business_name="Fine Co", email="owner@fine.example")
    await enroll(client, account, fragile["id"], no_phone[:1])
    await enroll(client, account, heavy["id"], no_phone[1:])
    await enroll(client, account, fine["id"], [good])
    assert await run(app) == 3
    assert [m.recipients for m in smtp_sink.received] == [["owner@fine.example"]]
    for created, why in ((fragile, "division by zero"), (heavy, "characters")):
        [shown] = await enrollments(client, account, created["id"])
        assert (shown["status"], shown["stop_reason"]) == ("stopped", "template_failed")
        async with app.state.database.read_sessions() as session:
            reply = await session.scalar(
                sa.text("SELECT last_reply FROM sequence_messages WHERE enrollment_id = :id"), {"id": shown["id"]}
            )
        assert why in reply
    [sent] = await enrollments(client, account, fine["id"])
    assert sent["status"] == "finished"


# --- Caps and paging ---


async def test_an_account_has_at_most_so_many_sequences_and_mailboxes(
    client: httpx.AsyncClient, factory: Factory, smtp_sink: SmtpSink, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sequence_service, "MAX_SEQUENCES_PER_ACCOUNT", 2)
    monkeypatch.setattr(mailbox_service, "MAX_MAILBOXES_PER_ACCOUNT", 2)
    account, other = await factory.account(), await factory.account()
    full = account.headers("full")
    first = await mailbox(client, account, smtp_sink)
    await mailbox(client, account, smtp_sink)
    third = await client.post(
        "/api/v1/mailboxes",
        json={
            "email": "x@seller.example",
            "smtp_host": smtp_sink.host,
            "smtp_port": smtp_sink.port,
            "smtp_security": "none",
            "postal_address": "1 Main St, Denver",
        },
        headers=full,
    )
    assert third.status_code == 409 and "at most 2 mailboxes" in third.json()["detail"], third.text
    await mailbox(client, other, smtp_sink)  # a cap per account
    one = await sequence(client, account, first)
    await sequence(client, account, first)
    body = {"name": "x", "mailbox_id": first, "steps": STEPS}
    refused = await client.post("/api/v1/sequences", json=body, headers=full)
    assert refused.status_code == 409 and "at most 2 sequences" in refused.json()["detail"], refused.text
    assert len((await client.get("/api/v1/sequences", headers=full)).json()["sequences"]) == 2
    # A sequence deleted (by its own account only) makes room for another.
    path = f"/api/v1/sequences/{one['id']}"
    assert (await client.delete(path, headers=other.headers("full"))).status_code == 404
    assert (await client.delete(path, headers=full)).status_code == 204
    assert (await client.get(path, headers=full)).status_code == 404
    await sequence(client, account, first)
    # Deleting a mailbox deletes its sequences: room again for both.
    assert (await client.delete(f"/api/v1/mailboxes/{first}", headers=full)).status_code == 204
    again = await mailbox(client, account, smtp_sink)
    await sequence(client, account, again)


@contextmanager
def statements(app: FastAPI) -> Iterator[list[str]]:
    """The SQL statements run while in the block."""
    seen: list[str] = []
    database = app.state.database
    engines = {id(e): e for e in (database.read_engine, database.write_engine)}.values()

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.append(statement)

    for engine in engines:
        sa.event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        for engine in engines:
            sa.event.remove(engine.sync_engine, "before_cursor_execute", record)


async def test_sequences_and_mailboxes_are_listed_in_pages_without_a_query_per_item(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink, clock: FixedClock
) -> None:
    account = await factory.account(credits=10)
    full = account.headers("full")
    mailboxes, created = [], []
    for n in range(5):  # oldest first: one a second (two made in the same microsecond go by their ids)
        clock.set(clock.now() + timedelta(seconds=1))
        if n < 3:
            mailboxes.append(await mailbox(client, account, smtp_sink, email=f"m{n}@seller.example"))
        created.append((await sequence(client, account, mailboxes[0], name=f"S{n}"))["id"])
    await enroll(client, account, created[0], await revealed(client, factory, account, 2))

    for path, field, ids in (
        ("/api/v1/sequences", "sequences", created),
        ("/api/v1/mailboxes", "mailboxes", mailboxes),
    ):
        everything = (await client.get(path, headers=full)).json()
        assert [item["id"] for item in everything[field]] == ids and everything["next_cursor"] is None
        seen, cursor = [], None
        while True:
            params: dict[str, Any] = {"limit": 2} | ({"cursor": cursor} if cursor else {})
            page = await client.get(path, params=params, headers=full)
            assert page.status_code == 200, page.text
            assert len(page.json()[field]) <= 2 and page.json()["limit"] == 2
            seen += [item["id"] for item in page.json()[field]]
            cursor = page.json()["next_cursor"]
            if cursor is None:
                break
        assert seen == ids
        for bad in ({"cursor": "nope"}, {"limit": 0}, {"limit": 101}, {"cursor": "enr_x"}):
            assert (await client.get(path, params=bad, headers=full)).status_code == 422, bad
    listed = (await client.get("/api/v1/sequences", headers=full)).json()["sequences"]
    assert listed[0]["enrollments"] == {"active": 2} and listed[1]["enrollments"] == {}

    # The statements a page costs do not grow with its items.
    with statements(app) as two:
        await client.get("/api/v1/sequences", params={"limit": 2}, headers=full)
    with statements(app) as five:
        await client.get("/api/v1/sequences", params={"limit": 5}, headers=full)
    assert len(five) == len(two), five
    with statements(app) as one:
        await client.get("/api/v1/mailboxes", params={"limit": 1}, headers=full)
    with statements(app) as three:
        await client.get("/api/v1/mailboxes", params={"limit": 3}, headers=full)
    assert len(three) == len(one), three


async def test_enrollments_are_paged_with_a_limit_without_a_query_per_item(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink
) -> None:
    account = await factory.account(credits=10)
    full = account.headers("full")
    created = await sequence(client, account, await mailbox(client, account, smtp_sink))
    await enroll(client, account, created["id"], await revealed(client, factory, account, 5))
    assert await run(app) == 5
    path = f"/api/v1/sequences/{created['id']}/enrollments"
    everything = (await client.get(path, headers=full)).json()["enrollments"]
    assert len(everything) == 5 and all(len(e["messages"]) == 1 for e in everything)
    first = (await client.get(path, params={"limit": 2}, headers=full)).json()
    rest = (await client.get(path, params={"limit": 3, "cursor": first["next_cursor"]}, headers=full)).json()
    assert [e["id"] for e in first["enrollments"] + rest["enrollments"]] == [e["id"] for e in everything]
    assert rest["next_cursor"] is None
    with statements(app) as one:
        await client.get(path, params={"limit": 1}, headers=full)
    with statements(app) as five:
        await client.get(path, params={"limit": 5}, headers=full)
    assert len(five) == len(one), five
    # Deleting the sequence takes its enrollments and their messages with it.
    assert (await client.delete(f"/api/v1/sequences/{created['id']}", headers=full)).status_code == 204
    async with app.state.database.read_sessions() as session:
        for table in ("enrollments", "sequence_messages", "sequence_versions"):
            assert await session.scalar(sa.text(f"SELECT count(*) FROM {table}")) == 0, table


# --- Unsubscribe tokens ---


async def test_an_unsubscribe_token_is_kept_as_its_digest_and_its_link_works(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink
) -> None:
    account = await factory.account(credits=10)
    created = await sequence(client, account, await mailbox(client, account, smtp_sink))
    await enroll(client, account, created["id"], await revealed(client, factory, account))
    assert await run(app) == 1
    link = smtp_sink.received[0].message()["List-Unsubscribe"].strip("<>")
    token = httpx.URL(link).path.rsplit("/", 1)[1]
    async with app.state.database.read_sessions() as session:
        row = (await session.execute(sa.text("SELECT * FROM enrollments"))).mappings().one()
    assert token not in [str(value) for value in row.values()]
    assert row["unsubscribe_digest"] == hashlib.sha256(token.encode()).hexdigest()
    assert is_sealed(row["unsubscribe_token_sealed"])
    assert app.state.secrets.open(row["unsubscribe_token_sealed"]) == token
    assert (await client.get(f"/u/{token}")).status_code == 200
    assert (await client.get(f"/u/{row['unsubscribe_digest']}")).status_code == 404  # the digest is no link
    done = await client.post(f"/u/{token}", content="List-Unsubscribe=One-Click")
    assert done.status_code == 200
    [shown] = await enrollments(client, account, created["id"])
    assert shown["status"] == "unsubscribed"


# --- Mailbox checks answer in fixed words ---


async def serve(banner: bytes, *, auth_refusal: bytes | None = None) -> asyncio.Server:
    """A TCP server on loopback that greets with ``banner`` (and, after EHLO, offers AUTH and answers
    ``auth_refusal``)."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if not banner:
                return  # closes at once
            writer.write(banner)
            await writer.drain()
            while auth_refusal is not None and (line := await reader.readline()):
                if line.upper().startswith(b"EHLO"):
                    writer.write(b"250-secret.example hello secret-ehlo-text\r\n250 AUTH PLAIN LOGIN\r\n")
                elif line.upper().startswith(b"QUIT"):
                    writer.write(b"221 secret-bye\r\n")
                else:
                    writer.write(auth_refusal)
                await writer.drain()
            await reader.read(1000)
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


@pytest.mark.parametrize(
    ("banner", "auth_refusal", "said"),
    [
        (b"SSH-2.0-OpenSSH_9.6 secret-banner\r\n", None, "not an SMTP server"),
        (b"HTTP/1.1 400 secret-banner\r\n\r\n", None, "not an SMTP server"),
        (b"554 5.7.1 secret-banner <b>go away</b>\r\n", None, "the server refused the connection"),
        (b"421 4.3.2 secret-banner busy\r\n", None, "the server is unavailable, try again later"),
        (b"", None, "could not connect"),
        (b"220 secret-banner ESMTP\r\n", b"535 5.7.8 secret-auth-text\r\n", "authentication failed"),
    ],
)
async def test_verify_answers_a_fixed_reason_never_the_servers_words(
    client: httpx.AsyncClient,
    factory: Factory,
    smtp_sink: SmtpSink,
    banner: bytes,
    auth_refusal: bytes | None,
    said: str,
) -> None:
    account = await factory.account()
    server = await serve(banner, auth_refusal=auth_refusal)
    try:
        port = server.sockets[0].getsockname()[1]
        mailbox_id = await mailbox(
            client, account, smtp_sink, smtp_port=port, smtp_username="sam", smtp_password="app-password"
        )
        answer = await client.post(f"/api/v1/mailboxes/{mailbox_id}/verify", headers=account.headers("full"))
    finally:
        server.close()
    assert answer.status_code == 422, answer.text
    assert answer.json()["errors"] == [{"field": "smtp", "message": said}]
    assert "secret" not in answer.text


async def test_verify_of_a_closed_port_and_of_imap_answer_fixed_reasons(
    client: httpx.AsyncClient, factory: Factory, smtp_sink: SmtpSink
) -> None:
    account = await factory.account()
    closed = await serve(b"")
    port = closed.sockets[0].getsockname()[1]
    closed.close()
    await closed.wait_closed()
    mailbox_id = await mailbox(client, account, smtp_sink, smtp_port=port)
    answer = await client.post(f"/api/v1/mailboxes/{mailbox_id}/verify", headers=account.headers("full"))
    assert answer.json()["errors"] == [{"field": "smtp", "message": "could not connect"}], answer.text
    imap = await serve(b"* BYE secret-imap-banner\r\n")
    try:
        imap_port = imap.sockets[0].getsockname()[1]
        with_imap = await mailbox(
            client, account, smtp_sink, imap_host="127.0.0.1", imap_port=imap_port, imap_security="none"
        )
        answer = await client.post(f"/api/v1/mailboxes/{with_imap}/verify", headers=account.headers("full"))
    finally:
        imap.close()
    assert answer.status_code == 422 and "secret" not in answer.text, answer.text
    assert answer.json()["errors"] == [{"field": "imap", "message": "not an IMAP server"}]


def test_the_template_limits_are_what_the_documentation_says() -> None:
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs/sequences.md").read_text()
    for name, value in (
        ("steps", f"{templates.MAX_STEPS:,}"),
        ("characters", f"{templates.MAX_CHARACTERS:,}"),
        ("digits", f"{templates.MAX_DIGITS:,}"),
        ("parts", f"{templates.MAX_PARTS:,}"),
        ("seconds", f"{templates.MAX_SECONDS:g} s"),
    ):
        assert value in text, name
