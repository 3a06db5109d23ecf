"""The demo account: who it is, and its keys kept from one `vpx demo` (make serve) to the next.

The service stores only a hash of each API key, so the demo's keys could be printed once only; to print
the same ones on every run they are kept in ``data_dir/demo-keys.json`` (mode 0600, like the secret
key file next to it). A run uses the saved keys that are still the demo account's active keys of their
type, and makes new ones for the others (when the file is gone, or the database is another one).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.config import Settings
from vpx.models import Account

DEMO_EMAIL = "demo@vpx.example"
KEYS_FILE = "demo-keys.json"


async def is_demo_account(session: AsyncSession, account_id: str) -> bool:
    """Whether the account is the demo's (the one `vpx demo` made), which may use the demo's mail catcher."""
    email = await session.scalar(select(Account.email).where(Account.id == account_id))
    return email == DEMO_EMAIL


def keys_file(settings: Settings) -> Path:
    return settings.data_dir / KEYS_FILE


def read_saved_keys(path: Path) -> dict[str, str]:
    """The keys a previous run saved, by type ("ro", "live", "full"); none when there is no file or it
    is not one of ours (it is then written again)."""
    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    keys = saved.get("keys") if isinstance(saved, dict) else None
    if not isinstance(keys, dict):
        return {}
    return {kind: secret for kind, secret in keys.items() if isinstance(kind, str) and isinstance(secret, str)}


def save_keys(path: Path, *, account_id: str, keys: Mapping[str, str]) -> None:
    """Writes the file readable by its owner only, whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.unlink(missing_ok=True)
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as out:
        json.dump({"account_id": account_id, "keys": dict(keys)}, out, indent=2)
        out.write("\n")
    os.replace(partial, path)
