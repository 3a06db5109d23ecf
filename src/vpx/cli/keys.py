"""`vpx keys`: create, revoke and list an account's API keys."""

from __future__ import annotations

from typing import Annotated

import typer

from vpx.accounts import service as account_service
from vpx.auth import service as key_service
from vpx.auth.keys import KeyType
from vpx.cli.output import JsonOption, emit, fail, run_with_database
from vpx.clock import Clock
from vpx.config import Settings, get_settings
from vpx.db import Database


def register(keys_app: typer.Typer) -> None:
    keys_app.command("create")(keys_create)
    keys_app.command("revoke")(keys_revoke)
    keys_app.command("list")(keys_list)


def keys_create(
    account: Annotated[str, typer.Option(help="Account id (acc_…).")],
    key_type: Annotated[KeyType, typer.Option("--type", help="ro, live or full.")],
    name: Annotated[str, typer.Option(help="A name to recognise the key by.")] = "",
    ip: Annotated[list[str] | None, typer.Option(help="Allowed address or CIDR range; repeatable.")] = None,
    test: Annotated[
        bool,
        typer.Option(
            "--test", help="A test key (vpx_test_…): the sandbox catalogue and a test balance, never real data."
        ),
    ] = False,
    as_json: bool = JsonOption,
) -> None:
    """Create an API key; the secret is printed once and never stored."""
    if test and not get_settings().test_mode:
        fail("test mode is off on this server (VPX_TEST_MODE=false)", as_json=as_json, code="invalid_parameters")

    async def work(database: Database, settings: Settings) -> dict[str, object]:
        async with database.write_sessions() as session, session.begin():
            key, secret = await key_service.create_key(
                session,
                account_id=account,
                key_type=key_type,
                name=name,
                ip_allowlist=list(ip or []),
                now=Clock().now(),
                settings=settings,
                livemode=not test,
            )
            shown = {**key_service.key_view(key), "key": secret}
        if test:
            await _prepare_sandbox(database, settings, account_id=account)
        return shown

    emit(run_with_database(work, as_json=as_json), as_json=as_json, title="key (the secret is shown once)")


async def _prepare_sandbox(database: Database, settings: Settings, *, account_id: str) -> None:
    """The sandbox made (the first time), with the account's shadow and test balance (vpx.sandbox)."""
    from vpx.auth.ratelimit import RateLimits
    from vpx.sandbox.world import build_sandbox

    sandbox = build_sandbox(database, settings, clock=Clock(), rate_limits=RateLimits(settings))
    assert sandbox is not None
    try:
        await sandbox.ensure_account(account_id)
    finally:
        await sandbox.stop()


def keys_revoke(key_id: Annotated[str, typer.Argument(help="Key id (key_…).")], as_json: bool = JsonOption) -> None:
    """Revoke a key at once."""

    async def work(database: Database, settings: Settings) -> dict[str, object]:
        async with database.write_sessions() as session, session.begin():
            key = await key_service.revoke_key(session, key_id=key_id, now=Clock().now())
            return key_service.key_view(key)

    emit(run_with_database(work, as_json=as_json), as_json=as_json, title="revoked")


def keys_list(account: Annotated[str, typer.Option(help="Account id (acc_…).")], as_json: bool = JsonOption) -> None:
    """List an account's keys (never their secrets)."""
    from sqlalchemy import select

    from vpx.models import ApiKey

    async def work(database: Database, settings: Settings) -> dict[str, object]:
        async with database.read_sessions() as session:
            await account_service.get_account(session, account_id=account)
            keys = await session.scalars(select(ApiKey).where(ApiKey.account_id == account).order_by(ApiKey.created_at))
            return {"account_id": account, "keys": [key_service.key_view(k) for k in keys]}

    emit(run_with_database(work, as_json=as_json), as_json=as_json, title="keys")
