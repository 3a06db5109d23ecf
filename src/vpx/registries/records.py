"""What a source makes of a row, and what an import reports."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from vpx.registries.matching import MatchKeys

MAX_EXAMPLES = 5


@dataclass(slots=True)
class Person:
    """A decision-maker a registry names (D31)."""

    name: str
    role: str
    title: str | None = None
    phone: str | None = None


@dataclass(slots=True)
class SourceRecord:
    """One registry record, normalised: the contact's display fields (as ``contact_row`` takes them),
    whether the registry still lists it as active, and the people it names."""

    record_id: str
    kind: str  # organization | person
    contact: dict[str, Any] | None
    active: bool = True
    people: list[Person] = field(default_factory=list)
    registry_status: str | None = None
    # Filled by prepare(), in the reader: the contacts-table row, its matching keys, the digest.
    row: dict[str, Any] | None = None
    keys: MatchKeys | None = None
    digest: str | None = None

    def prepare(self, now: datetime) -> dict[str, Any] | None:
        """Computes the row, keys and digest once; returns the row (None for a deactivation)."""
        from vpx.contacts.catalogue import contact_row
        from vpx.registries.resolution import keys_of

        self.digest = self.row_hash()
        if self.active and self.contact is not None and self.row is None:
            self.row = contact_row(self.contact, origin="registry", now=now)
            self.keys = keys_of(self.row)
        return self.row

    def row_hash(self) -> str:
        """A digest of everything the record writes, to skip records a re-import did not change."""
        parts: list[str] = [self.kind, "1" if self.active else "0", self.registry_status or ""]
        if self.contact is not None:
            parts += [f"{key}={value}" for key, value in sorted(self.contact.items()) if value is not None]
        parts += [f"{p.role}|{p.name}|{p.title}|{p.phone}" for p in self.people]
        return hashlib.blake2b("\x1f".join(parts).encode(), digest_size=8).hexdigest()


@dataclass
class ImportSummary:
    """The counts an import reports (``--json`` prints them)."""

    source: str
    path: str
    rows_read: int = 0
    created: int = 0
    updated: int = 0
    merged: int = 0
    unchanged: int = 0
    deactivated: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)
    complete: bool = True
    error: dict[str, str] | None = None
    encoding: str | None = None
    file_date: str | None = None
    seconds: float = 0.0

    def skip(self, reason: str, detail: str = "") -> None:
        self.skipped[reason] += 1
        if detail:
            examples = self.examples.setdefault(reason, [])
            if len(examples) < MAX_EXAMPLES:
                examples.append(detail)

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "path": self.path,
            "complete": self.complete,
            "rows_read": self.rows_read,
            "created": self.created,
            "updated": self.updated,
            "merged": self.merged,
            "unchanged": self.unchanged,
            "deactivated": self.deactivated,
            "skipped": dict(sorted(self.skipped.items())),
            "skipped_total": sum(self.skipped.values()),
            "skip_examples": self.examples,
            "encoding": self.encoding,
            "file_date": self.file_date,
            "seconds": round(self.seconds, 3),
            "rows_per_second": round(self.rows_read / self.seconds) if self.seconds > 0 else None,
            "error": self.error,
        }
