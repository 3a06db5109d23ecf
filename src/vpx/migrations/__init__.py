"""Alembic migrations, shipped inside the package so `vpx db upgrade` works from any install."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

from vpx.config import Settings

HERE = Path(__file__).resolve().parent


def alembic_config(settings: Settings) -> Config:
    config = Config()
    config.set_main_option("script_location", str(HERE))
    config.set_main_option("path_separator", "os")
    config.set_main_option("version_locations", str(HERE / "versions"))
    config.attributes["database_url"] = settings.database_url
    # Migrations that seal stored secrets need the service's keys (vpx.secrets.load_box).
    config.attributes["settings"] = settings
    return config


def upgrade(settings: Settings, revision: str = "heads") -> None:
    """Bring the database to the newest schema (every branch head)."""
    if settings.is_sqlite:
        from vpx.db import prepare_sqlite_file

        prepare_sqlite_file(settings)  # the directory 0700, the file 0600, before SQLite makes them
    command.upgrade(alembic_config(settings), revision)


def current_heads(settings: Settings) -> tuple[str, ...]:
    from alembic.script import ScriptDirectory

    return tuple(ScriptDirectory.from_config(alembic_config(settings)).get_heads())
