"""contacts.csv (D30): the account's revealed contacts, full details, RFC 4180, search filters (D13)."""

from __future__ import annotations

import csv
import io

import httpx
import pytest
from sqlalchemy import update

from tests import factories
from tests.factories import Factory
from vpx.contacts import pricing
from vpx.deliverability import service as deliverability_service
from vpx.exports import contacts as contact_export
from vpx.models import Contact
from vpx.suppression import service as suppression_service
from vpx.suppression.service import SuppressionKind, SuppressionReason

pytestmark = pytest.mark.asyncio

URL = "/api/v1/exports/contacts.csv"


def parse(response: httpx.Response) -> list[dict[str, str]]:
    assert response.status_code == 200, response.text
    return list(csv.DictReader(io.StringIO(response.content.decode("utf-8"), newline="")))


async def reveal(client: httpx.AsyncClient, account: factories.TestAccount, *contact_ids: str) -> None:
    for contact_id in contact_ids:
        response = await client.post(f"/api/v1/contacts/{contact_id}/reveal", headers=account.headers())
        assert response.status_code == 200, response.text


async def test_export_has_the_revealed_contacts_with_full_details(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    revealed = await factory.contact()
    await factory.contact(business_name="Never Revealed Roofing", phone="+13035550199")
    await reveal(client, account, revealed)
    response = await client.get(URL, headers=account.headers())
    assert response.headers["content-type"] == "text/csv; charset=utf-8; header=present"
    assert response.headers["content-disposition"] == 'attachment; filename="contacts.csv"'
    assert response.content.startswith(b"id,business_name,phone,email,website,street,city,state,")
    assert b"\r\n" in response.content and response.content.endswith(b"\r\n")
    rows = parse(response)
    assert rows == [
        {
            "id": revealed,
            "business_name": "Acme Plumbing LLC",
            "phone": "+13035550100",
            "email": "info@acmeplumbing.example",
            "website": "https://acmeplumbing.example",
            "street": "1 Main St",
            "city": "Denver",
            "state": "CO",
            "postal_code": "80202",
            "country": "US",
            "industry": "home-services",
            "specialty": "Plumbing",
            "license_type": "C-36 Plumbing Contractor",
            "license_number": "CO-123",
            "license_state": "CO",
            "sources": rows[0]["sources"],
            "revealed_at": "2026-11-15T12:00:00Z",
            "credits_charged": "1",
            "email_status": rows[0]["email_status"],
            "bad_fields": "",
            "suppressed_reason": "",
            "suppressed_since": "",
        }
    ]
    assert rows[0]["sources"].startswith("registry:test-")


async def test_a_contact_suppressed_since_is_marked_with_its_email_status_and_bad_values_withheld(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    """The CSV shows each contact as `GET /contacts/{id}` shows it to its buyer (issue 39): the
    suppression mark of one put on the list since, its email's status, values found bad withheld."""
    account = await factory.account()
    opted_out = await factory.contact()
    fine = await factory.contact(business_name="Kept Roofing", phone="+13035550155", email="office@kept.example")
    await reveal(client, account, opted_out, fine)
    async with factory.database.write_sessions() as session, session.begin():
        await deliverability_service.record_domain_answers(
            session, {"kept.example": "mx_found"}, now=factory.clock.now(), expires_at=factory.clock.now()
        )
    await deliverability_service.check_new_addresses(factory.database, now=factory.clock.now())
    async with factory.database.write_sessions() as session, session.begin():
        await suppression_service.add_suppression(
            session, kind=SuppressionKind.phone, value="+13035550100", reason=SuppressionReason.opt_out, note="",
            now=factory.clock.now(),
        )  # fmt: skip
        bad = pricing.FIELD_BITS["phone"] | pricing.FIELD_BITS["address"]
        await session.execute(update(Contact).where(Contact.id == int(fine[3:])).values(bad_fields=bad))
    rows = {row["id"]: row for row in parse(await client.get(URL, headers=account.headers()))}
    marked, kept = rows[opted_out], rows[fine]
    assert (marked["suppressed_reason"], marked["suppressed_since"]) == ("opt_out", "2026-11-15T12:00:00Z")
    assert marked["phone"] == "+13035550100" and marked["bad_fields"] == ""
    assert (kept["suppressed_reason"], kept["suppressed_since"]) == ("", "")
    assert kept["email_status"] == "mx_found" and kept["email"] == "office@kept.example"
    assert (kept["phone"], kept["street"], kept["postal_code"], kept["bad_fields"]) == ("", "", "", "phone; address")
    # The API says the same of each.
    shown = (await client.get(f"/api/v1/contacts/{opted_out}", headers=account.headers())).json()
    assert shown["suppressed"] == {"reason": "opt_out", "since": "2026-11-15T12:00:00Z"}
    assert (await client.get(f"/api/v1/contacts/{fine}", headers=account.headers())).json()["phone"] is None


async def test_fields_are_quoted_per_rfc_4180_and_utf8(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    name, street = 'Smith, "Bob" & Søns Plumbing', "Zoë's Café\r\nSuite 2, Floor 3"
    contact = await factory.contact(business_name=name, street=street)
    await reveal(client, account, contact)
    response = await client.get(URL, headers=account.headers())
    raw = response.content.decode("utf-8")
    # RFC 4180: a field with a comma, quote or line break is quoted; quotes inside are doubled.
    assert '"Smith, ""Bob"" & Søns Plumbing"' in raw
    assert '"Zoë\'s Café\r\nSuite 2, Floor 3"' in raw
    row = parse(response)[0]
    assert row["business_name"] == name and row["street"] == street


async def test_cells_that_a_spreadsheet_would_run_are_neutralised(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    contact = await factory.contact(business_name='=HYPERLINK("http://evil.example","x")', street="@SUM(1)")
    await reveal(client, account, contact)
    row = parse(await client.get(URL, headers=account.headers()))[0]
    assert row["business_name"].startswith("'=HYPERLINK(")
    assert row["street"] == "'@SUM(1)"
    assert row["phone"] == "+13035550100"


async def test_an_account_without_reveals_gets_the_header_only(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    await factory.contact()
    response = await client.get(URL, headers=account.headers("full"))
    assert response.status_code == 200
    assert response.content == (",".join(contact_export.COLUMNS) + "\r\n").encode()


async def test_another_accounts_reveals_never_appear(client: httpx.AsyncClient, factory: Factory) -> None:
    mine, theirs = await factory.account(), await factory.account()
    shared = await factory.contact()
    only_theirs = await factory.contact(business_name="Their Secret Electric", phone="+13035550111")
    await reveal(client, theirs, shared, only_theirs)
    await reveal(client, mine, shared)
    rows = parse(await client.get(URL, headers=mine.headers()))
    assert [r["id"] for r in rows] == [shared]


async def test_filters_are_the_search_filters(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account(credits=20)
    plumber = await factory.contact()
    dentist = await factory.contact(
        business_name="Bright Smile Dental",
        city="Austin",
        state="TX",
        industry="dental",
        phone="+15125550100",
        specialty="Orthodontics",
        license_type="Dental License",
    )
    lawyer = await factory.contact(
        business_name="Denver Legal Partners",
        industry="legal",
        phone="+13035550177",
        specialty="Estate Planning",
        license_type="Attorney",
    )
    await reveal(client, account, plumber, dentist, lawyer)

    async def ids(**params: str) -> list[str]:
        return [r["id"] for r in parse(await client.get(URL, params=params, headers=account.headers()))]

    assert await ids() == [plumber, dentist, lawyer]
    assert await ids(state="tx") == [dentist]
    assert await ids(city="denver") == [plumber, lawyer]
    assert await ids(industry="legal") == [lawyer]
    assert await ids(q="plumbng") == [plumber]  # typo tolerance, as in search
    assert await ids(q="dent") == [dentist]  # prefix of "dental"
    assert await ids(q="denver legal") == [lawyer]
    assert await ids(specialty="ortho") == [dentist]
    assert await ids(license_type="attorney") == [lawyer]
    assert await ids(q="smile", state="CO") == []


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"state": "ZZ"}, "state"),
        ({"industry": "spaceships"}, "industry"),
        ({"q": "x" * 201}, "q"),
        ({"sate": "CO"}, "sate"),
    ],
)
async def test_bad_filters_are_422_before_any_row(
    client: httpx.AsyncClient, factory: Factory, params: dict[str, str], field: str
) -> None:
    account = await factory.account()
    response = await client.get(URL, params=params, headers=account.headers())
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["errors"][0]["field"] == field


async def test_batches_join_without_gaps_or_repeats(
    client: httpx.AsyncClient, factory: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(contact_export, "BATCH_SIZE", 3)
    account = await factory.account(credits=10)
    contacts = await factory.contacts(
        [
            {"business_name": f"Batch Roofing {n}", "city": "Boise", "state": "ID", "industry": "home-services"}
            for n in range(10)
        ]
    )
    await reveal(client, account, *contacts)
    rows = parse(await client.get(URL, headers=account.headers()))
    assert [r["id"] for r in rows] == contacts
