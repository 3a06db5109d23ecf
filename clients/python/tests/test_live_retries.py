"""A real 429 from a live `vpx serve` allowing 2 requests a second per key: the client waits as the
server says (Retry-After) and every call succeeds; a spending call sent without an idempotency key
is not retried."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import vpx_client
from client_support import LiveServer, Seed, live_server
from vpx_client import Client


@pytest.fixture(scope="module")
def limited(seed: Seed) -> Iterator[LiveServer]:
    with live_server(seed, RATE_LIMIT="2/second") as running:
        yield running


def test_a_real_429_is_waited_out_as_the_server_says(limited: LiveServer) -> None:
    client = Client(limited.seed.keys["ro"], base_url=limited.url, max_retries=5)

    results = [client.account.get() for _ in range(6)]

    assert all(r.meta.status_code == 200 for r in results)
    retried = [record for r in results for record in r.meta.retries]
    # Six calls at two a second cannot all pass at once: some were refused, and waited for.
    assert retried, "no call was rate limited"
    for record in retried:
        assert record.reason == "429"
        assert record.retry_after is not None and record.retry_after >= 1
        assert record.delay_seconds >= record.retry_after
    assert results[-1].meta.rate_limit is not None and results[-1].meta.rate_limit.limit == 2
    assert client.rate_limit is not None and client.rate_limit.window_seconds == 1


def test_a_spending_call_without_its_key_gets_the_429(limited: LiveServer) -> None:
    client = Client(limited.seed.keys["live"], base_url=limited.url)
    contact_id = client.contacts.search(limit=1).contacts[0].id

    refused = None
    for _ in range(10):
        try:
            client.request("POST", "/contacts/reveal", json={"contact_id": contact_id}, idempotency_key=None)
        except vpx_client.RateLimited as exc:
            refused = exc
            break

    assert refused is not None, "ten quick calls at two a second were never refused"
    assert refused.meta.retries == () and refused.retry_after is not None and refused.retry_after >= 1
    assert refused.code == "rate_limited" and refused.request_id
