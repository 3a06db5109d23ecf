"""The worker's email checks on both databases, against the local DNS fake: each status, one look-up
per domain for its TTL (within the operator's bounds), timeouts, changed emails, two workers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import func, or_, select, update

from tests.conftest import test_settings
from tests.factories import Factory
from tests.visitors.dns_server import DnsServer
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.deliverability.service import EmailChecks
from vpx.models import Contact, EmailDomain
from vpx.worker.loop import Worker


@pytest.fixture
def settings(database_url: str, dns_server: DnsServer) -> Settings:
    return test_settings(
        database_url,
        dns_servers=f"{dns_server.host}:{dns_server.port}",
        dns_timeout_seconds=0.4,
        mx_lookups_per_second=500,
        mx_cache_min_seconds=60,
        mx_cache_max_seconds=3600,
        mx_retry_seconds=120,
        worker_in_process=False,
    )


def number(public_id: str) -> int:
    return int(public_id.removeprefix("ct_"))


async def email_of(app: FastAPI, public_id: str) -> dict[str, Any]:
    async with app.state.database.read_sessions() as session:
        contact = await session.get(Contact, number(public_id))
        assert contact is not None
        return {
            "status": contact.email_status,
            "flags": contact.email_flags,
            "checked_at": contact.email_checked_at,
            "domain": contact.email_domain,
        }


async def domain_row(app: FastAPI, domain: str) -> EmailDomain:
    async with app.state.database.read_sessions() as session:
        row: EmailDomain | None = await session.get(EmailDomain, domain)
        assert row is not None
        return row


async def settled(app: FastAPI) -> bool:
    """No email waits for a check or for its domain's look-up."""
    async with app.state.database.read_sessions() as session:
        waiting = await session.scalar(
            select(func.count())
            .select_from(Contact)
            .where(
                Contact.email.is_not(None),
                or_(Contact.email_checked_at.is_(None), Contact.email_status == "valid_syntax"),
            )
        )
    return bool(waiting == 0)


async def run_worker_until(app: FastAPI, clock: FixedClock, done: Callable[[], Awaitable[bool]]) -> Worker:
    """Runs a real worker (all its loops) until ``done``, then stops it."""
    worker = Worker(app.state.database, app.state.settings, clock=clock)
    task = asyncio.create_task(worker.run())
    try:
        deadline = time.monotonic() + 20
        while not await done():
            assert time.monotonic() < deadline, "the worker did not finish its checks in time"
            assert not task.done(), "the worker stopped"
            await asyncio.sleep(0.05)
    finally:
        worker.stop()
        await asyncio.wait_for(task, timeout=15)
    return worker


async def rounds(checks: EmailChecks) -> int:
    """Rounds until one finds nothing to do; how many addresses and domains they checked."""
    total = 0
    while done := await checks.run_round():
        total += done
    return total


def checks_of(app: FastAPI, clock: FixedClock) -> EmailChecks:
    return EmailChecks.from_settings(app.state.database, app.state.settings, clock=clock)


async def test_the_worker_gives_each_email_its_status_and_flags(
    app: FastAPI, factory: Factory, dns_server: DnsServer, clock: FixedClock
) -> None:
    dns_server.add_mx("withmx.example", 10, "mx.withmx.example")
    dns_server.add_mx("parked.example", 0, ".")  # RFC 7505's null MX
    dns_server.add_a("webonly.example", "192.0.2.80")  # no MX: its own address takes mail
    dns_server.add_txt("nothing.example", "v=spf1 -all")  # exists, but neither MX nor address
    ids = {
        email: await factory.contact(email=email, phone=None, business_name=f"Business {i}")
        for i, email in enumerate(
            [
                "owner@withmx.example",
                "info@parked.example",
                "sales@gone.example",  # NXDOMAIN
                "jane@webonly.example",
                "jane@nothing.example",
                "two@@withmx.example",
                "temp@mailinator.com",
            ]
        )
    }
    without = await factory.contact(email=None, phone=None, business_name="No Email Co")

    await run_worker_until(app, clock, lambda: settled(app))

    found = {email: await email_of(app, public_id) for email, public_id in ids.items()}
    assert {email: (f["status"], f["flags"]) for email, f in found.items()} == {
        "owner@withmx.example": ("mx_found", None),
        "info@parked.example": ("no_mx", "role"),
        "sales@gone.example": ("no_mx", "role"),
        "jane@webonly.example": ("mx_found", None),
        "jane@nothing.example": ("no_mx", None),
        "two@@withmx.example": ("invalid_syntax", None),
        "temp@mailinator.com": ("no_mx", "disposable"),
    }
    assert all(f["checked_at"] == clock.now() for f in found.values())
    assert await email_of(app, without) == {"status": "unknown", "flags": None, "checked_at": None, "domain": None}
    # Nothing but the DNS was asked, and each domain once.
    asked = [name for name, kind in dns_server.queries if kind == "MX"]
    assert sorted(asked) == sorted(set(asked))


