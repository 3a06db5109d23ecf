"""schemathesis against the app's own OpenAPI document: no 5xx, and every response (status, headers,
body) conforms to the document.

It runs on a SQLite database of its own (or on PostgreSQL with VPX_SCHEMATHESIS_DATABASE_URL), seeded
with a small catalogue and an account whose Full Access key every generated request carries.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis import checks

from tests.conftest import migrate, test_settings, wipe
from tests.factories import Factory
from tests.sequences.mail_samples import dsn_failed, garbage, message_id, outbound, plain_reply, rfc3834_auto_reply
from vpx.app import create_app
from vpx.clock import Clock

_DIR = Path(tempfile.mkdtemp(prefix="vpx-schemathesis-"))
DATABASE_URL = os.environ.get("VPX_SCHEMATHESIS_DATABASE_URL", f"sqlite+aiosqlite:///{_DIR / 'vpx.db'}")
migrate(DATABASE_URL)
# A signal stream ends after its lifetime (D23): a short one, so that each generated stream request ends.
APP = create_app(test_settings(DATABASE_URL, pool_size=0, stream_max_seconds=0.2), clock=Clock())


async def _seed() -> str:
    await wipe(APP.state.database)
    factory = Factory(APP, APP.state.clock)
    await factory.demo(200)
    account = await factory.account(credits=100_000, key_types=("full",))
    return account.keys["full"]


KEY = asyncio.run(_seed())
schema = schemathesis.openapi.from_asgi("/api/v1/openapi.json", APP)
# An inbound email is raw RFC 5322 bytes: real replies and bounces, and arbitrary bytes besides.
schemathesis.openapi.media_type(
    "message/rfc822",
    st.one_of(
        st.sampled_from(
            [
                plain_reply(message_id("a1")),
                rfc3834_auto_reply(message_id("c3")),
                dsn_failed(outbound(message_id("b2"))),
                *garbage(),
            ]
        ),
        st.binary(max_size=512),
    ),
)


@schema.auth()
class ApiKeyAuth:
    """Every generated request carries the Full Access key (the X-API-Key security scheme)."""

    def get(self, case: schemathesis.Case, context: schemathesis.AuthContext) -> str:
        return KEY

    def set(self, case: schemathesis.Case, data: str, context: schemathesis.AuthContext) -> None:
        case.headers = {**(case.headers or {}), "X-API-Key": data}


# Operations whose schema-valid inputs can still be refused on their meaning: an opaque cursor this
# service never issued, or a webhook URL that does not resolve to a public address (D26's SSRF guard),
# is a 422 (D2). The positive-data check does not apply to them.
OPAQUE_INPUTS = {
    "/api/v1/account/ledger",
    "/api/v1/publisher/contributions",
    "/api/v1/contacts/batch-reveal",
    "/api/v1/contacts/batch-enrich",
    # Mail hosts must resolve to public addresses (D26's guard); a sequence names a mailbox of the
    # account and an IANA time zone: schema-valid text, refused on its meaning.
    "/api/v1/mailboxes",
    "/api/v1/mailboxes/{mailbox_id}",
    # An inbound email may be any bytes to the document; an empty one is refused (no email to read).
    "/api/v1/mailboxes/{mailbox_id}/inbound",
    "/api/v1/sequences",
    "/api/v1/sequences/{sequence_id}",
    "/api/v1/webhooks",
    "/api/v1/webhooks/{webhook_id}",
    "/api/v1/webhooks/{webhook_id}/deliveries",
    "/api/v1/signals",
    "/api/v1/buyer/auto-buy/purchases",
    "/api/v1/buyer/auto-buy/rules",
    "/api/v1/keys",
    "/api/v1/suppressions/feed",
    "/api/v1/visitors/visits",
    "/api/v1/visitors/sites",
    # A postal_code is five digits to the document, and refused when no US ZIP code in use has them.
    "/api/v1/contacts/search",
    # A privacy request is checked against the catalogue by an email, a phone or an NPI: one of the
    # optional fields must be there.
    "/api/v1/privacy-requests",
}
# D17 validates contributed rows one by one: a bad row is `rejected` in a 200 answer while the others
# go in, so a request with schema-violating rows is (rightly) not refused as a whole.
PER_ROW_VALIDATION = {"/api/v1/contacts/contribute"}


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_document(case: schemathesis.Case) -> None:
    excluded = [checks.positive_data_acceptance] if case.operation.path in OPAQUE_INPUTS else []
    if case.operation.path in PER_ROW_VALIDATION:
        excluded.append(checks.negative_data_rejection)
    case.call_and_validate(excluded_checks=excluded)
