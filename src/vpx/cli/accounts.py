"""`vpx accounts list|show|suspend|resume|delete|audit|create`: the operator's account lifecycle (the same as
the admin API's /api/v1/admin/accounts). Every change is written to the account's audit trail as
`cli:<the operating-system user>`."""

from __future__ import annotations

import getpass
from typing import Annotated, Any

import typer

from vpx.accounts import lifecycle
from vpx.accounts import service as account_service
from vpx.cli.output import JsonOption, emit, emit_rows, fail, run_with_database
from vpx.clock import Clock
from vpx.config import Settings
from vpx.credits import service as credit_service
from vpx.db import Database
from vpx.sandbox import accounts as sandbox_accounts

# `accounts list` without --json: one row per account (`accounts show` has every field).
LIST_COLUMNS = (
    ("id", "id"),
    ("name", "name"),
    ("email", "email"),
    ("plan", "plan"),
    ("status", "status"),
    ("balance", "balance"),
    ("keys", "keys"),
    ("created_at", "created"),
    ("last_request_at", "last request"),
)
AccountArgument = Annotated[str, typer.Argument(help="Account id (acc_…).", show_default=False)]


def cli_actor() -> str:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no user name in this environment (some containers)
        user = "unknown"
    return f"cli:{user}"


def _show(database: Database, settings: Settings, account_id: str) -> Any:
    async def read() -> dict[str, Any]:
        async with database.read_sessions() as session:
            found = await lifecycle.summary(session, account_id=account_id, now=Clock().now(), settings=settings)
        return found.view()

    return read()


