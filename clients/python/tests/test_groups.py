"""The other groups against the real application, in process: account, keys, publisher, auto-buy,
webhooks, exports, visitors, sequences and mailboxes."""

from __future__ import annotations

import io
import uuid
from decimal import Decimal
from pathlib import Path

import pytest
from tests.factories import Factory

import vpx_client
from vpx_client.models import EmailStep, RuleCreate


async def test_account_balances_and_ledger(factory: Factory, connect) -> None:
    account = await factory.account(credits=10)
    client = connect(account.keys["ro"])

    view = await client.account.get()
    balances = await client.account.balances()
    page = await client.account.ledger(limit=1)
    entries = [entry async for entry in client.account.iterate_ledger(page_size=1)]

    assert view.id == account.id and view.balance.total == Decimal(35)
    assert (balances.free, balances.paid, balances.total) == (Decimal(25), Decimal(10), Decimal(35))
    assert balances.meta.rate_limit is not None
    assert len(page.entries) == 1 and page.next_cursor
    assert sorted(e.kind for e in entries) == ["free_monthly", "grant"]
    assert sum(e.amount for e in entries) == Decimal(35)


async def test_api_keys_are_created_listed_changed_and_revoked(factory: Factory, connect) -> None:
    account = await factory.account()
    client = connect(account.keys["full"])

    created = await client.account.create_key("ro", name="dashboard", ip_allowlist=["203.0.113.0/24"])
    await client.account.create_key("live", name="fifth")
    with pytest.raises(vpx_client.KeyLimitReached) as sixth:
        await client.account.create_key("ro", name="sixth")
    changed = await client.account.update_key(created.id, name="wallboard", ip_allowlist=[])
    revoked = await client.account.revoke_key(created.id)
    listed = await client.account.keys(status="active")

    assert created.secret.startswith("vpx_ro_") and created.meta.idempotency_key
    assert isinstance(sixth.value, vpx_client.Conflict) and sixth.value.status == 409
    assert changed.name == "wallboard" and changed.ip_allowlist == []
    assert revoked.revoked_at is not None
    assert created.id not in {k.id for k in listed.keys} and listed.active_keys == 4
    assert (await client.account.get_key(created.id)).id == created.id


async def test_provider_keys(factory: Factory, connect) -> None:
    client = connect((await factory.account()).keys["full"])

    stored = await client.account.set_provider_key("pdl", "pdl-secret-key-9876", monthly_limit=10)
    listed = await client.account.provider_keys()
    deleted = await client.account.delete_provider_key("pdl")

    assert stored.provider == "pdl" and stored.last4 == "9876"
    assert [k.provider for k in listed.keys] == ["pdl"]
    assert deleted.status_code == 204 and (await client.account.provider_keys()).keys == []


async def test_publisher_contributes_and_sees_its_earnings(factory: Factory, connect) -> None:
    client = connect((await factory.account()).keys["live"])
    tag = uuid.uuid4().hex[:6]
    rows = [
        {"business_name": f"Contributed Dental {tag}", "phone": "+15125550171", "city": "Austin", "state": "TX",
         "industry": "dental"},
        {"business_name": "", "phone": "555", "city": "Austin", "state": "TX", "industry": "dental"},
    ]  # fmt: skip

    result = await client.publisher.contribute(rows)
    page = await client.publisher.contributions(limit=10)
    walked = [c async for c in client.publisher.iterate_contributions(page_size=1)]
    earnings = await client.publisher.earnings()

    assert [r.status for r in result.results] == ["accepted", "rejected"]
    assert result.meta.idempotency_key
    assert [c.contact_id for c in page.contributions] == [result.results[0].contact_id]
    assert [c.contact_id for c in walked] == [result.results[0].contact_id]
    assert earnings.contributed_contacts == 1 and earnings.total_earned == 0