async def test_one_look_up_answers_every_contact_of_a_domain_until_its_ttl_runs_out(
    app: FastAPI, factory: Factory, dns_server: DnsServer, clock: FixedClock
) -> None:
    dns_server.add_mx("acme.example", 10, "mx.acme.example")
    dns_server.set_ttl("acme.example", 300)
    dns_server.add_mx("other.example", 10, "mx.other.example")
    dns_server.set_ttl("other.example", 120)
    ids = await factory.contacts(
        [{**_fields(i), "email": f"person{i}@acme.example"} for i in range(30)]
        + [{**_fields(100 + i), "email": f"person{i}@Other.Example"} for i in range(20)]
    )
    checks = checks_of(app, clock)
    assert await rounds(checks) == 50 + 2
    assert sorted(dns_server.queries) == [("acme.example", "MX"), ("other.example", "MX")]
    assert {(await email_of(app, i))["status"] for i in ids} == {"mx_found"}
    started = clock.now()
    assert (await domain_row(app, "acme.example")).expires_at == started + timedelta(seconds=300)
    assert (await domain_row(app, "other.example")).expires_at == started + timedelta(seconds=120)

    # A new contact of a known domain takes its answer without a look-up.
    late = await factory.contact(email="late@acme.example", phone=None, business_name="Late Co")
    assert await rounds(checks) == 1
    assert (await email_of(app, late))["status"] == "mx_found" and len(dns_server.queries) == 2

    # Past other.example's TTL (not acme's): asked again, once, and its contacts' check time moves.
    clock.set(started + timedelta(seconds=121))
    assert await rounds(checks) == 1
    assert dns_server.queries[2:] == [("other.example", "MX")]
    assert (await email_of(app, ids[-1]))["checked_at"] == clock.now()  # other.example
    assert (await email_of(app, ids[0]))["checked_at"] == started  # acme.example
    assert checks.lookups is not None and checks.lookups.queries == 3


async def test_a_records_ttl_is_kept_within_the_operators_bounds(
    app: FastAPI, factory: Factory, dns_server: DnsServer, clock: FixedClock
) -> None:
    for domain, ttl in (("brief.example", 5), ("long.example", 10 * 86_400)):
        dns_server.add_mx(domain, 10, f"mx.{domain}")
        dns_server.set_ttl(domain, ttl)
    await factory.contacts([{**_fields(1), "email": "a@brief.example"}, {**_fields(2), "email": "a@long.example"}])
    await rounds(checks_of(app, clock))
    assert (await domain_row(app, "brief.example")).expires_at == clock.now() + timedelta(seconds=60)
    assert (await domain_row(app, "long.example")).expires_at == clock.now() + timedelta(seconds=3600)
    # A negative answer carries no record: kept for the lower bound.
    await factory.contact(email="a@gone.example", phone=None)
    await rounds(checks_of(app, clock))
    gone = await domain_row(app, "gone.example")
    assert gone.status == "no_mx" and gone.expires_at == clock.now() + timedelta(seconds=60)


