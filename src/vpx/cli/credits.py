"""`vpx credits grant`: credits an operator gives an account."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Annotated

import typer

from vpx.accounts import lifecycle
from vpx.cli.accounts import cli_actor
from vpx.cli.output import JsonOption, emit, fail, run_with_database
from vpx.clock import Clock
from vpx.config import Settings
from vpx.db import Database


def register(credits_app: typer.Typer) -> None:
    credits_app.command("grant")(credits_grant)


def credits_grant(
    account: Annotated[str, typer.Option(help="Account id (acc_…).")],
    amount: Annotated[str, typer.Option(help="Credits to add (a positive decimal).")],
    reason: Annotated[str, typer.Option(help="Shown in the ledger.")] = "Granted by operator",
    as_json: bool = JsonOption,
) -> None:
    """Grant credits; they carry over from month to month."""
    try:
        value = Decimal(amount)
    except InvalidOperation:
        fail(f"--amount {amount!r} is not a number", as_json=as_json, code="invalid_parameters")
    if not value.is_finite() or value <= 0 or value != value.quantize(Decimal("0.0001")):
        fail("--amount must be positive, with at most 4 decimals", as_json=as_json, code="invalid_parameters")

    async def work(database: Database, settings: Settings) -> dict[str, object]:
        async with database.write_sessions() as session, session.begin():
            # Written to the account's audit trail too (`vpx accounts audit`).
            balance = await lifecycle.grant(
                session,
                account_id=account,
                amount=value,
                note=reason,
                actor=cli_actor(),
                now=Clock().now(),
                settings=settings,
            )
        return {
            "account_id": account,
            "granted": value,
            "balance": balance.total,
            "free": balance.free,
            "paid": balance.paid,
        }

    emit(run_with_database(work, as_json=as_json), as_json=as_json, title="granted")
