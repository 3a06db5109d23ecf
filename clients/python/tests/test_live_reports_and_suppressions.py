"""The blocking client on a live `vpx serve`: a revealed contact reported, an unrevealed one refused
with `NotRevealed`, the suppressions feed walked after `vpx suppress add`, the `email_status` filter.

The server has a demo database of its own: suppressing demo contacts must not refuse the reveals
of the other live tests, which share theirs."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from decimal import Decimal

import pytest

import vpx_client
from client_support import VPX, LiveServer, data_dir, live_server, seed_demo, server_env
from vpx_client import Client
from vpx_client.models import ContactPreview


@pytest.fixture(scope="module")
def own_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    seed = seed_demo(tmp_path_factory.mktemp("suppressions") / "vpx.db")
    with live_server(seed) as running:
        yield running


def suppress(server: LiveServer, contact_id: str) -> None:
    """`vpx suppress add` on the server's database, as an operator would."""
    env = server_env(server.seed.database_url, DATA_DIR=str(data_dir(server.seed)))
    done = subprocess.run(
        [VPX, "suppress", "add", "--contact", contact_id, "--reason", "do_not_contact", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)


def test_report_then_the_feed_after_suppressions(own_server: LiveServer) -> None:
    with Client(own_server.seed.keys["live"], base_url=own_server.url) as client:
        found = client.contacts.search("dental", limit=20).contacts
        unrevealed = [c.id for c in found if isinstance(client.contacts.get(c.id), ContactPreview)]
        assert len(unrevealed) >= 4, "the demo account had revealed most of the first dental contacts"
        bought = unrevealed[:3]
        for contact_id in bought:
            client.contacts.reveal(contact_id)

        report = client.contacts.report(bought[0], "website", "closed_business", note="Shut since March")
        with pytest.raises(vpx_client.NotRevealed) as refused:
            client.contacts.report(unrevealed[3], "phone", "wrong")

        before = [item.contact_id for item in client.suppressions.iterate_feed()]
        for contact_id in bought:
            suppress(own_server, contact_id)
        first = client.suppressions.feed(limit=2)
        walked = list(client.suppressions.iterate_feed(page_size=2))

    assert report.contact_id == bought[0] and report.status == "open" and report.id.startswith("rpt_")
    assert report.credits_refunded == Decimal(0) and report.note == "Shut since March"
    assert refused.value.status == 403 and refused.value.code == "not_revealed"
    assert not set(bought) & set(before)
    # Newest first; the walk follows the cursor across pages of two.
    assert len(first.suppressions) == 2 and first.next_cursor is not None
    assert [item.contact_id for item in walked][:3] == list(reversed(bought))
    assert all(item.reason == "do_not_contact" for item in walked[:3])


def test_search_takes_the_email_status_filter(own_server: LiveServer) -> None:
    with Client(own_server.seed.keys["ro"], base_url=own_server.url) as client:
        page = client.contacts.search("dental", email_status="unknown", limit=10)
        with pytest.raises(vpx_client.ValidationFailed) as refused:
            client.contacts.search("dental", email_status="deliverable")

    assert page.meta.status_code == 200
    assert all(contact.has_email for contact in page.contacts)  # a contact without an email has no status
    assert list(refused.value.fields) == ["email_status"]
