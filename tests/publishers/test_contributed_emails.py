"""D17 and the email checks: a contributed email's domain is asked of the DNS only once its row is
accepted, by the worker, never during the request; duplicate and rejected rows, and a request refused
by the daily budget, make no look-up at all, so the domains an account can have the worker ask in a
day are bounded by its budget."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from fastapi import FastAPI

from tests.conftest import test_settings
from tests.factories import Factory
from tests.publishers.test_contribute import URL, row
from tests.visitors.dns_server import DnsServer
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.deliverability.service import EmailChecks

BUDGET = 6


@pytest.fixture
def dns_server() -> Iterator[DnsServer]:
    with DnsServer() as server:
        yield server


@pytest.fixture
def settings(database_url: str, dns_server: DnsServer) -> Settings:
    return test_settings(
        database_url,
        dns_servers=f"{dns_server.host}:{dns_server.port}",
        dns_timeout_seconds=0.4,
        mx_lookups_per_second=500,
        worker_in_process=False,
        contribution_rows_per_day=BUDGET,
    )


async def look_ups(app: FastAPI, clock: FixedClock, dns_server: DnsServer) -> set[str]:
    """Runs the worker's email checks until they find nothing to do; the domains asked."""
    checks = EmailChecks.from_settings(app.state.database, app.state.settings, clock=clock)
    while await checks.run_round():
        pass
    return {name for name, kind in dns_server.queries if kind == "MX"}


async def test_only_accepted_rows_have_their_email_domain_looked_up(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, clock: FixedClock, dns_server: DnsServer
) -> None:
    account = await factory.account()
    await factory.contact(business_name="Known Co", phone="+13035550300", email=None)
    rows = [
        row(business_name="New Co", phone="+13035550301", email="a@accepted.test"),
        row(business_name="Other Name", phone="+13035550300", email="b@duplicate-of-contact.test"),
        row(business_name="Bad State", phone="+13035550302", state="ZZ", email="c@rejected.test"),
        row(business_name="New Co", phone="+13035550301", email="d@duplicate-of-row.test"),
    ]
    response = await client.post(URL, json={"contacts": rows}, headers=account.headers())
    assert [r["status"] for r in response.json()["results"]] == ["accepted", "duplicate", "rejected", "duplicate"]
    assert dns_server.queries == []  # nothing asked while the request ran
    assert await look_ups(app, clock, dns_server) == {"accepted.test"}


async def test_a_request_refused_by_the_budget_makes_no_look_up(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, clock: FixedClock, dns_server: DnsServer
) -> None:
    account = await factory.account()
    first = [row(business_name=f"Shop {n}", phone=f"+1303555031{n}", email=f"x@shop{n}.test") for n in range(BUDGET)]
    assert (await client.post(URL, json={"contacts": first}, headers=account.headers())).status_code == 200
    assert await look_ups(app, clock, dns_server) == {f"shop{n}.test" for n in range(BUDGET)}
    more = [row(business_name="Late Shop", phone="+13035550329", email="x@late.test")]
    assert (await client.post(URL, json={"contacts": more}, headers=account.headers())).status_code == 429
    assert "late.test" not in await look_ups(app, clock, dns_server)
