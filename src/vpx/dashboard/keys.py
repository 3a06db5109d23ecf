"""The API keys page: create (the secret shown once), rename, IP allow-list, revoke, rotation (D5, D28);
a switch between live keys and test keys (test mode, vpx.sandbox), the test balance shown in test mode."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Annotated, Any

from fastapi import Path, Request, Response
from fastapi.responses import RedirectResponse
from pydantic import BaseModel, Field, ValidationError, field_validator

from vpx.auth import service as key_service
from vpx.auth.keys import LABELS, KeyType, is_test_key, prefix_of
from vpx.auth.schemas import MAX_ALLOWLIST_ENTRIES, AllowlistEntry, KeyName
from vpx.credits import service as credit_service
from vpx.dashboard.pages import Page, dashboard_router, field_errors, form_values
from vpx.dashboard.sessions import SignedIn, UserForm
from vpx.dashboard.web import render
from vpx.db import ReadSession, WriteSession
from vpx.deps import AppSettings, Now
from vpx.errors import InvalidParameters, KeyLimitReached
from vpx.models import ApiKey

router = dashboard_router()

KeyId = Annotated[str, Path(max_length=40)]

DUE_SOON = timedelta(days=14)
KEY_TYPES = [
    (KeyType.ro, "Search and view contacts and signals, the account and its ledger."),
    (KeyType.live, "Everything a buyer does: also reveal contacts, buy signals, export CSV."),
    (KeyType.full, "All permissions: also key management, the signal stream, auto-buy, webhooks."),
]


def mode_of(request: Request, asked: str | None) -> str:
    """``test`` when asked for and the server runs test mode, else ``live``."""
    return "test" if asked == "test" and request.app.state.sandbox is not None else "live"


def _keys_url(mode: str, done: str = "") -> str:
    query = "&".join(part for part in (f"done={done}" if done else "", "mode=test" if mode == "test" else "") if part)
    return "/dashboard/keys" + (f"?{query}" if query else "")


async def _test_balance(request: Request, account_id: str, now: datetime) -> credit_service.Balance:
    """The account's test balance (the sandbox's shadow of the account, made on first use)."""
    sandbox = request.app.state.sandbox
    await sandbox.ensure_account(account_id)
    async with sandbox.database.read_sessions() as session:
        return await credit_service.effective_balance(
            session, account_id=account_id, now=now, settings=sandbox.settings
        )


def parse_allowlist(text: str) -> list[str]:
    """Entries separated by commas, spaces or new lines."""
    return [part for part in re.split(r"[\s,]+", text) if part]


class KeyForm(BaseModel):
    type: KeyType
    name: KeyName = Field(max_length=200)
    ip_allowlist: list[AllowlistEntry] = Field(default_factory=list, max_length=MAX_ALLOWLIST_ENTRIES)

    @field_validator("name")
    @classmethod
    def _named(cls, value: str) -> str:
        if not value:
            raise ValueError("give the key a name, to recognise it later")
        return value


def _key_row(key: ApiKey, now: datetime) -> dict[str, Any]:
    key_type = KeyType(key.key_type)
    active = key.revoked_at is None
    return {
        "key": key,
        "label": LABELS[key_type],
        "active": active,
        "due": key_service.rotation_due(key, now),
        "due_soon": active and now < key.rotate_by <= now + DUE_SOON,
        "allowlist": ", ".join(key.ip_allowlist or []),
    }


async def _keys_page(
    request: Request,
    session: Any,
    user: SignedIn,
    now: datetime,
    max_active: int,
    *,
    values: dict[str, str] | None = None,
    errors: dict[str, str] | None = None,
    notice: str = "",
    status: int = 200,
    mode: str = "live",
) -> Response:
    test = mode == "test"
    keys = await key_service.list_keys(session, account_id=user.account_id, livemode=not test)
    rows = [_key_row(k, now) for k in keys]
    active = sum(1 for r in rows if r["active"])
    return render(
        request,
        "keys.html",
        {
            "title": "API keys",
            "section": "keys",
            "rows": rows,
            "active_count": active,
            "max_active": max_active,
            "at_limit": active >= max_active,
            "key_types": [(t.value, LABELS[t], prefix_of(t, test=test), text) for t, text in KEY_TYPES],
            "values": values or {"type": "live"},
            "errors": errors or {},
            "notice": notice,
            "mode": mode,
            "test_mode_available": request.app.state.sandbox is not None,
            "test_balance": await _test_balance(request, user.account_id, now) if test else None,
        },
        status=status,
    )


@router.get("/keys")
async def keys_page(request: Request, user: Page, session: ReadSession, settings: AppSettings, now: Now) -> Response:
    notice = {"revoked": "The key was revoked; requests made with it now get 401.", "saved": "Saved."}.get(
        request.query_params.get("done", ""), ""
    )
    mode = mode_of(request, request.query_params.get("mode"))
    return await _keys_page(request, session, user, now, settings.max_active_keys, notice=notice, mode=mode)


@router.post("/keys")
async def create_key(
    request: Request, user: Page, form: UserForm, session: WriteSession, settings: AppSettings, now: Now
) -> Response:
    values = form_values(form, "type", "name", "ip_allowlist", "mode")
    mode = mode_of(request, values["mode"])
    try:
        data = KeyForm(type=values["type"], name=values["name"], ip_allowlist=parse_allowlist(values["ip_allowlist"]))
    except ValidationError as exc:
        errors = field_errors(exc)
        return await _keys_page(
            request, session, user, now, settings.max_active_keys, values=values, errors=errors, status=422, mode=mode
        )
    try:
        key, secret = await key_service.create_key(
            session,
            account_id=user.account_id,
            key_type=data.type,
            name=data.name,
            ip_allowlist=data.ip_allowlist,
            now=now,
            settings=settings,
            livemode=mode == "live",
        )
    except (InvalidParameters, KeyLimitReached) as exc:
        # Both are raised before anything is written.
        field = "ip_allowlist" if isinstance(exc, InvalidParameters) else "form"
        return await _keys_page(
            request,
            session,
            user,
            now,
            settings.max_active_keys,
            values=values,
            errors={field: exc.detail.removeprefix("ip_allowlist: ")},
            status=exc.status,
            mode=mode,
        )
    if mode == "test":
        await request.app.state.sandbox.ensure_account(user.account_id)  # the sandbox ready for its first request
    # D3: the secret exists only in this response; it is never stored and cannot be shown again.
    return render(
        request,
        "key_created.html",
        {
            "title": "Your new API key",
            "section": "keys",
            "row": _key_row(key, now),
            "secret": secret,
            "mode": mode,
            "keys_url": _keys_url(mode),
        },
        status=201,
    )


@router.post("/keys/{key_id}")
async def update_key(
    request: Request, key_id: KeyId, user: Page, form: UserForm, session: WriteSession, settings: AppSettings, now: Now
) -> Response:
    values = form_values(form, "name", "ip_allowlist")
    key = await key_service.get_account_key(session, key_id=key_id, account_id=user.account_id)
    mode = "test" if is_test_key(key.display_prefix) else "live"
    try:
        data = KeyForm(type=KeyType.ro, name=values["name"], ip_allowlist=parse_allowlist(values["ip_allowlist"]))
    except ValidationError as exc:
        errors = {f"edit-{key_id}-{k}": v for k, v in field_errors(exc).items()}
        return await _keys_page(
            request, session, user, now, settings.max_active_keys, errors=errors, status=422, mode=mode
        )
    try:
        await key_service.update_key(
            session, key_id=key_id, account_id=user.account_id, name=data.name, ip_allowlist=data.ip_allowlist
        )
    except InvalidParameters as exc:
        errors = {f"edit-{key_id}-ip_allowlist": exc.detail.removeprefix("ip_allowlist: ")}
        return await _keys_page(
            request, session, user, now, settings.max_active_keys, errors=errors, status=422, mode=mode
        )
    return RedirectResponse(_keys_url(mode, "saved"), status_code=303)


@router.post("/keys/{key_id}/revoke")
async def revoke_key(
    request: Request, key_id: KeyId, user: Page, form: UserForm, session: WriteSession, now: Now
) -> Response:
    key = await key_service.get_account_key(session, key_id=key_id, account_id=user.account_id)
    mode = "test" if is_test_key(key.display_prefix) else "live"
    await key_service.revoke_key(session, key_id=key_id, account_id=user.account_id, now=now)
    return RedirectResponse(_keys_url(mode, "revoked"), status_code=303)
