"""`vpx suppress add`: a contact, phone or email no reveal may show."""

from __future__ import annotations

from typing import Annotated

import typer

from vpx.cli.accounts import cli_actor
from vpx.cli.output import JsonOption, emit, fail, run_with_database
from vpx.clock import Clock
from vpx.compliance import audit
from vpx.config import Settings
from vpx.db import Database
from vpx.suppression import service as suppression_service
from vpx.suppression.service import SuppressionKind, SuppressionReason


def register(suppress_app: typer.Typer) -> None:
    suppress_app.command("add")(suppress_add)


def suppress_add(
    reason: Annotated[
        SuppressionReason,
        typer.Option(
            help="fcra, opt_out, do_not_contact, or do_not_call (with --phone: the person asked not to be called; "
            "the phone is flagged for every buyer and the contact stays on sale)."
        ),
    ],
    contact: Annotated[str | None, typer.Option(help="Contact id (ct_…).")] = None,
    phone: Annotated[str | None, typer.Option(help="Phone number, E.164.")] = None,
    email: Annotated[str | None, typer.Option(help="Email address.")] = None,
    note: Annotated[str, typer.Option(help="Free text kept with the entry.")] = "",
    as_json: bool = JsonOption,
) -> None:
    """Add a contact, phone or email to the suppression list: reveals of it are refused (451)."""
    given = [(k, v) for k, v in (("contact", contact), ("phone", phone), ("email", email)) if v]
    if len(given) != 1:
        fail("give exactly one of --contact, --phone or --email", as_json=as_json, code="invalid_parameters")
    kind, value = given[0]
    if reason is SuppressionReason.do_not_call:
        if kind != "phone":
            fail("do_not_call takes --phone: it is the phone channel only", as_json=as_json, code="invalid_parameters")
        kind = "do_not_call"

    async def work(database: Database, settings: Settings) -> dict[str, object]:
        async with database.write_sessions() as session, session.begin():
            now = Clock().now()
            entry, created = await suppression_service.add_suppression(
                session,
                kind=SuppressionKind(kind),
                value=value,
                reason=reason,
                note=note,
                now=now,
            )
            if created:
                await audit.record(
                    session,
                    kind="suppression.added",
                    subject=f"sup_{entry.id}",
                    now=now,
                    kind_of=entry.kind,
                    reason=entry.reason,
                    actor=cli_actor(),
                )
            return {
                "id": f"sup_{entry.id}",
                "kind": entry.kind,
                "value": entry.value,
                "reason": entry.reason,
                "created": created,
                "created_at": entry.created_at,
            }

    emit(run_with_database(work, as_json=as_json), as_json=as_json, title="suppressed")
