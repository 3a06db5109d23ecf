"""The operator's account lifecycle: list, show, suspend, resume, delete and grant, each written to the
account's audit trail with who did it and when.

Suspension holds everything and loses nothing: keys get 403 ``account_suspended``, the dashboard
refuses to sign in, auto-buy rules and sequences stop, webhook deliveries wait (their retries are not
spent) and go out in order on resume. Deletion erases what identifies or acts for the customer (keys,
sign-in, sessions, webhooks and their secrets, provider keys, mailboxes, visitor sites, the name and
email) and keeps what accounting needs (the ledger, purchases); contributed contacts stay in the
catalogue without the publisher link.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.accounts.service import get_account
from vpx.config import Settings
from vpx.contacts.reveal import lock_accounts
from vpx.credits import service as credit_service
from vpx.errors import Conflict
from vpx.models import (
    Account,
    AccountAudit,
    AccountLogin,
    ApiKey,
    AutoBuyRule,
    AutoBuyRuleKey,
    Contact,
    DashboardSession,
    EnrichmentKey,
    Mailbox,
    PasswordReset,
    VisitorSite,
    WebhookDelivery,
    WebhookEndpoint,
)
from vpx.sequences import links

Status = Literal["active", "suspended", "deleted"]
STATUSES: tuple[Status, ...] = ("active", "suspended", "deleted")
DELETED_NAME = "(deleted)"


@dataclass(frozen=True)
class AccountSummary:
    id: str
    name: str
    email: str | None
    plan: str
    status: str
    balance: Decimal
    keys: int
    created_at: datetime
    last_request_at: datetime | None
    suspended_at: datetime | None
    suspension_reason: str | None
    deleted_at: datetime | None

    def view(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "email": self.email,
            "plan": self.plan,
            "status": self.status,
            "balance": self.balance,
            "keys": self.keys,
            "created_at": self.created_at,
            "last_request_at": self.last_request_at,
            "suspended_at": self.suspended_at,
            "suspension_reason": self.suspension_reason,
            "deleted_at": self.deleted_at,
        }


def suspended(account_id: Any) -> Any:
    """An EXISTS condition, true when the account of ``account_id`` (a column) is suspended: what the
    worker's lanes use to hold its work."""
    return select(Account.id).where(Account.id == account_id, Account.status == "suspended").exists()


async def summaries(
    session: AsyncSession,
    *,
    now: datetime,
    settings: Settings,
    status: Status | None = None,
    account_id: str | None = None,
    limit: int = 1000,
) -> list[AccountSummary]:
    """Accounts with their balance, active keys and last request (the newest use of any key, to the
    minute), oldest first."""
    keys = (
        select(
            ApiKey.account_id,
            func.count(ApiKey.id).filter(ApiKey.revoked_at.is_(None)).label("active"),
            func.max(ApiKey.last_used_at).label("last_used"),
        )
        .group_by(ApiKey.account_id)
        .subquery()
    )
    query = (
        select(Account, keys.c.active, keys.c.last_used)
        .outerjoin(keys, keys.c.account_id == Account.id)
        .order_by(Account.created_at, Account.id)
        .limit(limit)
    )
    if status is not None:
        query = query.where(Account.status == status)
    if account_id is not None:
        query = query.where(Account.id == account_id)
    rows = (await session.execute(query)).all()
    reasons = await _suspension_reasons(session, [a.id for a, _, _ in rows if a.status == "suspended"])
    found = []
    for account, active, last_used in rows:
        balance = credit_service.balance_of(account, now=now, settings=settings)
        found.append(
            AccountSummary(
                id=account.id,
                name=account.name,
                email=account.email,
                plan=account.plan,
                status=account.status,
                balance=balance.total,
                keys=int(active or 0),
                created_at=account.created_at,
                last_request_at=last_used,
                suspended_at=account.suspended_at,
                suspension_reason=reasons.get(account.id),
                deleted_at=account.deleted_at,
            )
        )
    return found


async def summary(session: AsyncSession, *, account_id: str, now: datetime, settings: Settings) -> AccountSummary:
    await get_account(session, account_id=account_id)  # 404 for an unknown id
    [found] = await summaries(session, now=now, settings=settings, account_id=account_id)
    return found


async def _suspension_reasons(session: AsyncSession, account_ids: list[str]) -> dict[str, str]:
    if not account_ids:
        return {}
    latest = (
        select(func.max(AccountAudit.id))
        .where(AccountAudit.account_id.in_(account_ids), AccountAudit.action == "suspend")
        .group_by(AccountAudit.account_id)
    )
    query = select(AccountAudit.account_id, AccountAudit.detail).where(AccountAudit.id.in_(latest))
    rows = await session.execute(query)
    return {account_id: str((detail or {}).get("reason", "")) for account_id, detail in rows}


async def _locked(session: AsyncSession, account_id: str) -> Account:
    await lock_accounts(session, [account_id])
    account = await get_account(session, account_id=account_id)
    await session.refresh(account)
    return account


