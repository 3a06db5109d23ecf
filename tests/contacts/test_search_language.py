"""How search reads people's words: plurals read as their singular (never a family name read as
another word), and a trailing "in/near PLACE" read as the city and state searched."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.factories import Factory
from vpx.contacts.normalise import words
from vpx.contacts.search.language import forms, read_place, stem


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
    ],
)
def test_a_trailing_place_is_read(question: str, rest: list[str], city: str | None, state: str | None) -> None:
    place = read_place(words(question))
    assert place is not None
    assert list(place.rest) == rest and place.city_name == city and place.state == state


@pytest.mark.parametrize("question", ["Boston Dental", "dentists near me", "in austin", "plumbers"])
def test_no_place_is_read_without_a_trailing_in_or_near(question: str) -> None:
    assert read_place(words(question)) is None


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
    assert (await ask(q="dentists in austin tx"))["interpreted"] == {"q": "dentists", "city": "Austin", "state": "TX"}

    texas = await ask(q="lawyers in texas")
    assert texas["interpreted"] == {"q": "lawyers", "city": None, "state": "TX"}
    assert [c["business_name"] for c in texas["contacts"]] == ["Lone Star Law Group"]

    # A name is words, not a place: "Boston Dental" is in Denver.
    boston = await ask(q="Boston Dental")
    assert boston["interpreted"] == {"q": "Boston Dental", "city": None, "state": None}
    assert boston["contacts"][0]["business_name"] == "Boston Dental"

    # The city and state parameters win over a place in the words.
    houston = await ask(q="dentists in austin tx", city="Houston", state="TX")
    assert houston["interpreted"] == {"q": "dentists", "city": "Houston", "state": "TX"}
    assert [c["business_name"] for c in houston["contacts"]] == ["Bayou Dental"]

    # A place the catalogue does not know stays in the words.
    unknown = await ask(q="dentists in atlantis")
    assert unknown["interpreted"] == {"q": "dentists in atlantis", "city": None, "state": None}
    assert unknown["total"] == 0


def _distinct(number: int) -> dict[str, str]:
    """Contact details of a business of its own (no two test contacts share a phone or a site)."""
    return {
        "phone": f"+1512555{number:04d}",
        "email": f"office@business{number}.example",
        "website": f"https://business{number}.example",
    }
