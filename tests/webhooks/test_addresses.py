"""D26's SSRF guard with the development setting off: every non-public target is refused, at
registration and at delivery, whatever form its address takes."""

from __future__ import annotations

import re

import httpx
import pytest
from fastapi import FastAPI

from tests.factories import Factory
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import attempts, deliver_round, deliveries
from vpx.clock import FixedClock
from vpx.outbound.guard import TargetRefused, check_target
from vpx.webhooks import service as webhook_service
from vpx.webhooks.signing import new_secret

pytestmark = pytest.mark.asyncio

# A stand-in for DNS: names of our choosing and what they resolve to.
ZONE = {
    "public.example": ["93.184.216.34"],
    "internal.example": ["10.1.2.3"],
    "mixed.example": ["93.184.216.34", "192.168.1.20"],
    "metadata.example": ["169.254.169.254"],
    "ula.example": ["fd12:3456::1"],
}


async def fake_dns(host: str, port: int) -> list[str]:
    if host not in ZONE:
        raise OSError("no such name")
    return ZONE[host]


REFUSED = [
    "https://127.0.0.1/hook",
    "https://127.8.9.10/hook",
    "https://[::1]/hook",
    "https://10.0.0.1/hook",
    "https://172.16.5.4/hook",
    "https://192.168.0.1/hook",
    "https://100.64.0.1/hook",
    "https://169.254.169.254/latest/meta-data/",
    "https://169.254.10.10/hook",
    "https://[fe80::1]/hook",
    "https://[fd00:ec2::254]/hook",
    "https://[fc00::5]/hook",
    "https://[fd12:3456::1]/hook",
    "https://[::ffff:127.0.0.1]/hook",
    "https://[::ffff:10.0.0.1]/hook",
    "https://[::ffff:169.254.169.254]/hook",
    "https://[64:ff9b::a00:1]/hook",
    "https://[2002:7f00:1::]/hook",
    "https://0.0.0.0/hook",
    "https://2130706433/hook",
    "https://0x7f000001/hook",
    "https://0x7f.1/hook",
    "https://017700000001/hook",
    "https://0177.0.0.1/hook",
    "https://127.1/hook",
    "https://localhost/hook",
    "https://internal.example/hook",
    "https://mixed.example/hook",
    "https://metadata.example/hook",
    "https://ula.example/hook",
    "https://unknown.example/hook",
    "http://public.example/hook",
    "ftp://public.example/hook",
    "file:///etc/passwd",
    "gopher://public.example/",
    "https://user:pass@public.example/hook",
    "not a url",
    "https:///nohost",
]


async def resolve_localhost_too(host: str, port: int) -> list[str]:
    if host == "localhost":
        from vpx.outbound.resolver import system_resolver

        return await system_resolver(host, port)
    return await fake_dns(host, port)


@pytest.mark.parametrize("url", REFUSED)
async def test_guard_refuses(url: str) -> None:
    with pytest.raises(TargetRefused):
        await check_target(url, allow_private=False, resolver=resolve_localhost_too)


async def test_guard_admits_public_and_pins_the_checked_address() -> None:
    target = await check_target("https://public.example:8443/hook?x=1", allow_private=False, resolver=fake_dns)
    assert str(target.address) == "93.184.216.34"
    assert (target.port, target.request_target) == (8443, "/hook?x=1")
    assert target.host_header == "public.example:8443"
    assert target.tls_server_name == "public.example"


async def test_development_setting_admits_loopback_and_http_but_not_metadata() -> None:
    target = await check_target("http://127.0.0.1:9/hook", allow_private=True, resolver=fake_dns)
    assert str(target.address) == "127.0.0.1"
    for url in ("http://169.254.169.254/", "https://metadata.example/", "http://[fd00:ec2::254]/"):
        with pytest.raises(TargetRefused):
            await check_target(url, allow_private=True, resolver=fake_dns)


@pytest.fixture
def settings(database_url: str):  # type: ignore[no-untyped-def]
    from tests.webhooks.support import webhook_settings

    return webhook_settings(database_url, webhook_allow_private=False)


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/hook",
        "https://[::ffff:10.0.0.1]/hook",
        "https://2130706433/hook",
        "https://169.254.169.254/",
        "https://[fd00::1]/",
        "https://internal.example/hook",
        "http://public.example/hook",
    ],
)
async def test_registration_refuses_with_a_field_error(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, url: str
) -> None:
    app.state.webhook_resolver = fake_dns
    account = await factory.account()
    response = await client.post(
        "/api/v1/webhooks", json={"url": url, "events": ["signal.created"]}, headers=account.headers("full")
    )
    assert response.status_code == 422, response.text
    problem = response.json()
    assert problem["code"] == "invalid_parameters"
    assert problem["errors"][0]["field"] == "url" and "refused" in problem["errors"][0]["message"]
    batch = await client.post(
        "/api/v1/contacts/batch-reveal",
        json={"contact_ids": ["ct_1"], "webhook_url": url},
        headers=account.headers("live"),
    )
    assert batch.status_code == 422 and batch.json()["errors"][0]["field"] == "webhook_url"
    assert (await client.get("/api/v1/webhooks", headers=account.headers("full"))).json() == {"webhooks": []}


