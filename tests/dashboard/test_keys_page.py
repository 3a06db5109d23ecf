"""The API keys page (D5, D28): create with type, name and allow-list, the secret shown once, revoke,
edit, the 5-key limit explained, rotation due dates and the four-step guide."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from fastapi import FastAPI

from tests.conftest import START
from tests.dashboard.conftest import Browser, secret_of
from vpx.clock import FixedClock

pytestmark = pytest.mark.asyncio


async def api(app: FastAPI, secret: str, client_ip: str = "127.0.0.1") -> httpx.Response:
    transport = httpx.ASGITransport(app=app, client=(client_ip, 50000))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        return await http.get("/api/v1/account", headers={"X-API-Key": secret})


async def test_created_key_is_shown_once_and_works(web: Browser, app: FastAPI) -> None:
    await web.sign_up()
    created = await web.create_key("full", name="CRM sync")
    assert created.status_code == 201
    assert created.headers["cache-control"] == "no-store"
    secret = secret_of(created.text)
    assert secret.startswith("vpx_full_")
    assert "only time it is shown" in created.text and 'data-copy-target="secret"' in created.text
    assert (await api(app, secret)).status_code == 200
    listed = await web.get("/dashboard/keys")
    assert "CRM sync" in listed.text and secret[:13] in listed.text
    assert secret not in listed.text
    for page in ("/dashboard", "/dashboard/keys", "/dashboard/credits"):
        assert secret not in (await web.get(page)).text


async def test_allow_list_from_the_form_is_enforced(web: Browser, app: FastAPI) -> None:
    await web.sign_up()
    created = await web.create_key("ro", name="office", ip_allowlist="203.0.113.7\n198.51.100.0/24, 2001:db8::/48")
    assert "203.0.113.7/32, 198.51.100.0/24, 2001:db8::/48" in created.text
    secret = secret_of(created.text)
    assert (await api(app, secret)).json()["code"] == "ip_not_allowed"
    assert (await api(app, secret, client_ip="198.51.100.20")).status_code == 200


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"type": "live", "name": "  ", "ip_allowlist": ""}, "name", "give the key a name"),
        ({"type": "root", "name": "x", "ip_allowlist": ""}, "type", "ro"),
        ({"type": "live", "name": "x", "ip_allowlist": "10.0.0.256"}, "ip_allowlist", "not an IP address"),
    ],
)
async def test_invalid_key_forms_are_explained(web: Browser, data: dict[str, str], field: str, message: str) -> None:
    await web.sign_up()
    response = await web.submit("/dashboard/keys", "/dashboard/keys", data)
    assert response.status_code == 422
    assert f'id="{field}-error"' in response.text and message in response.text
    assert "No keys yet" in response.text


async def test_the_five_key_limit_is_explained(web: Browser) -> None:
    await web.sign_up()
    page = await web.get("/dashboard/keys")
    assert "up to 5 active keys" in page.text and "create 5 more" in page.text
    for n in range(5):
        assert (await web.create_key(name=f"key {n}")).status_code == 201
    full = await web.get("/dashboard/keys")
    assert "5 active keys, the most an account may have" in full.text
    assert "<fieldset disabled>" in full.text
    refused = await web.create_key(name="sixth")
    assert refused.status_code == 409 and "revoke one first" in refused.text


async def test_revoke_from_the_page(web: Browser, app: FastAPI) -> None:
    await web.sign_up()
    created = await web.create_key(name="old")
    secret = secret_of(created.text)
    key_id = "key_" + created.text.split("<code>key_", 1)[1].split("</code>", 1)[0]
    revoked = await web.submit("/dashboard/keys", f"/dashboard/keys/{key_id}/revoke", {})
    assert revoked.status_code == 303 and revoked.headers["location"] == "/dashboard/keys?done=revoked"
    page = await web.get("/dashboard/keys?done=revoked")
    assert "now get 401" in page.text and "Revoked 2026-11-15" in page.text
    assert (await api(app, secret)).status_code == 401


async def test_edit_name_and_allow_list(web: Browser, app: FastAPI) -> None:
    await web.sign_up()
    created = await web.create_key("ro", name="before")
    secret = secret_of(created.text)
    key_id = "key_" + created.text.split("<code>key_", 1)[1].split("</code>", 1)[0]
    saved = await web.submit(
        "/dashboard/keys", f"/dashboard/keys/{key_id}", {"name": "after", "ip_allowlist": "203.0.113.0/24"}
    )
    assert saved.status_code == 303
    page = (await web.get("/dashboard/keys")).text
    assert "after" in page and "203.0.113.0/24" in page
    assert (await api(app, secret)).status_code == 403
    bad = await web.submit("/dashboard/keys", f"/dashboard/keys/{key_id}", {"name": "after", "ip_allowlist": "nope"})
    assert bad.status_code == 422 and f'id="edit-{key_id}-ip_allowlist-error"' in bad.text


async def test_rotation_due_is_shown_with_the_guide(web: Browser, clock: FixedClock) -> None:
    await web.sign_up()
    await web.create_key(name="aging")
    fresh = (await web.get("/dashboard/keys")).text
    assert "2027-02-13" in fresh and "Rotation due" not in fresh.split("Rotating a key")[0]
    for step in ("Create", "Switch", "Verify", "Revoke"):
        assert f"<strong>{step}</strong>" in fresh
    clock.set(START + timedelta(days=80))
    await web.sign_in(web.email)  # sessions end after hours
    assert "Due soon" in (await web.get("/dashboard/keys")).text
    clock.set(START + timedelta(days=91))
    await web.sign_in(web.email)
    due = await web.get("/dashboard/keys")
    assert '<span class="badge badge-warning">Rotation due</span>' in due.text
    assert "1 due for rotation" in (await web.get("/dashboard")).text


async def test_last_used_is_shown(web: Browser, app: FastAPI, clock: FixedClock) -> None:
    await web.sign_up()
    secret = secret_of((await web.create_key(name="used")).text)
    assert "never" in (await web.get("/dashboard/keys")).text
    clock.set(START + timedelta(minutes=5))
    await api(app, secret)
    assert "2026-11-15 12:05 UTC" in (await web.get("/dashboard/keys")).text
