"""What a source makes of a row, what the reader hands the writer, and what an import reports."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from hashlib import blake2b
from operator import itemgetter
from typing import Any, NamedTuple

from vpx.contacts.identifiers import joined, licence_of, parsed, registrable_domain
from vpx.contacts.normalise import block_token, name_key, street_key, text_key, words
from vpx.registries.matching import MatchKeys, match_name

MAX_EXAMPLES = 5

# The contacts-table columns in ``vpx.contacts.catalogue.contact_row``'s order (a test holds the two
# equal): the reader hands rows over as tuples in this order, ready for COPY.
CONTACT_COLUMNS = (
    "business_name", "name_key", "street", "city", "city_key", "state", "postal_code", "country", "phone",
    "email", "website", "website_domain", "industry", "specialty", "specialty_key", "license_type",
    "license_type_key", "license_number", "license_state", "identifiers", "status", "origin", "intent_level",
    "publisher_account_id", "created_at", "updated_at",
)  # fmt: skip
COLUMN = {name: position for position, name in enumerate(CONTACT_COLUMNS)}
# The fields search indexes and corrects to (``vpx.contacts.catalogue.SEARCHED_FIELDS``).
SEARCHED_AT = tuple(COLUMN[name] for name in ("business_name", "specialty", "license_type", "industry", "city"))
_NAME, _NAME_KEY, _STREET, _CITY_KEY, _STATE, _PHONE, _WEBSITE, _IDENTIFIERS = (
    COLUMN[n] for n in ("business_name", "name_key", "street", "city_key", "state", "phone", "website", "identifiers")
)
# Contact fields that are not in a record's digest: its strong identifiers are written when the
# record creates or joins a contact, and kept (vpx.contacts.identifiers).
UNDIGESTED = frozenset({"identifiers"})


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

    def row_hash(self) -> str:
        """A digest of everything the record writes, to skip records a re-import did not change."""
        parts: list[str] = [self.kind, "1" if self.active else "0", self.registry_status or ""]
        if self.contact is not None:
            contact = self.contact
            for key, label in _labels(tuple(contact)):
                if key in UNDIGESTED:
                    continue
                value = contact[key]
                if value is not None:
                    parts.append(label + value if type(value) is str else f"{label}{value}")
        if self.people:
            parts += [f"{p.role}|{p.name}|{p.title}|{p.phone}" for p in self.people]
        return blake2b("\x1f".join(parts).encode(), digest_size=8).hexdigest()

    def ready(self, now: datetime) -> Ready:
        """The record as the writer takes it: its contacts row, matching keys and digest computed
        here, in the reader, once."""
        values = contact_values(self.contact, now) if self.active and self.contact is not None else None
        return Ready(
            self.record_id,
            self.kind,
            self.active,
            self.registry_status,
            self.row_hash(),
            values,
            match_keys(values) if values is not None and self.kind != "person" else None,
            tuple((p.name, p.title, p.role, p.phone) for p in self.people),
        )


@lru_cache(maxsize=64)
def _labels(keys: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    # A source's contact dicts all have the same keys: sort them once, not once a record.
    return tuple((key, f"{key}=") for key in sorted(keys))


Row = tuple[Any, ...]
# MatchKeys' fields, in order (identifiers as the column keeps them: a space-separated string)
KeyFields = tuple[str, str, str, str | None, str | None, str, str | None, str | None]
PersonFields = tuple[str, str | None, str, str | None]  # name, title, role, phone


class Ready(NamedTuple):
    """One record as the reader hands it to the writer. Plain tuples: they cross the process
    boundary by C pickling (a dataclass per record spent a quarter of the reader process in
    ``__getstate__``) and go into COPY as they are."""

    record_id: str
    kind: str
    active: bool
    registry_status: str | None
    digest: str
    row: Row | None  # the contacts row, CONTACT_COLUMNS order; None for a deactivation
    keys: KeyFields | None  # for businesses only: people are never merged (vpx.registries.resolution)
    people: tuple[PersonFields, ...]


@lru_cache(maxsize=1 << 16)
def cached_text_key(text: str | None) -> str | None:
    """``text_key``, for the cities, specialties and licence types that repeat endlessly in registry
    files: each is normalised once."""
    return text_key(text)


def contact_values(fields: dict[str, Any], now: datetime) -> Row:
    """``tuple(contact_row(fields, origin="registry", now=now).values())``, without the dict."""
    name = " ".join(fields["business_name"].split())
    city = " ".join(fields["city"].split())
    get = fields.get
    specialty, license_type = get("specialty"), get("license_type")
    identifiers = fields["identifiers"] if "identifiers" in fields else joined([licence_of(fields)])
    return (
        name, name_key(name), get("street"), city, cached_text_key(city) or "", fields["state"],
        get("postal_code"), get("country", "US"), get("phone"), get("email"), get("website"),
        registrable_domain(get("website")), fields["industry"],
        specialty, cached_text_key(specialty), license_type, cached_text_key(license_type), get("license_number"),
        get("license_state"), identifiers, get("status", "active"), "registry", None, get("publisher_account_id"),
        now, now,
    )  # fmt: skip


def match_keys(row: Row) -> KeyFields:
    """``vpx.registries.resolution.keys_of`` for a row tuple, as plain fields."""
    key = row[_NAME_KEY]
    return (
        match_name(key), row[_STATE], row[_CITY_KEY], street_key(row[_STREET]), row[_PHONE], block_token(key),
        registrable_domain(row[_WEBSITE]), row[_IDENTIFIERS],
    )  # fmt: skip


def keys_from(fields: KeyFields) -> MatchKeys:
    return MatchKeys(*fields[:7], identifiers=parsed(fields[7]))


@lru_cache(maxsize=1 << 17)
def _token_terms(token: str) -> tuple[str, ...]:
    return tuple(w for w in words(token) if 2 <= len(w) <= 64)


def row_terms(rows: Iterable[Row]) -> set[str]:
    """``vpx.contacts.catalogue.vocabulary`` for row tuples. Word by word through a cache: the
    words of a text are those of its whitespace-separated tokens, and tokens repeat (first and
    last names) where whole names do not."""
    rows = rows if isinstance(rows, list) else list(rows)
    values: set[Any] = set()
    for position in SEARCHED_AT:
        values.update(map(itemgetter(position), rows))
    terms: set[str] = set()
    for value in values:
        if value:
            for token in value.replace("-", " ").split():
                terms.update(_token_terms(token))
    return terms


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
    mode: str | None = None  # batches or bulk (vpx.registries.load_modes)

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
            "mode": self.mode,
            "seconds": round(self.seconds, 3),
            "rows_per_second": round(self.rows_read / self.seconds) if self.seconds > 0 else None,
            "error": self.error,
        }