async def test_delivery_time_check_refuses_a_name_that_now_resolves_privately(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, receiver: Receiver
) -> None:
    """Registered while the name was public; by delivery time it points at a private address (DNS
    rebinding): the attempt is refused and nothing reaches the address."""
    zone = {"rebind.example": ["93.184.216.34"]}

    async def changing_dns(host: str, port: int) -> list[str]:
        return zone[host]

    app.state.webhook_resolver = changing_dns
    account = await factory.account()
    created = await client.post(
        "/api/v1/webhooks",
        json={"url": "https://rebind.example/hook", "events": ["contact.revealed"]},
        headers=account.headers("full"),
    )
    assert created.status_code == 201, created.text
    zone["rebind.example"] = ["127.0.0.1"]
    await client.post(f"/api/v1/webhooks/{created.json()['id']}/test", headers=account.headers("full"))
    assert await deliver_round(app) == 1
    [attempt] = await attempts(app)
    assert attempt.status_code is None and attempt.error is not None
    assert attempt.error.startswith("address_refused") and "non-public" in attempt.error
    assert "127.0.0.1" not in attempt.error and "loopback" not in attempt.error
    assert receiver.received() == []


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/hook",
        "https://10.0.0.7/hook",
        "https://169.254.169.254/latest/meta-data/",
        "https://[fd00:ec2::254]/",
        "https://[fd12:3456::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://2130706433/hook",
        "https://internal.example/hook",
        "http://public.example/hook",
    ],
)
async def test_delivery_refuses_what_registration_would(
    app: FastAPI, factory: Factory, receiver: Receiver, clock: FixedClock, url: str
) -> None:
    """A delivery row naming a refused target (however it got there) is never sent: each attempt is
    logged as refused and retried on the schedule."""
    app.state.webhook_resolver = fake_dns
    account = await factory.account()
    async with app.state.database.write_sessions() as session, session.begin():
        await webhook_service.enqueue_to_url(
            session,
            account_id=account.id,
            url=url,
            secret_sealed=app.state.secrets.seal(new_secret()),
            event_type="batch_reveal.completed",
            data={"batch_id": "brv_x"},
            now=clock.now(),
        )
    assert await deliver_round(app) == 1
    [attempt] = await attempts(app)
    assert attempt.status_code is None and attempt.error is not None and attempt.error.startswith("address_refused")
    [delivery] = await deliveries(app)
    assert delivery.status == "pending" and delivery.attempt_count == 1
    assert receiver.received() == []


# A name's address is never told back: "host vm resolves to 127.0.0.1" would let a customer map the
# service's own network by registering names and reading the refusals.
INTERNAL_ZONE = {
    "vm": ["127.0.0.1"],
    "db.internal": ["10.20.30.40"],
    "meta.internal": ["169.254.169.254"],
    "ula.internal": ["fd12:3456::9"],
    "odd.internal": ["not-an-address"],
}


async def internal_dns(host: str, port: int) -> list[str]:
    return INTERNAL_ZONE.get(host) or ZONE["public.example"]


@pytest.mark.parametrize("host", sorted(INTERNAL_ZONE))
async def test_a_refused_name_is_not_answered_with_its_address(host: str) -> None:
    with pytest.raises(TargetRefused) as refused:
        await check_target(f"https://{host}/hook", allow_private=False, resolver=internal_dns)
    message = str(refused.value)
    for text in INTERNAL_ZONE[host]:
        assert text not in message
    for kind in ("loopback", "private", "metadata", "link-local", "unicast"):
        assert kind not in message
    if host != "odd.internal":
        assert message == f"host {host} resolves to a non-public address"


async def test_a_literal_address_is_still_named_in_its_refusal() -> None:
    with pytest.raises(TargetRefused, match=re.escape("127.0.0.1 is a loopback address")):
        await check_target("https://127.0.0.1/hook", allow_private=False, resolver=internal_dns)


async def test_every_surface_of_the_guard_keeps_a_names_address_to_itself(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, clock: FixedClock
) -> None:
    """Webhook endpoints, a batch's webhook_url, mailbox hosts (SMTP and IMAP) and the delivery log."""
    app.state.webhook_resolver = internal_dns
    app.state.settings = app.state.settings.model_copy(update={"mailbox_allow_private": False})
    account = await factory.account()
    answers = [
        await client.post(
            "/api/v1/webhooks",
            json={"url": "https://db.internal/hook", "events": ["signal.created"]},
            headers=account.headers("full"),
        ),
        await client.post(
            "/api/v1/contacts/batch-reveal",
            json={"contact_ids": ["ct_1"], "webhook_url": "https://db.internal/hook"},
            headers=account.headers("live"),
        ),
    ]
    mailbox = {"email": "a@b.example", "smtp_port": 25, "smtp_security": "none", "postal_address": "1 Main St"}
    answers.append(
        await client.post(
            "/api/v1/mailboxes", json={**mailbox, "smtp_host": "db.internal"}, headers=account.headers("full")
        )
    )
    answers.append(
        await client.post(
            "/api/v1/mailboxes",
            json={**mailbox, "smtp_host": "smtp.acme.example", "imap_host": "db.internal", "imap_port": 993},
            headers=account.headers("full"),
        )
    )
    for answer in answers:
        assert answer.status_code == 422, answer.text
        assert "resolves to a non-public address" in answer.text, answer.text
        assert "10.20.30.40" not in answer.text and "private" not in answer.text

    async with app.state.database.write_sessions() as session, session.begin():
        await webhook_service.enqueue_to_url(
            session,
            account_id=account.id,
            url="https://meta.internal/hook",
            secret_sealed=app.state.secrets.seal(new_secret()),
            event_type="batch_reveal.completed",
            data={"batch_id": "brv_x"},
            now=clock.now(),
        )
    assert await deliver_round(app) == 1
    [attempt] = await attempts(app)
    assert attempt.error == "address_refused: host meta.internal resolves to a non-public address"