def _audit(session: AsyncSession, account_id: str, action: str, actor: str, now: datetime, **detail: Any) -> None:
    session.add(AccountAudit(account_id=account_id, action=action, actor=actor, detail=detail, created_at=now))


async def suspend(session: AsyncSession, *, account_id: str, reason: str, actor: str, now: datetime) -> bool:
    """Suspends an active account; False (and nothing written) when it already is. A deleted account
    cannot be suspended (409)."""
    account = await _locked(session, account_id)
    if account.status == "deleted":
        raise Conflict(f"Account {account_id} is deleted.")
    if account.status == "suspended":
        return False
    account.status, account.suspended_at = "suspended", now
    _audit(session, account_id, "suspend", actor, now, reason=reason)
    return True


async def resume(session: AsyncSession, *, account_id: str, actor: str, now: datetime) -> bool:
    """Lifts a suspension; False when the account was not suspended. Held deliveries, rules and
    sequences go on from where they stopped."""
    account = await _locked(session, account_id)
    if account.status == "deleted":
        raise Conflict(f"Account {account_id} is deleted.")
    if account.status == "active":
        return False
    account.status, account.suspended_at = "active", None
    _audit(session, account_id, "resume", actor, now)
    return True


async def delete_account(session: AsyncSession, *, account_id: str, actor: str, now: datetime) -> bool:
    """Erases the account's identity and everything that acts for it; keeps the ledger and purchases.
    False (and nothing more written) when it is already deleted."""
    account = await _locked(session, account_id)
    if account.status == "deleted":
        return False
    await session.execute(
        update(ApiKey).where(ApiKey.account_id == account_id, ApiKey.revoked_at.is_(None)).values(revoked_at=now)
    )
    await session.execute(delete(DashboardSession).where(DashboardSession.account_id == account_id))
    await session.execute(delete(AccountLogin).where(AccountLogin.account_id == account_id))
    await session.execute(delete(PasswordReset).where(PasswordReset.account_id == account_id))
    # Webhooks with their secrets; deliveries still waiting are cancelled (sent ones stay as history).
    await session.execute(
        update(WebhookDelivery)
        .where(WebhookDelivery.account_id == account_id, WebhookDelivery.status == "pending")
        .values(status="cancelled", finished_at=now, leased_until=None, leased_by=None)
    )
    await session.execute(delete(WebhookEndpoint).where(WebhookEndpoint.account_id == account_id))
    await session.execute(delete(EnrichmentKey).where(EnrichmentKey.account_id == account_id))
    # Mailboxes with their sealed passwords; their sequences, enrollments and messages go with them
    # (the unsubscribe links of the emails sent are kept 31 days, vpx.sequences.links).
    await links.retire(session, Mailbox.account_id == account_id, now=now)
    await session.execute(delete(Mailbox).where(Mailbox.account_id == account_id))
    await session.execute(delete(VisitorSite).where(VisitorSite.account_id == account_id))
    rules = select(AutoBuyRule.id).where(AutoBuyRule.account_id == account_id)
    await session.execute(delete(AutoBuyRuleKey).where(AutoBuyRuleKey.rule_id.in_(rules)))
    await session.execute(
        update(AutoBuyRule)
        .where(AutoBuyRule.account_id == account_id, AutoBuyRule.status != "deleted")
        .values(status="deleted", paused_reason="account deleted", updated_at=now)
    )
    await session.execute(
        update(Contact).where(Contact.publisher_account_id == account_id).values(publisher_account_id=None)
    )
    account.name, account.email = DELETED_NAME, None
    account.status, account.deleted_at, account.suspended_at = "deleted", now, None
    _audit(session, account_id, "delete", actor, now)
    return True


async def grant(
    session: AsyncSession,
    *,
    account_id: str,
    amount: Decimal,
    note: str,
    actor: str,
    now: datetime,
    settings: Settings,
) -> credit_service.Balance:
    """Adds carried-over credits with a ledger entry, and writes the grant to the audit trail. A deleted
    account gets none (409)."""
    account = await _locked(session, account_id)
    if account.status == "deleted":
        raise Conflict(f"Account {account_id} is deleted.")
    balance = await credit_service.add_credits(
        session,
        account_id=account_id,
        amount=amount,
        kind="grant",
        reference=None,
        description=note,
        now=now,
        settings=settings,
    )
    _audit(session, account_id, "grant", actor, now, amount=format(amount.normalize(), "f"), note=note)
    return balance


async def audit_trail(session: AsyncSession, *, account_id: str) -> list[dict[str, Any]]:
    """Oldest first. Kept after the account is deleted."""
    await get_account(session, account_id=account_id)
    rows = await session.scalars(
        select(AccountAudit).where(AccountAudit.account_id == account_id).order_by(AccountAudit.id)
    )
    return [
        {"action": row.action, "actor": row.actor, "at": row.created_at, "detail": dict(row.detail or {})}
        for row in rows
    ]
