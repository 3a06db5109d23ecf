"""D4, table-driven: every endpoint × every key type → the expected status.

Every /api/v1 route must appear in ENDPOINTS; a new route without an entry fails
``test_every_route_is_in_the_matrix``. Each entry gives the capability the route needs and a request
that gets past authentication (bodies need not be valid: permission is checked before the body).
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from tests.conftest import TEST_SECRET_KEY
from tests.factories import Factory

READ, BUY, MANAGE = "read", "buy", "manage"
ALLOWED = {READ: {"ro", "live", "full"}, BUY: {"live", "full"}, MANAGE: {"full"}}

# (method, path template) -> (capability, concrete path, JSON body or None)
ENDPOINTS: dict[tuple[str, str], tuple[str, str, Any]] = {
    ("GET", "/api/v1/contacts/search"): (READ, "/api/v1/contacts/search", None),
    ("POST", "/api/v1/contacts/search"): (READ, "/api/v1/contacts/search", {}),
    ("GET", "/api/v1/contacts/{contact_id}"): (READ, "/api/v1/contacts/{contact}", None),
    ("POST", "/api/v1/contacts/reveal"): (BUY, "/api/v1/contacts/reveal", {"contact_id": "{contact}"}),
    ("POST", "/api/v1/contacts/{contact_id}/reveal"): (BUY, "/api/v1/contacts/{contact}/reveal", None),
    ("GET", "/api/v1/contacts/{contact_id}/decision-makers"): (BUY, "/api/v1/contacts/{contact}/decision-makers", None),
    # Reports need a key that can reveal (the reporter must have revealed the contact); the suppressions
    # feed is readable with any key.
    ("POST", "/api/v1/contacts/{contact_id}/report"): (
        BUY,
        "/api/v1/contacts/{contact}/report",
        {"field": "phone", "problem": "wrong"},
    ),
    ("GET", "/api/v1/suppressions/feed"): (READ, "/api/v1/suppressions/feed", None),
    ("GET", "/api/v1/account"): (READ, "/api/v1/account", None),
    ("GET", "/api/v1/account/ledger"): (READ, "/api/v1/account/ledger", None),
    ("POST", "/api/v1/account/test-balance/reset"): (BUY, "/api/v1/account/test-balance/reset", None),
    # Issue 5: batch reveal and contributions (Standard or Full), publisher views (see docs/webhooks.md),
    # webhook management (Full Access, D29).
    ("POST", "/api/v1/contacts/batch-reveal"): (BUY, "/api/v1/contacts/batch-reveal", {"contact_ids": ["{contact}"]}),
    ("GET", "/api/v1/contacts/batch-reveal/{batch_id}"): (BUY, "/api/v1/contacts/batch-reveal/brv_unknown", None),
    ("POST", "/api/v1/contacts/contribute"): (BUY, "/api/v1/contacts/contribute", {"contacts": [{}]}),
    ("GET", "/api/v1/publisher/contributions"): (BUY, "/api/v1/publisher/contributions", None),
    ("GET", "/api/v1/publisher/earnings"): (BUY, "/api/v1/publisher/earnings", None),
    ("GET", "/api/v1/webhooks"): (MANAGE, "/api/v1/webhooks", None),
    ("POST", "/api/v1/webhooks"): (MANAGE, "/api/v1/webhooks", {"url": "https://example.invalid/", "events": []}),
    ("GET", "/api/v1/webhooks/{webhook_id}"): (MANAGE, "/api/v1/webhooks/wh_unknown", None),
    ("PATCH", "/api/v1/webhooks/{webhook_id}"): (MANAGE, "/api/v1/webhooks/wh_unknown", {"description": "x"}),
    ("DELETE", "/api/v1/webhooks/{webhook_id}"): (MANAGE, "/api/v1/webhooks/wh_unknown", None),
    ("GET", "/api/v1/webhooks/{webhook_id}/deliveries"): (MANAGE, "/api/v1/webhooks/wh_unknown/deliveries", None),
    ("POST", "/api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver"): (
        MANAGE,
        "/api/v1/webhooks/wh_unknown/deliveries/dlv_1/redeliver",
        None,
    ),
    ("POST", "/api/v1/webhooks/{webhook_id}/test"): (MANAGE, "/api/v1/webhooks/wh_unknown/test", None),
    ("POST", "/api/v1/webhooks/{webhook_id}/rotate-secret"): (MANAGE, "/api/v1/webhooks/wh_unknown/rotate-secret", {}),
    ("GET", "/api/v1/keys"): (MANAGE, "/api/v1/keys", None),
    ("POST", "/api/v1/keys"): (MANAGE, "/api/v1/keys", {"type": "ro", "name": "matrix"}),
    ("GET", "/api/v1/keys/{key_id}"): (MANAGE, "/api/v1/keys/key_unknown", None),
    ("PATCH", "/api/v1/keys/{key_id}"): (MANAGE, "/api/v1/keys/key_unknown", {"name": "x"}),
    ("DELETE", "/api/v1/keys/{key_id}"): (MANAGE, "/api/v1/keys/key_unknown", None),
    ("GET", "/api/v1/exports/contacts.csv"): (BUY, "/api/v1/exports/contacts.csv", None),
    ("GET", "/api/v1/exports/signals.csv"): (BUY, "/api/v1/exports/signals.csv", None),
    # Issue 4: signals. Query, get and batch for every key; purchase is a reveal (Standard or Full).
    ("GET", "/api/v1/signals"): (READ, "/api/v1/signals", None),
    ("POST", "/api/v1/signals/batch"): (READ, "/api/v1/signals/batch", {"queries": [{}]}),
    ("GET", "/api/v1/signals/{signal_id}"): (READ, "/api/v1/signals/sg_unknown", None),
    ("POST", "/api/v1/signals/{signal_id}/purchase"): (BUY, "/api/v1/signals/sg_unknown/purchase", None),
    # D23: Full Access only. A bad filter makes the allowed key's answer a 422 instead of an endless stream.
    ("GET", "/api/v1/signals/stream"): (MANAGE, "/api/v1/signals/stream?industry=not-a-vertical", None),
    # Issue 6: auto-buy rules and purchases, Full Access (D24).
    ("GET", "/api/v1/buyer/auto-buy/rules"): (MANAGE, "/api/v1/buyer/auto-buy/rules", None),
    ("POST", "/api/v1/buyer/auto-buy/rules"): (
        MANAGE,
        "/api/v1/buyer/auto-buy/rules",
        {"industries": ["dental"], "states": ["CO"], "min_confidence": 0.5},
    ),
    ("GET", "/api/v1/buyer/auto-buy/rules/{rule_id}"): (MANAGE, "/api/v1/buyer/auto-buy/rules/abr_unknown", None),
    ("PATCH", "/api/v1/buyer/auto-buy/rules/{rule_id}"): (
        MANAGE,
        "/api/v1/buyer/auto-buy/rules/abr_unknown",
        {"name": "x"},
    ),
    ("DELETE", "/api/v1/buyer/auto-buy/rules/{rule_id}"): (MANAGE, "/api/v1/buyer/auto-buy/rules/abr_unknown", None),
    ("POST", "/api/v1/buyer/auto-buy/rules/{rule_id}/pause"): (
        MANAGE,
        "/api/v1/buyer/auto-buy/rules/abr_unknown/pause",
        None,
    ),
    ("POST", "/api/v1/buyer/auto-buy/rules/{rule_id}/resume"): (
        MANAGE,
        "/api/v1/buyer/auto-buy/rules/abr_unknown/resume",
        None,
    ),
    ("GET", "/api/v1/buyer/auto-buy/purchases"): (MANAGE, "/api/v1/buyer/auto-buy/purchases", None),
    # D32: enrichment with the customer's own provider keys, Full Access.
    ("GET", "/api/v1/enrichment/keys"): (MANAGE, "/api/v1/enrichment/keys", None),
    ("PUT", "/api/v1/enrichment/keys/{provider}"): (MANAGE, "/api/v1/enrichment/keys/hunter", {"api_key": "k-1234"}),
    ("DELETE", "/api/v1/enrichment/keys/{provider}"): (MANAGE, "/api/v1/enrichment/keys/pdl", None),
    ("POST", "/api/v1/contacts/{contact_id}/enrich"): (MANAGE, "/api/v1/contacts/{contact}/enrich", {}),
    ("GET", "/api/v1/contacts/{contact_id}/enrichment"): (MANAGE, "/api/v1/contacts/{contact}/enrichment", None),
    ("POST", "/api/v1/contacts/batch-enrich"): (
        MANAGE,
        "/api/v1/contacts/batch-enrich",
        {"contact_ids": ["{contact}"]},
    ),
    ("GET", "/api/v1/contacts/batch-enrich/{batch_id}"): (MANAGE, "/api/v1/contacts/batch-enrich/ben_unknown", None),
    # D34: outbound sequencing, Full Access.
    ("GET", "/api/v1/mailboxes"): (MANAGE, "/api/v1/mailboxes", None),
    ("POST", "/api/v1/mailboxes"): (MANAGE, "/api/v1/mailboxes", {"email": "x"}),
    ("GET", "/api/v1/mailboxes/{mailbox_id}"): (MANAGE, "/api/v1/mailboxes/mbx_unknown", None),
    ("PATCH", "/api/v1/mailboxes/{mailbox_id}"): (MANAGE, "/api/v1/mailboxes/mbx_unknown", {}),
    ("DELETE", "/api/v1/mailboxes/{mailbox_id}"): (MANAGE, "/api/v1/mailboxes/mbx_unknown", None),
    ("POST", "/api/v1/mailboxes/{mailbox_id}/verify"): (MANAGE, "/api/v1/mailboxes/mbx_unknown/verify", None),
    ("POST", "/api/v1/mailboxes/{mailbox_id}/inbound"): (MANAGE, "/api/v1/mailboxes/mbx_unknown/inbound", None),
    ("GET", "/api/v1/sequences"): (MANAGE, "/api/v1/sequences", None),
    ("POST", "/api/v1/sequences"): (MANAGE, "/api/v1/sequences", {"name": "x"}),
    ("GET", "/api/v1/sequences/{sequence_id}"): (MANAGE, "/api/v1/sequences/seq_unknown", None),
    ("PATCH", "/api/v1/sequences/{sequence_id}"): (MANAGE, "/api/v1/sequences/seq_unknown", {}),
    ("DELETE", "/api/v1/sequences/{sequence_id}"): (MANAGE, "/api/v1/sequences/seq_unknown", None),
    ("POST", "/api/v1/sequences/{sequence_id}/pause"): (MANAGE, "/api/v1/sequences/seq_unknown/pause", None),
    ("POST", "/api/v1/sequences/{sequence_id}/resume"): (MANAGE, "/api/v1/sequences/seq_unknown/resume", None),
    ("GET", "/api/v1/sequences/{sequence_id}/enrollments"): (MANAGE, "/api/v1/sequences/seq_unknown/enrollments", None),
    ("POST", "/api/v1/sequences/{sequence_id}/enrollments"): (
        MANAGE,
        "/api/v1/sequences/seq_unknown/enrollments",
        {"contact_ids": ["{contact}"]},
    ),
    ("DELETE", "/api/v1/enrollments/{enrollment_id}"): (MANAGE, "/api/v1/enrollments/enr_unknown", None),
    # Visitor identification (D33): sites and server-side events need Full Access; reading is for every key.
    ("GET", "/api/v1/visitors/sites"): (MANAGE, "/api/v1/visitors/sites", None),
    ("POST", "/api/v1/visitors/sites"): (MANAGE, "/api/v1/visitors/sites", {"domain": "x"}),
    ("GET", "/api/v1/visitors/sites/{site_id}"): (MANAGE, "/api/v1/visitors/sites/site_unknown", None),
    ("DELETE", "/api/v1/visitors/sites/{site_id}"): (MANAGE, "/api/v1/visitors/sites/site_unknown", None),
    ("POST", "/api/v1/visitors/identify"): (MANAGE, "/api/v1/visitors/identify", {"site_id": "x"}),
    ("GET", "/api/v1/visitors/visits"): (READ, "/api/v1/visitors/visits", None),
    ("GET", "/api/v1/visitors/companies"): (READ, "/api/v1/visitors/companies", None),
}


def _fill(value: Any, contact: str) -> Any:
    if isinstance(value, str):
        return value.replace("{contact}", contact)
    if isinstance(value, dict):
        return {k: _fill(v, contact) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, contact) for v in value]
    return value


# Routes that take no key at all: a person's privacy request (rate-limited by address instead).
PUBLIC = {("POST", "/api/v1/privacy-requests")}


def test_every_route_is_in_the_matrix() -> None:
    from vpx.app import create_app
    from vpx.config import Settings

    app: FastAPI = create_app(Settings(database_url="sqlite+aiosqlite:///:memory:", secret_keys=TEST_SECRET_KEY))
    routes = {
        (method.upper(), path)
        for path, operations in app.openapi()["paths"].items()
        if path.startswith("/api/v1/") and not path.startswith("/api/v1/admin")
        for method in operations
    }
    assert routes - set(ENDPOINTS) - PUBLIC == set(), "routes missing from the permission matrix"
    assert routes >= PUBLIC, "public routes that do not exist"
    assert set(ENDPOINTS) - routes == set(), "matrix entries for routes that do not exist"


@pytest.mark.parametrize("key_type", ["ro", "live", "full"])
@pytest.mark.parametrize("endpoint", sorted(ENDPOINTS), ids=lambda e: f"{e[0]} {e[1]}")
async def test_permission_matrix(
    client: httpx.AsyncClient, factory: Factory, endpoint: tuple[str, str], key_type: str
) -> None:
    capability, path, body = ENDPOINTS[endpoint]
    account = await factory.account(credits=10)
    contact = await factory.contact()
    method = endpoint[0]
    kwargs: dict[str, Any] = {"headers": account.headers(key_type)}
    if body is not None:
        kwargs["json"] = _fill(body, contact)
    response = await client.request(method, _fill(path, contact), **kwargs)
    if key_type in ALLOWED[capability]:
        # Let through by the key's type (a report on a contact the account did not reveal is a 403 of
        # its own, not_revealed: the key was not the reason).
        refused_for_key = response.status_code == 401 or (
            response.status_code == 403 and response.json()["code"] != "not_revealed"
        )
        assert not refused_for_key, response.text
        assert response.status_code < 500
    else:
        assert response.status_code == 403, response.text
        problem = response.json()
        assert problem["code"] == "insufficient_permission"
        needed = "Full Access (vpx_full_)" if capability == MANAGE else "Standard (vpx_live_)"
        assert needed in problem["detail"]


async def test_public_routes_need_no_key(client: httpx.AsyncClient) -> None:
    """A public route judges the request, not a key: an empty body is a 422, never a 401."""
    for method, path in sorted(PUBLIC):
        answer = await client.request(method, path, json={})
        assert answer.status_code == 422, answer.text
