"""The DROP cycle against a local fake of DROP's API: a batch downloaded, each work item decided (one
contact erased: 3; several opted out: 4; none: 5; exempted by the operator: 2), the answers uploaded
under the downloaded names; past buyers told; the audit trail chained."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from fastapi import FastAPI

from tests.compliance.fake_drop import DATE, FakeDrop
from tests.compliance.support import audit_kinds, chain_ok, contact, drop_status, entries, pull, report
from tests.factories import Factory, details
from tests.suppression.support import buyer, events_at, feed
from tests.suppression.support import reveal as reveal_ok
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import deliver_round
from vpx.compliance.drop import cycle
from vpx.compliance.erasure import TOMBSTONE
from vpx.compliance.hashing import email_hash, phone_hash

pytestmark = pytest.mark.asyncio
SHARED_PHONE = "+12025550111"


async def test_a_batch_is_decided_acted_on_and_answered(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, receiver: Receiver, drop: FakeDrop
) -> None:
    alone = await factory.contact(business_name="Pat Doe Dental", **details(1))
    shared = [
        await factory.contact(business_name=f"Clinic {n}", **{**details(n), "phone": SHARED_PHONE}) for n in (2, 3)
    ]
    bystander = await factory.contact(business_name="Unrelated Roofing", **details(4))
    account = await buyer(client, factory, receiver, "buyer")
    for contact_id in (alone, shared[0], bystander):
        await reveal_ok(client, account, contact_id)

    drop.offer(
        {
            "Email": [
                ("EmailItem001", email_hash(details(1)["email"])),
                ("EmailItem002", email_hash("no@one.example")),
            ],
            "Phone": [("PhoneItem001", phone_hash(SHARED_PHONE))],
        }
    )
    pulled = await pull(app, drop)
    assert (pulled.status, pulled.items) == ("downloaded", 3)
    before = await drop_status(app)
    batch = before["open_batch"]
    assert (batch["items"], batch["decided"], batch["days_left"]) == (3, 0, 45.0)
    assert batch["deadline"] == app.state.clock.now() + cycle.DEADLINE
    # Nothing is deleted before the answer is decided.
    assert (await contact(app, alone)).phone == details(1)["phone"]

    answered = await report(app, drop)
    assert answered["status"] == "reported"
    assert answered["files"] == [f"{DATE}_4821_Email.csv", f"{DATE}_4821_Phone.csv"]
    assert drop.answers == {"EmailItem001": "3", "EmailItem002": "5", "PhoneItem001": "4"}
    assert answered["counts"] == {"deleted": 1, "not_found": 1, "opted_out": 1}

    # One match: erased, on the list by its hash and by itself; its buyer reads the tombstone, marked.
    erased = await contact(app, alone)
    assert (erased.business_name, erased.phone, erased.email, erased.street, erased.website) == (
        TOMBSTONE, None, None, None, None
    )  # fmt: skip
    assert erased.suppressed and erased.email_hash is None
    mine = (await client.get(f"/api/v1/contacts/{alone}", headers=account.headers())).json()
    assert mine["suppressed"]["reason"] == "opt_out" and mine["phone"] is None and mine["phone_dnc"] is None
    # Several share the phone: all off sale, their fields kept.
    for contact_id in shared:
        kept = await contact(app, contact_id)
        assert kept.suppressed and kept.phone == SHARED_PHONE
    stranger = await factory.account(credits=10)
    for contact_id in (alone, *shared):
        refused = await client.post(f"/api/v1/contacts/{contact_id}/reveal", headers=stranger.headers())
        assert refused.status_code == 451
    assert not (await contact(app, bystander)).suppressed
    listed = await entries(app)
    assert ("email_hash", email_hash(details(1)["email"]), "drop_deletion") in listed
    assert ("contact", alone, "drop_deletion") in listed
    assert ("phone_hash", phone_hash(SHARED_PHONE), "drop_opt_out") in listed
    assert ("email_hash", email_hash("no@one.example"), "drop_deletion") in listed  # screens later imports

    # The buyer is told of both contacts it bought, as the person's opt-out.
    await deliver_round(app)
    told = {e["data"]["contact_id"]: e["data"]["reason"] for e in events_at(receiver, "/buyer")}
    assert told == {alone: "opt_out", shared[0]: "opt_out"}
    assert {i["contact_id"] for i in (await feed(client, account))["suppressions"]} == {alone, shared[0]}

    after = await drop_status(app)
    assert after["open_batch"] is None and after["last_pull_at"] == app.state.clock.now()
    assert await audit_kinds(app) == ["drop.downloaded", "drop.decided", "drop.reported"]
    assert (await chain_ok(app)).ok


async def test_an_exemption_declared_before_the_answer_is_a_2_and_deletes_nothing(
    app: FastAPI, factory: Factory, drop: FakeDrop
) -> None:
    kept = await factory.contact(business_name="Exempt Records Office", **details(5))
    drop.offer({"Email": [("ExemptItem01", email_hash(details(5)["email"]))]})
    await pull(app, drop)
    with pytest.raises(cycle.DropCycleError) as unknown:
        await cycle.exempt(
            app.state.database, item_id="NoSuchItem00", reason="x", actor="test", now=app.state.clock.now()
        )
    assert unknown.value.code == "not_found"
    await cycle.exempt(
        app.state.database, item_id="ExemptItem01", reason="public record", actor="cli:test", now=app.state.clock.now()
    )
    assert (await drop_status(app))["open_batch"]["exempted"] == 1
    await report(app, drop)
    assert drop.answers == {"ExemptItem01": "2"}
    still = await contact(app, kept)
    assert still.email == details(5)["email"] and not still.suppressed
    with pytest.raises(cycle.DropCycleError) as late:
        await cycle.exempt(app.state.database, item_id="ExemptItem01", reason="x", actor="t", now=app.state.clock.now())
    assert late.value.code == "not_found"  # its batch is answered


async def test_packaging_no_data_busy_and_rate_limited_answers(app: FastAPI, drop: FakeDrop) -> None:
    drop.script = [("packaging", 7), ("rate_limited", 30), ("busy",)]
    waiting = await pull(app, drop)
    assert (waiting.status, waiting.retry_after) == ("waiting", 7)
    assert (await drop_status(app))["retry_at"] == app.state.clock.now() + timedelta(seconds=7)
    limited = await pull(app, drop)
    assert (limited.status, limited.retry_after) == ("waiting", 30)
    with pytest.raises(cycle.DropCycleError) as busy:
        await pull(app, drop)
    assert busy.value.code == "drop_refused" and "not complete" in str(busy.value)
    nothing = await pull(app, drop)
    assert nothing.status == "no_data" and "No new consumer request data" in (nothing.message or "")
    state = await drop_status(app)
    assert state["last_pull_at"] == app.state.clock.now() and state["last_error"] is None
    with pytest.raises(cycle.DropCycleError) as refused:
        await pull(app, drop, key="not-the-key")
    assert "API key" in str(refused.value)
    assert (await drop_status(app))["last_error"] == str(refused.value)


async def test_a_refused_upload_is_sent_again_under_new_names(app: FastAPI, factory: Factory, drop: FakeDrop) -> None:
    drop.offer({"Phone": [("RetryItem001", phone_hash("+12025550177"))]})
    await pull(app, drop)
    with pytest.raises(cycle.DropCycleError) as open_batch:
        await pull(app, drop)
    assert open_batch.value.code == "open_batch"
    # A bad header (as DROP would say it): the batch stays open, the attempt counted.
    drop.script = [("upload", 400, "Invalid CSV header. Expected: Id,Status.")]
    with pytest.raises(cycle.DropCycleError) as bad:
        await report(app, drop)
    assert "Invalid CSV header" in str(bad.value)
    assert (await drop_status(app))["open_batch"]["upload_attempts"] == 1
    # The plain name was taken by an upload whose answer was lost: DROP refuses it again, 400.
    drop.uploaded_names.add(f"{DATE}_4821_Phone_r1.csv")
    with pytest.raises(cycle.DropCycleError) as duplicate:
        await report(app, drop)
    assert "already uploaded" in str(duplicate.value)
    answered = await report(app, drop)
    assert answered["files"] == [f"{DATE}_4821_Phone_r2.csv"] and drop.answers == {"RetryItem001": "5"}
    assert (await drop_status(app))["open_batch"] is None
    assert (await chain_ok(app)).ok


async def test_an_answer_drop_already_has_completes_the_batch(app: FastAPI, drop: FakeDrop) -> None:
    drop.offer({"Email": [("TakenItem001", email_hash("gone@away.example"))]})
    await pull(app, drop)
    drop.pending = None  # DROP took the answers (ours was lost on the way back): 409 on upload
    answered = await report(app, drop)
    assert answered["status"] == "reported"
    assert (await drop_status(app))["open_batch"] is None


async def test_a_withdrawn_request_lifts_only_what_drop_put_in(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, drop: FakeDrop
) -> None:
    first = await factory.contact(business_name="Twin Oaks A", **{**details(6), "phone": SHARED_PHONE})
    second = await factory.contact(business_name="Twin Oaks B", **{**details(7), "phone": SHARED_PHONE})
    await factory.suppress("email", details(7)["email"], reason="opt_out")  # the person's own opt-out
    drop.offer({"Phone": [("LiftedItem01", phone_hash(SHARED_PHONE))]})
    await pull(app, drop)
    await report(app, drop)
    assert (await contact(app, first)).suppressed and (await contact(app, second)).suppressed

    drop.offer(
        {}, removed=[("LiftedItem01", phone_hash(SHARED_PHONE), "Phone"), ("UnknownItem1", "x" * 43 + "=", "Email")]
    )
    lifted = await pull(app, drop)
    assert (lifted.status, lifted.items, lifted.removed, lifted.lifted) == ("downloaded", 0, 2, 1)
    assert (await drop_status(app))["open_batch"] is None  # nothing to answer for removals
    assert not (await contact(app, first)).suppressed
    assert (await contact(app, second)).suppressed  # its own opt-out stays
    assert ("phone_hash", phone_hash(SHARED_PHONE), "drop_opt_out") not in await entries(app)
    assert "drop.lifted" in await audit_kinds(app)
    buyer_account = await factory.account(credits=10)
    assert (await client.post(f"/api/v1/contacts/{first}/reveal", headers=buyer_account.headers())).status_code == 200
