"""/api/v1/keys: key management for Full Access keys (D28): list, create, rename, allow-list, revoke.

Keys live in the main database whatever their mode; a test key sees and manages test keys only, so a key
handed to a test suite can never make a live one (vpx.sandbox)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.responses import JSONResponse

from vpx.auth import service as key_service
from vpx.auth.dependencies import Caller, ManageCaller
from vpx.auth.keys import LABELS, KeyType
from vpx.auth.schemas import KeyCreate, KeyCreated, KeyList, KeyUpdate, KeyView
from vpx.db import ReadSession, WriteSession
from vpx.deps import AppSettings, Now
from vpx.errors import InsufficientPermission, InvalidParameters, NotFound, problem_responses
from vpx.idempotency.service import run_idempotent
from vpx.models import ApiKey

router = APIRouter(prefix="/api/v1/keys", tags=["keys"])

KeyId = Annotated[str, Path(max_length=40, examples=["key_3kTz9QmWb1xYpL0a"], description="`key_…`")]


def key_view(key: ApiKey, now: datetime) -> KeyView:
    key_type = KeyType(key.key_type)
    return KeyView(
        id=key.id,
        type=key_type,
        type_label=LABELS[key_type],
        name=key.name,
        prefix=key.display_prefix,
        mode="test" if key_service.key_mode(key) == "test" else "live",
        ip_allowlist=list(key.ip_allowlist or []),
        status="revoked" if key.revoked_at is not None else "active",
        created_at=key.created_at,
        rotate_by=key.rotate_by,
        rotation_due=key_service.rotation_due(key, now),
        last_used_at=key.last_used_at,
        revoked_at=key.revoked_at,
    )


@router.get("", response_model=KeyList, responses=problem_responses(401, 403, 422, 429), summary="List API keys")
async def list_keys(
    caller: ManageCaller,
    session: ReadSession,
    settings: AppSettings,
    now: Now,
    status: Annotated[
        Literal["active", "revoked"] | None, Query(description="Only active or only revoked keys; default both.")
    ] = None,
    limit: Annotated[
        int,
        Query(ge=1, le=key_service.MAX_KEYS_PER_ACCOUNT, description="Page size, 1–100; the default holds every key."),
    ] = key_service.MAX_KEYS_PER_ACCOUNT,
    cursor: Annotated[str | None, Query(max_length=200, description="From a previous page.")] = None,
    mode: Annotated[
        Literal["live", "test"] | None,
        Query(description="Only live or only test keys; default both (a test key lists test keys only)."),
    ] = None,
) -> KeyList:
    """The account's keys, active first, newest first; secrets are never shown again."""
    after = key_service.KeyPosition.from_cursor(cursor) if cursor else None
    livemode = False if not caller.livemode else (None if mode is None else mode == "live")
    keys = await key_service.list_keys(
        session,
        account_id=caller.account_id,
        include_revoked=status != "active",
        only_revoked=status == "revoked",
        after=after,
        limit=limit + 1,
        livemode=livemode,
    )
    more = len(keys) > limit
    keys = keys[:limit]
    return KeyList(
        keys=[key_view(k, now) for k in keys],
        active_keys=await key_service.count_active_keys(
            session, account_id=caller.account_id, livemode=caller.livemode
        ),
        max_active_keys=settings.max_active_keys,
        max_keys=key_service.MAX_KEYS_PER_ACCOUNT,
        limit=limit,
        next_cursor=key_service.KeyPosition.of(keys[-1]).cursor() if more and keys else None,
    )


