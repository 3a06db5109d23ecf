"""Contacts in the dashboard: search with filters and previews, the price shown before paying (D9),
charge once (D10), refusals (D2, D15) as pages, revealed contacts and their CSV (D30)."""

from __future__ import annotations

import csv
import io
from decimal import Decimal

import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from tests.conftest import START
from tests.dashboard.conftest import Browser
from tests.factories import Factory, details
from vpx.credits import service as credit_service
from vpx.models import Reveal, SuppressionHit

pytestmark = pytest.mark.asyncio


def balance_of(page: str) -> str:
    return page.split('data-testid="balance">', 1)[1].split("<", 1)[0]


async def reveal(web: Browser, contact: str, price: str = "1") -> object:
    return await web.submit(
        f"/dashboard/contacts/{contact}", f"/dashboard/contacts/{contact}/reveal", {"expected_price": price}
    )


async def reveals(app: FastAPI) -> int:
    async with app.state.database.read_sessions() as session:
        return int(await session.scalar(select(func.count()).select_from(Reveal)) or 0)


async def test_search_shows_previews_with_their_price(web: Browser, factory: Factory) -> None:
    await web.sign_up()
    cheap = await factory.contact()
    dear = await factory.contact(business_name="Rapid Plumbing Co", phone="+13035550123")
    await factory.set_intent(dear, "warm")
    await factory.contact(
        business_name="Quiet Dental",
        industry="dental",
        phone="+13035550124",
        specialty="Hygiene",
        license_type="Dentist",
    )
    page = (await web.get("/dashboard/contacts?q=plumbng&state=CO")).text
    assert "2 matches" in page
    assert f'data-contact-id="{cheap}"' in page and f'data-contact-id="{dear}"' in page
    assert "Quiet Dental" not in page
    assert ">1 credit<" in page and ">3 credits<" in page
    assert "+13035550100" not in page and "acmeplumbing.example" not in page


async def test_search_form_alone_and_bad_filters(web: Browser) -> None:
    await web.sign_up()
    empty = await web.get("/dashboard/contacts")
    assert empty.status_code == 200 and "matches" not in empty.text
    bad = await web.get("/dashboard/contacts?state=ZZ&industry=spaceships")
    assert bad.status_code == 422
    assert 'id="state-error"' in bad.text and 'id="industry-error"' in bad.text
    for path in ("/dashboard/contacts?q=x&page=0", "/dashboard/revealed?after=99999999999999999999"):
        refused = await web.get(path)
        assert refused.status_code == 422 and refused.headers["content-type"].startswith("text/html"), path


async def test_reveal_after_seeing_the_price(web: Browser, app: FastAPI, factory: Factory) -> None:
    await web.sign_up()
    contact = await factory.contact()
    preview = (await web.get(f"/dashboard/contacts/{contact}")).text
    assert 'data-testid="price">1 credit<' in preview and "Reveal for 1 credit" in preview
    assert "+13035550100" not in preview and balance_of(preview) == "25"
    done = await reveal(web, contact)
    assert done.status_code == 303 and done.headers["location"] == f"/dashboard/contacts/{contact}?revealed=1"
    page = (await web.get(done.headers["location"])).text
    assert "+13035550100" in page and "info@acmeplumbing.example" in page and "1 Main St" in page
    assert "1 credit charged" in page and balance_of(page) == "24"
    # D10: a second reveal costs nothing.
    again = await reveal(web, contact)
    assert again.status_code == 303
    assert balance_of((await web.get("/dashboard/credits")).text) == "24" and await reveals(app) == 1


async def test_a_changed_price_is_shown_again_and_nothing_charged(web: Browser, app: FastAPI, factory: Factory) -> None:
    await web.sign_up()
    contact = await factory.contact()
    await web.get(f"/dashboard/contacts/{contact}")  # seen at 1 credit
    await factory.set_intent(contact, "hot")
    response = await reveal(web, contact, price="1")
    assert response.status_code == 409
    assert "now 6 credits. Nothing was charged." in response.text and "Reveal for 6 credits" in response.text
    assert await reveals(app) == 0 and balance_of(response.text) == "25"
    assert (await reveal(web, contact, price="6")).status_code == 303


async def test_not_enough_credits_is_a_page_and_charges_nothing(web: Browser, app: FastAPI, factory: Factory) -> None:
    await web.sign_up()
    account_id = await web.account_id()
    async with app.state.database.write_sessions() as session, session.begin():
        await credit_service.spend(
            session,
            account_id=account_id,
            amount=Decimal(25),
            kind="reveal",
            reference=None,
            description="spent elsewhere",
            now=START,
            settings=app.state.settings,
        )
    contact = await factory.contact()
    preview = (await web.get(f"/dashboard/contacts/{contact}")).text
    assert "balance is too low" in preview
    forced = await reveal(web, contact)
    assert forced.status_code == 402 and "Insufficient credits" in forced.text
    assert forced.headers["content-type"].startswith("text/html")
    assert await reveals(app) == 0