async def test_mail_connections_keep_a_names_address_to_themselves() -> None:
    """The SMTP and IMAP clients check the host again when they connect (a mailbox's errors are shown
    to its account)."""
    from vpx.mailboxes import imap, smtp

    smtp_account = smtp.SmtpAccount(
        host="vm", port=25, security="none", username=None, password=None, allow_private=False
    )
    with pytest.raises(smtp.SmtpError) as smtp_refused:
        await smtp.verify(smtp_account, resolver=internal_dns)
    assert str(smtp_refused.value) == "refused: host vm resolves to a non-public address"
    # The IMAP client asks the system resolver; "localhost" is a name that resolves to loopback.
    imap_account = imap.ImapAccount(host="localhost", port=993, security="tls", username="u", password="p")
    with pytest.raises(imap.ImapError) as imap_refused:
        imap.verify(imap_account)
    assert str(imap_refused.value) == "refused: host localhost resolves to a non-public address"


async def test_refusals_stored_before_no_longer_name_the_address(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    """What earlier versions kept in words the account reads again (a delivery's attempts, a paused
    mailbox's reason) is reworded by the migration; other texts are left as they are."""
    import importlib.util
    from pathlib import Path

    import sqlalchemy as sa

    path = Path(__file__).parents[2] / "src/vpx/migrations/versions/2026_11_29_refusal_addresses.py"
    spec = importlib.util.spec_from_file_location("refusal_addresses_migration", path)
    assert spec is not None and spec.loader is not None
    migration = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(migration)

    zone = {"rebind.example": ["93.184.216.34"]}

    async def changing_dns(host: str, port: int) -> list[str]:
        return zone.get(host) or ZONE["public.example"]

    app.state.webhook_resolver = changing_dns
    account = await factory.account()
    full = account.headers("full")
    created = await client.post(
        "/api/v1/webhooks", json={"url": "https://rebind.example/hook", "events": ["contact.revealed"]}, headers=full
    )
    webhook_id = created.json()["id"]
    zone["rebind.example"] = ["127.0.0.1"]
    await client.post(f"/api/v1/webhooks/{webhook_id}/test", headers=full)
    await client.post(f"/api/v1/webhooks/{webhook_id}/test", headers=full)
    assert await deliver_round(app) == 2
    mailbox = await client.post(
        "/api/v1/mailboxes",
        json={
            "email": "a@b.example",
            "smtp_host": "smtp.acme.example",
            "smtp_port": 25,
            "smtp_security": "none",
            "postal_address": "1 Main St",
        },
        headers=full,
    )
    assert mailbox.status_code == 201, mailbox.text
    old = "address_refused: host rebind.example resolves to 127.0.0.1 is a loopback address"
    kept = "connection_error: ConnectError: host unreachable"
    async with app.state.database.write_engine.begin() as connection:
        ids = [r[0] for r in (await connection.execute(sa.text("SELECT id FROM webhook_attempts ORDER BY id"))).all()]
        for attempt_id, error in zip(ids, (old, kept), strict=True):
            await connection.execute(
                sa.text("UPDATE webhook_attempts SET error = :error WHERE id = :id"), {"error": error, "id": attempt_id}
            )
        await connection.execute(
            sa.text("UPDATE mailboxes SET status = 'paused', pause_reason = :reason WHERE id = :id"),
            {
                "reason": "smtp_refused: refused: host smtp.acme.example: 10.0.0.5 is a private address",
                "id": mailbox.json()["id"],
            },
        )
        for _ in range(2):  # a second run changes nothing
            await connection.run_sync(migration.scrub)
    shown = (await client.get(f"/api/v1/webhooks/{webhook_id}/deliveries", headers=full)).json()
    errors = sorted(a["error"] for d in shown["deliveries"] for a in d["attempts"])
    assert errors == sorted(["address_refused: host rebind.example resolves to a non-public address", kept])
    paused = (await client.get(f"/api/v1/mailboxes/{mailbox.json()['id']}", headers=full)).json()
    assert paused["pause_reason"] == "smtp_refused: refused: host smtp.acme.example resolves to a non-public address"
