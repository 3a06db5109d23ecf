"""`contacts.report`, `suppressions.feed` / `iterate_feed` and the `email_status` filter against the
real application, in process."""

from __future__ import annotations

import uuid
from decimal import Decimal
from pathlib import Path

import pytest
from tests.factories import Factory

import vpx_client
from vpx_client.models import ContactReportView, SuppressedContact


async def roofers(
    factory: Factory, count: int, *, tag: str | None = None, first: int = 0, email: bool = True
) -> list[str]:
    """``count`` roofers in Denver numbered from ``first``, with phones (and emails, unless told) of
    their own, named with ``tag`` (a new one unless given)."""
    tag = tag or uuid.uuid4().hex[:6]
    exchange = 200 + int(tag, 16) % 800
    rows = [
        {
            "business_name": f"Summit Roofing {tag} {n}",
            "city": "Denver",
            "state": "CO",
            "industry": "home-services",
            "phone": f"+1720{exchange}{n:04d}",
            "email": f"office{n}@summit-{tag}.example" if email else None,
            "website": f"https://summit-{tag}-{n}.example",
            "street": f"{100 + n} Colfax Ave",
        }
        for n in range(first, first + count)
    ]
    return await factory.contacts(rows)


async def test_a_revealed_contact_is_reported_once_per_field(factory: Factory, connect) -> None:
    account = await factory.account()
    [contact_id] = await roofers(factory, 1)
    client = connect(account.keys["live"])
    await client.contacts.reveal(contact_id)

    report = await client.contacts.report(contact_id, "phone", "disconnected", note="Number not in service")
    again = await client.contacts.report(contact_id, "phone", "wrong")
    other = await client.contacts.report(contact_id, "email", "wrong")

    assert isinstance(report, ContactReportView) and report.meta.status_code == 200
    assert (report.contact_id, report.field, report.problem, report.note) == (
        contact_id,
        "phone",
        "disconnected",
        "Number not in service",
    )
    assert report.status == "open" and report.credits_refunded == Decimal(0) and report.resolved_at is None
    # One report per contact and field: the repeat answers the first as it stands.
    assert again.id == report.id and again.problem == "disconnected"
    assert other.id != report.id and other.note is None
    # Reporting is free and sends no idempotency key (a repeat is harmless by itself).
    assert report.meta.idempotency_key is None
    assert (await client.account.balances()).total == Decimal(24)


async def test_reporting_a_contact_not_revealed_raises_not_revealed(factory: Factory, connect) -> None:
    account = await factory.account()
    buyer = await factory.account()
    [contact_id] = await roofers(factory, 1)
    await connect(buyer.keys["live"]).contacts.reveal(contact_id)  # revealed, but by another account
    client = connect(account.keys["live"])

    with pytest.raises(vpx_client.NotRevealed) as refused:
        await client.contacts.report(contact_id, "phone", "wrong")
    with pytest.raises(vpx_client.ValidationFailed) as invalid:
        await client.contacts.report(contact_id, "fax", "wrong")

    assert isinstance(refused.value, vpx_client.Forbidden)
    assert refused.value.status == 403 and refused.value.code == "not_revealed"
    assert refused.value.meta.retries == ()
    assert list(invalid.value.fields) == ["field"]


async def test_the_feed_pages_suppressed_contacts_newest_first(factory: Factory, connect) -> None:
    account = await factory.account()
    other = await factory.account()
    ids = await roofers(factory, 5)
    client = connect(account.keys["live"])
    for contact_id in ids:
        await client.contacts.reveal(contact_id)
    await connect(other.keys["live"]).contacts.reveal(ids[0])
    assert (await client.suppressions.feed()).suppressions == []

    for contact_id in ids[:3]:
        await factory.suppress("contact", contact_id)

    first = await client.suppressions.feed(limit=2)
    rest = await client.suppressions.feed(limit=2, cursor=first.next_cursor)
    walked = [item async for item in client.suppressions.iterate_feed(page_size=2)]
    theirs = [item async for item in connect(other.keys["ro"]).suppressions.iterate_feed()]

    assert [s.contact_id for s in first.suppressions] == [ids[2], ids[1]] and first.limit == 2
    assert first.next_cursor is not None
    assert [s.contact_id for s in rest.suppressions] == [ids[0]] and rest.next_cursor is None
    assert [s.contact_id for s in walked] == [ids[2], ids[1], ids[0]]
    assert all(isinstance(s, SuppressedContact) and s.reason == "opt_out" for s in walked)
    assert walked[0].suppressed_at >= walked[-1].suppressed_at
    assert walked[-1].meta.status_code == 200  # each item carries its page's response metadata
    assert [s.contact_id for s in theirs] == [ids[0]]
    # The rest of the walk from a saved cursor.
    assert [s.contact_id async for s in client.suppressions.iterate_feed(cursor=first.next_cursor)] == [ids[0]]


async def test_search_iterate_and_export_filter_by_email_status(factory: Factory, connect, tmp_path: Path) -> None:
    account = await factory.account()
    tag = uuid.uuid4().hex[:6]
    with_email = await roofers(factory, 3, tag=tag)
    [without] = await roofers(factory, 1, tag=tag, first=3, email=False)
    client = connect(account.keys["live"])

    # No check has run in process: every email is `unknown`; a contact without one has no status.
    unknown = await client.contacts.search(f"summit roofing {tag}", email_status="unknown", limit=100)
    checked = await client.contacts.search(f"summit roofing {tag}", email_status="mx_found", limit=100)
    walked = [c.id async for c in client.contacts.iterate(f"summit roofing {tag}", email_status="unknown", page_size=2)]

    assert {c.id for c in unknown.contacts} == set(with_email)
    assert all(c.has_email for c in unknown.contacts)
    assert checked.contacts == [] and checked.total == 0
    assert sorted(walked) == sorted(with_email)
    with pytest.raises(vpx_client.ValidationFailed) as refused:
        await client.contacts.search("roofing", email_status="deliverable")
    assert "email_status" in refused.value.fields

    unrelated = (await roofers(factory, 1))[0]
    for contact_id in (with_email[0], without, unrelated):
        await client.contacts.reveal(contact_id)
    exported = await client.exports.contacts(tmp_path / "emails.csv", q=f"summit roofing {tag}", email_status="unknown")
    written = (tmp_path / "emails.csv").read_text()
    assert exported.meta.status_code == 200
    assert with_email[0] in written and without not in written and unrelated not in written
