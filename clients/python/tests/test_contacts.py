"""`client.contacts` against the real application, in process."""

from __future__ import annotations

import uuid
from decimal import Decimal

import pytest
from tests.factories import Factory

import vpx_client
from vpx_client.models import BatchRevealAccepted, BatchRevealResult, ContactPreview, RevealedContactView


async def plumbers(factory: Factory, count: int) -> list[str]:
    """``count`` plumbers in San Diego with distinct phones (a name of their own each run)."""
    tag = uuid.uuid4().hex[:6]
    rows = [
        {
            "business_name": f"Gomez Plumbing {tag} {n}",
            "city": "San Diego",
            "state": "CA",
            "industry": "home-services",
            "phone": f"+1619555{n:04d}",
            "email": f"office{n}@gomez-{tag}.example",
            # All four fields a reveal sells, so that it costs the tier's whole price.
            "website": f"https://gomez-{tag}-{n}.example",
            "street": f"{100 + n} Harbor Dr",
        }
        for n in range(count)
    ]
    return await factory.contacts(rows)


async def test_search_tolerates_typos_and_reports_the_rate_limit(factory: Factory, connect) -> None:
    account = await factory.account()
    ids = await plumbers(factory, 2)
    client = connect(account.keys["ro"])

    page = await client.contacts.search("plumbng", state="CA", limit=100)

    assert {c.id for c in page.contacts} >= set(ids)
    assert all(isinstance(c, ContactPreview) and c.preview for c in page.contacts)
    assert page.limit == 100 and page.offset == 0
    assert page.meta.status_code == 200 and page.meta.request_id
    assert page.meta.rate_limit is not None and page.meta.rate_limit.policy == "default"
    assert page.meta.rate_limit.limit == 100000 and page.meta.rate_limit.remaining is not None
    assert client.rate_limit == page.meta.rate_limit


async def test_search_says_how_it_read_the_question(factory: Factory, connect) -> None:
    """`interpreted`: the words searched and a trailing place read as the city and state; null
    without words."""
    account = await factory.account()
    ids = await plumbers(factory, 1)
    client = connect(account.keys["ro"])

    read = await client.contacts.search("plumbers in san diego ca", limit=100)
    filtered = await client.contacts.search(state="CA", limit=1)

    assert read.interpreted is not None
    assert (read.interpreted.q, read.interpreted.city, read.interpreted.state) == ("plumbers", "San Diego", "CA")
    assert set(ids) <= {c.id for c in read.contacts}
    assert filtered.interpreted is None


async def test_iterate_walks_every_page_by_offset_without_repeats(factory: Factory, connect) -> None:
    account = await factory.account()
    tag = uuid.uuid4().hex[:8]
    rows = [
        {"business_name": f"Walker {tag} Dental {n}", "city": "Austin", "state": "TX", "industry": "dental",
         "phone": f"+1512555{n:04d}"}
        for n in range(7)
    ]  # fmt: skip
    ids = await factory.contacts(rows)
    client = connect(account.keys["ro"])

    seen = [c.id async for c in client.contacts.iterate(f"walker {tag}", page_size=3)]

    assert sorted(seen) == sorted(ids)
    assert len(seen) == len(set(seen))


async def test_reveal_charges_once_and_shows_the_credits(factory: Factory, connect) -> None:
    account = await factory.account()
    [contact_id] = await plumbers(factory, 1)
    client = connect(account.keys["live"])

    first = await client.contacts.reveal(contact_id)
    again = await client.contacts.reveal(contact_id)

    assert first.preview is False and first.phone == "+16195550000"
    assert first.meta.credits_charged == Decimal(1) and first.meta.credits_remaining == Decimal(24)
    assert first.credits_charged == Decimal(1)
    assert again.meta.credits_charged == Decimal(0) and again.meta.credits_remaining == Decimal(24)
    # Every spending call carries an Idempotency-Key the client made, a new one per call.
    assert first.meta.idempotency_key and again.meta.idempotency_key
    assert first.meta.idempotency_key != again.meta.idempotency_key