async def test_auto_buy_rules_and_purchases(factory: Factory, connect) -> None:
    client = connect((await factory.account()).keys["full"])

    rule = await client.autobuy.create_rule(
        industries=["solar"], states=["CO"], min_confidence=Decimal("0.6"), budget_credits=30, daily_cap=5
    )
    from_model = await client.autobuy.create_rule(
        RuleCreate(industries=["dental"], states=["TX"], min_confidence=Decimal("0.8")), name="dentists"
    )
    unlimited = await client.autobuy.update_rule(rule.id, budget_credits=None, name="solar, no budget")
    paused = await client.autobuy.pause_rule(rule.id)
    resumed = await client.autobuy.resume_rule(rule.id)
    listed = await client.autobuy.list_rules()
    purchases = await client.autobuy.purchases(rule_id=rule.id)
    walked = [p async for p in client.autobuy.iterate_purchases(rule_id=rule.id)]
    deleted = await client.autobuy.delete_rule(from_model.id)

    assert rule.budget_credits == Decimal(30) and rule.daily_cap == 5 and rule.status == "active"
    assert from_model.name == "dentists" and from_model.min_confidence == Decimal("0.8")
    assert unlimited.budget_credits is None and unlimited.daily_cap == 5 and unlimited.name == "solar, no budget"
    assert (paused.status, resumed.status) == ("paused", "active")
    assert {r.id for r in listed.rules} == {rule.id, from_model.id}
    assert purchases.purchases == [] and walked == []
    assert deleted.status_code == 204
    with pytest.raises(vpx_client.NotFound):
        await client.autobuy.get_rule(from_model.id)


async def test_webhook_subscriptions(factory: Factory, connect) -> None:
    client = connect((await factory.account()).keys["full"])

    created = await client.webhooks.create(
        "http://127.0.0.1:9/hooks", ["signal.created"], signal_filter={"industry": "solar"}, description="solar"
    )
    updated = await client.webhooks.update(created.id, events=["signal.created", "contact.revealed"])
    test = await client.webhooks.test(created.id)
    deliveries = await client.webhooks.deliveries(created.id)
    walked = [d async for d in client.webhooks.iterate_deliveries(created.id, page_size=1)]
    again = await client.webhooks.redeliver(created.id, test.id)
    rotated = await client.webhooks.rotate_secret(created.id, grace_hours=1)
    listed = await client.webhooks.list()
    deleted = await client.webhooks.delete(created.id)

    assert created.secret.startswith("whsec_") and created.meta.idempotency_key
    assert created.signal_filter.industry == "solar"
    assert updated.events == ["signal.created", "contact.revealed"]
    assert test.event_type == "webhook.test" and [d.id for d in deliveries.deliveries] == [test.id]
    assert [d.id for d in walked] == [test.id]
    assert again.redelivery_of == test.id
    assert rotated.secret.startswith("whsec_") and rotated.secret != created.secret
    assert [w.id for w in listed.webhooks] == [created.id]
    assert deleted.status_code == 204
    with pytest.raises(vpx_client.NotFound):
        await client.webhooks.get(created.id)


async def test_exports_stream_to_a_file_or_a_binary_stream(factory: Factory, connect, tmp_path: Path) -> None:
    account = await factory.account()
    contact_id = await factory.contact(phone="+13035550177", business_name=f"Exported {uuid.uuid4().hex[:6]}")
    client = connect(account.keys["live"])
    await client.contacts.reveal(contact_id)

    to_path = await client.exports.contacts(tmp_path / "contacts.csv", state="CO")
    into = io.BytesIO()
    to_stream = await client.exports.signals(into, industry="solar")

    written = (tmp_path / "contacts.csv").read_bytes()
    assert to_path.path == tmp_path / "contacts.csv" and to_path.bytes_written == len(written)
    assert written.startswith(b"id,") and contact_id.encode() in written
    assert not (tmp_path / "contacts.csv.part").exists()
    assert to_stream.path is None and into.getvalue().startswith(b"id,")
    assert to_stream.meta.status_code == 200


async def test_visitor_sites_and_identification(factory: Factory, connect) -> None:
    client = connect((await factory.account()).keys["full"])

    site = await client.visitors.create_site("www.acme.example", topic="fleet software")
    seen = await client.visitors.identify(site.id, "203.0.113.44", "https://www.acme.example/pricing")
    visits = await client.visitors.visits(site_id=site.id)
    walked = [v async for v in client.visitors.iterate_visits(site_id=site.id)]
    companies = await client.visitors.companies(site_id=site.id)
    sites = await client.visitors.sites()
    fetched = await client.visitors.get_site(site.id)
    deleted = await client.visitors.delete_site(site.id)

    assert site.snippet and site.site_key
    assert seen.identified is False and seen.visit_id
    assert [v.visit_id for v in visits.visits] == [v.visit_id for v in walked] == [seen.visit_id]
    assert companies.companies == []
    assert [s.id for s in sites.sites] == [site.id] and fetched.id == site.id
    assert deleted.status_code == 204


