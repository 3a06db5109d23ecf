"""The revealed contacts page counts those suppressed since they were bought and offers them as a CSV
(contact, business, reason class, when; never the entry's note), for the signed-in account only."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest

from tests.dashboard.conftest import Browser
from tests.factories import Factory
from vpx.clock import FixedClock
from vpx.deliverability import service as deliverability_service
from vpx.suppression import service as suppression_service
from vpx.suppression.service import SuppressionKind, SuppressionReason

pytestmark = pytest.mark.asyncio


async def reveal(web: Browser, contact: str) -> None:
    done = await web.submit(
        f"/dashboard/contacts/{contact}", f"/dashboard/contacts/{contact}/reveal", {"expected_price": "1"}
    )
    assert done.status_code == 303, done.text


async def suppress(factory: Factory, kind: SuppressionKind, value: str, reason: SuppressionReason) -> None:
    async with factory.database.write_sessions() as session, session.begin():
        await suppression_service.add_suppression(
            session,
            kind=kind,
            value=value,
            reason=reason,
            note="=HYPERLINK(the caller's own words)",
            now=factory.clock.now(),
        )


async def test_the_count_and_the_csv_of_suppressed_contacts(
    web: Browser, other_web: Browser, factory: Factory, clock: FixedClock
) -> None:
    await web.sign_up()
    await other_web.sign_up()
    plumber = await factory.contact()
    dentist = await factory.contact(
        business_name="=Bright Smile Dental", phone="+15125550100", email="hello@brightsmile.example"
    )
    kept = await factory.contact(business_name="Kept Roofing", phone="+13035550155", email="office@kept.example")
    for contact in (plumber, dentist, kept):
        await reveal(web, contact)
    await reveal(other_web, kept)
    page = (await web.get("/dashboard/revealed")).text
    assert "<strong>0</strong> contacts you revealed have been suppressed" in page

    await suppress(factory, SuppressionKind.phone, "+13035550100", SuppressionReason.opt_out)
    clock.set(clock.now() + timedelta(minutes=5))
    await suppress(factory, SuppressionKind.contact, dentist, SuppressionReason.fcra)
    page = (await web.get("/dashboard/revealed")).text
    assert "<strong>2</strong> contacts you revealed have since been suppressed" in page
    assert 'href="/dashboard/exports/suppressed.csv"' in page
    assert "<strong>0</strong>" in (await other_web.get("/dashboard/revealed")).text

    download = await web.get("/dashboard/exports/suppressed.csv")
    assert download.status_code == 200
    assert download.headers["content-type"] == "text/csv; charset=utf-8; header=present"
    assert download.headers["content-disposition"] == 'attachment; filename="suppressed.csv"'
    assert "HYPERLINK" not in download.text and "own words" not in download.text
    rows = list(csv.reader(io.StringIO(download.text, newline="")))
    assert rows == [
        ["contact_id", "business_name", "reason", "suppressed_at"],
        [dentist, "'=Bright Smile Dental", "fcra", "2026-11-15T12:05:00Z"],  # newest first; no formula
        [plumber, "Acme Plumbing LLC", "opt_out", "2026-11-15T12:00:00Z"],
    ]
    assert download.text.endswith("\r\n")
    other = await other_web.get("/dashboard/exports/suppressed.csv")
    assert other.text == "contact_id,business_name,reason,suppressed_at\r\n"


async def test_signed_out_browsers_get_no_csv(web: Browser) -> None:
    response = await web.get("/dashboard/exports/suppressed.csv")
    assert response.status_code == 303 and response.headers["location"].startswith("/dashboard/login")


async def test_a_suppressed_contact_you_bought_is_marked_in_the_list_and_on_its_page(
    web: Browser, factory: Factory
) -> None:
    """Issue 39: the mark `GET /contacts/{id}` gives its buyers (reason, since when) shows in the list
    and on the contact's page, with the email's deliverability in words."""
    await web.sign_up()
    opted_out = await factory.contact()
    kept = await factory.contact(business_name="Kept Roofing", phone="+13035550155", email="office@kept.example")
    for contact in (opted_out, kept):
        await reveal(web, contact)
    async with factory.database.write_sessions() as session, session.begin():
        await deliverability_service.record_domain_answers(
            session, {"kept.example": "mx_found", "acmeplumbing.example": "no_mx"}, now=factory.clock.now(),
            expires_at=factory.clock.now(),
        )  # fmt: skip
    await deliverability_service.check_new_addresses(factory.database, now=factory.clock.now())
    await suppress(factory, SuppressionKind.phone, "+13035550100", SuppressionReason.opt_out)
    listed = (await web.get("/dashboard/revealed")).text
    marked = listed.split(f'data-contact-id="{opted_out}"', 1)[1].split("</tr>", 1)[0]
    assert 'data-testid="suppressed-mark">Suppressed 2026-11-15: opted out<' in marked
    assert "(no mail server)" in marked
    other = listed.split(f'data-contact-id="{kept}"', 1)[1].split("</tr>", 1)[0]
    assert "suppressed-mark" not in other and "(deliverable)" in other
    page = (await web.get(f"/dashboard/contacts/{opted_out}")).text
    assert "On the suppression list since 2026-11-15 12:00 UTC (opted out)" in page
    assert 'data-testid="email-status">(no mail server)<' in page
    assert "suppressed-mark" not in (await web.get(f"/dashboard/contacts/{kept}")).text
