"""`vpx db upgrade`, and the migration that `vpx serve` and `vpx demo` run first."""

from __future__ import annotations

import typer

from vpx.cli.output import JsonOption, emit
from vpx.config import Settings, get_settings


def register(db_app: typer.Typer) -> None:
    db_app.command("upgrade")(db_upgrade)


def migrate(settings: Settings) -> list[str]:
    """The database (and test mode's sandbox, when there is one) brought up to date; the heads it is at."""
    import asyncio

    from vpx.migrations import current_heads, upgrade
    from vpx.sandbox import location as sandbox_location

    upgrade(settings)
    # Test mode's sandbox, once a first test key has made it, is migrated with the main database.
    sandbox = sandbox_location.sandbox_settings(settings)
    if settings.test_mode and asyncio.run(sandbox_location.exists(sandbox)):
        upgrade(sandbox)
    return list(current_heads(settings))


def db_upgrade(as_json: bool = JsonOption) -> None:
    """Bring the database schema up to date (safe to run repeatedly)."""
    settings = get_settings()
    heads = migrate(settings)
    emit({"status": "ok", "database": _redacted(settings.database_url), "revisions": heads}, as_json=as_json)


def _redacted(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
