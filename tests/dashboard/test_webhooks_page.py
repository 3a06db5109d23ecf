"""The webhooks page (D25, D29): add with the signing secret shown once, deliveries, a test event,
delete; refusals of the SSRF guard shown on the form; another account's webhooks out of reach."""

from __future__ import annotations

import re

import pytest
from fastapi import FastAPI

from tests.dashboard.conftest import Browser

PUBLIC = "93.184.216.34"  # documentation-free public address; nothing is sent (no worker runs here)


@pytest.fixture(autouse=True)
def public_dns(app: FastAPI) -> None:
    async def resolve(host: str, port: int) -> list[str]:
        return [PUBLIC]

    app.state.webhook_resolver = resolve


async def add(web: Browser, url: str = "https://hooks.example.com/vpx", events: list[str] | None = None) -> object:
    token = await web.token("/dashboard/webhooks")
    chosen = events if events is not None else ["contact.revealed", "signal.created"]
    data = {"csrf_token": token, "url": url, "description": "CRM", "events": chosen}
    return await web.http.post("/dashboard/webhooks", data=data)


def webhook_id(page: str) -> str:
    found = re.search(r"<code>(wh_[0-9A-Za-z]+)</code>", page)
    assert found, "no webhook id on the page"
    return found.group(1)


async def test_add_shows_the_secret_once(web: Browser) -> None:
    await web.sign_up()
    created = await add(web)
    assert created.status_code == 201
    secret = re.search(r'value="(whsec_[^"]+)"', created.text)
    assert secret and "only time it is shown" in created.text and 'data-copy-target="secret"' in created.text
    listed = (await web.get("/dashboard/webhooks")).text
    assert "https://hooks.example.com/vpx" in listed and "contact.revealed, signal.created" in listed
    assert secret.group(1) not in listed
    assert secret.group(1) not in (await web.get(f"/dashboard/webhooks/{webhook_id(created.text)}")).text


@pytest.mark.parametrize(
    ("url", "events", "field", "message"),
    [
        ("http://hooks.example.com/vpx", ["contact.revealed"], "url", "refused"),
        ("https://hooks.example.com/vpx", [], "events", "must not be empty"),
        ("https://hooks.example.com/vpx", ["gossip.spread"], "events", "contact.revealed"),
    ],
)
async def test_refused_webhooks_are_explained(
    web: Browser, url: str, events: list[str], field: str, message: str
) -> None:
    await web.sign_up()
    response = await add(web, url, events)
    assert response.status_code == 422
    shown = re.findall(r'id="[a-z]+-error"[^<]*', response.text)
    assert f'id="{field}-error"' in response.text and message in response.text, shown
    assert "No webhooks yet" in response.text


async def test_test_event_and_deliveries_then_delete(web: Browser) -> None:
    await web.sign_up()
    hook = webhook_id((await add(web)).text)
    page = f"/dashboard/webhooks/{hook}"
    assert "No deliveries yet" in (await web.get(page)).text
    tested = await web.submit(page, f"{page}/test", {})
    assert tested.status_code == 303 and tested.headers["location"] == f"{page}?done=tested"
    shown = (await web.get(tested.headers["location"])).text
    assert "webhook.test" in shown and "pending" in shown and "A test event is on its way" in shown
    deleted = await web.submit("/dashboard/webhooks", f"{page}/delete", {})
    assert deleted.status_code == 303
    assert "No webhooks yet" in (await web.get("/dashboard/webhooks?done=deleted")).text
    assert (await web.get(page)).status_code == 404


async def test_another_accounts_webhooks_are_out_of_reach(web: Browser, other_web: Browser) -> None:
    await other_web.sign_up()
    theirs = webhook_id((await add(other_web, "https://victim.example.com/hook")).text)
    await web.sign_up()
    assert "victim.example.com" not in (await web.get("/dashboard/webhooks")).text
    assert (await web.get(f"/dashboard/webhooks/{theirs}")).status_code == 404
    for action in ("test", "delete"):
        response = await web.submit("/dashboard/webhooks", f"/dashboard/webhooks/{theirs}/{action}", {})
        assert response.status_code == 404, action
    assert "victim.example.com" in (await other_web.get("/dashboard/webhooks")).text
    for malformed in ("%00", "wh_", "wh_a-b", "x" * 40):
        assert (await web.get(f"/dashboard/webhooks/{malformed}")).status_code == 404
