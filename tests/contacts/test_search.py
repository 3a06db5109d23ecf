"""D13: one engine behind GET and POST search, typo tolerance, prefixes, filters, stable pages."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI

from tests.factories import Factory, details
from vpx.contacts.search import backend_for, postings


async def test_get_and_post_share_one_envelope(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    await factory.demo(300)
    got = await client.get("/api/v1/contacts/search", params={"q": "dental", "limit": 5}, headers=account.headers("ro"))
    posted = await client.post(
        "/api/v1/contacts/search", json={"query": "dental", "limit": 5}, headers=account.headers("ro")
    )
    assert got.status_code == posted.status_code == 200
    assert got.json() == posted.json()
    body = got.json()
    assert set(body) == {"contacts", "total", "limit", "offset", "exact", "interpreted"}
    assert body["interpreted"] == {"q": "dental", "city": None, "state": None, "postal_code": None, "dropped": []}
    assert body["limit"] == 5 and body["offset"] == 0 and body["total"] >= 5
    preview = body["contacts"][0]
    assert set(preview) == {
        "id",
        "business_name",
        "city",
        "state",
        "industry",
        "preview",
        "reveal_cost",
        "has_phone",
        "has_email",
        "has_website",
        "has_address",
        "email_deliverable",
    }
    assert preview["preview"] is True and preview["id"].startswith("ct_")
    assert "phone" not in preview and "email" not in preview


@pytest.mark.parametrize(
    ("query", "expected_name"),
    [
        ("plumbng", "Zebulon Plumbing Works"),  # a letter missing
        ("zebulom plumbing", "Zebulon Plumbing Works"),  # a letter wrong
        ("zeublon", "Zebulon Plumbing Works"),  # two letters swapped
        ("quintessental orchard", "Quintessential Orchards"),  # long word, a letter missing
        ("zebul", "Zebulon Plumbing Works"),  # a prefix
    ],
)
async def test_one_typo_finds_the_business_in_the_top_ten(
    client: httpx.AsyncClient, factory: Factory, query: str, expected_name: str
) -> None:
    account = await factory.account()
    await factory.demo(800)
    await factory.contact(business_name="Zebulon Plumbing Works", city="Boise", state="ID", phone="+12085550199")
    await factory.contact(
        business_name="Quintessential Orchards", city="Yakima", state="WA", industry="agriculture", phone="+15095550111"
    )
    response = await client.get("/api/v1/contacts/search", params={"q": query}, headers=account.headers("ro"))
    assert response.status_code == 200
    names = [c["business_name"] for c in response.json()["contacts"][:10]]
    assert expected_name in names


async def test_filters_alone_and_combined(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    await factory.demo(2400)  # every vertical in every state
    headers = account.headers("ro")
    for params in (
        {"state": "CA"},
        {"industry": "dental"},
        {"state": "TX", "industry": "legal"},
        {"q": "law", "state": "NY"},
        {"city": "houston"},
        {"specialty": "oral surgery"},
        {"license_type": "c-36 plumbing"},
    ):
        response = await client.get("/api/v1/contacts/search", params={**params, "limit": 100}, headers=headers)
        assert response.status_code == 200, params
        contacts = response.json()["contacts"]
        assert contacts, params
        for contact in contacts:
            if "state" in params:
                assert contact["state"] == params["state"]
            if "industry" in params:
                assert contact["industry"] == params["industry"]
            if "city" in params:
                assert contact["city"].lower() == params["city"]
    lower = await client.get("/api/v1/contacts/search", params={"state": "ca"}, headers=headers)
    assert lower.status_code == 200 and all(c["state"] == "CA" for c in lower.json()["contacts"])


async def test_specialty_and_license_filters_match_the_revealed_record(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account(credits=10)
    await factory.demo(300)
    response = await client.get(
        "/api/v1/contacts/search", params={"specialty": "orthodontics", "limit": 3}, headers=account.headers()
    )
    first = response.json()["contacts"][0]["id"]
    revealed = (await client.post(f"/api/v1/contacts/{first}/reveal", headers=account.headers())).json()
    assert revealed["specialty"] == "Orthodontics"


async def test_pages_never_overlap_or_skip_and_total_is_right(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    await factory.demo(1500)
    headers = account.headers("ro")
    for params in ({"q": "co"}, {"state": "CA"}):
        first = await client.get("/api/v1/contacts/search", params={**params, "limit": 100}, headers=headers)
        total = first.json()["total"]
        assert total > 30
        seen: list[str] = []
        offset = 0
        while offset < total:
            page = await client.get(
                "/api/v1/contacts/search", params={**params, "limit": 7, "offset": offset}, headers=headers
            )
            assert page.json()["total"] == total
            seen += [c["id"] for c in page.json()["contacts"]]
            offset += 7
        assert len(seen) == total == len(set(seen))


async def test_default_limit_is_25(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    await factory.demo(100)
    body = (await client.get("/api/v1/contacts/search", headers=account.headers("ro"))).json()
    assert body["limit"] == 25 and len(body["contacts"]) == 25 and body["total"] == 100


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"limit": "0"}, "limit"),
        ({"limit": "101"}, "limit"),
        ({"limit": "-1"}, "limit"),
        ({"limit": "abc"}, "limit"),
        ({"offset": "-3"}, "offset"),
        ({"state": "ZZ"}, "state"),
        ({"industry": "space-mining"}, "industry"),
        ({"q": "x" * 201}, "q"),
    ],
)
async def test_invalid_parameters_are_422_never_clamped(
    client: httpx.AsyncClient, factory: Factory, params: dict[str, str], field: str
) -> None:
    account = await factory.account()
    response = await client.get("/api/v1/contacts/search", params=params, headers=account.headers("ro"))
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == "invalid_parameters"
    assert [e["field"] for e in body["errors"]] == [field]


async def test_post_search_rejects_unknown_fields_and_bad_json(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    unknown = await client.post("/api/v1/contacts/search", json={"qeury": "x"}, headers=account.headers("ro"))
    assert unknown.status_code == 422 and unknown.json()["errors"][0]["field"] == "qeury"
    broken = await client.post(
        "/api/v1/contacts/search",
        content=b"{not json",
        headers={**account.headers("ro"), "Content-Type": "application/json"},
    )
    assert broken.status_code == 400 and broken.json()["code"] == "malformed_request"
    wrong_type = await client.post(
        "/api/v1/contacts/search",
        content=b"query=x",
        headers={**account.headers("ro"), "Content-Type": "application/x-www-form-urlencoded"},
    )
    assert wrong_type.status_code == 400 and wrong_type.json()["code"] == "malformed_request"


async def test_strange_queries_never_fail(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    await factory.demo(100)
    for q in ['"', "*", "AND OR NOT", "name:foo", "(((", "-", "ñandú café", "12345", "a", "😀", "'; DROP TABLE x"]:
        response = await client.get("/api/v1/contacts/search", params={"q": q}, headers=account.headers("ro"))
        assert response.status_code == 200, q


async def test_deactivated_contacts_are_out_of_search(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    await factory.contacts(
        [
            {
                "business_name": "Gone Dental",
                "city": "Reno",
                "state": "NV",
                "industry": "dental",
                "status": "deactivated",
            },
            {"business_name": "Here Dental", "city": "Reno", "state": "NV", "industry": "dental"},
        ]
    )
    body = (await client.get("/api/v1/contacts/search", params={"q": "dental"}, headers=account.headers("ro"))).json()
    assert [c["business_name"] for c in body["contacts"]] == ["Here Dental"] and body["total"] == 1


async def test_pages_of_one_result_set_stay_consistent_while_contacts_are_added(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    """Pages come from one list of matches (kept a minute): a contact added between two page requests
    cannot shift the later pages, so none overlaps or skips (it appears once the list is refreshed)."""
    account = await factory.account()
    headers = account.headers("ro")
    await factory.contacts(
        [{"business_name": f"Summit Dental {i}", "city": "Reno", "state": "NV", "industry": "dental"} for i in range(4)]
        + [{"business_name": f"Reno Clinic {i}", "city": "Reno", "state": "NV", "industry": "dental"} for i in range(4)]
    )
    params = {"q": "dental", "state": "NV", "limit": 3}
    first = (await client.get("/api/v1/contacts/search", params=params, headers=headers)).json()
    assert first["total"] == 8
    await factory.contact(business_name="Summit Dental New", city="Reno", state="NV", industry="dental")
    seen = [c["business_name"] for c in first["contacts"]]
    for offset in (3, 6):
        page = (
            await client.get("/api/v1/contacts/search", params={**params, "offset": offset}, headers=headers)
        ).json()
        assert page["total"] == 8
        seen += [c["business_name"] for c in page["contacts"]]
    assert len(seen) == len(set(seen)) == 8
    assert seen[:4] == [f"Summit Dental {i}" for i in range(4)]  # every word in the name first


async def test_answers_are_the_same_before_and_after_the_changes_are_folded_in(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    """A search applies the changes not yet folded into the postings itself (vpx.contacts.search.
    postings): the pages and totals it gives before the merge are the ones it gives after."""
    account = await factory.account()
    ids = await factory.demo(600)
    headers = account.headers("ro")
    await factory.deactivate(ids[5])
    await factory.rename(ids[7], "Zebulon Plumbing Works")
    questions = [{"q": "co"}, {"q": "co", "state": "CA"}, {"q": "plumbng"}, {"q": "group"}, {"state": "TX"}, {}]

    async def every_page(params: dict[str, str]) -> tuple[int, list[str]]:
        seen: list[str] = []
        total, offset = 1, 0
        while offset < total:
            body = (
                await client.get(
                    "/api/v1/contacts/search", params={**params, "limit": 97, "offset": offset}, headers=headers
                )
            ).json()
            total = body["total"]
            seen += [c["id"] for c in body["contacts"]]
            offset += 97
        return total, seen

    pending = [await every_page(q) for q in questions]
    assert all(total > 0 and len(seen) == total == len(set(seen)) for total, seen in pending)
    assert ids[5] not in pending[-1][1] and ids[7] in pending[2][1]
    async with app.state.database.write_sessions() as session, session.begin():
        merged, _ = await postings.merge(session)
    assert merged >= 600
    app.state.search = backend_for(app.state.database.dialect).refresh_from(app.state.database)
    assert [await every_page(q) for q in questions] == pending


async def test_the_envelope_written_directly_is_the_models_json(app: FastAPI, factory: Factory) -> None:
    """The search answer is written from remembered preview JSON (vpx.contacts.service): byte for byte
    the models' JSON, with accents and quotes, every price tier, and a preview whose price changes."""
    from vpx.contacts import service
    from vpx.contacts.search import SearchQuery

    ids = await factory.demo(120)
    odd = await factory.contacts(
        [
            {"business_name": 'Café "Zoë" Dental', "city": "San José", "state": "CA", "industry": "dental"}
            | details(1),
            {"business_name": "Back\\slash Dental", "city": "Reno", "state": "NV", "industry": "dental"} | details(2),
        ]
    )
    for contact_id, level in zip([*odd, *ids[:3]], ["hot", "warm", "cold", "hot", None], strict=True):
        await factory.set_intent(contact_id, level)
    settings, search, database = app.state.settings, app.state.search, app.state.database
    questions = [SearchQuery(text="dental", limit=100), SearchQuery(text="zoe"), SearchQuery(state="CA", text="co")]
    for round_ in range(2):
        if round_:
            await factory.set_intent(odd[0], "cold")  # the same row with another price
        for question in questions:
            async with database.read_engine.connect() as connection:
                written = await service.search_contacts_json(
                    connection, backend=search, query=question, settings=settings
                )
                model = await service.search_contacts(connection, backend=search, query=question, settings=settings)
            assert written == model.model_dump_json().encode()
            assert model.contacts or question.text == "zoe"
    async with database.read_engine.connect() as connection:
        zoe = await service.search_contacts(connection, backend=search, query=questions[1], settings=settings)
    assert zoe.contacts[0].reveal_cost == settings.price_cold


