"""Creating, finding and revoking API keys (D3, D5, D28)."""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, and_, delete, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.auth import network
from vpx.auth.keys import TEST_PREFIX, KeyType, display_prefix, generate_key, hash_key, is_test_key
from vpx.config import Settings
from vpx.db import Database, DriverStatement, driver_datetime
from vpx.errors import Conflict, InvalidParameters, KeyLimitReached, NotFound
from vpx.ids import new_id
from vpx.models import Account, ApiKey

# Keys an account keeps, active and revoked (as webhooks have their cap): a new key past it makes room
# by forgetting the keys revoked longest ago, so rotating never stops; only an account whose keys are
# all active (VPX_MAX_ACTIVE_KEYS raised that high) is refused.
MAX_KEYS_PER_ACCOUNT = 100


@dataclass(frozen=True)
class KnownKey:
    """What authentication needs to know of a key, loaded in one query."""

    id: str
    key_type: KeyType
    account_id: str
    ip_allowlist: list[str]
    revoked: bool
    rotate_by: datetime
    last_used_at: datetime | None
    account_status: str = "active"
    # False for a test key (vpx_test_…): its requests run against the sandbox (vpx.sandbox).
    livemode: bool = True


async def create_key(
    session: AsyncSession,
    *,
    account_id: str,
    key_type: KeyType,
    name: str,
    ip_allowlist: list[str],
    now: datetime,
    settings: Settings,
    livemode: bool = True,
) -> tuple[ApiKey, str]:
    """A new key and its secret, which is never stored and so can be shown only now; a test key
    (``vpx_test_…``) with ``livemode=False``.

    Refuses a sixth active key of the same mode (D5) with 409, even under concurrent creation: the
    account row is locked first.
    """
    try:
        allowlist = network.normalise_allowlist(ip_allowlist)
    except ValueError as exc:
        raise InvalidParameters.field("ip_allowlist", str(exc)) from exc
    locked = await session.scalar(select(Account.id).where(Account.id == account_id).with_for_update())
    if locked is None:
        raise NotFound(f"No account {account_id}.")
    active = await count_active_keys(session, account_id=account_id, livemode=livemode)
    if active >= settings.max_active_keys:
        mode = "" if livemode else " test"
        raise KeyLimitReached(
            f"The account already has {active} active{mode} keys, the most allowed; revoke one first."
        )
    await _make_room(session, account_id=account_id)
    secret = generate_key(key_type, test=not livemode)
    key = ApiKey(
        id=new_id("key"),
        account_id=account_id,
        key_type=key_type.value,
        name=name,
        display_prefix=display_prefix(secret, key_type),
        secret_hash=hash_key(secret),
        ip_allowlist=allowlist,
        created_at=now,
        rotate_by=now + timedelta(days=settings.key_rotation_days),
    )
    session.add(key)
    await session.flush()
    return key, secret


async def _make_room(session: AsyncSession, *, account_id: str) -> None:
    """Forgets the account's longest-revoked keys so that one more fits under MAX_KEYS_PER_ACCOUNT
    (the account row is locked by the caller); 409 when the keys are all active."""
    kept = int(
        await session.scalar(select(func.count()).select_from(ApiKey).where(ApiKey.account_id == account_id)) or 0
    )
    excess = kept - MAX_KEYS_PER_ACCOUNT + 1
    if excess <= 0:
        return
    oldest = list(
        await session.scalars(
            select(ApiKey.id)
            .where(ApiKey.account_id == account_id, ApiKey.revoked_at.is_not(None))
            .order_by(ApiKey.revoked_at, ApiKey.created_at, ApiKey.id)
            .limit(excess)
        )
    )
    if len(oldest) < excess:
        raise KeyLimitReached(
            f"The account already has {kept} keys, the most kept ({MAX_KEYS_PER_ACCOUNT} keys); revoke one first."
        )
    await session.execute(delete(ApiKey).where(ApiKey.id.in_(oldest)).execution_options(synchronize_session=False))


