"""PostgreSQL's stored search vector is what its definition says, whoever made it: the trigger
(20261124_search_vector_input), with vpx_fold in PL/pgSQL (20261124_fold_plpgsql), or a registry
import's reader (vpx.contacts.search.vector). Every stored vector is compared with the original
column's expression with the fold spelled out, evaluated afresh."""

from __future__ import annotations

import random
import string
from datetime import UTC, datetime

import pytest
from fastapi import FastAPI
from sqlalchemy import text

from vpx.contacts.catalogue import add_contacts, contact_row
from vpx.contacts.search import backend_for
from vpx.contacts.search.vector import contact_vector
from vpx.registries import bulk
from vpx.registries.records import CONTACT_COLUMNS
from vpx.registries.upsert import CONTACTS

pytestmark = pytest.mark.asyncio

NAMES = [
    "Café Ñandú", "ÆSOP Straße Bäckerei", "C-36 Roofing & Solar, Inc.", "O'Brien/McDonald P.C.", "  Ωmega  Dental ",
    "Smith-Jones 1st Street Clinic", "ＡＢＣ Fullwidth", "Zoë's 24/7 Plumbing", "the acme co.", "北京 Trading",
]  # fmt: skip
SPECIALTIES = [None, "Family Medicine", "Pédiatrie", "C-10 Electrical"]


def _fold(column: str) -> str:
    folded = f"lower(public.unaccent('public.unaccent'::regdictionary, coalesce({column}, '')))"
    return f"regexp_replace({folded}, '[^[:alnum:]]+', ' ', 'g')"


DEFINITION = f"""(
    setweight(to_tsvector('simple', {_fold("business_name")}), 'A') ||
    setweight(to_tsvector('simple', {_fold("specialty")}), 'B') ||
    setweight(to_tsvector('simple', {_fold("license_type")}), 'C') ||
    setweight(to_tsvector('simple', {_fold("industry")} || ' ' || {_fold("city")}), 'D') ||
    array_to_tsvector(ARRAY['§st' || lower(state), '§in' || replace(industry, '-', ''),
                            '§ct' || replace(city_key, ' ', '')]))"""


def _postgres_only(database_url: str) -> None:
    if database_url.startswith("sqlite"):
        pytest.skip("the stored tsvector is PostgreSQL's; SQLite's FTS5 index has no such column")


async def _differing(app: FastAPI) -> tuple[int, int]:
    """Contacts whose stored vector is not the definition's, and contacts in all."""
    async with app.state.database.read_sessions() as session:
        differing = await session.scalar(
            text(f"SELECT count(*) FROM contacts WHERE search_vector IS DISTINCT FROM {DEFINITION}")
        )
        total = await session.scalar(text("SELECT count(*) FROM contacts"))
    return int(differing or 0), int(total or 0)


async def test_stored_vectors_equal_the_definition(app: FastAPI, database_url: str) -> None:
    _postgres_only(database_url)
    now = datetime(2026, 11, 24, tzinfo=UTC)
    rows = [
        contact_row(
            {"business_name": name, "specialty": SPECIALTIES[i % len(SPECIALTIES)],
             "license_type": "Médecin" if i % 3 == 0 else None, "city": "São Paulo" if i % 2 else "San Diego",
             "state": "CA", "industry": "healthcare" if i % 2 else "home-services"},
            origin="registry", now=now,
        )
        for i, name in enumerate(NAMES)
    ]  # fmt: skip
    database = app.state.database
    async with database.write_sessions() as session, session.begin():
        await add_contacts(session, rows, search=backend_for(database.dialect), now=now)
    async with database.read_sessions() as session:
        language = await session.scalar(
            text("SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE p.proname = 'vpx_fold'")
        )
    assert language == "plpgsql"
    assert await _differing(app) == (0, len(NAMES))
    # An update of a searched field makes the vector again; of another field, keeps it.
    async with database.write_sessions() as session, session.begin():
        await session.execute(text("UPDATE contacts SET business_name = business_name || ' Renamed' WHERE id % 2 = 0"))
        await session.execute(text("UPDATE contacts SET phone = '+16195550100'"))
    assert await _differing(app) == (0, len(NAMES))


# What PostgreSQL's parser reads in its own ways: numbers in scientific notation, hex, signs,
# hosts, e-mail addresses, paths, XML entities and tags, hyphenated words.
TRICKY = [
    "1e5", "6e3bx", "x1e1", "0x1F", "C-36", "a.b.c", "x@y.com", "http://a.b/c", "&amp;", "<b>", "3.14", "-5",
    "+1", "a_b", "O'Brien", "1/2", "v1.2.3", "12:30", "1st", "abc123", "123abc", "007", "1,000", "Smith-Jones",
]  # fmt: skip
ALPHABET = string.ascii_letters + string.digits + " -.,&'()/#:;+_@!?\"*%$^~`|\\<>=[]{}\t"


def _text(rnd: random.Random) -> str:
    if rnd.random() < 0.5:
        return " ".join(rnd.choice(TRICKY) for _ in range(rnd.randint(0, 6)))
    return "".join(rnd.choice(ALPHABET) for _ in range(rnd.randint(0, 40)))


async def test_vectors_made_by_the_client_equal_the_definition(app: FastAPI, database_url: str) -> None:
    _postgres_only(database_url)
    rnd = random.Random(20261124)
    now = datetime(2026, 11, 24, tzinfo=UTC)
    rows = []
    for i in range(3_000):
        fields = {
            "business_name": _text(rnd) or "X", "specialty": rnd.choice([None, _text(rnd)]),
            "license_type": rnd.choice([None, _text(rnd)]), "city": _text(rnd) or "Y", "state": "CA",
            "industry": rnd.choice(["healthcare", "home-services", "real-estate"]),
        }  # fmt: skip
        row = contact_row(fields, origin="registry", now=now)
        rows.append((i + 1, *[row[name] for name in CONTACT_COLUMNS]))
    made = [
        contact_vector(*[row[1 + CONTACT_COLUMNS.index(name)] for name in (
            "business_name", "specialty", "license_type", "industry", "city", "state", "city_key")])
        for row in rows
    ]  # fmt: skip
    assert sum(vector is not None for vector in made) > 1_500  # the rest: left to the server
    async with app.state.database.write_sessions() as session, session.begin():
        columns = ("id", *CONTACT_COLUMNS, "search_vector")
        await bulk.insert_rows(session, CONTACTS, columns, [(*row, v) for row, v in zip(rows, made, strict=True)])
    assert await _differing(app) == (0, len(rows))


async def test_a_contact_of_very_many_words_is_left_to_the_server() -> None:
    # Past 256 positions a lexeme's are cut by the server; such a contact's vector is its to make.
    assert contact_vector("a " * 150, "a " * 100, "a " * 10, "healthcare", "X", "CA", "x") is None
    assert contact_vector("a " * 100, None, None, "healthcare", "X", "CA", "x") is not None
