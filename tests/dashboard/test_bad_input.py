"""No input, however malformed, makes a dashboard page answer 5xx (D2's rule, for the pages too)."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.dashboard.conftest import Browser
from tests.factories import Factory

NASTY = ["", " ", "x" * 5000, "\x00", "ct_", "ct_-1", "ct_99999999999999999999", "%", "😀" * 50, "<script>", "1e309"]


@pytest.mark.parametrize("value", NASTY, ids=range(len(NASTY)))
async def test_malformed_values_never_make_a_5xx(web: Browser, factory: Factory, value: str) -> None:
    await web.sign_up()
    contact = await factory.contact()
    gets = [
        (
            "/dashboard/contacts",
            {name: value for name in ("q", "state", "city", "industry", "specialty", "license_type")},
        ),
        ("/dashboard/contacts", {"q": "acme", "page": value}),
        ("/dashboard/revealed", {"q": value, "after": value}),
        ("/dashboard/credits", {"cursor": value}),
        ("/dashboard/exports/contacts.csv", {"q": value, "state": value}),
        ("/dashboard/login", {"next": value}),
        ("/dashboard", {"welcome": value}),
    ]
    for path, params in gets:
        response = await web.http.get(path, params=params)
        assert response.status_code < 500, (path, params, response.status_code)
    segment = quote(value, safe="")
    for path in (f"/dashboard/contacts/{segment}", f"/dashboard/keys/{segment}", f"/dashboard/webhooks/{segment}"):
        assert (await web.http.get(path)).status_code < 500, path
    token = await web.token("/dashboard/keys")
    posts = [
        ("/dashboard/keys", {"type": value, "name": value, "ip_allowlist": value}),
        ("/dashboard/keys/key_nothing", {"name": value, "ip_allowlist": value}),
        (f"/dashboard/keys/{segment[:40]}/revoke", {}),
        (f"/dashboard/contacts/{contact}/reveal", {"expected_price": value}),
        (f"/dashboard/contacts/{segment[:40]}/reveal", {"expected_price": "1"}),
        ("/dashboard/webhooks", {"url": value, "events": value, "description": value}),
        (f"/dashboard/webhooks/{segment[:40]}/test", {}),
        (f"/dashboard/webhooks/{segment[:40]}/delete", {}),
    ]
    for path, data in posts:
        response = await web.http.post(path, data={"csrf_token": token, **data})
        assert response.status_code < 500, (path, data, response.status_code)
    for path in ("/dashboard/login", "/dashboard/signup"):
        form_token = await web.token(path)
        data = {"csrf_token": form_token, "email": value, "password": value, "name": value, "next": value}
        assert (await web.http.post(path, data=data)).status_code < 500, path
