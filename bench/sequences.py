"""Outbound sequencing (D34) on SQLite (default) or PostgreSQL, a fresh database each run:

    .venv/bin/python -m bench.sequences [--database sqlite|postgresql] [--sends 3000]
        [--sizes 10000 100000 1000000] [--sequences 2000] [--ticks 40]

1. Sending. --sends revealed contacts enrolled (through the API, in-process) in a one-step sequence of
   one mailbox with no spacing (send_interval_seconds 0, daily_limit 10,000), 5 % of their addresses
   put on the global suppression list (D15) after enrollment, so that the check at send time stops
   them; then one worker's sequence lane (vpx.sequences.sending.run_due_sends, round after round, as
   `vpx worker` runs it) until nothing is due: sends per minute, with every scheduling, suppression
   and bookkeeping step, to a local SMTP sink (aiosmtpd in a process of its own, so that it takes no
   GIL from vpx). Goal: >= 1,200 sends/min. The same again in a second sequence with a connection
   opened for each message (the first version's way) as the baseline.
2. The scheduler. --sequences running sequences, each of its own mailbox, with enrollments added in
   stages up to each of --sizes (bulk inserts): 70 % waiting for a later step, 20 % ended, 10 % due
   now. 95 % of the mailboxes are held by their daily cap or spacing (their due steps wait); the
   other 5 % may send, and each of their sequences has 10 enrollments due (the same 1,000 at every
   size). At each size: the look-up of due steps alone (vpx.sequences.sending.find_due, BATCH
   steps, read-only, --ticks times), a whole claiming tick (claim_due: look-up, caps, 200 message
   rows written and committed; the claimed state put back after each, untimed), and an idle tick
   (every mailbox held: nothing may go). Goal: finding the due steps <= 20 ms a tick, flat as the
   table grows; a claiming tick adds the writes of what it claims.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import httpx
from cryptography.fernet import Fernet
from sqlalchemy import delete, func, insert, select, text, update

from bench.common import fresh_database, percentile
from vpx.accounts import service as account_service
from vpx.app import create_app
from vpx.auth import service as key_service
from vpx.auth.keys import KeyType
from vpx.clock import Clock
from vpx.config import Settings
from vpx.contacts.catalogue import add_contacts, contact_row
from vpx.credits import service as credit_service
from vpx.db import Database
from vpx.demo.generator import demo_contacts
from vpx.models import Enrollment, Mailbox, Sequence, SequenceMessage, SequenceVersion
from vpx.secrets import SecretBox
from vpx.sequences import sending
from vpx.suppression.service import SuppressionKind, SuppressionReason, add_suppression

DB_NAME = "vpx_bench_sequences"
GOAL_SENDS_PER_MINUTE = 1200
GOAL_TICK_MS = 20.0
STEP = {"type": "email", "subject": "Hello {{ contact.business_name }}", "body": "Hi from {{ mailbox.from_name }}."}


# --- The SMTP sink (a process of its own) ---


def sink_main() -> None:
    """Accepts every message on a free loopback port; prints the port, then on SIGTERM the count."""
    from aiosmtpd.smtp import SMTP, Envelope, Session

    received = 0

    class Handler:
        async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
            nonlocal received
            received += 1
            return "250 2.0.0 Ok: queued"

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(lambda: SMTP(Handler(), hostname="sink.example"), "127.0.0.1", 0)
        print(server.sockets[0].getsockname()[1], flush=True)
        stop = asyncio.Event()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        await stop.wait()
        server.close()
        print(received, flush=True)

    asyncio.run(serve())


class Sink:
    def __enter__(self) -> Sink:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bench.sequences", "--sink"], stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        self.port = int(self.process.stdout.readline())
        return self

    def received(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        out, _ = self.process.communicate(timeout=30)
        return int(out.strip().splitlines()[-1])

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.process.kill()


# --- Part 1: sending ---


async def set_up_account(app: Any, contacts: int) -> tuple[dict[str, str], dict[str, str], list[str], str]:
    """A funded account with live and Full Access keys, and the catalogue's contact ids."""
    database, settings, now = app.state.database, app.state.settings, datetime.now(UTC)
    rows = [contact_row(f, origin="demo", now=now) for f in demo_contacts(contacts, seed=11)]
    async with database.write_sessions() as session, session.begin():
        ids = await add_contacts(session, rows, search=app.state.search, now=now)
        account = await account_service.create_account(
            session, name="bench", email=None, plan="free", now=now, settings=settings
        )
        await credit_service.add_credits(
            session,
            account_id=account.id,
            amount=Decimal(10_000_000),
            kind="grant",
            reference=None,
            description="bench",
            now=now,
            settings=settings,
        )
        keys = {}
        for key_type in (KeyType.live, KeyType.full):
            _, keys[key_type.value] = await key_service.create_key(
                session,
                account_id=account.id,
                key_type=key_type,
                name="bench",
                ip_allowlist=[],
                now=now,
                settings=settings,
            )
    return {"X-API-Key": keys["live"]}, {"X-API-Key": keys["full"]}, [f"ct_{i}" for i in ids], account.id


