"""How search reads people's words: plurals read as their singular (never a family name read as
another word), and a trailing "in/near PLACE" read as the city and state searched."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.factories import Factory
from vpx.contacts.normalise import words
from vpx.contacts.search.language import forms, stem
from vpx.contacts.search.places import city_name, place_readings


@pytest.mark.parametrize(
    ("word", "singular"),
    [
        ("dentists", "dentist"),
        ("clinics", "clinic"),
        ("pharmacies", "pharmacy"),
        ("churches", "church"),
        ("attorneys", "attorney"),
        ("businesses", "business"),
        ("boxes", "box"),
        ("plumbers", "plumber"),
    ],
)
def test_a_plural_is_read_as_its_singular(word: str, singular: str) -> None:
    assert stem(word) == singular
    assert singular in forms(word)


@pytest.mark.parametrize(
    "word",
    [
        # Family names whose "singular" is another word (data/no_stem.txt).
        "banks",
        "wells",
        "mills",
        "williams",
        "woods",
        "brooks",
        "stephens",
        # Words that only look plural, or whose singular is another trade.
        "texas",
        "news",
        "glass",
        "analysis",
        "campus",
        "securities",
        "pediatrics",
    ],
)
def test_names_and_words_that_only_look_plural_are_left_alone(word: str) -> None:
    assert stem(word) == word
    assert forms(word) == ()


def test_a_singular_also_matches_a_plural_that_a_prefix_would_not() -> None:
    assert forms("pharmacy") == ("pharmacies",)
    assert forms("dentist") == ()  # "dentist" as a prefix finds "dentists" already


@pytest.mark.parametrize(
    ("question", "rest", "city", "state"),
    [
        ("dentists in austin tx", ["dentists"], "Austin", "TX"),
        ("dentists near Austin, TX", ["dentists"], "Austin", "TX"),
        ("lawyers in texas", ["lawyers"], None, "TX"),
        ("plumbers in san francisco california", ["plumbers"], "San Francisco", "CA"),
        ("pizza in new york", ["pizza"], None, "NY"),  # the state's name, read as the state
        ("hvac phoenix az", ["hvac"], "Phoenix", "AZ"),  # at the end, without "in"
        ("Charleston SC roofers", ["roofers"], "Charleston", "SC"),  # at the start
        ("plumber portland maine", ["plumber"], "Portland", "ME"),
        ("plumbers in st paul mn", ["plumbers"], "St Paul", "MN"),
        ("dentist 78701", ["dentist"], "Austin", "TX"),  # a ZIP code: its city and state
    ],
)
def test_a_place_is_read_before_or_after_the_words(
    question: str, rest: list[str], city: str | None, state: str | None
) -> None:
    first = place_readings(words(question))[0]
    assert list(first.rest) == rest and city_name(first.city) == city and first.state == state


@pytest.mark.parametrize("question", ["dentists near me", "in austin", "plumbers", "austin", "heat pump installation"])
def test_no_place_is_read_where_there_is_none(question: str) -> None:
    assert place_readings(words(question)) == []


async def test_a_place_in_the_words_becomes_the_city_and_state_searched(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account()
    headers = account.headers("ro")
    dentist = {"industry": "dental", "specialty": "General Practice Dentistry", "license_type": "Dentist (DDS)"}
    await factory.contact(business_name="Hill Country Dental", city="Austin", state="TX", **_distinct(1), **dentist)
    await factory.contact(business_name="Bayou Dental", city="Houston", state="TX", **_distinct(2), **dentist)
    await factory.contact(business_name="Boston Dental", city="Denver", state="CO", **_distinct(3), **dentist)
    await factory.contact(
        business_name="Lone Star Law Group",
        city="Dallas",
        state="TX",
        industry="legal",
        specialty="Business Law",
        license_type="Attorney at Law",
        **_distinct(4),
    )

    async def ask(**params: str) -> dict[str, Any]:
        response = await client.get("/api/v1/contacts/search", params=params, headers=headers)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    for question in ("dentists in austin tx", "dentists near Austin, TX", "Dental in Austin, Texas"):
        body = await ask(q=question)
        assert body["interpreted"]["city"] == "Austin" and body["interpreted"]["state"] == "TX", question
        assert [c["business_name"] for c in body["contacts"]] == ["Hill Country Dental"], question
    assert (await ask(q="dentists in austin tx"))["interpreted"] == read("dentists", "Austin", "TX")

    texas = await ask(q="lawyers in texas")
    assert texas["interpreted"] == read("lawyers", None, "TX")
    assert [c["business_name"] for c in texas["contacts"]] == ["Lone Star Law Group"]

    # A name is words, not a place the catalogue does not hold: "Boston Dental" is in Denver.
    boston = await ask(q="Boston Dental")
    assert boston["interpreted"] == read("Boston Dental", None, None)
    assert boston["contacts"][0]["business_name"] == "Boston Dental"

    # The city and state parameters win over a place in the words.
    houston = await ask(q="dentists in austin tx", city="Houston", state="TX")
    assert houston["interpreted"] == read("dentists", "Houston", "TX")
    assert [c["business_name"] for c in houston["contacts"]] == ["Bayou Dental"]

    # A place the catalogue does not know stays in the words, and the answer leaves out what no
    # business matches (said in `dropped`) rather than answer nothing.
    unknown = await ask(q="dentists in atlantis")
    assert unknown["interpreted"] == read("dentists in atlantis", None, None, dropped=["in", "atlantis"])
    assert unknown["total"] == 3


def read(
    q: str, city: str | None, state: str | None, *, postal_code: str | None = None, dropped: list[str] | None = None
) -> dict[str, Any]:
    """An answer's `interpreted` as the API gives it."""
    return {"q": q, "city": city, "state": state, "postal_code": postal_code, "dropped": dropped or []}


