"""The operator's account lifecycle over the admin API and the real CLI: list, show, suspend, resume,
delete, grants, the audit trail; what suspension holds (keys, webhook deliveries in order, auto-buy,
sequences) and what deletion erases and keeps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from tests.autobuy.support import create_rule, purchases_of, signal_for
from tests.factories import Factory
from tests.sequences.test_sequences import enroll, mailbox, revealed, sequence
from tests.test_cli import vpx
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import deliver_round, deliveries, payload, receiver, webhook_settings
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.models import (
    Account,
    AccountLogin,
    ApiKey,
    Contact,
    DashboardSession,
    EnrichmentKey,
    LedgerEntry,
    Mailbox,
    VisitorSite,
    WebhookEndpoint,
)
from vpx.sequences.sending import find_due

__all__ = ["receiver"]  # the fixture, imported for this module's tests

ADMIN = "admin-token-for-the-tests-0001"
ALICE = "alice-token-for-the-tests-0002"
ACCOUNTS = "/api/v1/admin/accounts"


@pytest.fixture
def settings(database_url: str) -> Settings:
    return webhook_settings(database_url, admin_token=ADMIN, admin_tokens=f"alice={ALICE}", mailbox_allow_private=True)


def admin(token: str = ADMIN) -> dict[str, str]:
    return {"X-Admin-Token": token}


async def test_the_admin_api_lists_shows_suspends_resumes_and_audits(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account(credits=10)
    other = await factory.account()
    assert (await client.get("/api/v1/account", headers=account.headers("ro"))).status_code == 200

    listed = (await client.get(ACCOUNTS, headers=admin())).json()["accounts"]
    assert {a["id"] for a in listed} >= {account.id, other.id}
    shown = (await client.get(f"{ACCOUNTS}/{account.id}", headers=admin())).json()
    assert shown["status"] == "active" and shown["keys"] == 3 and shown["balance"] == 35
    assert shown["last_request_at"] is not None and shown["suspended_at"] is None

    suspended = await client.post(
        f"{ACCOUNTS}/{account.id}/suspend", json={"reason": "chargeback 4471"}, headers=admin(ALICE)
    )
    assert suspended.status_code == 200, suspended.text
    assert suspended.json()["status"] == "suspended" and suspended.json()["suspension_reason"] == "chargeback 4471"
    for kind in ("ro", "live", "full"):
        refused = await client.get("/api/v1/account", headers=account.headers(kind))
        assert refused.status_code == 403 and refused.json()["code"] == "account_suspended"
        assert "chargeback" not in refused.text  # the reason stays with the operator
    assert (await client.get("/api/v1/account", headers=other.headers("ro"))).status_code == 200
    only = (await client.get(ACCOUNTS, params={"status": "suspended"}, headers=admin())).json()["accounts"]
    assert [a["id"] for a in only] == [account.id]
    again = await client.post(f"{ACCOUNTS}/{account.id}/suspend", json={"reason": "twice"}, headers=admin())
    assert again.status_code == 200  # changes nothing, and is not written to the trail

    resumed = await client.post(f"{ACCOUNTS}/{account.id}/resume", headers=admin())
    assert resumed.json()["status"] == "active" and resumed.json()["suspension_reason"] is None
    assert (await client.get("/api/v1/account", headers=account.headers("ro"))).status_code == 200

    granted = await client.post(
        f"{ACCOUNTS}/{account.id}/credits", json={"amount": 12.5, "note": "pilot"}, headers=admin()
    )
    assert granted.status_code == 200 and granted.json() == {"account_id": account.id, "granted": 12.5, "balance": 47.5}
    ledger = (await client.get("/api/v1/account/ledger", headers=account.headers("ro"))).json()
    assert any(e["description"] == "pilot" and e["amount"] == 12.5 for e in ledger["entries"])

    trail = (await client.get(f"{ACCOUNTS}/{account.id}/audit", headers=admin())).json()["entries"]
    assert [(e["action"], e["actor"]) for e in trail] == [
        ("suspend", "admin:alice"),
        ("resume", "admin:admin"),
        ("grant", "admin:admin"),
    ]
    assert trail[0]["detail"] == {"reason": "chargeback 4471"} and trail[2]["detail"]["amount"] == "12.5"


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", ACCOUNTS, None),
        ("GET", f"{ACCOUNTS}/acc_x", None),
        ("POST", f"{ACCOUNTS}/acc_x/suspend", {"reason": "x"}),
        ("POST", f"{ACCOUNTS}/acc_x/resume", None),
        ("DELETE", f"{ACCOUNTS}/acc_x", None),
        ("POST", f"{ACCOUNTS}/acc_x/credits", {"amount": 1}),
        ("GET", f"{ACCOUNTS}/acc_x/audit", None),
    ],
)
async def test_admin_routes_need_an_operator_token(
    client: httpx.AsyncClient, factory: Factory, method: str, path: str, body: Any
) -> None:
    account = await factory.account()
    missing = await client.request(method, path, json=body)
    assert missing.status_code == 401 and missing.json()["code"] == "invalid_admin_token"
    wrong = await client.request(method, path, json=body, headers=admin("not-the-token-at-all-000"))
    assert wrong.status_code == 403 and wrong.json()["code"] == "admin_forbidden"
    customer = await client.request(method, path, json=body, headers=account.headers("full"))
    assert customer.status_code == 401  # a customer key is no operator token
    unknown = await client.request(method, path, json=body, headers=admin())
    assert unknown.status_code in (200, 404)


async def test_bad_admin_input_is_a_clear_422(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    for body in ({}, {"reason": ""}, {"reason": "x" * 501}, {"reason": "x", "extra": 1}):
        response = await client.post(f"{ACCOUNTS}/{account.id}/suspend", json=body, headers=admin())
        assert response.status_code == 422, body
    for body in ({"amount": 0}, {"amount": -5}, {"amount": "lots"}, {}):
        response = await client.post(f"{ACCOUNTS}/{account.id}/credits", json=body, headers=admin())
        assert response.status_code == 422, body
    assert (await client.get(ACCOUNTS, params={"status": "asleep"}, headers=admin())).status_code == 422
    shown = (await client.get(f"{ACCOUNTS}/{account.id}", headers=admin())).json()
    assert shown["status"] == "active" and shown["balance"] == 25


async def test_webhook_deliveries_wait_while_suspended_and_go_out_in_order_on_resume(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, receiver: Receiver, clock: FixedClock
) -> None:
    clock.set(datetime.now(UTC))
    account = await factory.account(credits=100)
    hook = await client.post(
        "/api/v1/webhooks",
        json={"url": receiver.url(), "events": ["contact.revealed"]},
        headers=account.headers("full"),
    )
    assert hook.status_code == 201, hook.text
    contacts = [await factory.contact(business_name=f"Business {n} LLC") for n in range(3)]
    reveal = await client.post(f"/api/v1/contacts/{contacts[0]}/reveal", headers=account.headers())
    assert reveal.status_code == 200
    await client.post(f"{ACCOUNTS}/{account.id}/suspend", json={"reason": "review"}, headers=admin())
    # Events made while suspended (by the operator's batch, say) wait with the earlier one.
    from vpx.webhooks.outbox import enqueue_event

    async with app.state.database.write_sessions() as session, session.begin():
        for contact in contacts[1:]:
            await enqueue_event(
                session,
                account_id=account.id,
                event_type="contact.revealed",
                data={"contact_id": contact},
                now=clock.now(),
            )
    for _ in range(3):
        assert await deliver_round(app) == 0
        clock.set(clock.now() + timedelta(hours=6))
    held = await deliveries(app)
    assert [d.status for d in held] == ["pending"] * 3 and all(d.attempt_count == 0 for d in held)

    await client.post(f"{ACCOUNTS}/{account.id}/resume", headers=admin())
    clock.set(datetime.now(UTC))
    # Handed out oldest first, as every due delivery is (one a round here, so that they also arrive
    # in that order: a round sends its deliveries at once).
    one_a_round = app.state.settings.model_copy(update={"worker_batch_size": 1})
    assert [await deliver_round(app, settings=one_a_round) for _ in range(4)] == [1, 1, 1, 0]
    arrived = [payload(r.body)["data"]["contact_id"] for r in receiver.received("/hook")]
    assert arrived == contacts
    assert [d.status for d in await deliveries(app)] == ["succeeded"] * 3


async def test_auto_buy_and_sequences_stop_while_suspended(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, clock: FixedClock
) -> None:
    account = await factory.account(credits=50)
    await create_rule(client, account.headers("full"))
    denver = {"city": "Denver", "state": "CO", "industry": "home-services"}
    first = await factory.contact(business_name="Mile High Plumbing LLC", **denver)
    second = await factory.contact(business_name="Front Range Rooter Inc", **denver)
    await client.post(f"{ACCOUNTS}/{account.id}/suspend", json={"reason": "review"}, headers=admin())
    await signal_for(app, first, record="held-1")
    assert await purchases_of(app, account.id) == []
    await client.post(f"{ACCOUNTS}/{account.id}/resume", headers=admin())
    await signal_for(app, second, record="after-1")
    assert [p.contact_id for p in await purchases_of(app, account.id)] == [int(second.removeprefix("ct_"))]

    # Sequences: a due enrollment of a suspended account is not found until it resumes.
    sink = SimpleNamespace(host="127.0.0.1", port=2525)  # never connected to: nothing is sent here
    mailbox_id = await mailbox(client, account, sink)  # type: ignore[arg-type]
    created = await sequence(client, account, mailbox_id)
    [result] = await enroll(client, account, created["id"], await revealed(client, factory, account))
    enrollment = result["enrollment_id"]
    async with app.state.database.read_sessions() as session:
        assert [d.enrollment_id for d in await find_due(session, clock.now(), limit=10)] == [enrollment]
    await client.post(f"{ACCOUNTS}/{account.id}/suspend", json={"reason": "review"}, headers=admin())
    async with app.state.database.read_sessions() as session:
        assert await find_due(session, clock.now(), limit=10) == []
    await client.post(f"{ACCOUNTS}/{account.id}/resume", headers=admin())
    async with app.state.database.read_sessions() as session:
        assert [d.enrollment_id for d in await find_due(session, clock.now(), limit=10)] == [enrollment]


async def test_deleting_erases_the_account_and_keeps_its_ledger(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account(credits=10)
    full = account.headers("full")
    assert await client.post("/api/v1/webhooks", json={"url": "https://hooks.example/x", "events": []}, headers=full)
    await client.put("/api/v1/enrichment/keys/hunter", json={"api_key": "hunter-key-for-tests"}, headers=full)
    await client.post("/api/v1/visitors/sites", json={"domain": "seller.example"}, headers=full)
    contributed = await client.post(
        "/api/v1/contacts/contribute",
        json={"contacts": [{"business_name": "Gift Plumbing LLC", "city": "Denver", "state": "CO",
                            "industry": "home-services", "phone": "+13035550123"}]},
        headers=account.headers(),
    )  # fmt: skip
    assert contributed.status_code == 200, contributed.text
    contact = await factory.contact()
    assert (await client.post(f"/api/v1/contacts/{contact}/reveal", headers=account.headers())).status_code == 200
    async with app.state.database.read_sessions() as session:
        before = await session.scalar(
            select(func.count()).select_from(LedgerEntry).where(LedgerEntry.account_id == account.id)
        )

    deleted = await client.delete(f"{ACCOUNTS}/{account.id}", headers=admin())
    assert deleted.status_code == 200, deleted.text
    view = deleted.json()
    assert view["status"] == "deleted" and view["name"] == "(deleted)" and view["email"] is None
    assert view["keys"] == 0 and view["deleted_at"] is not None
    for kind in ("ro", "live", "full"):
        assert (await client.get("/api/v1/account", headers=account.headers(kind))).status_code == 401
    again = await client.delete(f"{ACCOUNTS}/{account.id}", headers=admin())
    assert again.status_code == 200 and again.json()["status"] == "deleted"
    assert (await client.post(f"{ACCOUNTS}/{account.id}/resume", headers=admin())).status_code == 409

    async with app.state.database.read_sessions() as session:
        for model in (WebhookEndpoint, EnrichmentKey, VisitorSite, Mailbox, AccountLogin, DashboardSession):
            count = await session.scalar(select(func.count()).select_from(model).where(model.account_id == account.id))
            assert count == 0, model.__name__
        assert (
            await session.scalar(
                select(func.count())
                .select_from(ApiKey)
                .where(ApiKey.account_id == account.id, ApiKey.revoked_at.is_(None))
            )
            == 0
        )
        kept = await session.scalar(
            select(func.count()).select_from(LedgerEntry).where(LedgerEntry.account_id == account.id)
        )
        assert kept == before
        gift = await session.scalar(select(Contact).where(Contact.business_name == "Gift Plumbing LLC"))
        assert gift is not None and gift.publisher_account_id is None
        row = await session.get(Account, account.id)
        assert row is not None and row.status == "deleted"
    trail = (await client.get(f"{ACCOUNTS}/{account.id}/audit", headers=admin())).json()["entries"]
    assert [e["action"] for e in trail] == ["delete"]


async def test_the_cli_manages_accounts_and_writes_the_trail(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, database_url: str
) -> None:
    account = await factory.account()
    shown = vpx(database_url, "accounts", "show", account.id)
    assert shown["id"] == account.id and shown["status"] == "active" and shown["balance"] == 25
    assert set(shown) >= {"name", "plan", "keys", "created_at", "last_request_at"}
    suspended = vpx(database_url, "accounts", "suspend", account.id, "--reason", "unpaid invoice")
    assert suspended["status"] == "suspended" and suspended["changed"] is True
    assert (await client.get("/api/v1/account", headers=account.headers("ro"))).status_code == 403
    listed = vpx(database_url, "accounts", "list", "--status", "suspended")
    assert [a["id"] for a in listed["accounts"]] == [account.id]
    resumed = vpx(database_url, "accounts", "resume", account.id)
    assert resumed["status"] == "active" and resumed["changed"] is True
    granted = vpx(database_url, "credits", "grant", "--account", account.id, "--amount", "5", "--reason", "goodwill")
    assert granted["balance"] == 30
    refused = vpx(database_url, "accounts", "delete", account.id, check=False)
    assert refused["error"]["code"] == "confirmation_required"
    deleted = vpx(database_url, "accounts", "delete", account.id, "--yes")
    assert deleted["status"] == "deleted" and deleted["changed"] is True
    assert vpx(database_url, "accounts", "delete", account.id, "--yes")["changed"] is False
    assert (await client.get("/api/v1/account", headers=account.headers("ro"))).status_code == 401
    trail = vpx(database_url, "accounts", "audit", account.id)["entries"]
    assert [e["action"] for e in trail] == ["suspend", "resume", "grant", "delete"]
    assert all(e["actor"].startswith("cli:") for e in trail)
    assert trail[0]["detail"] == {"reason": "unpaid invoice"} and trail[2]["detail"]["note"] == "goodwill"
    bad = vpx(database_url, "accounts", "list", "--status", "asleep", check=False)
    assert bad["error"]["code"] == "invalid_parameters"
    assert Decimal(str(granted["granted"])) == 5
