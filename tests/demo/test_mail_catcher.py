"""The demo's mail catcher: an SMTP sink on loopback that `vpx serve` runs when VPX_DEMO_MAIL_PORT is
set (make serve), keeping each message it takes as a .eml file. Only the demo account's mailboxes may
point at it; every other account's loopback host is still refused (D26's guard, D34)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from tests import factories
from tests.conftest import test_settings
from tests.factories import Factory
from vpx.config import Settings
from vpx.demo.account import DEMO_EMAIL
from vpx.mail.catcher import MailCatcher
from vpx.mailboxes import smtp
from vpx.sequences import sending


@pytest.fixture
async def catcher(tmp_path: Path) -> AsyncIterator[MailCatcher]:
    running = MailCatcher(tmp_path / "demo-mail", port=0)
    await running.start()
    yield running
    await running.stop()


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    # The catcher's port is set per test (it is a free one); the guard is the production one.
    return test_settings(database_url, worker_in_process=False, mailbox_allow_private=False, data_dir=tmp_path)


def caught(catcher: MailCatcher) -> list[EmailMessage]:
    return [
        message_from_bytes(path.read_bytes(), policy=default)  # type: ignore[misc]
        for path in sorted(catcher.folder.glob("*.eml"))
    ]


async def test_the_catcher_takes_a_message_with_any_login_and_keeps_it_as_a_file(catcher: MailCatcher) -> None:
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = "sam@acme.example", "owner@plumbing.example", "Hello"
    message.set_content("First line\n.a line that starts with a dot\nLast line\n")
    account = smtp.SmtpAccount(
        host="127.0.0.1", port=catcher.port, security="none", username="sam", password="anything", allow_private=True
    )
    outcome = await smtp.send(account, message, sender="sam@acme.example", recipient="owner@plumbing.example")
    assert outcome.status == "accepted"
    [kept] = caught(catcher)
    assert kept["Subject"] == "Hello" and kept["X-Original-To"] == "owner@plumbing.example"
    assert kept["Return-Path"] == "<sam@acme.example>"
    assert kept.get_content() == "First line\n.a line that starts with a dot\nLast line\n"
    assert (catcher.folder.stat().st_mode & 0o777) == 0o700


async def test_the_catcher_offers_no_tls_and_says_so(catcher: MailCatcher) -> None:
    account = smtp.SmtpAccount(
        host="127.0.0.1", port=catcher.port, security="starttls", username=None, password=None, allow_private=True
    )
    with pytest.raises(smtp.SmtpError) as refused:
        await smtp.verify(account)
    assert refused.value.said == "TLS failed"


def catcher_mailbox(catcher: MailCatcher, **fields: Any) -> dict[str, Any]:
    return {
        "email": "sam@acme.example",
        "smtp_host": "127.0.0.1",
        "smtp_port": catcher.port,
        "smtp_security": "none",
        "postal_address": "Acme Inc, 1 Main St, Denver CO 80202",
        **fields,
    }


async def demo_account(factory: Factory) -> factories.TestAccount:
    return await factory.account(credits=10, email=DEMO_EMAIL, name="Demo account")


async def test_only_the_demo_account_may_send_through_the_catcher(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, catcher: MailCatcher
) -> None:
    app.state.settings = app.state.settings.model_copy(update={"demo_mail_port": catcher.port})
    demo, other = await demo_account(factory), await factory.account()
    created = await client.post("/api/v1/mailboxes", json=catcher_mailbox(catcher), headers=demo.headers("full"))
    assert created.status_code == 201, created.text
    mailbox_id = created.json()["id"]
    verified = await client.post(f"/api/v1/mailboxes/{mailbox_id}/verify", headers=demo.headers("full"))
    assert verified.json() == {"smtp": "ok", "imap": "not_configured"}

    # Another account: the loopback host is refused, on creation and on a change.
    refused = await client.post("/api/v1/mailboxes", json=catcher_mailbox(catcher), headers=other.headers("full"))
    assert refused.status_code == 422 and "refused" in refused.json()["detail"]
    # The demo account itself: the catcher's port on 127.0.0.1 only, no other loopback port nor IMAP there.
    for fields in ({"smtp_port": catcher.port + 1}, {"smtp_host": "localhost"}, {"imap_host": "127.0.0.1"}):
        answer = await client.post(
            "/api/v1/mailboxes", json=catcher_mailbox(catcher, **fields), headers=demo.headers("full")
        )
        assert answer.status_code == 422 and "refused" in answer.json()["detail"], fields

    # Without the catcher (VPX_DEMO_MAIL_PORT unset) the demo account is refused like any other.
    app.state.settings = app.state.settings.model_copy(update={"demo_mail_port": None})
    again = await client.post("/api/v1/mailboxes", json=catcher_mailbox(catcher), headers=demo.headers("full"))
    assert again.status_code == 422


async def test_another_accounts_mailbox_cannot_be_moved_onto_the_catcher(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, catcher: MailCatcher
) -> None:
    other = await factory.account()
    app.state.settings = app.state.settings.model_copy(update={"mailbox_allow_private": True})
    created = await client.post(
        "/api/v1/mailboxes", json=catcher_mailbox(catcher, smtp_port=25), headers=other.headers("full")
    )
    assert created.status_code == 201
    app.state.settings = app.state.settings.model_copy(
        update={"mailbox_allow_private": False, "demo_mail_port": catcher.port}
    )
    moved = await client.patch(
        f"/api/v1/mailboxes/{created.json()['id']}", json={"smtp_port": catcher.port}, headers=other.headers("full")
    )
    assert moved.status_code == 422 and "refused" in moved.json()["detail"]


async def test_a_demo_sequence_step_lands_in_the_catchers_folder(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, catcher: MailCatcher
) -> None:
    app.state.settings = app.state.settings.model_copy(update={"demo_mail_port": catcher.port})
    demo = await demo_account(factory)
    mailbox = await client.post("/api/v1/mailboxes", json=catcher_mailbox(catcher), headers=demo.headers("full"))
    steps = [{"type": "email", "subject": "Quick question, {{ contact.business_name }}", "body": "Hi there"}]
    sequence = await client.post(
        "/api/v1/sequences",
        json={"name": "Fleet intro", "mailbox_id": mailbox.json()["id"], "steps": steps},
        headers=demo.headers("full"),
    )
    contact = await factory.contact(business_name="Gomez Plumbing Corp", email="office@gomez.example")
    assert (await client.post(f"/api/v1/contacts/{contact}/reveal", headers=demo.headers())).status_code == 200
    enrolled = await client.post(
        f"/api/v1/sequences/{sequence.json()['id']}/enrollments",
        json={"contact_ids": [contact]},
        headers=demo.headers("full"),
    )
    assert enrolled.json()["results"][0]["status"] == "enrolled"
    handled = await sending.run_due_sends(
        app.state.database, box=app.state.secrets, settings=app.state.settings, clock=app.state.clock
    )
    assert handled == 1
    [kept] = caught(catcher)
    assert kept["Subject"] == "Quick question, Gomez Plumbing Corp" and kept["To"] == "office@gomez.example"
    assert kept["List-Unsubscribe"].startswith(f"<{app.state.settings.public_url}/u/")
