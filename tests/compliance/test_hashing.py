"""DROP's hashes, byte for byte against the test vectors the agency's specification publishes, and the
same hashes computed by the databases' triggers (SQLite's registered functions, PostgreSQL's sha256())."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from sqlalchemy import text

from vpx.compliance import hashing

# The published vectors: the standardised value and its SHA-256/Base64 (44 characters, unsalted).
EMAIL_VECTORS = [("anna.smith@domain.com", "KA18MT/ph6IHYjzT9zwETySDQyvSh87YuoSBpOQtkhE=")]
PHONE_VECTORS = [
    ("4155559317", "vGM7y5n+hBXRSEAklhHDPCbysyNgYTmXdMcagGUOY8E="),
    ("+1(415)555-9317", "vGM7y5n+hBXRSEAklhHDPCbysyNgYTmXdMcagGUOY8E="),
    ("+84(90)123 4567", "ptzVkgbv9DonwvPCHmXmJ2SEOaolSh37z3ZzY/Gmm+U="),
]


@pytest.mark.parametrize(("value", "expected"), EMAIL_VECTORS)
def test_email_vectors(value: str, expected: str) -> None:
    assert hashing.email_hash(value) == expected
    # Standardised first: surrounding whitespace and case do not change it; dots and plus signs do.
    assert hashing.email_hash("  Anna.Smith@DOMAIN.com\t") == expected
    assert hashing.email_hash("annasmith@domain.com") != expected
    assert len(expected) == 44


@pytest.mark.parametrize(("value", "expected"), PHONE_VECTORS)
def test_phone_vectors(value: str, expected: str) -> None:
    assert hashing.phone_hash(value) == expected


def test_standard_forms() -> None:
    assert hashing.standard_phone("+1 (415) 555-9317") == "4155559317"
    assert hashing.standard_phone("555-0100") == "5550100"  # fewer than ten: all of them
    assert hashing.standard_email(" A.lice+Tag@Co.COM ") == "a.lice+tag@co.com"
    assert hashing.email_hash(None) is None and hashing.phone_hash("ext.") is None


async def test_databases_compute_the_same_hashes(app: FastAPI) -> None:
    """The functions the triggers call give the published hashes, on either database (SQLite's are
    vpx's Python registered on each connection, PostgreSQL's its own sha256())."""
    query = "SELECT vpx_email_hash(:email), vpx_phone_hash(:phone), vpx_phone_hash(:other)"
    async with app.state.database.read_sessions() as session:
        row = (
            await session.execute(
                text(query), {"email": " Anna.Smith@domain.com", "phone": "+14155559317", "other": "+84(90)123 4567"}
            )
        ).one()
    assert tuple(row) == (EMAIL_VECTORS[0][1], PHONE_VECTORS[0][1], PHONE_VECTORS[2][1])
