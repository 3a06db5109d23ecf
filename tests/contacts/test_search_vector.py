"""PostgreSQL's stored search vector is what its definition says, whatever language vpx_fold is
written in (SQL at first, PL/pgSQL since 20261124_fold_plpgsql, for speed): every stored vector
equals the column's expression with the fold spelled out, evaluated afresh."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from fastapi import FastAPI
from sqlalchemy import text

from vpx.contacts.catalogue import add_contacts, contact_row
from vpx.contacts.search import backend_for

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


async def test_stored_vectors_equal_the_definition(app: FastAPI, database_url: str) -> None:
    if database_url.startswith("sqlite"):
        pytest.skip("the stored tsvector is PostgreSQL's; SQLite's FTS5 index has no such column")
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
        differing = await session.scalar(
            text(f"SELECT count(*) FROM contacts WHERE search_vector IS DISTINCT FROM {DEFINITION}")
        )
        total = await session.scalar(text("SELECT count(*) FROM contacts"))
    assert language == "plpgsql"
    assert total == len(NAMES) and differing == 0