async def test_reveal_with_the_same_idempotency_key_is_answered_from_the_first(factory: Factory, connect) -> None:
    account = await factory.account()
    a, b = await plumbers(factory, 2)
    client = connect(account.keys["live"])

    first = await client.contacts.reveal(a, idempotency_key="order-42")
    repeat = await client.contacts.reveal(a, idempotency_key="order-42")

    assert repeat.meta.replayed and not first.meta.replayed
    assert repeat.meta.idempotency_key == "order-42"
    assert repeat == first  # the same body: the result's data, whichever response carried it
    assert (await client.account.balances()).total == Decimal(24)
    with pytest.raises(vpx_client.IdempotencyMismatch) as refused:
        await client.contacts.reveal(b, idempotency_key="order-42")
    assert refused.value.status == 422 and refused.value.code == "idempotency_mismatch"


async def test_a_credit_tally_counts_a_replayed_key_once(factory: Factory, connect) -> None:
    account = await factory.account()
    a, b = await plumbers(factory, 2)
    client = connect(account.keys["live"])
    tally = vpx_client.CreditTally()

    first = await client.contacts.reveal(a, idempotency_key="order-7")
    repeat = await client.contacts.reveal(a, idempotency_key="order-7")
    other = await client.contacts.reveal(b)

    # The replay says what the first answer charged; summing every answer would count it twice.
    assert repeat.meta.replayed and repeat.meta.credits_charged == Decimal(1)
    assert [tally.add(first), tally.add(repeat), tally.add(other.meta)] == [1, 0, 1]
    spent = Decimal(25) - (await client.account.balances()).total
    assert tally.total == spent == Decimal(2)


async def test_get_gives_the_preview_until_revealed_then_the_record(factory: Factory, connect) -> None:
    account = await factory.account()
    [contact_id] = await plumbers(factory, 1)
    client = connect(account.keys["live"])

    before = await client.contacts.get(contact_id)
    await client.contacts.reveal(contact_id)
    after = await client.contacts.get(contact_id)

    assert isinstance(before, ContactPreview) and before.preview
    assert isinstance(after, RevealedContactView) and after.phone == "+16195550000"
    assert after.meta.status_code == 200


async def test_batch_reveal_answers_each_id_and_its_status_page(factory: Factory, connect) -> None:
    account = await factory.account()
    ids = await plumbers(factory, 2)
    client = connect(account.keys["live"])

    result = await client.contacts.batch_reveal([*ids, "ct_999999999"])

    assert isinstance(result, BatchRevealResult)
    assert [r.status for r in result.results] == ["revealed", "revealed", "not_found"]
    assert result.meta.credits_charged == Decimal(2) and result.meta.idempotency_key
    progress = await client.contacts.batch_reveal_status(result.batch_id)
    assert progress.batch_id == result.batch_id and progress.total == 3


async def test_batch_reveal_to_a_webhook_is_accepted(factory: Factory, connect) -> None:
    account = await factory.account()
    ids = await plumbers(factory, 1)
    client = connect(account.keys["live"])

    accepted = await client.contacts.batch_reveal(ids, webhook_url="http://127.0.0.1:9/batch")

    assert isinstance(accepted, BatchRevealAccepted)
    assert accepted.meta.status_code == 202 and accepted.webhook_secret.startswith("whsec_")


async def test_decision_makers_and_enrichment(factory: Factory, connect) -> None:
    account = await factory.account()
    [contact_id] = await plumbers(factory, 1)
    client = connect(account.keys["full"])

    people = await client.contacts.decision_makers(contact_id)
    await client.account.set_provider_key("hunter", "hunter-test-key-123", monthly_limit=50)
    planned = await client.contacts.enrich(contact_id, fields=["email"], dry_run=True)
    stored = await client.contacts.enrichment(contact_id)
    batch = await client.contacts.batch_enrich([contact_id], fields=["email"])
    progress = await client.contacts.batch_enrich_status(batch.batch_id)

    assert people.contact_id == contact_id
    assert planned.dry_run and planned.credits_charged == 0
    assert [a.provider for a in planned.attempts] == ["hunter"]
    assert stored.contact_id == contact_id
    assert batch.meta.status_code == 202 and batch.meta.idempotency_key
    assert progress.batch_id == batch.batch_id and progress.total == 1