async def check(response: Awaitable[httpx.Response], status: int = 200) -> dict[str, Any]:
    answer = await response
    assert answer.status_code == status, answer.text
    body: dict[str, Any] = answer.json()
    return body


async def drain(one_round: Callable[[], Awaitable[int]]) -> tuple[float, int]:
    """Rounds until one finds nothing to do: wall seconds and rounds."""
    started, rounds = time.perf_counter(), 0
    while await one_round():
        rounds += 1
    return time.perf_counter() - started, rounds


async def sending_part(backend: str, url: str, sends: int) -> dict[str, Any]:
    settings = Settings(
        database_url=url,
        log_level="WARNING",
        rate_limit="1000000/minute",
        worker_in_process=False,
        mailbox_allow_private=True,
        secret_keys=Fernet.generate_key().decode(),
    )
    app = create_app(settings, clock=Clock())
    database: Database = app.state.database
    box: SecretBox = app.state.secrets
    results: dict[str, Any] = {}
    with Sink() as sink:
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://bench") as client,
        ):
            live, full, ids, _ = await set_up_account(app, sends)
            for n in range(0, len(ids), 100):
                await check(
                    client.post("/api/v1/contacts/batch-reveal", json={"contact_ids": ids[n : n + 100]}, headers=live)
                )
            mailbox = await check(
                client.post(
                    "/api/v1/mailboxes",
                    headers=full,
                    json={
                        "email": "sam@seller.example",
                        "from_name": "Sam Seller",
                        "smtp_host": "127.0.0.1",
                        "smtp_port": sink.port,
                        "smtp_security": "none",
                        "daily_limit": 10_000,
                        "send_interval_seconds": 0,
                        "postal_address": "Seller Inc, 1 Main St, Denver CO 80202",
                    },
                ),
                201,
            )
            for label, reuse in (
                ("one connection per mailbox and round", True),
                ("baseline: a connection per message", False),
            ):
                created = await check(
                    client.post(
                        "/api/v1/sequences",
                        headers=full,
                        json={"name": label, "mailbox_id": mailbox["id"], "steps": [STEP]},
                    ),
                    201,
                )
                enrolled: list[str] = []
                for n in range(0, len(ids), 100):
                    answer = await check(
                        client.post(
                            f"/api/v1/sequences/{created['id']}/enrollments",
                            json={"contact_ids": ids[n : n + 100]},
                            headers=full,
                        )
                    )
                    enrolled += [r["contact_id"] for r in answer["results"] if r["status"] == "enrolled"]
                # 5 % suppressed after enrollment: the check at send time stops them.
                async with database.write_sessions() as session, session.begin():
                    emails = list(
                        await session.scalars(
                            select(Enrollment.email)
                            .where(Enrollment.sequence_id == created["id"])
                            .order_by(Enrollment.id)
                        )
                    )
                    for email in emails[::20]:
                        await add_suppression(
                            session,
                            kind=SuppressionKind.email,
                            value=email,
                            reason=SuppressionReason.opt_out,
                            note="bench",
                            now=datetime.now(UTC),
                        )

                async def one_round(reuse: bool = reuse) -> int:
                    if reuse:
                        return await sending.run_due_sends(database, box=box, settings=settings, clock=app.state.clock)
                    claimed = await sending.claim_due(database, now=datetime.now(UTC), lease=timedelta(seconds=60))
                    for item in claimed:
                        await sending.send_claimed(database, item, box=box, settings=settings, clock=app.state.clock)
                    return len(claimed)

                cpu = time.process_time()
                wall, rounds = await drain(one_round)
                cpu = time.process_time() - cpu
                async with database.read_sessions() as session:
                    counts = dict(
                        (
                            await session.execute(
                                select(SequenceMessage.status, func.count())
                                .join(Enrollment, Enrollment.id == SequenceMessage.enrollment_id)
                                .where(Enrollment.sequence_id == created["id"])
                                .group_by(SequenceMessage.status)
                            )
                        ).all()
                    )
                results[label] = {
                    "enrolled": len(enrolled),
                    "sent": counts.get("sent", 0),
                    "stopped": counts.get("stopped", 0),
                    "wall": wall,
                    "rounds": rounds,
                    "cpu_ms_per_send": 1000 * cpu / max(1, counts.get("sent", 0)),
                }
        results["sink_received"] = sink.received()
    await database.dispose()
    return results


