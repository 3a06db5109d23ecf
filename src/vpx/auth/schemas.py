"""The API key resources of key management (D3, D5, D6, D28)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema

from vpx.auth.keys import KeyType
from vpx.fields import SingleLine

MAX_ALLOWLIST_ENTRIES = 100

# The allow-list grammar (D6), exact, so that the OpenAPI document says precisely what is accepted:
# an IPv4 address (no leading zeros) or IPv4/prefix, an IPv6 address in any RFC 4291 text form
# (zone ids excepted) or IPv6/prefix. Netmask forms ("10.0.0.0/255.0.0.0") are not accepted.
_H = "[0-9a-fA-F]{1,4}"
_OCTET = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_V4 = rf"{_OCTET}(\.{_OCTET}){{3}}"
_V6 = (
    "("
    + "|".join(
        [
            f"({_H}:){{7}}{_H}",
            f"({_H}:){{1,7}}:",
            f"({_H}:){{1,6}}:{_H}",
            f"({_H}:){{1,5}}(:{_H}){{1,2}}",
            f"({_H}:){{1,4}}(:{_H}){{1,3}}",
            f"({_H}:){{1,3}}(:{_H}){{1,4}}",
            f"({_H}:){{1,2}}(:{_H}){{1,5}}",
            f"{_H}:(:{_H}){{1,6}}",
            f":((:{_H}){{1,7}}|:)",
            f"::(ffff(:0{{1,4}})?:)?{_V4}",
            f"({_H}:){{1,4}}:{_V4}",
        ]
    )
    + ")"
)
ALLOWLIST_ENTRY_PATTERN = rf"^({_V4}(/(3[0-2]|[12]?[0-9]))?|{_V6}(/(12[0-8]|1[01][0-9]|[1-9]?[0-9]))?)$"
_ENTRY = re.compile(ALLOWLIST_ENTRY_PATTERN)
ALLOWLIST_DESCRIPTION = "IPv4/IPv6 addresses and CIDR ranges allowed to use the key; empty = no restriction."


# Names are single-line text (vpx.fields) and lose surrounding spaces; allow-list entries are taken
# exactly as sent.
KeyName = Annotated[SingleLine, AfterValidator(str.strip)]
KeyMode = Literal["live", "test"]
MODE_DESCRIPTION = (
    "`live`, or `test` for a test key (`vpx_test_…`): it sees the sandbox catalogue and spends a test balance, "
    "never real contacts or credits."
)


def _allowlist_entry(value: str) -> str:
    if not _ENTRY.match(value):
        raise ValueError(f"{value[:64]!r} is not an IP address or CIDR range")
    return value


AllowlistEntry = Annotated[
    str,
    Field(max_length=64),
    AfterValidator(_allowlist_entry),
    WithJsonSchema(
        {
            "type": "string",
            "maxLength": 64,
            "pattern": ALLOWLIST_ENTRY_PATTERN,
            "description": "An IPv4 or IPv6 address, or a CIDR range such as `198.51.100.0/24` or `2001:db8::/48`.",
        }
    ),
]


class KeyView(BaseModel):
    id: str = Field(examples=["key_3kTz9QmWb1xYpL0a"])
    type: KeyType = Field(description="`ro` (Read Only), `live` (Standard) or `full` (Full Access).")
    type_label: str = Field(examples=["Full Access"])
    name: str
    prefix: str = Field(description="The first characters of the secret, to recognise it (`vpx_live_3kTz`).")
    mode: KeyMode = Field(description=MODE_DESCRIPTION)
    ip_allowlist: list[str]
    status: Literal["active", "revoked"]
    created_at: datetime
    rotate_by: datetime = Field(description="90 days after creation; rotation is recommended by then.")
    rotation_due: bool = Field(description="True once `rotate_by` has passed (and the key is active).")
    last_used_at: datetime | None = Field(description="Last authenticated request, to the minute.")
    revoked_at: datetime | None


class KeyCreated(KeyView):
    secret: str | None = Field(
        description="The key itself, shown only in this response and never stored. A repeat of the "
        "creation with the same `Idempotency-Key` returns the same key with `secret: null`."
    )


class KeyList(BaseModel):
    keys: list[KeyView]
    active_keys: int = Field(description="Active keys of the caller's mode (live or test).")
    max_active_keys: int = Field(description="At most this many keys of each mode may be active at once.")
    max_keys: int = Field(
        description="Keys the account keeps, active and revoked: a new key past it forgets the keys revoked "
        "longest ago."
    )
    limit: int
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null at the end.")


class KeyCreate(BaseModel):
    # JSON has types: `"type": 1` or `"name": false` are refused, not coerced.
    model_config = ConfigDict(extra="forbid", strict=True)

    # Not strict: JSON sends the enum's value, a string, never an instance.
    type: KeyType = Field(strict=False, description="`ro` (Read Only), `live` (Standard) or `full` (Full Access).")
    mode: KeyMode = Field(
        default="live",
        description=MODE_DESCRIPTION + " A test key can create test keys only.",
    )
    name: KeyName = Field(default="", max_length=200, description="A name to recognise the key by.")
    ip_allowlist: list[AllowlistEntry] = Field(
        default_factory=list,
        max_length=MAX_ALLOWLIST_ENTRIES,
        description=ALLOWLIST_DESCRIPTION,
        examples=[["203.0.113.7", "2001:db8::/48"]],
    )


class KeyUpdate(BaseModel):
    """Fields left out stay as they are; `ip_allowlist: []` lifts the restriction."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: KeyName | None = Field(default=None, max_length=200)
    ip_allowlist: list[AllowlistEntry] | None = Field(
        default=None, max_length=MAX_ALLOWLIST_ENTRIES, description=ALLOWLIST_DESCRIPTION
    )
