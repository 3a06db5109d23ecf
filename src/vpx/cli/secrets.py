"""`vpx secrets …`: the keys customer secrets are sealed with (provider keys, mailbox passwords,
webhook signing secrets)."""

from __future__ import annotations

import asyncio
from typing import Any

import typer

from vpx.cli.output import JsonOption, emit, fail, run_with_database
from vpx.config import Settings, get_settings
from vpx.db import Database
from vpx.secrets import SecretBox, SecretsUnavailable, generate_key, load_box
from vpx.secrets.rotation import rotate

secrets_app = typer.Typer(no_args_is_help=True, help="Keys that seal customer secrets at rest (VPX_SECRET_KEYS).")


@secrets_app.command("generate")
def generate(as_json: bool = JsonOption) -> None:
    """Print a new key. To rotate: put it first in VPX_SECRET_KEYS (the old ones after it), restart
    every process, run `vpx secrets rotate`, then drop the old keys."""
    key = generate_key()
    if as_json:
        emit({"key": key}, as_json=True)
    else:
        typer.echo(key)


@secrets_app.command("rotate")
def rotate_command(as_json: bool = JsonOption) -> None:
    """Re-seal every stored customer secret with the first key, while servers run (they open what
    any of their keys sealed), test mode's too. Safe to run again."""
    settings = get_settings()
    try:
        box = load_box(settings)
    except SecretsUnavailable as exc:
        fail(str(exc), as_json=as_json, code="secrets_unavailable")
    from vpx.migrations import upgrade

    upgrade(settings)

    async def work(database: Database, settings: Settings) -> dict[str, Any]:
        try:
            counts = await rotate(database, box)
            sandbox = await _rotate_sandbox(settings, box)
        except SecretsUnavailable as exc:
            return {"error": str(exc)}
        done = {"resealed": counts, "total": sum(counts.values()), "keys": box.key_count, "origin": box.origin}
        if sandbox is not None:
            done["sandbox_resealed"] = sandbox
        return done

    result = run_with_database(work, as_json=as_json, settings=settings)
    if "error" in result:
        fail(str(result["error"]), as_json=as_json, code="secrets_unavailable")
    emit(result, as_json=as_json, title="secrets rotated")


async def _rotate_sandbox(settings: Settings, box: SecretBox) -> dict[str, int] | None:
    """Test mode's sandbox holds customer secrets too (its webhooks, mailboxes, provider keys): re-sealed
    the same way once a first test key has made it; None when there is none."""
    from vpx.migrations import upgrade
    from vpx.sandbox import location

    if not settings.test_mode:
        return None
    sandbox = location.sandbox_settings(settings)
    if not await location.exists(sandbox):
        return None
    await asyncio.to_thread(upgrade, sandbox)
    database = Database(sandbox, livemode=False)
    try:
        return await rotate(database, box)
    finally:
        await database.dispose()


def register(app: typer.Typer) -> None:
    app.add_typer(secrets_app, name="secrets")