async def test_first_pages_of_every_size_agree_with_the_later_pages(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    """A first page is read on its own (one pass on PostgreSQL) and remembered with at least 25 ids;
    a larger first page asked next reads again, and every first page is the start of what the later
    pages (from the kept matches) continue, in tier order."""
    account = await factory.account()
    await factory.demo(600)
    headers = account.headers("ro")
    questions = [{"q": "co"}, {"q": "co", "state": "CA"}, {"q": "group"}, {"q": "dentl"}, {"license_type": "business"}]
    for question in questions:
        walk: list[str] = []
        for offset in range(0, 140, 10):
            params = {**question, "limit": 10, "offset": offset}
            walk += [
                c["id"]
                for c in (await client.get("/api/v1/contacts/search", params=params, headers=headers)).json()[
                    "contacts"
                ]
            ]
        assert len(walk) >= 5, question
        for limit in (3, 40, 100, 5):
            body = (
                await client.get("/api/v1/contacts/search", params={**question, "limit": limit}, headers=headers)
            ).json()
            assert [c["id"] for c in body["contacts"]] == walk[:limit], (question, limit)
            assert body["total"] >= len(walk)


async def test_exclude_dnc_leaves_out_phones_that_may_not_be_called(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    """`exclude_dnc=true` leaves out the contacts whose phone the Do-Not-Call registry lists or whose
    person asked not to be called (contacts.phone_dnc listed or requested: the postings' #dnc term),
    keeps those not screened yet (unknown), those clear and those without a phone; before and after
    the changes are folded in, with words and without."""
    from sqlalchemy import update

    from vpx.models import Contact

    account = await factory.account()
    headers = account.headers("ro")
    states = ["listed", "requested", "unknown", "clear", None]
    ids = [
        await factory.contact(business_name=f"Kestrel Roofing {i}", city="Reno", state="NV", **details(i))
        for i in range(len(states))
    ]
    for contact_id, state in zip(ids, states, strict=True):
        async with app.state.database.write_sessions() as session, session.begin():
            values = {"phone_dnc": state} if state else {"phone": None}
            await session.execute(update(Contact).where(Contact.id == int(contact_id[3:])).values(**values))

    async def found(**params: str) -> list[str]:
        body = (await client.get("/api/v1/contacts/search", params=params, headers=headers)).json()
        assert body["total"] == len(body["contacts"])
        return sorted(c["id"] for c in body["contacts"])

    kept = sorted(ids[2:])
    for _ in range(2):
        assert await found(q="kestrel", exclude_dnc="true") == kept
        assert await found(q="kestrel", exclude_dnc="false") == sorted(ids)
        assert await found(state="NV", exclude_dnc="true") == kept
        posted = await client.post(
            "/api/v1/contacts/search", json={"q": "kestrel", "exclude_dnc": True}, headers=headers
        )
        assert sorted(c["id"] for c in posted.json()["contacts"]) == kept
        async with app.state.database.write_sessions() as session, session.begin():
            await postings.merge(session)
    # A phone that becomes listed later leaves the answer, one that is cleared comes back.
    async with app.state.database.write_sessions() as session, session.begin():
        await session.execute(update(Contact).where(Contact.id == int(ids[2][3:])).values(phone_dnc="listed"))
        await session.execute(update(Contact).where(Contact.id == int(ids[0][3:])).values(phone_dnc="clear"))
    assert await found(q="kestrel", exclude_dnc="true") == sorted([ids[0], ids[3], ids[4]])
