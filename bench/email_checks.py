"""MX checking of a catalogue's emails against the local DNS fake (dnslib on loopback, the visitor
tests' server): 100,000 emails over 5,000 domains by default, checked by the worker's email-check
rounds (vpx.deliverability.service) at a configured pace. Proves that the first pass completes
without ever passing the configured rate and asks each domain once, that a second pass within the
TTL asks nothing, and that a pass after the TTL asks each domain once again. Prints the figures, per
database.

    .venv/bin/python -m bench.email_checks [--emails 100000] [--domains 5000] [--rate 200]
        [--backends sqlite,postgresql]

The domains are a mix: most with MX records, some with a null MX (RFC 7505), some with an address
only (RFC 5321's implicit MX: an A query after the MX one), some that do not exist.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, or_, select
from tests.visitors.dns_server import DnsServer

from bench.common import fresh_database
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.contacts.catalogue import add_contacts, contact_row
from vpx.contacts.search import backend_for
from vpx.db import Database
from vpx.deliverability.service import EmailChecks
from vpx.models import Contact

TTL = 3600
START = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
INSERT_BATCH = 5_000


def domain_kind(n: int) -> str:
    """Every 25th domain has a null MX, every 33rd only an address, every 40th does not exist."""
    if n % 25 == 1:
        return "null_mx"
    if n % 33 == 2:
        return "address_only"
    if n % 40 == 3:
        return "missing"
    return "mx"


def serve_domains(server: DnsServer, domains: int) -> Counter[str]:
    kinds: Counter[str] = Counter()
    for n in range(domains):
        name, kind = f"business{n}.example", domain_kind(n)
        kinds[kind] += 1
        if kind == "mx":
            server.add_mx(name, 10, f"mx.{name}")
        elif kind == "null_mx":
            server.add_mx(name, 0, ".")
        elif kind == "address_only":
            server.add_a(name, "192.0.2.25")
    return kinds


async def load_catalogue(database: Database, emails: int, domains: int) -> float:
    started = time.perf_counter()
    search = backend_for(database.dialect)
    now = START
    for low in range(0, emails, INSERT_BATCH):
        rows = [
            contact_row(
                {
                    "business_name": f"Business {i}",
                    "city": "Denver",
                    "state": "CO",
                    "industry": "home-services",
                    "email": f"{('owner', 'info', 'jane.doe', 'sales')[i % 4]}{i}@business{i % domains}.example",
                },
                origin="demo",
                now=now,
            )
            for i in range(low, min(emails, low + INSERT_BATCH))
        ]
        async with database.write_sessions() as session, session.begin():
            await add_contacts(session, rows, search=search, now=now)
    return time.perf_counter() - started


async def waiting(database: Database) -> int:
    async with database.read_sessions() as session:
        return int(
            await session.scalar(
                select(func.count())
                .select_from(Contact)
                .where(
                    Contact.email.is_not(None),
                    or_(Contact.email_checked_at.is_(None), Contact.email_status == "valid_syntax"),
                )
            )
            or 0
        )


async def statuses(database: Database) -> dict[str, int]:
    async with database.read_sessions() as session:
        rows = await session.execute(select(Contact.email_status, func.count()).group_by(Contact.email_status))
        return {status: int(count) for status, count in rows}


async def one_pass(checks: EmailChecks, server: DnsServer) -> dict[str, Any]:
    """Rounds until one finds nothing to do: the queries they sent, and in how long."""
    asked = len(server.queries)
    started = time.perf_counter()
    rounds = 0
    while await checks.run_round():
        rounds += 1
    elapsed = time.perf_counter() - started
    queries = server.queries[asked:]
    per_domain = Counter(name for name, kind in queries if kind == "MX")
    return {
        "seconds": elapsed,
        "rounds": rounds,
        "queries": len(queries),
        "mx_queries": sum(per_domain.values()),
        "domains_asked": len(per_domain),
        "most_mx_queries_per_domain": max(per_domain.values(), default=0),
    }


def report(name: str, figures: dict[str, Any], rate: float) -> None:
    seconds, queries = figures["seconds"], figures["queries"]
    achieved = (queries - 1) / seconds if queries > 1 and seconds > 0 else 0.0
    # The pace spaces queries 1/rate apart: n queries need at least (n - 1) / rate seconds.
    floor = (queries - 1) / rate if queries > 1 else 0.0
    within = "yes" if seconds >= floor * 0.999 else "NO"
    print(
        f"  {name}: {seconds:.1f} s, {figures['rounds']} rounds, {queries:,} DNS queries "
        f"({figures['mx_queries']:,} MX over {figures['domains_asked']:,} domains, at most "
        f"{figures['most_mx_queries_per_domain']} per domain); {achieved:.1f} queries/s against {rate:g} "
        f"configured (at least {floor:.1f} s needed: within the rate: {within})"
    )


async def measure(url: str, server: DnsServer, *, emails: int, domains: int, rate: float) -> None:
    settings = Settings(
        database_url=url,
        dns_servers=f"{server.host}:{server.port}",
        dns_timeout_seconds=2.0,
        mx_lookups_per_second=rate,
        mx_cache_min_seconds=60,
        mx_cache_max_seconds=TTL,
        log_level="WARNING",
        worker_in_process=False,
    )
    database = Database(settings)
    clock = FixedClock(START)
    try:
        loaded = await load_catalogue(database, emails, domains)
        print(f"{database.dialect}: {emails:,} emails over {domains:,} domains loaded in {loaded:.1f} s")
        checks = EmailChecks.from_settings(database, settings, clock=clock)
        server.queries.clear()

        first = await one_pass(checks, server)
        report("first pass", first, rate)
        left = await waiting(database)
        found = await statuses(database)
        print(f"  statuses: {dict(sorted(found.items()))}; emails still waiting: {left}")
        print(f"  contacts per second: {emails / first['seconds']:,.0f}")

        within_ttl = await one_pass(checks, server)
        report("again within the TTL", within_ttl, rate)

        clock.set(START + timedelta(seconds=TTL + 1))
        after_ttl = await one_pass(checks, server)
        report(f"after the TTL ({TTL} s)", after_ttl, rate)
        ok = (
            left == 0
            and first["domains_asked"] == domains
            and first["most_mx_queries_per_domain"] == 1
            and within_ttl["queries"] == 0
            and after_ttl["domains_asked"] == domains
            and after_ttl["most_mx_queries_per_domain"] == 1
        )
        print(f"  each domain asked once per TTL, every email checked: {'yes' if ok else 'NO'}")
    finally:
        await database.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--emails", type=int, default=100_000)
    parser.add_argument("--domains", type=int, default=5_000)
    parser.add_argument("--rate", type=float, default=200.0, help="VPX_MX_LOOKUPS_PER_SECOND")
    parser.add_argument("--backends", default="sqlite,postgresql")
    args = parser.parse_args()
    with DnsServer(ttl=TTL) as server:
        kinds = serve_domains(server, args.domains)
        print(f"DNS fake on {server.host}:{server.port}: {dict(sorted(kinds.items()))}, TTL {TTL} s")
        for backend in args.backends.split(","):
            url = fresh_database(backend, "vpx_bench_email_checks")
            asyncio.run(measure(url, server, emails=args.emails, domains=args.domains, rate=args.rate))


if __name__ == "__main__":
    main()
