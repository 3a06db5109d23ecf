"""What an open signal stream was let in with, and whether that still holds.

A stream is authorised once, when it opens, and may stay open for ``VPX_STREAM_MAX_SECONDS``; what
let it in can end meanwhile, in any process (the CLI, the operator's API, another server process): a
revoked key (D28), a key whose IP allow-list no longer holds the stream's address (D6), a suspended or
deleted account, a dashboard sign-out. Each process's broker re-checks all its open streams together
every ``VPX_STREAM_ACCESS_CHECK_SECONDS`` (2 s) with one read of the database (one query for the
distinct keys with their accounts, two more when dashboard streams are open, whatever the number of
streams), and closes
the streams whose access has ended with the reason; a connection checks its subscription's state
before every message it sends, so nothing goes out once the end has been seen.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from vpx.auth import network
from vpx.contacts.search.postings import pg_array
from vpx.db import Database, DriverStatement

ClosedReason = Literal[
    "key_revoked", "ip_not_allowed", "account_suspended", "account_deleted", "signed_out", "session_expired"
]
KEY_REVOKED: Final = "key_revoked"
IP_NOT_ALLOWED: Final = "ip_not_allowed"
ACCOUNT_SUSPENDED: Final = "account_suspended"
ACCOUNT_DELETED: Final = "account_deleted"
SIGNED_OUT: Final = "signed_out"
SESSION_EXPIRED: Final = "session_expired"

# The words that go with each reason in the `closed` event.
CLOSED_DETAILS: dict[ClosedReason, str] = {
    KEY_REVOKED: "The API key was revoked.",
    IP_NOT_ALLOWED: "The API key's IP allow-list no longer includes this address.",
    ACCOUNT_SUSPENDED: "The account is suspended.",
    ACCOUNT_DELETED: "The account was deleted.",
    SIGNED_OUT: "The dashboard session was signed out.",
    SESSION_EXPIRED: "The dashboard session expired; sign in again.",
}


@dataclass(frozen=True, slots=True)
class KeyAccess:
    """A stream opened with an API key, from ``address`` (for the key's allow-list)."""

    key_id: str
    account_id: str
    address: str | None


@dataclass(frozen=True, slots=True)
class SessionAccess:
    """The dashboard's relay, opened with a signed-in session (its stored id, the cookie's digest);
    ``expires_in`` is how long the session had left then, in seconds."""

    session_id: str
    account_id: str
    expires_in: float


StreamAccess = KeyAccess | SessionAccess


@dataclass(frozen=True, slots=True)
class KeyState:
    revoked: bool
    ip_allowlist: list[str]


@dataclass(frozen=True, slots=True)
class AccessState:
    """What the database says now about the keys, sessions and accounts of the open streams. An id
    missing from its mapping is a row that is gone."""

    keys: dict[str, KeyState]
    sessions: set[str]
    accounts: dict[str, str]

    def reason(self, access: StreamAccess) -> ClosedReason | None:
        """Why a stream with this access must end now; None while it may go on. The account's state
        comes first: a deleted account's keys are revoked and its sessions gone as well. A key that is
        gone (its row, and so its account with it) is revoked."""
        if isinstance(access, KeyAccess) and access.key_id not in self.keys:
            return KEY_REVOKED
        status = self.accounts.get(access.account_id, "deleted")
        if status == "deleted":
            return ACCOUNT_DELETED
        if status != "active":
            return ACCOUNT_SUSPENDED
        if isinstance(access, KeyAccess):
            key = self.keys[access.key_id]
            if key.revoked:
                return KEY_REVOKED
            if not network.allowed(access.address, key.ip_allowlist):
                return IP_NOT_ALLOWED
            return None
        if access.session_id not in self.sessions:
            return SIGNED_OUT
        return None


def _among(postgresql: str, sqlite: str) -> DriverStatement:
    """A read of the rows whose id is among a list given as one parameter: a PostgreSQL array literal,
    a JSON array on SQLite (json_each). One statement for any number of ids, with nothing to expand."""
    statement = DriverStatement(postgresql)
    statement.sqlite = sqlite
    return statement


# Run on the driver itself (vpx.db.DriverStatement): a thousand streams' keys cost one read of a
# thousand small rows, not SQLAlchemy's per-row work. The allow-list comes back as JSON text.
_KEYS = _among(
    "SELECT k.id, k.revoked_at IS NOT NULL, CAST(k.ip_allowlist AS text), k.account_id, a.status "
    "FROM api_keys k JOIN accounts a ON a.id = k.account_id "
    "WHERE k.id IN (SELECT unnest(CAST(CAST($1 AS text) AS text[])))",
    "SELECT k.id, k.revoked_at IS NOT NULL, k.ip_allowlist, k.account_id, a.status "
    "FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.id IN (SELECT value FROM json_each(?1))",
)
_SESSIONS = _among(
    "SELECT id FROM dashboard_sessions WHERE id IN (SELECT unnest(CAST(CAST($1 AS text) AS text[])))",
    "SELECT id FROM dashboard_sessions WHERE id IN (SELECT value FROM json_each(?1))",
)
_ACCOUNTS = _among(
    "SELECT id, status FROM accounts WHERE id IN (SELECT unnest(CAST(CAST($1 AS text) AS text[])))",
    "SELECT id, status FROM accounts WHERE id IN (SELECT value FROM json_each(?1))",
)


async def current_state(database: Database, accesses: Sequence[StreamAccess]) -> AccessState:
    """The state of every distinct key (with its account) and session (with its account) of these
    streams: one query for the keys, two for the sessions, however many streams there are."""
    key_ids = sorted({a.key_id for a in accesses if isinstance(a, KeyAccess)})
    session_ids = sorted({a.session_id for a in accesses if isinstance(a, SessionAccess)})
    session_accounts = sorted({a.account_id for a in accesses if isinstance(a, SessionAccess)})
    keys: dict[str, KeyState] = {}
    sessions: set[str] = set()
    accounts: dict[str, str] = {}
    if key_ids:
        for key_id, revoked, allowlist, account_id, status in await database.fetch(_KEYS, _ids(database, key_ids)):
            keys[key_id] = KeyState(revoked=bool(revoked), ip_allowlist=_allowlist(allowlist))
            accounts[account_id] = status
    if session_ids:
        sessions = {row[0] for row in await database.fetch(_SESSIONS, _ids(database, session_ids))}
        accounts.update((row[0], row[1]) for row in await database.fetch(_ACCOUNTS, _ids(database, session_accounts)))
    return AccessState(keys=keys, sessions=sessions, accounts=accounts)


def _ids(database: Database, ids: list[str]) -> str:
    # PostgreSQL: an array literal in a text parameter, as the search does (no array type for asyncpg
    # to look up on each new connection), unnested once in a subquery: as `id = ANY(<the cast>)` the
    # cast could be run again for every row a scan weighs (1,000 keys: 360 ms against 2 ms).
    return json.dumps(ids) if database.is_sqlite else pg_array(ids)


def _allowlist(text: str | None) -> list[str]:
    if not text or text == "[]":  # nearly every key: nothing to parse
        return []
    return [str(entry) for entry in json.loads(text) or []]