async def test_sequences_and_mailboxes(factory: Factory, connect) -> None:
    account = await factory.account()
    contact_id = await factory.contact(phone="+13035550166", business_name=f"Fleet Co {uuid.uuid4().hex[:6]}")
    client = connect(account.keys["full"])
    await client.contacts.reveal(contact_id)

    mailbox = await client.mailboxes.create(
        "sam@acme.example", smtp_host="127.0.0.1", smtp_port=2525, smtp_security="none",
        postal_address="Acme Inc, 1 Main St, Denver CO 80202", from_name="Sam",
    )  # fmt: skip
    renamed = await client.mailboxes.update(mailbox.id, from_name="Sam at Acme")
    sequence = await client.sequences.create(
        "Fleet intro",
        mailbox.id,
        [
            EmailStep(type="email", subject="Quick question, {{ contact.business_name }}", body="Hi"),
            {"type": "email", "subject": "Following up", "body": "Hello again", "wait": {"days": 3}},
        ],
        send_window={"days": ["mon", "tue", "wed", "thu", "fri"], "start": "09:00", "end": "17:00"},
    )
    changed = await client.sequences.update(sequence.id, name="Fleet intro v2")
    paused = await client.sequences.pause(sequence.id)
    resumed = await client.sequences.resume(sequence.id)
    enrolled = await client.sequences.enroll(sequence.id, [contact_id])
    enrollments = await client.sequences.enrollments(sequence.id)
    walked = [e async for e in client.sequences.iterate_enrollments(sequence.id)]
    stopped = await client.sequences.stop_enrollment(enrolled.results[0].enrollment_id or "")
    with pytest.raises(vpx_client.ValidationFailed) as unreachable:  # nothing listens on 127.0.0.1:2525
        await client.mailboxes.verify(mailbox.id)
    reply = b"From: buyer@fleet.example\r\nTo: sam@acme.example\r\nSubject: Re: hi\r\n\r\nTell me more.\r\n"
    handed_in = await client.mailboxes.inbound(mailbox.id, reply)

    assert mailbox.smtp_host == "127.0.0.1" and renamed.from_name == "Sam at Acme"
    assert [m.id for m in (await client.mailboxes.list()).mailboxes] == [mailbox.id]
    assert (await client.mailboxes.get(mailbox.id)).id == mailbox.id
    assert len(sequence.steps) == 2 and changed.name == "Fleet intro v2"
    assert (paused.status, resumed.status) == ("paused", "active")
    assert [r.status for r in enrolled.results] == ["enrolled"]
    assert [e.id for e in enrollments.enrollments] == [e.id for e in walked] == [enrolled.results[0].enrollment_id]
    assert stopped.status_code == 204
    assert [e.field for e in unreachable.value.errors] == ["smtp"] and handed_in.meta.status_code == 202
    assert [s.id for s in (await client.sequences.list()).sequences] == [sequence.id]
    assert (await client.sequences.get(sequence.id)).id == sequence.id


async def test_own_lists_page_with_limit_and_cursor(factory: Factory, connect) -> None:
    """Keys, auto-buy rules, sites, sequences, mailboxes and enrollments: ``limit``/``cursor`` give one
    page at a time, the iterators walk them all, and the default page holds everything."""
    account = await factory.account()
    contacts = [
        await factory.contact(phone=f"+1303555{n:04d}", business_name=f"Paged {uuid.uuid4().hex[:6]}")
        for n in (1881, 1882)
    ]
    client = connect(account.keys["full"])
    for contact_id in contacts:
        await client.contacts.reveal(contact_id)
    for n in range(2):
        await client.autobuy.create_rule(industries=["solar"], states=["CO"], min_confidence=0.5, name=f"rule {n}")
        await client.visitors.create_site(f"www.paged{n}-{uuid.uuid4().hex[:6]}.example")
        await client.mailboxes.create(
            f"sam{n}@acme.example", smtp_host="127.0.0.1", smtp_port=2525, smtp_security="none",
            postal_address="Acme Inc, 1 Main St, Denver CO 80202",
        )  # fmt: skip
    mailbox_id = (await client.mailboxes.list()).mailboxes[0].id
    steps = [EmailStep(type="email", subject="Hello", body="Hi")]
    sequences = [await client.sequences.create(f"Paged {n}", mailbox_id, steps) for n in range(2)]
    enrolled = await client.sequences.enroll(sequences[0].id, contacts)

    lists = {
        "keys": (client.account.keys, client.account.iterate_keys, "keys"),
        "rules": (client.autobuy.list_rules, client.autobuy.iterate_rules, "rules"),
        "sites": (client.visitors.sites, client.visitors.iterate_sites, "sites"),
        "sequences": (client.sequences.list, client.sequences.iterate, "sequences"),
        "mailboxes": (client.mailboxes.list, client.mailboxes.iterate, "mailboxes"),
    }
    for name, (one_page, iterate, field) in lists.items():
        everything = await one_page()
        first = await one_page(limit=1)
        second = await one_page(limit=1, cursor=first.next_cursor)
        walked = [item async for item in iterate(page_size=1)]
        ids = [item.id for item in getattr(everything, field)]
        assert len(ids) >= 2 and everything.next_cursor is None, name
        assert [item.id for item in getattr(first, field)] == ids[:1] and first.next_cursor, name
        assert [item.id for item in getattr(second, field)] == ids[1:2], name
        assert [item.id for item in walked] == ids, name
        assert walked[0].meta.status_code == 200, name
    keys = await client.account.keys(limit=1)
    assert keys.limit == 1 and keys.max_keys == 100

    page = await client.sequences.enrollments(sequences[0].id, limit=1)
    walked_enrollments = [e.id async for e in client.sequences.iterate_enrollments(sequences[0].id, page_size=1)]
    assert len(page.enrollments) == 1 and page.next_cursor
    assert sorted(walked_enrollments) == sorted(r.enrollment_id for r in enrolled.results)