# Every request runs it: on the driver itself (vpx.db.DriverStatement).
_FIND_KEY = DriverStatement(
    "SELECT k.id, k.key_type, k.account_id, k.ip_allowlist, k.revoked_at, k.rotate_by, k.last_used_at, a.status "
    "FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.secret_hash = $1"
)


async def find_key(database: Database, *, secret: str) -> KnownKey | None:
    rows = await database.fetch(_FIND_KEY, hash_key(secret))
    if not rows:
        return None
    key_id, key_type, account_id, allowlist, revoked_at, rotate_by, last_used_at, status = rows[0]
    if isinstance(allowlist, str):  # SQLite hands JSON back as text
        allowlist = json.loads(allowlist)
    rotate = driver_datetime(rotate_by)
    assert rotate is not None
    return KnownKey(
        id=key_id,
        key_type=KeyType(key_type),
        account_id=account_id,
        ip_allowlist=list(allowlist or []),
        revoked=revoked_at is not None,
        rotate_by=rotate,
        last_used_at=driver_datetime(last_used_at),
        account_status=status,
        livemode=not is_test_key(secret),
    )


async def get_key(session: AsyncSession, *, key_id: str, account_id: str | None = None) -> ApiKey:
    key = await session.get(ApiKey, key_id)
    if key is None or (account_id is not None and key.account_id != account_id):
        raise NotFound(f"No key {key_id}.")
    return key


async def revoke_key(session: AsyncSession, *, key_id: str, now: datetime, account_id: str | None = None) -> ApiKey:
    """Revokes a key at once; revoking a revoked key changes nothing."""
    key = await get_key(session, key_id=key_id, account_id=account_id)
    if key.revoked_at is None:
        key.revoked_at = now
        await session.flush()
    return key


async def touch_key(session: AsyncSession, *, key_id: str, now: datetime) -> None:
    await session.execute(update(ApiKey).where(ApiKey.id == key_id).values(last_used_at=now))


def key_view(key: ApiKey) -> dict[str, Any]:
    return {
        "id": key.id,
        "account_id": key.account_id,
        "type": key.key_type,
        "name": key.name,
        "prefix": key.display_prefix,
        "mode": key_mode(key),
        "ip_allowlist": list(key.ip_allowlist or []),
        "created_at": key.created_at,
        "rotate_by": key.rotate_by,
        "last_used_at": key.last_used_at,
        "revoked_at": key.revoked_at,
    }


def key_mode(key: ApiKey) -> str:
    """``test`` for a test key, ``live`` otherwise: the prefix a key shows says which."""
    return "test" if is_test_key(key.display_prefix) else "live"


async def count_active_keys(session: AsyncSession, *, account_id: str, livemode: bool | None = None) -> int:
    """The account's active keys (of one mode, live or test, when ``livemode`` is given)."""
    query = select(func.count()).select_from(ApiKey).where(ApiKey.account_id == account_id, ApiKey.revoked_at.is_(None))
    if livemode is not None:
        query = query.where(of_mode(livemode))
    return int(await session.scalar(query) or 0)


def of_mode(livemode: bool) -> ColumnElement[bool]:
    """The condition on keys of one mode (a test key's displayed prefix begins ``vpx_test_``)."""
    test = ApiKey.display_prefix.like(TEST_PREFIX.replace("_", r"\_") + "%", escape="\\")
    return ~test if livemode else test