def _distinct(number: int) -> dict[str, str]:
    """Contact details of a business of its own (no two test contacts share a phone or a site)."""
    return {
        "phone": f"+1512555{number:04d}",
        "email": f"office@business{number}.example",
        "website": f"https://business{number}.example",
    }


async def test_questions_people_type_find_the_business_they_mean(client: httpx.AsyncClient, factory: Factory) -> None:
    """Words the catalogue does not hold are left out and said to be (`dropped`, `total` counting what
    matches the rest); a place anywhere in the words, a ZIP code or the `postal_code` filter is the
    city and state searched (St/Saint either way); a business named with a place's words comes first;
    a frequent family name stays a name; a specialty's own businesses come before its suppliers."""
    account = await factory.account()
    headers = account.headers("ro")
    dentist = {"industry": "dental", "specialty": "General Practice Dentistry", "license_type": "Dentist (DDS)"}
    number = iter(range(100, 200))

    async def add(name: str, city: str, state: str, **fields: str) -> str:
        return await factory.contact(business_name=name, city=city, state=state, **_distinct(next(number)), **fields)

    austin = await add("Hill Country Dental", "Austin", "TX", **dentist)
    named_boston = await add("Boston Dental", "Denver", "CO", **dentist)
    in_boston = await add("Harbor Dental Group", "Boston", "MA", **dentist)
    roofer = await add(
        "Palmetto Roofing", "Charleston", "SC", industry="construction", specialty="Roofing", license_type="Roofing"
    )
    plumber = await add(
        "Twin Cities Plumbing",
        "Saint Paul",
        "MN",
        industry="home-services",
        specialty="Plumbing",
        license_type="Plumbing",
    )
    groomer = await add("Happy Paws", "Reno", "NV", industry="pet-services", specialty="Pet Grooming", license_type="")
    electrician = await add(
        "Bright Spark Co", "Reno", "NV", industry="home-services", specialty="Electrical Contractor", license_type=""
    )
    supplier = await add(
        "Reno Electric Depot", "Reno", "NV", industry="wholesale-distribution", specialty="Electrical Supplies",
        license_type="",
    )  # fmt: skip
    await add(
        "Sierra Law Office", "Reno", "NV", industry="legal", specialty="Business Law", license_type="Attorney at Law"
    )
    sawyers = [
        await add(f"Sawyer {kind}", "Reno", "NV", industry="home-services", specialty=kind, license_type="")
        for kind in ("Painting", "Fencing", "Masonry", "Flooring", "Glass")
    ]

    async def ask(**params: str) -> dict[str, Any]:
        response = await client.get("/api/v1/contacts/search", params=params, headers=headers)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    def ids(body: dict[str, Any]) -> list[str]:
        return [c["id"] for c in body["contacts"]]

    # Filler and words no business holds never empty an answer; the answer says what it left out.
    near_me = await ask(q="best plumber near me")
    assert ids(near_me) == [plumber] and near_me["interpreted"]["dropped"] == ["best", "near", "me"]
    emergency = await ask(q="emergency plumbing")
    assert ids(emergency) == [plumber] and emergency["interpreted"]["dropped"] == ["emergency"]
    assert emergency["total"] == 1
    assert ids(await ask(q="roof repair")) == [roofer]

    # Places before or after the words, without "in"; St/Saint; a ZIP code.
    charleston = await ask(q="Charleston SC roofers")
    assert ids(charleston) == [roofer] and charleston["interpreted"] == read("roofers", "Charleston", "SC")
    st_paul = await ask(q="plumbers in st paul mn")
    assert ids(st_paul) == [plumber] and st_paul["interpreted"] == read("plumbers", "Saint Paul", "MN")
    by_zip = await ask(q="dentist 78701")
    assert ids(by_zip) == [austin]
    assert by_zip["interpreted"] == read("dentist", "Austin", "TX", postal_code="78701")

    # The postal_code filter: the ZIP code's city and state, with words or without.
    assert ids(await ask(q="dental", postal_code="78701")) == [austin]
    assert ids(await ask(q="dental", postal_code="02108-1234")) == [in_boston]
    filtered = await ask(postal_code="78701")
    assert ids(filtered) == [austin] and filtered["interpreted"] is None
    assert (await ask(q="dental", postal_code="78701", state="CA"))["total"] == 0
    refused = await client.get("/api/v1/contacts/search", params={"postal_code": "00000"}, headers=headers)
    assert refused.status_code == 422 and "ZIP code" in refused.text

    # A business named with a place's words first, wherever it is; then the place's own.
    boston = await ask(q="Boston Dental")
    assert ids(boston) == [named_boston, in_boston]

    # Activities as well as people; a frequent family name is no typo of "lawyer".
    assert ids(await ask(q="dog grooming")) == [groomer]
    assert ids(await ask(q="pet groomer")) == [groomer]
    sawyer = await ask(q="sawyer")
    assert sorted(ids(sawyer)) == sorted(sawyers) and sawyer["interpreted"]["dropped"] == []

    # A specialty's businesses before those of another kind that holds its words (a supplier).
    assert ids(await ask(q="electrician"))[:2] == [electrician, supplier]
