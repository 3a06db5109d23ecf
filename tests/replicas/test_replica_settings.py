"""VPX_DATABASE_REPLICA_URLS: PostgreSQL URLs only, comma-separated, and only with a PostgreSQL
primary; anything else stops the service at start with one line that never quotes a URL (it may
hold a password)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from pydantic import ValidationError

from vpx.config import InvalidSettings, Settings, get_settings, settings_problem

SECRET = "Pa55wordMarker"


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """The process's settings read afresh from a clean VPX_ environment."""
    for name in list(os.environ):
        if name.startswith("VPX_"):
            monkeypatch.delenv(name)
    get_settings.cache_clear()
    yield monkeypatch
    get_settings.cache_clear()


@pytest.mark.parametrize(
    ("primary", "replicas", "rule"),
    [
        ("sqlite+aiosqlite:///./var/x.db", f"postgresql+asyncpg://vpx:{SECRET}@db:5432/vpx", "need a PostgreSQL"),
        ("postgresql+asyncpg://vpx@db/vpx", f"postgresql://vpx:{SECRET}@db:5432/vpx", "URL 1 of 1"),
        (
            "postgresql+asyncpg://vpx@db/vpx",
            f"postgresql+asyncpg://vpx:{SECRET}@a:5432/vpx,postgresql+asyncpg://vpx:{SECRET}@b:port/vpx",
            "URL 2 of 2",
        ),
        ("postgresql+asyncpg://vpx@db/vpx", f"sqlite+aiosqlite:///{SECRET}.db", "postgresql+asyncpg://"),
    ],
)
def test_bad_replica_urls_are_refused_at_start_without_quoting_them(
    environment: pytest.MonkeyPatch, primary: str, replicas: str, rule: str
) -> None:
    environment.setenv("VPX_DATABASE_URL", primary)
    environment.setenv("VPX_DATABASE_REPLICA_URLS", replicas)
    with pytest.raises(InvalidSettings) as raised:
        get_settings()
    message = str(raised.value)
    assert message.startswith("VPX_DATABASE_REPLICA_URLS: ") and rule in message, message
    assert "\n" not in message and SECRET not in message


def test_replica_urls_are_a_comma_separated_list() -> None:
    settings = Settings(
        database_url="postgresql+asyncpg://vpx@db/vpx",
        database_replica_urls=" postgresql+asyncpg://vpx@r1/vpx , postgresql+asyncpg://vpx@r2:5433/vpx ,",  # type: ignore[arg-type]
    )
    assert settings.database_replica_urls == ["postgresql+asyncpg://vpx@r1/vpx", "postgresql+asyncpg://vpx@r2:5433/vpx"]
    assert Settings(database_url="sqlite+aiosqlite:///./var/x.db").database_replica_urls == []
    with pytest.raises(ValidationError) as raised:
        Settings(database_url="postgresql+asyncpg://vpx@db/vpx", database_replica_urls=f"mysql://u:{SECRET}@h/d")  # type: ignore[arg-type]
    assert SECRET not in settings_problem(raised.value)
