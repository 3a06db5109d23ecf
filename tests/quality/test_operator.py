"""The operator's decisions on reports, over the admin API and `vpx reports` (a subprocess): confirming
refunds the reporter (and every other open report on the value) and tells every buyer; dismissing
refunds nothing and takes the report out of the rule; each step is in the report's trail (who, when,
why); a confirmed report cannot be dismissed."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from fastapi import FastAPI

from tests.factories import Factory
from tests.quality.support import ADMIN_TOKEN, buyer, corrected, refunds, report, reveal
from tests.test_cli import vpx
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import deliver_round
from vpx.clock import FixedClock

pytestmark = pytest.mark.asyncio
ADMIN = {"X-Admin-Token": ADMIN_TOKEN}
BASE = "/api/v1/admin/reports"


async def test_the_operator_confirms_over_the_admin_api_with_a_trail(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, receiver: Receiver, clock: FixedClock
) -> None:
    reporter, other, onlooker = [await buyer(client, factory, receiver, n) for n in ("r", "o", "l")]
    contact = await factory.contact()
    for account in (reporter, other, onlooker):
        await reveal(client, account, contact)
    mine = await report(client, reporter, contact, "website", "closed_business", note="Sign says closed for good")
    theirs = await report(client, other, contact, "address", "wrong")

    listed = (await client.get(BASE, params={"status": "open"}, headers=ADMIN)).json()
    assert [r["id"] for r in listed["reports"]] == [mine["id"], theirs["id"]] and listed["next_after"] is None
    shown = listed["reports"][0]
    assert shown["account_id"] == reporter.id and shown["value"] == "https://acmeplumbing.example"
    assert shown["current"] is True and shown["note"] == "Sign says closed for good"
    assert [(h["action"], h["actor"]) for h in shown["history"]] == [("opened", f"account:{reporter.id}")]
    page = (await client.get(BASE, params={"limit": 1}, headers=ADMIN)).json()
    assert [r["id"] for r in page["reports"]] == [mine["id"]] and page["next_after"] == mine["id"]
    rest = (await client.get(BASE, params={"after": mine["id"]}, headers=ADMIN)).json()
    assert [r["id"] for r in rest["reports"]] == [theirs["id"]]

    confirmed = await client.post(
        f"{BASE}/{mine['id']}/confirm", json={"note": "Checked the state filing"}, headers=ADMIN
    )
    assert confirmed.status_code == 200, confirmed.text
    body = confirmed.json()
    assert body["status"] == "confirmed" and body["credits_refunded"] == 0.25 and body["resolved_at"]
    assert [(h["action"], h["actor"], h["note"]) for h in body["history"]] == [
        ("opened", f"account:{reporter.id}", None),
        ("confirmed", "admin:admin", "Checked the state filing"),
    ]
    [entry] = await refunds(client, reporter)
    assert (
        entry["amount"] == 0.25
        and entry["reference"] == contact
        and "confirmed by the operator" in entry["description"]
    )
    # Again: nothing more.
    assert (await client.post(f"{BASE}/{mine['id']}/confirm", headers=ADMIN)).json() == body
    assert len(await refunds(client, reporter)) == 1
    assert (await client.get(f"{BASE}/{mine['id']}", headers=ADMIN)).json() == body

    await deliver_round(app)
    for name in ("r", "o", "l"):
        [event] = corrected(receiver, f"/{name}")
        assert (event["data"]["fields"], event["data"]["reason"]) == (["website"], "closed_business")

    dismissed = (
        await client.post(f"{BASE}/{theirs['id']}/dismiss", json={"note": "Address verified"}, headers=ADMIN)
    ).json()
    assert dismissed["status"] == "dismissed" and dismissed["credits_refunded"] == 0
    assert dismissed["history"][-1]["action"] == "dismissed" and dismissed["history"][-1]["note"] == "Address verified"
    # A dismissed report no longer counts: a second buyer's report of the address stays open.
    assert (await report(client, onlooker, contact, "address", "wrong"))["status"] == "open"
    refused = await client.post(f"{BASE}/{mine['id']}/dismiss", headers=ADMIN)
    assert refused.status_code == 409 and refused.json()["code"] == "conflict"
    assert (await client.get(f"{BASE}/rpt_999999", headers=ADMIN)).status_code == 404
    assert (await client.post(f"{BASE}/nonsense/confirm", headers=ADMIN)).status_code == 404
    assert (await client.get(BASE, params={"status": "maybe"}, headers=ADMIN)).status_code == 422
    assert (await client.get(BASE)).status_code == 401


async def test_confirming_one_report_refunds_every_open_report_on_the_value(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    first, second = await buyer(client, factory), await buyer(client, factory)
    contact = await factory.contact()
    for account in (first, second):
        await reveal(client, account, contact)
    mine = await report(client, first, contact, "email", "wrong")
    # The operator dismisses the first; the second buyer's report of the same email is then alone.
    await client.post(f"{BASE}/{mine['id']}/dismiss", headers=ADMIN)
    theirs = await report(client, second, contact, "email", "wrong")
    assert theirs["status"] == "open"
    # The operator changes their mind about the first: confirmed, and the other open report with it.
    changed = (await client.post(f"{BASE}/{mine['id']}/confirm", headers=ADMIN)).json()
    assert changed["status"] == "confirmed"
    assert [h["action"] for h in changed["history"]] == ["opened", "dismissed", "confirmed"]
    for account in (first, second):
        assert [e["amount"] for e in await refunds(client, account)] == [0.25]


async def test_vpx_reports_list_confirm_dismiss(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, database_url: str
) -> None:
    first, second = await buyer(client, factory), await buyer(client, factory)
    contact = await factory.contact()
    for account in (first, second):
        await reveal(client, account, contact)
    phone = await report(client, first, contact, "phone", "disconnected")
    website = await report(client, second, contact, "website", "wrong")

    listed = await asyncio.to_thread(vpx, database_url, "reports", "list", "--status", "open")
    assert [r["id"] for r in listed["reports"]] == [phone["id"], website["id"]]
    confirmed = await asyncio.to_thread(vpx, database_url, "reports", "confirm", phone["id"], "--note", "Called it")
    assert confirmed["status"] == "confirmed" and confirmed["credits_refunded"] == 0.25
    step = confirmed["history"][-1]
    assert step["action"] == "confirmed" and step["actor"].startswith("cli:") and step["note"] == "Called it"
    dismissed = await asyncio.to_thread(vpx, database_url, "reports", "dismiss", website["id"])
    assert dismissed["status"] == "dismissed" and dismissed["history"][-1]["actor"].startswith("cli:")
    shown = await asyncio.to_thread(vpx, database_url, "reports", "show", website["id"])
    assert shown == dismissed
    refused = await asyncio.to_thread(vpx, database_url, "reports", "dismiss", phone["id"], check=False)
    assert refused["error"]["code"] == "conflict"
    unknown = await asyncio.to_thread(vpx, database_url, "reports", "confirm", "rpt_424242", check=False)
    assert unknown["error"]["code"] == "not_found"
    assert [e["amount"] for e in await refunds(client, first)] == [0.25] and await refunds(client, second) == []
