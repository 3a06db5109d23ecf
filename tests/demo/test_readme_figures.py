"""Every id and figure the README shows of the demo is what the seeded demo answers: the demo is built
here as `vpx demo` builds it (12,000 contacts, seed 42, a month of 1,200 signals, the demo account with
its 500 credits), the README's requests are asked of it, and the README must hold each answer as shown.
Ids the service draws at random (signals', accounts') are shown elided (`sg_…`), never as an example
value a reader would not get."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from vpx.auth import service as key_service
from vpx.auth.keys import KeyType
from vpx.demo import service as demo_service
from vpx.demo import signals as demo_signals
from vpx.models import Account, Signal

README = Path(__file__).resolve().parents[2] / "README.md"
# `vpx demo`'s defaults.
DEMO_CONTACTS, DEMO_SEED, DEMO_GRANT = 12_000, 42, Decimal(500)

pytestmark = pytest.mark.asyncio


def _compact(text: str) -> str:
    """The README's example answers as one line each: its "# " prefixes and line breaks gone."""
    return re.sub(r"\n#\s*", "", text)


async def test_the_readmes_ids_and_figures_are_the_seeded_demos(app: FastAPI, client: httpx.AsyncClient) -> None:
    database, now, settings = app.state.database, app.state.clock.now(), app.state.settings
    added = await demo_service.load_demo_catalogue(
        database, count=DEMO_CONTACTS, seed=DEMO_SEED, search=app.state.search, now=now
    )
    count = demo_signals.default_signal_count(added)
    report = await demo_signals.load_demo_signals(database, count=count, seed=DEMO_SEED, now=now, settings=settings)
    await demo_service.issue_demo_account(database, now=now, settings=settings, grant=DEMO_GRANT)
    async with database.write_sessions() as session, session.begin():
        account = await session.scalar(select(Account).where(Account.email == demo_service.DEMO_EMAIL))
        assert account is not None
        _, secret = await key_service.create_key(
            session, account_id=account.id, key_type=KeyType.live, name="readme", ip_allowlist=[], now=now,
            settings=settings,
        )  # fmt: skip
    readme = README.read_text()
    shown = _compact(readme)

    # What `make serve` prints.
    for name, value in (("contacts_added", added), ("contacts", added), ("signals_added", report.ingested),
                        ("signals", await demo_signals.demo_signal_count(database))):  # fmt: skip
        printed = re.search(rf"│ {name}\s+│ (\S+)", readme)
        assert printed is not None and printed.group(1) == str(value), name

    key = {"X-API-Key": secret}  # a Standard key of the demo account, as the README's $KEY
    search = {"q": "plumbng", "state": "CA", "limit": 3}
    found = (await client.get("/api/v1/contacts/search", params=search, headers=key)).json()
    first = found["contacts"][0]
    revealed = await client.post(f"/api/v1/contacts/{first['id']}/reveal", headers={**key, "Idempotency-Key": "demo-1"})
    contact = revealed.json()
    signals = (
        await client.get(
            "/api/v1/signals",
            params={"industry": "home-services", "intent_level": "hot", "source_status": "available", "limit": 5},
            headers=key,
        )
    ).json()["signals"]
    signal = signals[0]
    bought = (await client.post(f"/api/v1/signals/{signal['id']}/purchase", headers=key)).json()
    async with database.read_sessions() as session:
        last_sequence = await session.scalar(select(func.max(Signal.sequence)))

    expected = [
        # The search, its first contact and the total.
        f'{{"contacts":[{{"id":"{first["id"]}","business_name":"{first["business_name"]}","city":"{first["city"]}",'
        f'"state":"{first["state"]}","industry":"{first["industry"]}","preview":true,"reveal_cost":{first["reveal_cost"]}}}',
        f'"total":{found["total"]},"limit":3,',
        # The reveal: what it cost, what is left (the demo's grant and the month's free credits), the contact.
        f"# X-Credits-Charged: {revealed.headers['X-Credits-Charged']}\n",
        f"# X-Credits-Remaining: {revealed.headers['X-Credits-Remaining']}\n",
        f'{{"id":"{first["id"]}", …, "preview":false,"phone":"{contact["phone"]}",',
        f'"address":{{"street":"…","city":"{contact["address"]["city"]}","state":"{contact["address"]["state"]}",',
        # The newest hot signal of the month and its purchase.
        f'"sequence":{signal["sequence"]},"category":"{signal["category"]}","industry":"home-services",'
        f'"intent_level":"hot","source_status":"available","confidence":{signal["confidence"]},'
        f'"topic":"{signal["topic"]}","state":"{signal["state"]}","city":"{signal["city"]}",'
        f'"summary":"{signal["summary"]}","evidence":{{…}},"reveal_cost":{signal["reveal_cost"]},'
        f'"contact":{{"id":"{signal["contact"]["id"]}", …}}',
        f'"contact":{{"id":"{bought["contact"]["id"]}", …,"preview":false,"phone":"{bought["contact"]["phone"][:8]}…",'
        f' …,"credits_charged":{bought["contact"]["credits_charged"]}}}',
        # The stream's next signal: the first after the month's.
        f"# id: {last_sequence + 1}\n",
        # The auto-buy rule buys the feed's warm and hot signals at their prices.
        f'"credits_charged":{settings.price_warm}, …}}], …}}   (a warm signal; {settings.price_hot} for a hot one)',
    ]
    for text in expected:
        assert text in shown or text in readme, f"the README does not show what the demo answers:\n{text}"
    # Every contact id the README names is one of those answers; no random id is shown as if it were one.
    named = set(re.findall(r"\bct_\d+\b", readme))
    assert named <= {first["id"], signal["contact"]["id"], bought["contact"]["id"]}, named
    assert re.findall(r"\b(?:sg|acc|key)_[A-Za-z0-9]{16}\b", readme) == []