# --- Part 2: the scheduler ---


class Catalogue:
    """Bulk rows for the scheduler's tables: --sequences mailboxes and sequences of one account."""

    def __init__(self, database: Database, account_id: str, contact_ids: list[int], sequences: int) -> None:
        self.database, self.account_id, self.contact_ids = database, account_id, contact_ids
        self.count = sequences
        self.sequence_ids = [f"seq_bench{n:06d}" for n in range(sequences)]
        self.mailbox_ids = [f"mbx_bench{n:06d}" for n in range(sequences)]
        self.ready = set(range(0, sequences, 20))  # 5 % of the mailboxes may send
        self.next_contact = [0] * sequences
        self.now = datetime.now(UTC)

    async def create(self) -> None:
        now, far = self.now, self.now + timedelta(hours=20)
        mailboxes = [
            {
                "id": self.mailbox_ids[n],
                "account_id": self.account_id,
                "email": f"rep{n}@seller.example",
                "from_name": "Rep",
                "smtp_host": "192.0.2.1",
                "smtp_port": 587,
                "smtp_security": "starttls",
                "daily_limit": 10_000 if n in self.ready else 30,
                "send_interval_seconds": 0 if n in self.ready else 60,
                "postal_address": "Seller Inc, 1 Main St, Denver CO 80202",
                "status": "active",
                "next_send_at": None if n in self.ready else far,
                "created_at": now,
                "updated_at": now,
            }
            for n in range(self.count)
        ]
        sequences = [
            {
                "id": self.sequence_ids[n],
                "account_id": self.account_id,
                "name": f"bench {n}",
                "mailbox_id": self.mailbox_ids[n],
                "status": "active",
                "version": 1,
                "created_at": now,
                "updated_at": now,
            }
            for n in range(self.count)
        ]
        versions = [
            {"sequence_id": s, "version": 1, "steps": [STEP, STEP], "send_window": None, "created_at": now}
            for s in self.sequence_ids
        ]
        async with self.database.write_sessions() as session, session.begin():
            await session.execute(insert(Mailbox), mailboxes)
            await session.execute(insert(Sequence), sequences)
            await session.execute(insert(SequenceVersion), versions)
        # The ready mailboxes' sequences: 10 due each, at every size.
        await self.add({n: 10 for n in self.ready}, mix=False)

    async def grow(self, total: int) -> None:
        """Adds enrollments, spread over the sequences, until the table holds ``total``."""
        async with self.database.read_sessions() as session:
            have = int(await session.scalar(select(func.count()).select_from(Enrollment)) or 0)
        missing = max(0, total - have)
        per = {n: missing // self.count + (1 if n < missing % self.count else 0) for n in range(self.count)}
        await self.add(per, mix=True)

    async def add(self, per_sequence: dict[int, int], *, mix: bool) -> None:
        now, rows = self.now, []
        for n, count in per_sequence.items():
            for _ in range(count):
                k = self.next_contact[n]
                self.next_contact[n] += 1
                # 70 % waiting for a later step, 20 % ended, 10 % due now (all due when not mixed); the
                # ready mailboxes' sequences keep their 10 due ones, so that a tick has the same to do.
                kind = (k * 7919 % 10) if mix else 9
                if mix and kind == 9 and n in self.ready:
                    kind = 0
                if kind < 7:
                    status, due = "active", now + timedelta(days=1 + k % 30, minutes=k % 1440)
                elif kind < 9:
                    status, due = ("finished", "replied", "bounced", "unsubscribed")[k % 4], None
                else:
                    status, due = "active", now - timedelta(minutes=1 + k % 600)
                rows.append(
                    {
                        "id": f"enr_{secrets.token_hex(8)}",
                        "account_id": self.account_id,
                        "sequence_id": self.sequence_ids[n],
                        "version": 1,
                        "contact_id": self.contact_ids[k % len(self.contact_ids)],
                        "person_key": str(k // len(self.contact_ids)) if k >= len(self.contact_ids) else "",
                        "email": f"owner{k}@prospect{n}.example",
                        "status": status,
                        "step": 1 if status == "active" and kind < 7 else 0,
                        "next_due_at": due,
                        "unsubscribe_digest": secrets.token_hex(32),  # the scheduler part sends none
                        "created_at": now,
                        "updated_at": now,
                    }
                )
                if len(rows) >= 20_000:
                    await self._insert(rows)
                    rows = []
        if rows:
            await self._insert(rows)

    async def _insert(self, rows: list[dict[str, Any]]) -> None:
        async with self.database.write_sessions() as session, session.begin():
            await session.execute(insert(Enrollment), rows)

    async def hold_all(self, held: bool) -> None:
        ready = [self.mailbox_ids[n] for n in self.ready]
        async with self.database.write_sessions() as session, session.begin():
            await session.execute(
                update(Mailbox)
                .where(Mailbox.id.in_(ready))
                .values(next_send_at=self.now + timedelta(hours=1) if held else None)
            )

    async def put_back(self, claimed: list[sending.Claimed]) -> None:
        """Undoes a claiming tick: its message rows deleted, its enrollments due again."""
        async with self.database.write_sessions() as session, session.begin():
            await session.execute(
                delete(SequenceMessage).where(SequenceMessage.id.in_([c.message_id for c in claimed]))
            )
            await session.execute(
                update(Enrollment)
                .where(Enrollment.id.in_([c.enrollment_id for c in claimed]))
                .values(next_due_at=self.now - timedelta(minutes=5))
            )


async def timed(
    action: Callable[[], Awaitable[Any]], ticks: int, after: Callable[[Any], Awaitable[None]] | None = None
) -> list[float]:
    timings = []
    for _ in range(ticks + 3):
        started = time.perf_counter()
        result = await action()
        timings.append(1000 * (time.perf_counter() - started))
        if after is not None:
            await after(result)
    return timings[3:]  # the first ones warm the caches


async def scheduler_part(url: str, sizes: list[int], sequences: int, ticks: int) -> list[dict[str, Any]]:
    settings = Settings(database_url=url, log_level="WARNING", worker_in_process=False)
    app = create_app(settings)
    database: Database = app.state.database
    _, _, ids, account_id = await set_up_account(app, 500)
    catalogue = Catalogue(database, account_id, [int(i.removeprefix("ct_")) for i in ids], sequences)
    await catalogue.create()
    lease, now = timedelta(seconds=60), catalogue.now
    claimed_counts: list[int] = []

    async def look_up() -> int:
        async with database.read_sessions() as session:
            return len(await sending.find_due(session, now, limit=sending.BATCH))

    async def claim() -> list[sending.Claimed]:
        return await sending.claim_due(database, now=now, lease=lease)

    async def put_back(claimed: list[sending.Claimed]) -> None:
        claimed_counts.append(len(claimed))
        await catalogue.put_back(claimed)

    rows: list[dict[str, Any]] = []
    for size in sizes:
        started = time.perf_counter()
        await catalogue.grow(size)
        grow_seconds = time.perf_counter() - started
        if not database.is_sqlite:
            # What autovacuum does within a minute of a bulk load (SQLite's planner needs no statistics).
            async with database.write_sessions() as session, session.begin():
                await session.execute(text("ANALYZE"))
        found = await look_up()
        find = await timed(look_up, ticks)
        claimed_counts.clear()
        busy = await timed(claim, ticks, put_back)
        await catalogue.hold_all(True)
        idle = await timed(claim, ticks)
        await catalogue.hold_all(False)
        async with database.read_sessions() as session:
            total = int(await session.scalar(select(func.count()).select_from(Enrollment)) or 0)
            due = int(
                await session.scalar(
                    select(func.count()).where(Enrollment.status == "active", Enrollment.next_due_at <= now)
                )
                or 0
            )
        rows.append(
            {
                "size": total,
                "due": due,
                "grow_seconds": grow_seconds,
                "found": found,
                "claimed": max(claimed_counts[3:] or [0]),
                "find": find,
                "busy": busy,
                "idle": idle,
            }
        )
        print(
            f"  {total:>9,} enrollments ({due:,} due, most held): look-up {stats(find)}; "
            f"tick {stats(busy)}; idle tick {stats(idle)}",
            flush=True,
        )
    await database.dispose()
    return rows


def stats(values: list[float]) -> str:
    return f"p50 {percentile(values, 50):.2f} / p99 {percentile(values, 99):.2f} ms"


def main() -> None:
    if "--sink" in sys.argv:
        sink_main()
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--sends", type=int, default=3000)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--sequences", type=int, default=2000)
    parser.add_argument("--ticks", type=int, default=40)
    parser.add_argument("--skip-sending", action="store_true")
    args = parser.parse_args()
    started = time.perf_counter()
    url = fresh_database(args.database, DB_NAME)
    print(
        f"1. sending, {args.database}: {args.sends} contacts enrolled in a one-step sequence, "
        "5 % suppressed after enrollment",
        flush=True,
    )
    sent: dict[str, Any] = {}
    if not args.skip_sending:
        sent = asyncio.run(sending_part(args.database, url, args.sends))
        for label, r in sent.items():
            if label == "sink_received":
                continue
            per_minute = 60 * r["sent"] / r["wall"]
            print(
                f"  {label}: {r['sent']} sent, {r['stopped']} stopped at send time (suppressed), "
                f"{r['wall']:.1f} s in {r['rounds']} rounds: {per_minute:,.0f} sends/min; "
                f"CPU {r['cpu_ms_per_send']:.2f} ms a send",
                flush=True,
            )
        print(f"  the sink received {sent['sink_received']} messages", flush=True)
    url = fresh_database(args.database, DB_NAME)
    print(
        f"2. the scheduler, {args.database}: {args.sequences} running sequences, 5 % of their mailboxes ready "
        f"(1,000 steps due there), the rest held; {args.ticks} ticks at each size",
        flush=True,
    )
    rows = asyncio.run(scheduler_part(url, args.sizes, args.sequences, args.ticks))
    print()
    print(
        f"summary, {datetime.now(UTC):%Y-%m-%d}, {args.database} (run took {time.perf_counter() - started:.0f} s, "
        f"load average {os.getloadavg()[0]:.1f}):"
    )
    if sent:
        reuse = sent["one connection per mailbox and round"]
        base = sent["baseline: a connection per message"]
        rate = 60 * reuse["sent"] / reuse["wall"]
        verdict = "met" if rate >= GOAL_SENDS_PER_MINUTE else "not met"
        print(
            f"  sends/min, one worker, no spacing          {rate:>8,.0f}   "
            f"(baseline {60 * base['sent'] / base['wall']:,.0f})   >= 1,200  {verdict}"
        )
    for row in rows:
        verdict = "met" if percentile(row["find"], 99) <= GOAL_TICK_MS else "not met"
        print(
            f"  finding due steps at {row['size']:>9,} enrollments: p99 {percentile(row['find'], 99):6.2f} ms "
            f"(idle tick {percentile(row['idle'], 99):.2f}; a tick claiming {row['claimed']}: "
            f"{percentile(row['busy'], 99):.2f})   <= 20 ms  {verdict}"
        )


if __name__ == "__main__":
    main()