async def test_a_look_up_that_times_out_is_unknown_and_tried_again_later(
    app: FastAPI, factory: Factory, dns_server: DnsServer, clock: FixedClock
) -> None:
    dns_server.add_mx("slow.example", 10, "mx.slow.example")
    contact_id = await factory.contact(email="owner@slow.example", phone=None)
    dns_server.delay(1.5)
    checks = checks_of(app, clock)
    await rounds(checks)
    assert (await email_of(app, contact_id))["status"] == "unknown"
    assert (await email_of(app, contact_id))["checked_at"] == clock.now()
    assert (await domain_row(app, "slow.example")).expires_at == clock.now() + timedelta(seconds=120)

    dns_server.delay(0)
    assert await rounds(checks) == 0  # not before the retry time
    clock.set(clock.now() + timedelta(seconds=121))
    await rounds(checks)
    assert (await email_of(app, contact_id))["status"] == "mx_found"


async def test_a_failed_re_check_keeps_the_last_answer(
    app: FastAPI, factory: Factory, dns_server: DnsServer, clock: FixedClock
) -> None:
    dns_server.add_mx("acme.example", 10, "mx.acme.example")
    contact_id = await factory.contact(email="owner@acme.example", phone=None)
    checks = checks_of(app, clock)
    await rounds(checks)
    answered_at = clock.now()
    clock.set(answered_at + timedelta(seconds=301))
    dns_server.refuse()
    await rounds(checks)
    assert await email_of(app, contact_id) == {
        "status": "mx_found",
        "flags": None,
        "checked_at": answered_at,
        "domain": "acme.example",
    }
    row = await domain_row(app, "acme.example")
    assert row.checked_at == answered_at and row.expires_at == clock.now() + timedelta(seconds=120)


async def test_a_changed_email_is_checked_again(
    app: FastAPI, factory: Factory, dns_server: DnsServer, clock: FixedClock
) -> None:
    dns_server.add_mx("acme.example", 10, "mx.acme.example")
    contact_id = await factory.contact(email="owner@acme.example", phone=None)
    checks = checks_of(app, clock)
    await rounds(checks)
    assert (await email_of(app, contact_id))["status"] == "mx_found"
    async with app.state.database.write_sessions() as session, session.begin():
        await session.execute(
            update(Contact).where(Contact.id == number(contact_id)).values(email="info@elsewhere.example")
        )
    assert await email_of(app, contact_id) == {"status": "unknown", "flags": None, "checked_at": None, "domain": None}
    await rounds(checks)
    assert (await email_of(app, contact_id))["status"] == "no_mx"
    assert (await email_of(app, contact_id))["flags"] == "role"


async def test_two_workers_never_ask_for_the_same_domain_at_once(
    app: FastAPI, factory: Factory, dns_server: DnsServer, clock: FixedClock
) -> None:
    for i in range(40):
        dns_server.add_mx(f"d{i}.example", 10, f"mx.d{i}.example")
    await factory.contacts([{**_fields(i), "email": f"owner@d{i % 40}.example"} for i in range(120)])
    first, second = checks_of(app, clock), checks_of(app, clock)
    await checks_of(app, clock).run_round()  # the addresses: every contact now waits for its domain
    while sum(await asyncio.gather(first.run_round(), second.run_round())):
        pass
    assert len(dns_server.queries) == 40 and len(set(dns_server.queries)) == 40
    assert await settled(app)


async def test_without_look_ups_emails_are_checked_for_syntax_only(
    app: FastAPI, factory: Factory, dns_server: DnsServer, clock: FixedClock, database_url: str
) -> None:
    dns_server.add_mx("acme.example", 10, "mx.acme.example")
    contact_id = await factory.contact(email="owner@acme.example", phone=None)
    settings = test_settings(database_url, mx_lookups_per_second=0)
    checks = EmailChecks.from_settings(app.state.database, settings, clock=clock)
    assert await rounds(checks) == 1
    assert (await email_of(app, contact_id))["status"] == "valid_syntax"
    assert dns_server.queries == []


def _fields(i: int) -> dict[str, Any]:
    return {
        "business_name": f"Business {i}",
        "city": "Denver",
        "state": "CO",
        "industry": "home-services",
        "phone": None,
    }
