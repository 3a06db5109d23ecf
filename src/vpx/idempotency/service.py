"""D12: a repeat with the same key and body returns the first response and charges nothing more.

The key is claimed in a transaction of its own (so concurrent repeats see it and get 409), and the
stored response is written in the request's own transaction, so it commits exactly when the
request's effects do. A request that fails releases its claim; a claim left by a crashed process
expires after ``CLAIM_TIMEOUT``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from datetime import timedelta

from fastapi import Request, Response
from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.db import get_database
from vpx.errors import IdempotencyInProgress, IdempotencyMismatch, InvalidParameters
from vpx.models import IdempotencyRecord
from vpx.secrets import SecretBox, is_sealed

CLAIM_TIMEOUT = timedelta(seconds=60)
HEADER = "Idempotency-Key"
KEPT_HEADERS = ("x-credits-charged", "x-credits-remaining", "location")


def fingerprint(method: str, path: str, body: bytes) -> str:
    try:
        canonical = json.dumps(json.loads(body), sort_keys=True, separators=(",", ":")).encode() if body else b""
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes: the bytes as sent
        canonical = body
    return hashlib.sha256(method.encode() + b" " + path.encode() + b"\n" + canonical).hexdigest()


async def run_idempotent(
    request: Request,
    session: AsyncSession,
    *,
    account_id: str,
    handler: Callable[[], Awaitable[Response]],
    seal_stored: bool = False,
) -> Response:
    """Runs ``handler`` once per idempotency key (when the request carries one).

    Call it before the request's session has done anything: the claim is a transaction of its own.
    ``seal_stored``: the response shows a secret (a webhook signing secret, shown once), so the copy
    kept for repeats is sealed (vpx.secrets) and opened only to answer a repeat.
    """
    key = request.headers.get(HEADER)
    if key is None:
        return await handler()
    key = key.strip()
    if not key or len(key) > 255 or not key.isprintable():
        raise InvalidParameters.field(HEADER, "must be 1 to 255 printable characters")
    state = request.app.state
    now = state.clock.now()
    ttl = timedelta(hours=state.settings.idempotency_ttl_hours)
    print_ = fingerprint(request.method, request.url.path, await request.body())

    async with get_database(request).write_sessions() as claim, claim.begin():
        existing = await claim.scalar(
            select(IdempotencyRecord).where(IdempotencyRecord.account_id == account_id, IdempotencyRecord.key == key)
        )
        stale = existing is not None and (
            existing.created_at < now - ttl
            or (existing.state == "in_progress" and existing.created_at < now - CLAIM_TIMEOUT)
        )
        if existing is not None and stale:
            await claim.delete(existing)
            await claim.flush()
            existing = None
        if existing is not None:
            if existing.fingerprint != print_:
                raise IdempotencyMismatch(f"The idempotency key {key!r} was used with another request; use a new key.")
            if existing.state != "completed":
                raise IdempotencyInProgress(f"A request with the idempotency key {key!r} is still running.")
            headers = dict(existing.response_headers or {})
            headers["Idempotent-Replayed"] = "true"
            content = existing.response_body or ""
            return Response(
                content=_box(request).open(content) if is_sealed(content) else content,
                status_code=existing.response_status or 200,
                headers=headers,
                media_type="application/json",
            )
        try:
            claim.add(
                IdempotencyRecord(
                    account_id=account_id, key=key, fingerprint=print_, state="in_progress", created_at=now
                )
            )
            await claim.flush()
        except IntegrityError as exc:
            raise IdempotencyInProgress(f"A request with the idempotency key {key!r} is still running.") from exc

    try:
        response = await handler()
    except BaseException as exc:
        # End the request's transaction first: on SQLite it may hold the write lock the release needs.
        if getattr(exc, "keep_changes", False):
            await session.commit()
        else:
            await session.rollback()
        await _release(request, account_id=account_id, key=key)
        raise
    if 200 <= response.status_code < 300:
        body = bytes(response.body) if hasattr(response, "body") else b""
        kept = _box(request).seal(body.decode()) if seal_stored else body.decode()
        await session.execute(
            update(IdempotencyRecord)
            .where(IdempotencyRecord.account_id == account_id, IdempotencyRecord.key == key)
            .values(
                state="completed",
                response_status=response.status_code,
                response_body=kept,
                response_headers={k: v for k, v in response.headers.items() if k.lower() in KEPT_HEADERS},
            )
        )
    else:
        await session.commit()
        await _release(request, account_id=account_id, key=key)
    return response


def _box(request: Request) -> SecretBox:
    box: SecretBox = request.app.state.secrets
    return box


async def _release(request: Request, *, account_id: str, key: str) -> None:
    async with get_database(request).write_sessions() as session, session.begin():
        await session.execute(
            delete(IdempotencyRecord).where(
                IdempotencyRecord.account_id == account_id,
                IdempotencyRecord.key == key,
                IdempotencyRecord.state == "in_progress",
            )
        )