async def list_keys(
    session: AsyncSession,
    *,
    account_id: str,
    include_revoked: bool = True,
    only_revoked: bool = False,
    after: KeyPosition | None = None,
    limit: int | None = None,
    livemode: bool | None = None,
) -> list[ApiKey]:
    """The account's keys (of one mode, when ``livemode`` is given), active ones first, newest first
    within each group; with ``after``, those that follow that position in this order."""
    query = select(ApiKey).where(ApiKey.account_id == account_id)
    if livemode is not None:
        query = query.where(of_mode(livemode))
    if not include_revoked:
        query = query.where(ApiKey.revoked_at.is_(None))
    if only_revoked:
        query = query.where(ApiKey.revoked_at.is_not(None))
    if after is not None:
        query = query.where(after.before_the_rest())
    query = query.order_by(ApiKey.revoked_at.is_not(None), ApiKey.created_at.desc(), ApiKey.id)
    if limit is not None:
        query = query.limit(limit)
    return list((await session.scalars(query)).all())


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class KeyPosition:
    """A key's place in the list's order (active first, then newest first, then id), for paging."""

    revoked: bool
    created_at: datetime
    key_id: str

    @classmethod
    def of(cls, key: ApiKey) -> KeyPosition:
        return cls(key.revoked_at is not None, key.created_at, key.id)

    def before_the_rest(self) -> ColumnElement[bool]:
        """The condition on keys that come after this position."""
        later_in_group = or_(
            ApiKey.created_at < self.created_at, and_(ApiKey.created_at == self.created_at, ApiKey.id > self.key_id)
        )
        if self.revoked:
            return and_(ApiKey.revoked_at.is_not(None), later_in_group)
        return or_(ApiKey.revoked_at.is_not(None), and_(ApiKey.revoked_at.is_(None), later_in_group))

    def cursor(self) -> str:
        micros = (self.created_at - _EPOCH) // timedelta(microseconds=1)
        text = f"keys:{int(self.revoked)}.{micros}.{self.key_id}"
        return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")

    @classmethod
    def from_cursor(cls, cursor: str) -> KeyPosition:
        """The position a cursor of this list holds; a 422 for anything else (as vpx.cursors)."""
        try:
            text = base64.urlsafe_b64decode((cursor + "=" * (-len(cursor) % 4)).encode()).decode()
            kind, _, rest = text.partition(":")
            revoked, micros, key_id = rest.split(".", 2)
            if (
                kind == "keys"
                and revoked in ("0", "1")
                and micros.isdigit()
                and len(micros) < 19
                and KEY_ID.match(key_id)
            ):
                return cls(revoked == "1", _EPOCH + timedelta(microseconds=int(micros)), key_id)
        except (binascii.Error, UnicodeDecodeError, ValueError, OverflowError):
            pass
        raise InvalidParameters.field("cursor", "is not a cursor returned by this endpoint")


async def update_key(
    session: AsyncSession,
    *,
    key_id: str,
    account_id: str,
    name: str | None = None,
    ip_allowlist: list[str] | None = None,
) -> ApiKey:
    """Renames a key or replaces its IP allow-list (D6, D28); a revoked key is a 409, a key of another
    account a 404. An empty allow-list lifts the restriction."""
    key = await get_account_key(session, key_id=key_id, account_id=account_id)
    if key.revoked_at is not None:
        raise Conflict(f"Key {key_id} is revoked; a revoked key cannot be changed.")
    if ip_allowlist is not None:
        try:
            key.ip_allowlist = network.normalise_allowlist(ip_allowlist)
        except ValueError as exc:
            raise InvalidParameters.field("ip_allowlist", str(exc)) from exc
    if name is not None:
        key.name = name
    await session.flush()
    return key


def rotation_due(key: ApiKey, now: datetime) -> bool:
    """D28: past its rotate_by date, the key still works but should be replaced."""
    return key.revoked_at is None and now >= key.rotate_by


KEY_ID = re.compile(r"^key_[0-9A-Za-z]{1,32}$")


async def get_account_key(session: AsyncSession, *, key_id: str, account_id: str) -> ApiKey:
    """The account's key, looked up only when the id has the form this service issues: anything else
    cannot exist, and never reaches the database (a NUL byte would upset PostgreSQL)."""
    if not KEY_ID.match(key_id):
        raise NotFound("No such key.")
    return await get_key(session, key_id=key_id, account_id=account_id)