def register(accounts_app: typer.Typer) -> None:
    @accounts_app.command("list")
    def accounts_list(
        status: Annotated[
            str | None, typer.Option(help="Only accounts in this state: active, suspended or deleted.")
        ] = None,
        as_json: bool = JsonOption,
    ) -> None:
        """List accounts, oldest first, with balance, active keys and last request."""
        if status is not None and status not in lifecycle.STATUSES:
            fail("--status must be active, suspended or deleted", as_json=as_json, code="invalid_parameters")

        async def work(database: Database, settings: Settings) -> dict[str, Any]:
            async with database.read_sessions() as session:
                found = await lifecycle.summaries(
                    session, now=Clock().now(), settings=settings, status=status, limit=1_000_000
                )
            return {"accounts": [a.view() for a in found]}

        result = run_with_database(work, as_json=as_json)
        if as_json:
            emit(result, as_json=True)
            return
        emit_rows(result["accounts"], LIST_COLUMNS, title="accounts", noun="account")

    @accounts_app.command("show")
    def accounts_show(account_id: AccountArgument, as_json: bool = JsonOption) -> None:
        """One account: name, plan, status, balance, active keys, created, last request."""
        emit(
            run_with_database(lambda db, s: _show(db, s, account_id), as_json=as_json),
            as_json=as_json,
            title="account",
        )

    @accounts_app.command("suspend")
    def accounts_suspend(
        account_id: AccountArgument,
        reason: Annotated[str, typer.Option(help="Why (kept in the audit trail; never shown to the customer).")],
        as_json: bool = JsonOption,
    ) -> None:
        """Suspend an account: its keys get 403 account_suspended, its dashboard sign-in is refused, its
        auto-buy rules and sequences stop and its webhook deliveries wait until it is resumed."""
        reason = reason.strip()
        if not reason or len(reason) > 500 or any(ord(c) < 32 or ord(c) == 127 for c in reason):
            fail("--reason must be 1 to 500 characters of text", as_json=as_json, code="invalid_parameters")

        async def work(database: Database, settings: Settings) -> dict[str, Any]:
            async with database.write_sessions() as session, session.begin():
                changed = await lifecycle.suspend(
                    session, account_id=account_id, reason=reason, actor=cli_actor(), now=Clock().now()
                )
            return {**(await _show(database, settings, account_id)), "changed": changed}

        emit(run_with_database(work, as_json=as_json), as_json=as_json, title="suspended")

    @accounts_app.command("resume")
    def accounts_resume(account_id: AccountArgument, as_json: bool = JsonOption) -> None:
        """Resume a suspended account: held webhook deliveries go out in order, rules and sequences
        go on."""

        async def work(database: Database, settings: Settings) -> dict[str, Any]:
            async with database.write_sessions() as session, session.begin():
                changed = await lifecycle.resume(session, account_id=account_id, actor=cli_actor(), now=Clock().now())
            return {**(await _show(database, settings, account_id)), "changed": changed}

        emit(run_with_database(work, as_json=as_json), as_json=as_json, title="resumed")

    @accounts_app.command("delete")
    def accounts_delete(
        account_id: AccountArgument,
        yes: Annotated[bool, typer.Option("--yes", help="Confirm: this cannot be undone.")] = False,
        as_json: bool = JsonOption,
    ) -> None:
        """Delete an account: keys revoked; sign-in, sessions, webhooks, provider keys, mailboxes and
        visitor sites deleted; name and email erased. The ledger is kept; contributed contacts stay in
        the catalogue without the publisher link. Deleting it again is not an error."""
        if not yes:
            fail("deleting an account cannot be undone: add --yes", as_json=as_json, code="confirmation_required")

        async def work(database: Database, settings: Settings) -> dict[str, Any]:
            async with database.write_sessions() as session, session.begin():
                changed = await lifecycle.delete_account(
                    session, account_id=account_id, actor=cli_actor(), now=Clock().now()
                )
            # Test mode's data that acts for the account (vpx.sandbox).
            await sandbox_accounts.delete_shadow(settings, account_id=account_id, actor=cli_actor(), now=Clock().now())
            return {**(await _show(database, settings, account_id)), "changed": changed}

        emit(run_with_database(work, as_json=as_json), as_json=as_json, title="deleted")

    @accounts_app.command("audit")
    def accounts_audit(account_id: AccountArgument, as_json: bool = JsonOption) -> None:
        """What operators did to the account (suspend, resume, delete, grants): who and when, oldest first."""

        async def work(database: Database, settings: Settings) -> dict[str, Any]:
            async with database.read_sessions() as session:
                entries = await lifecycle.audit_trail(session, account_id=account_id)
            return {"account_id": account_id, "entries": entries}

        result = run_with_database(work, as_json=as_json)
        if as_json:
            emit(result, as_json=True)
            return
        for entry in result["entries"]:
            emit(entry, as_json=False, title=f"{entry['at']:%Y-%m-%d %H:%M:%S} {entry['action']}")

    accounts_app.command("create")(accounts_create)


def accounts_create(
    name: Annotated[str, typer.Option(help="Account name.")],
    email: Annotated[str | None, typer.Option(help="Contact email (unique).")] = None,
    plan: Annotated[str, typer.Option(help="Plan.")] = "free",
    as_json: bool = JsonOption,
) -> None:
    """Create an account on the free plan (25 credits each calendar month, no payment card)."""
    if plan not in account_service.PLANS:
        fail(
            f"unknown plan {plan!r}; plans: {', '.join(account_service.PLANS)}",
            as_json=as_json,
            code="invalid_parameters",
        )
    if not name.strip():
        fail("--name must not be empty", as_json=as_json, code="invalid_parameters")

    async def work(database: Database, settings: Settings) -> dict[str, object]:
        now = Clock().now()
        async with database.write_sessions() as session, session.begin():
            account = await account_service.create_account(
                session, name=name.strip(), email=email, plan=plan, now=now, settings=settings
            )
            balance = await credit_service.get_balance(session, account_id=account.id)
        return {
            "id": account.id,
            "name": account.name,
            "email": account.email,
            "plan": account.plan,
            "balance": balance.total,
            "created_at": account.created_at,
        }

    emit(run_with_database(work, as_json=as_json), as_json=as_json, title="account")