@router.post(
    "",
    status_code=201,
    response_model=KeyCreated,
    responses=problem_responses(400, 401, 403, 409, 413, 422, 429),
    summary="Create an API key",
)
async def create_key(
    body: KeyCreate,
    request: Request,
    caller: ManageCaller,
    session: WriteSession,
    settings: AppSettings,
    now: Now,
) -> Response:
    """A new key; its `secret` is in this response only. At most 5 active keys of each mode, live and
    test (a sixth is a 409 `key_limit_reached`). `"mode": "test"` makes a test key (`vpx_test_…`); a test
    key makes test keys only; a server without test mode makes none (422). Accepts `Idempotency-Key`: a
    repeat with the same key and body within 24 hours returns the same key, with `secret: null`."""
    if not caller.livemode and body.mode != "test":
        raise InsufficientPermission('A test key can create test keys only: send "mode": "test".')
    if body.mode == "test" and request.app.state.sandbox is None:
        raise InvalidParameters("This server runs without test mode: it makes no test keys.")
    created: dict[str, KeyCreated] = {}

    async def handler() -> Response:
        key, secret = await key_service.create_key(
            session,
            account_id=caller.account_id,
            key_type=body.type,
            name=body.name,
            ip_allowlist=body.ip_allowlist,
            now=now,
            settings=settings,
            livemode=body.mode == "live",
        )
        if body.mode == "test" and request.app.state.sandbox is not None:
            # The sandbox made now, not by the new key's first request (vpx.sandbox).
            await request.app.state.sandbox.ensure_account(caller.account_id)
        view = key_view(key, now)
        created["view"] = KeyCreated(**view.model_dump(), secret=secret)
        # D3: what an idempotent repeat would replay is stored, so it must not hold the secret.
        stored = KeyCreated(**view.model_dump(), secret=None)
        return JSONResponse(
            stored.model_dump(mode="json"), status_code=201, headers={"Location": f"/api/v1/keys/{key.id}"}
        )

    response = await run_idempotent(request, session, account_id=caller.account_id, handler=handler)
    if "view" not in created:
        return response
    return JSONResponse(
        created["view"].model_dump(mode="json"),
        status_code=201,
        headers={"Location": f"/api/v1/keys/{created['view'].id}", "Cache-Control": "no-store"},
    )


@router.get(
    "/{key_id}", response_model=KeyView, responses=problem_responses(401, 403, 404, 422, 429), summary="Get a key"
)
async def get_key(key_id: KeyId, caller: ManageCaller, session: ReadSession, now: Now) -> KeyView:
    key = await key_service.get_account_key(session, key_id=key_id, account_id=caller.account_id)
    return key_view(_of_callers_mode(key, caller), now)


def _of_callers_mode(key: ApiKey, caller: Caller) -> ApiKey:
    """A test key sees test keys only: a live key is, to it, a key that does not exist."""
    if not caller.livemode and key_service.key_mode(key) != "test":
        raise NotFound("No such key.")
    return key


@router.patch(
    "/{key_id}",
    response_model=KeyView,
    responses=problem_responses(400, 401, 403, 404, 409, 413, 422, 429),
    summary="Rename a key or set its IP allow-list",
)
async def update_key(key_id: KeyId, body: KeyUpdate, caller: ManageCaller, session: WriteSession, now: Now) -> KeyView:
    """Changes only the fields sent; `ip_allowlist: []` lifts the restriction. A revoked key is a 409."""
    _of_callers_mode(await key_service.get_account_key(session, key_id=key_id, account_id=caller.account_id), caller)
    key = await key_service.update_key(
        session, key_id=key_id, account_id=caller.account_id, name=body.name, ip_allowlist=body.ip_allowlist
    )
    return key_view(key, now)


@router.delete(
    "/{key_id}",
    response_model=KeyView,
    responses=problem_responses(401, 403, 404, 422, 429),
    summary="Revoke a key",
)
async def revoke_key(key_id: KeyId, caller: ManageCaller, session: WriteSession, now: Now) -> KeyView:
    """Revokes the key at once (requests with it get 401); revoking a revoked key changes nothing."""
    _of_callers_mode(await key_service.get_account_key(session, key_id=key_id, account_id=caller.account_id), caller)
    key = await key_service.revoke_key(session, key_id=key_id, account_id=caller.account_id, now=now)
    return key_view(key, now)
