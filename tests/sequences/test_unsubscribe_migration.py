"""Migration 20261129_unsubscribe_digests on both databases: a database at the revision before it,
holding an enrollment whose unsubscribe token is kept in clear, comes out with the token's SHA-256
and the token sealed, never the token itself. The link already sent still works (page and one-click
unsubscribe), and the enrollment's next email carries the same link."""

from __future__ import annotations

import asyncio
import hashlib
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine

from tests.conftest import (
    asgi_client,
    test_settings,
)
from tests.sequences.smtp_server import SmtpSink
from vpx.app import create_app
from vpx.clock import FixedClock
from vpx.db import UtcDateTime
from vpx.migrations import upgrade
from vpx.secrets import SecretBox, is_sealed
from vpx.sequences import sending

PREVIOUS = "20261126_worker_heartbeats"
TOKEN = "Old-clear-token_0123456789abcdefghijklmnopq"
WHEN = UtcDateTime()


def _insert(table_name: str, /, **values: Any) -> sa.Insert:
    def column(key: str) -> sa.ColumnClause[Any]:
        if key.endswith("_at"):
            return sa.column(key, WHEN)
        return sa.column(key, sa.JSON()) if key == "steps" else sa.column(key)

    return sa.table(table_name, *(column(key) for key in values)).insert().values(**values)


async def _execute(url: str, *statements: sa.Executable) -> list[Any]:
    engine = create_async_engine(url)
    try:
        async with engine.begin() as connection:
            return [(await connection.execute(s)) for s in statements]
    finally:
        await engine.dispose()


async def test_a_token_kept_in_clear_becomes_its_digest_and_its_link_still_works(
    empty_database: str, smtp_sink: SmtpSink
) -> None:
    url = empty_database
    settings = test_settings(url, mailbox_allow_private=True, worker_in_process=False)
    box = SecretBox.from_keys([settings.secret_keys or ""], origin="test")
    await asyncio.to_thread(upgrade, settings, PREVIOUS)
    now = datetime.now(UTC).replace(microsecond=0)
    await _execute(
        url,
        _insert(
            "accounts",
            id="acc_old",
            name="Old",
            plan="free",
            free_credits=0,
            free_period=now.strftime("%Y-%m"),
            paid_credits=0,
            status="active",
            created_at=now,
        ),
        _insert(
            "contacts",
            id=1,
            business_name="Acme Plumbing",
            name_key="acme plumbing",
            city="Denver",
            city_key="denver",
            state="CO",
            country="US",
            industry="home-services",
            status="active",
            origin="demo",
            created_at=now,
            updated_at=now,
        ),
        _insert(
            "mailboxes",
            id="mbx_old",
            account_id="acc_old",
            email="sam@seller.example",
            smtp_host=smtp_sink.host,
            smtp_port=smtp_sink.port,
            smtp_security="none",
            daily_limit=30,
            send_interval_seconds=0,
            postal_address="Seller Inc, 1 Main St, Denver CO 80202",
            status="active",
            created_at=now,
            updated_at=now,
        ),
        _insert(
            "sequences",
            id="seq_old",
            account_id="acc_old",
            name="Old",
            mailbox_id="mbx_old",
            status="active",
            version=1,
            created_at=now,
            updated_at=now,
        ),
        _insert(
            "sequence_versions",
            sequence_id="seq_old",
            version=1,
            steps=[
                {"type": "email", "subject": "First", "body": "Hi"},
                {"type": "email", "subject": "Second", "body": "Again"},
                {"type": "email", "subject": "Third", "body": "Once more", "wait": {"days": 3}},
            ],
            created_at=now,
        ),
        _insert(
            "enrollments",
            id="enr_old",
            account_id="acc_old",
            sequence_id="seq_old",
            version=1,
            contact_id=1,
            person_key="",
            email="owner@acme.example",
            status="active",
            step=1,  # its first email went out before the upgrade, with the link in clear
            next_due_at=now - timedelta(minutes=1),
            unsubscribe_token=TOKEN,
            created_at=now,
            updated_at=now,
        ),
    )

    await asyncio.to_thread(upgrade, settings)

    engine = create_async_engine(url)
    try:
        async with engine.connect() as connection:
            row = (await connection.execute(sa.text("SELECT * FROM enrollments"))).mappings().one()
    finally:
        await engine.dispose()
    assert TOKEN not in [str(value) for value in row.values()]
    assert row["unsubscribe_digest"] == hashlib.sha256(TOKEN.encode()).hexdigest()
    assert is_sealed(row["unsubscribe_token_sealed"]) and box.open(row["unsubscribe_token_sealed"]) == TOKEN

    clock = FixedClock(now)
    app = create_app(settings, clock=clock)
    try:
        # The next email carries the link the first one did.
        assert await sending.run_due_sends(app.state.database, box=box, settings=settings, clock=clock) == 1
        [sent] = smtp_sink.received
        assert sent.message()["Subject"] == "Second"
        assert sent.message()["List-Unsubscribe"] == f"<{settings.public_url.rstrip('/')}/u/{TOKEN}>"
        async with asgi_client(app) as client:
            page = await client.get(f"/u/{TOKEN}")
            assert page.status_code == 200 and "Unsubscribe" in page.text
            done = await client.post(f"/u/{TOKEN}", content="List-Unsubscribe=One-Click")
            assert done.status_code == 200, done.text
            assert (await client.get(f"/u/{row['unsubscribe_digest']}")).status_code == 404
        async with app.state.database.read_sessions() as session:
            status = await session.scalar(sa.text("SELECT status FROM enrollments"))
        assert status == "unsubscribed"
    finally:
        await app.state.database.dispose()