async def test_suppressed_contact_is_refused_and_audited(web: Browser, app: FastAPI, factory: Factory) -> None:
    await web.sign_up()
    contact = await factory.contact()
    await factory.suppress("phone", "+13035550100", reason="fcra")
    response = await reveal(web, contact)
    assert response.status_code == 451 and "suppression list" in response.text
    assert "+13035550100" not in response.text
    assert await reveals(app) == 0
    async with app.state.database.read_sessions() as session:
        assert await session.scalar(select(func.count()).select_from(SuppressionHit)) == 1


async def test_unknown_contacts_and_pages_are_html_404(web: Browser) -> None:
    await web.sign_up()
    for path in ("/dashboard/contacts/ct_999999", "/dashboard/contacts/nonsense", "/dashboard/nowhere"):
        response = await web.get(path)
        assert response.status_code == 404, path
        assert response.headers["content-type"].startswith("text/html")
    assert (await web.get("/dashboard/")).headers["location"] == "/dashboard"


async def test_revealed_contacts_list_filters_and_csv(web: Browser, factory: Factory) -> None:
    await web.sign_up()
    plumber = await factory.contact()
    dentist = await factory.contact(
        business_name="Bright Smile Dental", city="Austin", state="TX", industry="dental", phone="+15125550100"
    )
    await factory.contact(business_name="Unrevealed Roofing", phone="+13035550155")
    for contact in (plumber, dentist):
        await reveal(web, contact)
    page = (await web.get("/dashboard/revealed")).text
    assert "+13035550100" in page and "+15125550100" in page and "Unrevealed Roofing" not in page
    filtered = (await web.get("/dashboard/revealed?state=TX")).text
    assert "Bright Smile Dental" in filtered and "Acme Plumbing" not in filtered
    assert 'href="/dashboard/exports/contacts.csv?state=TX"' in filtered
    download = await web.get("/dashboard/exports/contacts.csv?state=TX")
    assert download.headers["content-type"] == "text/csv; charset=utf-8; header=present"
    rows = list(csv.DictReader(io.StringIO(download.text, newline="")))
    assert [(r["id"], r["phone"]) for r in rows] == [(dentist, "+15125550100")]
    assert (await web.get("/dashboard/exports/contacts.csv?industry=spaceships")).status_code == 422


async def test_revealed_contacts_page_through(web: Browser, factory: Factory, monkeypatch: pytest.MonkeyPatch) -> None:
    from vpx.dashboard import contacts as contact_pages

    monkeypatch.setattr(contact_pages, "REVEALED_PAGE", 2)
    await web.sign_up()
    ids = await factory.contacts(
        [
            {"business_name": f"Page Co {n}", "city": "Boise", "state": "ID", "industry": "legal"} | details(n)
            for n in range(3)
        ]
    )
    for contact in ids:
        await reveal(web, contact)
    first = (await web.get("/dashboard/revealed")).text
    assert f'data-contact-id="{ids[0]}"' in first and f'data-contact-id="{ids[2]}"' not in first
    after = first.split("after=", 1)[1].split('"', 1)[0]
    second = (await web.get(f"/dashboard/revealed?after={after}")).text
    assert f'data-contact-id="{ids[2]}"' in second and f'data-contact-id="{ids[0]}"' not in second


async def test_the_search_says_how_it_read_the_question(web: Browser, factory: Factory) -> None:
    """Issue 39: the words searched and the place read from them, as the API's `interpreted`."""
    await web.sign_up()
    await factory.contact()
    page = (await web.get("/dashboard/contacts?q=plumbng+in+denver+co")).text
    assert 'data-testid="interpreted">Read as: the words “plumbng”, in Denver, CO.<' in page
    filtered = (await web.get("/dashboard/contacts?q=plumbng&state=CO")).text
    assert 'data-testid="interpreted">Read as: the words “plumbng”, CO.<' in filtered


async def test_a_preview_says_what_a_reveal_buys(web: Browser, factory: Factory) -> None:
    """The fields a contact has, and the price of those only (a quarter of the tier's price each)."""
    await web.sign_up()
    everything = await factory.contact()
    phone_only = await factory.contact(
        business_name="Phone Only Plumbing", phone="+13035550177", email=None, website=None, street=None
    )
    nothing = await factory.contact(
        business_name="Nameonly Builders", phone=None, email=None, website=None, street=None
    )
    page = (await web.get(f"/dashboard/contacts/{everything}")).text
    assert 'data-testid="buys">Revealing shows its phone, email, website and street address (the email is not' in page
    page = (await web.get(f"/dashboard/contacts/{phone_only}")).text
    assert 'data-testid="buys">Revealing shows its phone: a quarter' in page
    assert 'data-testid="price">0.25 credit' in page
    page = (await web.get(f"/dashboard/contacts/{nothing}")).text
    assert "no phone, email, website or street address to reveal" in page and 'data-testid="price">0 credits' in page