async def test_a_sequence_is_deleted(factory: Factory, connect) -> None:
    account = await factory.account()
    contact_id = await factory.contact(phone="+13035551883", business_name=f"Deleted Co {uuid.uuid4().hex[:6]}")
    client = connect(account.keys["full"])
    await client.contacts.reveal(contact_id)
    mailbox = await client.mailboxes.create(
        "del@acme.example", smtp_host="127.0.0.1", smtp_port=2525, smtp_security="none",
        postal_address="Acme Inc, 1 Main St, Denver CO 80202",
    )  # fmt: skip
    sequence = await client.sequences.create("To delete", mailbox.id, [EmailStep(type="email", subject="Hi", body="x")])
    await client.sequences.enroll(sequence.id, [contact_id])

    deleted = await client.sequences.delete(sequence.id)

    assert deleted.status_code == 204
    assert (await client.sequences.list()).sequences == []
    with pytest.raises(vpx_client.NotFound):
        await client.sequences.get(sequence.id)
    with pytest.raises(vpx_client.NotFound):
        await client.sequences.delete(sequence.id)


async def test_creating_past_a_cap_is_a_conflict(factory: Factory, connect, monkeypatch: pytest.MonkeyPatch) -> None:
    """The caps on an account's sites, rules, sequences and mailboxes answer 409 `conflict`: the
    client's `Conflict`, nothing created. (The server's caps lowered to 1 for the test: the same check.)"""
    from vpx.autobuy import service as autobuy_service
    from vpx.mailboxes import service as mailbox_service
    from vpx.sequences import service as sequence_service
    from vpx.visitors import service as visitor_service

    monkeypatch.setattr(visitor_service, "MAX_SITES_PER_ACCOUNT", 1)
    monkeypatch.setattr(autobuy_service, "MAX_RULES_PER_ACCOUNT", 1)
    monkeypatch.setattr(sequence_service, "MAX_SEQUENCES_PER_ACCOUNT", 1)
    monkeypatch.setattr(mailbox_service, "MAX_MAILBOXES_PER_ACCOUNT", 1)
    client = connect((await factory.account()).keys["full"])

    def mailbox(email: str):
        return client.mailboxes.create(
            email, smtp_host="127.0.0.1", smtp_port=2525, smtp_security="none",
            postal_address="Acme Inc, 1 Main St, Denver CO 80202",
        )  # fmt: skip

    first_mailbox = await mailbox("one@acme.example")
    steps = [EmailStep(type="email", subject="Hi", body="x")]
    creations = [
        lambda: client.visitors.create_site(f"www.cap-{uuid.uuid4().hex[:6]}.example"),
        lambda: client.autobuy.create_rule(industries=["solar"], states=["CO"], min_confidence=0.5),
        lambda: client.sequences.create("Capped", first_mailbox.id, steps),
    ]
    refused = []
    for create in creations:
        await create()
        with pytest.raises(vpx_client.Conflict) as past:
            await create()
        refused.append(past.value)
    with pytest.raises(vpx_client.Conflict) as past_mailbox:
        await mailbox("two@acme.example")
    refused.append(past_mailbox.value)

    assert [(type(e), e.status, e.code) for e in refused] == [(vpx_client.Conflict, 409, "conflict")] * 4
    assert len((await client.visitors.sites()).sites) == 1
    assert len((await client.mailboxes.list()).mailboxes) == 1
